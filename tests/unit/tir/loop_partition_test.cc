// LoopPartition: golden text for the split patterns lowering produces (divisible and not,
// 1-D and 2-D, constant and symbolic extents), the config switch, loops left alone,
// allocations in a partitioned (parallel) loop, and a differential test of random splits
// run through the interpreter before and after.
#include <gtest/gtest.h>

#include <random>
#include <unordered_set>

#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"
#include "loom/ir/printer.h"
#include "loom/tir/interpreter.h"
#include "loom/tir/transform.h"

namespace loom::tir::transform {
namespace {

const DataType kInt32 = DataType::Int(32);

Stmt Loop(const Var& v, PrimExpr min, PrimExpr extent, Stmt body) {
  return For(v, min, extent, ForKind::kSerial, body, IterVar(), {});
}

PrimExpr Likely(PrimExpr condition) { return call_intrin(DataType::Bool(), "likely", {condition}); }

std::string Body(const PrimFunc& func) {
  std::string text = ToScript(func);
  return text.substr(text.find('\n', text.find("def ")) + 1);
}

// What lowering makes of split(i, factor) over [0, extent): the outer loop covers
// ceil(extent / factor) tiles and the body is guarded where the last tile overhangs.
Stmt SplitLoop(const Var& outer, const Var& inner, PrimExpr extent, int factor,
               const std::function<Stmt(PrimExpr)>& body) {
  PrimExpr index = outer * factor + inner;
  return Loop(outer, 0, floordiv(extent + (factor - 1), factor),
              Loop(inner, 0, factor, IfThenElse(Likely(index < extent), body(index), Stmt())));
}

class LoopPartitionTest : public ::testing::Test {
 protected:
  PrimFunc Func(Stmt body) {
    return PrimFunc({a->data, b->data, n, m}, {{a->data, a}, {b->data, b}}, body,
                    DataType::Void(), {});
  }
  std::string Run(Stmt body) { return Body(LoopPartition()(Func(body))); }
  Stmt Copy(PrimExpr index) { return BufferStore(b, BufferLoad(a, {index}) + 1, {index}); }

