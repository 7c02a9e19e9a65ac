// VectorizeLoop: golden text for each rule, the scalar fallbacks, the user errors, and a
// differential test of random vectorized loops run through the interpreter before and after.
#include <gtest/gtest.h>

#include <random>

#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"
#include "loom/ir/printer.h"
#include "loom/tir/interpreter.h"
#include "loom/tir/transform.h"
#include "program_runner.h"
#include "random_expr.h"

namespace loom::tir::transform {
namespace {

const DataType kInt32 = DataType::Int(32);
const DataType kFloat32 = DataType::Float(32);

Stmt Loop(const Var& v, PrimExpr min, PrimExpr extent, Stmt body,
          ForKind kind = ForKind::kVectorized) {
  return For(v, min, extent, kind, body, IterVar(), {});
}

// The function's body as text, without the signature line.
std::string Body(const PrimFunc& func) {
  std::string text = ToScript(func);
  return text.substr(text.find('\n', text.find("def ")) + 1);
}

class VectorizeLoopTest : public ::testing::Test {
 protected:
  PrimFunc Func(Stmt body) {
    return PrimFunc({a->data, b->data, c->data, d->data, n},
                    {{a->data, a}, {b->data, b}, {c->data, c}, {d->data, d}}, body,
                    DataType::Void(), {});
  }
  std::string Run(Stmt body) { return Body(VectorizeLoop()(Func(body))); }

