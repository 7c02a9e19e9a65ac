// Proves every rule of the rewrite simplifier's table with Z3.
//
// For a rule (lhs, rhs, condition) over pattern variables the claim is
//     condition holds and lhs is defined  ==>  rhs is defined and rhs == lhs
// where "defined" means no evaluated divisor is zero, over unbounded integers. Rules over
// vectors, calls or loads are outside the translated fragment and are reported as skipped.
// A claim Z3 cannot settle (typically non-linear: symbolic constant multipliers or divisors)
// is proven instead for every assignment, in a bounded range, of the rule's constant pattern
// variables (and of the other variables that multiply or divide), which makes each instance
// linear.
//
// Before the table, a self-test checks that deliberately wrong rules are refuted and correct
// ones proven, so that a broken prover cannot pass silently. Exit status: 0 when every
// translatable rule is proven, 1 on a counterexample or a rule left undecided.
//
//   prove_rewrite_rules [--rule SUBSTRING] [--timeout-ms N] [--bound N] [--verbose]
#include <z3++.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_set>
#include <vector>

#include "arith/rewrite_rules.h"
#include "loom/ir/functor.h"
#include "loom/ir/int_eval.h"
#include "loom/ir/printer.h"
#include "z3_translate.h"

namespace loom::prove {
namespace {

using arith::RewriteRule;
using Assignment = std::vector<std::pair<Var, int64_t>>;
using IsConstVar = std::function<bool(const Var&)>;

struct Options {
  std::string rule_filter;
  unsigned timeout_ms = 2000;
  int64_t bound = 8;
  bool verbose = false;
};

enum class Verdict {
  kProvenSymbolically,
  kProvenBounded,    // for every value in [-bound, bound] of the variables in `detail`
  kOutsideFragment,  // vectors, calls, loads: skipped
  kRefuted,          // a counterexample
  kUndecided,        // unknown, even with constants fixed
  kMalformed,        // rhs or condition uses a variable lhs does not bind
};

struct RuleReport {
  Verdict verdict;
  std::string detail;  // the counterexample, the skipped node, or why it is undecided
};

std::string DescribeRule(const RewriteRule& rule) {
  return "  lhs:       " + ToScript(rule.lhs) + "\n  rhs:       " + ToScript(rule.rhs) +
         "\n  condition: " + ToScript(rule.condition) + "\n";
}

// The variables whose values, once fixed, make a rule linear: its constant pattern
// variables, then the variables of non-literal divisors and of non-literal product factors
// not already covered; in order of first appearance.
std::vector<Var> LinearizingVariables(const RewriteRule& rule, const IsConstVar& is_const) {
  std::vector<Var> vars;
  std::unordered_set<const Object*> chosen;
  auto visit_vars = [](const PrimExpr& e, const std::function<void(const Var&)>& fn) {
    PostOrderVisit(e, [&](const ObjectRef& node) {
      if (node.kind() == NodeKind::Var) fn(Downcast<Var>(node));
    });
  };
  auto choose = [&](const Var& var) {
    if (chosen.insert(var.get()).second) vars.push_back(var);
  };
  auto covered = [&](const PrimExpr& e) {
    bool all = true;
    visit_vars(e, [&](const Var& var) { all &= chosen.count(var.get()) != 0; });
    return all;
  };
  for (const PrimExpr* part : {&rule.lhs, &rule.rhs, &rule.condition}) {
    visit_vars(*part, [&](const Var& var) {
      if (is_const(var)) choose(var);
    });
  }
  // Divisors first: fixing a divisor often covers a product too, as in (x * y) % y.
  for (bool products : {false, true}) {
    for (const PrimExpr* part : {&rule.lhs, &rule.rhs, &rule.condition}) {
      PostOrderVisit(*part, [&](const ObjectRef& node) {
        PrimExpr a, b;
        DispatchNode(*node.get(), [&](const auto& op) {
          using NodeT = std::decay_t<decltype(op)>;
          if constexpr (std::is_same_v<NodeT, MulNode>) {
            if (products) std::tie(a, b) = std::tie(op.a, op.b);
          } else if constexpr (std::is_same_v<NodeT, DivNode> || std::is_same_v<NodeT, ModNode> ||
                               std::is_same_v<NodeT, FloorDivNode> ||
                               std::is_same_v<NodeT, FloorModNode>) {
            if (!products) std::tie(a, b) = std::tie(op.a, op.b);
          }
        });
        if (!b.defined() || covered(b) || (products && covered(a))) return;
        visit_vars(b, choose);
      });
    }
  }
  return vars;
}

// Each enumerated variable multiplies the queries by 2 * bound + 1.
constexpr size_t kMaxEnumeratedVariables = 3;

class RuleProver {
 public:
  explicit RuleProver(const Options& options) : options_(options) {}

