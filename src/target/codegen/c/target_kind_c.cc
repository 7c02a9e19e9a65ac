// The c target kind: portable C source compiled by a C compiler (the host's by default).
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
    .Attr("opt-level", TargetAttrType::kInt, int64_t{2}, "the compiler's -O level")
    .Range(0, 3);

}  // namespace loom
