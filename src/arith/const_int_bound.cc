#include "loom/arith/const_int_bound.h"
namespace loom::arith {
class ConstIntBoundAnalyzer::Impl {};
ConstIntBoundAnalyzer::ConstIntBoundAnalyzer(Analyzer*) {}
ConstIntBoundAnalyzer::~ConstIntBoundAnalyzer() = default;
ConstIntBound ConstIntBoundAnalyzer::operator()(const PrimExpr& e) {
  int64_t v;
  if (IsConstInt(e, &v)) return ConstIntBound::Single(v);
  return ConstIntBound::Everything();
}
void ConstIntBoundAnalyzer::Bind(const Var&, const Range&, bool) {}
void ConstIntBoundAnalyzer::Update(const Var&, const ConstIntBound&, bool) {}
std::function<void()> ConstIntBoundAnalyzer::EnterConstraint(const PrimExpr&) { return nullptr; }
}  // namespace loom::arith
