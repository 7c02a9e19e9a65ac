// Hand-written TIR for the statement and expression kinds schedules rarely produce: stack
// and workspace allocations, While, IfThenElse, AssertStmt, LetStmt/Let, explicit Ramp,
// Broadcast and Shuffle, gathers and scatters -- each against the interpreter.
#include "loom/ir/expr_ops.h"
#include "target_test_util.h"

namespace loom::target_test {
namespace {

DataType F32() { return DataType::Float(32); }
DataType I32() { return DataType::Int(32); }

Stmt Loop(Var i, int64_t extent, Stmt body) {
  return For(i, 0, IntImm(I32(), extent), ForKind::kSerial, body, IterVar(), {});
}

// B = (A * 2) + 1 through a temporary of `elements` floats (stack or workspace).
void CheckTemporary(int64_t elements) {
  Buffer A = DeclBuffer({IntImm(I32(), elements)}, F32(), "A");
  Buffer B = DeclBuffer({IntImm(I32(), elements)}, F32(), "B");
  Buffer T = DeclBuffer({IntImm(I32(), elements)}, F32(), "T");
  Var i("i"), j("j");
  Stmt fill = Loop(i, elements, BufferStore(T, BufferLoad(A, {i}) * 2.0f, {i}));
  Stmt use = Loop(j, elements, BufferStore(B, BufferLoad(T, {j}) + 1.0f, {j}));
  Stmt body = Allocate(T->data, F32(), {IntImm(I32(), elements)}, const_true(),
                       SeqStmt({fill, use}), "global");
  ExpectMatchesInterpreter(MakePrimFunc({A, B}, {}, body, "main"),
                           {RandomArray(F32(), {elements}, 1)},
                           {tir::HostArray(F32(), {elements})},
                           "temporary of " + std::to_string(elements));
}

TEST(CodegenLLVMStmt, StackAndWorkspaceAllocations) {
  CheckTemporary(100);     // 400 bytes: on the stack
  CheckTemporary(10000);   // 40 KB: from the workspace service
}

// LoopPartition copies a loop's body into its parts, so one variable can be the loop
// variable of a serial loop and, after it, of a loop inside a parallel loop's body (and a
// let variable likewise). The parallel body binds its own: the serial loop's value, which
// does not dominate the parallel loop, must not be captured (that was invalid LLVM IR).
TEST(CodegenLLVMStmt, AVariableReboundInAParallelBodyIsNotCaptured) {
  Buffer A = DeclBuffer({4, 8}, F32(), "A");
  Buffer B = DeclBuffer({4, 8}, F32(), "B");
  Var row("row"), column("column"), scale("scale", F32());
  auto copy_row = [&](PrimExpr r) {
    return Loop(column, 8,
                LetStmt(scale, FloatImm(F32(), 2.0),
                        BufferStore(B, BufferLoad(A, {r, column}) * scale, {r, column})));
  };
  Stmt parallel = For(row, 1, IntImm(I32(), 3), ForKind::kParallel, copy_row(row), IterVar(), {});
  // The first rows' column loop is nested in a loop, so its header does not dominate what
  // follows the outer loop.
  Var first("first");
  Stmt body = SeqStmt({Loop(first, 1, copy_row(first)), parallel});
  ExpectMatchesInterpreter(MakePrimFunc({A, B}, {}, body, "main"),
                           {RandomArray(F32(), {4, 8}, 3)}, {tir::HostArray(F32(), {4, 8})},
                           "rebound loop and let variables");
}

TEST(CodegenLLVMStmt, WhileIfLetAndAssert) {
  // B[i] = number of halvings of |A[i]| + 1 until below 1, negated when A[i] < 0.
  Buffer A = DeclBuffer({16}, I32(), "A");
  Buffer B = DeclBuffer({16}, I32(), "B");
  Buffer Count = DeclBuffer({1}, I32(), "count");
  Var i("i"), v("v");
  Stmt body = Loop(i, 16, SeqStmt({
      BufferStore(Count, IntImm(I32(), 0), {0}),
      LetStmt(v, Max(BufferLoad(A, {i}), 0 - BufferLoad(A, {i})) + 1,
              While(GE(truncdiv(v, call_intrin(I32(), "shift_left", {1, BufferLoad(Count, {0})})), 1),
                    BufferStore(Count, BufferLoad(Count, {0}) + 1, {0}))),
      AssertStmt(GE(BufferLoad(Count, {0}), 1), StringImm("count is positive"),
                 IfThenElse(LT(BufferLoad(A, {i}), 0),
                            BufferStore(B, 0 - BufferLoad(Count, {0}), {i}),
                            BufferStore(B, Let(Var("c", I32()), BufferLoad(Count, {0}),
                                               BufferLoad(Count, {0})), {i}))),
  }));
  Stmt with_alloc = Allocate(Count->data, I32(), {1}, const_true(), body, "global");
  ExpectMatchesInterpreter(MakePrimFunc({A, B}, {}, with_alloc, "main"),
                           {RandomArray(I32(), {16}, 2)},
                           {tir::HostArray(I32(), {16})}, "while/if/let/assert");
}

TEST(CodegenLLVMStmt, FailedAssertReturnsItsMessage) {
  Buffer A = DeclBuffer({4}, I32(), "A");
  Stmt body = AssertStmt(GT(BufferLoad(A, {0}), 100), StringImm("A[0] must exceed 100"),
                         BufferStore(A, IntImm(I32(), 1), {0}));
  runtime::Module m = build(MakePrimFunc({A}, {}, body, "main"), Target::Parse("llvm"));
  try {
    CallWithArrays(m, "main", {tir::HostArray(I32(), {4})});
    FAIL() << "expected the assert to fail";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("main: A[0] must exceed 100"), std::string::npos)
        << e.what();
  }
}

TEST(CodegenLLVMStmt, RampBroadcastShuffleGatherAndScatter) {
  Buffer A = DeclBuffer({32}, F32(), "A");
  Buffer B = DeclBuffer({32}, F32(), "B");
  Var i("i");
  PrimExpr contiguous = BufferLoad(A, {Ramp(i * 8, 1, 8)});
  PrimExpr gathered = BufferLoad(A, {Ramp(31 - i * 8, -1, 8)});
  PrimExpr reversed = Shuffle({contiguous}, {7, 6, 5, 4, 3, 2, 1, 0});
  PrimExpr value = reversed * Broadcast(FloatImm(F32(), 0.5), 8) + gathered;
  // Stores to lanes in a stride-4 pattern wrap around the vector: a scatter.
  PrimExpr scatter_index = Ramp(i, 4, 8);
  Stmt body = For(i, 0, 4, ForKind::kSerial, BufferStore(B, value, {scatter_index}), IterVar(), {});
  ExpectMatchesInterpreter(MakePrimFunc({A, B}, {}, body, "main"),
                           {RandomArray(F32(), {32}, 3)},
                           {tir::HostArray(F32(), {32})}, "ramp/shuffle/gather/scatter");
}

TEST(CodegenLLVMStmt, ShuffleJoinsVectorsAndScalars) {
  // Four vectors of 4 lanes transposed (one shufflevector of the joined vectors), and a
  // shuffle of a scalar and a vector (lane by lane).
  Buffer A = DeclBuffer({16}, F32(), "A");
  Buffer B = DeclBuffer({21}, F32(), "B");
  Array<PrimExpr> rows, transposed;
  for (int r = 0; r < 4; ++r) rows.push_back(BufferLoad(A, {Ramp(r * 4, 1, 4)}));
  for (int c = 0; c < 4; ++c)
    for (int r = 0; r < 4; ++r) transposed.push_back(r * 4 + c);
  Stmt transpose = BufferStore(B, Shuffle(rows, transposed), {Ramp(0, 1, 16)});
  PrimExpr scalar = BufferLoad(A, {IntImm(I32(), 5)});
  Stmt mixed = BufferStore(B, Shuffle({scalar, rows[3]}, {4, 0, 1, 2, 0}), {Ramp(16, 1, 5)});
  ExpectMatchesInterpreter(MakePrimFunc({A, B}, {}, SeqStmt({transpose, mixed}), "main"),
                           {RandomArray(F32(), {16}, 4)}, {tir::HostArray(F32(), {21})},
                           "shuffles");
}

}  // namespace
}  // namespace loom::target_test
