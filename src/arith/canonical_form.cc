#include "arith/canonical_form.h"

#include <algorithm>
#include <numeric>

#include "loom/arith/analyzer.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"

namespace loom::arith::canonical {

namespace {

using const_int::AddOverflows;
using const_int::MulOverflows;
using const_int::SubOverflows;

constexpr int64_t kNegInf = ConstIntBound::kNegInf;
constexpr int64_t kPosInf = ConstIntBound::kPosInf;

uint64_t Magnitude(int64_t v) {
  return v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
}

// *acc += coeff * monomial, keeping coefficients representable in the dtype; on failure
// *acc is left half-updated, so callers work on a copy.
bool AddTerm(Sum* acc, const Monomial& monomial, int64_t coeff) {
  int64_t* slot = monomial.empty() ? &acc->constant : &acc->terms[monomial];
  int64_t total = 0;
  if (AddOverflows(*slot, coeff, &total) || !acc->dtype.is_representable(total)) return false;
  *slot = total;
  if (!monomial.empty() && total == 0) acc->terms.erase(monomial);
  return true;
}

Monomial MergeMonomials(const Monomial& a, const Monomial& b) {
  Monomial out;
  out.reserve(a.size() + b.size());
  std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

// Endpoint arithmetic where kNegInf/kPosInf stand for the infinities; overflow saturates.
int64_t EndpointAdd(int64_t a, int64_t b) {
  if (a == kNegInf || b == kNegInf) return kNegInf;
  if (a == kPosInf || b == kPosInf) return kPosInf;
  int64_t r = 0;
  if (AddOverflows(a, b, &r)) return a > 0 ? kPosInf : kNegInf;
  return r;
}

int64_t EndpointMul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  bool negative = (a < 0) != (b < 0);
  int64_t r = 0;
  if (a == kNegInf || a == kPosInf || b == kNegInf || b == kPosInf || MulOverflows(a, b, &r)) {
    return negative ? kNegInf : kPosInf;
  }
  return r;
}

int64_t EndpointFloorDiv(int64_t a, int64_t positive_divisor) {
  if (a == kNegInf || a == kPosInf) return a;
  return const_int::FloorDiv(a, positive_divisor);
}

ModularSet MakeModular(int64_t coeff, int64_t base) {
  coeff = Gcd(coeff, 0);
  if (coeff > 0) base = const_int::FloorMod(base, coeff);
  return {coeff, base};
}

// {a.coeff * k + a.base} * {b.coeff * m + b.base}.
ModularSet ModularMul(const ModularSet& a, const ModularSet& b) {
  int64_t cc = 0, cb = 0, bc = 0, bb = 0;
  if (MulOverflows(a.coeff, b.coeff, &cc) || MulOverflows(a.coeff, b.base, &cb) ||
      MulOverflows(b.coeff, a.base, &bc) || MulOverflows(a.base, b.base, &bb)) {
    return ModularSet::Everything();
  }
  return MakeModular(Gcd(Gcd(cc, cb), bc), bb);
}

ModularSet ModularAdd(const ModularSet& a, const ModularSet& b) {
  int64_t base = 0;
  if (AddOverflows(a.base, b.base, &base)) return ModularSet::Everything();
  return MakeModular(Gcd(a.coeff, b.coeff), base);
}

PrimExpr Times(const PrimExpr& product, int64_t coeff) {
  return coeff == 1 ? product : product * make_const(product.dtype(), coeff);
}

}  // namespace

int64_t Gcd(int64_t a, int64_t b) {
  uint64_t g = std::gcd(Magnitude(a), Magnitude(b));
  if (g > static_cast<uint64_t>(INT64_MAX)) return 1;
  return static_cast<int64_t>(g);
}

// ---------------------------------------------------------------- atoms

AtomId AtomTable::Intern(const PrimExpr& opaque) {
  LOOM_ICHECK(!opaque.as<IntImmNode>()) << "a constant is not an atom: " << opaque;
  auto it = opaque_ids_.find(opaque);
  if (it != opaque_ids_.end()) return it->second;
  auto id = static_cast<AtomId>(atoms_.size());
  atoms_.push_back(Atom{opaque, std::nullopt});
  opaque_ids_.emplace(opaque, id);
  return id;
}

AtomTable::SplitKey AtomTable::KeyOf(const Split& split) {
  return {static_cast<int>(split.inner.dtype.code()), split.inner.dtype.bits(),
          split.inner.terms, split.inner.constant, split.divisor, split.modulus};
}

AtomId AtomTable::Intern(const Split& split) {
  SplitKey key = KeyOf(split);
  auto it = split_ids_.find(key);
  if (it != split_ids_.end()) return it->second;
  auto id = static_cast<AtomId>(atoms_.size());
  atoms_.push_back(Atom{PrimExpr(), split});
  split_ids_.emplace(std::move(key), id);
  return id;
}

ConstIntBound AtomTable::Bound(AtomId id) {
  if (auto it = bounds_.find(id); it != bounds_.end()) return it->second;
  const Atom& atom = (*this)[id];
  ConstIntBound bound;
  if (!atom.split) {
    bound = parent_->const_int_bound(atom.opaque);
  } else {
    const Split& split = *atom.split;
    bound = SumBound(this, split.inner);
    if (split.modulus != kNoModulus) {
      int64_t m = split.modulus;
      if (IsFinite(bound) && const_int::FloorDiv(bound.min_value, m) ==
                                 const_int::FloorDiv(bound.max_value, m)) {
        int64_t shift = const_int::FloorDiv(bound.min_value, m) * m;
        bound = {bound.min_value - shift, bound.max_value - shift};
      } else {
        bound = {0, m - 1};
      }
    }
    bound = BoundFloorDiv(bound, split.divisor);
  }
  bounds_.emplace(id, bound);
  return bound;
}

ModularSet AtomTable::Modular(AtomId id) {
  if (auto it = modulars_.find(id); it != modulars_.end()) return it->second;
  const Atom& atom = (*this)[id];
  ModularSet info = atom.split ? ModularSet::Everything() : parent_->modular_set(atom.opaque);
  modulars_.emplace(id, info);
  return info;
}

PrimExpr AtomTable::AtomExpr(AtomId id) {
  if (auto it = exprs_.find(id); it != exprs_.end()) return it->second;
  const Atom& atom = (*this)[id];
  PrimExpr expr = atom.opaque;
  if (atom.split) {
    const Split& split = *atom.split;
    DataType t = split.inner.dtype;
    PrimExpr inner = SumToExpr(this, split.inner);
    if (split.modulus == kNoModulus) {
      expr = floordiv(inner, make_const(t, split.divisor));
    } else if (split.divisor == 1) {
      expr = floormod(inner, make_const(t, split.modulus));
    } else {
      expr = floormod(floordiv(inner, make_const(t, split.divisor)),
                      make_const(t, split.modulus / split.divisor));
    }
  }
  exprs_.emplace(id, expr);
  return expr;
}

// ---------------------------------------------------------------- building sums

Sum ConstantSum(DataType dtype, int64_t value) { return Sum{dtype, {}, value}; }

Sum AtomSum(DataType dtype, AtomId id, int64_t coeff) {
  Sum s{dtype, {}, 0};
  s.terms.emplace(Monomial{id}, coeff);
  return s;
}

Sum SumOf(AtomTable* table, const PrimExpr& expr) {
  int64_t value = 0;
  if (IsConstInt(expr, &value)) return ConstantSum(expr.dtype(), value);
  return AtomSum(expr.dtype(), table->Intern(expr));
}

// ---------------------------------------------------------------- arithmetic

bool AddScaled(Sum* acc, const Sum& x, int64_t scale) {
  LOOM_ICHECK(acc->dtype == x.dtype) << "adding sums of " << acc->dtype << " and " << x.dtype;
  Sum result = *acc;
  int64_t product = 0;
  for (const auto& [monomial, coeff] : x.terms) {
    if (MulOverflows(coeff, scale, &product) || !AddTerm(&result, monomial, product)) return false;
  }
  if (MulOverflows(x.constant, scale, &product) || !AddTerm(&result, {}, product)) return false;
  *acc = std::move(result);
  return true;
}

std::optional<Sum> Add(const Sum& a, const Sum& b, int64_t b_scale) {
  Sum result = a;
  if (!AddScaled(&result, b, b_scale)) return std::nullopt;
  return result;
}

std::optional<Sum> Scale(const Sum& x, int64_t scale) {
  return Add(ConstantSum(x.dtype, 0), x, scale);
}

std::optional<Sum> Multiply(const Sum& a, const Sum& b) {
  if (a.is_constant()) return Scale(b, a.constant);
  if (b.is_constant()) return Scale(a, b.constant);
  if ((a.terms.size() + 1) * (b.terms.size() + 1) > kMaxProductTerms) return std::nullopt;
  auto with_constant = [](const Sum& s) {
    std::vector<std::pair<Monomial, int64_t>> terms(s.terms.begin(), s.terms.end());
    if (s.constant != 0) terms.emplace_back(Monomial{}, s.constant);
    return terms;
  };
  Sum result = ConstantSum(a.dtype, 0);
  int64_t coeff = 0;
  for (const auto& [ma, ca] : with_constant(a)) {
    for (const auto& [mb, cb] : with_constant(b)) {
      if (MulOverflows(ca, cb, &coeff) || !AddTerm(&result, MergeMonomials(ma, mb), coeff)) {
        return std::nullopt;
      }
    }
  }
  return result;
}

int64_t CoefficientGcd(const Sum& s) {
  int64_t g = 0;
  for (const auto& term : s.terms) g = Gcd(g, term.second);
  return g;
}

Sum DivideExact(const Sum& s, int64_t divisor) {
  Sum result = s;
  for (auto& term : result.terms) {
    LOOM_ICHECK(term.second % divisor == 0) << divisor << " does not divide a coefficient";
    term.second /= divisor;
  }
  LOOM_ICHECK(result.constant % divisor == 0) << divisor << " does not divide the constant";
  result.constant /= divisor;
  return result;
}

// ---------------------------------------------------------------- bounds, modular sets

bool IsFinite(const ConstIntBound& b) { return b.min_value != kNegInf && b.max_value != kPosInf; }

ConstIntBound BoundAdd(const ConstIntBound& a, const ConstIntBound& b) {
  return {EndpointAdd(a.min_value, b.min_value), EndpointAdd(a.max_value, b.max_value)};
}

ConstIntBound BoundMul(const ConstIntBound& a, const ConstIntBound& b) {
  int64_t p[] = {EndpointMul(a.min_value, b.min_value), EndpointMul(a.min_value, b.max_value),
                 EndpointMul(a.max_value, b.min_value), EndpointMul(a.max_value, b.max_value)};
  return {*std::min_element(std::begin(p), std::end(p)),
          *std::max_element(std::begin(p), std::end(p))};
}

ConstIntBound BoundFloorDiv(const ConstIntBound& a, int64_t positive_divisor) {
  return {EndpointFloorDiv(a.min_value, positive_divisor),
          EndpointFloorDiv(a.max_value, positive_divisor)};
}

ConstIntBound SumBound(AtomTable* table, const Sum& s) {
  ConstIntBound total = ConstIntBound::Single(s.constant);
  for (const auto& [monomial, coeff] : s.terms) {
    ConstIntBound term = ConstIntBound::Single(coeff);
    for (AtomId id : monomial) term = BoundMul(term, table->Bound(id));
    total = BoundAdd(total, term);
  }
  return total;
}

ModularSet SumModular(AtomTable* table, const Sum& s) {
  ModularSet total = MakeModular(0, s.constant);
  for (const auto& [monomial, coeff] : s.terms) {
    ModularSet term = MakeModular(0, coeff);
    for (AtomId id : monomial) term = ModularMul(term, table->Modular(id));
    total = ModularAdd(total, term);
  }
  return total;
}

// ---------------------------------------------------------------- printing

PrimExpr SumToExpr(AtomTable* table, const Sum& s) {
  const DataType t = s.dtype;
  std::vector<std::pair<const Monomial*, int64_t>> order;
  for (const auto& [monomial, coeff] : s.terms) order.emplace_back(&monomial, coeff);
  // The map already orders monomials by first appearance; a stable sort keeps that order
  // among terms of equal weight.
  std::stable_sort(order.begin(), order.end(), [](const auto& x, const auto& y) {
    if ((x.second < 0) != (y.second < 0)) return x.second > 0;
    return Magnitude(x.second) > Magnitude(y.second);
  });
  auto product = [&](const Monomial& monomial) {
    PrimExpr p;
    for (AtomId id : monomial) {
      PrimExpr atom = table->AtomExpr(id);
      p = p.defined() ? p * atom : atom;
    }
    return p;
  };
  // -value when that is representable, so that a negative term prints as a subtraction.
  auto negated = [&](int64_t value) -> std::optional<int64_t> {
    int64_t r = 0;
    if (SubOverflows(0, value, &r) || !t.is_representable(r)) return std::nullopt;
    return r;
  };

  PrimExpr result;
  bool constant_printed = false;
  for (const auto& [monomial, coeff] : order) {
    PrimExpr p = product(*monomial);
    if (coeff > 0) {
      PrimExpr term = Times(p, coeff);
      result = result.defined() ? result + term : term;
      continue;
    }
    if (!result.defined() && s.constant != 0) {
      // 3 - x rather than x * -1 + 3; -16 - x also keeps x == INT_MIN from wrapping.
      result = make_const(t, s.constant);
      constant_printed = true;
    }
    std::optional<int64_t> magnitude = negated(coeff);
    if (!result.defined()) {
      result = Times(p, coeff);
    } else if (magnitude) {
      result = result - Times(p, *magnitude);
    } else {
      result = result + Times(p, coeff);
    }
  }
  if (!constant_printed && s.constant != 0) {
    std::optional<int64_t> magnitude = negated(s.constant);
    if (!result.defined()) {
      result = make_const(t, s.constant);
    } else if (s.constant < 0 && magnitude) {
      result = result - make_const(t, *magnitude);
    } else {
      result = result + make_const(t, s.constant);
    }
  }
  return result.defined() ? result : make_zero(t);
}

}  // namespace loom::arith::canonical
