// The c target kind: portable C source compiled by a C compiler (the host's by default, a
// cross compiler with -cc), and the tags of the micro-controllers it serves.
#include <dlpack/dlpack.h>

#include "loom/target/target_kind.h"

namespace loom {

LOOM_REGISTER_TARGET_KIND("c")
    .Describe("portable C (C99 and <math.h>), compiled by a C compiler; parallel loops serial")
    .DeviceType(kDLCPU)
    .Keys({"cpu"})
    .Attr("cc", TargetAttrType::kString, std::string(),
          "the C compiler (empty: $CC, else cc)")
    .Attr("march", TargetAttrType::kString, std::string(),
          "passed to the compiler as -march= (empty: its default)")
    .Attr("mcpu", TargetAttrType::kString, std::string(),
          "passed to the compiler as -mcpu= (empty: its default)")
    .Attr("opt-level", TargetAttrType::kInt, int64_t{2}, "the compiler's -O level")
    .Range(0, 3)
    .Attr("flash-bytes", TargetAttrType::kInt, int64_t{0},
          "read-only memory, which the AOT executor checks the weights against (0: no limit)")
    .Range(0, int64_t{1} << 62)
    .Attr("ram-bytes", TargetAttrType::kInt, int64_t{0},
          "memory, which the AOT executor checks the workspace against (0: no limit)")
    .Range(0, int64_t{1} << 62);

LOOM_REGISTER_TARGET_TAG("cortex-m4",
                         "c -keys=arm_cpu,cpu -cc=arm-none-eabi-gcc -mcpu=cortex-m4 -opt-level=2",
                         "ARM Cortex-M4 micro-controllers, bare metal (arm-none-eabi-gcc)");
// QEMU's mps2-an386 board: 4 MiB of SSRAM for code at 0, 4 MiB for data at 0x20000000.
LOOM_REGISTER_TARGET_TAG("mps2-an386",
                         "c -keys=arm_cpu,cpu -cc=arm-none-eabi-gcc -mcpu=cortex-m4 -opt-level=2 "
                         "-flash-bytes=4194304 -ram-bytes=4194304",
                         "ARM's MPS2 board with the AN386 Cortex-M4 image (qemu-system-arm)");

}  // namespace loom
