// The cuda target kind: kernels in CUDA C++, compiled to PTX with NVRTC when the model is
// built, launched from the host target's code on DLPack's kDLCUDA device
// (loom/runtime/cuda_module.h).
#include <dlpack/dlpack.h>

#include "target/codegen/gpu/gpu_target_kind.h"

namespace loom::codegen {
namespace {

[[maybe_unused]] const TargetKindBuilder kCudaKind =
    DeclareGpuKind("cuda", {.device_type = kDLCUDA,
                            .key = "cuda",
                            .max_threads = 1024,
                            .max_threads_limit = 1024,
                            .max_shared_bytes = 49152,
                            .max_shared_limit = 49152,
                            .shared_memory = "static __shared__",
                            .warp_size = 32})
        .Describe(
            "CUDA C++ kernels (thread-bound loops), compiled to PTX with NVRTC when the model is "
            "built and loaded by the driver on the GPU, launched from the host target (-host, "
            "default llvm)")
        .Attr("arch", TargetAttrType::kString, std::string("sm_75"),
              "the GPU architecture the PTX is for (sm_90: H100, H200); the driver compiles it "
              "for this one or any later");

}  // namespace
}  // namespace loom::codegen
