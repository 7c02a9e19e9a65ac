// Bit positions of the instruction and micro-op fields for one VTAConfig (private to the
// VTA ISA; config.cc uses it to reject configurations whose fields no longer fit).
#pragma once

#include <string_view>
#include <vector>

#include "loom/vta/config.h"

namespace loom::vta::detail {

struct PlacedField {
  std::string_view name;
  int width = 0;
  int offset = 0;  // bit position of the field's least significant bit
};

// One encoding format: its fields, in spec order, with their positions.
struct FieldLayout {
  std::string_view format;  // "GEMM instruction", "micro-op", ...
  std::vector<PlacedField> fields;
  const PlacedField& Field(std::string_view name) const;
};

// Layouts for `config`. Throws loom::Error ("VTA config: ...") naming the format and the
// first field that does not fit (128 bits for instructions, 32 for micro-ops).
FieldLayout MemLayout(const VTAConfig& config);
FieldLayout GemmLayout(const VTAConfig& config);
FieldLayout AluLayout(const VTAConfig& config);
FieldLayout FinishLayout(const VTAConfig& config);
FieldLayout UopLayout(const VTAConfig& config);

}  // namespace loom::vta::detail
