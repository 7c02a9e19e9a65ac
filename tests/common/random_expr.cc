#include "random_expr.h"

#include <algorithm>
#include <string>

namespace loom::testing {

PrimExpr RandomExprGenerator::Integer(int depth) {
  if (depth == 0 || Chance(0.2)) return Leaf();
  switch (Uniform(0, 10)) {
    case 0: return Add(Integer(depth - 1), Integer(depth - 1));
    case 1: return Sub(Integer(depth - 1), Integer(depth - 1));
    case 2: return Mul(Integer(depth - 1), Chance(0.6) ? Constant() : Integer(depth - 1));
    case 3: return Div(Integer(depth - 1), Divisor(depth));
    case 4: return Mod(Integer(depth - 1), Divisor(depth));
    case 5: return FloorDiv(Integer(depth - 1), Divisor(depth));
    case 6: return FloorMod(Integer(depth - 1), Divisor(depth));
    case 7: return Min(Integer(depth - 1), Integer(depth - 1));
    case 8: return Max(Integer(depth - 1), Integer(depth - 1));
    case 9: return Select(Condition(depth - 1), Integer(depth - 1), Integer(depth - 1));
    default: return Add(Integer(depth - 1), Constant());
  }
}

PrimExpr RandomExprGenerator::Condition(int depth) {
  PrimExpr a = Integer(std::max(depth - 1, 0)), b = Integer(std::max(depth - 1, 0));
  PrimExpr cmp;
  switch (Uniform(0, 5)) {
    case 0: cmp = EQ(a, b); break;
    case 1: cmp = NE(a, b); break;
    case 2: cmp = LT(a, b); break;
    case 3: cmp = LE(a, b); break;
    case 4: cmp = GT(a, b); break;
    default: cmp = GE(a, b); break;
  }
  if (depth > 1 && Chance(0.2)) return And(cmp, Condition(depth - 1));
  if (depth > 1 && Chance(0.2)) return Or(cmp, Condition(depth - 1));
  if (Chance(0.1)) return Not(cmp);
  return cmp;
}

bool RandomExprGenerator::Chance(double p) {
  return std::uniform_real_distribution<double>(0, 1)(rng_) < p;
}

int64_t RandomExprGenerator::Uniform(int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
}

PrimExpr RandomExprGenerator::Constant() { return IntImm(DataType::Int(32), Uniform(-16, 16)); }

PrimExpr RandomExprGenerator::Leaf() {
  if (Chance(0.7)) return vars_[Uniform(0, static_cast<int64_t>(vars_.size()) - 1)].var;
  return Constant();
}

// Mostly non-zero constants (both signs); sometimes a variable or an expression, which may be
// zero at some points (those points are then undefined and skipped by the caller).
PrimExpr RandomExprGenerator::Divisor(int depth) {
  if (Chance(0.7)) {
    int64_t c = Uniform(1, 9);
    return IntImm(DataType::Int(32), Chance(0.3) ? -c : c);
  }
  return Chance(0.5) ? Leaf() : Integer(std::max(depth - 2, 0));
}

std::vector<RangedVar> RandomRangedVars(std::mt19937_64* rng, int count) {
  std::vector<RangedVar> vars;
  for (int i = 0; i < count; ++i) {
    int64_t lo = std::uniform_int_distribution<int64_t>(-20, 20)(*rng);
    int64_t extent = std::uniform_int_distribution<int64_t>(1, 40)(*rng);
    vars.push_back({Var(std::string(1, static_cast<char>('x' + i % 3)) +
                        (i >= 3 ? std::to_string(i / 3) : std::string())),
                    lo, extent});
  }
  return vars;
}

std::vector<VarValueMap> SamplePoints(std::mt19937_64* rng, const std::vector<RangedVar>& vars,
                                      int random_points) {
  std::vector<VarValueMap> points;
  const size_t n = vars.size();
  for (size_t corner = 0; corner < (size_t{1} << n); ++corner) {
    VarValueMap p;
    for (size_t i = 0; i < n; ++i) {
      p[vars[i].var] = vars[i].lo + (((corner >> i) & 1) ? vars[i].extent - 1 : 0);
    }
    points.push_back(p);
  }
  for (int s = 0; s < random_points; ++s) {
    VarValueMap p;
    for (const RangedVar& v : vars) {
      p[v.var] = v.lo + std::uniform_int_distribution<int64_t>(0, v.extent - 1)(*rng);
    }
    points.push_back(p);
  }
  return points;
}

}  // namespace loom::testing
