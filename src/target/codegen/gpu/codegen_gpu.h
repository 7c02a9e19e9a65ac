// CodeGenGPU: device kernels (SplitHostDevice's, scalar after ScalarizeVectors) to a C dialect
// of GPU kernels, as a dialect of CodeGenC: the same statements, expressions and intrinsic
// emitters, with the kernel signature, address spaces, thread indices, shared memory and
// barriers of the dialect (OpenCL C: codegen/opencl/, CUDA C++: codegen/cuda/). Private to
// src/target.
//
//   <kernel qualifier> f_kernel0(<global> void* A, <global> void* B, int32_t n) {
//     <shared> uint64_t v2_A_shared_storage[128];     // every shared allocation, hoisted
//     { int32_t v0_i_outer = (int32_t)<block index x>;
//       { int32_t v1_i_inner = (int32_t)<thread index x>; ... <barrier>; ... } }
//   }
//
// The launch covers exactly the thread-bound loops' extents (SplitHostDevice gives each axis
// one extent), so no bounds test is needed; a thread axis bound again inside (a stage that
// fetches cooperatively into shared memory) reads the same index. A "shared" allocation is
// storage of the whole block, declared once at the kernel's top whatever loop it was
// allocated in; a "local" one (or "global", a kernel's scratch) is an array of each thread.
// Every allocation is aligned to 16 bytes, so that ScalarizeVectors's vector accesses (of up
// to 16 bytes: kVectorAccessBytes) may read it: they are the dialect's vector types (float4,
// int2, ...), a chunk loaded into a vector variable, its lanes read as .x .. .w, a chunk
// stored from a vector variable or a vector built of scalars.
#pragma once

#include <string>
#include <unordered_map>
#include <unordered_set>

#include "loom/runtime/device_kernel.h"
#include "target/codegen/c/codegen_c.h"

namespace loom::codegen {

// The widest load or store of a GPU kernel: ScalarizeVectors keeps accesses of up to this
// many bytes as vector accesses.
inline constexpr int kVectorAccessBytes = 16;

class CodeGenGPU : public CodeGenC {
 public:
  // Adds the device kernel `func` (calling_conv "device_kernel"), exported as `name`.
  void AddKernel(const std::string& name, const PrimFunc& func);
  // The program: the dialect's preamble, the scalar helpers, then every kernel added.
  std::string Finish() const;

 protected:
  // ---- what a dialect declares
  virtual std::string Preamble() const = 0;
  // What comes before the kernel's name: "__kernel void"; `threads_per_block` is the launch's
  // block size (a bound the compiler may use).
  virtual std::string KernelHead(int64_t threads_per_block) const = 0;
  // The address-space qualifiers (with a trailing space, or empty) of the kernel's buffer
  // parameters and of block-shared memory, as declarations and pointers spell them.
  virtual std::string GlobalSpace() const = 0;
  virtual std::string SharedSpace() const = 0;
  virtual std::string SharedPointerSpace() const = 0;
  // The index of the calling block or thread along `axis`, as an expression.
  virtual std::string ThreadIndex(runtime::ThreadAxis axis) const = 0;
  // A barrier of the block's threads over its shared memory, as a statement.
  virtual std::string Barrier() const = 0;
  // loom_warp_shuffle_down (`down`) or loom_warp_shuffle of `value` by `lane` within groups
  // of `width` lanes, as an expression: a dialect whose target has a -thread-warp-size above 1
  // (the only one LowerThreadAllreduce emits them for) declares it.
  virtual std::string WarpShuffle(bool down, const std::string& value, const std::string& lane,
                                  const std::string& width) const;

  // A vector load of type `type` (a vector type's name) from `address` (an element's, as
  // ElementAddress spells it), as an expression; a store of `value` there, as a statement;
  // a vector of type `type` built from `lanes`, as an expression.
  virtual std::string VectorLoad(const std::string& type, const std::string& address) const = 0;
  virtual std::string VectorStore(const std::string& type, const std::string& address,
                                  const std::string& value) const = 0;
  virtual std::string VectorOf(const std::string& type, const std::string& lanes) const = 0;

  std::string PointerType(const Buffer& buffer) override;
  std::string VisitExpr_(const CallNode* op) override;
  void VisitStmt_(const ForNode* op) override;
  void VisitStmt_(const AllocateNode* op) override;
  void VisitStmt_(const AssertStmtNode* op) override;
  void VisitStmt_(const LetStmtNode* op) override;
  void VisitStmt_(const BufferStoreNode* op) override;
  std::string VisitExpr_(const ShuffleNode* op) override;

 private:
  // The kernel's buffer parameters and its shared allocations: pointers into them carry the
  // address space.
  std::unordered_set<const VarNode*> global_buffers_, shared_buffers_;
};

}  // namespace loom::codegen
