#include "loom/arith/modular_set.h"
namespace loom::arith {
class ModularSetAnalyzer::Impl {};
ModularSetAnalyzer::ModularSetAnalyzer(Analyzer*) {}
ModularSetAnalyzer::~ModularSetAnalyzer() = default;
ModularSet ModularSetAnalyzer::operator()(const PrimExpr&) { return ModularSet::Everything(); }
void ModularSetAnalyzer::Update(const Var&, const ModularSet&, bool) {}
std::function<void()> ModularSetAnalyzer::EnterConstraint(const PrimExpr&) { return nullptr; }
}  // namespace loom::arith
