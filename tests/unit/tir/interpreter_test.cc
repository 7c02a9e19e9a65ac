// The interpreter against hand-computed results: every statement kind, every expression
// kind, and the dtype semantics generated code has (wrap-around, float32 rounding).
#include "loom/tir/interpreter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "loom/ir/expr_ops.h"
#include "prim_func.h"

namespace loom::tir {
namespace {

const DataType kInt32 = DataType::Int(32);
const DataType kFloat32 = DataType::Float(32);

using testing::MakePrimFunc;

Stmt Loop(const Var& i, PrimExpr extent, Stmt body, ForKind kind = ForKind::kSerial) {
  return For(i, make_zero(i.dtype()), extent, kind, body, IterVar(), {});
}

Value Eval(const PrimExpr& e) { return Interpreter().Evaluate(e); }
int64_t EvalI(const PrimExpr& e) { return Eval(e).AsInt(); }
double EvalF(const PrimExpr& e) { return Eval(e).AsFloat(); }

TEST(InterpreterTest, LoopStoreLoadWithScalarParameter) {
  Buffer a = DeclBuffer({8}, kFloat32, "A"), b = DeclBuffer({8}, kFloat32, "B");
  Var i("i"), n("n");
  PrimExpr value = Add(Mul(BufferLoad(a, {i}), PrimExpr(2.0f)), PrimExpr(1.0f));
  Stmt body = Loop(i, n, BufferStore(b, value, {i}));
  HostArray ha(kFloat32, {8}), hb(kFloat32, {8});
  for (int k = 0; k < 8; ++k) ha.SetFloat(k, k * 0.5);
  Interpreter().Run(MakePrimFunc({a, b}, {n}, body), {ha, hb, Value::Int(kInt32, 6)});
  for (int k = 0; k < 6; ++k) EXPECT_EQ(hb.GetFloat(k), k * 1.0 + 1.0) << k;
  EXPECT_EQ(hb.GetFloat(6), 0.0) << "only n iterations run";
}

TEST(InterpreterTest, SymbolicShapeBindsFromTheArray) {
  Var n = SizeVar("n");
  Buffer a = DeclBuffer({n}, kInt32, "A");
  Var i("i");
  Stmt body = Loop(i, n, BufferStore(a, Mul(i, i), {i}));
  HostArray ha(kInt32, {5});
  Interpreter().Run(MakePrimFunc({a}, {}, body), {ha});
  for (int k = 0; k < 5; ++k) EXPECT_EQ(ha.GetInt(k), k * k);
}

TEST(InterpreterTest, MultiDimensionalStridesOffsetAndFlattenedAlias) {
  Buffer a2 = DeclBuffer({4, 8}, kInt32, "A");
  // A 1-D view of the same memory, as storage flatten produces.
  Buffer a1(a2->data, kInt32, {32}, {}, IntImm(kInt32, 0), "A_flat", "global", 64, 1);
  // A transposed, offset view: element (j, i) at 2 + j * 1 + i * 8 (a 3x4 window).
  Buffer view(a2->data, kInt32, {3, 4}, {1, 8}, IntImm(kInt32, 2), "A_view", "global", 64, 1);
  Buffer out = DeclBuffer({3, 4}, kInt32, "Out");
  Var i("i"), j("j"), k("k");
  Stmt fill = Loop(i, 4, Loop(j, 8, BufferStore(a2, i * 100 + j, {i, j})));
  Stmt bump = Loop(k, 32, BufferStore(a1, Add(BufferLoad(a1, {k}), 1), {k}));
  Stmt copy = Loop(i, 3, Loop(j, 4, BufferStore(out, BufferLoad(view, {i, j}), {i, j})));
  HostArray ha(kInt32, {4, 8}), hout(kInt32, {3, 4});
  Interpreter().Run(MakePrimFunc({a2, out}, {}, SeqStmt({fill, bump, copy})), {ha, hout});
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 8; ++c) EXPECT_EQ(ha.GetInt(r * 8 + c), r * 100 + c + 1);
  }
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 4; ++c) {
      int64_t flat = 2 + r + c * 8;
      EXPECT_EQ(hout.GetInt(r * 4 + c), (flat / 8) * 100 + flat % 8 + 1) << r << "," << c;
    }
  }
}

