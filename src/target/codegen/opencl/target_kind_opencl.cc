// The opencl target kind: kernels in OpenCL C, launched from the host target's code on
// DLPack's kDLOpenCL device (loom/runtime/opencl_module.h).
#include <dlpack/dlpack.h>

#include "loom/target/target_kind.h"

namespace loom {

LOOM_REGISTER_TARGET_KIND("opencl")
    .Describe(
        "OpenCL C kernels (thread-bound loops), compiled by the OpenCL driver when the "
        "module first runs, launched from the host target (-host, default llvm)")
    .DeviceType(kDLOpenCL)
    .Keys({"opencl", "gpu"})
    .Device()
    .OpaqueMemory()
    .Attr("max-threads-per-block", TargetAttrType::kInt, int64_t{256},
          "work-items per work-group at most, checked when kernels are built")
    .Range(1, int64_t{1} << 20)
    .Attr("max-shared-memory-per-block", TargetAttrType::kInt, int64_t{32768},
          "bytes of __local memory per work-group at most (OpenCL's minimum is 32 KiB), checked "
          "when kernels are built")
    .Range(0, int64_t{1} << 30)
    .Attr("parallel-threads", TargetAttrType::kInt, int64_t{24576},
          "threads a kernel launches at least where a schedule can trade work per thread for "
          "more threads: enough to keep the device busy (24576: the fewest with which 8 conv2d "
          "channels per thread beat one on an H200)")
    .Range(1, int64_t{1} << 31)
    .Attr("fp-contract", TargetAttrType::kString, std::string("fast"),
          "fast: a * b + c becomes one fma (decided in TIR; OpenCL C's fma rounds once on every device); off: only "
          "explicit fma calls fuse")
    .Choices({"fast", "off"})
    .HasFeature([](const Target&, const std::string& name) { return name == "fma"; });

}  // namespace loom
