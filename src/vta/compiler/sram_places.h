// What the passes after PlanSram read back: the place of each on-chip allocation (its
// kSramBase attribute) and indices counted in whole elements. Private to src/vta/compiler.
#pragma once

#include <string>
#include <unordered_map>

#include "loom/arith/analyzer.h"
#include "loom/vta/compiler/environment.h"

namespace loom::vta::detail {

struct SramPlace {
  int64_t base = 0;   // the first element, in the scope's buffer
  std::string scope;  // "local.acc_buffer"
  int64_t lanes = 1;  // values per element
};

// The places PlanSram stated, learnt as a pass walks the function: Record each AttrStmt before
// visiting its body (the Allocate it places is inside it).
class SramPlaces {
 public:
  explicit SramPlaces(const Environment& env) : env_(env) {}
  // Remembers the place if `op` is PlanSram's attribute.
  void Record(const AttrStmtNode* op);
  // The place of `buffer`'s allocation; null for a buffer not on chip.
  const SramPlace* Find(const Buffer& buffer) const;

 private:
  const Environment& env_;
  std::unordered_map<const Object*, SramPlace> places_;
};

// `values` counted in elements of `lanes` values; undefined when `values` is not provably the
// start of an element.
PrimExpr WholeElements(const PrimExpr& values, int64_t lanes, arith::Analyzer* analyzer);

}  // namespace loom::vta::detail
