// Golden tests of the first passes: the function's text before and after, for each rule of
// each pass, plus the user errors they report.
#include <gtest/gtest.h>

#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"
#include "loom/tir/transform.h"

namespace loom::tir::transform {
namespace {

const DataType kInt32 = DataType::Int(32);
const DataType kFloat32 = DataType::Float(32);

PrimExpr I32(int64_t value) { return IntImm(kInt32, value); }

class TransformsTest : public ::testing::Test {
 protected:
  PrimFunc Func(Stmt body) {
    return PrimFunc({a->data, b->data, n}, {{a->data, a}, {b->data, b}}, body, DataType::Void(),
                    {});
  }
  // The function's body as text, without the signature line.
  static std::string Body(const PrimFunc& func) {
    std::string text = ToScript(func);
    return text.substr(text.find('\n', text.find("def ")) + 1);
  }
  std::string Run(const Pass& pass, Stmt body) { return Body(pass(Func(body))); }
  static Stmt Loop(const Var& v, PrimExpr min, PrimExpr extent, Stmt body,
                   ForKind kind = ForKind::kSerial) {
    return For(v, min, extent, kind, body, IterVar(), {});
  }

  Var n{"n"}, i{"i"}, j{"j"}, x{"x"};
  Buffer a = DeclBuffer({64}, kFloat32, "A");
  Buffer b = DeclBuffer({64}, kFloat32, "B");
};

TEST_F(TransformsTest, SimplifyUsesLoopRanges) {
  Stmt body = Loop(i, 0, 16,
                   BufferStore(a, BufferLoad(b, {floordiv(i, 16) * 8 + floormod(i, 16)}),
                               {Add(Mul(FloorDiv(i, 4), 4), FloorMod(i, 4))}));
  EXPECT_EQ(Run(Simplify(), body),
            "    for i in range(16):\n"
            "        A[i] = B[i]\n");
}

TEST_F(TransformsTest, SimplifyUsesIfConditionsInEachBranch) {
  Stmt body = Loop(i, 0, n,
                   IfThenElse(LT(i, 8), BufferStore(a, Select(LT(i, 10), 1.0f, 2.0f), {i}),
                              BufferStore(a, Select(LT(i, 8), 3.0f, 4.0f), {i})));
  EXPECT_EQ(Run(Simplify(), body),
            "    for i in range(n):\n"
            "        if i < 8:\n"
            "            A[i] = T.float32(1.0)\n"
            "        else:\n"
            "            A[i] = T.float32(4.0)\n");
}

TEST_F(TransformsTest, SimplifyRemovesConstantBranchesAndEmptyLoops) {
  Stmt body = SeqStmt({
      IfThenElse(LT(n, Add(n, 1)), BufferStore(a, 1.0f, {0}), BufferStore(a, 2.0f, {0})),
      IfThenElse(GT(IntImm(kInt32, 0), 1), BufferStore(a, 3.0f, {1}), Stmt()),
      Loop(i, 0, Sub(n, n), BufferStore(a, 4.0f, {i})),
      Loop(j, 0, 16, IfThenElse(GE(j, 16), BufferStore(a, 5.0f, {j}), BufferStore(a, 6.0f, {j}))),
  });
  EXPECT_EQ(Run(Simplify(), body),
            "    A[0] = T.float32(1.0)\n"
            "    T.evaluate(0)\n"
            "    T.evaluate(0)\n"
            "    for j in range(16):\n"
            "        A[j] = T.float32(6.0)\n")
      << "the no-ops left behind are RemoveNoOp's to remove";
}

TEST_F(TransformsTest, SimplifyTurnsExtentOneLoopsIntoSubstitution) {
  Stmt body = Loop(i, Mul(n, 2), 1, BufferStore(a, 1.0f, {Add(i, 1)}));
  EXPECT_EQ(Run(Simplify(), body), "    A[n * 2 + 1] = T.float32(1.0)\n");
  // A start that reads memory is bound once by a LetStmt instead.
  Buffer idx = DeclBuffer({4}, kInt32, "Idx");
  Stmt reads = Loop(i, BufferLoad(idx, {0}), 1, BufferStore(a, 1.0f, {i}));
  EXPECT_EQ(Body(Simplify()(PrimFunc({a->data, idx->data}, {{a->data, a}, {idx->data, idx}},
                                     reads, DataType::Void(), {}))),
            "    i: T.int32 = Idx[0]\n"
            "    A[i] = T.float32(1.0)\n");
}

TEST_F(TransformsTest, SimplifyInlinesPureLetsAndKeepsLoads) {
  Stmt body = LetStmt(x, Add(n, 0), BufferStore(a, 1.0f, {Sub(Add(x, 3), n)}));
  EXPECT_EQ(Run(Simplify(), body), "    A[3] = T.float32(1.0)\n");
  Var y("y", kFloat32);
  Stmt load = LetStmt(y, BufferLoad(b, {0}), SeqStmt({BufferStore(b, 0.0f, {0}),
                                                      BufferStore(a, y, {0})}));
  EXPECT_EQ(Run(Simplify(), load),
            "    y: T.float32 = B[0]\n"
            "    B[0] = T.float32(0.0)\n"
            "    A[0] = y\n")
      << "a binding that reads memory is not substituted past a store";
}

TEST_F(TransformsTest, SimplifyAssumesNoConditionThatReadsMemory) {
  // Inside the branch the store changes A[0]: `A[0] > 0` may no longer hold.
  PrimExpr positive = GT(BufferLoad(a, {0}), 0.0f);
  Stmt body = IfThenElse(positive, SeqStmt({BufferStore(a, -1.0f, {0}),
                                            BufferStore(b, Select(positive, 1.0f, 2.0f), {0})}),
                         Stmt());
  EXPECT_EQ(Run(Simplify(), body),
            "    if A[0] > T.float32(0.0):\n"
            "        A[0] = T.float32(-1.0)\n"
            "        B[0] = T.Select(A[0] > T.float32(0.0), T.float32(1.0), T.float32(2.0))\n");
}

TEST_F(TransformsTest, RemoveNoOp) {
  Stmt body = SeqStmt({
      Evaluate(1),
      BufferStore(a, BufferLoad(a, {Add(i, 0)}), {Add(i, 0)}),
      Loop(i, 0, n, Evaluate(0)),
      IfThenElse(LT(n, 4), Evaluate(0), BufferStore(a, 1.0f, {0})),
      IfThenElse(LT(n, 5), BufferStore(a, 2.0f, {0}), Evaluate(0)),
      IfThenElse(LT(n, 6), Evaluate(0), Stmt()),
      LetStmt(x, n, Evaluate(x)),
      SeqStmt({Evaluate(0), BufferStore(a, 3.0f, {1})}),
      Evaluate(call_extern(kInt32, "keep_me", {})),
  });
  EXPECT_EQ(Run(RemoveNoOp(), body),
            "    if not n < 4:\n"
            "        A[0] = T.float32(1.0)\n"
            "    if n < 5:\n"
            "        A[0] = T.float32(2.0)\n"
            "    A[1] = T.float32(3.0)\n"
            "    T.evaluate(T.call_extern(\"int32\", \"keep_me\"))\n");
  EXPECT_EQ(Run(RemoveNoOp(), SeqStmt({Evaluate(0), Loop(i, 0, 4, Evaluate(i))})),
            "    T.evaluate(0)\n");
}

// 16 lanes read as two runs of 8 contiguous elements (channel blocks of 8 read into one of
// 16) become two loads joined by a Shuffle; a transpose (stride 16 per lane) stays a gather.
TEST_F(TransformsTest, SplitGathersLoadsContiguousRunsOfLanes) {
  Buffer big = DeclBuffer({1024}, kFloat32, "C");
  PrimExpr lanes = Ramp(I32(0), I32(1), 16);
  PrimExpr blocks = Add(Broadcast(Mul(i, 8), 16),
                        Add(Mul(FloorDiv(lanes, Broadcast(I32(8), 16)), Broadcast(I32(512), 16)),
                            FloorMod(lanes, Broadcast(I32(8), 16))));
  PrimFunc f({big->data, i}, {{big->data, big}},
             BufferStore(big, BufferLoad(big, {blocks}), {Ramp(Mul(i, 16), I32(1), 16)}),
             DataType::Void(), {});
  std::string text = Body(SplitGathers()(f));
  EXPECT_NE(text.find("T.Shuffle([C[T.Ramp(i * 8, 1, 8)], C[T.Ramp(i * 8 + 512, 1, 8)]]"),
            std::string::npos)
      << text;
  PrimExpr transpose = Add(Broadcast(i, 16), Mul(lanes, Broadcast(I32(16), 16)));
  PrimFunc g({big->data, i}, {{big->data, big}},
             BufferStore(big, BufferLoad(big, {transpose}), {Ramp(Mul(i, 16), I32(1), 16)}),
             DataType::Void(), {});
  EXPECT_EQ(Body(SplitGathers()(g)), Body(g));
  // A buffer of vector elements (each load reads lanes x 4 floats) is left alone.
  Buffer quads = DeclBuffer({256}, kFloat32.with_lanes(4), "Q");
  PrimFunc quad_gather({quads->data, i}, {{quads->data, quads}},
                       Evaluate(BufferLoad(quads, {blocks})), DataType::Void(), {});
  EXPECT_EQ(Body(SplitGathers()(quad_gather)), Body(quad_gather));
  // An index that reads memory (a take's indices) is left a gather, whatever wraps the read.
  Buffer where = DeclBuffer({1024}, kInt32, "W");
  PrimExpr indirect = Add(blocks, Max(BufferLoad(where, {lanes}), Broadcast(I32(0), 16)));
  PrimFunc take({big->data, where->data, i}, {{big->data, big}, {where->data, where}},
                BufferStore(big, BufferLoad(big, {indirect}), {Ramp(Mul(i, 16), I32(1), 16)}),
                DataType::Void(), {});
  EXPECT_EQ(Body(SplitGathers()(take)), Body(take));
}

TEST_F(TransformsTest, UnrollLoop) {
  Stmt body = Loop(i, n, 3, Loop(j, 0, 2, BufferStore(a, 1.0f, {Add(i, j)}), ForKind::kUnrolled),
                   ForKind::kSerial);
  EXPECT_EQ(Run(UnrollLoop(), body),
            "    for i in T.serial(n, n + 3):\n"
            "        A[i + 0] = T.float32(1.0)\n"
            "        A[i + 1] = T.float32(1.0)\n")
      << "only the unroll-kind loop unrolls by default";
  PassContext context;
  context.config["tir.UnrollLoop.auto_max_step"] = int64_t{3};
  PassContextScope scope(context);
  EXPECT_EQ(Run(UnrollLoop(), body),
            "    A[n + 0] = T.float32(1.0)\n"
            "    A[n + 1] = T.float32(1.0)\n"
            "    A[n + 1 + 0] = T.float32(1.0)\n"
            "    A[n + 1 + 1] = T.float32(1.0)\n"
            "    A[n + 2 + 0] = T.float32(1.0)\n"
            "    A[n + 2 + 1] = T.float32(1.0)\n")
      << "substitution does not simplify (Add(i, j) with j = 0 stays an Add); Simplify does";
  Stmt too_long = Loop(i, 0, 4, BufferStore(a, 1.0f, {i}));
  EXPECT_EQ(Run(UnrollLoop(), too_long),
            "    for i in range(4):\n"
            "        A[i] = T.float32(1.0)\n") << "extent 4 exceeds auto_max_step 3";
}

TEST_F(TransformsTest, UnrollLoopNeedsConstantExtent) {
  Stmt body = Loop(i, 0, n, BufferStore(a, 1.0f, {i}), ForKind::kUnrolled);
  try {
    UnrollLoop()(Func(body));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot unroll the loop over 'i': its extent n is not a constant; split the loop "
              "by a constant factor and unroll the inner loop, or make it serial");
  }
}

}  // namespace
}  // namespace loom::tir::transform
