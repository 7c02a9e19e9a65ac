// Rules over Ramp and Broadcast: element-wise operations on broadcasts happen on the scalar,
// and ramps combine with ramps and broadcasts, so vectorized index arithmetic stays a ramp.
#include "arith/rewrite_rules_dsl.h"

namespace loom::arith::rule_dsl {

void AddVectorRules(RuleList& rule) {
  const auto& [x, y, z, w, v, c1, c2, c3, p, q] = Vars();
  rule("Ramp/zero_stride", ramp(x, 0), broadcast(x));
  rule("Add/broadcasts", broadcast(x) + broadcast(y), broadcast(x + y));
  rule("Add/ramps", ramp(x, y) + ramp(z, w), ramp(x + z, y + w));
  rule("Add/ramp_broadcast", ramp(x, y) + broadcast(z), ramp(x + z, y));
  rule("Add/broadcast_ramp", broadcast(z) + ramp(x, y), ramp(z + x, y));
  rule("Sub/broadcasts", broadcast(x) - broadcast(y), broadcast(x - y));
  rule("Sub/ramps", ramp(x, y) - ramp(z, w), ramp(x - z, y - w));
  rule("Sub/ramp_broadcast", ramp(x, y) - broadcast(z), ramp(x - z, y));
  rule("Sub/broadcast_ramp", broadcast(z) - ramp(x, y), ramp(z - x, 0 - y));
  rule("Mul/broadcasts", broadcast(x) * broadcast(y), broadcast(x * y));
  rule("Mul/ramp_broadcast", ramp(x, y) * broadcast(z), ramp(x * z, y * z));
  rule("Mul/broadcast_ramp", broadcast(z) * ramp(x, y), ramp(z * x, z * y));
  rule("FloorDiv/broadcasts", floordiv(broadcast(x), broadcast(y)), broadcast(floordiv(x, y)));
  rule("FloorMod/broadcasts", floormod(broadcast(x), broadcast(y)), broadcast(floormod(x, y)));
  rule("Div/broadcasts", truncdiv(broadcast(x), broadcast(y)), broadcast(truncdiv(x, y)));
  rule("Mod/broadcasts", truncmod(broadcast(x), broadcast(y)), broadcast(truncmod(x, y)));
  rule("Min/broadcasts", min(broadcast(x), broadcast(y)), broadcast(min(x, y)));
  rule("Max/broadcasts", max(broadcast(x), broadcast(y)), broadcast(max(x, y)));
  rule("EQ/broadcasts", broadcast(x) == broadcast(y), broadcast(x == y));
  rule("NE/broadcasts", broadcast(x) != broadcast(y), broadcast(x != y));
  rule("LT/broadcasts", broadcast(x) < broadcast(y), broadcast(x < y));
  rule("LE/broadcasts", broadcast(x) <= broadcast(y), broadcast(x <= y));
  rule("And/broadcasts", broadcast(p) && broadcast(q), broadcast(p && q));
  rule("Or/broadcasts", broadcast(p) || broadcast(q), broadcast(p || q));
  rule("Not/broadcast", !broadcast(p), broadcast(!p));
}

}  // namespace loom::arith::rule_dsl
