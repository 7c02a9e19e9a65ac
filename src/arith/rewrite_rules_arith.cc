// Rules rooted at Add, Sub and Mul: constants move right and outward and fold, equal terms
// cancel, coefficients of one term merge, and div/mod pairs recombine.
#include "arith/rewrite_rules_dsl.h"

namespace loom::arith::rule_dsl {

namespace {

void AddRules(RuleList& rule) {
  const auto& [x, y, z, w, v, c1, c2, c3, p, q] = Vars();
  rule("Add/zero_right", x + 0, x);
  rule("Add/const_to_right", c1 + x, x + c1);
  rule("Add/fold_const_assoc", (x + c1) + c2, x + (c1 + c2));
  rule("Add/fold_sub_const_up", (x - c1) + c2, x + (c2 - c1), c1 <= c2);
  rule("Add/fold_sub_const_down", (x - c1) + c2, x - (c1 - c2), c2 < c1);
  rule("Add/fold_const_minus", (c1 - x) + c2, (c1 + c2) - x);
  rule("Add/negative_const_to_sub", x + c1, x - (0 - c1), c1 < 0);
  rule("Add/const_out_of_left", (x + c1) + y, (x + y) + c1);
  rule("Add/const_out_of_right", x + (y + c1), (x + y) + c1);
  rule("Add/sub_const_out_of_left", (x - c1) + y, (x + y) - c1);
  rule("Add/sub_const_out_of_right", x + (y - c1), (x + y) - c1);
  rule("Add/cancel_sub_left", (x - y) + y, x);
  rule("Add/cancel_sub_right", y + (x - y), x);
  rule("Add/negated_left", (0 - x) + y, y - x);
  rule("Add/negated_right", x + (0 - y), x - y);
  rule("Add/self_twice", x + x, x * 2);
  rule("Add/merge_coeffs", x * c1 + x * c2, x * (c1 + c2));
  rule("Add/merge_coeff_and_self", x * c1 + x, x * (c1 + 1));
  rule("Add/merge_self_and_coeff", x + x * c1, x * (c1 + 1));
  rule("Add/merge_coeffs_nested", (y + x * c1) + x * c2, y + x * (c1 + c2));
  rule("Add/floordiv_floormod_recombine", floordiv(x, c1) * c1 + floormod(x, c1), x, c1 != 0);
  rule("Add/floormod_floordiv_recombine", floormod(x, c1) + floordiv(x, c1) * c1, x, c1 != 0);
  rule("Add/truncdiv_truncmod_recombine", truncdiv(x, c1) * c1 + truncmod(x, c1), x, c1 != 0);
  rule("Add/truncmod_truncdiv_recombine", truncmod(x, c1) + truncdiv(x, c1) * c1, x, c1 != 0);
  rule("Add/floordiv_floormod_recombine_nested",
       (y + floordiv(x, c1) * c1) + floormod(x, c1), y + x, c1 != 0);
  rule("Add/min_plus_max", min(x, y) + max(x, y), x + y);
  rule("Add/max_plus_min", max(x, y) + min(x, y), x + y);
  rule("Add/min_plus_max_swapped", min(x, y) + max(y, x), x + y);
  rule("Add/max_plus_min_swapped", max(x, y) + min(y, x), x + y);
  rule("Add/select_merge", select(p, x, y) + select(p, z, w), select(p, x + z, y + w));
  rule("Add/negative_coeff_to_sub", x + y * c1, x - y * (0 - c1), c1 < 0);
}

void SubRules(RuleList& rule) {
  const auto& [x, y, z, w, v, c1, c2, c3, p, q] = Vars();
  rule("Sub/self", x - x, 0);
  rule("Sub/zero_right", x - 0, x);
  rule("Sub/negative_const_to_add", x - c1, x + (0 - c1), c1 < 0);
  rule("Sub/fold_add_const", (x + c1) - c2, x + (c1 - c2));
  rule("Sub/fold_sub_const", (x - c1) - c2, x - (c1 + c2));
  rule("Sub/const_minus_add_const", c1 - (x + c2), (c1 - c2) - x);
  rule("Sub/const_minus_sub_const", c1 - (x - c2), (c1 + c2) - x);
  rule("Sub/const_minus_const_minus", c1 - (c2 - x), x + (c1 - c2));
  rule("Sub/cancel_add_left", (x + y) - x, y);
  rule("Sub/cancel_add_right", (x + y) - y, x);
  rule("Sub/self_minus_add_left", x - (x + y), 0 - y);
  rule("Sub/self_minus_add_right", y - (x + y), 0 - x);
  rule("Sub/self_minus_sub", x - (x - y), y);
  rule("Sub/sub_minus_self", (x - y) - x, 0 - y);
  rule("Sub/minus_negated", x - (0 - y), x + y);
  rule("Sub/add_consts_both", (x + c1) - (y + c2), (x - y) + (c1 - c2));
  rule("Sub/minus_add_const", x - (y + c1), (x - y) - c1);
  rule("Sub/common_left_term", (x + y) - (x + z), y - z);
  rule("Sub/common_right_term", (x + y) - (z + y), x - z);
  rule("Sub/common_cross_term", (x + y) - (y + z), x - z);
  rule("Sub/common_cross_term_swapped", (x + y) - (z + x), y - z);
  rule("Sub/add_minus_sub", (x + y) - (x - z), y + z);
  rule("Sub/sub_minus_sub", (x - y) - (x - z), z - y);
  rule("Sub/merge_coeffs", x * c1 - x * c2, x * (c1 - c2));
  rule("Sub/coeff_minus_self", x * c1 - x, x * (c1 - 1));
  rule("Sub/self_minus_coeff", x - x * c1, x * (1 - c1));
  rule("Sub/self_minus_min", x - min(x, y), max(0, x - y));
  rule("Sub/self_minus_max", x - max(x, y), min(0, x - y));
  rule("Sub/min_minus_self", min(x, y) - x, min(0, y - x));
  rule("Sub/max_minus_self", max(x, y) - x, max(0, y - x));
  rule("Sub/sum_minus_min", (x + y) - min(x, y), max(x, y));
  rule("Sub/sum_minus_max", (x + y) - max(x, y), min(x, y));
  rule("Sub/floormod_from_floordiv", x - floordiv(x, c1) * c1, floormod(x, c1), c1 != 0);
  rule("Sub/truncmod_from_truncdiv", x - truncdiv(x, c1) * c1, truncmod(x, c1), c1 != 0);
  rule("Sub/select_merge", select(p, x, y) - select(p, z, w), select(p, x - z, y - w));
  rule("Sub/negative_coeff_to_add", x - y * c1, x + y * (0 - c1), c1 < 0);
}

void MulRules(RuleList& rule) {
  const auto& [x, y, z, w, v, c1, c2, c3, p, q] = Vars();
  rule("Mul/one_right", x * 1, x);
  rule("Mul/zero_right", x * 0, 0);
  rule("Mul/const_to_right", c1 * x, x * c1);
  rule("Mul/fold_const_assoc", (x * c1) * c2, x * (c1 * c2));
  rule("Mul/distribute_add_const", (x + c1) * c2, x * c2 + c1 * c2);
  rule("Mul/distribute_sub_const", (x - c1) * c2, x * c2 - c1 * c2);
  rule("Mul/const_out_of_left", (x * c1) * y, (x * y) * c1);
  rule("Mul/const_out_of_right", x * (y * c1), (x * y) * c1);
  rule("Mul/exact_floordiv", floordiv(x, c1) * c1, x, c1 != 0 && floormod(x, c1) == 0);
  rule("Mul/exact_truncdiv", truncdiv(x, c1) * c1, x, c1 != 0 && floormod(x, c1) == 0);
}

}  // namespace

void AddArithRules(RuleList& rule) {
  AddRules(rule);
  SubRules(rule);
  MulRules(rule);
}

}  // namespace loom::arith::rule_dsl
