// The canonical form reassociates, expands products and moves constants; evaluated in
// its new order, arithmetic can wrap a fixed-width integer where the original expression
// did not (the original adds a huge product to a negative value first, the simplified one
// adds it to a positive one). This check decides whether a simplified expression must be
// given up for its original.
#pragma once

#include "loom/ir/node.h"

namespace loom::arith {
class Analyzer;
}

namespace loom::arith::canonical {

// True when `simplified` may wrap where `original` does not, judged by interval
// arithmetic over the analyzer's bounds:
//  * an addition, subtraction or multiplication of `simplified` whose operands have known
//    bounds (narrower than their type) may leave its type; or
//  * taking every unknown leaf to lie within +-2^(bits/2), some operation of `simplified`
//    may leave its type while no operation of `original` may.
// Unknown bounds otherwise count as "does not wrap": like the rest of the simplifier, this
// assumes index arithmetic does not overflow unless the bounds say it may.
bool MayWrapWhereOriginalDoesNot(Analyzer* analyzer, const PrimExpr& original,
                                 const PrimExpr& simplified);

}  // namespace loom::arith::canonical
