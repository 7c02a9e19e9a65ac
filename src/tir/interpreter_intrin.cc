// The interpreter's rule for each built-in intrinsic of src/ir/op.cc, registered as the
// operator's "interpreter" attribute (loom/ir/op_attr.h): math in the precision of the
// argument's type, bitwise operations and shifts at the type's width, reinterpret,
// if_then_else, likely, address_of. An intrinsic without a rule (the packed-API builtins,
// which run only compiled) is an error naming it.
#include <bit>
#include <cmath>
#include <functional>
#include <vector>

#include "loom/ir/op_attr.h"
#include "loom/ir/printer.h"
#include "tir/interpreter_internal.h"

namespace loom::tir::detail {

using InterpreterRule = std::function<Value(Machine& machine, const CallNode* call)>;

struct InterpreterRules {
  static void ExpectFloat(const CallNode* op, const Value& v) {
    LOOM_CHECK_USER(v.dtype.is_float())
        << "cannot execute " << ToScript(ObjectRef(op)) << ": '" << op->op.name()
        << "' takes a float argument, got " << v.dtype;
  }

  static void ExpectInt(const CallNode* op, const Value& v) {
    LOOM_CHECK_USER(v.dtype.is_int() || v.dtype.is_uint())
        << "cannot execute " << ToScript(ObjectRef(op)) << ": '" << op->op.name()
        << "' takes integer arguments, got " << v.dtype;
  }

  static std::vector<Value> Args(Machine& m, const CallNode* op) {
    std::vector<Value> args;
    for (const PrimExpr& arg : op->args) args.push_back(m.VisitExpr(arg));
    return args;
  }

  static uint64_t TypeMask(DataType t) {
    return t.bits() >= 64 ? ~uint64_t{0} : (uint64_t{1} << t.bits()) - 1;
  }

