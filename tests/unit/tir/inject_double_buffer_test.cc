// InjectDoubleBuffer: golden before/after text, the user errors for each precondition, and a
// differential test: random produce/consume loops (tile counts 1, 2, 3, 7, constant or
// symbolic, random tile sizes) interpreted before and after the pass on the same inputs.
#include <gtest/gtest.h>

#include <array>
#include <random>

#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"
#include "loom/tir/interpreter.h"
#include "loom/tir/transform.h"

namespace loom::tir::transform {
namespace {

const DataType kInt32 = DataType::Int(32);

Stmt Loop(const Var& v, PrimExpr extent, Stmt body, ForKind kind = ForKind::kSerial) {
  return For(v, 0, extent, kind, body, IterVar(), {});
}

Stmt Scope(const Buffer& buffer, Stmt producer) {
  return AttrStmt(buffer->data, attr::kDoubleBufferScope, 1, producer);
}

Stmt AllocateFor(const Buffer& buffer, Stmt body, const std::string& scope = "local") {
  return Allocate(buffer->data, buffer->dtype, buffer->shape, PrimExpr(), body, scope);
}

class InjectDoubleBufferTest : public ::testing::Test {
 protected:
  PrimFunc Func(Stmt body) const {
    return PrimFunc({x->data, out->data, n}, {{x->data, x}, {out->data, out}}, body,
                    DataType::Void(), {});
  }
  static std::string Body(const PrimFunc& func) {
    std::string text = ToScript(func);
    return text.substr(text.find('\n', text.find("def ")) + 1);
  }
  std::string Run(Stmt body) const { return Body(InjectDoubleBuffer()(Func(body))); }
  std::string Error(Stmt body) const {
    try {
      InjectDoubleBuffer()(Func(body));
    } catch (const loom::Error& e) {
      return e.what();
    }
    return "no error";
  }

  // for i in range(extent): B = X tile i (producer); Out tile i = B * 2 (consumer)
  Stmt TileLoop(PrimExpr extent) const {
    return Loop(i, extent,
                SeqStmt({Scope(b, Loop(j, 4, BufferStore(b, BufferLoad(x, {Add(Mul(i, 4), j)}),
                                                         {j}))),
                         Loop(j, 4, BufferStore(out, Mul(BufferLoad(b, {j}), 2),
                                                {Add(Mul(i, 4), j)}))}));
  }

