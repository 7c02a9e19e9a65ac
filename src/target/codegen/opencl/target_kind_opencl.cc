// The opencl target kind: kernels in OpenCL C, launched from the host target's code on
// DLPack's kDLOpenCL device (loom/runtime/opencl_module.h).
#include <dlpack/dlpack.h>

#include "target/codegen/gpu/gpu_target_kind.h"

namespace loom::codegen {
namespace {

// OpenCL guarantees 32 KiB of __local memory per work-group; work-groups are often smaller
// than CUDA's blocks.
[[maybe_unused]] const TargetKindBuilder kOpenCLKind =
    DeclareGpuKind("opencl", {.device_type = kDLOpenCL,
                              .key = "opencl",
                              .max_threads = 256,
                              .max_threads_limit = int64_t{1} << 20,
                              .max_shared_bytes = 32768,
                              .max_shared_limit = int64_t{1} << 30,
                              .shared_memory = "__local",
                              .warp_size = 1})
        .Describe(
            "OpenCL C kernels (thread-bound loops), compiled by the OpenCL driver when the "
            "module first runs, launched from the host target (-host, default llvm)");

}  // namespace
}  // namespace loom::codegen
