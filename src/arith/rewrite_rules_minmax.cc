// Rules rooted at Min and Max: equal and absorbed terms, constants outward and folded,
// common terms factored out, and bounds deciding which side wins.
#include "arith/rewrite_rules_dsl.h"

namespace loom::arith::rule_dsl {

namespace {

void MinRules(RuleList& rule) {
  const auto& [x, y, z, w, v, c1, c2, c3, p, q] = Vars();
  rule("Min/self", min(x, x), x);
  rule("Min/const_to_right", min(c1, x), min(x, c1));
  rule("Min/fold_nested_const", min(min(x, c1), c2), min(x, min(c1, c2)));
  rule("Min/shifted_consts", min(x + c1, x + c2), x + min(c1, c2));
  rule("Min/shifted_left", min(x + c1, x), x + min(c1, 0));
  rule("Min/shifted_right", min(x, x + c1), x + min(c1, 0));
  rule("Min/shifted_down_left", min(x - c1, x), x - max(c1, 0));
  rule("Min/shifted_down_right", min(x, x - c1), x - max(c1, 0));
  rule("Min/shifted_up_down", min(x + c1, x - c2), x + min(c1, 0 - c2));
  rule("Min/shifted_down_up", min(x - c1, x + c2), x + min(0 - c1, c2));
  rule("Min/absorb_nested_left", min(min(x, y), x), min(x, y));
  rule("Min/absorb_nested_left_second", min(min(x, y), y), min(x, y));
  rule("Min/absorb_nested_right", min(x, min(x, y)), min(x, y));
  rule("Min/absorb_nested_right_second", min(y, min(x, y)), min(x, y));
  rule("Min/absorb_max_left", min(max(x, y), x), x);
  rule("Min/absorb_max_left_second", min(max(x, y), y), y);
  rule("Min/absorb_max_right", min(x, max(x, y)), x);
  rule("Min/absorb_max_right_second", min(y, max(x, y)), y);
  rule("Min/of_max_and_min", min(max(x, y), min(x, y)), min(x, y));
  rule("Min/of_min_and_max", min(min(x, y), max(x, y)), min(x, y));
  rule("Min/const_out_of_left", min(min(x, c1), y), min(min(x, y), c1));
  rule("Min/const_out_of_right", min(x, min(y, c1)), min(min(x, y), c1));
  rule("Min/common_add_left", min(x + y, x + z), x + min(y, z));
  rule("Min/common_add_right", min(y + x, z + x), min(y, z) + x);
  rule("Min/common_add_cross", min(x + y, z + x), x + min(y, z));
  rule("Min/common_add_cross_swapped", min(y + x, x + z), x + min(y, z));
  rule("Min/common_minuend", min(x - y, x - z), x - max(y, z));
  rule("Min/common_subtrahend", min(y - x, z - x), min(y, z) - x);
  rule("Min/common_positive_factor", min(x * c1, y * c1), min(x, y) * c1, 0 < c1);
  rule("Min/common_negative_factor", min(x * c1, y * c1), max(x, y) * c1, c1 < 0);
  rule("Min/factor_out_of_const", min(x * c1, c2), min(x, floordiv(c2, c1)) * c1,
       0 < c1 && floormod(c2, c1) == 0);
  rule("Min/factor_out_of_const_negative", min(x * c1, c2), max(x, floordiv(c2, c1)) * c1,
       c1 < 0 && floormod(c2, c1) == 0);
  rule("Min/common_positive_divisor", min(floordiv(x, c1), floordiv(y, c1)),
       floordiv(min(x, y), c1), 0 < c1);
  rule("Min/common_negative_divisor", min(floordiv(x, c1), floordiv(y, c1)),
       floordiv(max(x, y), c1), c1 < 0);
  rule("Min/of_max_const_decided", min(max(x, c1), c2), c2, c2 <= c1);
  rule("Min/left_by_bounds", min(x, y), x, x <= y);
  rule("Min/right_by_bounds", min(x, y), y, y <= x);
}

void MaxRules(RuleList& rule) {
  const auto& [x, y, z, w, v, c1, c2, c3, p, q] = Vars();
  rule("Max/self", max(x, x), x);
  rule("Max/const_to_right", max(c1, x), max(x, c1));
  rule("Max/fold_nested_const", max(max(x, c1), c2), max(x, max(c1, c2)));
  rule("Max/shifted_consts", max(x + c1, x + c2), x + max(c1, c2));
  rule("Max/shifted_left", max(x + c1, x), x + max(c1, 0));
  rule("Max/shifted_right", max(x, x + c1), x + max(c1, 0));
  rule("Max/shifted_down_left", max(x - c1, x), x - min(c1, 0));
  rule("Max/shifted_down_right", max(x, x - c1), x - min(c1, 0));
  rule("Max/shifted_up_down", max(x + c1, x - c2), x + max(c1, 0 - c2));
  rule("Max/shifted_down_up", max(x - c1, x + c2), x + max(0 - c1, c2));
  rule("Max/absorb_nested_left", max(max(x, y), x), max(x, y));
  rule("Max/absorb_nested_left_second", max(max(x, y), y), max(x, y));
  rule("Max/absorb_nested_right", max(x, max(x, y)), max(x, y));
  rule("Max/absorb_nested_right_second", max(y, max(x, y)), max(x, y));
  rule("Max/absorb_min_left", max(min(x, y), x), x);
  rule("Max/absorb_min_left_second", max(min(x, y), y), y);
  rule("Max/absorb_min_right", max(x, min(x, y)), x);
  rule("Max/absorb_min_right_second", max(y, min(x, y)), y);
  rule("Max/of_min_and_max", max(min(x, y), max(x, y)), max(x, y));
  rule("Max/of_max_and_min", max(max(x, y), min(x, y)), max(x, y));
  rule("Max/const_out_of_left", max(max(x, c1), y), max(max(x, y), c1));
  rule("Max/const_out_of_right", max(x, max(y, c1)), max(max(x, y), c1));
  rule("Max/common_add_left", max(x + y, x + z), x + max(y, z));
  rule("Max/common_add_right", max(y + x, z + x), max(y, z) + x);
  rule("Max/common_add_cross", max(x + y, z + x), x + max(y, z));
  rule("Max/common_add_cross_swapped", max(y + x, x + z), x + max(y, z));
  rule("Max/common_minuend", max(x - y, x - z), x - min(y, z));
  rule("Max/common_subtrahend", max(y - x, z - x), max(y, z) - x);
  rule("Max/common_positive_factor", max(x * c1, y * c1), max(x, y) * c1, 0 < c1);
  rule("Max/common_negative_factor", max(x * c1, y * c1), min(x, y) * c1, c1 < 0);
  rule("Max/factor_out_of_const", max(x * c1, c2), max(x, floordiv(c2, c1)) * c1,
       0 < c1 && floormod(c2, c1) == 0);
  rule("Max/factor_out_of_const_negative", max(x * c1, c2), min(x, floordiv(c2, c1)) * c1,
       c1 < 0 && floormod(c2, c1) == 0);
  rule("Max/common_positive_divisor", max(floordiv(x, c1), floordiv(y, c1)),
       floordiv(max(x, y), c1), 0 < c1);
  rule("Max/common_negative_divisor", max(floordiv(x, c1), floordiv(y, c1)),
       floordiv(min(x, y), c1), c1 < 0);
  rule("Max/of_min_const_decided", max(min(x, c1), c2), c2, c1 <= c2);
  rule("Max/left_by_bounds", max(x, y), x, y <= x);
  rule("Max/right_by_bounds", max(x, y), y, x <= y);
}

}  // namespace

void AddMinMaxRules(RuleList& rule) {
  MinRules(rule);
  MaxRules(rule);
}

}  // namespace loom::arith::rule_dsl
