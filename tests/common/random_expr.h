// Random integer expressions for differential tests (the fuzzer, property tests): trees of
// +, -, *, truncated and floored div/mod (by constants, variables or sub-expressions), min,
// max, select and comparisons over a given set of variables. Deterministic for a given rng.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "loom/ir/int_eval.h"
#include "loom/ir/node.h"

namespace loom::testing {

// A variable with the range [lo, lo + extent) it is sampled from.
struct RangedVar {
  Var var;
  int64_t lo;
  int64_t extent;
};

class RandomExprGenerator {
 public:
  RandomExprGenerator(std::mt19937_64* rng, const std::vector<RangedVar>* vars)
      : rng_(*rng), vars_(*vars) {}

  // An int32 expression of depth at most `depth`.
  PrimExpr Integer(int depth);
  // A bool comparison (sometimes combined with &&, || or !) of integers of depth - 1.
  PrimExpr Condition(int depth);

 private:
  bool Chance(double p);
  int64_t Uniform(int64_t lo, int64_t hi);
  PrimExpr Constant();
  PrimExpr Leaf();
  PrimExpr Divisor(int depth);

  std::mt19937_64& rng_;
  const std::vector<RangedVar>& vars_;
};

// Variables named x, y, z, ... with random ranges: lo in [-20, 20], extent in [1, 40].
std::vector<RangedVar> RandomRangedVars(std::mt19937_64* rng, int count);

// Every corner of the variables' box (each at its low or high end), then `random_points`
// uniformly sampled points.
std::vector<VarValueMap> SamplePoints(std::mt19937_64* rng, const std::vector<RangedVar>& vars,
                                      int random_points);

}  // namespace loom::testing
