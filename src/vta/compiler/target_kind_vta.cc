// The vta target kind: code that drives a VTA device through its runtime (loom/vta/runtime.h).
// The functions vta::lower makes run on the host, which queues the device's instructions and
// micro-op kernels with runtime calls; their tensors live in the device's DRAM (DLPack's
// ext_dev, registered by libloom_vta). A device kind: build() compiles the function for its host
// target (-host, llvm by default) and checks that its tensors are on ext_dev.
#include <dlpack/dlpack.h>

#include "loom/target/target.h"
#include "loom/target/target_kind.h"
#include "loom/vta/config.h"

namespace loom::vta {

VTAConfig ConfigOf(const Target& target) {
  const std::string& path = target.GetString("config");
  return path.empty() ? VTAConfig::Default() : VTAConfig::FromFile(path);
}

LOOM_REGISTER_TARGET_KIND("vta")
    .Describe(
        "the VTA accelerator (its simulator here), driven from the host through the VTA "
        "runtime; lower with vta::lower first")
    .DeviceType(kDLExtDev)
    .Keys({"vta"})
    .Device()
    .LayersOnHost()
    .Attr("config", TargetAttrType::kString, std::string(),
          "the VTA configuration compiled for (a JSON file, vta/default_config.json's format); "
          "empty: the default configuration")
    .Attr("virtual-threads", TargetAttrType::kInt, int64_t{2},
          "co-processor threads a convolution's tiles are split between: 2 overlap one tile's "
          "loads with the other's GEMMs, 1 runs them in turn")
    .Range(1, 2)
    .DeviceConfiguration([](const Target& target) { return ConfigOf(target).ToJson(); });

}  // namespace loom::vta