TEST(InterpreterTest, AllocateIsScopedAndZeroed) {
  Buffer out = DeclBuffer({4}, kInt32, "Out");
  Var tmp_var("tmp", DataType::Handle());
  Buffer tmp(tmp_var, kInt32, {4}, {}, IntImm(kInt32, 0), "tmp", "local", 64, 1);
  Var i("i"), r("r");
  // Each outer iteration allocates afresh: accumulations never leak between iterations.
  Stmt inner = SeqStmt({BufferStore(tmp, Add(BufferLoad(tmp, {i}), r + 1), {i}),
                        BufferStore(out, Add(BufferLoad(out, {i}), BufferLoad(tmp, {i})), {i})});
  Stmt body = Loop(r, 3, Allocate(tmp_var, kInt32, {4}, PrimExpr(), Loop(i, 4, inner), "local"));
  HostArray hout(kInt32, {4});
  Interpreter().Run(MakePrimFunc({out}, {}, body), {hout});
  for (int k = 0; k < 4; ++k) EXPECT_EQ(hout.GetInt(k), 1 + 2 + 3);
}

TEST(InterpreterTest, ControlFlowStatements) {
  Buffer out = DeclBuffer({6}, kInt32, "Out");
  Var i("i"), x("x"), n("n");
  // while out[5] < n: out[5] += 1   (memory is the only mutable state of TIR)
  Stmt count = While(BufferLoad(out, {5}) < n, BufferStore(out, BufferLoad(out, {5}) + 1, {5}));
  Stmt branches = Loop(i, 5, IfThenElse(floormod(i, 2) == 0, BufferStore(out, i * 10, {i}),
                                        BufferStore(out, -i, {i})));
  Stmt let = LetStmt(x, n * 3, AttrStmt(StringImm("ignored"), "pragma", x,
                                        AssertStmt(x > 0, StringImm("x positive"),
                                                   BufferStore(out, x, {0}))));
  Stmt evaluate = Evaluate(Add(n, 1));
  HostArray hout(kInt32, {6});
  Interpreter().Run(MakePrimFunc({out}, {n}, SeqStmt({branches, count, let, evaluate})),
                    {hout, Value::Int(kInt32, 7)});
  EXPECT_EQ(hout.GetInt(0), 21);
  EXPECT_EQ(hout.GetInt(1), -1);
  EXPECT_EQ(hout.GetInt(2), 20);
  EXPECT_EQ(hout.GetInt(3), -3);
  EXPECT_EQ(hout.GetInt(4), 40);
  EXPECT_EQ(hout.GetInt(5), 7);
}

TEST(InterpreterTest, EveryLoopKindIteratesItsExtent) {
  for (ForKind kind : {ForKind::kSerial, ForKind::kParallel, ForKind::kVectorized,
                       ForKind::kUnrolled, ForKind::kThreadBinding}) {
    Buffer out = DeclBuffer({8}, kInt32, "Out");
    Var i("i");
    IterVar thread = kind == ForKind::kThreadBinding
                         ? IterVar(Range(0, 8), Var("tx"), IterVarType::kThreadIndex, "threadIdx.x")
                         : IterVar();
    Stmt body = For(i, 2, 5, kind, BufferStore(out, i + 1, {i}), thread, {});
    HostArray hout(kInt32, {8});
    Interpreter().Run(MakePrimFunc({out}, {}, body), {hout});
    for (int k = 0; k < 8; ++k) {
      EXPECT_EQ(hout.GetInt(k), (k >= 2 && k < 7) ? k + 1 : 0) << ForKindName(kind) << " " << k;
    }
  }
}