  RuleReport Prove(const RewriteRule& rule, const IsConstVar& is_const) {
    for (const PrimExpr* part : {&rule.lhs, &rule.rhs, &rule.condition}) {
      if (std::optional<std::string> problem = FindUntranslatable(*part)) {
        return {Verdict::kOutsideFragment, *problem};
      }
    }
    RuleReport symbolic = Check(rule, {});
    if (symbolic.verdict != Verdict::kUndecided) return symbolic;
    std::vector<Var> fixed = LinearizingVariables(rule, is_const);
    if (fixed.empty()) return symbolic;
    if (fixed.size() > kMaxEnumeratedVariables) {
      return {Verdict::kUndecided, symbolic.detail + "; too many variables to enumerate (" +
                                       std::to_string(fixed.size()) + ")"};
    }
    return CheckAllValues(rule, fixed);
  }

 private:
  // One query: with `fixed` variables replaced by their values.
  RuleReport Check(const RewriteRule& rule, const Assignment& fixed) {
    Z3Translator translator(ctx_);
    for (const auto& [var, value] : fixed) translator.BindConstant(var, value);
    Term lhs = translator.Translate(rule.lhs);
    translator.FreezeVariables();
    std::optional<Term> condition, rhs;
    try {
      condition = translator.Translate(rule.condition);
      rhs = translator.Translate(rule.rhs);
    } catch (const Error& error) {
      return {Verdict::kMalformed, error.what()};
    }
    z3::expr same = lhs.value.is_bool() && rhs->value.is_bool()
                        ? lhs.value == rhs->value
                        : translator.AsInt(lhs.value) == translator.AsInt(rhs->value);
    z3::solver solver(ctx_);
    solver.set("timeout", options_.timeout_ms);
    solver.add(translator.Definitions());
    solver.add(condition->defined && translator.AsBool(condition->value) && lhs.defined);
    solver.add(!(rhs->defined && same));
    switch (solver.check()) {
      case z3::unsat:
        return {fixed.empty() ? Verdict::kProvenSymbolically : Verdict::kProvenBounded, ""};
      case z3::sat:
        return {Verdict::kRefuted, DescribeModel(solver.get_model(), translator, fixed, lhs, *rhs)};
      case z3::unknown:
        break;
    }
    return {Verdict::kUndecided, "Z3: " + solver.reason_unknown()};
  }

  // Proves the rule for every assignment of `fixed` in [-bound, bound].
  RuleReport CheckAllValues(const RewriteRule& rule, const std::vector<Var>& fixed) {
    Assignment assignment;
    std::string names;
    for (const Var& var : fixed) {
      assignment.emplace_back(var, -options_.bound);
      names += (names.empty() ? "" : ", ") + var->name_hint;
    }
    while (true) {
      if (ConditionMayHold(rule.condition, assignment)) {
        RuleReport report = Check(rule, assignment);
        if (report.verdict != Verdict::kProvenBounded) {
          if (report.verdict == Verdict::kUndecided) {
            report.detail += " (with " + DescribeAssignment(assignment) + ")";
          }
          return report;
        }
      }
      // Next assignment, odometer-style.
      size_t i = 0;
      while (i < assignment.size() && assignment[i].second == options_.bound) {
        assignment[i++].second = -options_.bound;
      }
      if (i == assignment.size()) break;
      ++assignment[i].second;
    }
    return {Verdict::kProvenBounded, names};
  }

  // False only when the condition mentions nothing but the fixed constants and evaluates to
  // false or is undefined there: the rule never fires, no query is needed.
  static bool ConditionMayHold(const PrimExpr& condition, const Assignment& fixed) {
    VarValueMap values;
    for (const auto& [var, value] : fixed) values.emplace(var, value);
    bool only_constants = true;
    PostOrderVisit(condition, [&](const ObjectRef& node) {
      if (node.kind() == NodeKind::Var && !values.count(Downcast<Var>(node))) {
        only_constants = false;
      }
    });
    if (!only_constants) return true;
    std::optional<int64_t> value = EvalInt(condition, values);
    return value.has_value() && *value != 0;
  }

