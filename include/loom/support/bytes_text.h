// A byte count for people: "96 B", "312.0 KiB", "1.5 MiB", "4096.0 GiB".
#pragma once

#include <string>

namespace loom {

// A double, so that sizes past int64 (a tensor of 2^40 x 2^40 elements) still print.
std::string BytesText(double bytes);

}  // namespace loom
