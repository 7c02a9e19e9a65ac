// The cuda target's code generator: device kernels to CUDA C++, compiled to PTX with NVRTC
// here, when the model is built, in a runtime CUDA module, which artifacts carry as its
// serialized bytes. Launch limits are checked against the target here.
#include "loom/runtime/cuda_module.h"

#include <string>
#include <utility>

#include "loom/target/codegen.h"
#include "target/codegen/cuda/codegen_cuda.h"
#include "target/codegen/cuda/nvrtc.h"
#include "target/codegen/gpu/gpu_kernels.h"

namespace loom::codegen {

namespace {

runtime::Module BuildCUDA(const IRModule& kernels, const Target& target) {
  CodeGenCUDA codegen;
  std::vector<runtime::DeviceKernelInfo> infos = GenerateKernels(kernels, target, codegen);
  return runtime::CUDAModuleCreate(CompileToPTX(codegen.Finish(), target.GetString("arch")),
                                   std::move(infos));
}

}  // namespace

LOOM_REGISTER_CODEGEN({.target_kind = "cuda",
                       .module_type = "cuda",
                       .build = BuildCUDA,
                       .export_library = nullptr,
                       .serialize = [](const runtime::Module& module) {
                         return std::make_pair(std::string("cuda"),
                                               runtime::SerializeCUDAModule(module));
                       }});

}  // namespace loom::codegen
