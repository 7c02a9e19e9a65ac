// What the two benchmark GEMMs share in how they block the columns of C.
#pragma once

#include <algorithm>
#include <cstdint>

namespace loom::bench {

// Panels (of nr columns each) per column block: nc / nr when nc is given, else as many
// panels of `panel_bytes` as fit in `block_bytes`; then lowered to a count that divides the
// number of panels. Only then does C's own store need a bound check (j < N, in the last
// panel): a block split that did not divide would leave register tiles past the padded grid,
// and their guard, one per element, would push the whole tail of a block onto a scalar path.
inline int PanelsPerBlock(int64_t panels, int64_t panel_bytes, int64_t nc, int64_t nr,
                          int64_t block_bytes) {
  int64_t wanted = nc > 0 ? nc / nr : std::max<int64_t>(1, block_bytes / panel_bytes);
  int64_t count = std::min(wanted, panels);
  while (panels % count != 0) --count;
  return static_cast<int>(count);
}

}  // namespace loom::bench
