// The GPU target kinds' common declarations (gpu_target_kind.h).
#include "target/codegen/gpu/gpu_target_kind.h"

namespace loom::codegen {

TargetKindBuilder DeclareGpuKind(const std::string& name, const GpuKindLimits& limits) {
  TargetKindBuilder kind(TargetKindRegistry::Register(name));
  kind.DeviceType(limits.device_type)
      .Keys({limits.key, "gpu"})
      .Device()
      .OpaqueMemory()
      .Attr("max-threads-per-block", TargetAttrType::kInt, limits.max_threads,
            "threads per block at most, checked when kernels are built")
      .Range(1, limits.max_threads_limit)
      .Attr("max-shared-memory-per-block", TargetAttrType::kInt, limits.max_shared_bytes,
            "bytes of " + limits.shared_memory +
                " memory per block at most, checked when kernels are built")
      .Range(0, limits.max_shared_limit)
      .Attr("parallel-threads", TargetAttrType::kInt, int64_t{24576},
            "threads a kernel launches at least where a schedule can trade work per thread "
            "for more threads: enough to keep the device busy (24576: the fewest with which 8 "
            "conv2d channels per thread beat one on an H200)")
      .Range(1, int64_t{1} << 31)
      .Attr("thread-warp-size", TargetAttrType::kInt, limits.warp_size,
            "the device's warp, whose threads exchange registers (cross-thread reductions "
            "shuffle within warps), or 1: reductions through shared memory alone")
      .Range(1, limits.warp_size)
      .Attr("conv2d-tiled", TargetAttrType::kBool, true,
            "conv2d of one group as a shared-memory tiled implicit matrix product where its "
            "tiles fit (false: the direct schedule, or the generic one)")
      .Attr("conv2d-winograd", TargetAttrType::kBool, false,
            "3x3 conv2d of stride 1 and one group as Winograd F(4x4, 3x3) where its products "
            "hold a tile (off until timed against the tiled schedule on a GPU)")
      .Attr("fp-contract", TargetAttrType::kString, std::string("fast"),
            "fast: a * b + c becomes one fma, decided in TIR (GPUs have it, and OpenCL C's fma "
            "rounds once everywhere); off: only explicit fma calls fuse")
      .Choices({"fast", "off"})
      .HasFeature([](const Target&, const std::string& feature) { return feature == "fma"; });
  return kind;
}

}  // namespace loom::codegen
