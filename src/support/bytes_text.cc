// BytesText (loom/support/bytes_text.h).
#include "loom/support/bytes_text.h"

#include <cstdio>

namespace loom {

std::string BytesText(double bytes) {
  constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB"};
  int unit = 0;
  while (bytes >= 1024 && unit + 1 < 4) {
    bytes /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof(text), unit == 0 ? "%.0f %s" : "%.1f %s", bytes, kUnits[unit]);
  return text;
}

}  // namespace loom
