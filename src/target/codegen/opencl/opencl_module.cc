// The opencl target's code generator: device kernels to one OpenCL C program, in a runtime
// OpenCL module (compiled by the driver when it first runs), which artifacts carry as its
// serialized bytes. Launch limits are checked against the target here.
#include "loom/runtime/opencl_module.h"

#include <string>
#include <utility>

#include "loom/target/codegen.h"
#include "target/codegen/gpu/gpu_kernels.h"
#include "target/codegen/opencl/codegen_opencl.h"

namespace loom::codegen {

namespace {

runtime::Module BuildOpenCL(const IRModule& kernels, const Target& target) {
  CodeGenOpenCL codegen;
  std::vector<runtime::DeviceKernelInfo> infos = GenerateKernels(kernels, target, codegen);
  return runtime::OpenCLModuleCreate(codegen.Finish(), std::move(infos));
}

}  // namespace

LOOM_REGISTER_CODEGEN({.target_kind = "opencl",
                       .module_type = "opencl",
                       .build = BuildOpenCL,
                       .export_library = nullptr,
                       .serialize = [](const runtime::Module& module) {
                         return std::make_pair(std::string("opencl"),
                                               runtime::SerializeOpenCLModule(module));
                       }});

}  // namespace loom::codegen
