#include "arith/canonical_split.h"

#include <vector>

#include "loom/ir/expr_ops.h"

namespace loom::arith::canonical {

namespace {

using const_int::FloorDiv;
using const_int::FloorMod;
using const_int::MulOverflows;

// Merging stops after this many rewrites of one sum; every rewrite is an identity, so the
// cap only bounds the work, never correctness.
constexpr int kMaxMergeRounds = 16;

std::optional<int64_t> CheckedMul(int64_t a, int64_t b, DataType t) {
  int64_t r = 0;
  if (MulOverflows(a, b, &r) || !t.is_representable(r)) return std::nullopt;
  return r;
}

std::optional<int64_t> Negate(int64_t v, DataType t) {
  int64_t r = 0;
  if (const_int::SubOverflows(0, v, &r) || !t.is_representable(r)) return std::nullopt;
  return r;
}

// s is one split atom A = floordiv(floormod(T, u0), l0) plus a constant: folds the outer
// split into A's parameters where an identity allows, e.g.
// floormod(floordiv(x, 4), 8) -> floordiv(floormod(x, 32), 4) and
// floordiv(floordiv(x, 4) + 1, 2) -> floordiv(x + 4, 8).
std::optional<Sum> CollapseNested(AtomTable* table, const Sum& s, int64_t divisor,
                                  int64_t modulus) {
  if (s.terms.size() != 1) return std::nullopt;
  const auto& [monomial, coeff] = *s.terms.begin();
  if (coeff != 1 || monomial.size() != 1 || !(*table)[monomial[0]].split) return std::nullopt;
  const Split inner = *(*table)[monomial[0]].split;
  const DataType t = s.dtype;
  const int64_t l0 = inner.divisor;

  if (inner.modulus == kNoModulus) {
    // floordiv(T, l0) + k == floordiv(T + l0 * k, l0), and
    // floordiv(floormod(floordiv(X, l0), m), l) == floordiv(floormod(X, l0 * m), l0 * l).
    Sum shifted = inner.inner;
    std::optional<int64_t> new_divisor = CheckedMul(l0, divisor, t);
    std::optional<int64_t> new_modulus =
        modulus == kNoModulus ? std::optional<int64_t>(kNoModulus) : CheckedMul(l0, modulus, t);
    if (!new_divisor || !new_modulus ||
        !AddScaled(&shifted, ConstantSum(t, s.constant), l0)) {
      return std::nullopt;
    }
    return MakeSplit(table, shifted, *new_divisor, *new_modulus);
  }
  if (s.constant != 0) return std::nullopt;
  // A takes values in [0, range); its divisor and modulus times anything below stay within
  // its modulus, so the products below are representable.
  const int64_t range = inner.modulus / l0;
  if (modulus == kNoModulus || range <= modulus) {
    // The outer floormod is the identity; floordiv(floordiv(V, l0), l) == floordiv(V, l0 * l).
    std::optional<int64_t> new_divisor = CheckedMul(l0, divisor, t);
    if (!new_divisor || inner.modulus % *new_divisor != 0) return std::nullopt;
    return MakeSplit(table, inner.inner, *new_divisor, inner.modulus);
  }
  if (range % modulus == 0) {
    // floormod(floordiv(floormod(T, u0), l0), m) == floordiv(floormod(T, l0 * m), l0) when
    // l0 * m divides u0.
    return MakeSplit(table, inner.inner, l0 * divisor, l0 * modulus);
  }
  return std::nullopt;
}

// A term holding exactly one occurrence of split atom `atom`: coeff * rest * atom.
struct SplitTerm {
  Monomial rest;
  AtomId atom;
  int64_t coeff;
};

std::vector<SplitTerm> SplitTerms(const AtomTable& table, const Sum& s) {
  std::vector<SplitTerm> found;
  for (const auto& [monomial, coeff] : s.terms) {
    for (size_t i = 0; i < monomial.size(); ++i) {
      bool repeated = (i > 0 && monomial[i - 1] == monomial[i]) ||
                      (i + 1 < monomial.size() && monomial[i + 1] == monomial[i]);
      if (!table[monomial[i]].split || repeated) continue;
      Monomial rest = monomial;
      rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(i));
      found.push_back({std::move(rest), monomial[i], coeff});
    }
  }
  return found;
}

// s + scale * rest * value.
std::optional<Sum> AddProduct(const Sum& s, int64_t scale, const Monomial& rest,
                              const Sum& value) {
  Sum factor{s.dtype, {}, 0};
  if (rest.empty()) {
    factor.constant = scale;
  } else {
    factor.terms.emplace(rest, scale);
  }
  std::optional<Sum> product = Multiply(factor, value);
  if (!product) return std::nullopt;
  return Add(s, *product);
}

// c_a * A + c_b * B for two splits of one inner sum, as c_a * (one split), if an identity
// allows: A = floordiv(floormod(S, b), a) with B = floordiv(floormod(S, c), b) and
// c_b * a == c_a * b make floordiv(floormod(S, c), a); A = floordiv(floormod(S, c), a) with
// B = floordiv(floormod(S, c), b) and c_b * a == -c_a * b make floordiv(floormod(S, b), a).
std::optional<Sum> MergePair(AtomTable* table, const Split& a, int64_t ca, const Split& b,
                             int64_t cb) {
  int64_t lhs = 0, rhs = 0;
  if (MulOverflows(cb, a.divisor, &lhs) || MulOverflows(ca, b.divisor, &rhs)) return std::nullopt;
  if (a.modulus == b.divisor && lhs == rhs) {
    return MakeSplit(table, a.inner, a.divisor, b.modulus);
  }
  if (a.modulus == b.modulus && a.divisor < b.divisor && b.divisor % a.divisor == 0 &&
      Negate(rhs, a.inner.dtype) == lhs) {
    return MakeSplit(table, a.inner, a.divisor, b.divisor);
  }
  return std::nullopt;
}

// One identity rewrite of s that simplifies it, if any.
std::optional<Sum> MergeOnce(AtomTable* table, const Sum& s) {
  std::vector<SplitTerm> candidates = SplitTerms(*table, s);
  for (const SplitTerm& x : candidates) {
    for (const SplitTerm& y : candidates) {
      if (x.atom == y.atom || x.rest != y.rest) continue;
      const Split& a = *(*table)[x.atom].split;
      const Split& b = *(*table)[y.atom].split;
      if (!(a.inner == b.inner)) continue;
      std::optional<Sum> merged = MergePair(table, a, x.coeff, b, y.coeff);
      if (!merged) continue;
      std::optional<Sum> next = AddProduct(s, -x.coeff, x.rest, AtomSum(s.dtype, x.atom));
      if (next) next = AddProduct(*next, -y.coeff, y.rest, AtomSum(s.dtype, y.atom));
      if (next) next = AddProduct(*next, x.coeff, x.rest, *merged);
      if (next) return next;
    }
  }
  // With S expanded in the sum: S == floordiv(S, m) * m + floormod(S, m). Adding a multiple
  // of that zero which cancels the split term is kept when it leaves fewer terms
  // (x - floordiv(x, 4) * 4 -> floormod(x, 4); x - floormod(x, 4) -> floordiv(x, 4) * 4).
  for (const SplitTerm& x : candidates) {
    const Split& split = *(*table)[x.atom].split;
    int64_t m = 0, k = 0;
    if (split.modulus == kNoModulus && x.coeff % split.divisor == 0) {
      m = split.divisor;
      k = -(x.coeff / m);  // cancels x.coeff * floordiv(S, m) against k * m * floordiv(S, m)
    } else if (split.divisor == 1 && split.modulus != kNoModulus) {
      m = split.modulus;
      k = -x.coeff;
    } else {
      continue;
    }
    std::optional<Sum> quotient = MakeSplit(table, split.inner, m, kNoModulus);
    std::optional<Sum> remainder = MakeSplit(table, split.inner, 1, m);
    if (!quotient || !remainder) continue;
    // zero = floordiv(S, m) * m + floormod(S, m) - S
    std::optional<Sum> zero = Add(*remainder, *quotient, m);
    if (zero) zero = Add(*zero, split.inner, -1);
    if (!zero) continue;
    std::optional<Sum> next = AddProduct(s, k, x.rest, *zero);
    if (next && next->terms.size() < s.terms.size()) return next;
  }
  return std::nullopt;
}

}  // namespace

