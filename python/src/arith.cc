// _loom.arith: the Analyzer -- simplification, constant bounds, modular sets, integer sets and
// proofs over index expressions, with variable bindings and scoped facts.
#include <nanobind/stl/function.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <unordered_map>

#include "ir_common.h"
#include "loom/arith/analyzer.h"
#include "loom/ir/printer.h"
#include "loom/ir/structural.h"

namespace loom::python {
namespace {

using arith::Analyzer;
using arith::ConstIntBound;
using arith::IntSet;
using arith::ModularSet;

std::string BoundText(int64_t v) {
  if (v == ConstIntBound::kPosInf) return "+inf";
  if (v == ConstIntBound::kNegInf) return "-inf";
  return std::to_string(v);
}

class ConstraintScope;

// The Analyzer as Python holds it: Loom's Analyzer plus what the bindings need to check before
// calling it -- the constraint scopes entered (a stack: they must be left innermost first, or
// leaving one would drop the facts of another) and the variables bound through Python (so
// that re-binding one without allow_override is a user error, not a failed internal check).
class PyAnalyzer : public Analyzer {
 public:
  // The analyses a binding sets.
  enum Slot { kBound = 1, kModular = 2, kValue = 4 };

  // One call of bind/update, to compare with a later one and to name in messages.
  struct Binding {
    int kind = 0;  // 0: bind(expr), 1: bind(range), 2: update(ConstIntBound), 3: update(ModularSet)
    PrimExpr a, b;
    ConstIntBound bound;
    ModularSet modular;
    std::string text;

    bool Same(const Binding& other) const {
      if (kind != other.kind) return false;
      switch (kind) {
        case 0:
          return StructuralEqual(a, other.a);
        case 1:
          return StructuralEqual(a, other.a) && StructuralEqual(b, other.b);
        case 2:
          return bound == other.bound;
        default:
          return modular == other.modular;
      }
    }
  };

  // Checks that binding `var` as `binding` (setting the analyses `slots`) does not replace an
  // earlier binding, unless allow_override; then calls `apply` and records the binding.
  template <typename Apply>
  void Bind(const std::string& what, const Var& var, int slots, Binding binding,
            bool allow_override, Apply apply) {
    Entry& entry = bindings_[var.get()];
    if (!allow_override) {
      for (int i = 0; i < 3; ++i) {
        const std::optional<Binding>& previous = entry.slots[i];
        if ((slots & (1 << i)) == 0 || !previous || previous->Same(binding)) continue;
        LOOM_CHECK_USER(false) << what << ": variable '" << var.name() << "' is already bound ("
                               << previous->text << "); re-binding it (" << binding.text
                               << ") needs allow_override=True";
      }
    }
    try {
      apply();
    } catch (const InternalError&) {
      // A fact the analyzer holds that the bindings did not record (a constraint scope's):
      // its check of the re-binding failed before changing anything.
      LOOM_CHECK_USER(false) << what << ": variable '" << var.name() << "' already has a "
                             << "different bound or value here (from a binding or an entered "
                             << "constraint_scope); re-binding it (" << binding.text
                             << ") needs allow_override=True";
    }
    entry.var = var;
    for (int i = 0; i < 3; ++i) {
      if (slots & (1 << i)) entry.slots[i] = binding;
    }
  }

  std::vector<ConstraintScope*> scopes;  // entered, innermost last

 private:
  struct Entry {
    Var var;  // keeps the key alive
    std::optional<Binding> slots[3];
  };
  std::unordered_map<const Object*, Entry> bindings_;
};

// `with analyzer.constraint_scope(i < n):` -- the fact holds inside the block only. Scopes of
// one analyzer nest: leaving one that is not the innermost entered is an error (and changes
// nothing).
class ConstraintScope {
 public:
  ConstraintScope(PyAnalyzer* analyzer, PrimExpr constraint)
      : analyzer_(analyzer), constraint_(std::move(constraint)) {}
  ConstraintScope(ConstraintScope&&) = default;
  ConstraintScope(const ConstraintScope&) = delete;
  ConstraintScope& operator=(const ConstraintScope&) = delete;
  // A scope dropped while entered (only possible without `with`) leaves it, and every scope
  // entered after it, so that the analyzer's stack stays in order.
  ~ConstraintScope() {
    if (!context_) return;
    auto& scopes = analyzer_->scopes;
    if (std::find(scopes.begin(), scopes.end(), this) == scopes.end()) return;
    for (ConstraintScope* top = nullptr; top != this;) {
      top = scopes.back();
      scopes.pop_back();
      top->context_.reset();
    }
  }