  Var i{"i"}, j{"j"}, n{"n"};
  Buffer x = DeclBuffer({64}, kInt32, "X");
  Buffer out = DeclBuffer({64}, kInt32, "Out");
  Buffer b = DeclBuffer({4}, kInt32, "B", "local");
};

TEST_F(InjectDoubleBufferTest, ProducerOfTheNextTileMovesBeforeTheConsumer) {
  EXPECT_EQ(Run(AllocateFor(b, TileLoop(3))),
            "    B = T.allocate([8], \"int32\", \"local\")\n"
            "    for j in range(4):\n"
            "        B_1[j] = X[0 * 4 + j]\n"
            "    for i in range(2):\n"
            "        for j in range(4):\n"
            "            B_1[(i + 1) % 2 * 4 + j] = X[(i + 1) * 4 + j]\n"
            "        for j in range(4):\n"
            "            Out[i * 4 + j] = B_1[i % 2 * 4 + j] * 2\n"
            "    for j in range(4):\n"
            "        Out[2 * 4 + j] = B_1[j] * 2\n")
      << "prologue produces tile 0 into half 0; iteration i produces tile i+1 into the other "
         "half and consumes tile i; the epilogue consumes the last tile (2, in half 0)";
}

// Over shared memory (a GPU block's tiles), the next tile's producer is marked for
// ThreadSync: it writes the half this iteration does not read.
TEST_F(InjectDoubleBufferTest, ANextSharedTilesProducerIsMarked) {
  EXPECT_EQ(Run(AllocateFor(b, TileLoop(3), "shared")),
            "    B = T.allocate([8], \"int32\", \"shared\")\n"
            "    for j in range(4):\n"
            "        B_1[j] = X[0 * 4 + j]\n"
            "    for i in range(2):\n"
            "        with T.attr(B, \"double_buffer_write\", i):\n"
            "            for j in range(4):\n"
            "                B_1[(i + 1) % 2 * 4 + j] = X[(i + 1) * 4 + j]\n"
            "        for j in range(4):\n"
            "            Out[i * 4 + j] = B_1[i % 2 * 4 + j] * 2\n"
            "    for j in range(4):\n"
            "        Out[2 * 4 + j] = B_1[j] * 2\n");
}

TEST_F(InjectDoubleBufferTest, OneTileHasNoSteadyLoop) {
  EXPECT_EQ(Run(AllocateFor(b, TileLoop(1))),
            "    B = T.allocate([8], \"int32\", \"local\")\n"
            "    for j in range(4):\n"
            "        B_1[j] = X[0 * 4 + j]\n"
            "    for j in range(4):\n"
            "        Out[0 * 4 + j] = B_1[j] * 2\n");
}

TEST_F(InjectDoubleBufferTest, SymbolicTileCountIsGuarded) {
  EXPECT_EQ(Run(AllocateFor(b, TileLoop(n))),
            "    B = T.allocate([8], \"int32\", \"local\")\n"
            "    if n >= 1:\n"
            "        for j in range(4):\n"
            "            B_1[j] = X[0 * 4 + j]\n"
            "        for i in range(n - 1):\n"
            "            for j in range(4):\n"
            "                B_1[(i + 1) % 2 * 4 + j] = X[(i + 1) * 4 + j]\n"
            "            for j in range(4):\n"
            "                Out[i * 4 + j] = B_1[i % 2 * 4 + j] * 2\n"
            "        for j in range(4):\n"
            "            Out[(n - 1) * 4 + j] = B_1[(n + 1) % 2 * 4 + j] * 2\n")
      << "(n + 1) % 2 is the simplifier's form of (n - 1) % 2";
  EXPECT_EQ(Run(AllocateFor(b, TileLoop(0))),
            "    B = T.allocate([8], \"int32\", \"local\")\n"
            "    T.evaluate(0)\n")
      << "a loop that never runs does nothing";
}

TEST_F(InjectDoubleBufferTest, TwoBuffersShareOnePipeline) {
  // VTA's GEMM loop: load the input and the weight tile, then multiply.
  Buffer w = DeclBuffer({2, 2}, kInt32, "W", "local");
  Stmt body = AllocateFor(
      b, AllocateFor(w, Loop(i, 4, SeqStmt({
                                       Scope(b, BufferStore(b, BufferLoad(x, {i}), {0})),
                                       Scope(w, BufferStore(w, BufferLoad(x, {Add(i, 8)}), {1, 1})),
                                       BufferStore(out, Mul(BufferLoad(b, {0}),
                                                            BufferLoad(w, {1, 1})),
                                                   {i}),
                                   }))));
  EXPECT_EQ(Run(body),
            "    B = T.allocate([8], \"int32\", \"local\")\n"
            "    W = T.allocate([2, 2, 2], \"int32\", \"local\")\n"
            "    B_1[0] = X[0]\n"
            "    W_1[0, 1, 1] = X[0 + 8]\n"
            "    for i in range(3):\n"
            "        B_1[(i + 1) % 2 * 4] = X[i + 1]\n"
            "        W_1[(i + 1) % 2, 1, 1] = X[i + 1 + 8]\n"
            "        Out[i] = B_1[i % 2 * 4] * W_1[i % 2, 1, 1]\n"
            "    Out[3] = B_1[4] * W_1[1, 1, 1]\n");
}

TEST_F(InjectDoubleBufferTest, UserErrors) {
  Buffer acc = DeclBuffer({1}, kInt32, "Acc", "local");
  auto loop = [&](Stmt producer, Stmt consumer) {
    return AllocateFor(b, AllocateFor(acc, Loop(i, 4, SeqStmt({Scope(b, producer), consumer}))));
  };
  Stmt produce = BufferStore(b, BufferLoad(x, {i}), {0});
  Stmt consume = BufferStore(out, BufferLoad(b, {0}), {i});
  EXPECT_EQ(Error(loop(produce, SeqStmt({consume, BufferStore(b, 0, {0})}))),
            "cannot double-buffer 'B' in the loop over 'i': the consumer writes it too; only the "
            "statements inside its double_buffer_scope may write it");
  EXPECT_EQ(Error(loop(BufferStore(b, BufferLoad(acc, {0}), {0}),
                       BufferStore(acc, BufferLoad(b, {0}), {0}))),
            "cannot double-buffer 'B' in the loop over 'i': its producer accesses 'Acc', which "
            "the consumer writes; producing the next tile before this one is consumed would "
            "change what the producer sees");
  EXPECT_EQ(Error(loop(SeqStmt({produce, BufferStore(acc, i, {0})}),
                       BufferStore(out, BufferLoad(acc, {0}), {i}))),
            "cannot double-buffer 'B' in the loop over 'i': its producer also writes 'Acc', "
            "which the consumer reads; producing the next tile before this one is consumed "
            "would overwrite what the consumer needs");
  EXPECT_EQ(Error(AllocateFor(b, SeqStmt({Loop(i, 4, SeqStmt({Scope(b, produce), consume})),
                                          BufferStore(out, BufferLoad(b, {0}), {9})}))),
            "buffer 'B' is double-buffered, but accessed outside the loop that pipelines it, in "
            "B[0]; its two halves hold only that loop's tiles, so keep every access inside the "
            "loop");
  EXPECT_EQ(Error(AllocateFor(b, Loop(i, 4, SeqStmt({consume, Scope(b, produce)})))),
            "the double_buffer_scope of B must be a leading statement of the body of the loop "
            "it pipelines (around the producer, before the consumer); it is not, in:\n"
            "with T.attr(B, \"double_buffer_scope\", 1):\n"
            "    B_1[0] = X[i]\n");
  EXPECT_EQ(Error(Loop(i, 4, SeqStmt({Scope(x, BufferStore(x, i, {i})), consume}))),
            "cannot double-buffer 'X' in the loop over 'i': it is not allocated outside the "
            "loop; allocate it before the loop");
  EXPECT_EQ(Error(AllocateFor(b, Loop(i, 4, SeqStmt({Scope(b, produce), consume}),
                                      ForKind::kParallel))),
            "cannot double-buffer 'B' in the loop over 'i': it is a parallel loop, whose "
            "iterations are not ordered; only serial and unrolled loops can be pipelined");
  EXPECT_EQ(Error(loop(produce, Evaluate(call_extern(kInt32, "use", {b->data})))),
            "cannot give allocation 'B' 2 copies (double buffering): its handle is used "
            "directly in T.call_extern(\"int32\", \"use\", B), and only element accesses B[...] "
            "can be sent to a copy");
}

// ---------------------------------------------------------------- differential

constexpr int kInputs = 64;
constexpr int kOutputs = 64;

// for i in range(tiles): produce tile i of In into B (and sometimes a 2-d W); consume it
// into Out and a running sum that the producer never reads.
class PipelineGenerator {
 public:
  // The loop runs `tiles` times, or n times (a parameter) when `symbolic`.
  PipelineGenerator(uint64_t seed, bool symbolic, int64_t tiles)
      : rng_(seed), tiles_(symbolic ? PrimExpr(n_) : PrimExpr(IntImm(kInt32, tiles))) {}

