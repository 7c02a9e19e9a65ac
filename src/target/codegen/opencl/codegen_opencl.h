// CodeGenOpenCL: device kernels in OpenCL C, the dialect of CodeGenGPU (codegen_gpu.h) whose
// kernels are `__kernel`, whose buffers are `__global` and shared memory `__local`, and whose
// thread indices are get_group_id / get_local_id. Private to src/target.
#pragma once

#include <string>

#include "target/codegen/gpu/codegen_gpu.h"

namespace loom::codegen {

class CodeGenOpenCL final : public CodeGenGPU {
 protected:
  std::string Preamble() const override;
  std::string KernelHead(int64_t threads_per_block) const override;
  std::string GlobalSpace() const override { return "__global "; }
  std::string SharedSpace() const override { return "__local "; }
  std::string SharedPointerSpace() const override { return "__local "; }
  std::string ThreadIndex(runtime::ThreadAxis axis) const override;
  std::string Barrier() const override { return "barrier(CLK_LOCAL_MEM_FENCE);"; }
  // vloadn and vstoren take a pointer to the elements in any address space.
  std::string VectorLoad(const std::string& type, const std::string& address) const override {
    return "vload" + type.substr(type.size() - 1) + "(0, " + address + ")";
  }
  std::string VectorStore(const std::string& type, const std::string& address,
                          const std::string& value) const override {
    return "vstore" + type.substr(type.size() - 1) + "(" + value + ", 0, " + address + ")";
  }
  std::string VectorOf(const std::string& type, const std::string& lanes) const override {
    return "(" + type + ")(" + lanes + ")";
  }
};

}  // namespace loom::codegen
