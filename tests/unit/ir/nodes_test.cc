// Construction and validation of every node kind in node_table.def: derived dtypes, defaults
// filled in by Validate(), and the user errors of invalid construction.
#include <gtest/gtest.h>

#include "ir_test_util.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/node.h"
#include "loom/ir/printer.h"

namespace loom {
namespace {

const DataType kInt32 = DataType::Int(32);
const DataType kInt64 = DataType::Int(64);
const DataType kFloat32 = DataType::Float(32);
const DataType kBool = DataType::Bool();

CommReducer SumReducer(DataType t) {
  Var lhs("lhs", t), rhs("rhs", t);
  return CommReducer({lhs}, {rhs}, {Add(lhs, rhs)}, {make_zero(t)});
}

Stmt Nop() { return Evaluate(0); }

// ---------------------------------------------------------------- constants and variables

TEST(Nodes, IntImmTypesAndRange) {
  EXPECT_EQ(IntImm(kInt64, int64_t{1} << 40)->value, int64_t{1} << 40);
  EXPECT_EQ(IntImm(DataType::UInt(8), 255).dtype(), DataType::UInt(8));
  EXPECT_EQ(IntImm(kBool, 1).dtype(), kBool);
  EXPECT_EQ(PrimExpr(7).dtype(), kInt32);
  EXPECT_EQ(UserErrorOf([] { IntImm(DataType::Int(8), 200); }),
            "integer constant 200 does not fit in int8 (range [-128, 127])");
  EXPECT_USER_ERROR(IntImm(DataType::UInt(8), -1), "does not fit in uint8 (range [0, 255])");
  EXPECT_USER_ERROR(IntImm(kBool, 2), "does not fit in bool");
  EXPECT_USER_ERROR(IntImm(kFloat32, 1), "cannot build IntImm of type float32");
  EXPECT_USER_ERROR(IntImm(DataType::Int(32, 4), 1), "cannot build IntImm of vector type int32x4");
}

TEST(Nodes, FloatAndStringImm) {
  EXPECT_EQ(PrimExpr(1.5f).dtype(), kFloat32);
  EXPECT_EQ(FloatImm(DataType::Float(64), 0.25)->value, 0.25);
  EXPECT_USER_ERROR(FloatImm(kInt32, 1.0), "cannot build FloatImm of type int32");
  EXPECT_USER_ERROR(FloatImm(DataType::Float(32, 4), 1.0), "use a scalar float type");
  StringImm s("hello");
  EXPECT_EQ(s->value, "hello");
  EXPECT_EQ(s.dtype(), DataType::Handle());
}

TEST(Nodes, Variables) {
  Var x("x");
  EXPECT_EQ(x.dtype(), kInt32);
  EXPECT_EQ(x.name(), "x");
  EXPECT_FALSE(x->is_size_var);
  EXPECT_FALSE(x.same_as(Var("x"))) << "variables are compared by identity, not by name";
  Var n = SizeVar("n", kInt64);
  EXPECT_TRUE(n->is_size_var);
  EXPECT_EQ(n.dtype(), kInt64);
  EXPECT_USER_ERROR(SizeVar("m", kFloat32),
                    "size variable 'm' must have a signed integer type, got float32");
  EXPECT_USER_ERROR(Var("v", DataType::Void()), "variable 'v' cannot have type void");
}

TEST(Nodes, Cast) {
  Var x("x");
  EXPECT_EQ(Cast(kInt64, x).dtype(), kInt64);
  EXPECT_EQ(Cast(DataType::Float(32, 4), Ramp(x, 1, 4)).dtype(), DataType::Float(32, 4));
  EXPECT_USER_ERROR(Cast(DataType::Int(64, 4), x), "the number of lanes must stay the same");
  EXPECT_USER_ERROR(Cast(kInt64, PrimExpr()), "cannot build Cast: field 'value' is undefined");
}

// ---------------------------------------------------------------- operators

TEST(Nodes, ArithmeticTakesTheOperandType) {
  Var x("x", kInt64), y("y", kInt64);
  for (PrimExpr e : {PrimExpr(Add(x, y)), PrimExpr(Sub(x, y)), PrimExpr(Mul(x, y)),
                     PrimExpr(Div(x, y)), PrimExpr(Mod(x, y)), PrimExpr(FloorDiv(x, y)),
                     PrimExpr(FloorMod(x, y)), PrimExpr(Min(x, y)), PrimExpr(Max(x, y))}) {
    EXPECT_EQ(e.dtype(), kInt64) << NodeKindName(e.kind());
  }
  Var f("f", kFloat32);
  EXPECT_EQ(Div(f, f).dtype(), kFloat32);
  EXPECT_EQ(Add(Ramp(0, 1, 8), Broadcast(3, 8)).dtype(), DataType::Int(32, 8));
}

TEST(Nodes, ArithmeticRejectsMixedTypes) {
  Var x("x"), y("y", kInt64);
  EXPECT_EQ(UserErrorOf([&] { Add(x, y); }),
            "cannot build Add(x, y): operand types differ (int32 vs int64); cast one operand, "
            "or use the operators of expr_ops.h, which match types");
  EXPECT_USER_ERROR(FloorMod(x, y), "cannot build FloorMod(x, y): operand types differ");
  EXPECT_USER_ERROR(Min(Ramp(x, 1, 4), x), "operand types differ (int32x4 vs int32)");
  Var h("h", DataType::Handle());
  EXPECT_USER_ERROR(Mul(h, h), "cannot build Mul on operands of type handle");
  EXPECT_USER_ERROR(Sub(x, PrimExpr()), "cannot build Sub: field 'b' is undefined");
}

TEST(Nodes, ComparisonsAreBool) {
  Var x("x");
  for (PrimExpr e : {PrimExpr(EQ(x, 1)), PrimExpr(NE(x, 1)), PrimExpr(LT(x, 1)), PrimExpr(LE(x, 1)),
                     PrimExpr(GT(x, 1)), PrimExpr(GE(x, 1))}) {
    EXPECT_EQ(e.dtype(), kBool) << NodeKindName(e.kind());
  }
  EXPECT_EQ(LT(Ramp(x, 1, 4), Broadcast(x, 4)).dtype(), DataType::Bool(4));
  EXPECT_USER_ERROR(GE(x, Var("y", kInt64)), "cannot build GE(x, y): operand types differ");
}

TEST(Nodes, LogicalNeedsBool) {
  Var p("p", kBool), q("q", kBool), x("x");
  EXPECT_EQ(And(p, q).dtype(), kBool);
  EXPECT_EQ(Or(p, q).dtype(), kBool);
  EXPECT_EQ(Not(p).dtype(), kBool);
  EXPECT_EQ(Not(LT(Ramp(x, 1, 4), Broadcast(x, 4))).dtype(), DataType::Bool(4));
  EXPECT_EQ(UserErrorOf([&] { And(x, x); }),
            "cannot build And(x, x): operands must be bool, got int32");
  EXPECT_USER_ERROR(Or(p, x), "cannot build Or(p, x): operand types differ");
  EXPECT_USER_ERROR(Not(x), "cannot build Not(x): operand must be bool, got int32");
}

TEST(Nodes, Select) {
  Var p("p", kBool), x("x"), y("y");
  EXPECT_EQ(Select(p, x, y).dtype(), kInt32);
  EXPECT_EQ(Select(p, Ramp(x, 1, 4), Broadcast(y, 4)).dtype(), DataType::Int(32, 4));
  EXPECT_EQ(Select(LT(Ramp(x, 1, 4), Broadcast(y, 4)), Ramp(x, 1, 4), Broadcast(y, 4)).dtype(),
            DataType::Int(32, 4));
  EXPECT_USER_ERROR(Select(x, x, y), "cannot build Select: condition x must be bool, got int32");
  EXPECT_USER_ERROR(Select(p, x, Var("z", kInt64)),
                    "cannot build Select: branch types differ (int32 vs int64)");
  EXPECT_USER_ERROR(Select(LT(Ramp(x, 1, 2), Broadcast(y, 2)), Ramp(x, 1, 4), Broadcast(y, 4)),
                    "condition has 2 lanes but the values have 4");
}

TEST(Nodes, RampAndBroadcast) {
  Var x("x", kInt64);
  Ramp ramp(x, IntImm(kInt64, 2), 8);
  EXPECT_EQ(ramp.dtype(), DataType::Int(64, 8));
  EXPECT_EQ(ramp->lanes, 8);
  EXPECT_EQ(Broadcast(1.0f, 4).dtype(), DataType::Float(32, 4));
  EXPECT_EQ(UserErrorOf([&] { Ramp(x, IntImm(kInt64, 1), 1); }),
            "cannot build Ramp with 1 lanes: need at least 2");
  EXPECT_USER_ERROR(Ramp(x, IntImm(kInt64, 1), 0), "cannot build Ramp with 0 lanes");
  EXPECT_USER_ERROR(Ramp(x, 1, 4), "base and stride must be scalars of one type");
  EXPECT_USER_ERROR(Ramp(Ramp(0, 1, 2), Ramp(0, 1, 2), 4), "must be scalars of one type");
  EXPECT_USER_ERROR(Broadcast(x, 1), "cannot build Broadcast with 1 lanes: need at least 2");
  EXPECT_USER_ERROR(Broadcast(Ramp(0, 1, 4), 2), "value must be a scalar, got int32x4");
}

TEST(Nodes, Shuffle) {
  PrimExpr a = Ramp(0, 1, 4), b = Ramp(10, 1, 2);
  Shuffle picked({a, b}, {5, 0, 4});
  EXPECT_EQ(picked.dtype(), DataType::Int(32, 3));
  EXPECT_EQ(Shuffle({a}, {2}).dtype(), kInt32) << "one index picks a scalar";
  EXPECT_USER_ERROR(Shuffle({a, b}, {6}), "index 6 is not a constant lane in [0, 6)");
  EXPECT_USER_ERROR(Shuffle({a}, {-1}), "index -1 is not a constant lane in [0, 4)");
  EXPECT_USER_ERROR(Shuffle({a}, {Var("i")}), "index i is not a constant lane");
  EXPECT_USER_ERROR(Shuffle({}, {0}), "vectors and indices must be non-empty");
  EXPECT_USER_ERROR(Shuffle({a}, {}), "vectors and indices must be non-empty");
  EXPECT_USER_ERROR(Shuffle({a, Broadcast(1.0f, 2)}, {0}),
                    "vectors of different element types (int32x4 vs float32x2)");
}

TEST(Nodes, Let) {
  Var x("x"), y("y", kInt64);
  Let let(x, 3, Cast(kInt64, x) + y);
  EXPECT_EQ(let.dtype(), kInt64) << "a Let has its body's type";
  EXPECT_USER_ERROR(Let(y, 3, y),
                    "cannot build Let y = 3: variable has type int64 but the value has type int32");
  EXPECT_USER_ERROR(Let(x, 3, PrimExpr()), "cannot build Let: field 'body' is undefined");
}

TEST(Nodes, CallAndOps) {
  Var f("f", kFloat32);
  EXPECT_TRUE(Op::Get("exp").same_as(Op::Get("exp"))) << "ops are interned";
  EXPECT_EQ(Op::Get("exp")->num_inputs, 1);
  EXPECT_EQ(Op::Get("exp")->effect, CallEffect::kPure);
  EXPECT_EQ(Op::Get("call_extern")->effect, CallEffect::kOpaque);
  Call exp(kFloat32, Op::Get("exp"), {f});
  EXPECT_EQ(exp.dtype(), kFloat32);
  EXPECT_EQ(call_extern(kInt32, "rand", {}).as<CallNode>()->args.size(), 1u);
  EXPECT_EQ(UserErrorOf([&] {
              Call(kFloat32, Op::Get("exp"), {f, f});
            }),
            "cannot call 'exp': it takes 1 argument(s), got 2");
  EXPECT_USER_ERROR(Call(kInt32, Op::Get("call_extern"), {1}),
                    "cannot build call_extern: the first argument must be the function name");
  EXPECT_USER_ERROR(Call(kInt32, Op::Get("call_pure_extern"), {}), "the first argument");
  EXPECT_USER_ERROR(Call(kFloat32, Op(), {f}), "cannot build Call: field 'op' is undefined");
  std::string unknown = UserErrorOf([] { Op::Get("expp"); });
  EXPECT_EQ(unknown.rfind("unknown operator 'expp'; the built-in operators are: call_extern, ", 0),
            0u)
      << unknown;
  EXPECT_NE(unknown.find("if_then_else"), std::string::npos) << unknown;
}

TEST(Nodes, BufferLoad) {
  Buffer a = DeclBuffer({4, 8}, kFloat32, "A");
  Var i("i"), j("j");
  EXPECT_EQ(BufferLoad(a, {i, j}).dtype(), kFloat32);
  EXPECT_EQ(BufferLoad(a, {i, Ramp(j, 1, 4)}).dtype(), DataType::Float(32, 4));
  EXPECT_EQ(UserErrorOf([&] { BufferLoad(a, {i}); }),
            "cannot build BufferLoad of buffer 'A': it has 2 dimension(s) but 1 index(es) were "
            "given");
  EXPECT_USER_ERROR(BufferLoad(a, {i, Var("f", kFloat32)}),
                    "cannot build BufferLoad: index f must be a signed integer, got float32");
  EXPECT_USER_ERROR(BufferLoad(Buffer(), {i}), "field 'buffer' is undefined");
}

TEST(Nodes, Reduce) {
  Var k("k");
  Buffer a = DeclBuffer({16}, kFloat32, "A");
  IterVar axis(Range(0, 16), k, IterVarType::kCommReduce, "");
  Reduce sum(SumReducer(kFloat32), {BufferLoad(a, {k})}, {axis}, PrimExpr(), 0, {});
  EXPECT_EQ(sum.dtype(), kFloat32);
  EXPECT_TRUE(is_const_true(sum->condition)) << "an absent condition means always";
  EXPECT_USER_ERROR(Reduce(SumReducer(kFloat32), {}, {axis}, PrimExpr(), 0, {}),
                    "the combiner yields 1 value(s) but 0 source(s) were given");
  EXPECT_USER_ERROR(Reduce(SumReducer(kFloat32), {BufferLoad(a, {k})}, {axis}, PrimExpr(), 1, {}),
                    "value_index 1 out of range");
  EXPECT_USER_ERROR(
      Reduce(SumReducer(kFloat32), {BufferLoad(a, {k})}, {axis}, PrimExpr(), 0, {1.0f, 2.0f}),
      "init must be empty or give one value per source");
  EXPECT_USER_ERROR(Reduce(CommReducer(), {1.0f}, {axis}, PrimExpr(), 0, {}),
                    "field 'combiner' is undefined");
}

// ---------------------------------------------------------------- statements

TEST(Nodes, LetStmtAndAttrStmtAndAssert) {
  Var x("x");
  EXPECT_EQ(LetStmt(x, 1, Nop())->var.get(), x.get());
  EXPECT_USER_ERROR(LetStmt(x, IntImm(kInt64, 1), Nop()),
                    "cannot build LetStmt x = T.int64(1): variable has type int32 but the value "
                    "has type int64");
  EXPECT_USER_ERROR(LetStmt(x, 1, Stmt()), "cannot build LetStmt: field 'body' is undefined");
  EXPECT_EQ(AttrStmt(x, "pragma", 1, Nop())->attr_key, "pragma");
  EXPECT_USER_ERROR(AttrStmt(x, "", 1, Nop()), "cannot build AttrStmt: attr_key is empty");
  EXPECT_USER_ERROR(AssertStmt(x, StringImm("x is zero"), Nop()),
                    "cannot build AssertStmt: condition x must be bool");
  EXPECT_USER_ERROR(AssertStmt(GT(x, 0), 1, Nop()), "the message must be a StringImm");
}

TEST(Nodes, BufferStore) {
  Buffer a = DeclBuffer({8}, kFloat32, "A");
  Var i("i");
  EXPECT_EQ(BufferStore(a, 1.0f, {i})->indices.size(), 1u);
  EXPECT_EQ(BufferStore(a, Broadcast(1.0f, 4), {Ramp(i, 1, 4)})->buffer.get(), a.get());
  EXPECT_EQ(UserErrorOf([&] { BufferStore(a, 1, {i}); }),
            "cannot store 1 (int32) into buffer 'A': the access has type float32");
  EXPECT_USER_ERROR(BufferStore(a, 1.0f, {Ramp(i, 1, 4)}), "the access has type float32x4");
  EXPECT_USER_ERROR(BufferStore(a, 1.0f, {i, i}), "it has 1 dimension(s) but 2 index(es)");
}

TEST(Nodes, Allocate) {
  Var data("buf", DataType::Handle());
  Allocate alloc(data, kFloat32, {16, Var("n")}, PrimExpr(), Nop(), "");
  EXPECT_TRUE(is_const_true(alloc->condition));
  EXPECT_EQ(alloc->storage_scope, "global");
  EXPECT_USER_ERROR(Allocate(data, kFloat32, {}, PrimExpr(), Nop(), "shared"),
                    "cannot allocate 'buf': extents must be non-empty");
  EXPECT_USER_ERROR(Allocate(data, kFloat32, {1.0f}, PrimExpr(), Nop(), "shared"),
                    "cannot build Allocate: index T.float32(1.0) must be a signed integer");
}

TEST(Nodes, For) {
  Var i("i"), n("n");
  For loop(i, 0, n, ForKind::kSerial, Nop(), IterVar(), {});
  EXPECT_EQ(loop->for_kind, ForKind::kSerial);
  IterVar thread(Range(0, 32), Var("tx"), IterVarType::kThreadIndex, "threadIdx.x");
  EXPECT_EQ(For(i, 0, 32, ForKind::kThreadBinding, Nop(), thread, {})->thread_binding.get(),
            thread.get());
  EXPECT_USER_ERROR(For(i, 0, 32, ForKind::kThreadBinding, Nop(), IterVar(), {}),
                    "a thread_binding is required exactly when the kind is thread_binding");
  EXPECT_USER_ERROR(For(i, 0, 32, ForKind::kParallel, Nop(), thread, {}),
                    "a thread_binding is required exactly when the kind is thread_binding");
  EXPECT_EQ(
      UserErrorOf([&] { For(i, 0, IntImm(kInt64, 8), ForKind::kSerial, Nop(), IterVar(), {}); }),
      "cannot build loop over 'i': min (int32) and extent (int64) must have the loop "
      "variable's type (int32)");
  EXPECT_USER_ERROR(For(Var("f", kFloat32), 0.0f, 1.0f, ForKind::kSerial, Nop(), IterVar(), {}),
                    "its variable must be a scalar signed integer, got float32");
  EXPECT_USER_ERROR(For(i, 0, n, ForKind::kSerial, Stmt(), IterVar(), {}),
                    "field 'body' is undefined");
}

TEST(Nodes, WhileIfSeqEvaluate) {
  Var x("x"), p("p", kBool);
  EXPECT_TRUE(While(p, Nop())->condition.same_as(p));
  EXPECT_USER_ERROR(While(x, Nop()), "cannot build While: condition x must be a scalar bool");
  EXPECT_FALSE(IfThenElse(p, Nop(), Stmt())->else_case.defined()) << "else is optional";
  EXPECT_USER_ERROR(IfThenElse(x, Nop(), Stmt()),
                    "cannot build IfThenElse: condition x must be a scalar bool, got int32");
  EXPECT_USER_ERROR(IfThenElse(p, Stmt(), Nop()), "field 'then_case' is undefined");
  EXPECT_EQ(SeqStmt({Nop(), Nop()})->seq.size(), 2u);
  EXPECT_USER_ERROR(SeqStmt(Array<Stmt>{}), "cannot build an empty SeqStmt");
  EXPECT_USER_ERROR(SeqStmt({Nop(), Stmt()}), "cannot build SeqStmt: field 'seq' is undefined");
  EXPECT_USER_ERROR(Evaluate(PrimExpr()), "cannot build Evaluate: field 'value' is undefined");
}

// ---------------------------------------------------------------- other objects

TEST(Nodes, RangeAndIterVar) {
  Range r = RangeFromBeginEnd(2, 10);
  EXPECT_EQ(r->extent.as<IntImmNode>()->value, 8);
  EXPECT_USER_ERROR(Range(0.0f, 1),
                    "cannot build Range(T.float32(0.0), 1): bounds must be integers");
  Var i("i");
  EXPECT_USER_ERROR(
      IterVar(Range(IntImm(kInt64, 0), IntImm(kInt64, 4)), i, IterVarType::kDataPar, ""),
      "cannot build IterVar 'i': its domain must have the variable's type int32");
  EXPECT_FALSE(IterVar(Range(), i, IterVarType::kOpaque, "")->dom.defined());
}

TEST(Nodes, CommReducer) {
  Var a("a"), b("b");
  EXPECT_EQ(SumReducer(kInt32)->result.size(), 1u);
  EXPECT_USER_ERROR(CommReducer({a}, {b}, {Add(a, b)}, {}),
                    "lhs, rhs, result and identity_element must have one entry per reduced value");
  EXPECT_USER_ERROR(CommReducer({a}, {b}, {Add(a, b)}, {0.0f}),
                    "result 0 has type int32 but its identity element has type float32");
}

TEST(Nodes, Buffer) {
  Buffer a = DeclBuffer({4, Var("n")}, kFloat32, "A");
  EXPECT_EQ(a->data.dtype(), DataType::Handle());
  EXPECT_TRUE(a->strides.empty());
  EXPECT_EQ(a->scope, "global");
  Var data("d", DataType::Handle());
  Buffer defaults(data, kFloat32, {4}, {}, PrimExpr(), "B", "", 64, 1);
  EXPECT_EQ(defaults->scope, "global");
  EXPECT_EQ(defaults->elem_offset.as<IntImmNode>()->value, 0);
  EXPECT_USER_ERROR(Buffer(Var("x"), kFloat32, {4}, {}, 0, "B", "", 64, 1),
                    "cannot build buffer 'B': its data variable must be a handle");
  EXPECT_USER_ERROR(Buffer(data, DataType::Void(), {4}, {}, 0, "B", "", 64, 1),
                    "cannot build buffer 'B' of type void");
  EXPECT_USER_ERROR(Buffer(data, kFloat32, {4, 4}, {1}, 0, "B", "", 64, 1),
                    "cannot build buffer 'B': 1 strides for 2 dimensions");
  EXPECT_USER_ERROR(Buffer(data, kFloat32, {4}, {}, 0, "B", "", 48, 1),
                    "alignment 48 is not a positive power of two");
  EXPECT_USER_ERROR(Buffer(data, kFloat32, {4}, {}, 0, "B", "", 0, 1),
                    "alignment 0 is not a positive power of two");
  EXPECT_USER_ERROR(Buffer(data, kFloat32, {4}, {}, 0, "B", "", 64, 0),
                    "offset_factor must be at least 1");
  EXPECT_USER_ERROR(Buffer(data, kFloat32, {4.0f}, {}, 0, "B", "", 64, 1),
                    "cannot build Buffer: index T.float32(4.0) must be a signed integer");
}

TEST(Nodes, PrimFunc) {
  Buffer a = DeclBuffer({8}, kFloat32, "A");
  Var n("n");
  PrimFunc f({a->data, n}, {{a->data, a}}, Nop(), DataType::Void(), {});
  EXPECT_EQ(f->params.size(), 2u);
  EXPECT_EQ(UserErrorOf([&] {
              PrimFunc({n}, {{a->data, a}}, Nop(), DataType::Void(), {});
            }),
            "cannot build PrimFunc: buffer 'A' is bound to A, which is not a parameter");
  EXPECT_USER_ERROR(PrimFunc({n}, {}, Stmt(), DataType::Void(), {}),
                    "cannot build PrimFunc: field 'body' is undefined");
}

// ---------------------------------------------------------------- the node system

TEST(Nodes, KindsAndDowncasts) {
  Var x("x");
  PrimExpr sum = Add(x, 1);
  EXPECT_EQ(sum.kind(), NodeKind::Add);
  EXPECT_STREQ(NodeKindName(sum.kind()), "Add");
  EXPECT_STREQ(NodeKindName(NodeKind::PrimFunc), "PrimFunc");
  EXPECT_NE(sum.as<AddNode>(), nullptr);
  EXPECT_EQ(sum.as<SubNode>(), nullptr);
  EXPECT_NE(sum.as<ExprNode>(), nullptr);
  EXPECT_EQ(sum.as<StmtNode>(), nullptr);
  Stmt s = Nop();
  EXPECT_NE(s.as<StmtNode>(), nullptr);
  EXPECT_EQ(s.as<ExprNode>(), nullptr);
  EXPECT_EQ(Range(0, 1).as<ExprNode>(), nullptr);
  EXPECT_EQ(Range(0, 1).as<StmtNode>(), nullptr);
  EXPECT_EQ(PrimExpr().as<AddNode>(), nullptr);
  EXPECT_EQ(PrimExpr().kind(), NodeKind::kOther);
  EXPECT_TRUE(Downcast<Var>(PrimExpr(x)).same_as(x));
  EXPECT_FALSE(Downcast<Var>(PrimExpr()).defined());
  EXPECT_THROW(Downcast<Var>(sum), InternalError);
  EXPECT_STREQ(ForKindName(ForKind::kUnrolled), "unroll");
  EXPECT_STREQ(IterVarTypeName(IterVarType::kVirtualThread), "VirtualThread");
  EXPECT_STREQ(CallEffectName(CallEffect::kUpdateState), "update_state");
}

TEST(Nodes, ReferenceCounting) {
  Var x("x");
  EXPECT_EQ(x.get()->use_count(), 1);
  {
    PrimExpr sum = Add(x, x);
    EXPECT_EQ(x.get()->use_count(), 3);
    PrimExpr copy = sum;
    EXPECT_TRUE(copy.same_as(sum));
    EXPECT_EQ(sum.get()->use_count(), 2);
  }
  EXPECT_EQ(x.get()->use_count(), 1) << "children are released with their parent";
  PrimExpr moved = std::move(x);
  EXPECT_EQ(moved.get()->use_count(), 1);
}

TEST(Nodes, FailedConstructionLeavesNoHandle) {
  Var x("x"), y("y", kInt64);
  PrimExpr e = x;
  EXPECT_THROW(e = Add(x, y), Error);
  EXPECT_TRUE(e.same_as(x));
  EXPECT_EQ(x.get()->use_count(), 2) << "the rejected node released its operand";
}

}  // namespace
}  // namespace loom