  PrimFunc Generate() {
    int64_t size = Uniform(1, 5);
    Buffer b = DeclBuffer({static_cast<int>(size)}, kInt32, "B", "local");
    Buffer w = DeclBuffer({2, 3}, kInt32, "W", "local");
    bool with_w = Chance(0.5);
    Var j("j"), k("k");
    PrimExpr tile = i_ * static_cast<int>(size);
    // The producer may read back what it just wrote (its own half).
    Array<Stmt> produce{Loop(j, static_cast<int>(size),
                             BufferStore(b, Add(Mul(BufferLoad(in_, {floormod(tile + j, kInputs)}),
                                                    Coefficient()),
                                                Mul(i_, Coefficient())),
                                         {j}))};
    if (Chance(0.5)) {
      int64_t element = Uniform(0, size - 1);
      produce.push_back(BufferStore(
          b, Add(BufferLoad(b, {static_cast<int>(element)}), BufferLoad(b, {0})),
          {static_cast<int>(element)}));
    }
    Array<Stmt> body{Scope(b, SeqOf(produce))};
    if (with_w) {
      PrimExpr loaded = Add(BufferLoad(in_, {floormod(i_ + k, kInputs)}), k);
      body.push_back(Scope(w, Loop(k, 3, BufferStore(w, loaded, {floormod(i_, 2), k}))));
    }
    PrimExpr element = Add(BufferLoad(b, {j}),
                           Mul(BufferLoad(b, {floormod(j + static_cast<int>(Uniform(0, 4)),
                                                       static_cast<int>(size))}),
                               Coefficient()));
    if (with_w) element = Add(element, BufferLoad(w, {floormod(i_, 2), floormod(j, 3)}));
    body.push_back(Loop(j, static_cast<int>(size),
                        SeqStmt({BufferStore(out_, element, {floormod(tile + j, kOutputs)}),
                                 BufferStore(sum_, Add(BufferLoad(sum_, {0}), element), {0})})));
    Stmt loop = For(i_, 0, tiles_, ForKind::kSerial, SeqStmt(body), IterVar(), {});
    Stmt allocated = AllocateFor(b, with_w ? AllocateFor(w, loop) : loop);
    return PrimFunc({in_->data, out_->data, sum_->data, n_},
                    {{in_->data, in_}, {out_->data, out_}, {sum_->data, sum_}}, allocated,
                    DataType::Void(), {});
  }

