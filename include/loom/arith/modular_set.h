// Modular sets: every value of an integer expression has the form coeff * k + base for some
// integer k (coeff >= 0, 0 <= base < coeff when coeff > 0; coeff == 0 means the constant
// base). Used to prove alignment (is this index a multiple of 16?) and to vectorize.
#pragma once

#include <cstdint>
#include <functional>
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

class ModularSetAnalyzer {
 public:
  explicit ModularSetAnalyzer(Analyzer* parent);
  ~ModularSetAnalyzer();

  ModularSet operator()(const PrimExpr& expr);
  void Update(const Var& var, const ModularSet& info, bool allow_override = false);
  // Learns facts such as floormod(x, 4) == 1 within the scope.
  std::function<void()> EnterConstraint(const PrimExpr& constraint);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace loom::arith