  static Value IfThenElse(Machine& m, const CallNode* op) {
    Value condition = m.VisitExpr(op->args[0]);
    if (condition.lanes() == 1) return m.VisitExpr(op->args[condition.ints[0] ? 1 : 2]);
    // A vector condition needs both branches, lane by lane.
    Value if_true = m.VisitExpr(op->args[1]), if_false = m.VisitExpr(op->args[2]);
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

  static Value Likely(Machine& m, const CallNode* op) { return m.VisitExpr(op->args[0]); }

  static Value Extern(Machine& m, const CallNode* op) { return m.CallExtern(op); }

  static Value LLVMIntrinsic(Machine&, const CallNode* op) {
    LOOM_THROW << "cannot execute " << ToScript(ObjectRef(op)) << ": the interpreter cannot run "
               << "the LLVM intrinsic '" << op->args[0].as<StringImmNode>()->value
               << "'; build the function for an LLVM target to run it";
  }

  static Value AddressOf(Machine& m, const CallNode* op) {
    // A handle into the middle of a memory carries its byte offset as its one integer lane
    // (a plain handle has none): an external function reads `memory` from there.
    const auto* load = op->args[0].as<BufferLoadNode>();
    LOOM_CHECK_USER(load != nullptr)
        << "cannot execute " << ToScript(ObjectRef(op))
        << ": address_of takes a buffer element (BufferLoad)";
    Machine::Access access = m.Locate(load->buffer, load->indices);
    LOOM_CHECK_USER(access.byte_offsets.size() == 1)
        << "cannot execute " << ToScript(ObjectRef(op))
        << ": address_of takes one element, not a vector of them";
    Value handle = Value::Handle(access.memory);
    handle.ints.push_back(access.byte_offsets[0]);
    return handle;
  }

  // A float function of the arguments, lane by lane, in float for float32 (and float16,
  // rounded after) and in double for float64: `f` is generic over the two.
  template <typename F>
  static InterpreterRule FloatLanes(F f) {
    return [f](Machine& m, const CallNode* op) {
      std::vector<Value> args = Args(m, op);
      ExpectFloat(op, args[0]);
      Value result = EmptyValue(op->dtype);
      bool wide = args[0].dtype.bits() == 64;
      for (int lane = 0; lane < args[0].lanes(); ++lane) {
        auto at = [&](size_t i) { return args[i].floats[lane]; };
        PushFloat(&result, wide ? f(at, double{}) : f([&](size_t i) {
          return static_cast<float>(at(i));
        }, float{}));
      }
      return result;
    };
  }

  static Value IsNan(Machine& m, const CallNode* op) {
    Value x = m.VisitExpr(op->args[0]);
    ExpectFloat(op, x);
    Value result = EmptyValue(op->dtype);
    for (double lane : x.floats) result.ints.push_back(std::isnan(lane));
    return result;
  }

  static Value Reinterpret(Machine& m, const CallNode* op) {
    Value x = m.VisitExpr(op->args[0]);
    DataType element = x.dtype.element_of();
    LOOM_CHECK_USER(x.dtype.bits() * x.lanes() == op->dtype.bits() * op->dtype.lanes())
        << "cannot execute " << ToScript(ObjectRef(op)) << ": reinterpret needs types of one "
        << "size, got " << x.dtype << " to " << op->dtype;
    std::vector<std::byte> bytes(static_cast<size_t>(element.bytes() * x.lanes()));
    for (int lane = 0; lane < x.lanes(); ++lane) {
      StoreLane(bytes.data() + int64_t{lane} * element.bytes(), element, x, lane);
    }
    Value result = EmptyValue(op->dtype);
    DataType to = op->dtype.element_of();
    for (int lane = 0; lane < op->dtype.lanes(); ++lane) {
      LoadLane(bytes.data() + int64_t{lane} * to.bytes(), to, &result);
    }
    return result;
  }

  // An integer function of the lanes (as unsigned bits) and the type's mask.
  template <typename F>
  static InterpreterRule IntLanes(F f) {
    return [f](Machine& m, const CallNode* op) {
      std::vector<Value> args = Args(m, op);
      ExpectInt(op, args[0]);
      Value result = EmptyValue(op->dtype);
      uint64_t mask = TypeMask(args[0].dtype.element_of());
      for (int lane = 0; lane < args[0].lanes(); ++lane) {
        auto a = static_cast<uint64_t>(args[0].ints[lane]);
        auto b = args.size() > 1 ? static_cast<uint64_t>(args[1].ints[lane]) : uint64_t{0};
        PushInt(&result, f(a, b, mask));
      }
      return result;
    };
  }

  static Value Shift(Machine& m, const CallNode* op) {
    std::vector<Value> args = Args(m, op);
    const Value& x = args[0];
    ExpectInt(op, x);
    DataType element = x.dtype.element_of();
    uint64_t mask = TypeMask(element);
    bool left = op->op.name() == "shift_left";
    Value result = EmptyValue(op->dtype);
    for (int lane = 0; lane < x.lanes(); ++lane) {
      int64_t amount = args[1].ints[lane];
      LOOM_CHECK_USER(amount >= 0 && amount < element.bits())
          << "cannot execute " << ToScript(ObjectRef(op)) << ": shift amount " << amount
          << " is outside [0, " << element.bits() << ") for " << element;
      auto a = static_cast<uint64_t>(x.ints[lane]);
      if (left) {
        PushInt(&result, static_cast<int64_t>(a << amount));
      } else if (element.is_int()) {
        PushInt(&result, x.ints[lane] >> amount);  // arithmetic: the lane is sign-extended
      } else {
        PushInt(&result, static_cast<int64_t>((a & mask) >> amount));
      }
    }
    return result;
  }
};

Value Machine::CallIntrinsic(const CallNode* op) {
  const InterpreterRule* rule = OpAttr<InterpreterRule>::Find("interpreter", op->op);
  LOOM_CHECK_USER(rule != nullptr)
      << "cannot execute " << ToScript(ObjectRef(op)) << ": the interpreter has no rule for "
      << op->op.name() << " (it runs only compiled)";
  return (*rule)(*this, op);
}

namespace {

using Rules = InterpreterRules;
#define LOOM_INTERPRETER_RULE(op, rule) \
  LOOM_REGISTER_OP_ATTR("interpreter", op, InterpreterRule(rule))
// Math: `x(i)` is argument i's lane in the computing type R.
#define LOOM_FLOAT_RULE(op, body) \
  LOOM_INTERPRETER_RULE(op, Rules::FloatLanes([](auto x, auto r) { \
                          using R = decltype(r);                   \
                          (void)sizeof(R);                         \
                          return body;                             \
                        }))
LOOM_FLOAT_RULE("exp", std::exp(x(0)));
LOOM_FLOAT_RULE("exp2", std::exp2(x(0)));
LOOM_FLOAT_RULE("log", std::log(x(0)));
LOOM_FLOAT_RULE("log2", std::log2(x(0)));
LOOM_FLOAT_RULE("log10", std::log10(x(0)));
LOOM_FLOAT_RULE("sqrt", std::sqrt(x(0)));
LOOM_FLOAT_RULE("rsqrt", R(1) / std::sqrt(x(0)));
LOOM_FLOAT_RULE("tanh", std::tanh(x(0)));
LOOM_FLOAT_RULE("sigmoid", R(1) / (R(1) + std::exp(-x(0))));
LOOM_FLOAT_RULE("erf", std::erf(x(0)));
LOOM_FLOAT_RULE("fabs", std::fabs(x(0)));
LOOM_FLOAT_RULE("floor", std::floor(x(0)));
LOOM_FLOAT_RULE("ceil", std::ceil(x(0)));
LOOM_FLOAT_RULE("round", std::nearbyint(x(0)));  // half to even, as LLVM's roundeven
LOOM_FLOAT_RULE("trunc", std::trunc(x(0)));
LOOM_FLOAT_RULE("sin", std::sin(x(0)));
LOOM_FLOAT_RULE("cos", std::cos(x(0)));
LOOM_FLOAT_RULE("pow", std::pow(x(0), x(1)));
// One rounding to the type's precision (float32's in float); float16 and bfloat16 then
// round that float to their type in PushFloat, as generated code does.
LOOM_FLOAT_RULE("fma", std::fma(x(0), x(1), x(2)));
#undef LOOM_FLOAT_RULE
LOOM_INTERPRETER_RULE("call_extern", Rules::Extern);
LOOM_INTERPRETER_RULE("call_pure_extern", Rules::Extern);
LOOM_INTERPRETER_RULE("call_llvm_pure_intrin", Rules::LLVMIntrinsic);
LOOM_INTERPRETER_RULE("call_llvm_intrin", Rules::LLVMIntrinsic);
LOOM_INTERPRETER_RULE("isnan", Rules::IsNan);
LOOM_INTERPRETER_RULE("reinterpret", Rules::Reinterpret);
LOOM_INTERPRETER_RULE("if_then_else", Rules::IfThenElse);
LOOM_INTERPRETER_RULE("likely", Rules::Likely);
LOOM_INTERPRETER_RULE("address_of", Rules::AddressOf);
LOOM_INTERPRETER_RULE("shift_left", Rules::Shift);
LOOM_INTERPRETER_RULE("shift_right", Rules::Shift);
LOOM_INTERPRETER_RULE("popcount", Rules::IntLanes([](uint64_t a, uint64_t, uint64_t mask) {
                        return int64_t{std::popcount(a & mask)};
                      }));
LOOM_INTERPRETER_RULE("bitwise_and", Rules::IntLanes([](uint64_t a, uint64_t b, uint64_t) {
                        return static_cast<int64_t>(a & b);
                      }));
LOOM_INTERPRETER_RULE("bitwise_or", Rules::IntLanes([](uint64_t a, uint64_t b, uint64_t) {
                        return static_cast<int64_t>(a | b);
                      }));
LOOM_INTERPRETER_RULE("bitwise_xor", Rules::IntLanes([](uint64_t a, uint64_t b, uint64_t) {
                        return static_cast<int64_t>(a ^ b);
                      }));
LOOM_INTERPRETER_RULE("bitwise_not", Rules::IntLanes([](uint64_t a, uint64_t, uint64_t) {
                        return static_cast<int64_t>(~a);
                      }));
#undef LOOM_INTERPRETER_RULE

}  // namespace

}  // namespace loom::tir::detail
