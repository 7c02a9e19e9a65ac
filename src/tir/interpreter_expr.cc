// Expression evaluation: every lane computed with the exact semantics of its dtype.
#include <cmath>
#include <limits>

#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"
#include "tir/interpreter_internal.h"

namespace loom::tir::detail {

namespace {

enum class ArithOp { kAdd, kSub, kMul, kDiv, kMod, kFloorDiv, kFloorMod, kMin, kMax };
enum class CompareOp { kEQ, kNE, kLT, kLE, kGT, kGE };

bool IsUInt64(DataType t) { return t.is_uint() && t.bits() == 64; }

bool IntLess(DataType t, int64_t x, int64_t y) {
  if (IsUInt64(t)) return static_cast<uint64_t>(x) < static_cast<uint64_t>(y);
  return x < y;
}

// Truncated quotient and remainder; the caller has excluded a zero divisor. The one
// quotient that overflows (INT64_MIN / -1) wraps, as two's-complement hardware would.
int64_t TruncDiv(DataType t, int64_t x, int64_t y) {
  if (IsUInt64(t)) return static_cast<int64_t>(static_cast<uint64_t>(x) / static_cast<uint64_t>(y));
  if (y == -1) return static_cast<int64_t>(uint64_t{0} - static_cast<uint64_t>(x));
  return x / y;
}

int64_t TruncMod(DataType t, int64_t x, int64_t y) {
  if (IsUInt64(t)) return static_cast<int64_t>(static_cast<uint64_t>(x) % static_cast<uint64_t>(y));
  if (y == -1) return 0;
  return x % y;
}

int64_t IntArith(ArithOp op, DataType t, int64_t x, int64_t y, const Object* node) {
  auto ux = static_cast<uint64_t>(x), uy = static_cast<uint64_t>(y);
  bool is_division = op == ArithOp::kDiv || op == ArithOp::kMod || op == ArithOp::kFloorDiv ||
                     op == ArithOp::kFloorMod;
  LOOM_CHECK_USER(!is_division || y != 0)
      << "integer division by zero in " << ToScript(ObjectRef(node));
  bool is_signed = t.is_int();
  switch (op) {
    case ArithOp::kAdd: return WrapArith(static_cast<int64_t>(ux + uy), t);
    case ArithOp::kSub: return WrapArith(static_cast<int64_t>(ux - uy), t);
    case ArithOp::kMul: return WrapArith(static_cast<int64_t>(ux * uy), t);
    case ArithOp::kDiv: return WrapArith(TruncDiv(t, x, y), t);
    case ArithOp::kMod: return WrapArith(TruncMod(t, x, y), t);
    case ArithOp::kFloorDiv: {
      int64_t q = TruncDiv(t, x, y);
      if (is_signed && TruncMod(t, x, y) != 0 && ((x < 0) != (y < 0))) --q;
      return WrapArith(q, t);
    }
    case ArithOp::kFloorMod: {
      int64_t r = TruncMod(t, x, y);
      if (is_signed && r != 0 && ((r < 0) != (y < 0))) r += y;
      return WrapArith(r, t);
    }
    case ArithOp::kMin: return IntLess(t, y, x) ? y : x;
    case ArithOp::kMax: return IntLess(t, x, y) ? y : x;
  }
  return 0;
}

// One float operation in the precision of t: float64 in double, every narrower type in
// float (then rounded to t), never in double -- double would hide float32 rounding.
template <typename Real>
Real FloatOp(ArithOp op, Real x, Real y) {
  switch (op) {
    case ArithOp::kAdd: return x + y;
    case ArithOp::kSub: return x - y;
    case ArithOp::kMul: return x * y;
    case ArithOp::kDiv: return x / y;
    case ArithOp::kMod: return std::fmod(x, y);
    case ArithOp::kFloorDiv: return std::floor(x / y);
    case ArithOp::kFloorMod: return x - std::floor(x / y) * y;
    case ArithOp::kMin: return y < x ? y : x;
    case ArithOp::kMax: return x < y ? y : x;
  }
  return x;
}

double FloatArith(ArithOp op, DataType t, double x, double y) {
  if (t.bits() == 64) return FloatOp<double>(op, x, y);
  return RoundToFloatType(FloatOp<float>(op, static_cast<float>(x), static_cast<float>(y)), t);
}

Value ArithLanes(ArithOp op, const Value& a, const Value& b, const Object* node) {
  LOOM_ICHECK(a.dtype == b.dtype) << "operands of " << ToScript(ObjectRef(node)) << " differ";
  Value result = EmptyValue(a.dtype);
  DataType element = a.dtype.element_of();
  for (int lane = 0; lane < a.lanes(); ++lane) {
    if (element.is_float()) {
      result.floats.push_back(FloatArith(op, element, a.floats[lane], b.floats[lane]));
    } else {
      result.ints.push_back(IntArith(op, element, a.ints[lane], b.ints[lane], node));
    }
  }
  return result;
}

template <typename T>
bool Compare(CompareOp op, T x, T y) {
  switch (op) {
    case CompareOp::kEQ: return x == y;
    case CompareOp::kNE: return x != y;
    case CompareOp::kLT: return x < y;
    case CompareOp::kLE: return x <= y;
    case CompareOp::kGT: return x > y;
    case CompareOp::kGE: return x >= y;
  }
  return false;
}

Value CompareLanes(CompareOp op, const Value& a, const Value& b) {
  Value result = EmptyValue(DataType::Bool(a.lanes()));
  DataType element = a.dtype.element_of();
  for (int lane = 0; lane < a.lanes(); ++lane) {
    bool holds = false;
    if (element.is_float()) {
      holds = Compare(op, a.floats[lane], b.floats[lane]);
    } else if (IsUInt64(element)) {
      holds = Compare(op, static_cast<uint64_t>(a.ints[lane]), static_cast<uint64_t>(b.ints[lane]));
    } else {
      holds = Compare(op, a.ints[lane], b.ints[lane]);
    }
    result.ints.push_back(holds);
  }
  return result;
}

// C's conversion of a float to an integer type, where it is defined; loom::Error otherwise.
int64_t FloatToInt(double f, DataType to, const Object* node) {
  if (to.is_bool()) return f != 0;
  double truncated = std::trunc(f);
  bool fits = false;
  if (to.bits() == 64) {
    constexpr double kTwo63 = 9223372036854775808.0;
    fits = to.is_uint() ? (truncated >= 0 && truncated < 2 * kTwo63)
                        : (truncated >= -kTwo63 && truncated < kTwo63);
    if (fits && to.is_uint()) return static_cast<int64_t>(static_cast<uint64_t>(truncated));
  } else {
    fits = truncated >= static_cast<double>(to.min_int_value()) &&
           truncated <= static_cast<double>(to.max_int_value());
  }
  LOOM_CHECK_USER(fits) << "cannot execute " << ToScript(ObjectRef(node)) << ": the value " << f
                        << " does not fit in " << to.element_of()
                        << " (converting it is undefined behaviour)";
  return static_cast<int64_t>(truncated);
}

double IntToFloat(int64_t i, DataType from, DataType to) {
  bool unsigned64 = IsUInt64(from);
  if (to.bits() == 64) {
    return unsigned64 ? static_cast<double>(static_cast<uint64_t>(i)) : static_cast<double>(i);
  }
  // Convert straight to float (one rounding), not through double.
  float single = unsigned64 ? static_cast<float>(static_cast<uint64_t>(i)) : static_cast<float>(i);
  return RoundToFloatType(single, to);
}

}  // namespace

Machine::Binding::Binding(Machine* machine, const Var& var, Value value)
    : machine_(machine), var_(var.get()) {
  auto it = machine->env_.find(var_);
  if (it != machine->env_.end()) saved_ = std::move(it->second);
  machine->env_[var_] = std::move(value);
}

Machine::Binding::~Binding() {
  if (saved_) {
    machine_->env_[var_] = std::move(*saved_);
  } else {
    machine_->env_.erase(var_);
  }
}

int64_t Machine::EvalInt(const PrimExpr& e) {
  Value v = VisitExpr(e);
  LOOM_CHECK_USER(v.dtype.is_integer_like() && v.dtype.is_scalar())
      << "expected a scalar integer, got " << ToScript(e) << " of type " << v.dtype;
  return v.ints[0];
}

Value Machine::VisitExpr_(const IntImmNode* op) { return Value::Int(op->dtype, op->value); }
Value Machine::VisitExpr_(const FloatImmNode* op) { return Value::Float(op->dtype, op->value); }

Value Machine::VisitExpr_(const StringImmNode* op) {
  Value v = EmptyValue(op->dtype);
  v.text = op->value;
  return v;
}

Value Machine::VisitExpr_(const VarNode* op) {
  auto it = env_.find(op);
  LOOM_ICHECK(it != env_.end()) << "the interpreter read variable '" << op->name_hint
                                << "' before anything was assigned to it";
  return it->second;
}

Value Machine::VisitExpr_(const CastNode* op) {
  Value source = VisitExpr(op->value);
  DataType from = source.dtype.element_of(), to = op->dtype.element_of();
  LOOM_CHECK_USER(!from.is_handle() && !to.is_handle())
      << "cannot execute " << ToScript(ObjectRef(op)) << ": the interpreter does not convert "
      << "between handles and numbers";
  Value result = EmptyValue(op->dtype);
  for (int lane = 0; lane < source.lanes(); ++lane) {
    if (to.is_float()) {
      result.floats.push_back(from.is_float() ? RoundToFloatType(source.floats[lane], to)
                                              : IntToFloat(source.ints[lane], from, to));
    } else if (from.is_float()) {
      result.ints.push_back(FloatToInt(source.floats[lane], to, op));
    } else {
      result.ints.push_back(const_int::WrapToType(source.ints[lane], to));
    }
  }
  return result;
}

#define LOOM_INTERP_ARITH(Kind, Op)                                         \
  Value Machine::VisitExpr_(const Kind##Node* op) {                         \
    return ArithLanes(ArithOp::Op, VisitExpr(op->a), VisitExpr(op->b), op); \
  }
LOOM_INTERP_ARITH(Add, kAdd)
LOOM_INTERP_ARITH(Sub, kSub)
LOOM_INTERP_ARITH(Mul, kMul)
LOOM_INTERP_ARITH(Div, kDiv)
LOOM_INTERP_ARITH(Mod, kMod)
LOOM_INTERP_ARITH(FloorDiv, kFloorDiv)
LOOM_INTERP_ARITH(FloorMod, kFloorMod)
LOOM_INTERP_ARITH(Min, kMin)
LOOM_INTERP_ARITH(Max, kMax)
#undef LOOM_INTERP_ARITH

#define LOOM_INTERP_COMPARE(Kind, Op)                                    \
  Value Machine::VisitExpr_(const Kind##Node* op) {                      \
    return CompareLanes(CompareOp::Op, VisitExpr(op->a), VisitExpr(op->b)); \
  }
LOOM_INTERP_COMPARE(EQ, kEQ)
LOOM_INTERP_COMPARE(NE, kNE)
LOOM_INTERP_COMPARE(LT, kLT)
LOOM_INTERP_COMPARE(LE, kLE)
LOOM_INTERP_COMPARE(GT, kGT)
LOOM_INTERP_COMPARE(GE, kGE)
#undef LOOM_INTERP_COMPARE

Value Machine::VisitExpr_(const AndNode* op) {
  Value a = VisitExpr(op->a), b = VisitExpr(op->b);
  for (int lane = 0; lane < a.lanes(); ++lane) a.ints[lane] = a.ints[lane] && b.ints[lane];
  return a;
}

Value Machine::VisitExpr_(const OrNode* op) {
  Value a = VisitExpr(op->a), b = VisitExpr(op->b);
  for (int lane = 0; lane < a.lanes(); ++lane) a.ints[lane] = a.ints[lane] || b.ints[lane];
  return a;
}

Value Machine::VisitExpr_(const NotNode* op) {
  Value a = VisitExpr(op->a);
  for (int64_t& lane : a.ints) lane = !lane;
  return a;
}

Value Machine::VisitExpr_(const SelectNode* op) {
  Value condition = VisitExpr(op->condition);
  Value if_true = VisitExpr(op->true_value), if_false = VisitExpr(op->false_value);
  if (if_true.dtype.is_handle()) return condition.ints[0] ? if_true : if_false;
  for (int lane = 0; lane < if_true.lanes(); ++lane) {
    bool take_true = condition.ints[condition.lanes() == 1 ? 0 : lane] != 0;
    if (take_true) continue;
    if (if_true.dtype.is_float()) {
      if_true.floats[lane] = if_false.floats[lane];
    } else {
      if_true.ints[lane] = if_false.ints[lane];
    }
  }
  return if_true;
}

Value Machine::VisitExpr_(const RampNode* op) {
  Value base = VisitExpr(op->base), stride = VisitExpr(op->stride);
  DataType element = base.dtype;
  Value result = EmptyValue(op->dtype);
  for (int lane = 0; lane < op->lanes; ++lane) {
    if (element.is_float()) {
      double offset = FloatArith(ArithOp::kMul, element, stride.floats[0], lane);
      result.floats.push_back(FloatArith(ArithOp::kAdd, element, base.floats[0], offset));
    } else {
      int64_t offset = IntArith(ArithOp::kMul, element, stride.ints[0], lane, op);
      result.ints.push_back(IntArith(ArithOp::kAdd, element, base.ints[0], offset, op));
    }
  }
  return result;
}

Value Machine::VisitExpr_(const BroadcastNode* op) {
  Value scalar = VisitExpr(op->value);
  Value result = EmptyValue(op->dtype);
  if (scalar.dtype.is_float()) {
    result.floats.assign(op->lanes, scalar.floats[0]);
  } else {
    result.ints.assign(op->lanes, scalar.ints[0]);
  }
  return result;
}

Value Machine::VisitExpr_(const ShuffleNode* op) {
  Value all = EmptyValue(op->vectors[0].dtype().element_of());
  for (const PrimExpr& vector : op->vectors) {
    Value v = VisitExpr(vector);
    all.ints.insert(all.ints.end(), v.ints.begin(), v.ints.end());
    all.floats.insert(all.floats.end(), v.floats.begin(), v.floats.end());
  }
  Value result = EmptyValue(op->dtype);
  for (const PrimExpr& index : op->indices) {
    int64_t lane = 0;
    IsConstInt(index, &lane);
    if (all.dtype.is_float()) {
      result.floats.push_back(all.floats[lane]);
    } else {
      result.ints.push_back(all.ints[lane]);
    }
  }
  return result;
}

Value Machine::VisitExpr_(const LetNode* op) {
  Binding binding(this, op->var, VisitExpr(op->value));
  return VisitExpr(op->body);
}

Value Machine::VisitExpr_(const CallNode* op) { return CallIntrinsic(op); }

Value Machine::VisitExpr_(const BufferLoadNode* op) {
  Access access = Locate(op->buffer, op->indices);
  DataType element = op->buffer->dtype.element_of();
  int per_index = op->buffer->dtype.lanes();
  Value result = EmptyValue(op->dtype);
  for (int64_t offset : access.byte_offsets) {
    for (int lane = 0; lane < per_index; ++lane) {
      LoadLane(access.memory->data() + offset + int64_t{lane} * element.bytes(), element, &result);
    }
  }
  return result;
}

Value Machine::VisitExpr_(const ReduceNode* op) {
  LOOM_THROW << "cannot execute " << ToScript(ObjectRef(op))
             << ": a Reduce only describes a reduction; lower the function (which turns it into "
                "loops and stores) before interpreting it";
  throw;  // unreachable: LOOM_THROW always throws
}

Value Machine::CallExtern(const CallNode* op) {
  const std::string& function = op->args[0].as<StringImmNode>()->value;
  auto it = externs_.find(function);
  LOOM_CHECK_USER(it != externs_.end())
      << "cannot execute " << ToScript(ObjectRef(op)) << ": no external function named '"
      << function << "' is registered with the interpreter (Interpreter::RegisterExtern)";
  std::vector<Value> args;
  for (size_t i = 1; i < op->args.size(); ++i) args.push_back(VisitExpr(op->args[i]));
  Value result = it->second(args, op->dtype);
  if (op->dtype.is_void()) return EmptyValue(op->dtype);
  size_t lanes = op->dtype.is_float() ? result.floats.size() : result.ints.size();
  LOOM_CHECK_USER(result.dtype == op->dtype && static_cast<int>(lanes) == op->dtype.lanes())
      << "external function '" << function << "' returned a value of type " << result.dtype
      << " but the call " << ToScript(ObjectRef(op)) << " expects " << op->dtype;
  return result;
}

}  // namespace loom::tir::detail