std::optional<Sum> MakeSplit(AtomTable* table, Sum s, int64_t divisor, int64_t modulus) {
  LOOM_ICHECK(divisor >= 1 && (modulus == kNoModulus || (modulus > 0 && modulus % divisor == 0)))
      << "split by " << divisor << " within " << modulus;
  const DataType t = s.dtype;
  Sum quotient = ConstantSum(t, 0);
  if (modulus != kNoModulus) {
    // floormod(Q * m + R, m) == floormod(R, m)
    std::erase_if(s.terms, [&](const auto& term) { return term.second % modulus == 0; });
    s.constant %= modulus;
  } else {
    // floordiv(Q * d + R, d) == Q + floordiv(R, d)
    for (auto it = s.terms.begin(); it != s.terms.end();) {
      if (it->second % divisor == 0) {
        quotient.terms.emplace(it->first, it->second / divisor);
        it = s.terms.erase(it);
      } else {
        ++it;
      }
    }
    quotient.constant = s.constant / divisor;
    s.constant %= divisor;
  }
  // The constant left inside is reduced toward zero, not into [0, d): it never grows, so
  // the inner sum cannot wrap where the original did not (floordiv(x - 1, 4) stays).

  // floordiv(floormod(g * S, g * m), g * d) == floordiv(floormod(S, m), d)
  int64_t g = Gcd(Gcd(CoefficientGcd(s), s.constant), Gcd(divisor, modulus));
  if (g > 1) {
    s = DivideExact(s, g);
    divisor /= g;
    if (modulus != kNoModulus) modulus /= g;
  }
  // floormod(g * S, g * m) == g * floormod(S, m)
  int64_t scale = 1;
  if (divisor == 1 && modulus != kNoModulus) {
    scale = Gcd(Gcd(CoefficientGcd(s), s.constant), modulus);
    s = DivideExact(s, scale);
    modulus /= scale;
  }
  auto finish = [&](const Sum& value) { return Add(quotient, value, scale); };

  if (modulus == divisor) return finish(ConstantSum(t, 0));  // floordiv(floormod(S, d), d)
  if (modulus == kNoModulus && divisor == 1) return finish(s);
  if (s.is_constant()) {
    int64_t v = modulus == kNoModulus ? s.constant : FloorMod(s.constant, modulus);
    return finish(ConstantSum(t, FloorDiv(v, divisor)));
  }
  ConstIntBound bound = SumBound(table, s);
  if (IsFinite(bound) && modulus != kNoModulus) {
    // Within one period the floormod is a shift: floormod(S, m) == S - q * m.
    int64_t q = FloorDiv(bound.min_value, modulus);
    if (q == FloorDiv(bound.max_value, modulus)) {
      std::optional<int64_t> shift = CheckedMul(q, modulus, t);
      Sum shifted = s;
      if (shift && AddScaled(&shifted, ConstantSum(t, *shift), -1)) {
        if (std::optional<Sum> value = MakeSplit(table, shifted, divisor, kNoModulus)) {
          return finish(*value);
        }
      }
    }
  }
  if (IsFinite(bound) && modulus == kNoModulus) {
    int64_t q = FloorDiv(bound.min_value, divisor);
    if (q == FloorDiv(bound.max_value, divisor)) return finish(ConstantSum(t, q));
  }
  if (modulus != kNoModulus) {
    ModularSet known = SumModular(table, s);
    if (known.coeff % modulus == 0) {  // every value of S is known modulo m
      return finish(ConstantSum(t, FloorDiv(FloorMod(known.base, modulus), divisor)));
    }
  }
  if (std::optional<Sum> collapsed = CollapseNested(table, s, divisor, modulus)) {
    return finish(*collapsed);
  }
  return finish(AtomSum(t, table->Intern(Split{std::move(s), divisor, modulus})));
}

