#include "z3_translate.h"

#include "loom/ir/functor.h"
#include "loom/ir/printer.h"

namespace loom::prove {

namespace {

bool IsArithmeticKind(NodeKind kind) {
  switch (kind) {
    case NodeKind::Add:
    case NodeKind::Sub:
    case NodeKind::Mul:
    case NodeKind::Div:
    case NodeKind::Mod:
    case NodeKind::FloorDiv:
    case NodeKind::FloorMod:
    case NodeKind::Min:
    case NodeKind::Max:
      return true;
    default:
      return false;
  }
}

bool IsTranslatableCall(const CallNode& call) {
  return call.op->name == "if_then_else" || call.op->name == "likely";
}

class FragmentChecker : public ExprVisitor {
 public:
  void VisitExpr(const PrimExpr& e) override {
    if (problem_) return;
    DataType t = e.dtype();
    if (!t.is_scalar() || !t.is_integer_like()) {
      problem_ = std::string(NodeKindName(e.kind())) + " of type " + t.str();
      return;
    }
    if (IsArithmeticKind(e.kind()) && t.is_bool()) {
      problem_ = std::string(NodeKindName(e.kind())) + " on bool";
      return;
    }
    switch (e.kind()) {
      case NodeKind::IntImm:
      case NodeKind::Var:
      case NodeKind::Cast:
      case NodeKind::EQ:
      case NodeKind::NE:
      case NodeKind::LT:
      case NodeKind::LE:
      case NodeKind::GT:
      case NodeKind::GE:
      case NodeKind::And:
      case NodeKind::Or:
      case NodeKind::Not:
      case NodeKind::Select:
      case NodeKind::Let:
        break;
      case NodeKind::Call:
        if (!IsTranslatableCall(*e.as<CallNode>())) {
          problem_ = "call to " + e.as<CallNode>()->op->name;
          return;
        }
        break;
      default:
        if (!IsArithmeticKind(e.kind())) {
          problem_ = NodeKindName(e.kind());
          return;
        }
    }
    ExprVisitor::VisitExpr(e);
  }

