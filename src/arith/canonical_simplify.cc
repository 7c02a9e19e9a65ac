#include "loom/arith/canonical_simplify.h"
namespace loom::arith {
class CanonicalSimplifier::Impl {};
CanonicalSimplifier::CanonicalSimplifier(Analyzer*) {}
CanonicalSimplifier::~CanonicalSimplifier() = default;
PrimExpr CanonicalSimplifier::operator()(const PrimExpr& e) { return e; }
void CanonicalSimplifier::Update(const Var&, const PrimExpr&, bool) {}
}  // namespace loom::arith
