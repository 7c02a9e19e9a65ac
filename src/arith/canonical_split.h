// Division by constants in the canonical form: floordiv/floormod become split atoms in a
// normal form (so that equal splits are the same atom), truncated division becomes floored
// division where the sign of the dividend is known, and split terms that together form a
// larger split (floordiv(x, 4) * 4 + floormod(x, 4) == x) are merged. Every function
// returns std::nullopt where the exact result is not representable in the sum's dtype.
#pragma once

#include <optional>

#include "arith/canonical_form.h"

namespace loom::arith::canonical {

// floordiv(floormod(inner, modulus), divisor) in normal form (modulus kNoModulus: none).
// Requires divisor >= 1 and modulus a positive multiple of divisor (or kNoModulus).
std::optional<Sum> MakeSplit(AtomTable* table, Sum inner, int64_t divisor, int64_t modulus);

// The four divisions by a non-zero constant. The truncated ones also give std::nullopt
// when the sign of the dividend is unknown and the division is not exact.
std::optional<Sum> FloorDivide(AtomTable* table, const Sum& dividend, int64_t divisor);
std::optional<Sum> FloorModulo(AtomTable* table, const Sum& dividend, int64_t divisor);
std::optional<Sum> TruncDivide(AtomTable* table, const Sum& dividend, int64_t divisor);
std::optional<Sum> TruncModulo(AtomTable* table, const Sum& dividend, int64_t divisor);

// Rewrites *sum with the identity floordiv(floormod(S, c), a) ==
// floordiv(floormod(S, c), b) * (b / a) + floordiv(floormod(S, b), a) (a | b | c) wherever
// that leaves fewer split terms or fewer terms.
void MergeSplits(AtomTable* table, Sum* sum);

}  // namespace loom::arith::canonical