  void Enter() {
    LOOM_CHECK_USER(!context_) << "constraint_scope(" << constraint_
                               << "): the scope is already entered (make a new one per `with`)";
    context_ = std::make_unique<arith::ConstraintContext>(analyzer_, constraint_);
    analyzer_->scopes.push_back(this);
  }
  void Exit() {
    auto& scopes = analyzer_->scopes;
    LOOM_CHECK_USER(context_ && std::find(scopes.begin(), scopes.end(), this) != scopes.end())
        << "constraint_scope(" << constraint_ << "): the scope is not entered";
    LOOM_CHECK_USER(scopes.back() == this)
        << "constraint_scope(" << constraint_ << "): scopes must be left innermost first, and "
        << "constraint_scope(" << scopes.back()->constraint() << ") was entered after this one "
        << "and is still entered (leave it first)";
    scopes.pop_back();
    context_.reset();
  }
  const PrimExpr& constraint() const { return constraint_; }

 private:
  PyAnalyzer* analyzer_;
  PrimExpr constraint_;
  std::unique_ptr<arith::ConstraintContext> context_;
};

// Rewrite and canonical simplification alternate `steps` times: a few suffice (each step
// stops early at a constant), and a huge count would hold the GIL for as long.
constexpr int kMaxSimplifySteps = 64;

arith::VarIntSetMap ToDomMap(nb::dict dom_map) {
  arith::VarIntSetMap map;
  for (auto [key, value] : dom_map) {
    LOOM_CHECK_USER(nb::isinstance<Var>(key) || nb::isinstance<IterVar>(key))
        << "Analyzer.int_set: dom_map keys must be Vars, got " << TypeName(key);
    Var var = nb::isinstance<Var>(key) ? nb::cast<Var>(key) : nb::cast<IterVar>(key)->var;
    if (nb::isinstance<Range>(value)) {
      map[var] = IntSet::FromRange(nb::cast<Range>(value));
    } else if (nb::isinstance<IntSet>(value)) {
      map[var] = nb::cast<IntSet>(value);
    } else {
      LOOM_CHECK_USER(false) << "Analyzer.int_set: the domain of '" << var.name()
                             << "' must be a tir.Range or an arith.IntSet, got " << TypeName(value);
    }
  }
  return map;
}

}  // namespace

void BindArith(nb::module_& m) {
  nb::module_ arith =
      m.def_submodule("arith", "Arithmetic analysis of index expressions: arith.Analyzer");

  nb::class_<ConstIntBound>(arith, "ConstIntBound",
                            "Constant bounds [min_value, max_value] of an integer expression")
      .def(nb::init<>())
      .def(
          "__init__",
          [](ConstIntBound* self, int64_t min_value, int64_t max_value) {
            new (self) ConstIntBound{min_value, max_value};
          },
          nb::arg("min_value"), nb::arg("max_value"))
      .def_rw("min_value", &ConstIntBound::min_value)
      .def_rw("max_value", &ConstIntBound::max_value)
      .def_ro_static("POS_INF", &ConstIntBound::kPosInf)
      .def_ro_static("NEG_INF", &ConstIntBound::kNegInf)
      .def("is_const", &ConstIntBound::is_const)
      .def("__eq__",
           [](const ConstIntBound& a, nb::handle b) {
             return nb::isinstance<ConstIntBound>(b) && nb::cast<const ConstIntBound&>(b) == a;
           })
      .def("__repr__", [](const ConstIntBound& b) {
        return "ConstIntBound(min_value=" + BoundText(b.min_value) +
               ", max_value=" + BoundText(b.max_value) + ")";
      });

  nb::class_<ModularSet>(arith, "ModularSet",
                         "The values coeff * k + base (for any integer k); coeff 1: any integer")
      .def(
          "__init__",
          [](ModularSet* self, int64_t coeff, int64_t base) {
            new (self) ModularSet{coeff, base};
          },
          nb::arg("coeff") = 1, nb::arg("base") = 0)
      .def_rw("coeff", &ModularSet::coeff)
      .def_rw("base", &ModularSet::base)
      .def("__eq__",
           [](const ModularSet& a, nb::handle b) {
             return nb::isinstance<ModularSet>(b) && nb::cast<const ModularSet&>(b) == a;
           })
      .def("__repr__", [](const ModularSet& s) {
        return "ModularSet(coeff=" + std::to_string(s.coeff) + ", base=" + std::to_string(s.base) +
               ")";
      });

  nb::class_<IntSet>(arith, "IntSet", "An interval [min, max] of integers, ends symbolic")
      .def_static("interval", &IntSet::Interval, nb::arg("min"), nb::arg("max"))
      .def_static("single_point", &IntSet::SinglePoint, nb::arg("point"))
      .def_static("from_range", &IntSet::FromRange, nb::arg("range"))
      .def_prop_ro(
          "min",
          [](const IntSet& s) -> nb::object {
            if (s.is_nothing() || !s.has_lower_bound()) return nb::none();
            return nb::cast(s.min());
          },
          "The lower end (None when unbounded or empty)")
      .def_prop_ro(
          "max",
          [](const IntSet& s) -> nb::object {
            if (s.is_nothing() || !s.has_upper_bound()) return nb::none();
            return nb::cast(s.max());
          },
          "The upper end (None when unbounded or empty)")
      .def("is_nothing", &IntSet::is_nothing)
      .def("is_everything", &IntSet::is_everything)
      .def("is_single_point", &IntSet::is_single_point)
      .def("__repr__", [](const IntSet& s) { return "IntSet(" + s.str() + ")"; });

  nb::class_<ConstraintScope>(arith, "ConstraintScope",
                              "A fact that holds inside a `with` block (Analyzer.constraint_scope)")
      .def("__enter__", [](ConstraintScope& s) { s.Enter(); })
      .def(
          "__exit__", [](ConstraintScope& s, nb::handle, nb::handle, nb::handle) { s.Exit(); },
          nb::arg("exc_type").none(), nb::arg("exc_value").none(), nb::arg("traceback").none())
      .def("__repr__", [](const ConstraintScope& s) {
        return "ConstraintScope(" + ToScript(s.constraint()) + ")";
      });

  nb::class_<PyAnalyzer>(arith, "Analyzer",
                         "Arithmetic analyses sharing variable bindings and scoped facts:\n\n"
                         "    ana = loom.arith.Analyzer()\n"
                         "    ana.bind(i, loom.tir.Range(0, 16))\n"
                         "    ana.simplify(i // 16)        # 0\n"
                         "    ana.can_prove(i * 4 + 3 < 64)  # True")
      .def(nb::init<>())
      .def(
          "simplify",
          [](PyAnalyzer& a, const PrimExpr& e, int steps) {
            LOOM_CHECK_USER(steps >= 1 && steps <= kMaxSimplifySteps)
                << "Analyzer.simplify: steps must be between 1 and " << kMaxSimplifySteps
                << ", got " << steps;
            return a.Simplify(e, steps);
          },
          nb::arg("expr"), nb::arg("steps") = 2,
          "Rewrite and canonical simplification, alternated `steps` times (1 to 64)")
      .def(
          "rewrite_simplify",
          [](PyAnalyzer& a, const PrimExpr& e) { return a.rewrite_simplify(e); }, nb::arg("expr"),
          "Rewrite-rule simplification only")
      .def(
          "canonical_simplify",
          [](PyAnalyzer& a, const PrimExpr& e) { return a.canonical_simplify(e); }, nb::arg("expr"),
          "Canonical-form simplification only (sums of products, merged constants)")
      .def(
          "const_int_bound", [](PyAnalyzer& a, const PrimExpr& e) { return a.const_int_bound(e); },
          nb::arg("expr"), "Constant bounds of an integer expression")
      .def(
          "modular_set", [](PyAnalyzer& a, const PrimExpr& e) { return a.modular_set(e); },
          nb::arg("expr"), "What the expression is known to be modulo some coefficient")
      .def(
          "int_set",
          [](PyAnalyzer& a, const PrimExpr& e, nb::dict dom_map) {
            return a.int_set(e, ToDomMap(dom_map));
          },
          nb::arg("expr"), nb::arg("dom_map") = nb::dict(),
          nb::sig(
              "def int_set(self, expr: loom._loom.tir.PrimExpr, dom_map: dict[loom._loom.tir.Var | "
              "loom._loom.tir.IterVar, loom._loom.tir.Range | IntSet] "
              "= {}) -> IntSet"),
          "The values expr takes when each variable of dom_map ranges over its domain")
      .def(
          "bind",
          [](PyAnalyzer& a, const Var& var, const Range& range, bool allow_override) {
            PyAnalyzer::Binding b;
            b.kind = 1;
            b.a = range->min;
            b.b = range->extent;
            b.text = "bind(" + var.name() + ", range(" + ToScript(range->min) + ", " +
                     ToScript(range->min + range->extent) + "))";
            int64_t extent = 0;
            bool single = IsConstInt(range->extent, &extent) && extent == 1;
            int slots = single || allow_override
                            ? PyAnalyzer::kBound | PyAnalyzer::kModular | PyAnalyzer::kValue
                            : PyAnalyzer::kBound;
            a.Bind("Analyzer.bind", var, slots, b, allow_override,
                   [&] { a.Analyzer::Bind(var, range, allow_override); });
          },
          nb::arg("var"), nb::arg("range"), nb::arg("allow_override") = false,
          "var lies in range from now on (re-binding a bound variable needs allow_override)")
      .def(
          "bind",
          [](PyAnalyzer& a, const Var& var, const PrimExpr& expr, bool allow_override) {
            PyAnalyzer::Binding b;
            b.kind = 0;
            b.a = expr;
            b.text = "bind(" + var.name() + ", " + ToScript(expr) + ")";
            a.Bind("Analyzer.bind", var,
                   PyAnalyzer::kBound | PyAnalyzer::kModular | PyAnalyzer::kValue, b,
                   allow_override, [&] { a.Analyzer::Bind(var, expr, allow_override); });
          },
          nb::arg("var"), nb::arg("expr"), nb::arg("allow_override") = false,
          "var equals expr from now on (substituted by the simplifiers; re-binding a bound "
          "variable needs allow_override)")
      .def(
          "update",
          [](PyAnalyzer& a, const Var& var, const ConstIntBound& bound, bool allow_override) {
            PyAnalyzer::Binding b;
            b.kind = 2;
            b.bound = bound;
            b.text = "update(" + var.name() + ", ConstIntBound(" + BoundText(bound.min_value) +
                     ", " + BoundText(bound.max_value) + "))";
            a.Bind("Analyzer.update", var, PyAnalyzer::kBound, b, allow_override,
                   [&] { a.const_int_bound.Update(var, bound, allow_override); });
          },
          nb::arg("var"), nb::arg("info"), nb::arg("allow_override") = false,
          "Records constant bounds of var (replacing different ones needs allow_override)")
      .def(
          "update",
          [](PyAnalyzer& a, const Var& var, const ModularSet& set, bool allow_override) {
            PyAnalyzer::Binding b;
            b.kind = 3;
            b.modular = set;
            b.text = "update(" + var.name() + ", ModularSet(" + std::to_string(set.coeff) + ", " +
                     std::to_string(set.base) + "))";
            a.Bind("Analyzer.update", var, PyAnalyzer::kModular, b, allow_override,
                   [&] { a.modular_set.Update(var, set, allow_override); });
          },
          nb::arg("var"), nb::arg("info"), nb::arg("allow_override") = false,
          "Records what var is modulo a coefficient (replacing a different one needs "
          "allow_override)")
      .def(
          "can_prove", [](PyAnalyzer& a, const PrimExpr& c) { return a.CanProve(c); },
          nb::arg("condition"),
          "True when the condition holds for every value of its variables (False: not "
          "proven, not disproven)")
      .def(
          "can_prove_equal",
          [](PyAnalyzer& a, const PrimExpr& l, const PrimExpr& r) { return a.CanProveEqual(l, r); },
          nb::arg("lhs"), nb::arg("rhs"))
      .def(
          "can_prove_greater_equal",
          [](PyAnalyzer& a, const PrimExpr& e, int64_t lower) {
            return a.CanProveGreaterEqual(e, lower);
          },
          nb::arg("expr"), nb::arg("lower_bound"))
      .def(
          "can_prove_less",
          [](PyAnalyzer& a, const PrimExpr& e, int64_t upper) { return a.CanProveLess(e, upper); },
          nb::arg("expr"), nb::arg("upper_bound"))
      .def(
          "constraint_scope",
          [](PyAnalyzer& a, const PrimExpr& constraint) { return ConstraintScope(&a, constraint); },
          nb::arg("constraint"), nb::keep_alive<0, 1>(),
          "A context manager: inside `with ana.constraint_scope(cond):` every analysis knows "
          "cond holds; scopes nest (leave the innermost first)")
      .def("__repr__", [](const PyAnalyzer&) { return std::string("loom.arith.Analyzer()"); });
}

}  // namespace loom::python
