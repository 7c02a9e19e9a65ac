// The cuda target kind: kernels in CUDA C++, compiled to PTX with NVRTC when the model is
// built, launched from the host target's code on DLPack's kDLCUDA device
// (loom/runtime/cuda_module.h).
#include <dlpack/dlpack.h>

#include "loom/target/target_kind.h"

namespace loom {

LOOM_REGISTER_TARGET_KIND("cuda")
    .Describe(
        "CUDA C++ kernels (thread-bound loops), compiled to PTX with NVRTC when the model is "
        "built and loaded by the driver on the GPU, launched from the host target (-host, "
        "default llvm)")
    .DeviceType(kDLCUDA)
    .Keys({"cuda", "gpu"})
    .Device()
    .OpaqueMemory()
    .Attr("arch", TargetAttrType::kString, std::string("sm_75"),
          "the GPU architecture the PTX is for (sm_90: H100, H200); the driver compiles it for "
          "this one or any later")
    .Attr("max-threads-per-block", TargetAttrType::kInt, int64_t{1024},
          "threads per block at most, checked when kernels are built")
    .Range(1, 1024)
    .Attr("max-shared-memory-per-block", TargetAttrType::kInt, int64_t{49152},
          "bytes of static __shared__ memory per block at most, checked when kernels are built")
    .Range(0, 49152)
    .Attr("parallel-threads", TargetAttrType::kInt, int64_t{24576},
          "threads a kernel launches at least where a schedule can trade work per thread for "
          "more threads: enough to keep the GPU busy (24576: the fewest with which 8 conv2d "
          "channels per thread beat one on an H200)")
    .Range(1, int64_t{1} << 31)
    .Attr("fp-contract", TargetAttrType::kString, std::string("fast"),
          "fast: a * b + c becomes one fma (decided in TIR; every GPU has it); off: only "
          "explicit fma calls fuse")
    .Choices({"fast", "off"})
    .HasFeature([](const Target&, const std::string& name) { return name == "fma"; });

}  // namespace loom