  static std::string DescribeAssignment(const Assignment& fixed) {
    std::string text;
    for (const auto& [var, value] : fixed) {
      text += (text.empty() ? "" : ", ") + var->name_hint + " = " + std::to_string(value);
    }
    return text;
  }

  // A model value as the IR would print it: -1 rather than Z3's (- 1).
  static std::string ValueText(const z3::expr& value) {
    if (value.is_true()) return "true";
    if (value.is_false()) return "false";
    int64_t number = 0;
    if (value.is_numeral_i64(number)) return std::to_string(number);
    std::ostringstream os;
    os << value;
    return os.str();
  }

  static std::string DescribeModel(const z3::model& model, const Z3Translator& translator,
                                   const Assignment& fixed, const Term& lhs, const Term& rhs) {
    std::ostringstream os;
    os << "  model:     " << DescribeAssignment(fixed);
    bool first = fixed.empty();
    for (const auto& [var, term] : translator.FreeVariables()) {
      os << (first ? "" : ", ") << var->name_hint << " = " << ValueText(model.eval(term, true));
      first = false;
    }
    os << "\n  lhs value: " << ValueText(model.eval(lhs.value, true)) << "\n  rhs value: ";
    if (model.eval(rhs.defined, true).is_true()) {
      os << ValueText(model.eval(rhs.value, true));
    } else {
      os << "undefined (division by zero)";
    }
    return os.str() + "\n";
  }

  const Options& options_;
  z3::context ctx_;
};

// ---------------------------------------------------------------- self-test

enum class Expect { kProven, kRefuted, kMalformed };

struct SelfTestRule {
  RewriteRule rule;
  Expect expect;
};

// Wrong rules the prover must refute, each wrong in a different way, and correct rules
// (including ones about negative divisors and ones that need the bounded fallback) it must
// prove. `constants` receives the variables that play constant pattern variables.
std::vector<SelfTestRule> SelfTestRules(std::unordered_set<const Object*>* constants) {
  Var x("x"), y("y"), c("c");
  constants->insert(c.get());
  PrimExpr always = IntImm(DataType::Bool(), 1);
  PrimExpr c_negative = LT(c, 0);
  auto neg = [](const PrimExpr& e) { return Sub(0, e); };
  IntImm minus8(DataType::Int(32), -8);
  return {
      {{"self/floordiv_then_mul_is_identity", Mul(FloorDiv(x, c), c), x, NE(c, 0)},
       Expect::kRefuted},
      {{"self/truncdiv_is_floordiv", Div(x, 2), FloorDiv(x, 2), always}, Expect::kRefuted},
      {{"self/add_into_one_min_operand", Add(Min(x, y), 1), Min(Add(x, 1), y), always},
       Expect::kRefuted},
      // Equal wherever both sides are defined, but the rhs divides by y where the lhs does not.
      {{"self/introduces_division_by_zero", Sub(Add(x, y), y), FloorDiv(Mul(x, y), y), always},
       Expect::kRefuted},
      {{"self/unbound_rhs_variable", Add(x, 0), y, always}, Expect::kMalformed},
      {{"self/floormod_by_minus_8", FloorMod(x, minus8),
        Select(EQ(FloorMod(x, 8), 0), 0, Sub(FloorMod(x, 8), 8)), always},
       Expect::kProven},
      {{"self/floormod_negative_divisor", FloorMod(x, c), neg(FloorMod(neg(x), neg(c))),
        c_negative},
       Expect::kProven},
      {{"self/truncmod_ignores_divisor_sign", Mod(x, c), Mod(x, neg(c)), c_negative},
       Expect::kProven},
      // Holds only because a defined lhs implies y != 0.
      {{"self/floordiv_floormod_recombine", Add(Mul(FloorDiv(x, y), y), FloorMod(x, y)), x, always},
       Expect::kProven},
  };
}

bool RunSelfTest(RuleProver& prover, bool verbose) {
  std::unordered_set<const Object*> constants;
  std::vector<SelfTestRule> rules = SelfTestRules(&constants);
  IsConstVar is_const = [&](const Var& var) { return constants.count(var.get()) != 0; };
  bool ok = true;
  for (const SelfTestRule& test : rules) {
    RuleReport report = prover.Prove(test.rule, is_const);
    bool as_expected = false;
    const char* expected = "";
    switch (test.expect) {
      case Expect::kProven:
        expected = "proven";
        as_expected = report.verdict == Verdict::kProvenSymbolically ||
                      report.verdict == Verdict::kProvenBounded;
        break;
      case Expect::kRefuted:
        expected = "refuted";
        as_expected = report.verdict == Verdict::kRefuted;
        break;
      case Expect::kMalformed:
        expected = "rejected as malformed";
        as_expected = report.verdict == Verdict::kMalformed;
        break;
    }
    if (verbose && as_expected && test.expect != Expect::kProven) {
      std::cout << "self-test: " << test.rule.name << " " << expected << ":\n"
                << DescribeRule(test.rule)
                << (report.verdict == Verdict::kRefuted ? report.detail
                                                        : "  " + report.detail + "\n");
    }
    if (!as_expected) {
      std::cout << "SELF-TEST FAILED: " << test.rule.name << " should be " << expected << "\n"
                << DescribeRule(test.rule) << "  " << report.detail << "\n";
      ok = false;
    }
  }
  if (ok) std::cout << "self-test: " << rules.size() << " known rules classified correctly\n";
  return ok;
}

// ---------------------------------------------------------------- main

bool ParseOptions(int argc, char** argv, Options* options) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    bool has_value = i + 1 < argc;
    if (arg == "--rule" && has_value) {
      options->rule_filter = argv[++i];
    } else if (arg == "--timeout-ms" && has_value) {
      options->timeout_ms = static_cast<unsigned>(std::stoul(argv[++i]));
    } else if (arg == "--bound" && has_value) {
      options->bound = std::stoll(argv[++i]);
    } else if (arg == "--verbose") {
      options->verbose = true;
    } else {
      std::cerr << "usage: prove_rewrite_rules [--rule SUBSTRING] [--timeout-ms N] "
                   "[--bound N] [--verbose]\n";
      return false;
    }
  }
  return true;
}

