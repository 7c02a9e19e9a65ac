// The c target's lowering of each built-in operator, registered as the operator's
// "codegen.c" attribute (loom/ir/op_attr.h): math functions from <math.h> (float32 exp,
// log, tanh, ... arrive as polynomials already: loom::build runs LowerMathIntrinsics),
// bitwise operations, reinterpretation, if_then_else, external calls and the packed-API
// builtins. An operator with no entry (call_llvm_pure_intrin, tvm_tuple) is an error naming
// it (codegen_c.cc).
#include <string>
#include <vector>

#include "loom/ir/op_attr.h"
#include "loom/support/error.h"
#include "loom/tir/transform.h"
#include "target/codegen/c/codegen_c.h"
#include "target/codegen/codegen_util.h"

namespace loom::codegen {

namespace {

std::string Unsigned(DataType t) { return "uint" + std::to_string(t.bits()) + "_t"; }

// A <math.h> function on float (name + "f") or double, rounded back to float16/bfloat16.
CallEmitterC MathCall(std::string name) {
  return [name](CodeGenC& c, const CallNode* op) {
    std::string args;
    for (const PrimExpr& arg : op->args) args += (args.empty() ? "" : ", ") + c.VisitExpr(arg);
    std::string suffix = op->dtype.bits() == 64 ? "" : "f";
    return c.Temp(op->dtype, c.RoundToType(name + suffix + "(" + args + ")", op->dtype));
  };
}

// A C expression of the call's operands: `format` with {0}, {1} replaced by them.
CallEmitterC Expression(std::string format) {
  return [format](CodeGenC& c, const CallNode* op) {
    std::string text = format;
    for (size_t i = 0; i < op->args.size(); ++i) {
      std::string slot = "{" + std::to_string(i) + "}";
      std::string value = c.VisitExpr(op->args[i]);
      for (size_t at = text.find(slot); at != std::string::npos; at = text.find(slot)) {
        text.replace(at, slot.size(), value);
      }
    }
    text = "(" + CodeGenC::ComputeType(op->dtype) + ")(" + text + ")";
    return c.Temp(op->dtype, c.RoundToType(text, op->dtype));
  };
}

// A float formula of the call's operand `x`, with `f` the <math.h> suffix of its type ("f"
// for float, "" for double) and `one` its 1, rounded back to float16/bfloat16.
CallEmitterC FloatFormula(
    std::string (*formula)(const std::string& x, const std::string& f, const std::string& one)) {
  return [formula](CodeGenC& c, const CallNode* op) {
    std::string x = c.VisitExpr(op->args[0]);
    bool wide = op->dtype.bits() == 64;
    return c.Temp(op->dtype, c.RoundToType(formula(x, wide ? "" : "f", wide ? "1.0" : "1.0f"),
                                           op->dtype));
  };
}

std::string Popcount(CodeGenC& c, const CallNode* op) {
  DataType t = op->args[0].dtype();
  std::string x = c.VisitExpr(op->args[0]);
  return c.Temp(op->dtype, "(" + CodeGenC::ComputeType(op->dtype) + ")loom_popcount((uint64_t)(" +
                               Unsigned(t) + ")" + x + ")");
}

std::string ShiftLeft(CodeGenC& c, const CallNode* op) {
  DataType t = op->dtype;
  std::string x = c.VisitExpr(op->args[0]), y = c.VisitExpr(op->args[1]);
  return c.Temp(t, "(" + CodeGenC::ComputeType(t) + ")((" + Unsigned(t) + ")" + x + " << " + y + ")");
}

std::string ShiftRight(CodeGenC& c, const CallNode* op) {
  // Arithmetic for signed integers (what GCC and Clang do for >> on them), logical otherwise.
  std::string x = c.VisitExpr(op->args[0]), y = c.VisitExpr(op->args[1]);
  return c.Temp(op->dtype, "(" + CodeGenC::ComputeType(op->dtype) + ")(" + x + " >> " + y + ")");
}

std::string Reinterpret(CodeGenC& c, const CallNode* op) {
  DataType from = op->args[0].dtype(), to = op->dtype;
  std::string x = c.VisitExpr(op->args[0]);
  std::string type = CodeGenC::ComputeType(to);
  if (from.is_handle()) return c.Temp(to, "(" + type + ")(intptr_t)" + x);
  if (to.is_handle()) return c.Temp(to, "(void*)(intptr_t)" + x);
  LOOM_CHECK_USER(from.bits() == to.bits())
      << "codegen of '" << c.function_name() << "': reinterpret of " << from << " as " << to
      << " changes the width";
  // Bits of the value: a float's through memcpy (float16 from its rounded float).
  std::string bits;
  if (from.is_float() && from.bits() == 16) {
    bits = from.is_bfloat16() ? "loom_f32_to_bf16(" + x + ")" : "loom_f32_to_f16(" + x + ")";
  } else if (from.is_float()) {
    bits = from.bits() == 64 ? "loom_f64_bits(" + x + ")" : "loom_f32_bits(" + x + ")";
  } else {
    bits = "(" + Unsigned(from) + ")" + x;
  }
  if (to.is_float() && to.bits() == 16) {
    return c.Temp(to, (to.is_bfloat16() ? "loom_bf16_to_f32((uint16_t)" : "loom_f16_to_f32((uint16_t)") +
                          bits + ")");
  }
  if (to.is_float()) {
    return c.Temp(to, to.bits() == 64 ? "loom_bits_f64(" + bits + ")" : "loom_bits_f32(" + bits + ")");
  }
  return c.Temp(to, "(" + type + ")" + bits);
}

// Only the branch taken is evaluated (a guarded load stays guarded).
std::string IfThenElse(CodeGenC& c, const CallNode* op) {
  std::string condition = c.VisitExpr(op->args[0]);
  std::string result = c.Temp(op->dtype, "0");
  c.OpenBlock("if (" + condition + ")");
  std::string then_value = c.VisitExpr(op->args[1]);
  c.Line(result + " = " + then_value + ";");
  c.CloseBlock();
  c.OpenBlock("else");
  std::string else_value = c.VisitExpr(op->args[2]);
  c.Line(result + " = " + else_value + ";");
  c.CloseBlock();
  return result;
}

std::string AddressOf(CodeGenC& c, const CallNode* op) {
  const auto* load = op->args[0].as<BufferLoadNode>();
  LOOM_ICHECK(load != nullptr) << "address_of takes a BufferLoad";
  return c.Temp(DataType::Handle(),
                "(void*)" + c.ElementAddress(load->buffer, FlatIndex(load->buffer, load->indices)));
}

// The runtime's structs through C's own declarations of them (the preamble's LoomValue and
// LoomTensor), so the layout is the one of the ABI the code is compiled for: 32-bit targets
// lay DLTensor out differently from 64-bit ones.
std::string StructGet(CodeGenC& c, const CallNode* op) {
  using tir::builtin::StructField;
  std::string base = c.VisitExpr(op->args[0]);
  int64_t index = 0, field = 0;
  LOOM_ICHECK(IsConstInt(op->args[1], &index) && IsConstInt(op->args[2], &field))
      << "loom_struct_get takes constant index and field";
  std::string at = "[" + std::to_string(index) + "]";
  std::string tensor = "((const LoomTensor*)" + base + ")" + at;
  std::string value;
  switch (static_cast<StructField>(field)) {
    case StructField::kArgValue:
      value = "((const LoomValue*)" + base + ")" + at +
              (op->dtype.is_handle() ? ".v_handle"
               : op->dtype.is_float() ? ".v_float64"
                                      : ".v_int64");
      break;
    case StructField::kInt32Element: value = "((const int32_t*)" + base + ")" + at; break;
    case StructField::kInt64Element: value = "((const int64_t*)" + base + ")" + at; break;
    case StructField::kTensorData: value = tensor + ".data"; break;
    case StructField::kTensorDeviceType: value = tensor + ".device.device_type"; break;
    case StructField::kTensorNDim: value = tensor + ".ndim"; break;
    case StructField::kTensorDTypeCode: value = tensor + ".dtype.code"; break;
    case StructField::kTensorDTypeBits: value = tensor + ".dtype.bits"; break;
    case StructField::kTensorDTypeLanes: value = tensor + ".dtype.lanes"; break;
    case StructField::kTensorShape: value = "(void*)" + tensor + ".shape"; break;
    case StructField::kTensorStrides: value = "(void*)" + tensor + ".strides"; break;
    case StructField::kTensorByteOffset: value = tensor + ".byte_offset"; break;
  }
  LOOM_ICHECK(!value.empty()) << "unknown struct field " << field;
  return c.Temp(op->dtype, "(" + CodeGenC::ComputeType(op->dtype) + ")" + value);
}

// loom_check(cond, format, int64 values...): on failure the message is formatted with
// snprintf and the function fails.
std::string Check(CodeGenC& c, const CallNode* op) {
  std::string condition = c.VisitExpr(op->args[0]);
  std::string format = c.VisitExpr(op->args[1]);
  std::vector<std::string> values;
  for (size_t i = 2; i < op->args.size(); ++i) values.push_back(c.VisitExpr(op->args[i]));
  c.OpenBlock("if (!(" + condition + "))");
  c.Line("char message[512];");
  std::string call = "snprintf(message, sizeof(message), " + format;
  for (const std::string& value : values) call += ", (long long)" + value;
  c.Line(call + ");");
  c.EmitFailure("message");
  c.CloseBlock();
  return "0";
}

// loom_call_packed("name", args...): the arguments as (LoomValue, type code) arrays, then
// the call-packed service with this module's context; a failure keeps the callee's message.
std::string CallPacked(CodeGenC& c, const CallNode* op) {
  const auto* name = op->args[0].as<StringImmNode>();
  LOOM_ICHECK(name != nullptr) << "loom_call_packed takes the function's name first";
  c.UseCallPacked();
  size_t count = std::max<size_t>(op->args.size() - 1, 1);
  c.OpenBlock("");
  c.Line("LoomValue packed_args[" + std::to_string(count) + "];");
  c.Line("int32_t packed_codes[" + std::to_string(count) + "];");
  for (size_t i = 1; i < op->args.size(); ++i) {
    DataType t = op->args[i].dtype();
    std::string value = c.VisitExpr(op->args[i]);
    std::string slot = "packed_args[" + std::to_string(i - 1) + "]";
    std::string code = "packed_codes[" + std::to_string(i - 1) + "] = ";
    if (t.is_handle()) {
      c.Line(slot + ".v_handle = " + value + "; " + code + "3;");
    } else if (t.is_float()) {
      c.Line(slot + ".v_float64 = (double)" + value + "; " + code + "2;");
    } else {
      c.Line(slot + ".v_int64 = (int64_t)" + value + "; " + code + "0;");
    }
  }
  // Code no runtime loaded has no service to call.
  c.OpenBlock("if (__LoomBackendCallPacked == NULL)");
  c.EmitFailure(CodeGenC::StringLiteral(
      c.function_name() + ": launching '" + name->value +
      "' needs the Loom runtime, which did not load this code"));
  c.CloseBlock();
  c.OpenBlock("if (__LoomBackendCallPacked(__LoomModuleContext, " +
              CodeGenC::StringLiteral(name->value) + ", packed_args, packed_codes, " +
              std::to_string(op->args.size() - 1) + ") != 0)");
  c.EmitFailure("");
  c.CloseBlock();
  c.CloseBlock();
  return "0";
}

// call_extern("name", args...): declared where it is called, from the call's own types.
std::string Extern(CodeGenC& c, const CallNode* op) {
  const std::string& name = op->args[0].as<StringImmNode>()->value;
  std::string types, args;
  for (size_t i = 1; i < op->args.size(); ++i) {
    types += std::string(i > 1 ? ", " : "") + CodeGenC::ComputeType(op->args[i].dtype());
    args += std::string(i > 1 ? ", " : "") + c.VisitExpr(op->args[i]);
  }
  std::string ret = op->dtype.is_void() ? "void" : CodeGenC::ComputeType(op->dtype);
  c.Line("extern " + ret + " " + name + "(" + (types.empty() ? "void" : types) + ");");
  if (op->dtype.is_void()) {
    c.Line(name + "(" + args + ");");
    return "0";
  }
  return c.Temp(op->dtype, name + "(" + args + ")");
}

}  // namespace

#define LOOM_C_EMITTER(op, emitter) \
  LOOM_REGISTER_OP_ATTR("codegen.c", op, CallEmitterC(emitter))
LOOM_C_EMITTER("exp", MathCall("exp"));
LOOM_C_EMITTER("exp2", MathCall("exp2"));
LOOM_C_EMITTER("log", MathCall("log"));
LOOM_C_EMITTER("log2", MathCall("log2"));
LOOM_C_EMITTER("log10", MathCall("log10"));
LOOM_C_EMITTER("sqrt", MathCall("sqrt"));
LOOM_C_EMITTER("tanh", MathCall("tanh"));
LOOM_C_EMITTER("erf", MathCall("erf"));
LOOM_C_EMITTER("pow", MathCall("pow"));
LOOM_C_EMITTER("fabs", MathCall("fabs"));
LOOM_C_EMITTER("floor", MathCall("floor"));
LOOM_C_EMITTER("ceil", MathCall("ceil"));
// Half to even in the default rounding mode, as LLVM's roundeven and the interpreter.
LOOM_C_EMITTER("round", MathCall("nearbyint"));
LOOM_C_EMITTER("trunc", MathCall("trunc"));
LOOM_C_EMITTER("sin", MathCall("sin"));
LOOM_C_EMITTER("cos", MathCall("cos"));
// One rounding: C's fma (a software one where the CPU has none).
LOOM_C_EMITTER("fma", MathCall("fma"));
LOOM_C_EMITTER("sigmoid", FloatFormula([](const std::string& x, const std::string& f,
                                            const std::string& one) {
                 return one + " / (" + one + " + exp" + f + "(-" + x + "))";
               }));
LOOM_C_EMITTER("rsqrt", FloatFormula([](const std::string& x, const std::string& f,
                                          const std::string& one) {
                 return one + " / sqrt" + f + "(" + x + ")";
               }));
LOOM_C_EMITTER("isnan", Expression("{0} != {0}"));
LOOM_C_EMITTER("popcount", Popcount);
LOOM_C_EMITTER("shift_left", ShiftLeft);
LOOM_C_EMITTER("shift_right", ShiftRight);
LOOM_C_EMITTER("bitwise_and", Expression("{0} & {1}"));
LOOM_C_EMITTER("bitwise_or", Expression("{0} | {1}"));
LOOM_C_EMITTER("bitwise_xor", Expression("{0} ^ {1}"));
LOOM_C_EMITTER("bitwise_not", Expression("~{0}"));
LOOM_C_EMITTER("reinterpret", Reinterpret);
LOOM_C_EMITTER("if_then_else", IfThenElse);
LOOM_C_EMITTER("likely", [](CodeGenC& c, const CallNode* op) { return c.VisitExpr(op->args[0]); });
LOOM_C_EMITTER("address_of", AddressOf);
LOOM_C_EMITTER("loom_struct_get", StructGet);
LOOM_C_EMITTER("loom_handle_is_null", Expression("{0} == NULL"));
LOOM_C_EMITTER("loom_check", Check);
LOOM_C_EMITTER("loom_call_packed", CallPacked);
LOOM_C_EMITTER("call_extern", Extern);
LOOM_C_EMITTER("call_pure_extern", Extern);
#undef LOOM_C_EMITTER

}  // namespace loom::codegen
