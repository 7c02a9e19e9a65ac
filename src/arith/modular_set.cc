#include "loom/arith/modular_set.h"

#include <optional>
#include <ostream>
#include <unordered_map>
#include <utility>
#include <vector>

#include "arith/bound_math.h"
#include "loom/arith/analyzer.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"

namespace loom::arith {

namespace {

// Coefficients and bases are int64; their products and sums fit in 128 bits, so every
// intermediate is exact and a result is checked once when it is turned back into a set.
using Wide = __int128;
constexpr Wide kWideMax = INT64_MAX;
constexpr Wide kWideMin = INT64_MIN;

Wide Abs(Wide v) { return v < 0 ? -v : v; }

Wide Gcd(Wide a, Wide b) {
  a = Abs(a);
  b = Abs(b);
  while (b != 0) {
    Wide r = a % b;
    a = b;
    b = r;
  }
  return a;
}

Wide FloorModWide(Wide a, Wide b) {
  Wide r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

Wide FloorDivWide(Wide a, Wide b) { return (a - FloorModWide(a, b)) / b; }

// The normalized set {coeff * k + base}; Everything() when it does not fit int64.
ModularSet Make(Wide coeff, Wide base) {
  coeff = Abs(coeff);
  if (coeff > kWideMax) return ModularSet::Everything();
  if (coeff == 0) {
    if (base > kWideMax || base < kWideMin) return ModularSet::Everything();
    return {0, static_cast<int64_t>(base)};
  }
  return {static_cast<int64_t>(coeff), static_cast<int64_t>(FloorModWide(base, coeff))};
}

ModularSet Constant(Wide value) { return Make(0, value); }

bool IsConstant(const ModularSet& s) { return s.coeff == 0; }
bool IsEverything(const ModularSet& s) { return s == ModularSet::Everything(); }

ModularSet AddSets(const ModularSet& a, const ModularSet& b) {
  return Make(Gcd(a.coeff, b.coeff), Wide{a.base} + b.base);
}

ModularSet SubSets(const ModularSet& a, const ModularSet& b) {
  return Make(Gcd(a.coeff, b.coeff), Wide{a.base} - b.base);
}

ModularSet NegateSet(const ModularSet& a) { return Make(a.coeff, -Wide{a.base}); }

// (c1*k + b1)(c2*j + b2) = c1*c2*k*j + c1*b2*k + c2*b1*j + b1*b2.
ModularSet MulSets(const ModularSet& a, const ModularSet& b) {
  Wide c1 = a.coeff, c2 = b.coeff, b1 = a.base, b2 = b.base;
  return Make(Gcd(Gcd(c1 * c2, c1 * b2), c2 * b1), b1 * b2);
}

// A set holding every value of a and of b.
ModularSet UnionSets(const ModularSet& a, const ModularSet& b) {
  if (a == b) return a;
  return Make(Gcd(Gcd(a.coeff, b.coeff), Wide{a.base} - b.base), a.base);
}

bool Contains(const ModularSet& s, Wide value) {
  if (s.coeff == 0) return value == s.base;
  return FloorModWide(value - s.base, s.coeff) == 0;
}

// x with a * x == 1 (mod m), for gcd(a, m) == 1 and m >= 1.
Wide ModInverse(Wide a, Wide m) {
  Wide old_r = FloorModWide(a, m), r = m, old_s = 1, s = 0;
  while (r != 0) {
    Wide q = old_r / r;
    Wide next_r = old_r - q * r;
    old_r = r;
    r = next_r;
    Wide next_s = old_s - q * s;
    old_s = s;
    s = next_s;
  }
  return FloorModWide(old_s, m);
}

// The values in both sets (Chinese remainder theorem); nullopt when there are none. When the
// exact answer's coefficient does not fit int64, the tighter input stands in for it.
std::optional<ModularSet> IntersectSets(const ModularSet& a, const ModularSet& b) {
  if (IsConstant(a)) return Contains(b, a.base) ? std::optional(a) : std::nullopt;
  if (IsConstant(b)) return Contains(a, b.base) ? std::optional(b) : std::nullopt;
  Wide g = Gcd(a.coeff, b.coeff);
  Wide diff = Wide{b.base} - a.base;
  if (diff % g != 0) return std::nullopt;
  Wide m = b.coeff / g;
  // a.base + a.coeff * t == b.base (mod b.coeff)  <=>  (a.coeff / g) * t == diff / g (mod m)
  Wide t = FloorModWide(diff / g, m) * ModInverse(a.coeff / g, m) % m;
  Wide lcm = Wide{a.coeff} * m;
  if (lcm > kWideMax) return a.coeff >= b.coeff ? a : b;
  return Make(lcm, a.base + a.coeff * t);
}

// floordiv(coeff * k + base, c) = (coeff / c) * k + floordiv(base, c) when c divides coeff.
ModularSet FloorDivByConstant(const ModularSet& a, Wide c) {
  if (IsConstant(a)) return Constant(FloorDivWide(a.base, c));
  if (a.coeff % c != 0) return ModularSet::Everything();
  return Make(a.coeff / c, FloorDivWide(a.base, c));
}

// Any remainder a - b * q differs from a by a multiple of every divisor of b, so it keeps a's
// residue modulo gcd(a's coefficient, everything that divides b).
ModularSet RemainderKeepsResidue(const ModularSet& a, const ModularSet& b) {
  Wide g = Gcd(a.coeff, Gcd(b.coeff, b.base));
  if (g == 0) return ModularSet::Everything();  // b is zero: never defined
  return Make(g, a.base);
}

}  // namespace

class ModularSetAnalyzer::Impl : public ExprFunctor<ModularSet(const PrimExpr&)> {
 public:
  explicit Impl(Analyzer* parent) : parent_(parent) {}

