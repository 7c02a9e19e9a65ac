#include "arith/pattern_match.h"

#include "arith/rewrite_rules.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"
#include "loom/ir/printer.h"
#include "loom/ir/structural.h"

namespace loom::arith {

namespace {

#define LOOM_BINARY_PATTERN_KINDS(X) \
  X(Add) X(Sub) X(Mul) X(Div) X(Mod) X(FloorDiv) X(FloorMod) X(Min) X(Max) \
  X(EQ) X(NE) X(LT) X(LE) X(GT) X(GE) X(And) X(Or)

}  // namespace

bool BinaryOperands(const PrimExpr& e, PrimExpr* a, PrimExpr* b) {
  switch (e.kind()) {
#define LOOM_CASE(Name)                                   \
  case NodeKind::Name: {                                  \
    const auto* node = static_cast<const Name##Node*>(e.get()); \
    *a = node->a;                                         \
    *b = node->b;                                         \
    return true;                                          \
  }
    LOOM_BINARY_PATTERN_KINDS(LOOM_CASE)
#undef LOOM_CASE
    default:
      return false;
  }
}

namespace {

PrimExpr BuildRawBinary(NodeKind kind, const PrimExpr& a, const PrimExpr& b) {
  switch (kind) {
#define LOOM_CASE(Name) \
  case NodeKind::Name:  \
    return Name(a, b);
    LOOM_BINARY_PATTERN_KINDS(LOOM_CASE)
#undef LOOM_CASE
    default:
      break;
  }
  LOOM_ICHECK(false) << "not a binary pattern kind: " << NodeKindName(kind);
  throw;
}

}  // namespace

PrimExpr BuildFoldedBinary(NodeKind kind, const PrimExpr& a, const PrimExpr& b) {
  switch (kind) {
    case NodeKind::Add: return a + b;
    case NodeKind::Sub: return a - b;
    case NodeKind::Mul: return a * b;
    case NodeKind::Div: return a / b;  // truncated on integers, true division on floats
    case NodeKind::Mod: return truncmod(a, b);
    case NodeKind::FloorDiv: return floordiv(a, b);
    case NodeKind::FloorMod: return floormod(a, b);
    case NodeKind::Min: return min(a, b);
    case NodeKind::Max: return max(a, b);
    case NodeKind::EQ: return a == b;
    case NodeKind::NE: return a != b;
    case NodeKind::LT: return a < b;
    case NodeKind::LE: return a <= b;
    case NodeKind::GT: return a > b;
    case NodeKind::GE: return a >= b;
    case NodeKind::And: return a && b;
    case NodeKind::Or: return a || b;
    default: break;
  }
  LOOM_ICHECK(false) << "not a binary pattern kind: " << NodeKindName(kind);
  throw;
}

bool IsDivisionKind(NodeKind kind) {
  return kind == NodeKind::Div || kind == NodeKind::Mod || kind == NodeKind::FloorDiv ||
         kind == NodeKind::FloorMod;
}

bool IsComparisonKind(NodeKind kind) {
  return kind == NodeKind::EQ || kind == NodeKind::NE || kind == NodeKind::LT ||
         kind == NodeKind::LE || kind == NodeKind::GT || kind == NodeKind::GE;
}

namespace {

// A pattern subtree without variables: its literals have no operand to take a type from.
bool IsLiteralTree(const PrimExpr& pattern) {
  bool literal = true;
  PostOrderVisit(pattern, [&](const ObjectRef& node) {
    if (node.as<VarNode>()) literal = false;
  });
  return literal;
}

class Instantiator {
 public:
  Instantiator(const PatternMatch& match, bool fold, int lanes)
      : match_(match), fold_(fold), lanes_(lanes), integer_type_(match.IntegerType()) {}

