// CodeGenOpenCL: device kernels (SplitHostDevice's, scalar after ScalarizeVectors) to OpenCL C,
// as a dialect of CodeGenC: the same statements, expressions and intrinsic emitters, with
// OpenCL's kernel signature, address spaces and thread indices. Private to src/target.
//
//   __kernel void f_kernel0(__global void* A, __global void* B, int32_t n) {
//     { int32_t v0_i_outer = (int32_t)get_group_id(0);
//       { int32_t v1_i_inner = (int32_t)get_local_id(0); ... } }
//   }
//
// A loop bound to blockIdx.x/y/z reads get_group_id(0/1/2), one bound to threadIdx.x/y/z
// get_local_id; the launch covers exactly the loops' extents (SplitHostDevice gives each
// axis one extent), so no bounds test is needed. Buffers a kernel takes are __global; its
// constant-size allocations are private arrays of each work-item.
#pragma once

#include <string>
#include <unordered_set>
#include <vector>

#include "target/codegen/c/codegen_c.h"

namespace loom::codegen {

class CodeGenOpenCL final : public CodeGenC {
 public:
  // Adds the device kernel `func` (calling_conv "device_kernel"), exported as `name`.
  void AddKernel(const std::string& name, const PrimFunc& func);
  // The OpenCL C program: the preamble, then every kernel added.
  std::string Finish() const;

 protected:
  std::string PointerType(const Buffer& buffer) override;
  void VisitStmt_(const ForNode* op) override;
  void VisitStmt_(const AllocateNode* op) override;
  void VisitStmt_(const AssertStmtNode* op) override;

 private:
  std::unordered_set<const VarNode*> global_buffers_;  // the kernel's buffer parameters
};

}  // namespace loom::codegen
