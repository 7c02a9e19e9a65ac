// StorageFlatten: golden text before/after for each layout rule (compact, explicit strides,
// element offset, aligned dimensions, Allocate, vector indices), the user errors, and a
// differential test: random loop nests over N-d buffers and views give the same outputs in
// the interpreter before and after flattening.
#include <gtest/gtest.h>

#include <random>
#include <unordered_map>

#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"
#include "loom/tir/interpreter.h"
#include "loom/tir/transform.h"
#include "random_expr.h"

namespace loom::tir::transform {
namespace {

const DataType kInt32 = DataType::Int(32);
const DataType kFloat32 = DataType::Float(32);

Stmt Loop(const Var& v, PrimExpr extent, Stmt body, ForKind kind = ForKind::kSerial) {
  return For(v, 0, extent, kind, body, IterVar(), {});
}

PrimFunc Func(const std::vector<Buffer>& params, Stmt body) {
  Array<Var> vars;
  BufferMap buffer_map;
  for (const Buffer& b : params) {
    vars.push_back(b->data);
    buffer_map.emplace_back(b->data, b);
  }
  return PrimFunc(vars, buffer_map, body, DataType::Void(), {});
}

std::string Body(const PrimFunc& func) {
  std::string text = ToScript(func);
  return text.substr(text.find('\n', text.find("def ")) + 1);
}

Buffer Strided(const std::string& name, Array<PrimExpr> shape, Array<PrimExpr> strides,
               PrimExpr elem_offset = PrimExpr(), DataType dtype = kFloat32) {
  return Buffer(Var(name, DataType::Handle()), dtype, std::move(shape), std::move(strides),
                std::move(elem_offset), name, "global", 64, 1);
}

// A buffer over the data of an Allocate.
Stmt AllocateFor(const Buffer& buffer, Array<PrimExpr> extents, Stmt body) {
  return Allocate(buffer->data, buffer->dtype, std::move(extents), PrimExpr(), body, "global");
}

Stmt Align(const Buffer& buffer, int dim, int factor, int offset, Stmt body) {
  return AttrStmt(buffer, "buffer_dim_align",
                  call_intrin(kInt32, "tvm_tuple", {dim, factor, offset}), body);
}

class StorageFlattenTest : public ::testing::Test {
 protected:
  Var i{"i"}, j{"j"}, k{"k"};
  Buffer a = DeclBuffer({16, 32}, kFloat32, "A");
  Buffer b = DeclBuffer({16, 32}, kFloat32, "B");
};

TEST_F(StorageFlattenTest, TwoDimensionalAccessesBecomeRowMajorOffsets) {
  PrimFunc func =
      Func({a, b}, Loop(i, 16, Loop(j, 32, BufferStore(b, BufferLoad(a, {i, j}) + 1.0f, {i, j}))));
  PrimFunc flat = StorageFlatten()(func);
  EXPECT_EQ(ToScript(flat),
            "@T.prim_func\n"
            "def main(A: T.Buffer((16, 32), \"float32\"), B: T.Buffer((16, 32), \"float32\")):\n"
            "    for i in range(16):\n"
            "        for j in range(32):\n"
            "            B_1[i * 32 + j] = A_1[i * 32 + j] + T.float32(1.0)\n")
      << "the parameters keep their 2-d declaration (the calling convention)";
  const auto* store = flat->body.as<ForNode>()->body.as<ForNode>()->body.as<BufferStoreNode>();
  EXPECT_TRUE(store->buffer->data.same_as(b->data)) << "the flat view shares B's data";
  EXPECT_EQ(ToScript(store->buffer), "T.Buffer((512,), \"float32\")");
}

TEST_F(StorageFlattenTest, ThreeDimensionalAccess) {
  Buffer c = DeclBuffer({4, 8, 16}, kInt32, "C");
  Var n("n");
  Buffer d = DeclBuffer({n, 8, 16}, kInt32, "D");
  PrimFunc func = Func({c, d}, BufferStore(d, BufferLoad(c, {i, j, k}), {i, j, k}));
  PrimFunc flat = StorageFlatten()(func);
  EXPECT_EQ(Body(flat), "    D_1[i * 128 + j * 16 + k] = C_1[i * 128 + j * 16 + k]\n");
  const auto* store = flat->body.as<BufferStoreNode>();
  EXPECT_EQ(ToScript(store->buffer), "T.Buffer((128 * n,), \"int32\")")
      << "a symbolic outer extent scales the flat extent";
}

TEST_F(StorageFlattenTest, ExplicitStridesAreUsedAsGiven) {
  Buffer padded = Strided("P", {16, 32}, {40, 1});
  Buffer column_major = Strided("Q", {16, 32}, {1, 16});
  Var s0("s0"), s1("s1");
  Buffer symbolic = Strided("S", {16, 32}, {s0, s1});
  PrimFunc func = Func(
      {padded, column_major, symbolic},
      BufferStore(padded, BufferLoad(column_major, {i, j}) + BufferLoad(symbolic, {i, j}), {i, j}));
  PrimFunc flat = StorageFlatten()(func);
  EXPECT_EQ(Body(flat), "    P_1[i * 40 + j] = Q_1[i + j * 16] + S_1[i * s0 + j * s1]\n");
  const auto* store = flat->body.as<BufferStoreNode>();
  EXPECT_EQ(ToScript(store->buffer), "T.Buffer((632,), \"float32\")")
      << "15 * 40 + 31 * 1 + 1 elements";
}

TEST_F(StorageFlattenTest, ElementOffsetStartsTheIndex) {
  Buffer shifted = Strided("O", {16, 32}, {}, 5);
  Var offset("offset");
  Buffer symbolic = Strided("V", {16, 32}, {}, offset);
  PrimFunc func =
      Func({shifted, symbolic}, BufferStore(shifted, BufferLoad(symbolic, {i, j}), {i, j}));
  PrimFunc flat = StorageFlatten()(func);
  EXPECT_EQ(Body(flat), "    O_1[5 + i * 32 + j] = V_1[offset + i * 32 + j]\n");
  const auto* store = flat->body.as<BufferStoreNode>();
  EXPECT_EQ(ToScript(store->buffer), "T.Buffer((517,), \"float32\")");
}

TEST_F(StorageFlattenTest, AllocateGetsOneExtent) {
  Buffer t = DeclBuffer({16, 32}, kFloat32, "T");
  Stmt body = AllocateFor(t, {16, 32},
                          SeqStmt({BufferStore(t, BufferLoad(a, {i, j}), {i, j}),
                                   BufferStore(b, BufferLoad(t, {i, j}), {i, j})}));
  EXPECT_EQ(Body(StorageFlatten()(Func({a, b}, body))),
            "    T = T.allocate([512], \"float32\", \"global\")\n"
            "    T_1[i * 32 + j] = A_1[i * 32 + j]\n"
            "    B_1[i * 32 + j] = T_1[i * 32 + j]\n");
}

TEST_F(StorageFlattenTest, AlignedDimensionPadsItsStride) {
  Buffer t = DeclBuffer({16, 30}, kFloat32, "T");
  // Dimension 0's stride is 30; the next value that is 1 modulo 8 is 33.
  Stmt body =
      Align(t, 0, 8, 1, AllocateFor(t, {16, 30}, BufferStore(t, BufferLoad(a, {i, j}), {i, j})));
  EXPECT_EQ(Body(StorageFlatten()(Func({a}, body))),
            "    T = T.allocate([528], \"float32\", \"global\")\n"
            "    T_1[i * 33 + j] = A_1[i * 32 + j]\n");
  // Aligning both dimensions of a 3-d buffer compounds: dim 2 stride 1 -> 4 (0 mod 4);
  // dim 1 stride 4 * 5 = 20 -> 24 (0 mod 8); dim 0 stride 24 * 3 = 72.
  Buffer u = DeclBuffer({2, 3, 5}, kFloat32, "U");
  Stmt nested = Align(
      u, 2, 4, 0, Align(u, 1, 8, 0, AllocateFor(u, {2, 3, 5}, BufferStore(u, 0.0f, {i, j, k}))));
  EXPECT_EQ(Body(StorageFlatten()(Func({}, nested))),
            "    U = T.allocate([144], \"float32\", \"global\")\n"
            "    U_1[i * 72 + j * 24 + k * 4] = T.float32(0.0)\n");
}

TEST_F(StorageFlattenTest, VectorIndices) {
  PrimExpr lanes4 = Ramp(0, 1, 4);
  Stmt body = SeqStmt({
      // Unit stride in the last dimension stays a unit-stride ramp.
      BufferStore(b, BufferLoad(a, {i, Ramp(j, 1, 4)}), {i, lanes4}),
      // A ramp over rows strides by the row length.
      BufferStore(b, BufferLoad(a, {Ramp(i, 2, 4), j}), {lanes4, j}),
      // Broadcast indices address one element in every lane.
      BufferStore(b, BufferLoad(a, {Broadcast(i, 4), Broadcast(j, 4)}), {i, lanes4}),
      // Any other vector index becomes vector arithmetic.
      BufferStore(b, BufferLoad(a, {i, Mul(lanes4, Broadcast(2, 4))}), {i, lanes4}),
  });
  EXPECT_EQ(Body(StorageFlatten()(Func({a, b}, body))),
            "    B_1[T.Ramp(i * 32, 1, 4)] = A_1[T.Ramp(i * 32 + j, 1, 4)]\n"
            "    B_1[T.Ramp(j, 32, 4)] = A_1[T.Ramp(i * 32 + j, 64, 4)]\n"
            "    B_1[T.Ramp(i * 32, 1, 4)] = A_1[T.Broadcast(i * 32 + j, 4)]\n"
            "    B_1[T.Ramp(i * 32, 1, 4)] = A_1[T.Broadcast(i * 32, 4) + T.Ramp(0, 1, 4) * "
            "T.Broadcast(2, 4)]\n");
}

TEST_F(StorageFlattenTest, FlatFunctionsAreLeftAlone) {
  Buffer flat_a = DeclBuffer({64}, kFloat32, "A");
  Buffer t = DeclBuffer({8}, kFloat32, "T");
  PrimFunc func = Func({flat_a}, AllocateFor(t, {8}, BufferStore(t, BufferLoad(flat_a, {i}), {i})));
  EXPECT_TRUE(StorageFlatten()(func).same_as(func));
  PrimFunc once = StorageFlatten()(Func({a, b}, BufferStore(b, BufferLoad(a, {i, j}), {i, j})));
  EXPECT_TRUE(StorageFlatten()(once).same_as(once)) << "flattening is idempotent";
}

TEST_F(StorageFlattenTest, ZeroDimensionalBuffer) {
  Buffer scalar = DeclBuffer({}, kFloat32, "S");
  EXPECT_EQ(
      Body(StorageFlatten()(Func({scalar, a}, BufferStore(scalar, BufferLoad(a, {0, 1}), {})))),
      "    S_1[0] = A_1[1]\n");
}

std::string ErrorOf(const PrimFunc& func) {
  try {
    StorageFlatten()(func);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST_F(StorageFlattenTest, InvalidAlignmentsAreUserErrors) {
  Buffer t = DeclBuffer({16, 30}, kFloat32, "T");
  auto aligned = [&](Stmt attr_body_wrapper) { return Func({a}, attr_body_wrapper); };
  Stmt use = AllocateFor(t, {16, 30}, BufferStore(t, 0.0f, {i, j}));
  EXPECT_EQ(ErrorOf(aligned(Align(a, 0, 8, 0, BufferStore(a, 0.0f, {i, j})))),
            "cannot align dimension 0 of buffer 'A': it is a parameter of the function, whose "
            "layout the caller decides; align a buffer the function allocates (a cache stage) "
            "instead");
  EXPECT_EQ(ErrorOf(aligned(Align(t, 2, 8, 0, use))),
            "cannot align dimension 2 of buffer 'T': it has 2 dimension(s)");
  EXPECT_EQ(ErrorOf(aligned(Align(t, 0, 8, 8, use))),
            "cannot align dimension 0 of buffer 'T' with factor 8 and offset 8: need factor > 0 "
            "and 0 <= offset < factor");
  EXPECT_EQ(ErrorOf(aligned(Align(t, 0, 8, 1, Align(t, 0, 4, 1, use)))),
            "dimension 0 of buffer 'T' is aligned twice, with different factors or offsets");
  Buffer strided = Strided("R", {16, 30}, {32, 1});
  EXPECT_EQ(
      ErrorOf(aligned(Align(strided, 0, 8, 0,
                            AllocateFor(strided, {512}, BufferStore(strided, 0.0f, {i, j}))))),
      "cannot align dimension 0 of buffer 'R': it declares explicit strides, which fix "
      "its layout");
  EXPECT_EQ(ErrorOf(aligned(AttrStmt(t, "buffer_dim_align", 8, use))),
            "attribute 'buffer_dim_align' of buffer 'T' must be T.tvm_tuple(dim, factor, offset) "
            "with constant integers, got 8");
  EXPECT_EQ(ErrorOf(aligned(AttrStmt(i, "buffer_dim_align", 8, use))),
            "attribute 'buffer_dim_align' must be attached to a Buffer, got i");
  EXPECT_EQ(ErrorOf(aligned(Align(t, 0, 8, 1, BufferStore(a, 0.0f, {i, j})))),
            "buffer 'T' has aligned dimensions but no Allocate of its data variable 'T' in the "
            "function: alignment pads storage the function itself allocates");
}

// ---------------------------------------------------------------- differential

constexpr int kRows = 4, kCols = 6;

// Random loop nests that read and write parameters, temporaries of every layout (compact,
// padded strides with an offset, aligned) and differently shaped views of one memory.
class FlattenProgramGenerator {
 public:
  explicit FlattenProgramGenerator(uint64_t seed) : rng_(seed) { scalars_.push_back({n_, 3, 1}); }

  PrimFunc Generate() {
    Array<Stmt> stages;
    for (int64_t count = Uniform(2, 5); count > 0; --count) stages.push_back(Stage());
    // Every temporary reaches the output, so a wrong temporary layout shows.
    Var r("r"), c("c");
    PrimExpr sum = BufferLoad(out_, {r, c});
    int64_t weight = 3;
    for (const Buffer& t : {compact_, padded_, aligned_}) {
      sum = sum + BufferLoad(t, {r, c}) * static_cast<int>(weight);
      weight *= 5;
    }
    stages.push_back(Loop(r, kRows, Loop(c, kCols, BufferStore(out_, sum, {r, c}))));
    Stmt body = SeqStmt(stages);
    body = AllocateFor(compact_, {kRows, kCols}, body);
    body = AllocateFor(padded_, {3 + (kRows - 1) * 8 + kCols}, body);
    body = AllocateFor(aligned_, {kRows, kCols}, body);
    body = Align(aligned_, 0, 4, 3, body);
    PrimFunc buffers = Func({in_, out_, out3_}, body);
    Array<Var> params = buffers->params;
    params.push_back(n_);
    return PrimFunc(params, buffers->buffer_map, body, DataType::Void(), {});
  }

 private:
  int64_t Uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }

  // An in-range index of a dimension of `extent`: a loop variable that fits, or a random
  // expression folded into range. Loop variables start at 0, so they only enter the random
  // expression as an addend (never as a divisor).
  PrimExpr Index(int64_t extent) {
    std::vector<Var> fitting;
    for (const Var& v : loops_) {
      if (loop_extent_[v.get()] <= extent) fitting.push_back(v);
    }
    if (!fitting.empty() && Uniform(0, 2) > 0) return fitting[Uniform(0, fitting.size() - 1)];
    PrimExpr index = Integer(2);
    if (!loops_.empty())
      index = index + loops_[Uniform(0, loops_.size() - 1)] * static_cast<int>(Uniform(1, 3));
    return floormod(index, static_cast<int>(extent));
  }

  PrimExpr Integer(int depth) {
    return loom::testing::RandomExprGenerator(&rng_, &scalars_).Integer(depth);
  }

  Buffer AnyBuffer() {
    const Buffer* choices[] = {&in_,      &out_,          &out3_,   &out_view_,
                               &compact_, &compact_view_, &padded_, &aligned_};
    return *choices[Uniform(0, 7)];
  }

  Array<PrimExpr> Indices(const Buffer& buffer) {
    Array<PrimExpr> indices;
    for (const PrimExpr& extent : buffer->shape) {
      int64_t n = 0;
      IsConstInt(extent, &n);
      indices.push_back(Index(n));
    }
    return indices;
  }

  // A vector access: a ramp of `lanes` along one dimension, scalar indices elsewhere.
  Array<PrimExpr> VectorIndices(const Buffer& buffer, int lanes, size_t* dim) {
    Array<PrimExpr> indices = Indices(buffer);
    *dim = Uniform(0, buffer->shape.size() - 1);
    int64_t extent = 0;
    IsConstInt(buffer->shape[*dim], &extent);
    int64_t stride = Uniform(1, 2);
    while ((lanes - 1) * stride >= extent) --stride;
    if (stride < 1) return {};
    indices[*dim] = Ramp(Index(extent - (lanes - 1) * stride), static_cast<int>(stride), lanes);
    return indices;
  }

  PrimExpr Scalar(int depth) {
    PrimExpr value = Integer(1);
    for (int64_t loads = Uniform(1, depth); loads > 0; --loads) {
      Buffer source = AnyBuffer();
      value = value + BufferLoad(source, Indices(source));
    }
    return value;
  }

  Stmt Store() {
    Buffer target = AnyBuffer();
    while (target.same_as(in_)) target = AnyBuffer();
    if (Uniform(0, 3) == 0) {
      int lanes = 2;
      size_t dim = 0;
      Array<PrimExpr> store_indices = VectorIndices(target, lanes, &dim);
      Buffer source = AnyBuffer();
      Array<PrimExpr> load_indices = VectorIndices(source, lanes, &dim);
      if (!store_indices.empty() && !load_indices.empty()) {
        PrimExpr value = BufferLoad(source, load_indices) + Broadcast(Integer(1), lanes);
        return BufferStore(target, value, store_indices);
      }
    }
    return BufferStore(target, Scalar(2), Indices(target));
  }

  Stmt Stage() {
    int depth = static_cast<int>(Uniform(0, 3));
    for (int d = 0; d < depth; ++d) {
      Var v("v" + std::to_string(loops_.size()));
      loops_.push_back(v);
      loop_extent_[v.get()] = Uniform(1, kCols);
    }
    Stmt body = Uniform(0, 1) ? SeqStmt({Store(), Store()}) : Store();
    for (int d = depth; d-- > 0;) {
      body = Loop(loops_.back(), static_cast<int>(loop_extent_[loops_.back().get()]), body);
      loops_.pop_back();
    }
    return body;
  }

  std::mt19937_64 rng_;
  Var n_{"n"};                                     // a scalar parameter, 3 when run
  std::vector<loom::testing::RangedVar> scalars_;  // what random expressions may divide by
  std::vector<Var> loops_;
  std::unordered_map<const Object*, int64_t> loop_extent_;
  Buffer in_ = DeclBuffer({kRows, kCols}, kInt32, "In");
  Buffer out_ = DeclBuffer({kRows, kCols}, kInt32, "Out");
  Buffer out3_ = DeclBuffer({2, 3, 4}, kInt32, "Out3");
  // The same memory as Out, seen as 3-d.
  Buffer out_view_ =
      Buffer(out_->data, kInt32, {2, 2, 6}, {}, PrimExpr(), "OutView", "global", 64, 1);
  Buffer compact_ = DeclBuffer({kRows, kCols}, kInt32, "TCompact");
  Buffer compact_view_ =
      Buffer(compact_->data, kInt32, {kRows * kCols}, {}, PrimExpr(), "TFlat", "global", 64, 1);
  Buffer padded_ = Strided("TPadded", {kRows, kCols}, {8, 1}, 3, kInt32);
  Buffer aligned_ = DeclBuffer({kRows, kCols}, kInt32, "TAligned");
};

struct RunResult {
  std::vector<int64_t> out, out3;
  bool operator==(const RunResult&) const = default;
};

std::optional<RunResult> RunOn(const PrimFunc& func, uint64_t seed, std::string* error) {
  std::mt19937_64 rng(seed);
  HostArray in(kInt32, {kRows, kCols}), out(kInt32, {kRows, kCols}), out3(kInt32, {2, 3, 4});
  for (HostArray* array : {&in, &out, &out3}) {
    for (int64_t e = 0; e < array->NumElements(); ++e) {
      array->SetInt(e, std::uniform_int_distribution<int>(-50, 50)(rng));
    }
  }
  try {
    Interpreter().Run(func, {in, out, out3, Value::Int(kInt32, 3)});
  } catch (const Error& e) {
    *error = e.what();
    return std::nullopt;
  }
  RunResult result;
  for (int64_t e = 0; e < out.NumElements(); ++e) result.out.push_back(out.GetInt(e));
  for (int64_t e = 0; e < out3.NumElements(); ++e) result.out3.push_back(out3.GetInt(e));
  return result;
}

TEST(StorageFlattenDifferentialTest, RandomLoopNestsKeepTheirOutputs) {
  constexpr int kPrograms = 500;
  int compared = 0;
  for (int seed = 0; seed < kPrograms; ++seed) {
    PrimFunc original = FlattenProgramGenerator(seed).Generate();
    std::string error;
    std::optional<RunResult> expected = RunOn(original, seed, &error);
    if (!expected) continue;
    PrimFunc flat = StorageFlatten()(original);
    std::optional<RunResult> actual = RunOn(flat, seed, &error);
    ASSERT_TRUE(actual.has_value())
        << "flattening made program " << seed << " fail: " << error << "\nbefore:\n"
        << ToScript(original) << "after:\n"
        << ToScript(flat);
    ASSERT_TRUE(*actual == *expected)
        << "flattening changed the outputs of program " << seed << "\nbefore:\n"
        << ToScript(original) << "after:\n"
        << ToScript(flat);
    ++compared;
  }
  EXPECT_GT(compared, kPrograms * 3 / 4) << "too few programs ran without error to compare";
}

}  // namespace
}  // namespace loom::tir::transform