  PrimExpr Build(const PrimExpr& pattern, DataType hint) {
    if (const auto* var = pattern.as<VarNode>()) return Binding(var);
    if (const auto* imm = pattern.as<IntImmNode>()) return Literal(imm, hint);
    PrimExpr a, b;
    if (BinaryOperands(pattern, &a, &b)) return Binary(pattern.kind(), a, b, hint);
    if (const auto* node = pattern.as<NotNode>()) {
      PrimExpr operand = Build(node->a, DataType::Bool(hint.lanes()));
      if (!operand.defined()) return operand;
      return fold_ ? !operand : Not(operand);
    }
    if (const auto* node = pattern.as<SelectNode>()) {
      PrimExpr condition = Build(node->condition, DataType::Bool());
      PrimExpr t = Build(node->true_value, hint);
      PrimExpr f = Build(node->false_value, hint);
      if (!condition.defined() || !t.defined() || !f.defined()) return PrimExpr();
      return fold_ ? select(condition, t, f) : Select(condition, t, f);
    }
    if (const auto* node = pattern.as<RampNode>()) {
      PrimExpr base = Build(node->base, hint.element_of());
      PrimExpr stride = Build(node->stride, base.defined() ? base.dtype() : hint.element_of());
      if (!base.defined() || !stride.defined() || base.dtype() != stride.dtype()) return {};
      return Ramp(base, stride, Lanes());
    }
    if (const auto* node = pattern.as<BroadcastNode>()) {
      PrimExpr value = Build(node->value, hint.element_of());
      if (!value.defined() || !value.dtype().is_scalar()) return PrimExpr();
      return Broadcast(value, Lanes());
    }
    LOOM_ICHECK(false) << "unsupported node in a rewrite pattern: " << pattern;
    throw;
  }

 private:
  PrimExpr Binding(const VarNode* var) {
    for (const auto& [pattern_var, value] : match_.bindings()) {
      if (pattern_var.get() == var) return value;
    }
    LOOM_ICHECK(false) << "pattern variable " << var->name_hint
                       << " is used in a replacement or condition but not bound by the match";
    throw;
  }

  PrimExpr Literal(const IntImmNode* imm, DataType hint) {
    DataType type;
    if (imm->dtype.is_bool()) {
      type = DataType::Bool(hint.lanes());
    } else {
      type = hint.element_of().is_int() || hint.element_of().is_uint() ? hint : integer_type_;
    }
    if (!type.element_of().is_representable(imm->value)) return PrimExpr();
    if (!fold_ && type.is_vector()) return Broadcast(IntImm(type.element_of(), imm->value), type.lanes());
    return make_const(type, imm->value);
  }

  PrimExpr Binary(NodeKind kind, const PrimExpr& pa, const PrimExpr& pb, DataType hint) {
    DataType operand_hint = hint;
    if (IsComparisonKind(kind)) operand_hint = integer_type_.with_lanes(hint.lanes());
    if (kind == NodeKind::And || kind == NodeKind::Or) operand_hint = DataType::Bool(hint.lanes());
    PrimExpr a, b;
    // A literal operand takes the type of the operand beside it.
    if (IsLiteralTree(pa) && !IsLiteralTree(pb)) {
      b = Build(pb, operand_hint);
      if (!b.defined()) return b;
      a = Build(pa, b.dtype());
    } else {
      a = Build(pa, operand_hint);
      if (!a.defined()) return a;
      b = Build(pb, a.dtype());
    }
    if (!a.defined() || !b.defined() || a.dtype() != b.dtype()) return PrimExpr();
    if (!fold_) return BuildRawBinary(kind, a, b);
    int64_t divisor = 0;
    if (IsDivisionKind(kind) && IsConstInt(b, &divisor) && divisor == 0) return PrimExpr();
    PrimExpr result = BuildFoldedBinary(kind, a, b);
    // Constant operands that did not fold: the exact result does not fit the type.
    if (IsConstInt(a) && IsConstInt(b) && !IsConstInt(result)) return PrimExpr();
    return result;
  }