std::optional<Sum> FloorDivide(AtomTable* table, const Sum& dividend, int64_t divisor) {
  LOOM_ICHECK(divisor != 0) << "floordiv by zero reached the canonical form";
  if (divisor > 0) return MakeSplit(table, dividend, divisor, kNoModulus);
  // floordiv(a, -c) == floordiv(-a, c)
  std::optional<int64_t> positive = Negate(divisor, dividend.dtype);
  std::optional<Sum> negated = Scale(dividend, -1);
  if (!positive || !negated) return std::nullopt;
  return MakeSplit(table, *negated, *positive, kNoModulus);
}

std::optional<Sum> FloorModulo(AtomTable* table, const Sum& dividend, int64_t divisor) {
  LOOM_ICHECK(divisor != 0) << "floormod by zero reached the canonical form";
  if (divisor > 0) return MakeSplit(table, dividend, 1, divisor);
  // floormod(a, -c) == -floormod(-a, c)
  std::optional<int64_t> positive = Negate(divisor, dividend.dtype);
  std::optional<Sum> negated = Scale(dividend, -1);
  if (!positive || !negated) return std::nullopt;
  std::optional<Sum> remainder = MakeSplit(table, *negated, 1, *positive);
  if (!remainder) return std::nullopt;
  return Scale(*remainder, -1);
}