  ModularSet VisitExpr(const PrimExpr& e) override {
    if (!e.dtype().is_integer_like()) return ModularSet::Everything();
    return ExprFunctor::VisitExpr(e);
  }

  ModularSet VisitExpr_(const IntImmNode* op) override { return Constant(op->value); }

  ModularSet VisitExpr_(const VarNode* op) override {
    auto it = var_sets_.find(Var(op));
    return it == var_sets_.end() ? ModularSet::Everything() : it->second;
  }

  ModularSet VisitExpr_(const CastNode* op) override {
    DataType from = op->value.dtype(), to = op->dtype;
    if (!from.is_integer_like()) return ModularSet::Everything();
    ModularSet v = VisitExpr(op->value);
    if (bound_math::CastPreservesValues(from, to)) return v;
    if (to.is_bool()) {
      // Non-zero becomes 1: decided when v never or always is zero.
      if (IsConstant(v)) return Constant(v.base != 0);
      return v.base != 0 ? Constant(1) : ModularSet::Everything();
    }
    if (IsConstant(v)) return Constant(const_int::WrapToType(v.base, to));
    if (to.bits() >= 64) return v;  // a 64-bit cast never changes a value it can hold
    // Wrapping changes a value by multiples of 2^bits: the residue survives modulo the
    // largest power of two dividing both.
    Wide lowest_bit = Wide{v.coeff} & -Wide{v.coeff};
    return Make(std::min(lowest_bit, Wide{1} << to.bits()), v.base);
  }

  ModularSet VisitExpr_(const AddNode* op) override {
    return AddSets(VisitExpr(op->a), VisitExpr(op->b));
  }
  ModularSet VisitExpr_(const SubNode* op) override {
    return SubSets(VisitExpr(op->a), VisitExpr(op->b));
  }
  ModularSet VisitExpr_(const MulNode* op) override {
    return MulSets(VisitExpr(op->a), VisitExpr(op->b));
  }

  ModularSet VisitExpr_(const FloorDivNode* op) override {
    ModularSet a = VisitExpr(op->a), b = VisitExpr(op->b);
    if (!IsConstant(b) || b.base == 0) return ModularSet::Everything();
    if (IsConstant(a) && a.base == INT64_MIN && b.base == -1) return ModularSet::Everything();
    return FloorDivByConstant(a, b.base);
  }

  ModularSet VisitExpr_(const FloorModNode* op) override {
    ModularSet a = VisitExpr(op->a), b = VisitExpr(op->b);
    if (IsConstant(b) && b.base != 0 && a.coeff % b.base == 0) {
      return Constant(FloorModWide(a.base, b.base));
    }
    return RemainderKeepsResidue(a, b);
  }

