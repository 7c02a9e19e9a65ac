// Modular sets: every value of an integer expression has the form coeff * k + base for some
// integer k (coeff >= 0, 0 <= base < coeff when coeff > 0; coeff == 0 means the constant
// base). Used to prove alignment (is this index a multiple of 16?) and to vectorize.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>

#include "loom/ir/node.h"

namespace loom::arith {

class Analyzer;

struct ModularSet {
  int64_t coeff = 1;  // coeff 1, base 0: any integer
  int64_t base = 0;
  static ModularSet Everything() { return {1, 0}; }
  bool operator==(const ModularSet& o) const { return coeff == o.coeff && base == o.base; }
};

// Prints "coeff*k+base" (just the base when coeff is 0).
std::ostream& operator<<(std::ostream& os, const ModularSet& set);

class ModularSetAnalyzer {
 public:
  // Truncated division and remainder need the dividend's sign, taken from
  // parent->const_int_bound.
  explicit ModularSetAnalyzer(Analyzer* parent);
  ~ModularSetAnalyzer();

  ModularSet operator()(const PrimExpr& expr);
  // Records what var is known to be; re-recording a different fact needs allow_override.
  void Update(const Var& var, const ModularSet& info, bool allow_override = false);
  // Learns from equalities in `constraint` (and conjunctions of them) until the returned
  // function is called: floormod(x, 4) == 1 or truncmod(x, 4) == 1 gives x = 4k + 1,
  // x == y * 4 + 2 gives x = 4k + 2, solving through + and - (floormod(x + 1, 4) == 0 gives
  // x = 4k + 3). Facts combine with what is known (x = 4k + 1 and x = 3k + 2: x = 12k + 5).
  std::function<void()> EnterConstraint(const PrimExpr& constraint);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace loom::arith