 private:
  int64_t Uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  bool Chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  PrimExpr Coefficient() { return IntImm(kInt32, Uniform(-3, 3)); }
  static Stmt SeqOf(const Array<Stmt>& stmts) {
    return stmts.size() == 1 ? stmts[0] : SeqStmt(stmts);
  }

  Var n_{"n"};
  std::mt19937_64 rng_;
  PrimExpr tiles_;
  Var i_{"i"};
  Buffer in_ = DeclBuffer({kInputs}, kInt32, "In");
  Buffer out_ = DeclBuffer({kOutputs}, kInt32, "Out");
  Buffer sum_ = DeclBuffer({1}, kInt32, "Sum");
};

std::vector<int64_t> RunOn(const PrimFunc& func, int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  HostArray in(kInt32, {kInputs}), out(kInt32, {kOutputs}), sum(kInt32, {1});
  for (int e = 0; e < kInputs; ++e) in.SetInt(e, std::uniform_int_distribution<int>(-9, 9)(rng));
  Interpreter().Run(func, {in, out, sum, Value::Int(kInt32, n)});
  std::vector<int64_t> result{sum.GetInt(0)};
  for (int e = 0; e < kOutputs; ++e) result.push_back(out.GetInt(e));
  return result;
}

TEST(InjectDoubleBufferDifferentialTest, MatchesTheUnpipelinedLoop) {
  constexpr std::array<int64_t, 4> kTileCounts{1, 2, 3, 7};
  for (int seed = 0; seed < 400; ++seed) {
    int64_t tiles = kTileCounts[seed % 4];
    bool symbolic = seed % 3 == 0;
    PrimFunc original = PipelineGenerator(seed, symbolic, tiles).Generate();
    PrimFunc transformed = InjectDoubleBuffer()(original);
    ASSERT_FALSE(transformed.same_as(original));
    // A symbolic count is also run with no tiles at all, which the guard must skip.
    for (int64_t n : symbolic ? std::vector<int64_t>{tiles, 0} : std::vector<int64_t>{tiles}) {
      std::vector<int64_t> expected = RunOn(original, n, seed);
      std::vector<int64_t> actual;
      try {
        actual = RunOn(transformed, n, seed);
      } catch (const loom::Error& e) {
        FAIL() << "program " << seed << " failed after the pass: " << e.what() << "\n"
               << ToScript(transformed);
      }
      ASSERT_EQ(actual, expected) << "program " << seed << " with n = " << n << "\nbefore:\n"
                                  << ToScript(original) << "after:\n" << ToScript(transformed);
    }
  }
}

}  // namespace
}  // namespace loom::tir::transform
