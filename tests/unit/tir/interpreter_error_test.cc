// Every failure the interpreter reports, with its message: what generated code would do
// undefined things with is a loom::Error naming the culprit, never undefined behaviour here.
#include <gtest/gtest.h>

#include <cmath>

#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"
#include "loom/tir/interpreter.h"

namespace loom::tir {
namespace {

const DataType kInt32 = DataType::Int(32);
const DataType kFloat32 = DataType::Float(32);

PrimFunc OneBufferFunc(const Buffer& buffer, Stmt body, Array<Var> scalars = {}) {
  Array<Var> params{buffer->data};
  params.insert(params.end(), scalars.begin(), scalars.end());
  return PrimFunc(params, {{buffer->data, buffer}}, body, DataType::Void(), {});
}

// The message of the loom::Error that running `func` throws ("" when none).
std::string RunError(const PrimFunc& func, const std::vector<Argument>& args,
                     const Interpreter& interp = Interpreter()) {
  try {
    interp.Run(func, args);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string EvalError(const PrimExpr& e) {
  try {
    Interpreter().Evaluate(e);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST(InterpreterErrorTest, OutOfBoundsNamesBufferIndicesAndShape) {
  Buffer a = DeclBuffer({4, 8}, kInt32, "A");
  Var i("i");
  Stmt body = For(i, 0, 5, ForKind::kSerial, BufferStore(a, 1, {0, i + 4}), IterVar(), {});
  HostArray h(kInt32, {4, 8});
  EXPECT_EQ(RunError(OneBufferFunc(a, body), {h}),
            "out-of-bounds access to buffer 'A': index [0, 8] is outside its shape [4, 8]")
      << "column 8 is out of range even though the flat offset 8 is inside the memory";
  Stmt load = BufferStore(a, BufferLoad(a, {-1, 0}), {0, 0});
  EXPECT_EQ(RunError(OneBufferFunc(a, load), {h}),
            "out-of-bounds access to buffer 'A': index [-1, 0] is outside its shape [4, 8]");
  // A vector access: the first lane that leaves the buffer is named.
  Buffer v = DeclBuffer({6}, kInt32, "V");
  Stmt vector = BufferStore(v, Broadcast(1, 4), {Ramp(4, 1, 4)});
  EXPECT_EQ(RunError(OneBufferFunc(v, vector), {HostArray(kInt32, {6})}),
            "out-of-bounds access to buffer 'V': index [6] is outside its shape [6]");
}

TEST(InterpreterErrorTest, AliasOutsideTheMemoryIsCaught) {
  Buffer a = DeclBuffer({4}, kInt32, "A");
  Buffer wide(a->data, kInt32, {8}, {}, IntImm(kInt32, 0), "A_wide", "global", 64, 1);
  Stmt body = BufferStore(wide, 1, {6});
  EXPECT_EQ(RunError(OneBufferFunc(a, body), {HostArray(kInt32, {4}, "A")}),
            "out-of-bounds access to buffer 'A_wide': index [6] (element 6 with strides [1] and "
            "offset 0) lies outside memory 'A' of 4 elements");
}

TEST(InterpreterErrorTest, DivisionByZero) {
  Var zero("zero");
  Interpreter interp;
  PrimExpr one = IntImm(kInt32, 1);
  std::vector<PrimExpr> divisions{Div(one, zero), Mod(one, zero), FloorDiv(one, zero),
                                  FloorMod(one, zero)};
  for (const PrimExpr& e : divisions) {
    try {
      interp.Evaluate(e, {{zero, Value::Int(kInt32, 0)}});
      ADD_FAILURE() << "no error for " << e;
    } catch (const Error& error) {
      EXPECT_EQ(std::string(error.what()).rfind("integer division by zero in ", 0), 0u)
          << error.what();
    }
  }
  EXPECT_EQ(EvalError(FloorDiv(IntImm(kInt32, 3), IntImm(kInt32, 0))),
            "integer division by zero in 3 // 0");
  EXPECT_EQ(Interpreter().Evaluate(Div(FloatImm(kFloat32, 1), FloatImm(kFloat32, 0))).AsFloat(),
            INFINITY)
      << "float division by zero is IEEE infinity, not an error";
}

TEST(InterpreterErrorTest, AssertFailureCarriesItsMessage) {
  Buffer a = DeclBuffer({1}, kInt32, "A");
  Var n("n");
  Stmt body = AssertStmt(n > 2, StringImm("n must exceed 2"), BufferStore(a, n, {0}));
  HostArray h(kInt32, {1});
  EXPECT_EQ(RunError(OneBufferFunc(a, body, {n}), {h, Value::Int(kInt32, 1)}), "n must exceed 2");
  EXPECT_EQ(RunError(OneBufferFunc(a, body, {n}), {h, Value::Int(kInt32, 3)}), "");
  EXPECT_EQ(h.GetInt(0), 3);
}

TEST(InterpreterErrorTest, UnregisteredExternIsNamed) {
  Buffer a = DeclBuffer({1}, kInt32, "A");
  Stmt body = Evaluate(call_extern(kInt32, "vta_gemm", {a->data}));
  EXPECT_EQ(RunError(OneBufferFunc(a, body), {HostArray(kInt32, {1})}),
            "cannot execute T.call_extern(\"int32\", \"vta_gemm\", A): no external function "
            "named 'vta_gemm' is registered with the interpreter (Interpreter::RegisterExtern)");
  Interpreter interp;
  interp.RegisterExtern("vta_gemm", [](const std::vector<Value>&, DataType) {
    return Value::Float(DataType::Float(32), 1.0);
  });
  EXPECT_EQ(RunError(OneBufferFunc(a, body), {HostArray(kInt32, {1})}, interp),
            "external function 'vta_gemm' returned a value of type float32 but the call "
            "T.call_extern(\"int32\", \"vta_gemm\", A) expects int32");
}

TEST(InterpreterErrorTest, UndefinedConversionsAndShifts) {
  PrimExpr narrowing = Cast(DataType::Int(8), FloatImm(kFloat32, 200.0));
  EXPECT_EQ(EvalError(narrowing), "cannot execute " + ToScript(narrowing) +
                                      ": the value 200 does not fit in int8 (converting it is "
                                      "undefined behaviour)");
  EXPECT_NE(EvalError(Cast(kInt32, FloatImm(kFloat32, NAN))), "");
  EXPECT_EQ(EvalError(call_intrin(kInt32, "shift_left", {IntImm(kInt32, 1), IntImm(kInt32, 32)})),
            "cannot execute T.shift_left(1, 32): shift amount 32 is outside [0, 32) for int32");
  EXPECT_EQ(EvalError(call_intrin(kFloat32, "exp", {IntImm(kInt32, 1)})),
            "cannot execute T.exp(1): 'exp' takes a float argument, got int32");
}

TEST(InterpreterErrorTest, ReduceIsNotExecutable) {
  Var lhs("x", kFloat32), rhs("y", kFloat32), k("k");
  CommReducer sum({lhs}, {rhs}, {Add(lhs, rhs)}, {FloatImm(kFloat32, 0)});
  PrimExpr reduce = Reduce(sum, {Cast(kFloat32, k)},
                           {IterVar(Range(0, 4), k, IterVarType::kCommReduce, "")}, const_true(),
                           0, {});
  std::string message = EvalError(reduce);
  EXPECT_NE(message.find("a Reduce only describes a reduction; lower the function"),
            std::string::npos)
      << message;
}

TEST(InterpreterErrorTest, ArgumentMismatchesNameTheParameter) {
  Var n("n");
  Buffer a = DeclBuffer({n, 4}, kInt32, "A");
  PrimFunc func = OneBufferFunc(a, Evaluate(0), {n});
  EXPECT_EQ(RunError(func, {HostArray(kInt32, {3, 4})}), "the function takes 2 argument(s), got 1");
  EXPECT_EQ(RunError(func, {HostArray(kFloat32, {3, 4}), Value::Int(kInt32, 3)}),
            "argument for buffer 'A' has type float32, expected int32");
  EXPECT_EQ(RunError(func, {HostArray(kInt32, {3, 4}), Value::Int(kInt32, 2)}),
            "argument for buffer 'A': extent in dimension 0 is 3, expected n = 2");
  EXPECT_EQ(RunError(func, {HostArray(kInt32, {3}), Value::Int(kInt32, 3)}),
            "argument for buffer 'A' has 1 dimension(s), expected 2");
  EXPECT_EQ(RunError(func, {HostArray(kInt32, {3, 4}), Value::Int(DataType::Int(64), 3)}),
            "argument 1 ('n') has type int64, expected int32");
  EXPECT_EQ(RunError(func, {Value::Int(kInt32, 0), Value::Int(kInt32, 3)}),
            "argument 0 ('A') must be a HostArray for buffer 'A'");
  EXPECT_EQ(RunError(func, {HostArray(kInt32, {3, 4}), Value::Int(kInt32, 3)}), "");
}

TEST(InterpreterErrorTest, UninitializedVariableIsAnInternalError) {
  Var x("x");
  EXPECT_THROW(Interpreter().Evaluate(Add(x, 1)), InternalError);
}

}  // namespace
}  // namespace loom::tir
