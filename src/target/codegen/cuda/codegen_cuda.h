// CodeGenCUDA: device kernels in CUDA C++, the dialect of CodeGenGPU (codegen_gpu.h) whose
// kernels are `extern "C" __global__` with launch bounds, whose shared memory is `__shared__`
// (pointers need no address space), whose thread indices are blockIdx / threadIdx and whose
// helpers are device functions. NVRTC compiles it (nvrtc.h). Private to src/target.
//
// Tensor cores: the warp matrix builtins (tir::builtin::kMmaLoad, ...) become the PTX warp
// matrix instructions (wmma.load/mma/store, m16n16k16), as inline assembly in device
// functions of the preamble; a fragment allocation (scopes tir::builtin::kMatrixA, kMatrixB,
// kAccumulator) is an array of the registers its fragments take in each lane.
#pragma once

#include <string>
#include <unordered_map>

#include "target/codegen/gpu/codegen_gpu.h"

namespace loom::codegen {

class CodeGenCUDA final : public CodeGenGPU {
 protected:
  std::string Preamble() const override;
  std::string KernelHead(int64_t threads_per_block) const override;
  std::string GlobalSpace() const override { return ""; }
  // 32 bytes: the alignment the warp matrix operations' tiles need.
  std::string SharedSpace() const override { return "__shared__ __align__(32) "; }
  std::string SharedPointerSpace() const override { return ""; }
  std::string ThreadIndex(runtime::ThreadAxis axis) const override;
  std::string Barrier() const override { return "__syncthreads();"; }
  // Aligned accesses (ScalarizeVectors proves the alignment) through the vector type.
  std::string VectorLoad(const std::string& type, const std::string& address) const override {
    return "*(const " + type + "*)" + address;
  }
  std::string VectorStore(const std::string& type, const std::string& address,
                          const std::string& value) const override {
    return "*(" + type + "*)" + address + " = " + value;
  }
  std::string VectorOf(const std::string& type, const std::string& lanes) const override {
    return "make_" + type + "(" + lanes + ")";
  }
  // Over the whole warp: LowerThreadAllreduce shuffles only in blocks of whole warps.
  std::string WarpShuffle(bool down, const std::string& value, const std::string& lane,
                          const std::string& width) const override {
    return std::string(down ? "__shfl_down_sync" : "__shfl_sync") + "(0xffffffffu, " + value +
           ", " + lane + ", " + width + ")";
  }
  std::string VisitExpr_(const CallNode* op) override;
  void VisitStmt_(const AllocateNode* op) override;

 private:
  // A fragment allocation: its scope and element type.
  struct Fragment {
    std::string scope;
    DataType dtype;
  };
  // The fragment of `op`'s argument `arg` (a fragment allocation's variable), and the
  // address of its register group `index`, as expressions.
  const Fragment& FragmentOf(const CallNode* op, size_t arg) const;
  std::string Registers(const CallNode* op, size_t arg, size_t index);

  std::unordered_map<const VarNode*, Fragment> fragments_;
  bool uses_matrix_operations_ = false;
};

}  // namespace loom::codegen
