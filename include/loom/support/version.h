// Loom's version: what tuning records (autotune/record.h) are stamped with, since a record's
// configuration means a kernel only to the version of the templates that wrote it.
#pragma once

namespace loom {

inline constexpr char kLoomVersion[] = "0.4.0";

}  // namespace loom