  // Truncated division agrees with floored division on a non-negative dividend; a
  // non-positive one is handled through truncdiv(a, c) == -truncdiv(-a, c).
  ModularSet VisitExpr_(const DivNode* op) override {
    ModularSet a = VisitExpr(op->a), b = VisitExpr(op->b);
    if (!IsConstant(b) || b.base == 0) return ModularSet::Everything();
    Wide c = b.base;
    if (IsConstant(a)) {
      if (a.base == INT64_MIN && c == -1) return ModularSet::Everything();
      return Constant(a.base / c);
    }
    switch (DividendSign(op->a)) {
      case Sign::kNonNegative: {
        ModularSet q = FloorDivByConstant(a, Abs(c));
        return c < 0 ? NegateSet(q) : q;
      }
      case Sign::kNonPositive: {
        ModularSet q = FloorDivByConstant(NegateSet(a), Abs(c));
        return c > 0 ? NegateSet(q) : q;
      }
      case Sign::kUnknown:
        break;
    }
    return ModularSet::Everything();
  }

  // The truncated remainder takes the dividend's sign.
  ModularSet VisitExpr_(const ModNode* op) override {
    ModularSet a = VisitExpr(op->a), b = VisitExpr(op->b);
    if (IsConstant(b) && b.base != 0 && a.coeff % b.base == 0) {
      Wide c = Abs(Wide{b.base});
      if (IsConstant(a)) return Constant(Wide{a.base} % c);
      Wide residue = FloorModWide(a.base, c);
      switch (DividendSign(op->a)) {
        case Sign::kNonNegative:
          return Constant(residue);
        case Sign::kNonPositive:
          return Constant(residue == 0 ? 0 : residue - c);
        case Sign::kUnknown:
          break;
      }
    }
    return RemainderKeepsResidue(a, b);
  }

  ModularSet VisitExpr_(const MinNode* op) override {
    return UnionSets(VisitExpr(op->a), VisitExpr(op->b));
  }
  ModularSet VisitExpr_(const MaxNode* op) override {
    return UnionSets(VisitExpr(op->a), VisitExpr(op->b));
  }
  ModularSet VisitExpr_(const SelectNode* op) override {
    return UnionSets(VisitExpr(op->true_value), VisitExpr(op->false_value));
  }

  ModularSet VisitExpr_(const LetNode* op) override {
    ModularSet value = VisitExpr(op->value);
    ScopedFacts scope(this);
    Set(op->var, value, &scope.log);
    return VisitExpr(op->body);
  }

  // Lane i holds base + i * stride, and i * stride is a multiple of whatever divides stride.
  ModularSet VisitExpr_(const RampNode* op) override {
    ModularSet base = VisitExpr(op->base), stride = VisitExpr(op->stride);
    return Make(Gcd(base.coeff, Gcd(stride.coeff, stride.base)), base.base);
  }
  ModularSet VisitExpr_(const BroadcastNode* op) override { return VisitExpr(op->value); }

  ModularSet VisitExpr_(const CallNode* op) override {
    const std::string& name = op->op->name;
    if (name == "likely" && op->args.size() == 1) return VisitExpr(op->args[0]);
    if (name == "if_then_else" && op->args.size() == 3) {
      return UnionSets(VisitExpr(op->args[1]), VisitExpr(op->args[2]));
    }
    return ModularSet::Everything();
  }

  ModularSet VisitExprDefault_(const Object*) override { return ModularSet::Everything(); }

  // ------------------------------------------------------------------ variable facts

  void Update(const Var& var, const ModularSet& info, bool allow_override) {
    auto it = var_sets_.find(var);
    if (it != var_sets_.end() && !allow_override) {
      LOOM_ICHECK(it->second == info)
          << "ModularSetAnalyzer: variable " << var->name_hint << " is already known as "
          << it->second.coeff << "*k+" << it->second.base << "; re-binding it to "
          << info.coeff << "*k+" << info.base << " needs allow_override";
      return;
    }
    var_sets_[var] = info;
  }

  // Facts replaced by a scope, in order, so leaving it can put them back.
  using UndoLog = std::vector<std::pair<Var, std::optional<ModularSet>>>;

  void Restore(const UndoLog& log) {
    for (auto it = log.rbegin(); it != log.rend(); ++it) {
      if (it->second) {
        var_sets_[it->first] = *it->second;
      } else {
        var_sets_.erase(it->first);
      }
    }
  }

