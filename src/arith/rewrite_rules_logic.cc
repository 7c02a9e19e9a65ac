// Rules rooted at Not, And, Or and Select: constants absorb, negation moves inward onto
// comparisons, comparisons of one variable with constants merge or contradict, and selects
// with one outcome or a min/max shape collapse.
#include "arith/rewrite_rules_dsl.h"

namespace loom::arith::rule_dsl {

namespace {

void NotRules(RuleList& rule) {
  const auto& [x, y, z, w, v, c1, c2, c3, p, q] = Vars();
  rule("Not/double", !!p, p);
  rule("Not/lt", !(x < y), y <= x);
  rule("Not/le", !(x <= y), y < x);
  rule("Not/eq", !(x == y), x != y);
  rule("Not/ne", !(x != y), x == y);
  rule("Not/and", !(p && q), !p || !q);
  rule("Not/or", !(p || q), !p && !q);
}

void AndRules(RuleList& rule) {
  const auto& [x, y, z, w, v, c1, c2, c3, p, q] = Vars();
  rule("And/self", p && p, p);
  rule("And/true_right", p && kTrue, p);
  rule("And/true_left", kTrue && p, p);
  rule("And/false_right", p && kFalse, kFalse);
  rule("And/false_left", kFalse && p, kFalse);
  rule("And/contradiction", p && !p, kFalse);
  rule("And/contradiction_swapped", !p && p, kFalse);
  rule("And/absorb_or", p && (p || q), p);
  rule("And/absorb_or_swapped", (p || q) && p, p);
  rule("And/both_below", x < c1 && x < c2, x < min(c1, c2));
  rule("And/both_above", c1 < x && c2 < x, max(c1, c2) < x);
  rule("And/both_at_most", x <= c1 && x <= c2, x <= min(c1, c2));
  rule("And/both_at_least", c1 <= x && c2 <= x, max(c1, c2) <= x);
  rule("And/empty_range", x < c1 && c2 <= x, kFalse, c1 <= c2);
  rule("And/empty_range_swapped", c2 <= x && x < c1, kFalse, c1 <= c2);
  rule("And/empty_closed_range", x <= c1 && c2 <= x, kFalse, c1 < c2);
  rule("And/empty_closed_range_swapped", c2 <= x && x <= c1, kFalse, c1 < c2);
  rule("And/single_point", x <= c1 && c1 <= x, x == c1);
  rule("And/single_point_swapped", c1 <= x && x <= c1, x == c1);
  rule("And/lt_and_gt", x < y && y < x, kFalse);
  rule("And/le_and_gt", x <= y && y < x, kFalse);
  rule("And/lt_and_ge", x < y && y <= x, kFalse);
  rule("And/le_and_ge", x <= y && y <= x, x == y);
  rule("And/eq_and_ne", x == y && x != y, kFalse);
  rule("And/ne_and_eq", x != y && x == y, kFalse);
  rule("And/eq_two_consts", x == c1 && x == c2, kFalse, c1 != c2);
  rule("And/eq_and_ne_other", x == c1 && x != c2, x == c1, c1 != c2);
  rule("And/ne_other_and_eq", x != c2 && x == c1, x == c1, c1 != c2);
}

void OrRules(RuleList& rule) {
  const auto& [x, y, z, w, v, c1, c2, c3, p, q] = Vars();
  rule("Or/self", p || p, p);
  rule("Or/true_right", p || kTrue, kTrue);
  rule("Or/true_left", kTrue || p, kTrue);
  rule("Or/false_right", p || kFalse, p);
  rule("Or/false_left", kFalse || p, p);
  rule("Or/excluded_middle", p || !p, kTrue);
  rule("Or/excluded_middle_swapped", !p || p, kTrue);
  rule("Or/absorb_and", p || (p && q), p);
  rule("Or/absorb_and_swapped", (p && q) || p, p);
  rule("Or/either_below", x < c1 || x < c2, x < max(c1, c2));
  rule("Or/either_above", c1 < x || c2 < x, min(c1, c2) < x);
  rule("Or/either_at_most", x <= c1 || x <= c2, x <= max(c1, c2));
  rule("Or/either_at_least", c1 <= x || c2 <= x, min(c1, c2) <= x);
  rule("Or/covers_all", x < c1 || c2 <= x, kTrue, c2 <= c1);
  rule("Or/covers_all_swapped", c2 <= x || x < c1, kTrue, c2 <= c1);
  rule("Or/covers_all_closed", x <= c1 || c2 <= x, kTrue, c2 <= c1 + 1);
  rule("Or/covers_all_closed_swapped", c2 <= x || x <= c1, kTrue, c2 <= c1 + 1);
  rule("Or/lt_or_ge", x < y || y <= x, kTrue);
  rule("Or/le_or_gt", x <= y || y < x, kTrue);
  rule("Or/lt_or_gt", x < y || y < x, x != y);
  rule("Or/eq_or_ne", x == y || x != y, kTrue);
  rule("Or/ne_or_eq", x != y || x == y, kTrue);
  rule("Or/ne_two_consts", x != c1 || x != c2, kTrue, c1 != c2);
  rule("Or/eq_or_ne_other", x == c1 || x != c2, x != c2, c1 != c2);
  rule("Or/ne_other_or_eq", x != c2 || x == c1, x != c2, c1 != c2);
}

void SelectRules(RuleList& rule) {
  const auto& [x, y, z, w, v, c1, c2, c3, p, q] = Vars();
  rule("Select/same_branches", select(p, x, x), x);
  rule("Select/negated_condition", select(!p, x, y), select(p, y, x));
  rule("Select/nested_true_branch", select(p, select(p, x, y), z), select(p, x, z));
  rule("Select/nested_false_branch", select(p, x, select(p, y, z)), select(p, x, z));
  rule("Select/lt_to_min", select(x < y, x, y), min(x, y));
  rule("Select/lt_to_max", select(x < y, y, x), max(x, y));
  rule("Select/le_to_min", select(x <= y, x, y), min(x, y));
  rule("Select/le_to_max", select(x <= y, y, x), max(x, y));
}

}  // namespace

void AddLogicRules(RuleList& rule) {
  NotRules(rule);
  AndRules(rule);
  OrRules(rule);
  SelectRules(rule);
}

}  // namespace loom::arith::rule_dsl
