// Translation of scalar integer/bool IR into Z3 terms, for proving rewrite rules.
//
// Integers are unbounded (wrap-around is ignored, as the rules assume). Every term carries,
// besides its value, the condition under which it is defined in the sense of EvalInt: all
// divisors it actually evaluates are non-zero (Select and if_then_else evaluate only the
// chosen branch). Divisions become fresh quotient/remainder constants tied to their operands
// by exact constraints (Definitions()), since Z3's own div/mod are Euclidean, neither
// truncated nor floored; truncated division is derived from the floored one.
#pragma once

#include <z3++.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "loom/ir/node.h"

namespace loom::prove {

// The first node in `e` outside the translatable fragment (vectors, calls other than
// if_then_else/likely, loads, floats, arithmetic on bools), described for a report; nullopt
// when all of `e` translates.
std::optional<std::string> FindUntranslatable(const PrimExpr& e);

struct Term {
  z3::expr value;    // Int or Bool sort, following the expression's dtype
  z3::expr defined;  // Bool: where the expression evaluates without dividing by zero
};

class Z3Translator {
 public:
  explicit Z3Translator(z3::context& ctx) : ctx_(ctx), definitions_(ctx) {}

  // Makes `var` stand for the constant `value` (the bounded proofs over constant pattern
  // variables); must be called before the variable is first translated.
  void BindConstant(const Var& var, int64_t value);

  // After this call, a variable not seen so far is an error (a rule whose rhs or condition
  // uses a pattern variable its lhs does not bind).
  void FreezeVariables() { frozen_ = true; }

  // Throws loom::Error for expressions FindUntranslatable rejects or for an unknown
  // variable after FreezeVariables().
  Term Translate(const PrimExpr& e);

  // Constraints defining the quotient/remainder constants introduced so far, and the range
  // of size variables: assert them alongside any query over translated terms.
  const z3::expr_vector& Definitions() const { return definitions_; }

  // Converts between the two sorts as the IR does: bool is 0/1, an integer is true when
  // non-zero.
  z3::expr AsInt(const z3::expr& value);
  z3::expr AsBool(const z3::expr& value);

  // Free variables met so far, in order of first appearance, with their Z3 constants.
  const std::vector<std::pair<Var, z3::expr>>& FreeVariables() const { return free_vars_; }

 private:
  z3::expr FreshInt(const std::string& hint);
  Term TranslateNode(const PrimExpr& e);
  Term TranslateVar(const VarNode* var);
  Term TranslateBinary(const PrimExpr& e);
  Term TranslateDivision(NodeKind kind, const Term& a, const Term& b);
  Term TranslateChoice(const Term& condition, const Term& true_value, const Term& false_value);

  z3::context& ctx_;
  z3::expr_vector definitions_;
  std::unordered_map<const Object*, z3::expr> var_terms_;
  std::vector<std::pair<Var, z3::expr>> free_vars_;
  struct Division {
    z3::expr dividend, divisor;
    z3::expr floor_quotient, floor_remainder, trunc_quotient, trunc_remainder;
  };
  // One entry per distinct (dividend, divisor), so that the same division on both sides of a
  // rule is literally the same term for the solver.
  std::map<std::pair<unsigned, unsigned>, Division> divisions_;
  int fresh_count_ = 0;
  bool frozen_ = false;
};

}  // namespace loom::prove
