// The vta target kind: code that drives a VTA device through its runtime (loom/vta/runtime.h).
// The functions vta::lower makes run on the host, which queues the device's instructions and
// micro-op kernels with runtime calls; their tensors live in the device's DRAM (DLPack's
// ext_dev, registered by libloom_vta). A device kind: build() compiles the function for its host
// target (-host, llvm by default) and checks that its tensors are on ext_dev.
#include <dlpack/dlpack.h>

#include "loom/target/target_kind.h"

namespace loom::vta {

LOOM_REGISTER_TARGET_KIND("vta")
    .Describe(
        "the VTA accelerator (its simulator here), driven from the host through the VTA "
        "runtime; lower with vta::lower first")
    .DeviceType(kDLExtDev)
    .Keys({"vta"})
    .Device();

}  // namespace loom::vta