  // Learns from equalities (conjunctions of them) in a constraint.
  void Assume(const PrimExpr& constraint, UndoLog* log) {
    if (!constraint.dtype().is_scalar()) return;
    if (const auto* n = constraint.as<AndNode>()) {
      Assume(n->a, log);
      Assume(n->b, log);
    } else if (const auto* n = constraint.as<EQNode>()) {
      if (!n->a.dtype().is_integer_like()) return;
      Learn(n->a, VisitExpr(n->b), log);
      Learn(n->b, VisitExpr(n->a), log);
    }
  }

 private:
  enum class Sign { kNonNegative, kNonPositive, kUnknown };

  // Facts that hold for one Let body, taken back however the body's visit ends.
  struct ScopedFacts {
    explicit ScopedFacts(Impl* impl) : impl(impl) {}
    ~ScopedFacts() { impl->Restore(log); }
    ScopedFacts(const ScopedFacts&) = delete;
    ScopedFacts& operator=(const ScopedFacts&) = delete;
    Impl* impl;
    UndoLog log;
  };

  Sign DividendSign(const PrimExpr& dividend) {
    ConstIntBound bound = parent_->const_int_bound(dividend);
    if (bound.min_value >= 0) return Sign::kNonNegative;
    if (bound.max_value <= 0) return Sign::kNonPositive;
    return Sign::kUnknown;
  }

  void Set(const Var& var, const ModularSet& info, UndoLog* log) {
    auto it = var_sets_.find(var);
    log->emplace_back(var, it == var_sets_.end() ? std::nullopt
                                                 : std::optional<ModularSet>(it->second));
    var_sets_[var] = info;
  }

  // Records that the value of `e` lies in `s`, solving through +, -, remainders and
  // value-preserving casts down to the variables.
  void Learn(const PrimExpr& e, const ModularSet& s, UndoLog* log) {
    if (IsEverything(s)) return;
    if (const auto* v = e.as<VarNode>()) {
      Var var(v);
      ModularSet current = VisitExpr(var);
      std::optional<ModularSet> both = IntersectSets(current, s);
      // No common value means the scope is unreachable; the old fact is still true.
      if (both && !(*both == current)) Set(var, *both, log);
    } else if (const auto* n = e.as<AddNode>()) {
      Learn(n->a, SubSets(s, VisitExpr(n->b)), log);
      Learn(n->b, SubSets(s, VisitExpr(n->a)), log);
    } else if (const auto* n = e.as<SubNode>()) {
      Learn(n->a, AddSets(s, VisitExpr(n->b)), log);
      Learn(n->b, SubSets(VisitExpr(n->a), s), log);
    } else if (e.as<FloorModNode>() || e.as<ModNode>()) {
      // x = divisor * q + remainder for either rounding.
      const auto* floor_mod = e.as<FloorModNode>();
      const auto* trunc_mod = e.as<ModNode>();
      const PrimExpr& x = floor_mod ? floor_mod->a : trunc_mod->a;
      ModularSet divisor = VisitExpr(floor_mod ? floor_mod->b : trunc_mod->b);
      Wide g = Gcd(divisor.coeff, divisor.base);
      if (g != 0) Learn(x, AddSets(s, Make(g, 0)), log);
    } else if (const auto* n = e.as<CastNode>()) {
      if (bound_math::CastPreservesValues(n->value.dtype(), n->dtype)) Learn(n->value, s, log);
    }
  }

  Analyzer* parent_;
  std::unordered_map<Var, ModularSet, ObjectHash, ObjectEqual> var_sets_;
};

std::ostream& operator<<(std::ostream& os, const ModularSet& set) {
  if (set.coeff == 0) return os << set.base;
  return os << set.coeff << "*k+" << set.base;
}

ModularSetAnalyzer::ModularSetAnalyzer(Analyzer* parent)
    : impl_(std::make_unique<Impl>(parent)) {
  LOOM_ICHECK(parent != nullptr) << "ModularSetAnalyzer needs its parent Analyzer";
}

ModularSetAnalyzer::~ModularSetAnalyzer() = default;

ModularSet ModularSetAnalyzer::operator()(const PrimExpr& expr) { return impl_->VisitExpr(expr); }

void ModularSetAnalyzer::Update(const Var& var, const ModularSet& info, bool allow_override) {
  impl_->Update(var, info, allow_override);
}

std::function<void()> ModularSetAnalyzer::EnterConstraint(const PrimExpr& constraint) {
  Impl::UndoLog log;
  impl_->Assume(constraint, &log);
  Impl* impl = impl_.get();
  return [impl, log = std::move(log)]() { impl->Restore(log); };
}

}  // namespace loom::arith
