// The built-in intrinsics of src/ir/op.cc: math in the precision of the argument's type,
// bitwise operations and shifts at the type's width, reinterpret, if_then_else, likely,
// address_of.
#include <bit>
#include <cmath>
#include <vector>

#include "loom/ir/printer.h"
#include "tir/interpreter_internal.h"

namespace loom::tir::detail {

namespace {

// Math functions, generic over float and double so float32 math is done in float.
template <typename Real>
Real UnaryMath(const std::string& name, Real x) {
  if (name == "exp") return std::exp(x);
  if (name == "exp2") return std::exp2(x);
  if (name == "log") return std::log(x);
  if (name == "log2") return std::log2(x);
  if (name == "log10") return std::log10(x);
  if (name == "sqrt") return std::sqrt(x);
  if (name == "rsqrt") return Real(1) / std::sqrt(x);
  if (name == "tanh") return std::tanh(x);
  if (name == "sigmoid") return Real(1) / (Real(1) + std::exp(-x));
  if (name == "erf") return std::erf(x);
  if (name == "fabs") return std::fabs(x);
  if (name == "floor") return std::floor(x);
  if (name == "ceil") return std::ceil(x);
  if (name == "round") return std::nearbyint(x);  // half to even, as LLVM's roundeven
  if (name == "trunc") return std::trunc(x);
  if (name == "sin") return std::sin(x);
  if (name == "cos") return std::cos(x);
  LOOM_ICHECK(false) << "unary math intrinsic '" << name << "' has no interpreter rule";
  throw;
}

bool IsUnaryMath(const std::string& name) {
  static const char* const kNames[] = {"exp",  "exp2",  "log",  "log2",  "log10", "sqrt",
                                       "rsqrt", "tanh", "sigmoid", "erf", "fabs", "floor",
                                       "ceil", "round", "trunc", "sin",   "cos"};
  for (const char* known : kNames) {
    if (name == known) return true;
  }
  return false;
}

uint64_t TypeMask(DataType t) {
  return t.bits() >= 64 ? ~uint64_t{0} : (uint64_t{1} << t.bits()) - 1;
}

}  // namespace

Value Machine::CallIntrinsic(const CallNode* op) {
  const std::string& name = op->op->name;
  auto expect_float = [&](const Value& v) {
    LOOM_CHECK_USER(v.dtype.is_float())
        << "cannot execute " << ToScript(ObjectRef(op)) << ": '" << name
        << "' takes a float argument, got " << v.dtype;
  };
  auto expect_int = [&](const Value& v) {
    LOOM_CHECK_USER(v.dtype.is_int() || v.dtype.is_uint())
        << "cannot execute " << ToScript(ObjectRef(op)) << ": '" << name
        << "' takes integer arguments, got " << v.dtype;
  };

  if (name == "if_then_else") {
    Value condition = VisitExpr(op->args[0]);
    if (condition.lanes() == 1) return VisitExpr(op->args[condition.ints[0] ? 1 : 2]);
    // A vector condition needs both branches, lane by lane.
    Value if_true = VisitExpr(op->args[1]), if_false = VisitExpr(op->args[2]);
    for (int lane = 0; lane < if_true.lanes(); ++lane) {
      if (condition.ints[lane]) continue;
      if (if_true.dtype.is_float()) {
        if_true.floats[lane] = if_false.floats[lane];
      } else {
        if_true.ints[lane] = if_false.ints[lane];
      }
    }
    return if_true;
  }
  if (name == "likely") return VisitExpr(op->args[0]);
  if (name == "address_of") {
    // A handle into the middle of a memory carries its byte offset as its one integer lane
    // (a plain handle has none): an external function reads `memory` from there.
    const auto* load = op->args[0].as<BufferLoadNode>();
    LOOM_CHECK_USER(load != nullptr)
        << "cannot execute " << ToScript(ObjectRef(op))
        << ": address_of takes a buffer element (BufferLoad)";
    Access access = Locate(load->buffer, load->indices);
    LOOM_CHECK_USER(access.byte_offsets.size() == 1)
        << "cannot execute " << ToScript(ObjectRef(op))
        << ": address_of takes one element, not a vector of them";
    Value handle = Value::Handle(access.memory);
    handle.ints.push_back(access.byte_offsets[0]);
    return handle;
  }

  std::vector<Value> args;
  for (const PrimExpr& arg : op->args) args.push_back(VisitExpr(arg));
  const Value& x = args[0];
  DataType element = x.dtype.element_of();
  Value result = EmptyValue(op->dtype);

  if (IsUnaryMath(name)) {
    expect_float(x);
    for (double lane : x.floats) {
      PushFloat(&result, element.bits() == 64
                             ? UnaryMath<double>(name, lane)
                             : UnaryMath<float>(name, static_cast<float>(lane)));
    }
    return result;
  }
  if (name == "pow") {
    expect_float(x);
    for (int lane = 0; lane < x.lanes(); ++lane) {
      double base = x.floats[lane], exponent = args[1].floats[lane];
      PushFloat(&result, element.bits() == 64
                             ? std::pow(base, exponent)
                             : std::pow(static_cast<float>(base), static_cast<float>(exponent)));
    }
    return result;
  }
  if (name == "fma") {
    expect_float(x);
    for (int lane = 0; lane < x.lanes(); ++lane) {
      double a = x.floats[lane], b = args[1].floats[lane], c = args[2].floats[lane];
      // One rounding to the type's precision (float32's in float); float16 and bfloat16
      // then round that float to their type in PushFloat, as generated code does.
      PushFloat(&result, element.bits() == 64
                             ? std::fma(a, b, c)
                             : std::fma(static_cast<float>(a), static_cast<float>(b),
                                        static_cast<float>(c)));
    }
    return result;
  }
  if (name == "isnan") {
    expect_float(x);
    for (double lane : x.floats) result.ints.push_back(std::isnan(lane));
    return result;
  }
  if (name == "reinterpret") {
    LOOM_CHECK_USER(x.dtype.bits() * x.lanes() == op->dtype.bits() * op->dtype.lanes())
        << "cannot execute " << ToScript(ObjectRef(op)) << ": reinterpret needs types of one "
        << "size, got " << x.dtype << " to " << op->dtype;
    std::vector<std::byte> bytes(static_cast<size_t>(element.bytes() * x.lanes()));
    for (int lane = 0; lane < x.lanes(); ++lane) {
      StoreLane(bytes.data() + int64_t{lane} * element.bytes(), element, x, lane);
    }
    DataType to = op->dtype.element_of();
    for (int lane = 0; lane < op->dtype.lanes(); ++lane) {
      LoadLane(bytes.data() + int64_t{lane} * to.bytes(), to, &result);
    }
    return result;
  }

  expect_int(x);
  uint64_t mask = TypeMask(element);
  for (int lane = 0; lane < x.lanes(); ++lane) {
    auto a = static_cast<uint64_t>(x.ints[lane]);
    auto b = args.size() > 1 ? static_cast<uint64_t>(args[1].ints[lane]) : uint64_t{0};
    if (name == "popcount") {
      PushInt(&result, std::popcount(a & mask));
    } else if (name == "bitwise_and") {
      PushInt(&result, static_cast<int64_t>(a & b));
    } else if (name == "bitwise_or") {
      PushInt(&result, static_cast<int64_t>(a | b));
    } else if (name == "bitwise_xor") {
      PushInt(&result, static_cast<int64_t>(a ^ b));
    } else if (name == "bitwise_not") {
      PushInt(&result, static_cast<int64_t>(~a));
    } else if (name == "shift_left" || name == "shift_right") {
      int64_t amount = args[1].ints[lane];
      LOOM_CHECK_USER(amount >= 0 && amount < element.bits())
          << "cannot execute " << ToScript(ObjectRef(op)) << ": shift amount " << amount
          << " is outside [0, " << element.bits() << ") for " << element;
      if (name == "shift_left") {
        PushInt(&result, static_cast<int64_t>(a << amount));
      } else if (element.is_int()) {
        PushInt(&result, x.ints[lane] >> amount);  // arithmetic: the lane is sign-extended
      } else {
        PushInt(&result, static_cast<int64_t>((a & mask) >> amount));
      }
    } else {
      LOOM_ICHECK(false) << "intrinsic '" << name << "' has no interpreter rule";
    }
  }
  return result;
}

}  // namespace loom::tir::detail