  Var n{"n"}, i{"i"}, j{"j"}, x{"x"};
  Buffer a = DeclBuffer({64}, kFloat32, "A");
  Buffer b = DeclBuffer({64}, kFloat32, "B");
  Buffer c = DeclBuffer({64}, kInt32, "C");
  Buffer d = DeclBuffer({64}, kInt32, "D");
};

TEST_F(VectorizeLoopTest, ElementwiseBecomesRampAccesses) {
  Stmt body = Loop(i, 0, 4, BufferStore(b, BufferLoad(a, {i}) + 1.0f, {i}));
  EXPECT_EQ(Run(body),
            "    B[T.Ramp(0, 1, 4)] = A[T.Ramp(0, 1, 4)] + T.Broadcast(T.float32(1.0), 4)\n");
}

TEST_F(VectorizeLoopTest, AffineIndicesStayRamps) {
  Stmt body = Loop(i, n, 8,
                   BufferStore(c, BufferLoad(d, {i * 2 + 1}) - i, {Sub(IntImm(kInt32, 40), i)}));
  EXPECT_EQ(Run(body),
            "    C[T.Ramp(40 - n, -1, 8)] = D[T.Ramp(n * 2 + 1, 2, 8)] - T.Ramp(n, 1, 8)\n");
}

// A lane index widened to int64 (the index into a buffer of symbolic size) stays a Ramp:
// the access stays contiguous rather than a gather of widened lanes.
TEST_F(VectorizeLoopTest, WidenedIndicesStayRamps) {
  const DataType i64 = DataType::Int(64);
  Var row("row", i64);
  Buffer wide = DeclBuffer({row, 16}, kFloat32, "W");
  Stmt body =
      Loop(i, 0, 4, BufferStore(wide, BufferLoad(a, {i}), {IntImm(i64, 0), Cast(i64, i + 4)}));
  EXPECT_EQ(Run(body),
            "    W[T.int64(0), T.Ramp(T.int64(4), T.int64(1), 4)] = A[T.Ramp(0, 1, 4)]\n");
  // A narrowing cast keeps the lanes' conversion.
  Stmt narrow = Loop(i, 0, 4, BufferStore(c, Cast(kInt32, Cast(DataType::Int(8), i)), {i}));
  EXPECT_NE(Run(narrow).find("T.Cast(\"int8x4\", T.Ramp(0, 1, 4))"), std::string::npos)
      << Run(narrow);
}

TEST_F(VectorizeLoopTest, WidensDivisionSelectCastAndComparisons) {
  PrimExpr value = Select(LT(floormod(i, 3), n), Cast(kFloat32, floordiv(i, 2)),
                          Cast(kFloat32, max(i, n)));
  Stmt body = Loop(i, 0, 4, BufferStore(b, value, {i}));
  EXPECT_EQ(Run(body),
            "    B[T.Ramp(0, 1, 4)] = T.Select(T.Ramp(0, 1, 4) % T.Broadcast(3, 4) < T.Broadcast(n, 4), "
            "T.Cast(\"float32x4\", T.Ramp(0, 1, 4) // T.Broadcast(2, 4)), "
            "T.Cast(\"float32x4\", T.max(T.Ramp(0, 1, 4), T.Broadcast(n, 4))))\n");
}

TEST_F(VectorizeLoopTest, LetsAndPureIntrinsicsAreWidened) {
  Var y("y", kFloat32);
  Stmt body = Loop(i, 0, 4,
                   LetStmt(y, BufferLoad(a, {i}),
                           BufferStore(b, call_intrin(kFloat32, "exp", {y}) + BufferLoad(a, {0}),
                                       {i})));
  EXPECT_EQ(Run(body),
            "    y: T.float32x4 = A[T.Ramp(0, 1, 4)]\n"
            "    B[T.Ramp(0, 1, 4)] = T.exp(y) + T.Broadcast(A[0], 4)\n");
}

TEST_F(VectorizeLoopTest, LoopInvariantIfStaysAroundVectorCode) {
  Stmt body = Loop(i, 0, 4, IfThenElse(LT(n, 3), BufferStore(c, i, {i}), Stmt()));
  EXPECT_EQ(Run(body),
            "    if n < 3:\n"
            "        C[T.Ramp(0, 1, 4)] = T.Ramp(0, 1, 4)\n");
}

TEST_F(VectorizeLoopTest, GatherAndBroadcastOnlyBodies) {
  Stmt gather = Loop(i, 0, 4, BufferStore(c, BufferLoad(d, {floormod(i, 2) + 8}) * 3, {i}));
  EXPECT_EQ(Run(gather),
            "    C[T.Ramp(0, 1, 4)] = D[T.Ramp(0, 1, 4) % T.Broadcast(2, 4) + T.Broadcast(8, 4)] * "
            "T.Broadcast(3, 4)\n");
  Stmt broadcast = Loop(i, 0, 4, BufferStore(b, BufferLoad(a, {n}), {i}));
  EXPECT_EQ(Run(broadcast), "    B[T.Ramp(0, 1, 4)] = T.Broadcast(A[n], 4)\n");
}

TEST_F(VectorizeLoopTest, ExtentOneSubstitutesAndExtentZeroRemoves) {
  EXPECT_EQ(Run(Loop(i, n, 1, BufferStore(c, i, {i}))), "    C[n] = n\n");
  EXPECT_EQ(Run(Loop(i, 0, 0, BufferStore(c, i, {i}))), "    T.evaluate(0)\n");
}

TEST_F(VectorizeLoopTest, FallsBackToSerialLoops) {
  auto serial_text = [](const std::string& body_line) {
    return "    for i in range(4):\n        " + body_line + "\n";
  };
  // A condition on the loop variable.
  EXPECT_EQ(Run(Loop(i, 0, 4, IfThenElse(LT(i, 2), BufferStore(c, 1, {i}), Stmt()))),
            "    for i in range(4):\n"
            "        if i < 2:\n"
            "            C[i] = 1\n");
  // A side effect that would run once instead of four times.
  EXPECT_EQ(Run(Loop(i, 0, 4, Evaluate(call_extern(kInt32, "tick", {})))),
            serial_text("T.evaluate(T.call_extern(\"int32\", \"tick\"))"));
  // A loop-carried dependence: B[i + 1] reads what the previous iteration stored.
  EXPECT_EQ(Run(Loop(i, 0, 4, BufferStore(c, BufferLoad(c, {i}), {i + 1}))),
            serial_text("C[i + 1] = C[i]"));
  // Four lanes storing to one element, which the serial loop reads in between.
  EXPECT_EQ(Run(Loop(i, 0, 4, BufferStore(c, BufferLoad(c, {0}) + i, {0}))),
            serial_text("C[0] = C[0] + i"));
  // if_then_else evaluates only the taken branch; the load would be out of bounds.
  PrimExpr guarded = call_intrin(kFloat32, "if_then_else",
                                 {LT(i, 1), BufferLoad(a, {i + 63}), FloatImm(kFloat32, 0)});
  EXPECT_EQ(Run(Loop(i, 0, 4, BufferStore(b, guarded, {i}))),
            serial_text("B[i] = T.if_then_else(i < 1, A[i + 63], T.float32(0.0))"));
  // A nested loop.
  EXPECT_EQ(Run(Loop(i, 0, 4, Loop(j, 0, 2, BufferStore(c, j, {i * 2 + j}), ForKind::kSerial))),
            "    for i in range(4):\n"
            "        for j in range(2):\n"
            "            C[i * 2 + j] = j\n");
}

TEST_F(VectorizeLoopTest, SafeIfThenElseIsWidened) {
  PrimExpr value = call_intrin(kInt32, "if_then_else", {LT(i, 2), i * 2, IntImm(kInt32, 7)});
  EXPECT_EQ(Run(Loop(i, 0, 4, BufferStore(c, value, {i}))),
            "    C[T.Ramp(0, 1, 4)] = T.if_then_else(T.Ramp(0, 1, 4) < T.Broadcast(2, 4), "
            "T.Ramp(0, 2, 4), T.Broadcast(7, 4))\n");
}

TEST_F(VectorizeLoopTest, NestedVectorizedLoopsVectorizeOnlyTheInnermost) {
  Stmt body = Loop(i, 0, 2, Loop(j, 0, 4, BufferStore(c, i, {i * 4 + j})));
  EXPECT_EQ(Run(body),
            "    for i in range(2):\n"
            "        C[T.Ramp(i * 4, 1, 4)] = T.Broadcast(i, 4)\n");
}

TEST_F(VectorizeLoopTest, FunctionsWithoutVectorizedLoopsAreReturnedAsIs) {
  PrimFunc func = Func(Loop(i, 0, 4, BufferStore(c, i, {i}), ForKind::kSerial));
  EXPECT_TRUE(VectorizeLoop()(func).same_as(func));
}

TEST_F(VectorizeLoopTest, NonConstantExtentIsAUserError) {
  try {
    VectorizeLoop()(Func(Loop(i, 0, n, BufferStore(c, i, {i}))));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot vectorize the loop over 'i': its extent n is not a constant; split the "
              "loop by a constant factor and vectorize the inner loop");
  }
}

// ---- differential: random vectorized loops, interpreted before and after

using loom::testing::RandomExprGenerator;
using loom::testing::RangedVar;

constexpr int kSize = 64;

class VectorLoopGenerator {
 public:
  explicit VectorLoopGenerator(uint64_t seed) : rng_(seed) {}

