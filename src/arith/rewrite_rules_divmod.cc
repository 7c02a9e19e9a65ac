// Rules rooted at FloorDiv, FloorMod, Div and Mod (truncated). Multiples of the divisor
// leave the division, nested divisions by constants merge, ranges decide small quotients,
// and truncated forms become floored ones where the signs make the two agree.
#include "arith/rewrite_rules_dsl.h"

namespace loom::arith::rule_dsl {

namespace {

// Conditions that divide by c2 also say c2 != 0: the simplifier never proves a condition
// that divides by zero, but the proofs of the rules (tests/prove) need it spelled out.
void FloorDivRules(RuleList& rule) {
  const auto& [x, y, z, w, v, c1, c2, c3, p, q] = Vars();
  rule("FloorDiv/by_one", floordiv(x, 1), x);
  rule("FloorDiv/by_minus_one", floordiv(x, -1), 0 - x);
  rule("FloorDiv/zero_numerator", floordiv(0, x), 0);
  rule("FloorDiv/self", floordiv(x, x), 1);
  rule("FloorDiv/mul_cancel_right", floordiv(x * y, y), x);
  rule("FloorDiv/mul_cancel_left", floordiv(y * x, y), x);
  rule("FloorDiv/add_divisor", floordiv(x + y, y), floordiv(x, y) + 1);
  rule("FloorDiv/divisor_add", floordiv(y + x, y), floordiv(x, y) + 1);
  rule("FloorDiv/nested", floordiv(floordiv(x, c1), c2), floordiv(x, c1 * c2),
       0 < c1 && 0 < c2);
  rule("FloorDiv/exact_mul", floordiv(x * c1, c2), x * floordiv(c1, c2),
       c2 != 0 && floormod(c1, c2) == 0);
  rule("FloorDiv/mul_shrinks_divisor", floordiv(x * c1, c2), floordiv(x, floordiv(c2, c1)),
       c1 != 0 && c2 != 0 && floormod(c2, c1) == 0);
  rule("FloorDiv/split_mul_add", floordiv(x * c1 + y, c2), x * floordiv(c1, c2) + floordiv(y, c2),
       c2 != 0 && floormod(c1, c2) == 0);
  rule("FloorDiv/split_add_mul", floordiv(y + x * c1, c2), floordiv(y, c2) + x * floordiv(c1, c2),
       c2 != 0 && floormod(c1, c2) == 0);
  rule("FloorDiv/split_sub_mul", floordiv(y - x * c1, c2), floordiv(y, c2) - x * floordiv(c1, c2),
       c2 != 0 && floormod(c1, c2) == 0);
  rule("FloorDiv/split_add_const", floordiv(x + c1, c2), floordiv(x, c2) + floordiv(c1, c2),
       c2 != 0 && floormod(c1, c2) == 0);
  rule("FloorDiv/split_sub_const", floordiv(x - c1, c2), floordiv(x, c2) - floordiv(c1, c2),
       c2 != 0 && floormod(c1, c2) == 0);
  rule("FloorDiv/of_floormod_small", floordiv(floormod(x, c1), c2), 0, 0 < c1 && c1 <= c2);
  rule("FloorDiv/small_nonnegative", floordiv(x, c1), 0, 0 <= x && x < c1);
  rule("FloorDiv/small_negative", floordiv(x, c1), -1, 0 < c1 && x < 0 && 0 - c1 <= x);
  rule("FloorDiv/small_nonpositive_by_negative", floordiv(x, c1), 0, c1 < x && x <= 0);
}

void FloorModRules(RuleList& rule) {
  const auto& [x, y, z, w, v, c1, c2, c3, p, q] = Vars();
  rule("FloorMod/by_one", floormod(x, 1), 0);
  rule("FloorMod/by_minus_one", floormod(x, -1), 0);
  rule("FloorMod/zero_numerator", floormod(0, x), 0);
  rule("FloorMod/self", floormod(x, x), 0);
  rule("FloorMod/mul_cancel_right", floormod(x * y, y), 0);
  rule("FloorMod/mul_cancel_left", floormod(y * x, y), 0);
  rule("FloorMod/add_divisor", floormod(x + y, y), floormod(x, y));
  rule("FloorMod/divisor_add", floormod(y + x, y), floormod(x, y));
  rule("FloorMod/multiple", floormod(x * c1, c2), 0, c2 != 0 && floormod(c1, c2) == 0);
  rule("FloorMod/drop_mul_add", floormod(x * c1 + y, c2), floormod(y, c2),
       c2 != 0 && floormod(c1, c2) == 0);
  rule("FloorMod/drop_add_mul", floormod(y + x * c1, c2), floormod(y, c2),
       c2 != 0 && floormod(c1, c2) == 0);
  rule("FloorMod/drop_sub_mul", floormod(y - x * c1, c2), floormod(y, c2),
       c2 != 0 && floormod(c1, c2) == 0);
  rule("FloorMod/drop_add_const", floormod(x + c1, c2), floormod(x, c2),
       c2 != 0 && floormod(c1, c2) == 0);
  rule("FloorMod/drop_sub_const", floormod(x - c1, c2), floormod(x, c2),
       c2 != 0 && floormod(c1, c2) == 0);
  // The constant offset of a positive modulus is brought into [0, c2).
  rule("FloorMod/reduce_add_const", floormod(x + c1, c2), floormod(x + floormod(c1, c2), c2),
       0 < c2 && floormod(c1, c2) != c1);
  rule("FloorMod/reduce_sub_const", floormod(x - c1, c2), floormod(x + floormod(0 - c1, c2), c2),
       0 < c2 && floormod(c1, c2) != 0);
  rule("FloorMod/nested_divisor_multiple", floormod(floormod(x, c1), c2), floormod(x, c2),
       c2 != 0 && floormod(c1, c2) == 0);
  rule("FloorMod/nested_smaller", floormod(floormod(x, c1), c2), floormod(x, c1),
       0 < c1 && c1 <= c2);
  rule("FloorMod/small_nonnegative", floormod(x, c1), x, 0 <= x && x < c1);
  rule("FloorMod/small_negative", floormod(x, c1), x + c1, 0 < c1 && x < 0 && 0 - c1 <= x);
  rule("FloorMod/small_nonpositive_by_negative", floormod(x, c1), x, c1 < x && x <= 0);
}

void TruncDivRules(RuleList& rule) {
  const auto& [x, y, z, w, v, c1, c2, c3, p, q] = Vars();
  rule("Div/by_one", truncdiv(x, 1), x);
  rule("Div/by_minus_one", truncdiv(x, -1), 0 - x);
  rule("Div/zero_numerator", truncdiv(0, x), 0);
  rule("Div/self", truncdiv(x, x), 1);
  rule("Div/mul_cancel_right", truncdiv(x * y, y), x);
  rule("Div/mul_cancel_left", truncdiv(y * x, y), x);
  rule("Div/nested", truncdiv(truncdiv(x, c1), c2), truncdiv(x, c1 * c2), 0 < c1 && 0 < c2);
  rule("Div/exact_mul", truncdiv(x * c1, c2), x * truncdiv(c1, c2),
       c2 != 0 && floormod(c1, c2) == 0);
  rule("Div/split_mul_add_nonnegative", truncdiv(x * c1 + y, c2),
       x * truncdiv(c1, c2) + truncdiv(y, c2),
       c2 != 0 && floormod(c1, c2) == 0 && 0 <= y && 0 <= x * c1 + y);
  rule("Div/small", truncdiv(x, c1), 0, 0 < c1 && 0 - c1 < x && x < c1);
  rule("Div/small_by_negative", truncdiv(x, c1), 0, c1 < 0 && c1 < x && x < 0 - c1);
  rule("Div/to_floordiv_nonnegative", truncdiv(x, y), floordiv(x, y), 0 <= x && 0 < y);
  rule("Div/to_floordiv_nonpositive", truncdiv(x, y), floordiv(x, y), x <= 0 && y < 0);
}

void TruncModRules(RuleList& rule) {
  const auto& [x, y, z, w, v, c1, c2, c3, p, q] = Vars();
  rule("Mod/by_one", truncmod(x, 1), 0);
  rule("Mod/by_minus_one", truncmod(x, -1), 0);
  rule("Mod/zero_numerator", truncmod(0, x), 0);
  rule("Mod/self", truncmod(x, x), 0);
  rule("Mod/mul_cancel_right", truncmod(x * y, y), 0);
  rule("Mod/mul_cancel_left", truncmod(y * x, y), 0);
  rule("Mod/multiple", truncmod(x * c1, c2), 0, c2 != 0 && floormod(c1, c2) == 0);
  rule("Mod/drop_mul_add_nonnegative", truncmod(x * c1 + y, c2), truncmod(y, c2),
       c2 != 0 && floormod(c1, c2) == 0 && 0 <= y && 0 <= x * c1 + y);
  rule("Mod/negative_divisor", truncmod(x, c1), truncmod(x, 0 - c1), c1 < 0);
  rule("Mod/small", truncmod(x, c1), x, 0 < c1 && 0 - c1 < x && x < c1);
  rule("Mod/to_floormod_nonnegative", truncmod(x, y), floormod(x, y), 0 <= x && 0 < y);
  rule("Mod/to_floormod_nonpositive", truncmod(x, y), floormod(x, y), x <= 0 && y < 0);
}

}  // namespace

void AddDivModRules(RuleList& rule) {
  FloorDivRules(rule);
  FloorModRules(rule);
  TruncDivRules(rule);
  TruncModRules(rule);
}

}  // namespace loom::arith::rule_dsl