std::optional<Sum> TruncDivide(AtomTable* table, const Sum& dividend, int64_t divisor) {
  LOOM_ICHECK(divisor != 0) << "truncdiv by zero reached the canonical form";
  if (divisor < 0) {
    // truncdiv(a, -c) == -truncdiv(a, c)
    std::optional<int64_t> positive = Negate(divisor, dividend.dtype);
    if (!positive) return std::nullopt;
    std::optional<Sum> quotient = TruncDivide(table, dividend, *positive);
    if (!quotient) return std::nullopt;
    return Scale(*quotient, -1);
  }
  if (CoefficientGcd(dividend) % divisor == 0 && dividend.constant % divisor == 0) {
    return DivideExact(dividend, divisor);
  }
  ConstIntBound bound = SumBound(table, dividend);
  if (bound.min_value >= 0) return MakeSplit(table, dividend, divisor, kNoModulus);
  if (bound.max_value <= 0) {
    // truncdiv(a, c) == -floordiv(-a, c) for a <= 0
    std::optional<Sum> negated = Scale(dividend, -1);
    if (!negated) return std::nullopt;
    std::optional<Sum> quotient = MakeSplit(table, *negated, divisor, kNoModulus);
    if (!quotient) return std::nullopt;
    return Scale(*quotient, -1);
  }
  return std::nullopt;
}

std::optional<Sum> TruncModulo(AtomTable* table, const Sum& dividend, int64_t divisor) {
  LOOM_ICHECK(divisor != 0) << "truncmod by zero reached the canonical form";
  // truncmod(a, -c) == truncmod(a, c)
  std::optional<int64_t> positive = divisor > 0 ? divisor : Negate(divisor, dividend.dtype);
  if (!positive) return std::nullopt;
  if (CoefficientGcd(dividend) % *positive == 0 && dividend.constant % *positive == 0) {
    return ConstantSum(dividend.dtype, 0);
  }
  ConstIntBound bound = SumBound(table, dividend);
  if (bound.min_value >= 0) return MakeSplit(table, dividend, 1, *positive);
  if (bound.max_value <= 0) {
    // truncmod(a, c) == -floormod(-a, c) for a <= 0
    std::optional<Sum> negated = Scale(dividend, -1);
    if (!negated) return std::nullopt;
    std::optional<Sum> remainder = MakeSplit(table, *negated, 1, *positive);
    if (!remainder) return std::nullopt;
    return Scale(*remainder, -1);
  }
  return std::nullopt;
}

void MergeSplits(AtomTable* table, Sum* sum) {
  for (int round = 0; round < kMaxMergeRounds; ++round) {
    std::optional<Sum> next = MergeOnce(table, *sum);
    if (!next) return;
    *sum = std::move(*next);
  }
}

}  // namespace loom::arith::canonical
