// CodeGenCUDA: device kernels in CUDA C++, the dialect of CodeGenGPU (codegen_gpu.h) whose
// kernels are `extern "C" __global__` with launch bounds, whose shared memory is `__shared__`
// (pointers need no address space), whose thread indices are blockIdx / threadIdx and whose
// helpers are device functions. NVRTC compiles it (nvrtc.h). Private to src/target.
#pragma once

#include <string>

#include "target/codegen/gpu/codegen_gpu.h"

namespace loom::codegen {

class CodeGenCUDA final : public CodeGenGPU {
 protected:
  std::string Preamble() const override;
  std::string KernelHead(int64_t threads_per_block) const override;
  std::string GlobalSpace() const override { return ""; }
  std::string SharedSpace() const override { return "__shared__ "; }
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
};

}  // namespace loom::codegen
