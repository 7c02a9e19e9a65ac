// Rules rooted at comparisons. GT and GE become LT and LE with swapped operands; constants
// gather on one side; common terms and positive factors cancel; bounds decide.
#include "arith/rewrite_rules_dsl.h"

namespace loom::arith::rule_dsl {

namespace {

void OrderRules(RuleList& rule) {
  const auto& [x, y, z, w, v, c1, c2, c3, p, q] = Vars();
  rule("GT/to_lt", x > y, y < x);
  rule("GE/to_le", x >= y, y <= x);

  rule("LT/self", x < x, kFalse);
  rule("LT/true_by_bounds", x < y, kTrue, x < y);
  rule("LT/false_by_bounds", x < y, kFalse, y <= x);
  rule("LT/add_const_lhs", x + c1 < c2, x < c2 - c1);
  rule("LT/sub_const_lhs", x - c1 < c2, x < c2 + c1);
  rule("LT/add_const_rhs", c1 < x + c2, c1 - c2 < x);
  rule("LT/sub_const_rhs", c1 < x - c2, c1 + c2 < x);
  rule("LT/const_minus_lhs", c1 - x < c2, c1 - c2 < x);
  rule("LT/const_minus_rhs", c1 < c2 - x, x < c2 - c1);
  rule("LT/difference_negative", x - y < 0, x < y);
  rule("LT/difference_positive", 0 < x - y, y < x);
  rule("LT/consts_both_sides", x + c1 < y + c2, x + (c1 - c2) < y);
  rule("LT/common_add_left", x + y < x + z, y < z);
  rule("LT/common_add_right", y + x < z + x, y < z);
  rule("LT/common_add_cross", x + y < z + x, y < z);
  rule("LT/common_add_cross_swapped", y + x < x + z, y < z);
  rule("LT/common_minuend", x - y < x - z, z < y);
  rule("LT/common_subtrahend", y - x < z - x, y < z);
  rule("LT/common_positive_factor", x * c1 < y * c1, x < y, 0 < c1);
  rule("LT/common_negative_factor", x * c1 < y * c1, y < x, c1 < 0);
  rule("LT/mul_lt_const", x * c1 < c2, x < floordiv(c2 - 1, c1) + 1, 0 < c1);
  rule("LT/mul_lt_const_negative", x * c1 < c2, floordiv(c2, c1) < x, c1 < 0);
  rule("LT/const_lt_mul", c2 < x * c1, floordiv(c2, c1) < x, 0 < c1);
  rule("LT/const_lt_mul_negative", c2 < x * c1, x < floordiv(c2 + 1, c1) + 1, c1 < 0);
  rule("LT/floordiv_lt_const", floordiv(x, c1) < c2, x < c2 * c1, 0 < c1);
  rule("LT/const_lt_floordiv", c2 < floordiv(x, c1), (c2 + 1) * c1 - 1 < x, 0 < c1);

  rule("LE/self", x <= x, kTrue);
  rule("LE/true_by_bounds", x <= y, kTrue, x <= y);
  rule("LE/false_by_bounds", x <= y, kFalse, y < x);
  rule("LE/add_const_lhs", x + c1 <= c2, x <= c2 - c1);
  rule("LE/sub_const_lhs", x - c1 <= c2, x <= c2 + c1);
  rule("LE/add_const_rhs", c1 <= x + c2, c1 - c2 <= x);
  rule("LE/sub_const_rhs", c1 <= x - c2, c1 + c2 <= x);
  rule("LE/const_minus_lhs", c1 - x <= c2, c1 - c2 <= x);
  rule("LE/const_minus_rhs", c1 <= c2 - x, x <= c2 - c1);
  rule("LE/difference_nonpositive", x - y <= 0, x <= y);
  rule("LE/difference_nonnegative", 0 <= x - y, y <= x);
  rule("LE/consts_both_sides", x + c1 <= y + c2, x + (c1 - c2) <= y);
  rule("LE/common_add_left", x + y <= x + z, y <= z);
  rule("LE/common_add_right", y + x <= z + x, y <= z);
  rule("LE/common_add_cross", x + y <= z + x, y <= z);
  rule("LE/common_add_cross_swapped", y + x <= x + z, y <= z);
  rule("LE/common_minuend", x - y <= x - z, z <= y);
  rule("LE/common_subtrahend", y - x <= z - x, y <= z);
  rule("LE/common_positive_factor", x * c1 <= y * c1, x <= y, 0 < c1);
  rule("LE/common_negative_factor", x * c1 <= y * c1, y <= x, c1 < 0);
  rule("LE/mul_le_const", x * c1 <= c2, x <= floordiv(c2, c1), 0 < c1);
  rule("LE/mul_le_const_negative", x * c1 <= c2, floordiv(c2 + 1, c1) < x, c1 < 0);
  rule("LE/const_le_mul", c2 <= x * c1, floordiv(c2 - 1, c1) < x, 0 < c1);
  rule("LE/const_le_mul_negative", c2 <= x * c1, x <= floordiv(c2, c1), c1 < 0);
  rule("LE/floordiv_le_const", floordiv(x, c1) <= c2, x < (c2 + 1) * c1, 0 < c1);
  rule("LE/const_le_floordiv", c2 <= floordiv(x, c1), c2 * c1 <= x, 0 < c1);
}

void EqualityRules(RuleList& rule) {
  const auto& [x, y, z, w, v, c1, c2, c3, p, q] = Vars();
  rule("EQ/self", x == x, kTrue);
  rule("EQ/const_to_right", c1 == x, x == c1);
  rule("EQ/false_by_bounds", x == y, kFalse, x != y);
  rule("EQ/add_const", x + c1 == c2, x == c2 - c1);
  rule("EQ/sub_const", x - c1 == c2, x == c2 + c1);
  rule("EQ/const_minus", c1 - x == c2, x == c1 - c2);
  rule("EQ/difference_zero", x - y == 0, x == y);
  rule("EQ/common_add_left", x + y == x + z, y == z);
  rule("EQ/common_add_right", y + x == z + x, y == z);
  rule("EQ/common_nonzero_factor", x * c1 == y * c1, x == y, c1 != 0);
  rule("EQ/mul_const_divisible", x * c1 == c2, x == floordiv(c2, c1),
       c1 != 0 && floormod(c2, c1) == 0);
  rule("EQ/mul_const_indivisible", x * c1 == c2, kFalse, c1 != 0 && floormod(c2, c1) != 0);
  rule("EQ/bool_true", p == kTrue, p);
  rule("EQ/bool_false", p == kFalse, !p);

  rule("NE/self", x != x, kFalse);
  rule("NE/const_to_right", c1 != x, x != c1);
  rule("NE/true_by_bounds", x != y, kTrue, x != y);
  rule("NE/add_const", x + c1 != c2, x != c2 - c1);
  rule("NE/sub_const", x - c1 != c2, x != c2 + c1);
  rule("NE/const_minus", c1 - x != c2, x != c1 - c2);
  rule("NE/difference_zero", x - y != 0, x != y);
  rule("NE/common_add_left", x + y != x + z, y != z);
  rule("NE/common_add_right", y + x != z + x, y != z);
  rule("NE/common_nonzero_factor", x * c1 != y * c1, x != y, c1 != 0);
  rule("NE/mul_const_divisible", x * c1 != c2, x != floordiv(c2, c1),
       c1 != 0 && floormod(c2, c1) == 0);
  rule("NE/mul_const_indivisible", x * c1 != c2, kTrue, c1 != 0 && floormod(c2, c1) != 0);
  rule("NE/bool_true", p != kTrue, !p);
  rule("NE/bool_false", p != kFalse, p);
}

}  // namespace

void AddCompareRules(RuleList& rule) {
  OrderRules(rule);
  EqualityRules(rule);
}

}  // namespace loom::arith::rule_dsl
