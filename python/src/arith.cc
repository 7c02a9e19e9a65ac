// _loom.arith: the Analyzer -- simplification, constant bounds, modular sets, integer sets and
// proofs over index expressions, with variable bindings and scoped facts.
#include <nanobind/stl/function.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <functional>
#include <memory>
#include <sstream>

#include "ir_common.h"
#include "loom/arith/analyzer.h"
#include "loom/ir/printer.h"

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

// `with analyzer.constraint_scope(i < n):` -- the fact holds inside the block only.
class ConstraintScope {
 public:
  ConstraintScope(Analyzer* analyzer, PrimExpr constraint)
      : analyzer_(analyzer), constraint_(std::move(constraint)) {}
  void Enter() {
    LOOM_CHECK_USER(!context_) << "constraint_scope(" << constraint_
                               << "): the scope is already entered (make a new one per `with`)";
    context_ = std::make_unique<arith::ConstraintContext>(analyzer_, constraint_);
  }
  void Exit() { context_.reset(); }
  const PrimExpr& constraint() const { return constraint_; }

 private:
  Analyzer* analyzer_;
  PrimExpr constraint_;
  std::unique_ptr<arith::ConstraintContext> context_;
};

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

  nb::class_<Analyzer>(arith, "Analyzer",
                       "Arithmetic analyses sharing variable bindings and scoped facts:\n\n"
                       "    ana = loom.arith.Analyzer()\n"
                       "    ana.bind(i, loom.tir.Range(0, 16))\n"
                       "    ana.simplify(i // 16)        # 0\n"
                       "    ana.can_prove(i * 4 + 3 < 64)  # True")
      .def(nb::init<>())
      .def("simplify", &Analyzer::Simplify, nb::arg("expr"), nb::arg("steps") = 2,
           "Rewrite and canonical simplification, alternated `steps` times")
      .def(
          "rewrite_simplify", [](Analyzer& a, const PrimExpr& e) { return a.rewrite_simplify(e); },
          nb::arg("expr"), "Rewrite-rule simplification only")
      .def(
          "canonical_simplify",
          [](Analyzer& a, const PrimExpr& e) { return a.canonical_simplify(e); }, nb::arg("expr"),
          "Canonical-form simplification only (sums of products, merged constants)")
      .def(
          "const_int_bound", [](Analyzer& a, const PrimExpr& e) { return a.const_int_bound(e); },
          nb::arg("expr"), "Constant bounds of an integer expression")
      .def(
          "modular_set", [](Analyzer& a, const PrimExpr& e) { return a.modular_set(e); },
          nb::arg("expr"), "What the expression is known to be modulo some coefficient")
      .def(
          "int_set",
          [](Analyzer& a, const PrimExpr& e, nb::dict dom_map) {
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
          [](Analyzer& a, const Var& var, const Range& range, bool allow_override) {
            a.Bind(var, range, allow_override);
          },
          nb::arg("var"), nb::arg("range"), nb::arg("allow_override") = false,
          "var lies in range from now on")
      .def(
          "bind",
          [](Analyzer& a, const Var& var, const PrimExpr& expr, bool allow_override) {
            a.Bind(var, expr, allow_override);
          },
          nb::arg("var"), nb::arg("expr"), nb::arg("allow_override") = false,
          "var equals expr from now on (substituted by the simplifiers)")
      .def(
          "update",
          [](Analyzer& a, const Var& var, const ConstIntBound& bound, bool allow_override) {
            a.const_int_bound.Update(var, bound, allow_override);
          },
          nb::arg("var"), nb::arg("info"), nb::arg("allow_override") = false,
          "Records constant bounds of var")
      .def(
          "update",
          [](Analyzer& a, const Var& var, const ModularSet& set, bool allow_override) {
            a.modular_set.Update(var, set, allow_override);
          },
          nb::arg("var"), nb::arg("info"), nb::arg("allow_override") = false,
          "Records what var is modulo a coefficient")
      .def("can_prove", &Analyzer::CanProve, nb::arg("condition"),
           "True when the condition holds for every value of its variables (False: not "
           "proven, not disproven)")
      .def("can_prove_equal", &Analyzer::CanProveEqual, nb::arg("lhs"), nb::arg("rhs"))
      .def("can_prove_greater_equal", &Analyzer::CanProveGreaterEqual, nb::arg("expr"),
           nb::arg("lower_bound"))
      .def("can_prove_less", &Analyzer::CanProveLess, nb::arg("expr"), nb::arg("upper_bound"))
      .def(
          "constraint_scope",
          [](Analyzer& a, const PrimExpr& constraint) { return ConstraintScope(&a, constraint); },
          nb::arg("constraint"), nb::keep_alive<0, 1>(),
          "A context manager: inside `with ana.constraint_scope(cond):` every analysis knows "
          "cond holds")
      .def("__repr__", [](const Analyzer&) { return std::string("loom.arith.Analyzer()"); });
}

}  // namespace loom::python