  std::optional<std::string> problem_;
};

}  // namespace

std::optional<std::string> FindUntranslatable(const PrimExpr& e) {
  FragmentChecker checker;
  checker.VisitExpr(e);
  return checker.problem_;
}

void Z3Translator::BindConstant(const Var& var, int64_t value) {
  LOOM_ICHECK(!var_terms_.count(var.get())) << "variable " << var << " bound twice";
  var_terms_.emplace(var.get(), ctx_.int_val(value));
}

z3::expr Z3Translator::AsInt(const z3::expr& value) {
  if (!value.is_bool()) return value;
  return z3::ite(value, ctx_.int_val(1), ctx_.int_val(0));
}

z3::expr Z3Translator::AsBool(const z3::expr& value) {
  if (value.is_bool()) return value;
  return value != 0;
}

z3::expr Z3Translator::FreshInt(const std::string& hint) {
  return ctx_.int_const((hint + "!" + std::to_string(fresh_count_++)).c_str());
}

Term Z3Translator::TranslateVar(const VarNode* var) {
  auto it = var_terms_.find(var);
  if (it != var_terms_.end()) return {it->second, ctx_.bool_val(true)};
  LOOM_CHECK_USER(!frozen_) << "variable '" << var->name_hint
                            << "' is not bound by the rule's left-hand side";
  std::string name = var->name_hint + "!" + std::to_string(fresh_count_++);
  z3::expr term =
      var->dtype.is_bool() ? ctx_.bool_const(name.c_str()) : ctx_.int_const(name.c_str());
  if (var->is_size_var) definitions_.push_back(term >= 0);
  var_terms_.emplace(var, term);
  free_vars_.emplace_back(Var(var), term);
  return {term, ctx_.bool_val(true)};
}

Term Z3Translator::TranslateDivision(NodeKind kind, const Term& a, const Term& b) {
  z3::expr x = AsInt(a.value), y = AsInt(b.value);
  auto key = std::make_pair(x.id(), y.id());
  auto it = divisions_.find(key);
  if (it == divisions_.end()) {
    z3::expr q = FreshInt("floordiv"), r = FreshInt("floormod");
    // The floored remainder has the divisor's sign and |r| < |y|: that fixes q and r for
    // every y != 0.
    definitions_.push_back(z3::implies(y != 0, x == y * q + r &&
                                                   z3::implies(y > 0, 0 <= r && r < y) &&
                                                   z3::implies(y < 0, y < r && r <= 0)));
    // Truncation differs from flooring only when the exact quotient is negative and not an
    // integer; it then rounds one step up. Deriving it from the same q and r (rather than
    // from a second pair) keeps rules relating the two roundings linear.
    z3::expr rounds_up = r != 0 && ((x < 0) != (y < 0));
    // The operand terms are kept alive with the entry: Z3 may reuse the ids of dead terms.
    it = divisions_
             .emplace(key, Division{x, y, q, r, z3::ite(rounds_up, q + 1, q),
                                    z3::ite(rounds_up, r - y, r)})
             .first;
  }
  const Division& d = it->second;
  z3::expr value = kind == NodeKind::FloorDiv   ? d.floor_quotient
                   : kind == NodeKind::FloorMod ? d.floor_remainder
                   : kind == NodeKind::Div      ? d.trunc_quotient
                                                : d.trunc_remainder;
  return {value, a.defined && b.defined && y != 0};
}

Term Z3Translator::TranslateChoice(const Term& condition, const Term& true_value,
                                   const Term& false_value) {
  z3::expr c = AsBool(condition.value);
  z3::expr t = true_value.value, f = false_value.value;
  if (t.is_bool() != f.is_bool()) {
    t = AsInt(t);
    f = AsInt(f);
  }
  return {z3::ite(c, t, f),
          condition.defined && z3::ite(c, true_value.defined, false_value.defined)};
}

Term Z3Translator::TranslateBinary(const PrimExpr& e) {
  PrimExpr lhs, rhs;
  DispatchNode(*e.get(), [&](const auto& node) {
    if constexpr (requires {
                    node.a;
                    node.b;
                  }) {
      lhs = node.a;
      rhs = node.b;
    }
  });
  Term a = TranslateNode(lhs), b = TranslateNode(rhs);
  z3::expr defined = a.defined && b.defined;
  NodeKind kind = e.kind();
  if (kind == NodeKind::Div || kind == NodeKind::Mod || kind == NodeKind::FloorDiv ||
      kind == NodeKind::FloorMod) {
    return TranslateDivision(kind, a, b);
  }
  if (kind == NodeKind::And) return {AsBool(a.value) && AsBool(b.value), defined};
  if (kind == NodeKind::Or) return {AsBool(a.value) || AsBool(b.value), defined};
  if ((kind == NodeKind::EQ || kind == NodeKind::NE) && a.value.is_bool() && b.value.is_bool()) {
    return {kind == NodeKind::EQ ? a.value == b.value : a.value != b.value, defined};
  }
  z3::expr x = AsInt(a.value), y = AsInt(b.value);
  switch (kind) {
    case NodeKind::Add:
      return {x + y, defined};
    case NodeKind::Sub:
      return {x - y, defined};
    case NodeKind::Mul:
      return {x * y, defined};
    case NodeKind::Min:
      return {z3::ite(x <= y, x, y), defined};
    case NodeKind::Max:
      return {z3::ite(x >= y, x, y), defined};
    case NodeKind::EQ:
      return {x == y, defined};
    case NodeKind::NE:
      return {x != y, defined};
    case NodeKind::LT:
      return {x < y, defined};
    case NodeKind::LE:
      return {x <= y, defined};
    case NodeKind::GT:
      return {x > y, defined};
    case NodeKind::GE:
      return {x >= y, defined};
    default:
      break;
  }
  LOOM_ICHECK(false) << "TranslateBinary on " << NodeKindName(kind);
  throw;
}

Term Z3Translator::Translate(const PrimExpr& e) {
  if (std::optional<std::string> problem = FindUntranslatable(e)) {
    LOOM_THROW << "cannot translate " << e << " to Z3: " << *problem;
  }
  return TranslateNode(e);
}

Term Z3Translator::TranslateNode(const PrimExpr& e) {
  z3::expr always = ctx_.bool_val(true);
  switch (e.kind()) {
    case NodeKind::IntImm: {
      int64_t value = e.as<IntImmNode>()->value;
      if (e.dtype().is_bool()) return {ctx_.bool_val(value != 0), always};
      return {ctx_.int_val(value), always};
    }
    case NodeKind::Var:
      return TranslateVar(e.as<VarNode>());
    case NodeKind::Cast: {
      // Integer casts are the identity here: rules are proven modulo wrap-around.
      Term value = TranslateNode(e.as<CastNode>()->value);
      return {e.dtype().is_bool() ? AsBool(value.value) : AsInt(value.value), value.defined};
    }
    case NodeKind::Not: {
      Term a = TranslateNode(e.as<NotNode>()->a);
      return {!AsBool(a.value), a.defined};
    }
    case NodeKind::Select: {
      const auto* select = e.as<SelectNode>();
      return TranslateChoice(TranslateNode(select->condition), TranslateNode(select->true_value),
                             TranslateNode(select->false_value));
    }
    case NodeKind::Call: {
      const auto* call = e.as<CallNode>();
      if (call->op->name == "likely") return TranslateNode(call->args[0]);
      return TranslateChoice(TranslateNode(call->args[0]), TranslateNode(call->args[1]),
                             TranslateNode(call->args[2]));
    }
    case NodeKind::Let: {
      const auto* let = e.as<LetNode>();
      Term value = TranslateNode(let->value);
      auto [slot, inserted] = var_terms_.emplace(let->var.get(), value.value);
      LOOM_CHECK_USER(inserted) << "Let rebinds variable " << let->var << " in " << e;
      Term body = TranslateNode(let->body);
      var_terms_.erase(slot);
      return {body.value, value.defined && body.defined};
    }
    default:
      return TranslateBinary(e);
  }
}

}  // namespace loom::prove
