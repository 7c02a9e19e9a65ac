// The places of the on-chip allocations (sram_places.h).
#include "vta/compiler/sram_places.h"

#include "loom/ir/expr_ops.h"
#include "loom/support/error.h"
#include "loom/vta/compiler/passes.h"

namespace loom::vta::detail {

void SramPlaces::Record(const AttrStmtNode* op) {
  if (op->attr_key != kSramBase) return;
  const auto* allocate = op->body.as<AllocateNode>();
  SramPlace place;
  LOOM_ICHECK(IsConstInt(op->value, &place.base) && allocate != nullptr)
      << "vta_sram_base must be a constant around the Allocate it places";
  place.scope = allocate->storage_scope;
  place.lanes = env_.Memory(place.scope).lanes;
  places_[op->node.get()] = place;
}

const SramPlace* SramPlaces::Find(const Buffer& buffer) const {
  auto it = places_.find(buffer->data.get());
  return it == places_.end() ? nullptr : &it->second;
}

PrimExpr WholeElements(const PrimExpr& values, int64_t lanes, arith::Analyzer* analyzer) {
  const PrimExpr per_element = make_const(values.dtype(), lanes);
  if (!analyzer->CanProve(floormod(values, per_element) == 0)) return PrimExpr();
  return analyzer->Simplify(floordiv(values, per_element));
}

}  // namespace loom::vta::detail