  PrimFunc Generate() {
    scope_ = {{n_, 3, 1}, {i_, 0, 11}};
    // One store index per buffer and program: the pass requires it for written buffers.
    PrimExpr indices[] = {i_, i_ * 2 + 1, Sub(IntImm(kInt32, 40), i_), i_ + n_};
    out_index_ = indices[Uniform(0, 3)];
    fout_index_ = indices[Uniform(0, 3)];
    Array<Stmt> seq;
    for (int64_t count = Uniform(1, 3); count > 0; --count) seq.push_back(Statement());
    Stmt body = seq.size() == 1 ? seq[0] : SeqStmt(seq);
    PrimExpr min = Chance(0.3) ? PrimExpr(n_) : PrimExpr(static_cast<int>(Uniform(0, 3)));
    Stmt loop = For(i_, min, static_cast<int>(Uniform(1, 8)), ForKind::kVectorized, body,
                    IterVar(), {});
    return PrimFunc({in_->data, out_->data, fout_->data, n_},
                    {{in_->data, in_}, {out_->data, out_}, {fout_->data, fout_}}, loop,
                    DataType::Void(), {});
  }

 private:
  bool Chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  int64_t Uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  PrimExpr Integer(int depth) { return RandomExprGenerator(&rng_, &scope_).Integer(depth); }
  PrimExpr Condition(int depth) { return RandomExprGenerator(&rng_, &scope_).Condition(depth); }
  PrimExpr LoadIndex() {
    switch (Uniform(0, 3)) {
      case 0: return i_;
      case 1: return floordiv(i_, 2) + 5;
      case 2: return Sub(IntImm(kInt32, 50), floormod(i_, 3));
      default: return floormod(Integer(2), kSize);
    }
  }

