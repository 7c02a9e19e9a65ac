// Golden text for every expression and statement kind, other IR objects and a PrimFunc. The
// format is TVMScript-like and stable: other tests and IR dumps depend on it.
#include "loom/ir/printer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>

#include "loom/ir/expr_ops.h"

namespace loom {
namespace {

const DataType kInt64 = DataType::Int(64);
const DataType kFloat32 = DataType::Float(32);
const DataType kBool = DataType::Bool();

class PrinterTest : public ::testing::Test {
 protected:
  Var x{"x"}, y{"y"}, z{"z"}, n{"n"}, i{"i"}, k{"k"};
  Var p{"p", kBool}, q{"q", kBool}, r{"r", kBool};
  Var f{"f", kFloat32}, g{"g", kFloat32};
  Buffer a = DeclBuffer({16}, kFloat32, "A");
  Buffer b2d = DeclBuffer({4, 8}, kFloat32, "B");
};

TEST_F(PrinterTest, Constants) {
  EXPECT_EQ(ToScript(PrimExpr(3)), "3");
  EXPECT_EQ(ToScript(PrimExpr(-5)), "-5");
  EXPECT_EQ(ToScript(IntImm(kInt64, int64_t{1} << 40)), "T.int64(1099511627776)");
  EXPECT_EQ(ToScript(IntImm(DataType::Int(8), -3)), "T.int8(-3)");
  EXPECT_EQ(ToScript(IntImm(DataType::UInt(8), 255)), "T.uint8(255)");
  EXPECT_EQ(ToScript(IntImm(kBool, 1)), "T.bool(True)");
  EXPECT_EQ(ToScript(IntImm(kBool, 0)), "T.bool(False)");
  EXPECT_EQ(ToScript(PrimExpr(1.5f)), "T.float32(1.5)");
  EXPECT_EQ(ToScript(PrimExpr(2.0f)), "T.float32(2.0)");
  EXPECT_EQ(ToScript(PrimExpr(0.1f)), "T.float32(0.1)") << "shortest text that reads back";
  EXPECT_EQ(ToScript(FloatImm(DataType::Float(64), 0.1)), "T.float64(0.1)");
  EXPECT_EQ(ToScript(FloatImm(DataType::Float(64), 1.0 / 3)), "T.float64(0.3333333333333333)");
  EXPECT_EQ(ToScript(FloatImm(kFloat32, 1.0f / 3)), "T.float32(0.33333334)");
  EXPECT_EQ(ToScript(FloatImm(DataType::Float(64), 1e20)), "T.float64(1e+20)");
  EXPECT_EQ(ToScript(FloatImm(DataType::Float(64), -2.5e-8)), "T.float64(-2.5e-08)");
  EXPECT_EQ(ToScript(FloatImm(kFloat32, std::numeric_limits<double>::infinity())),
            "T.float32(\"inf\")");
  EXPECT_EQ(ToScript(FloatImm(kFloat32, -std::numeric_limits<double>::infinity())),
            "T.float32(\"-inf\")");
  EXPECT_EQ(ToScript(FloatImm(kFloat32, std::nan(""))), "T.float32(\"nan\")");
  EXPECT_EQ(ToScript(StringImm("say \"hi\"\n\ttab\\")), "\"say \\\"hi\\\"\\n\\ttab\\\\\"");
}

TEST_F(PrinterTest, VariablesAndNameClashes) {
  EXPECT_EQ(ToScript(x), "x");
  Var other_x("x"), unnamed("");
  EXPECT_EQ(ToScript(Add(Add(x, other_x), Add(x, unnamed))), "x + x_1 + (x + v)");
  Var x_1("x_1");
  EXPECT_EQ(ToScript(Add(Add(x, other_x), x_1)), "x + x_1 + x_1_1")
      << "names are given in reading order, and a suffixed name never collides with a "
         "variable that has it as its own name";
  EXPECT_EQ(ToScript(Sub(Mul(other_x, 2), Min(x, FloorDiv(other_x, x)))),
            "x * 2 - T.min(x_1, x // x_1)");
}

TEST_F(PrinterTest, ArithmeticOperators) {
  EXPECT_EQ(ToScript(Add(x, y)), "x + y");
  EXPECT_EQ(ToScript(Sub(x, y)), "x - y");
  EXPECT_EQ(ToScript(Mul(x, y)), "x * y");
  EXPECT_EQ(ToScript(Div(x, y)), "T.truncdiv(x, y)");
  EXPECT_EQ(ToScript(Mod(x, y)), "T.truncmod(x, y)");
  EXPECT_EQ(ToScript(Div(f, g)), "f / g") << "float division is true division";
  EXPECT_EQ(ToScript(FloorDiv(x, y)), "x // y");
  EXPECT_EQ(ToScript(FloorMod(x, y)), "x % y");
  EXPECT_EQ(ToScript(Min(x, y)), "T.min(x, y)");
  EXPECT_EQ(ToScript(Max(x, Min(y, 3))), "T.max(x, T.min(y, 3))");
  EXPECT_EQ(ToScript(Cast(kInt64, x)), "T.Cast(\"int64\", x)");
  EXPECT_EQ(ToScript(Add(x, -1)), "x + -1");
}

TEST_F(PrinterTest, ParenthesesFollowPythonPrecedence) {
  EXPECT_EQ(ToScript(Mul(Add(x, y), z)), "(x + y) * z");
  EXPECT_EQ(ToScript(Add(x, Mul(y, z))), "x + y * z");
  EXPECT_EQ(ToScript(Sub(Sub(x, y), z)), "x - y - z");
  EXPECT_EQ(ToScript(Sub(x, Sub(y, z))), "x - (y - z)");
  EXPECT_EQ(ToScript(Sub(x, Add(y, z))), "x - (y + z)");
  EXPECT_EQ(ToScript(FloorDiv(Mul(x, y), z)), "x * y // z");
  EXPECT_EQ(ToScript(Mul(x, FloorDiv(y, z))), "x * (y // z)");
  EXPECT_EQ(ToScript(FloorMod(FloorDiv(x, 4), 2)), "x // 4 % 2");
  EXPECT_EQ(ToScript(FloorDiv(x, FloorMod(y, 2))), "x // (y % 2)");
  EXPECT_EQ(ToScript(Mul(Div(x, y), z)), "T.truncdiv(x, y) * z");
  EXPECT_EQ(ToScript(Div(Add(x, 1), 2)), "T.truncdiv(x + 1, 2)");
}

TEST_F(PrinterTest, ComparisonsAndLogic) {
  EXPECT_EQ(ToScript(EQ(x, y)), "x == y");
  EXPECT_EQ(ToScript(NE(x, y)), "x != y");
  EXPECT_EQ(ToScript(LT(x, y)), "x < y");
  EXPECT_EQ(ToScript(LE(x, y)), "x <= y");
  EXPECT_EQ(ToScript(GT(x, y)), "x > y");
  EXPECT_EQ(ToScript(GE(Add(x, 1), Mul(y, 2))), "x + 1 >= y * 2");
  EXPECT_EQ(ToScript(EQ(LT(x, y), p)), "(x < y) == p") << "comparisons do not chain";
  EXPECT_EQ(ToScript(And(p, q)), "p and q");
  EXPECT_EQ(ToScript(Or(p, q)), "p or q");
  EXPECT_EQ(ToScript(Not(p)), "not p");
  EXPECT_EQ(ToScript(Or(And(p, q), r)), "p and q or r");
  EXPECT_EQ(ToScript(And(Or(p, q), r)), "(p or q) and r");
  EXPECT_EQ(ToScript(And(p, And(q, r))), "p and (q and r)");
  EXPECT_EQ(ToScript(Not(And(p, q))), "not (p and q)");
  EXPECT_EQ(ToScript(And(Not(p), q)), "not p and q");
  EXPECT_EQ(ToScript(Not(LT(x, y))), "not x < y");
  // (Not(Not(p)) would copy the inner handle: a single-operand handle built from its own type.)
  EXPECT_EQ(ToScript(Not(PrimExpr(Not(p)))), "not not p");
  EXPECT_EQ(ToScript(And(LT(x, y), GE(y, 0))), "x < y and y >= 0");
}

TEST_F(PrinterTest, OtherExpressions) {
  EXPECT_EQ(ToScript(Select(p, x, Add(y, 1))), "T.Select(p, x, y + 1)");
  EXPECT_EQ(ToScript(Ramp(x, 2, 4)), "T.Ramp(x, 2, 4)");
  EXPECT_EQ(ToScript(Broadcast(f, 8)), "T.Broadcast(f, 8)");
  EXPECT_EQ(ToScript(Shuffle({Ramp(0, 1, 4), Ramp(10, 1, 2)}, {5, 0})),
            "T.Shuffle([T.Ramp(0, 1, 4), T.Ramp(10, 1, 2)], [5, 0])");
  EXPECT_EQ(ToScript(Let(x, Mul(y, 2), Add(x, 1))), "T.Let(x + 1, where={x: y * 2})");
  EXPECT_EQ(ToScript(call_intrin(kFloat32, "exp", {f})), "T.exp(f)");
  EXPECT_EQ(ToScript(call_intrin(DataType::Int(32), "if_then_else", {p, x, 0})),
            "T.if_then_else(p, x, 0)");
  EXPECT_EQ(ToScript(call_extern(kFloat32, "my_fn", {f, x})),
            "T.call_extern(\"float32\", \"my_fn\", f, x)");
  EXPECT_EQ(ToScript(BufferLoad(a, {i})), "A[i]");
  EXPECT_EQ(ToScript(BufferLoad(b2d, {Add(i, 1), Ramp(0, 1, 4)})), "B[i + 1, T.Ramp(0, 1, 4)]");
}

TEST_F(PrinterTest, Reduce) {
  Var lhs("l", kFloat32), rhs("r", kFloat32);
  CommReducer sum({lhs}, {rhs}, {Add(lhs, rhs)}, {0.0f});
  IterVar axis(Range(0, 16), k, IterVarType::kCommReduce, "");
  Reduce reduce(sum, {BufferLoad(a, {k})}, {axis}, LT(k, n), 0, {});
  EXPECT_EQ(ToScript(reduce),
            "T.reduce(T.comm_reducer(lambda l, r: [l + r], [T.float32(0.0)]), source=[A[k]], "
            "init=[], axis=[T.iter_var(k, T.Range(0, 16), \"CommReduce\")], where=k < n, "
            "value_index=0)");
}

TEST_F(PrinterTest, OtherObjects) {
  EXPECT_EQ(ToScript(Range(1, n)), "T.Range(1, n)");
  EXPECT_EQ(ToScript(IterVar(Range(0, 32), Var("tx"), IterVarType::kThreadIndex, "threadIdx.x")),
            "T.iter_var(tx, T.Range(0, 32), \"ThreadIndex\", \"threadIdx.x\")");
  EXPECT_EQ(ToScript(IterVar(Range(), x, IterVarType::kOpaque, "")),
            "T.iter_var(x, None, \"Opaque\")");
  EXPECT_EQ(ToScript(Op::Get("exp")), "T.exp");
  EXPECT_EQ(ToScript(a), "T.Buffer((16,), \"float32\")");
  EXPECT_EQ(ToScript(b2d), "T.Buffer((4, 8), \"float32\")");
  Buffer strided(Var("d", DataType::Handle()), DataType::Int(8), {n, 4}, {8, 1}, Var("off"), "S",
                 "shared", 16, 4);
  EXPECT_EQ(ToScript(strided),
            "T.Buffer((n, 4), \"int8\", strides=(8, 1), elem_offset=off, scope=\"shared\", "
            "align=16, offset_factor=4)");
  EXPECT_EQ(ToScript(PrimExpr()), "None");
  std::ostringstream os;
  os << Add(x, 1);
  EXPECT_EQ(os.str(), "x + 1");
}

TEST_F(PrinterTest, SimpleStatements) {
  EXPECT_EQ(ToScript(Evaluate(0)), "T.evaluate(0)\n");
  EXPECT_EQ(ToScript(BufferStore(a, Add(BufferLoad(a, {i}), 1.0f), {i})),
            "A[i] = A[i] + T.float32(1.0)\n");
  EXPECT_EQ(ToScript(LetStmt(x, Mul(y, 2), Evaluate(x))), "x: T.int32 = y * 2\nT.evaluate(x)\n");
  EXPECT_EQ(ToScript(AssertStmt(GT(x, 0), StringImm("x must be positive"), Evaluate(x))),
            "assert x > 0, \"x must be positive\"\nT.evaluate(x)\n");
  EXPECT_EQ(ToScript(SeqStmt({Evaluate(x), Evaluate(y)})), "T.evaluate(x)\nT.evaluate(y)\n");
}

TEST_F(PrinterTest, BlockStatements) {
  EXPECT_EQ(ToScript(IfThenElse(LT(x, 4), Evaluate(x), Stmt())), "if x < 4:\n    T.evaluate(x)\n");
  EXPECT_EQ(ToScript(IfThenElse(p, Evaluate(x), Evaluate(y))),
            "if p:\n    T.evaluate(x)\nelse:\n    T.evaluate(y)\n");
  EXPECT_EQ(ToScript(While(LT(x, 10), Evaluate(x))), "while x < 10:\n    T.evaluate(x)\n");
  EXPECT_EQ(ToScript(AttrStmt(StringImm("default"), "pragma_scope", 1, Evaluate(0))),
            "with T.attr(\"default\", \"pragma_scope\", 1):\n    T.evaluate(0)\n");
  IterVar tx(Range(0, 32), Var("tx"), IterVarType::kThreadIndex, "threadIdx.x");
  EXPECT_EQ(ToScript(AttrStmt(tx, "thread_extent", 32, Evaluate(0))),
            "with T.attr(T.iter_var(tx, T.Range(0, 32), \"ThreadIndex\", \"threadIdx.x\"), "
            "\"thread_extent\", 32):\n    T.evaluate(0)\n");
  Var buf("buf", DataType::Handle());
  EXPECT_EQ(ToScript(Allocate(buf, kFloat32, {16, n}, PrimExpr(), Evaluate(0), "")),
            "buf = T.allocate([16, n], \"float32\", \"global\")\nT.evaluate(0)\n");
  EXPECT_EQ(ToScript(Allocate(buf, kFloat32, {16}, p, Evaluate(0), "shared")),
            "buf = T.allocate([16], \"float32\", \"shared\", condition=p)\nT.evaluate(0)\n");
}

TEST_F(PrinterTest, Loops) {
  Stmt body = Evaluate(i);
  auto loop = [&](PrimExpr min, PrimExpr extent, ForKind kind) {
    return ToScript(For(i, min, extent, kind, body, IterVar(), {}));
  };
  EXPECT_EQ(loop(0, n, ForKind::kSerial), "for i in range(n):\n    T.evaluate(i)\n");
  EXPECT_EQ(loop(1, n, ForKind::kSerial), "for i in T.serial(1, 1 + n):\n    T.evaluate(i)\n");
  EXPECT_EQ(loop(2, 8, ForKind::kSerial), "for i in T.serial(2, 10):\n    T.evaluate(i)\n");
  EXPECT_EQ(loop(0, n, ForKind::kParallel), "for i in T.parallel(0, n):\n    T.evaluate(i)\n");
  EXPECT_EQ(loop(0, 4, ForKind::kVectorized), "for i in T.vectorized(0, 4):\n    T.evaluate(i)\n");
  EXPECT_EQ(loop(0, 4, ForKind::kUnrolled), "for i in T.unroll(0, 4):\n    T.evaluate(i)\n");
  IterVar tx(Range(0, 32), Var("tx"), IterVarType::kThreadIndex, "threadIdx.x");
  EXPECT_EQ(ToScript(For(i, 0, 32, ForKind::kThreadBinding, body, tx, {})),
            "for i in T.thread_binding(0, 32, thread=\"threadIdx.x\"):\n    T.evaluate(i)\n");
  EXPECT_EQ(ToScript(For(i, 0, 16, ForKind::kSerial, body, IterVar(),
                         {{"pragma_unroll", PrimExpr(1)}, {"note", StringImm("hot")}})),
            "for i in T.serial(0, 16, annotations={\"note\": \"hot\", \"pragma_unroll\": 1}):\n"
            "    T.evaluate(i)\n");
  Var j("j");
  Stmt nest = For(i, 0, 4, ForKind::kSerial,
                  For(j, 0, 8, ForKind::kSerial,
                      SeqStmt({BufferStore(b2d, 0.0f, {i, j}), Evaluate(j)}), IterVar(), {}),
                  IterVar(), {});
  EXPECT_EQ(ToScript(nest),
            "for i in range(4):\n"
            "    for j in range(8):\n"
            "        B[i, j] = T.float32(0.0)\n"
            "        T.evaluate(j)\n");
}

TEST_F(PrinterTest, PrimFunc) {
  Stmt body = For(i, 0, n, ForKind::kSerial, BufferStore(a, Mul(BufferLoad(a, {i}), 2.0f), {i}),
                  IterVar(), {});
  PrimFunc func({a->data, n}, {{a->data, a}}, body, DataType::Void(), {});
  EXPECT_EQ(ToScript(func),
            "@T.prim_func\n"
            "def main(A: T.Buffer((16,), \"float32\"), n: T.int32):\n"
            "    for i in range(n):\n"
            "        A[i] = A[i] * T.float32(2.0)\n");
  PrimFunc named({a->data}, {{a->data, a}},
                 Evaluate(call_extern(DataType::Int(32), "use", {a->data})), DataType::Void(),
                 {{"global_symbol", StringImm("scale")}, {"tir.noalias", IntImm(kBool, 1)}});
  EXPECT_EQ(ToScript(named),
            "@T.prim_func\n"
            "def scale(A: T.Buffer((16,), \"float32\")):\n"
            "    T.func_attr({\"tir.noalias\": T.bool(True)})\n"
            "    T.evaluate(T.call_extern(\"int32\", \"use\", A.data))\n")
      << "the buffer takes the parameter's name; its handle reads as A.data";
}

}  // namespace
}  // namespace loom
