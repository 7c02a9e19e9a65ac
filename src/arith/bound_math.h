// Interval arithmetic on ConstIntBound, used by the constant-bound analysis.
//
// Encoding: min_value == kNegInf means "no lower bound" and max_value == kPosInf means "no
// upper bound"; every other endpoint is an exact integer (so a min_value of INT64_MAX is the
// finite bound "at least INT64_MAX", as for the constant INT64_MAX). The functions compute
// in 128 bits with explicit infinities, so nothing overflows: an infinite operand saturates
// (inf - 1 is inf), and a finite result beyond int64 becomes the matching infinity. A lower
// bound pushed above INT64_MAX can only come from an expression that overflows its type at
// every point, i.e. one that is never defined; clamping it to INT64_MAX is then harmless.
#pragma once

#include <cstdint>
#include <optional>

#include "loom/arith/const_int_bound.h"
#include "loom/runtime/data_type.h"

namespace loom::arith::bound_math {

// The values a scalar or vector integer type can hold (bool: [0, 1]).
ConstIntBound TypeRange(DataType t);

// [max of mins, min of maxes]; may be empty (min > max).
ConstIntBound Intersect(const ConstIntBound& a, const ConstIntBound& b);
ConstIntBound Union(const ConstIntBound& a, const ConstIntBound& b);
bool IsEmpty(const ConstIntBound& a);

ConstIntBound Add(const ConstIntBound& a, const ConstIntBound& b);
ConstIntBound Sub(const ConstIntBound& a, const ConstIntBound& b);
ConstIntBound Negate(const ConstIntBound& a);
ConstIntBound Mul(const ConstIntBound& a, const ConstIntBound& b);

// Quotient and remainder bounds over the points where the divisor is not zero; nullopt when
// the divisor is zero everywhere (the expression is never defined).
std::optional<ConstIntBound> TruncDiv(const ConstIntBound& a, const ConstIntBound& b);
std::optional<ConstIntBound> TruncMod(const ConstIntBound& a, const ConstIntBound& b);
std::optional<ConstIntBound> FloorDiv(const ConstIntBound& a, const ConstIntBound& b);
std::optional<ConstIntBound> FloorMod(const ConstIntBound& a, const ConstIntBound& b);

// The x with x * factor inside `product` (factor != 0): solving a narrowed product back
// onto its variable factor.
ConstIntBound DivideExactly(const ConstIntBound& product, int64_t factor);

// True when every value of `from` is also a value of `to` (casting cannot change a value).
bool CastPreservesValues(DataType from, DataType to);

}  // namespace loom::arith::bound_math