  Stmt Statement() {
    switch (Uniform(0, 8)) {
      case 0:
        return BufferStore(out_, Add(Integer(3), BufferLoad(in_, {LoadIndex()})), {out_index_});
      case 1:
        return BufferStore(fout_,
                           Add(Mul(Cast(kFloat32, Integer(2)), FloatImm(kFloat32, 0.5)),
                               Cast(kFloat32, BufferLoad(in_, {LoadIndex()}))),
                           {fout_index_});
      case 2:
        return BufferStore(out_,
                           Select(Condition(2), BufferLoad(in_, {LoadIndex()}), Integer(2)),
                           {out_index_});
      case 3:  // read-modify-write through the one index
        return BufferStore(out_, BufferLoad(out_, {out_index_}) * 3 + Integer(1), {out_index_});
      case 4: {
        Var let_var("x" + std::to_string(scope_.size()));
        PrimExpr value = Integer(2);
        scope_.push_back({let_var, 0, 4});
        Stmt body = Statement();
        scope_.pop_back();
        return LetStmt(let_var, value, body);
      }
      case 5:  // fallback: a condition on the loop variable, or a loop-invariant one
        return IfThenElse(Condition(2), Statement(), Chance(0.5) ? Statement() : Stmt());
      case 6: {  // fallback: a nested loop
        Var inner("k" + std::to_string(scope_.size()));
        scope_.push_back({inner, 0, 2});
        Stmt body = Statement();
        scope_.pop_back();
        return For(inner, 0, 2, ForKind::kSerial, body, IterVar(), {});
      }
      case 7:  // if_then_else, widened when its branches cannot fault
        return BufferStore(out_,
                           call_intrin(kInt32, "if_then_else",
                                       {Condition(1), Chance(0.5) ? BufferLoad(in_, {LoadIndex()})
                                                                  : Integer(2),
                                        Integer(1)}),
                           {out_index_});
      default:  // fallback when the index differs from the program's store index
        return BufferStore(out_, BufferLoad(out_, {LoadIndex()}) + 1, {out_index_});
    }
  }

