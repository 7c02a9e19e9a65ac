#include "loom/arith/rewrite_simplify.h"
namespace loom::arith {
class RewriteSimplifier::Impl {};
RewriteSimplifier::RewriteSimplifier(Analyzer*) {}
RewriteSimplifier::~RewriteSimplifier() = default;
PrimExpr RewriteSimplifier::operator()(const PrimExpr& e) { return e; }
void RewriteSimplifier::Update(const Var&, const PrimExpr&, bool) {}
std::function<void()> RewriteSimplifier::EnterConstraint(const PrimExpr&) { return nullptr; }
}  // namespace loom::arith
