// schedule_reduce on long reductions into few outputs, which it splits into partial
// reductions (rfactor): results against double references for every reduction (lengths
// that are no multiple of the lanes or of the chunks, several reduced axes, keepdims,
// injective epilogues and producers, tuple reductions), the lowered loops (parallel chunks,
// 16-lane partial sums), and the reductions it leaves as they were.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "loom/ir/printer.h"
#include "loom/topi/elementwise.h"
#include "loom/topi/reduction.h"
#include "topi_test_util.h"

namespace loom::topi {
namespace {

using target_test::RandomArray;

const DataType kF32 = DataType::Float(32);

struct Shape {
  std::vector<int64_t> dims;
  std::vector<int> axes;  // empty: every dimension
  bool keepdims = false;
};

std::string Describe(const Shape& shape) {
  std::string text = "shape (";
  for (int64_t d : shape.dims) text += std::to_string(d) + ",";
  text += ") axes (";
  for (int a : shape.axes) text += std::to_string(a) + ",";
  return text + ") keepdims " + std::to_string(shape.keepdims);
}

// The elements each output reduces, as flat input positions, in the output's order.
std::vector<std::vector<int64_t>> Groups(const Shape& shape) {
  size_t rank = shape.dims.size();
  std::vector<bool> reduced(rank, shape.axes.empty());
  for (int a : shape.axes) reduced[a < 0 ? a + rank : a] = true;
  int64_t outputs = 1, total = 1;
  for (size_t d = 0; d < rank; ++d) {
    total *= shape.dims[d];
    if (!reduced[d]) outputs *= shape.dims[d];
  }
  std::vector<std::vector<int64_t>> groups(outputs);
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t rest = flat, out = 0, stride = 1;
    for (size_t d = rank; d-- > 0;) {
      int64_t i = rest % shape.dims[d];
      rest /= shape.dims[d];
      if (!reduced[d]) {
        out += i * stride;
        stride *= shape.dims[d];
      }
    }
    groups[out].push_back(flat);
  }
  return groups;
}

using Op = std::function<te::Tensor(const te::Tensor&, const std::vector<int>&, bool)>;

struct Reduction {
  std::string name;
  Op op;
  // The expected value of one output and the tolerance of its comparison, from the
  // reduced values.
  std::function<std::pair<double, double>(const std::vector<double>&)> expect;
  bool near_one = false;  // prod: values near 1, so that long products stay finite
};

double SumOf(const std::vector<double>& v, const std::function<double(double)>& f) {
  double total = 0;
  for (double x : v) total += f(x);
  return total;
}

// Float sums in another order differ by rounding: tolerances are relative to the sum of
// the magnitudes.
std::vector<Reduction> AllReductions() {
  auto id = [](double x) { return x; };
  auto magnitude = [](double x) { return std::abs(x); };
  auto square = [](double x) { return x * x; };
  return {
      {"sum", [](auto& x, auto& a, bool k) { return sum(x, a, k); },
       [=](const std::vector<double>& v) {
         return std::pair{SumOf(v, id), 1e-6 * SumOf(v, magnitude)};
       }},
      {"mean", [](auto& x, auto& a, bool k) { return mean(x, a, k); },
       [=](const std::vector<double>& v) {
         double n = static_cast<double>(v.size());
         return std::pair{SumOf(v, id) / n, 1e-6 * SumOf(v, magnitude) / n};
       }},
      {"max", [](auto& x, auto& a, bool k) { return max(x, a, k); },
       [](const std::vector<double>& v) {
         double best = -std::numeric_limits<double>::infinity();
         for (double x : v) best = std::max(best, x);
         return std::pair{best, 0.0};
       }},
      {"min", [](auto& x, auto& a, bool k) { return min(x, a, k); },
       [](const std::vector<double>& v) {
         double best = std::numeric_limits<double>::infinity();
         for (double x : v) best = std::min(best, x);
         return std::pair{best, 0.0};
       }},
      {"prod", [](auto& x, auto& a, bool k) { return prod(x, a, k); },
       [](const std::vector<double>& v) {
         double product = 1;
         for (double x : v) product *= x;
         // Each product rounds by 2^-24 relative; the errors add up like a random walk.
         return std::pair{product, 1e-4 * std::abs(product)};
       },
       true},
      {"l2_norm", [](auto& x, auto& a, bool k) { return l2_norm(x, a, k); },
       [=](const std::vector<double>& v) {
         double norm = std::sqrt(SumOf(v, square));
         return std::pair{norm, 1e-6 * norm};
       }},
  };
}

// Runs `out` = reduction of x (float32, `shape`) under schedule_reduce and compares every
// output with `expect` of its reduced elements.
void ExpectReduction(const Shape& shape, const Reduction& reduction) {
  te::Tensor x = te::placeholder(test::Exprs(shape.dims), kF32, "x");
  te::Tensor out = reduction.op(x, shape.axes, shape.keepdims);
  // Multiples of 1/4 in [-4, 4]: their sums are exact in float32 here, so a single element
  // missed or counted twice (a chunk boundary) exceeds the rounding tolerances.
  tir::HostArray input = RandomArray(kF32, shape.dims, 31);
  for (int64_t i = 0; i < input.NumElements(); ++i) {
    double quarter = std::round(input.GetFloat(i) * 4) / 4;
    input.SetFloat(i, reduction.near_one ? 1 + quarter / 64 : quarter);
  }
  tir::HostArray got = test::RunScheduled(schedule_reduce({out}), {x}, {out}, {input})[0];
  std::vector<std::vector<int64_t>> groups = Groups(shape);
  ASSERT_EQ(got.NumElements(), static_cast<int64_t>(groups.size())) << Describe(shape);
  for (size_t o = 0; o < groups.size(); ++o) {
    std::vector<double> values;
    for (int64_t flat : groups[o]) values.push_back(input.GetFloat(flat));
    auto [want, tolerance] = reduction.expect(values);
    EXPECT_NEAR(got.GetFloat(static_cast<int64_t>(o)), want, tolerance)
        << reduction.name << " " << Describe(shape) << " output " << o;
  }
}

// The lanes apply where the innermost reduced axis is read with stride 1 and is a multiple
// of 16 (else 8, else 4) long; the chunks where the reduction is large enough to run in
// parallel. Chunk counts (here 2 to 8) do not divide the reductions. Every reduction runs on
// the first shapes, sum and max (one per combiner kind) on the others.
TEST(TopiReductionRfactor, EveryReductionAgainstDoubleReferences) {
  std::vector<Shape> every = {
      {{66000}, {}},                  // into 1: 16 lanes, 4125 vectors in 8 chunks
      {{3, 40003}, {1}},              // into 3, odd length: chunks of scalar partial sums
      {{2, 133, 176}, {1, 2}, true},  // two reduced axes fused: 16 lanes, 2 chunks
      {{20000, 24}, {-2}},            // kept innermost dimension vectorized, 2 chunks
  };
  std::vector<Shape> some = {
      {{20000}, {0}, true},     // into 1, too small to run in parallel: lanes only
      {{3, 20004}, {-1}},       // 4 lanes, 2 chunks
      {{2, 130, 200}, {1, 2}},  // 8 lanes, 3 chunks
      {{50000, 5}, {0}},        // kept innermost dimension shorter than the lanes: 6 chunks
  };
  for (const Reduction& reduction : AllReductions()) {
    for (const Shape& shape : every) ExpectReduction(shape, reduction);
    if (reduction.name != "sum" && reduction.name != "max") continue;
    for (const Shape& shape : some) ExpectReduction(shape, reduction);
  }
}

TEST(TopiReductionRfactor, ProducersAndIntegers) {
  // An inlined injective producer (relu) read by the partial reductions, and logsumexp's
  // two chained long reductions.
  std::vector<int64_t> dims = {2, 33000};
  te::Tensor x = te::placeholder(test::Exprs(dims), kF32, "x");
  tir::HostArray input = RandomArray(kF32, dims, 7);
  te::Tensor relu_sum = sum(relu(x), {1});
  te::Tensor lse = logsumexp(x, {1});
  std::vector<tir::HostArray> got = {
      test::RunScheduled(schedule_reduce({relu_sum}), {x}, {relu_sum}, {input})[0],
      test::RunScheduled(schedule_reduce({lse}), {x}, {lse}, {input})[0]};
  for (int64_t row = 0; row < 2; ++row) {
    double positive = 0, exps = 0;
    for (int64_t k = 0; k < dims[1]; ++k) {
      double v = input.GetFloat(row * dims[1] + k);
      positive += std::max(v, 0.0);
      exps += std::exp(v);
    }
    EXPECT_NEAR(got[0].GetFloat(row), positive, 1e-6 * positive) << "sum(relu) row " << row;
    EXPECT_NEAR(got[1].GetFloat(row), std::log(exps), 1e-5) << "logsumexp row " << row;
  }
  // Integer sums are exact in any order.
  std::vector<int64_t> long_dims = {70001};
  te::Tensor i = te::placeholder(test::Exprs(long_dims), DataType::Int(32), "i");
  tir::HostArray ints = RandomArray(DataType::Int(32), long_dims, 8);
  te::Tensor total = sum(i);
  int64_t want = 0;
  for (int64_t k = 0; k < long_dims[0]; ++k) want += ints.GetInt(k);
  EXPECT_EQ(test::RunScheduled(schedule_reduce({total}), {i}, {total}, {ints})[0].GetInt(0), want);
}

// Tuple reductions split too: ties (values from a small set) keep ONNX's first or last index
// across lanes and chunks.
TEST(TopiReductionRfactor, ArgmaxAndArgminOfLongRowsWithTies) {
  std::vector<int64_t> dims = {2, 48000};
  te::Tensor x = te::placeholder(test::Exprs(dims), kF32, "x");
  tir::HostArray random = RandomArray(DataType::Int(32), dims, 12);
  tir::HostArray input(kF32, dims);
  for (int64_t i = 0; i < input.NumElements(); ++i) input.SetFloat(i, double(random.GetInt(i) % 7));
  for (bool largest : {true, false}) {
    for (bool last : {false, true}) {
      te::Tensor out = largest ? argmax(x, 1, false, last) : argmin(x, 1, false, last);
      tir::HostArray got = test::RunScheduled(schedule_reduce({out}), {x}, {out}, {input})[0];
      for (int64_t row = 0; row < 2; ++row) {
        int64_t best = 0;
        for (int64_t k = 1; k < dims[1]; ++k) {
          double v = input.GetFloat(row * dims[1] + k), b = input.GetFloat(row * dims[1] + best);
          bool better = largest ? v > b : v < b;
          if (better || (v == b && last)) best = k;
        }
        EXPECT_EQ(got.GetInt(row), best)
            << (largest ? "argmax" : "argmin") << " last " << last << " row " << row;
      }
    }
  }
}

std::string LoweredReduction(const te::Tensor& x, const te::Tensor& out) {
  return ToScript(te::lower(schedule_reduce({out}), {x, out}, "f"));
}

// sum of 2^20 elements into a scalar: 64 chunks in parallel, each accumulating 16-lane
// vectors of x, then the chunks' vectors added, then the 16 lanes.
TEST(TopiReductionRfactor, LongFullSumLowersToParallelVectorPartialSums) {
  te::Tensor x = te::placeholder({1 << 20}, kF32, "x");
  std::string text = LoweredReduction(x, sum(x));
  EXPECT_NE(text.find("in T.parallel(0, 64):"), std::string::npos) << text;
  EXPECT_NE(text.find("sum.rf.rf[T.Ramp(k0.outer.outer.k0.inner.outer.fused * 16, 1, 16)] = "
                      "sum.rf.rf[T.Ramp(k0.outer.outer.k0.inner.outer.fused * 16, 1, 16)] + "
                      "x[T.Ramp(k0.outer.outer.k0.inner.outer.fused * 16384 + "
                      "k0.outer.inner * 16, 1, 16)]"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("sum.rf[T.Ramp(0, 1, 16)] = sum.rf[T.Ramp(0, 1, 16)] + "
                      "sum.rf.rf[T.Ramp(k0.outer.outer.v * 16, 1, 16)]"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("sum_1[0] = sum_1[0] + sum.rf[k0.inner.v]"), std::string::npos) << text;
}

// Short reductions, many outputs and symbolic lengths keep the schedule of one task per
// output (no partial reductions): the same lowered function as before rfactor existed.
TEST(TopiReductionRfactor, OtherReductionsAreScheduledPerOutput) {
  auto stages = [](const te::Tensor& out) { return schedule_reduce({out}).stages().size(); };
  te::Tensor short_rows = te::placeholder({8, 1000}, kF32, "x");
  EXPECT_EQ(stages(sum(short_rows, {1})), 2u);
  te::Tensor many_rows = te::placeholder(test::Exprs({kRfactorMaxOutputs, kRfactorMinLength}), kF32, "x");
  EXPECT_EQ(stages(sum(many_rows, {1})), 2u);
  te::Tensor long_few = te::placeholder(test::Exprs({kRfactorMaxOutputs - 1, kRfactorMinLength}), kF32, "x");
  EXPECT_EQ(stages(sum(long_few, {1})), 3u);  // lanes; 255 rows are tasks enough
  Var n("n", DataType::Int(32));
  te::Tensor symbolic = te::placeholder({n}, kF32, "x");
  EXPECT_EQ(stages(sum(symbolic)), 2u);
  // The short reduction's loops: 16 rows at a time in parallel (above 2^15 elements), the
  // rows' sums accumulating as one vector; the last 8 rows peeled.
  te::Tensor rows = te::placeholder({40, 1000}, kF32, "x");
  EXPECT_EQ(LoweredReduction(rows, sum(rows, {1})), R"(@T.prim_func
def f(x: T.Buffer((40, 1000), "float32"), sum: T.Buffer((40,), "float32")):
    for i.outer in T.parallel(0, 2):
        sum[T.Ramp(i.outer * 16, 1, 16)] = T.Broadcast(T.float32(0.0), 16)
        for k1 in range(1000):
            sum[T.Ramp(i.outer * 16, 1, 16)] = sum[T.Ramp(i.outer * 16, 1, 16)] + x_1[T.Ramp(i.outer * 16000 + k1, 1000, 16)]
    for i.inner.init in range(16):
        if i.inner.init < 8:
            sum[i.inner.init + 32] = T.float32(0.0)
    for k1 in range(1000):
        for i.inner in range(16):
            if i.inner < 8:
                sum[i.inner + 32] = sum[i.inner + 32] + x_1[i.inner * 1000 + k1 + 32000]
)");
}

}  // namespace
}  // namespace loom::topi