  Var n = SizeVar("n"), m = SizeVar("m");
  Var io{"io"}, ii{"ii"}, jo{"jo"}, ji{"ji"};
  Buffer a = DeclBuffer({256}, kInt32, "A");
  Buffer b = DeclBuffer({256}, kInt32, "B");
};

TEST_F(LoopPartitionTest, NonDivisibleSplitPeelsTheTail) {
  Stmt body = SplitLoop(io, ii, 10, 4, [&](PrimExpr index) { return Copy(index); });
  EXPECT_EQ(Run(body),
            "    for io in range(2):\n"
            "        for ii in range(4):\n"
            "            B[io * 4 + ii] = A[io * 4 + ii] + 1\n"
            "    for ii in range(4):\n"
            "        if ii < 2:\n"
            "            B[2 * 4 + ii] = A[2 * 4 + ii] + 1\n");
}

TEST_F(LoopPartitionTest, DivisibleSplitOnlyLosesItsCheck) {
  Stmt body = SplitLoop(io, ii, 12, 4, [&](PrimExpr index) { return Copy(index); });
  EXPECT_EQ(Run(body),
            "    for io in range(3):\n"
            "        for ii in range(4):\n"
            "            B[io * 4 + ii] = A[io * 4 + ii] + 1\n");
}

TEST_F(LoopPartitionTest, LongerTailStaysALoop) {
  Stmt body = SplitLoop(io, ii, 23, 8, [&](PrimExpr index) { return Copy(index); });
  EXPECT_EQ(Run(body),
            "    for io in range(2):\n"
            "        for ii in range(8):\n"
            "            B[io * 8 + ii] = A[io * 8 + ii] + 1\n"
            "    for ii in range(8):\n"
            "        if ii < 7:\n"
            "            B[2 * 8 + ii] = A[2 * 8 + ii] + 1\n");
}

TEST_F(LoopPartitionTest, TwoDimensionalTiles) {
  // A 10 x 6 array tiled 4 x 4: both splits overhang.
  Stmt body = Loop(io, 0, 3, Loop(jo, 0, 2, Loop(ii, 0, 4, Loop(ji, 0, 4,
      IfThenElse(Likely(io * 4 + ii < 10) && Likely(jo * 4 + ji < 6),
                 Copy((io * 4 + ii) * 6 + jo * 4 + ji), Stmt())))));
  EXPECT_EQ(Run(body),
            "    for io in range(2):\n"
            "        for ii in range(4):\n"
            "            for ji in range(4):\n"
            "                B[(io * 4 + ii) * 6 + 0 * 4 + ji] = A[(io * 4 + ii) * 6 + 0 * 4 + ji] + 1\n"
            "        for ii in range(4):\n"
            "            for ji in range(4):\n"
            "                if ji < 2:\n"
            "                    B[(io * 4 + ii) * 6 + 1 * 4 + ji] = A[(io * 4 + ii) * 6 + 1 * 4 + ji] + 1\n"
            "    for ii in range(4):\n"
            "        for ji in range(4):\n"
            "            if ii < 2:\n"
            "                B[(2 * 4 + ii) * 6 + 0 * 4 + ji] = A[(2 * 4 + ii) * 6 + 0 * 4 + ji] + 1\n"
            "    for ii in range(4):\n"
            "        for ji in range(4):\n"
            "            if ii < 2 and ji < 2:\n"
            "                B[(2 * 4 + ii) * 6 + 1 * 4 + ji] = A[(2 * 4 + ii) * 6 + 1 * 4 + ji] + 1\n")
      << "the tail row's column loop is partitioned in turn";
}

TEST_F(LoopPartitionTest, SymbolicExtent) {
  Stmt body = SplitLoop(io, ii, n, 4, [&](PrimExpr index) { return Copy(index); });
  EXPECT_EQ(Run(body),
            "    for io in range(n // 4):\n"
            "        for ii in range(4):\n"
            "            B[io * 4 + ii] = A[io * 4 + ii] + 1\n"
            "    for io in T.serial(n // 4, n // 4 + ((n + 3) // 4 - n // 4)):\n"
            "        for ii in range(4):\n"
            "            if io * 4 + ii < n:\n"
            "                B[io * 4 + ii] = A[io * 4 + ii] + 1\n");
}

TEST_F(LoopPartitionTest, LowerBoundChecksPeelTheHead) {
  // Padding: the first tile starts before the data.
  Stmt body = Loop(io, 0, 3, Loop(ii, 0, 4,
      IfThenElse(Likely(io * 4 + ii >= 2), Copy(io * 4 + ii - 2), Stmt())));
  EXPECT_EQ(Run(body),
            "    for ii in range(4):\n"
            "        if 2 <= ii:\n"
            "            B[0 * 4 + ii - 2] = A[0 * 4 + ii - 2] + 1\n"
            "    for io in T.serial(1, 3):\n"
            "        for ii in range(4):\n"
            "            B[io * 4 + ii - 2] = A[io * 4 + ii - 2] + 1\n");
}

TEST_F(LoopPartitionTest, LoopsWithoutLikelyConditionsAreLeftAlone) {
  PrimFunc plain = Func(Loop(io, 0, 3, Loop(ii, 0, 4, Copy(io * 4 + ii))));
  EXPECT_TRUE(LoopPartition()(plain).same_as(plain));
  // Not tagged likely, not linear, or reading memory: no candidate.
  PrimFunc untagged = Func(Loop(io, 0, 3, Loop(ii, 0, 4,
      SeqStmt({IfThenElse(io * 4 + ii < 10, Copy(io), Stmt()),
               IfThenElse(Likely(io * io < 5), Copy(io), Stmt()),
               IfThenElse(Likely(io < BufferLoad(a, {0})), Copy(io), Stmt())}))));
  EXPECT_TRUE(LoopPartition()(untagged).same_as(untagged));
}

TEST_F(LoopPartitionTest, ConfigPartitionsUntaggedConditions) {
  Stmt body = Loop(io, 0, 6, IfThenElse(io < 4, Copy(io), Copy(io + 8)));
  PassContext context;
  context.config["tir.LoopPartition.partition_const_loop"] = true;
  PassContextScope scope(context);
  EXPECT_EQ(Run(body),
            "    for io in range(4):\n"
            "        B[io] = A[io] + 1\n"
            "    for io in T.serial(4, 6):\n"
            "        B[io + 8] = A[io + 8] + 1\n");
}

// ---- allocations in the partitioned loop

// A `kind` loop i over 3 tiles with two temporaries per iteration: T (4 elements) holds the
// tile of A guarded by `in_bounds`, U (8) a second stage after T's last use, so a storage
// plan may put U in T's storage.
Stmt TwoTemporaries(const Buffer& a, const Buffer& b, ForKind kind,
                    const std::function<PrimExpr(PrimExpr)>& in_bounds) {
  Var i("i"), j("j"), k("k"), l("l");
  auto temporary = [](const std::string& name, const std::string& data, int size) {
    return Buffer(Var(data, DataType::Handle()), kInt32, {size}, {}, PrimExpr(), name,
                  "global", 64, 1);
  };
  Buffer t = temporary("T", "t", 4), u = temporary("U", "u", 8);
  PrimExpr index = i * 4 + j;
  Stmt guarded = IfThenElse(Likely(in_bounds(index)),
                            SeqStmt({BufferStore(t, BufferLoad(a, {index}) + 1, {j}),
                                     BufferStore(b, BufferLoad(t, {j}), {index})}),
                            Stmt());
  Stmt body = SeqStmt({Loop(j, 0, 4, guarded),
                       Loop(k, 0, 8, BufferStore(u, BufferLoad(a, {i * 8 + k}) * 2, {k})),
                       Loop(l, 0, 8, BufferStore(b, BufferLoad(u, {l}), {i * 8 + l + 100}))});
  body = Allocate(t->data, kInt32, {4}, PrimExpr(),
                  Allocate(u->data, kInt32, {8}, PrimExpr(), body, "global"), "global");
  return For(i, 0, 3, kind, body, IterVar(), {});
}

// The data variables bound by the function's Allocates, with repeats.
std::vector<const Object*> AllocatedVariables(const PrimFunc& func) {
  std::vector<const Object*> vars;
  PostOrderVisit(func->body, [&](const ObjectRef& node) {
    if (const auto* alloc = node.as<AllocateNode>()) vars.push_back(alloc->buffer_var.get());
  });
  return vars;
}

TEST_F(LoopPartitionTest, PeeledPartsAllocateTheirOwnTemporaries) {
  Stmt loop =
      TwoTemporaries(a, b, ForKind::kParallel, [](PrimExpr index) { return index < 10; });
  PrimFunc partitioned = LoopPartition()(Func(loop));
  // The temporaries stay in the parallel loop (per iteration); the tail's copy has its own.
  EXPECT_EQ(Body(partitioned),
            "    for i in T.parallel(0, 2):\n"
            "        t = T.allocate([4], \"int32\", \"global\")\n"
            "        u = T.allocate([8], \"int32\", \"global\")\n"
            "        for j in range(4):\n"
            "            T[j] = A[i * 4 + j] + 1\n"
            "            B[i * 4 + j] = T[j]\n"
            "        for k in range(8):\n"
            "            U[k] = A[i * 8 + k] * 2\n"
            "        for l in range(8):\n"
            "            B[i * 8 + l + 100] = U[l]\n"
            "    t_1 = T.allocate([4], \"int32\", \"global\")\n"
            "    u_1 = T.allocate([8], \"int32\", \"global\")\n"
            "    for j in range(4):\n"
            "        if j < 2:\n"
            "            T_1[j] = A[2 * 4 + j] + 1\n"
            "            B[2 * 4 + j] = T_1[j]\n"
            "    for k in range(8):\n"
            "        U_1[k] = A[2 * 8 + k] * 2\n"
            "    for l in range(8):\n"
            "        B[2 * 8 + l + 100] = U_1[l]\n");
  std::vector<const Object*> vars = AllocatedVariables(partitioned);
  ASSERT_EQ(vars.size(), 4u);
  EXPECT_EQ(std::unordered_set<const Object*>(vars.begin(), vars.end()).size(), 4u)
      << "each part binds its temporaries to variables of its own";
}

// Regression: the peeled copy of a parallel loop's body bound the loop's temporaries again,
// outside the loop, and StorageRewrite's plan for the function scope (U in T's storage,
// grown to 8) redirected U's accesses inside the loop as well, to the loop's own T of 4:
// the Winograd convolution's fused rows wrote out of bounds.
TEST_F(LoopPartitionTest, PeeledTemporariesSurviveStoragePlanning) {
  std::mt19937_64 rng(7);
  HostArray in(kInt32, {256}), init(kInt32, {256});
  for (int k = 0; k < 256; ++k) {
    in.SetInt(k, std::uniform_int_distribution<int>(-100, 100)(rng));
    init.SetInt(k, std::uniform_int_distribution<int>(-100, 100)(rng));
  }
  std::vector<std::pair<std::string, std::function<PrimExpr(PrimExpr)>>> bounds = {
      {"tail", [](PrimExpr index) { return index < 10; }},
      {"head", [](PrimExpr index) { return index >= 2; }}};
  for (ForKind kind : {ForKind::kParallel, ForKind::kSerial}) {
    for (const auto& [peel, in_bounds] : bounds) {
      PrimFunc original = Func(TwoTemporaries(a, b, kind, in_bounds));
      PrimFunc partitioned = LoopPartition()(original);
      PrimFunc planned = StorageRewrite()(partitioned);
      ASSERT_FALSE(partitioned.same_as(original)) << peel;
      HostArray want = init.Copy(), got = init.Copy();
      Interpreter().Run(original, {in, want, Value::Int(kInt32, 0), Value::Int(kInt32, 0)});
      Interpreter().Run(planned, {in, got, Value::Int(kInt32, 0), Value::Int(kInt32, 0)});
      for (int k = 0; k < 256; ++k) {
        ASSERT_EQ(got.GetInt(k), want.GetInt(k))
            << peel << " element " << k << "\nplanned:\n" << ToScript(planned);
      }
    }
  }
}

// Lowering sizes a tile's buffer from the loop's bounds (here the 4 or fewer elements of
// tile i): a peeled iteration substitutes i there too, else the interpreter (which checks
// accesses against the shape) reads i where no loop defines it.
TEST_F(LoopPartitionTest, PeeledIterationsSubstituteIntoBufferShapes) {
  Var i("i"), j("j");
  Buffer tile(Var("tile", DataType::Handle()), kInt32, {min(10 - i * 4, 4)}, {}, PrimExpr(),
              "Tile", "global", 64, 1);
  PrimExpr index = i * 4 + j;
  Stmt guarded = IfThenElse(Likely(index < 10),
                            SeqStmt({BufferStore(tile, BufferLoad(a, {index}) + 1, {j}),
                                     BufferStore(b, BufferLoad(tile, {j}), {index})}),
                            Stmt());
  PrimFunc original = Func(Loop(i, 0, 3, Allocate(tile->data, kInt32, {4}, PrimExpr(),
                                                  Loop(j, 0, 4, guarded), "global")));
  PrimFunc partitioned = LoopPartition()(original);
  ASSERT_FALSE(partitioned.same_as(original));
  HostArray in(kInt32, {256}), want(kInt32, {256});
  for (int k = 0; k < 256; ++k) in.SetInt(k, 3 * k - 100);
  HostArray got = want.Copy();
  Interpreter().Run(original, {in, want, Value::Int(kInt32, 0), Value::Int(kInt32, 0)});
  Interpreter().Run(partitioned, {in, got, Value::Int(kInt32, 0), Value::Int(kInt32, 0)});
  for (int k = 0; k < 256; ++k) ASSERT_EQ(got.GetInt(k), want.GetInt(k)) << "element " << k;
}

// ---- differential: random split nests, interpreted before and after

struct SplitCase {
  int extent0, factor0, extent1, factor1;
  bool two_dimensional, symbolic, lower_check;
};

PrimFunc RandomSplitFunc(const SplitCase& sc, const Buffer& in, const Buffer& out,
                         const Var& n) {
  Var io("io"), ii("ii"), jo("jo"), ji("ji");
  PrimExpr extent0 = sc.symbolic ? PrimExpr(n) : PrimExpr(sc.extent0);
  PrimExpr row = io * sc.factor0 + ii;
  PrimExpr condition = Likely(row < extent0);
  if (sc.lower_check) condition = condition && Likely(row >= 1);
  PrimExpr index = row;
  if (sc.two_dimensional) {
    PrimExpr col = jo * sc.factor1 + ji;
    condition = condition && Likely(col < sc.extent1);
    index = row * 16 + col;
  }
  Stmt body = IfThenElse(condition,
                         BufferStore(out, BufferLoad(in, {index}) * 2 + index, {index}), Stmt());
  if (sc.two_dimensional) {
    body = Loop(jo, 0, (sc.extent1 + sc.factor1 - 1) / sc.factor1, Loop(ji, 0, sc.factor1, body));
  }
  body = Loop(io, 0, floordiv(extent0 + (sc.factor0 - 1), sc.factor0),
              Loop(ii, 0, sc.factor0, body));
  return PrimFunc({in->data, out->data, n}, {{in->data, in}, {out->data, out}}, body,
                  DataType::Void(), {});
}

// A padded copy: the bound lives in an if_then_else expression, not an if statement. The
// main part loads unconditionally; the tail keeps the (simplified) select.
TEST_F(LoopPartitionTest, IfThenElseExpressionConditionsArePartitionedToo) {
  PrimExpr j = jo * 4 + ji;
  auto padded_copy = [&](PrimExpr condition) {
    PrimExpr value = call_intrin(kInt32, "if_then_else",
                                 {condition, BufferLoad(a, {j}), make_zero(kInt32)});
    return Loop(jo, 0, 3, Loop(ji, 0, 4, BufferStore(b, value, {j})));
  };
  Stmt body = padded_copy(Likely(j < 10));
  EXPECT_EQ(Run(body),
            "    for jo in range(2):\n"
            "        for ji in range(4):\n"
            "            B[jo * 4 + ji] = A[jo * 4 + ji]\n"
            "    for ji in range(4):\n"
            "        B[2 * 4 + ji] = T.if_then_else(ji < 2, A[2 * 4 + ji], 0)\n");
  // Without the likely tag nothing moves (the config is off).
  Stmt plain = padded_copy(j < 10);
  EXPECT_EQ(Run(plain), Body(Func(plain)));
}

TEST(LoopPartitionDifferentialTest, RandomSplitsComputeTheSame) {
  std::mt19937_64 rng(42);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Buffer in = DeclBuffer({256}, kInt32, "In");
  Buffer out = DeclBuffer({256}, kInt32, "Out");
  Var n("n");
  int partitioned = 0;
  constexpr int kCases = 300;
  for (int c = 0; c < kCases; ++c) {
    SplitCase sc{uniform(1, 15), uniform(1, 6), uniform(1, 15), uniform(1, 6),
                 uniform(0, 1) == 1, uniform(0, 3) == 0, uniform(0, 3) == 0};
    PrimFunc original = RandomSplitFunc(sc, in, out, n);
    PrimFunc transformed = LoopPartition()(original);
    partitioned += !transformed.same_as(original);
    HostArray in_data(kInt32, {256}), expected(kInt32, {256});
    for (int k = 0; k < 256; ++k) {
      in_data.SetInt(k, uniform(-100, 100));
      expected.SetInt(k, uniform(-100, 100));
    }
    HostArray actual = expected.Copy();
    Interpreter().Run(original, {in_data, expected, Value::Int(kInt32, sc.extent0)});
    Interpreter().Run(transformed, {in_data, actual, Value::Int(kInt32, sc.extent0)});
    for (int k = 0; k < 256; ++k) {
      ASSERT_EQ(actual.GetInt(k), expected.GetInt(k))
          << "element " << k << "\nbefore:\n" << ToScript(original) << "after:\n"
          << ToScript(transformed);
    }
  }
  EXPECT_GT(partitioned, kCases / 2);
}

}  // namespace
}  // namespace loom::tir::transform