TEST(InterpreterTest, IntegerWrapAround) {
  const DataType i8 = DataType::Int(8), u8 = DataType::UInt(8);
  EXPECT_EQ(EvalI(Add(IntImm(i8, 127), IntImm(i8, 1))), -128);
  EXPECT_EQ(EvalI(Mul(IntImm(i8, 16), IntImm(i8, 16))), 0);
  EXPECT_EQ(EvalI(Sub(IntImm(i8, -128), IntImm(i8, 1))), 127);
  EXPECT_EQ(EvalI(Div(IntImm(i8, -128), IntImm(i8, -1))), -128);
  EXPECT_EQ(EvalI(Add(IntImm(u8, 250), IntImm(u8, 10))), 4);
  EXPECT_EQ(EvalI(Sub(IntImm(u8, 0), IntImm(u8, 1))), 255);
  const DataType i64 = DataType::Int(64), u64 = DataType::UInt(64);
  int64_t max64 = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(EvalI(Add(IntImm(i64, max64), IntImm(i64, 1))), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(EvalI(Mul(IntImm(DataType::Int(32), 65536), IntImm(DataType::Int(32), 65536))), 0);
  // uint64 values above INT64_MAX: compare and divide as unsigned.
  Var big("big", u64);
  Value huge = Value::Int(u64, -2);  // 2^64 - 2
  Interpreter interp;
  EXPECT_EQ(interp.Evaluate(GT(big, IntImm(u64, 5)), {{big, huge}}).AsInt(), 1);
  EXPECT_EQ(interp.Evaluate(Div(big, IntImm(u64, 2)), {{big, huge}}).AsInt(), max64);
  EXPECT_EQ(EvalI(Cast(i8, IntImm(DataType::Int(32), 200))), -56);
  EXPECT_EQ(EvalI(Cast(u8, IntImm(DataType::Int(32), -1))), 255);
  EXPECT_EQ(EvalI(Cast(DataType::Bool(), IntImm(DataType::Int(32), 4))), 1);
}

TEST(InterpreterTest, DivisionSemantics) {
  for (int a = -9; a <= 9; ++a) {
    for (int b : {-4, -3, -1, 1, 2, 3, 5}) {
      EXPECT_EQ(EvalI(Div(IntImm(kInt32, a), IntImm(kInt32, b))), a / b) << a << "/" << b;
      EXPECT_EQ(EvalI(Mod(IntImm(kInt32, a), IntImm(kInt32, b))), a % b) << a << "%" << b;
      int64_t floor_q = static_cast<int64_t>(std::floor(static_cast<double>(a) / b));
      EXPECT_EQ(EvalI(FloorDiv(IntImm(kInt32, a), IntImm(kInt32, b))), floor_q) << a << "//" << b;
      EXPECT_EQ(EvalI(FloorMod(IntImm(kInt32, a), IntImm(kInt32, b))), a - floor_q * b);
    }
  }
  EXPECT_EQ(EvalF(Div(FloatImm(kFloat32, 7), FloatImm(kFloat32, 2))), 3.5);
  EXPECT_EQ(EvalF(FloorDiv(FloatImm(kFloat32, -7), FloatImm(kFloat32, 2))), -4.0);
  EXPECT_EQ(EvalF(FloorMod(FloatImm(kFloat32, -7), FloatImm(kFloat32, 2))), 1.0);
  EXPECT_EQ(EvalF(Mod(FloatImm(kFloat32, -7), FloatImm(kFloat32, 2))), -1.0);
}

TEST(InterpreterTest, Float32IsComputedInFloatNotDouble) {
  // 16777216 + 1 is not representable in float: float arithmetic loses the 1.
  PrimExpr sum = Add(Add(FloatImm(kFloat32, 16777216.0), FloatImm(kFloat32, 1.0)),
                     FloatImm(kFloat32, 1.0));
  EXPECT_EQ(EvalF(sum), 16777216.0);
  const DataType f64 = DataType::Float(64);
  EXPECT_EQ(EvalF(Add(Add(FloatImm(f64, 16777216.0), FloatImm(f64, 1.0)), FloatImm(f64, 1.0))),
            16777218.0);
  float third = 1.0f / 3.0f;
  EXPECT_EQ(EvalF(Div(FloatImm(kFloat32, 1), FloatImm(kFloat32, 3))), static_cast<double>(third));
  EXPECT_NE(EvalF(Div(FloatImm(kFloat32, 1), FloatImm(kFloat32, 3))), 1.0 / 3.0);
  // float16: 2048 + 1 rounds back to 2048 (11 significant bits); bfloat16 keeps 8 bits.
  const DataType f16 = DataType::Float(16), bf16 = DataType::BFloat16();
  EXPECT_EQ(EvalF(Add(FloatImm(f16, 2048), FloatImm(f16, 1))), 2048.0);
  EXPECT_EQ(EvalF(Add(FloatImm(f16, 2048), FloatImm(f16, 2))), 2050.0);
  EXPECT_EQ(EvalF(FloatImm(f16, 0.1)), 0.0999755859375);
  EXPECT_EQ(EvalF(Add(FloatImm(bf16, 256), FloatImm(bf16, 1))), 256.0);
  EXPECT_EQ(EvalF(Mul(FloatImm(f16, 300), FloatImm(f16, 300))), INFINITY) << "overflows half";
  EXPECT_EQ(EvalF(FloatImm(f16, 4e-8)), std::ldexp(1.0, -24)) << "nearest subnormal";
  EXPECT_EQ(EvalF(FloatImm(f16, 1e-7)), std::ldexp(2.0, -24));
  EXPECT_EQ(EvalF(FloatImm(f16, 2e-8)), 0.0) << "below half the smallest subnormal";
}

TEST(InterpreterTest, CastsBetweenIntegersAndFloats) {
  EXPECT_EQ(EvalI(Cast(kInt32, FloatImm(kFloat32, -2.75))), -2) << "truncates toward zero";
  EXPECT_EQ(EvalI(Cast(DataType::UInt(8), FloatImm(kFloat32, 255.5))), 255);
  EXPECT_EQ(EvalF(Cast(kFloat32, IntImm(kInt32, 16777217))), 16777216.0);
  EXPECT_EQ(EvalF(Cast(DataType::Float(64), IntImm(kInt32, 16777217))), 16777217.0);
  EXPECT_EQ(EvalF(Cast(kFloat32, FloatImm(DataType::Float(64), 0.1))),
            static_cast<double>(0.1f));
  EXPECT_EQ(EvalF(Cast(DataType::Float(16), IntImm(kInt32, 2049))), 2048.0);
  EXPECT_EQ(EvalI(Cast(DataType::Bool(), FloatImm(kFloat32, 0.5))), 1);
}

TEST(InterpreterTest, ComparisonsLogicSelectAndLet) {
  Var x("x");
  EXPECT_EQ(EvalI(LT(IntImm(kInt32, -1), IntImm(kInt32, 0))), 1);
  EXPECT_EQ(EvalI(GE(IntImm(DataType::UInt(8), 255), IntImm(DataType::UInt(8), 0))), 1);
  EXPECT_EQ(EvalI(NE(FloatImm(kFloat32, NAN), FloatImm(kFloat32, NAN))), 1);
  EXPECT_EQ(EvalI(EQ(FloatImm(kFloat32, NAN), FloatImm(kFloat32, NAN))), 0);
  EXPECT_EQ(EvalI(And(const_true(), Not(const_false()))), 1);
  EXPECT_EQ(EvalI(Or(const_false(), const_false())), 0);
  EXPECT_EQ(EvalI(Select(const_false(), IntImm(kInt32, 1), IntImm(kInt32, 2))), 2);
  EXPECT_EQ(EvalI(Let(x, IntImm(kInt32, 6), Mul(x, Add(x, 1)))), 42);
  EXPECT_EQ(EvalI(Min(IntImm(kInt32, -3), IntImm(kInt32, 2))), -3);
  const DataType u64 = DataType::UInt(64);
  Var big("big", u64);
  EXPECT_EQ(Interpreter().Evaluate(Max(big, IntImm(u64, 1)), {{big, Value::Int(u64, -1)}}).AsInt(),
            -1)
      << "2^64 - 1 is the larger uint64";
}

TEST(InterpreterTest, VectorRampBroadcastShuffleAndVectorAccess) {
  Value ramp = Eval(Ramp(IntImm(kInt32, 3), IntImm(kInt32, -2), 4));
  EXPECT_EQ(ramp.ints, (std::vector<int64_t>{3, 1, -1, -3}));
  Value vec_add = Eval(Add(Ramp(IntImm(kInt32, 0), IntImm(kInt32, 1), 4),
                           Broadcast(IntImm(kInt32, 10), 4)));
  EXPECT_EQ(vec_add.ints, (std::vector<int64_t>{10, 11, 12, 13}));
  Value shuffled = Eval(Shuffle({Ramp(IntImm(kInt32, 0), IntImm(kInt32, 1), 2),
                                 Ramp(IntImm(kInt32, 10), IntImm(kInt32, 1), 2)},
                                {3, 0, 2}));
  EXPECT_EQ(shuffled.ints, (std::vector<int64_t>{11, 0, 10}));
  Value select = Eval(Select(Ramp(IntImm(kInt32, 0), IntImm(kInt32, 1), 4) < Broadcast(2, 4),
                             Broadcast(IntImm(kInt32, 1), 4), Broadcast(IntImm(kInt32, 0), 4)));
  EXPECT_EQ(select.ints, (std::vector<int64_t>{1, 1, 0, 0}));

  // B[i*4 : i*4+4] = A[i*4 : i*4+4] * 2 over a vector Ramp index; a 2-D access with a
  // vector column index; and a strided (stride 2) gather.
  Buffer a = DeclBuffer({8}, kFloat32, "A"), b = DeclBuffer({8}, kFloat32, "B");
  Buffer c = DeclBuffer({2, 4}, kFloat32, "C"), d = DeclBuffer({4}, kFloat32, "D");
  Var i("i");
  PrimExpr lanes = Ramp(i * 4, 1, 4);
  Stmt body = SeqStmt({
      Loop(i, 2, BufferStore(b, Mul(BufferLoad(a, {lanes}), Broadcast(2.0f, 4)), {lanes})),
      Loop(i, 2, BufferStore(c, BufferLoad(a, {lanes}), {i, Ramp(0, 1, 4)})),
      BufferStore(d, BufferLoad(a, {Ramp(1, 2, 4)}), {Ramp(0, 1, 4)}),
  });
  HostArray ha(kFloat32, {8}), hb(kFloat32, {8}), hc(kFloat32, {2, 4}), hd(kFloat32, {4});
  for (int k = 0; k < 8; ++k) ha.SetFloat(k, k + 0.25);
  Interpreter().Run(MakePrimFunc({a, b, c, d}, {}, body), {ha, hb, hc, hd});
  for (int k = 0; k < 8; ++k) {
    EXPECT_EQ(hb.GetFloat(k), 2 * (k + 0.25));
    EXPECT_EQ(hc.GetFloat(k), k + 0.25);
  }
  for (int k = 0; k < 4; ++k) EXPECT_EQ(hd.GetFloat(k), 2 * k + 1 + 0.25);
}

TEST(InterpreterTest, MathIntrinsicsUseTheTypesPrecision) {
  auto call = [](DataType t, const char* op, std::vector<PrimExpr> args) {
    return EvalF(call_intrin(t, op, std::move(args)));
  };
  EXPECT_EQ(call(kFloat32, "exp", {FloatImm(kFloat32, 1)}), static_cast<double>(std::exp(1.0f)));
  EXPECT_EQ(call(DataType::Float(64), "exp", {FloatImm(DataType::Float(64), 1)}), std::exp(1.0));
  EXPECT_EQ(call(kFloat32, "sqrt", {FloatImm(kFloat32, 2)}), static_cast<double>(std::sqrt(2.0f)));
  EXPECT_EQ(call(kFloat32, "rsqrt", {FloatImm(kFloat32, 4)}), 0.5);
  EXPECT_EQ(call(kFloat32, "sigmoid", {FloatImm(kFloat32, 0)}), 0.5);
  EXPECT_EQ(call(kFloat32, "tanh", {FloatImm(kFloat32, 0)}), 0.0);
  EXPECT_EQ(call(kFloat32, "fabs", {FloatImm(kFloat32, -3)}), 3.0);
  EXPECT_EQ(call(kFloat32, "floor", {FloatImm(kFloat32, -2.5)}), -3.0);
  EXPECT_EQ(call(kFloat32, "ceil", {FloatImm(kFloat32, -2.5)}), -2.0);
  EXPECT_EQ(call(kFloat32, "round", {FloatImm(kFloat32, 2.5)}), 2.0) << "half to even";
  EXPECT_EQ(call(kFloat32, "trunc", {FloatImm(kFloat32, -2.5)}), -2.0);
  EXPECT_EQ(call(kFloat32, "pow", {FloatImm(kFloat32, 2), FloatImm(kFloat32, 10)}), 1024.0);
  EXPECT_EQ(call(kFloat32, "log2", {FloatImm(kFloat32, 8)}), 3.0);
  EXPECT_EQ(EvalI(call_intrin(DataType::Bool(), "isnan", {FloatImm(kFloat32, NAN)})), 1);
}

TEST(InterpreterTest, BitwiseShiftsReinterpretAndBranchIntrinsics) {
  const DataType i8 = DataType::Int(8), u8 = DataType::UInt(8);
  auto i = [](DataType t, const char* op, std::vector<PrimExpr> args) {
    return EvalI(call_intrin(t, op, std::move(args)));
  };
  EXPECT_EQ(i(i8, "shift_right", {IntImm(i8, -128), IntImm(i8, 2)}), -32) << "arithmetic";
  EXPECT_EQ(i(u8, "shift_right", {IntImm(u8, 128), IntImm(u8, 2)}), 32) << "logical";
  EXPECT_EQ(i(i8, "shift_left", {IntImm(i8, 1), IntImm(i8, 7)}), -128) << "wraps";
  EXPECT_EQ(i(u8, "bitwise_not", {IntImm(u8, 0x0f)}), 0xf0);
  EXPECT_EQ(i(kInt32, "bitwise_and", {IntImm(kInt32, 12), IntImm(kInt32, 10)}), 8);
  EXPECT_EQ(i(kInt32, "bitwise_or", {IntImm(kInt32, 12), IntImm(kInt32, 10)}), 14);
  EXPECT_EQ(i(kInt32, "bitwise_xor", {IntImm(kInt32, 12), IntImm(kInt32, 10)}), 6);
  EXPECT_EQ(i(kInt32, "popcount", {IntImm(i8, -1)}), 8) << "counts the type's bits only";
  EXPECT_EQ(i(kInt32, "reinterpret", {FloatImm(kFloat32, 1.0)}), 0x3f800000);
  EXPECT_EQ(EvalF(call_intrin(kFloat32, "reinterpret", {IntImm(kInt32, 0x40400000)})), 3.0);
  EXPECT_EQ(i(kInt32, "likely", {IntImm(kInt32, 5)}), 5);
  // if_then_else evaluates only the taken branch: the other divides by zero.
  Var zero("zero");
  PrimExpr guarded = call_intrin(kInt32, "if_then_else",
                                 {NE(zero, 0), Div(IntImm(kInt32, 1), zero), IntImm(kInt32, 7)});
  EXPECT_EQ(Interpreter().Evaluate(guarded, {{zero, Value::Int(kInt32, 0)}}).AsInt(), 7);
}

TEST(InterpreterTest, ExternFunctionsReachBuffersThroughHandles) {
  // gemm4x4(C, A, B): C += A * B on 4x4 int32 matrices, row-major.
  Interpreter interp;
  interp.RegisterExtern("gemm4x4", [](const std::vector<Value>& args, DataType) {
    int32_t* c = args[0].memory->As<int32_t>(0, 16);
    int32_t* a = args[1].memory->As<int32_t>(0, 16);
    int32_t* b = args[2].memory->As<int32_t>(0, 16);
    for (int r = 0; r < 4; ++r) {
      for (int col = 0; col < 4; ++col) {
        for (int k = 0; k < 4; ++k) c[r * 4 + col] += a[r * 4 + k] * b[k * 4 + col];
      }
    }
    return Value::Int(DataType::Int(32), 0);
  });
  interp.RegisterExtern("scale", [](const std::vector<Value>& args, DataType t) {
    return Value::Int(t, args[0].AsInt() * args[1].AsInt());
  });
  Buffer a = DeclBuffer({4, 4}, kInt32, "A"), b = DeclBuffer({4, 4}, kInt32, "B");
  Buffer c = DeclBuffer({4, 4}, kInt32, "C");
  Stmt body = SeqStmt({
      Evaluate(call_extern(kInt32, "gemm4x4", {c->data, a->data, b->data})),
      BufferStore(c, call_extern(kInt32, "scale", {BufferLoad(c, {0, 0}), 3}), {0, 0}),
  });
  HostArray ha(kInt32, {4, 4}), hb(kInt32, {4, 4}), hc(kInt32, {4, 4});
  for (int k = 0; k < 16; ++k) {
    ha.SetInt(k, k);
    hb.SetInt(k, k % 4 == k / 4 ? 2 : 0);  // 2 * identity
  }
  interp.Run(MakePrimFunc({c, a, b}, {}, body), {hc, ha, hb});
  EXPECT_EQ(hc.GetInt(0), 0);
  for (int k = 1; k < 16; ++k) EXPECT_EQ(hc.GetInt(k), 2 * k);
  hc.SetInt(0, 0);
  ha.SetInt(0, 5);
  interp.Run(MakePrimFunc({c, a, b}, {}, body), {hc, ha, hb});
  EXPECT_EQ(hc.GetInt(0), 30);
}

TEST(InterpreterTest, SelectBetweenHandles) {
  Interpreter interp;
  interp.RegisterExtern("first_element", [](const std::vector<Value>& args, DataType t) {
    return Value::Int(t, *args[0].memory->As<int32_t>(0, 1));
  });
  Buffer a = DeclBuffer({1}, kInt32, "A"), b = DeclBuffer({1}, kInt32, "B");
  Var n("n");
  PrimExpr chosen = call_extern(kInt32, "first_element", {Select(n > 0, a->data, b->data)});
  Stmt body = BufferStore(a, chosen, {0});
  HostArray ha(kInt32, {1}), hb(kInt32, {1});
  ha.SetInt(0, 1);
  hb.SetInt(0, 2);
  interp.Run(MakePrimFunc({a, b}, {n}, body), {ha, hb, Value::Int(kInt32, 0)});
  EXPECT_EQ(ha.GetInt(0), 2);
}

TEST(InterpreterTest, HostArrayConvertsElementsByDtype) {
  HostArray h(DataType::Float(16), {3});
  h.SetFloat(0, 0.1);
  EXPECT_EQ(h.GetFloat(0), 0.0999755859375);
  HostArray b(DataType::Int(8), {2});
  b.SetInt(1, 300);
  EXPECT_EQ(b.GetInt(1), 44);
  EXPECT_EQ(b.data<int8_t>()[1], 44);
  HostArray copy = b.Copy();
  b.SetInt(1, 1);
  EXPECT_EQ(copy.GetInt(1), 44) << "a copy owns its memory";
  EXPECT_EQ(reinterpret_cast<uintptr_t>(h.memory()->data()) % 64, 0u);
}

}  // namespace
}  // namespace loom::tir
