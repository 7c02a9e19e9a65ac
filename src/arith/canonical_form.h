// The normal form of the canonical simplifier (see include/loom/arith/canonical_simplify.h):
// a Sum is a constant plus coefficient * monomial terms, a monomial is a product of atoms,
// and an atom is either an expression the form does not look into (a variable, a load, a
// min/max/select, a call, a truncated division of unknown sign, ...) or a Split: a
// floordiv/floormod of an inner Sum by positive constants.
//
// Everything here is exact: coefficients and constants stay representable in the sum's
// dtype (operations that would leave it report failure instead), and every rewrite is an
// identity over the integers.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

#include "loom/arith/const_int_bound.h"
#include "loom/arith/modular_set.h"
#include "loom/ir/node.h"
#include "loom/ir/structural.h"

namespace loom::arith {
class Analyzer;
}

namespace loom::arith::canonical {

// Atoms are interned for the duration of one simplification: equal atoms share an id, and
// ids grow in order of first appearance, which is the order in which equal-weight terms
// print (so `x + y` stays `x + y` and equal inputs print equal outputs).
using AtomId = int32_t;
// A product of atoms, ids ascending (an atom repeats for its powers); empty is the constant 1.
using Monomial = std::vector<AtomId>;

struct Sum {
  DataType dtype;
  std::map<Monomial, int64_t> terms;  // no zero coefficient, no empty monomial
  int64_t constant = 0;

  bool is_constant() const { return terms.empty(); }
  bool operator==(const Sum& other) const {
    return dtype == other.dtype && terms == other.terms && constant == other.constant;
  }
};

inline constexpr int64_t kNoModulus = 0;

// floordiv(floormod(inner, modulus), divisor), or floordiv(inner, divisor) when modulus is
// kNoModulus. Invariants (kept by MakeSplit): divisor >= 1, modulus a multiple of divisor
// greater than it, and the inner sum reduced so that equal splits have equal inners.
struct Split {
  Sum inner;
  int64_t divisor = 1;
  int64_t modulus = kNoModulus;
};

struct Atom {
  PrimExpr opaque;             // defined for an opaque atom ...
  std::optional<Split> split;  // ... otherwise this is set
};

class AtomTable {
 public:
  explicit AtomTable(Analyzer* parent) : parent_(parent) {}

  // A constant expression gives no atom: use SumOf() for arbitrary expressions.
  AtomId Intern(const PrimExpr& opaque);
  AtomId Intern(const Split& split);
  const Atom& operator[](AtomId id) const { return atoms_[static_cast<size_t>(id)]; }

  // Bounds and modular sets of atoms over the parent Analyzer's facts, cached per call.
  ConstIntBound Bound(AtomId id);
  ModularSet Modular(AtomId id);

  // The expression form of an atom (split atoms print as floordiv/floormod), cached.
  PrimExpr AtomExpr(AtomId id);

  Analyzer* parent() const { return parent_; }

 private:
  using SplitKey = std::tuple<int, int, std::map<Monomial, int64_t>, int64_t, int64_t, int64_t>;
  static SplitKey KeyOf(const Split& split);

  Analyzer* parent_;
  std::deque<Atom> atoms_;  // a deque: references to atoms survive interning more of them
  std::unordered_map<PrimExpr, AtomId, StructuralHashFn, StructuralEqualFn> opaque_ids_;
  std::map<SplitKey, AtomId> split_ids_;
  std::unordered_map<AtomId, ConstIntBound> bounds_;
  std::unordered_map<AtomId, ModularSet> modulars_;
  std::unordered_map<AtomId, PrimExpr> exprs_;
};

// ---- building sums

Sum ConstantSum(DataType dtype, int64_t value);
Sum AtomSum(DataType dtype, AtomId id, int64_t coeff = 1);
// The sum of one expression taken as a whole: a constant, or a single opaque atom.
Sum SumOf(AtomTable* table, const PrimExpr& expr);

// ---- exact arithmetic; failure means a coefficient or constant would leave the dtype

// *acc += scale * x; on failure *acc is left unchanged.
bool AddScaled(Sum* acc, const Sum& x, int64_t scale);
std::optional<Sum> Add(const Sum& a, const Sum& b, int64_t b_scale = 1);
std::optional<Sum> Scale(const Sum& x, int64_t scale);
// Fully expanded product; also fails when it would have more than kMaxProductTerms terms.
inline constexpr size_t kMaxProductTerms = 64;
std::optional<Sum> Multiply(const Sum& a, const Sum& b);

// gcd of the absolute values of all coefficients (0 for a constant sum).
int64_t CoefficientGcd(const Sum& s);
// s with every coefficient and the constant divided by `divisor`, which must divide them.
Sum DivideExact(const Sum& s, int64_t divisor);
// Greatest common divisor of |a| and |b|; 0 when both are 0, 1 if it does not fit int64.
int64_t Gcd(int64_t a, int64_t b);

// ---- what the analyzer knows about a sum

ConstIntBound SumBound(AtomTable* table, const Sum& s);
ModularSet SumModular(AtomTable* table, const Sum& s);
// Saturating interval arithmetic (kNegInf/kPosInf are the infinities).
ConstIntBound BoundAdd(const ConstIntBound& a, const ConstIntBound& b);
ConstIntBound BoundMul(const ConstIntBound& a, const ConstIntBound& b);
ConstIntBound BoundFloorDiv(const ConstIntBound& a, int64_t positive_divisor);
bool IsFinite(const ConstIntBound& b);

// ---- printing: terms with positive coefficients first, heavier coefficients first, then
// in order of first appearance; `i * 64 + j * 4 + 3`, `x - y * 2`, `3 - x`.
PrimExpr SumToExpr(AtomTable* table, const Sum& s);

}  // namespace loom::arith::canonical