int Main(int argc, char** argv) {
  Options options;
  if (!ParseOptions(argc, argv, &options)) return 2;
  auto start = std::chrono::steady_clock::now();
  RuleProver prover(options);
  if (!RunSelfTest(prover, options.verbose)) return 1;

  int symbolic = 0, bounded = 0, skipped = 0, refuted = 0, undecided = 0;
  IsConstVar is_const = [](const Var& var) { return arith::IsConstPatternVar(var); };
  for (const RewriteRule& rule : arith::AllRewriteRules()) {
    if (rule.name.find(options.rule_filter) == std::string::npos) continue;
    auto rule_start = std::chrono::steady_clock::now();
    RuleReport report = prover.Prove(rule, is_const);
    if (options.verbose) {
      std::cout
          << std::chrono::duration<double>(std::chrono::steady_clock::now() - rule_start).count()
          << " s: ";
    }
    switch (report.verdict) {
      case Verdict::kProvenSymbolically:
        ++symbolic;
        if (options.verbose) std::cout << "proven: " << rule.name << "\n";
        break;
      case Verdict::kProvenBounded:
        ++bounded;
        std::cout << "proven for " << report.detail << " in [" << -options.bound << ", "
                  << options.bound << "]: " << rule.name << "\n";
        break;
      case Verdict::kOutsideFragment:
        ++skipped;
        std::cout << "not in the linear fragment (" << report.detail << "): " << rule.name << "\n";
        break;
      case Verdict::kRefuted:
        ++refuted;
        std::cout << "COUNTEREXAMPLE: " << rule.name << "\n" << DescribeRule(rule) << report.detail;
        break;
      case Verdict::kUndecided:
      case Verdict::kMalformed:
        ++undecided;
        std::cout << (report.verdict == Verdict::kMalformed ? "MALFORMED: " : "UNDECIDED: ")
                  << rule.name << "\n"
                  << DescribeRule(rule) << "  " << report.detail << "\n";
        break;
    }
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "summary: " << symbolic << " proven symbolically, " << bounded
            << " proven for bounded values in [" << -options.bound << ", " << options.bound << "], "
            << skipped << " vector/opaque skipped (not in the linear fragment), " << refuted
            << " counterexamples, " << undecided << " undecided (" << seconds << " s)\n";
  return refuted == 0 && undecided == 0 ? 0 : 1;
}

}  // namespace
}  // namespace loom::prove

int main(int argc, char** argv) { return loom::prove::Main(argc, argv); }