  std::mt19937_64 rng_;
  Var n_{"n"}, i_{"i"};
  std::vector<RangedVar> scope_;
  PrimExpr out_index_, fout_index_;
  Buffer in_ = DeclBuffer({kSize}, kInt32, "In");
  Buffer out_ = DeclBuffer({kSize}, kInt32, "Out");
  Buffer fout_ = DeclBuffer({kSize}, kFloat32, "FOut");
};

using Outputs = test::ProgramOutputs;

std::optional<Outputs> RunOn(const PrimFunc& func, uint64_t seed, std::string* error) {
  return test::RunProgram(func, kSize, seed, error);
}

bool HasLoop(const Stmt& stmt) {
  bool found = false;
  PostOrderVisit(stmt, [&](const ObjectRef& node) { found |= node.as<ForNode>() != nullptr; });
  return found;
}

TEST(VectorizeLoopDifferentialTest, RandomLoopsComputeTheSame) {
  constexpr int kPrograms = 1500;
  int compared = 0, vectorized = 0, serial = 0;
  for (int seed = 0; seed < kPrograms; ++seed) {
    PrimFunc original = VectorLoopGenerator(seed).Generate();
    std::string error;
    std::optional<Outputs> expected = RunOn(original, seed, &error);
    PrimFunc transformed = VectorizeLoop()(original);
    std::optional<Outputs> actual = RunOn(transformed, seed, &error);
    ASSERT_EQ(expected.has_value(), actual.has_value())
        << "program " << seed << " fails in one form only: " << error << "\nbefore:\n"
        << ToScript(original) << "after:\n" << ToScript(transformed);
    if (!expected) continue;
    ASSERT_TRUE(*actual == *expected) << "VectorizeLoop changed the outputs of program " << seed
                                      << "\nbefore:\n" << ToScript(original) << "after:\n"
                                      << ToScript(transformed);
    ++compared;
    const auto* before = original->body.as<ForNode>();
    const auto* after = transformed->body.as<ForNode>();
    if (is_const_true(before->extent == 1)) continue;  // substituted, neither kind
    if (after && after->loop_var.same_as(before->loop_var)) {
      EXPECT_EQ(after->for_kind, ForKind::kSerial) << ToScript(transformed);
      ++serial;
    } else {
      EXPECT_FALSE(HasLoop(transformed->body)) << ToScript(transformed);
      ++vectorized;
    }
  }
  EXPECT_GT(compared, kPrograms * 3 / 4);
  EXPECT_GT(vectorized, compared / 4) << "too few programs were vectorized (" << serial << " stayed serial)";
  EXPECT_GT(serial, compared / 10) << "too few programs exercised the fallback";
}

bool HasVector(const Stmt& stmt) {
  bool found = false;
  PostOrderVisit(stmt, [&](const ObjectRef& node) {
    if (const auto* e = node.as<ExprNode>()) found |= e->dtype.lanes() > 1;
  });
  return found;
}

// The vectors ScalarizeVectors keeps with a vector access size: variables bound to
// contiguous loads, the Ramps of those loads and of the stores, and stores of Shuffles of
// scalars; no vector is computed on. `accesses` counts the kept loads and stores.
bool OnlyVectorAccesses(const Stmt& stmt, int* accesses) {
  bool only = true;
  PostOrderVisit(stmt, [&](const ObjectRef& node) {
    if (const auto* let = node.as<LetStmtNode>(); let && let->var.dtype().lanes() > 1) {
      const auto* load = let->value.as<BufferLoadNode>();
      only &= load != nullptr && load->indices[0].as<RampNode>() != nullptr;
      ++*accesses;
    }
    if (const auto* store = node.as<BufferStoreNode>(); store && store->value.dtype().lanes() > 1) {
      only &= store->value.as<VarNode>() != nullptr || store->value.as<ShuffleNode>() != nullptr;
      ++*accesses;
    }
    const auto* e = node.as<ExprNode>();
    if (e == nullptr || e->dtype.lanes() == 1) return;
    only &= node.as<VarNode>() || node.as<BufferLoadNode>() || node.as<RampNode>() ||
            node.as<ShuffleNode>();
  });
  return only;
}

// ScalarizeVectors computes what the vector code computes on the same random programs: with
// no vector left (back ends without vectors), and with vector accesses of 8 or 16 bytes
// kept (GPU kernels), nothing but those accesses a vector.
TEST(ScalarizeVectorsDifferentialTest, VectorizedRandomLoopsComputeTheSame) {
  constexpr int kPrograms = 600;
  for (int bytes : {0, 8, 16}) {
    int scalarized = 0, accesses = 0;
    for (int seed = 0; seed < kPrograms; ++seed) {
      PrimFunc original = VectorLoopGenerator(seed).Generate();
      std::string error;
      std::optional<Outputs> expected = RunOn(original, seed, &error);
      if (!expected) continue;
      PrimFunc vector = VectorizeLoop()(original);
      if (!HasVector(vector->body)) continue;
      PrimFunc scalar = ScalarizeVectors(bytes)(vector);
      EXPECT_TRUE(bytes == 0 ? !HasVector(scalar->body)
                             : OnlyVectorAccesses(scalar->body, &accesses))
          << ToScript(scalar);
      std::optional<Outputs> actual = RunOn(scalar, seed, &error);
      ASSERT_TRUE(actual && *actual == *expected)
          << "ScalarizeVectors(" << bytes << ") changed the outputs of program " << seed << " "
          << error << "\nvector:\n"
          << ToScript(vector) << "scalar:\n"
          << ToScript(scalar);
      ++scalarized;
    }
    EXPECT_GT(scalarized, kPrograms / 5);
    if (bytes > 0) {
      EXPECT_GT(accesses, kPrograms / 10) << "too few vector accesses kept with " << bytes;
    }
  }
}

// A Shuffle picks lanes by number: its store is unrolled lane by lane; a vector Let binds
// the lane each store reads.
TEST_F(VectorizeLoopTest, ScalarizeShufflesByLaneAndLetsPerLane) {
  PrimExpr ramp = Ramp(IntImm(kInt32, 0), IntImm(kInt32, 1), 4);
  PrimExpr lo = BufferLoad(d, {ramp}), hi = BufferLoad(d, {ramp + Broadcast(IntImm(kInt32, 4), 4)});
  PrimExpr reversed = Shuffle({lo, hi}, {IntImm(kInt32, 7), IntImm(kInt32, 6), IntImm(kInt32, 1),
                                         IntImm(kInt32, 0)});
  Stmt shuffle = BufferStore(c, reversed, {ramp});
  EXPECT_EQ(Body(ScalarizeVectors()(Func(shuffle))),
            "    C[0] = D[3 + 4]\n    C[1] = D[2 + 4]\n    C[2] = D[1]\n    C[3] = D[0]\n");
  Var v("v", kInt32.with_lanes(4));
  Stmt let = BufferStore(c, Let(v, lo * Broadcast(IntImm(kInt32, 3), 4), v + v), {ramp});
  EXPECT_EQ(Body(ScalarizeVectors()(Func(let))),
            "    for lane in range(4):\n"
            "        C[lane] = T.Let(v_lane + v_lane, where={v_lane: D[lane] * 3})\n");
}

// Kept vector accesses: a copy between aligned chunks is a vector variable stored whole; an
// unaligned load stays scalar lanes, stored as a Shuffle of them; 16-byte chunks of 8 lanes
// are two accesses, 8-byte ones four.
TEST_F(VectorizeLoopTest, ScalarizeKeepsAlignedContiguousAccesses) {
  auto ramp = [](PrimExpr base, int lanes) { return Ramp(base, IntImm(kInt32, 1), lanes); };
  Stmt copy = BufferStore(c, BufferLoad(d, {ramp(x * 4 + 8, 4)}), {ramp(x * 4, 4)});
  EXPECT_EQ(Body(ScalarizeVectors(16)(Func(copy))),
            "    D_vec: T.int32x4 = D[T.Ramp(x * 4 + 8, 1, 4)]\n"
            "    C[T.Ramp(x * 4, 1, 4)] = D_vec\n");
  Stmt shifted = BufferStore(
      c, BufferLoad(d, {ramp(x * 4 + 1, 8)}) * Broadcast(IntImm(kInt32, 3), 8), {ramp(x * 8, 8)});
  EXPECT_EQ(
      Body(ScalarizeVectors(16)(Func(shifted))),
      "    C[T.Ramp(x * 8, 1, 4)] = T.Shuffle([D[x * 4 + 1] * 3, D[x * 4 + 1 + 1] * 3, "
      "D[x * 4 + 1 + 2] * 3, D[x * 4 + 1 + 3] * 3], [0, 1, 2, 3])\n"
      "    C[T.Ramp(x * 8 + 4, 1, 4)] = T.Shuffle([D[x * 4 + 1 + 4] * 3, D[x * 4 + 1 + 5] * 3, "
      "D[x * 4 + 1 + 6] * 3, D[x * 4 + 1 + 7] * 3], [0, 1, 2, 3])\n");
  EXPECT_EQ(Body(ScalarizeVectors(8)(Func(copy))),
            "    D_vec: T.int32x2 = D[T.Ramp(x * 4 + 8, 1, 2)]\n"
            "    D_vec_1: T.int32x2 = D[T.Ramp(x * 4 + 8 + 2, 1, 2)]\n"
            "    C[T.Ramp(x * 4, 1, 2)] = D_vec\n"
            "    C[T.Ramp(x * 4 + 2, 1, 2)] = D_vec_1\n");
  // A load in a branch of an if_then_else (valid only when taken) stays in it, lane by lane.
  Stmt guarded = BufferStore(
      c,
      call_intrin(kInt32.with_lanes(4), "if_then_else",
                  {x < n, BufferLoad(d, {ramp(x * 4 + 8, 4)}), Broadcast(IntImm(kInt32, 0), 4)}),
      {ramp(x * 4, 4)});
  EXPECT_EQ(Body(ScalarizeVectors(16)(Func(guarded))),
            "    C[T.Ramp(x * 4, 1, 4)] = T.Shuffle([T.if_then_else(x < n, D[x * 4 + 8], 0), "
            "T.if_then_else(x < n, D[x * 4 + 8 + 1], 0), T.if_then_else(x < n, D[x * 4 + 8 + 2], "
            "0), T.if_then_else(x < n, D[x * 4 + 8 + 3], 0)], [0, 1, 2, 3])\n");
  // Lanes of 64 bits have no vector access: every lane a scalar store.
  Buffer e = DeclBuffer({64}, DataType::Float(64), "E");
  EXPECT_EQ(Body(ScalarizeVectors(16)(
                Func(BufferStore(e, BufferLoad(e, {ramp(x * 4 + 16, 4)}), {ramp(x * 4, 4)})))),
            "    for lane in range(4):\n        E[x * 4 + lane] = E[x * 4 + 16 + lane]\n");
}

}  // namespace
}  // namespace loom::tir::transform
