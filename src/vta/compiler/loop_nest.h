// The loop nests the VTA passes rewrite (a dma_copy copy, an alu stage): serial loops from 0
// with constant extents around one statement, whose indices are linear in those loops. Private
// to src/vta/compiler.
#pragma once

#include <string>
#include <vector>

#include "loom/arith/analyzer.h"
#include "loom/ir/node.h"

namespace loom::vta::detail {

struct Loop {
  Var var;
  int64_t extent = 0;
};

// An index as base + sum of coefficient * loop variable (coefficients constant).
struct LinearIndex {
  PrimExpr base;
  std::vector<int64_t> coefficients;  // one per loop, outermost first
};

class LoopNest {
 public:
  // Peels the loops of `nest`. `what` prefixes every error ("VTA dma_copy"), which also quotes
  // the nest: a loop not from 0 or of a non-constant extent is one.
  LoopNest(std::string what, Stmt nest);

  const std::vector<Loop>& loops() const { return loops_; }
  // The statement inside the loops.
  const Stmt& innermost() const { return innermost_; }
  // A user error: "<what>: <why>; in" and the nest.
  [[noreturn]] void Fail(const std::string& why) const;
  // `index` as base + coefficients; an error when it is not linear in the loops.
  LinearIndex Linear(const PrimExpr& index, arith::Analyzer* analyzer) const;

  // When the innermost statement is a sequence of stores to one buffer that never touch the
  // same element (the copies InjectVirtualThread gives each co-processor thread: one
  // statement, its indices offset by a thread's share), the same loops around each store, in
  // order; one nest otherwise. The stores then run one nest after another instead of
  // alternating, which changes nothing since they are independent.
  std::vector<Stmt> Split(arith::Analyzer* analyzer) const;

 private:
  std::string what_;
  Stmt nest_;
  std::vector<Loop> loops_;
  Stmt innermost_;
};

}  // namespace loom::vta::detail