  int Lanes() const {
    LOOM_ICHECK(lanes_ > 1) << "a vector replacement needs a lane count bound by its match";
    return lanes_;
  }

  const PatternMatch& match_;
  bool fold_;
  int lanes_;
  DataType integer_type_;
};

}  // namespace

bool PatternMatch::Match(const PrimExpr& pattern, const PrimExpr& expr) {
  bindings_.clear();
  lanes_ = 0;
  return MatchNode(pattern, expr);
}

void PatternMatch::Bind(const Var& pattern_var, PrimExpr value) {
  bindings_.emplace_back(pattern_var, std::move(value));
}

const PrimExpr* PatternMatch::Lookup(const Var& pattern_var) const {
  for (const auto& [var, value] : bindings_) {
    if (var.same_as(pattern_var)) return &value;
  }
  return nullptr;
}

bool PatternMatch::MatchLanes(int lanes) {
  if (lanes_ == 0) lanes_ = lanes;
  return lanes_ == lanes;
}

bool PatternMatch::MatchNode(const PrimExpr& pattern, const PrimExpr& expr) {
  if (pattern.as<VarNode>()) {
    Var pattern_var = Downcast<Var>(pattern);
    if (IsConstPatternVar(pattern_var)) {
      const auto* imm = expr.as<IntImmNode>();
      if (!imm || imm->dtype.is_bool()) return false;
    }
    if (const PrimExpr* bound = Lookup(pattern_var)) return StructuralEqual(*bound, expr);
    bindings_.emplace_back(pattern_var, expr);
    return true;
  }
  if (const auto* literal = pattern.as<IntImmNode>()) {
    const auto* imm = expr.as<IntImmNode>();
    return imm && imm->value == literal->value && imm->dtype.is_bool() == literal->dtype.is_bool();
  }
  if (pattern.kind() != expr.kind()) return false;
  PrimExpr pa, pb, ea, eb;
  if (BinaryOperands(pattern, &pa, &pb)) {
    BinaryOperands(expr, &ea, &eb);
    return MatchNode(pa, ea) && MatchNode(pb, eb);
  }
  if (const auto* node = pattern.as<NotNode>()) return MatchNode(node->a, expr.as<NotNode>()->a);
  if (const auto* node = pattern.as<SelectNode>()) {
    const auto* e = expr.as<SelectNode>();
    return MatchNode(node->condition, e->condition) && MatchNode(node->true_value, e->true_value) &&
           MatchNode(node->false_value, e->false_value);
  }
  if (const auto* node = pattern.as<RampNode>()) {
    const auto* e = expr.as<RampNode>();
    return MatchLanes(e->lanes) && MatchNode(node->base, e->base) &&
           MatchNode(node->stride, e->stride);
  }
  if (const auto* node = pattern.as<BroadcastNode>()) {
    const auto* e = expr.as<BroadcastNode>();
    return MatchLanes(e->lanes) && MatchNode(node->value, e->value);
  }
  LOOM_ICHECK(false) << "unsupported node in a rewrite pattern: " << pattern;
  throw;
}

PrimExpr PatternMatch::Instantiate(const PrimExpr& pattern, DataType type_hint) const {
  return Instantiator(*this, /*fold=*/true, lanes_).Build(pattern, type_hint);
}

PrimExpr PatternMatch::InstantiateRaw(const PrimExpr& pattern, DataType type_hint) const {
  return Instantiator(*this, /*fold=*/false, lanes_).Build(pattern, type_hint);
}

DataType PatternMatch::IntegerType() const {
  for (const auto& [var, value] : bindings_) {
    if (!value.dtype().is_bool()) return value.dtype().element_of();
  }
  return DataType::Int(32);
}

bool PatternMatch::BindsOnlyIntegers() const {
  for (const auto& [var, value] : bindings_) {
    if (!value.dtype().is_integer_like()) return false;
  }
  return true;
}

}  // namespace loom::arith
