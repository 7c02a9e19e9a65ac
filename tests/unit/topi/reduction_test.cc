// Reductions compiled with schedule_reduce / schedule_softmax against references written
// here: every reduction over axis sets (single, several, negative, all; keepdims or not) on
// shapes with size-1 dimensions and sizes that are no multiple of the vector width, argmax /
// argmin ties, softmax along every axis, and the user errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "loom/ir/functor.h"
#include "loom/topi/reduction.h"
#include "topi_test_util.h"

namespace loom::topi {
namespace {

using target_test::RandomArray;

tir::HostArray RunSchedule(const te::Schedule& s, const te::Tensor& x, const te::Tensor& out,
                           const tir::HostArray& input) {
  return test::RunScheduled(s, {x}, {out}, {input})[0];
}

// The reference of a reduction of `input` (shape `shape`) over `reduced`: fold(acc, value,
// index along the single reduced axis) from `init`, then finish(acc, count). The output is
// laid out without the reduced dimensions (keepdims does not change the layout).
std::vector<double> Reference(const tir::HostArray& input, const std::vector<int64_t>& shape,
                              const std::vector<bool>& reduced, double init,
                              const std::function<double(double, double, int64_t)>& fold,
                              const std::function<double(double, int64_t)>& finish) {
  int64_t outputs = 1, count = 1;
  for (size_t d = 0; d < shape.size(); ++d) (reduced[d] ? count : outputs) *= shape[d];
  std::vector<double> acc(outputs, init);
  for (int64_t flat = 0; flat < input.NumElements(); ++flat) {
    int64_t rest = flat, out = 0, out_stride = 1, reduce_index = 0, reduce_stride = 1;
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      int64_t i = rest % shape[d];
      rest /= shape[d];
      if (reduced[d]) {
        reduce_index += i * reduce_stride;
        reduce_stride *= shape[d];
      } else {
        out += i * out_stride;
        out_stride *= shape[d];
      }
    }
    double v = input.dtype().is_float() ? input.GetFloat(flat) : double(input.GetInt(flat));
    acc[out] = fold(acc[out], v, reduce_index);
  }
  for (double& a : acc) a = finish(a, count);
  return acc;
}

void ExpectNear(const tir::HostArray& got, const std::vector<double>& want, double tolerance,
                const std::string& label) {
  ASSERT_EQ(got.NumElements(), static_cast<int64_t>(want.size())) << label;
  test::ExpectClose(got, [&](int64_t i) { return want[i]; }, tolerance, label);
}

std::vector<bool> Mask(const std::vector<int>& axes, size_t rank) {
  std::vector<bool> mask(rank, axes.empty());
  for (int a : axes) mask[a < 0 ? a + rank : a] = true;
  return mask;
}

using Op = std::function<te::Tensor(const te::Tensor&, const std::vector<int>&, bool)>;

struct Case {
  std::string name;
  Op op;
  double init;
  std::function<double(double, double, int64_t)> fold;
  std::function<double(double, int64_t)> finish = [](double a, int64_t) { return a; };
  bool positive = false;  // prod: keep values near 1
};

TEST(TopiReduction, EveryReductionOverAxisSets) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<Case> cases = {
      {"sum", [](auto& x, auto& a, bool k) { return sum(x, a, k); }, 0,
       [](double s, double v, int64_t) { return s + v; }},
      {"mean", [](auto& x, auto& a, bool k) { return mean(x, a, k); }, 0,
       [](double s, double v, int64_t) { return s + v; }, [](double s, int64_t n) { return s / n; }},
      {"max", [](auto& x, auto& a, bool k) { return max(x, a, k); }, -inf,
       [](double s, double v, int64_t) { return std::max(s, v); }},
      {"min", [](auto& x, auto& a, bool k) { return min(x, a, k); }, inf,
       [](double s, double v, int64_t) { return std::min(s, v); }},
      {"prod", [](auto& x, auto& a, bool k) { return prod(x, a, k); }, 1,
       [](double s, double v, int64_t) { return s * v; }, [](double s, int64_t) { return s; }, true},
      {"l1_norm", [](auto& x, auto& a, bool k) { return l1_norm(x, a, k); }, 0,
       [](double s, double v, int64_t) { return s + std::abs(v); }},
      {"l2_norm", [](auto& x, auto& a, bool k) { return l2_norm(x, a, k); }, 0,
       [](double s, double v, int64_t) { return s + v * v; }, [](double s, int64_t) { return std::sqrt(s); }},
      {"sum_square", [](auto& x, auto& a, bool k) { return sum_square(x, a, k); }, 0,
       [](double s, double v, int64_t) { return s + v * v; }},
      {"logsumexp", [](auto& x, auto& a, bool k) { return logsumexp(x, a, k); }, 0,
       [](double s, double v, int64_t) { return s + std::exp(v); },
       [](double s, int64_t) { return std::log(s); }},
  };
  std::vector<int64_t> shape = {3, 1, 5, 37};
  std::vector<std::vector<int>> axis_sets = {{3}, {-1}, {0}, {2}, {0, 2}, {1, -1}, {}};
  for (const Case& c : cases) {
    for (const auto& axes : axis_sets) {
      for (bool keepdims : {false, true}) {
        te::Tensor x = te::placeholder({3, 1, 5, 37}, DataType::Float(32), "x");
        te::Tensor out = c.op(x, axes, keepdims);
        tir::HostArray input = RandomArray(DataType::Float(32), shape, 21);
        if (c.positive) {
          for (int64_t i = 0; i < input.NumElements(); ++i) {
            input.SetFloat(i, 1.0 + input.GetFloat(i) / 64);
          }
        }
        std::string label = c.name + " axes=" + std::to_string(axes.size()) +
                            (axes.empty() ? "" : " first=" + std::to_string(axes[0])) +
                            " keepdims=" + std::to_string(keepdims);
        tir::HostArray got = RunSchedule(schedule_reduce({out}), x, out, input);
        ExpectNear(got, Reference(input, shape, Mask(axes, 4), c.init, c.fold, c.finish), 2e-5,
                   label);
      }
    }
  }
}

TEST(TopiReduction, IntegerReductionsAreExact) {
  std::vector<int64_t> shape = {4, 33};
  te::Tensor x = te::placeholder({4, 33}, DataType::Int(32), "x");
  tir::HostArray input = RandomArray(DataType::Int(32), shape, 4);
  auto add = [](double s, double v, int64_t) { return s + v; };
  te::Tensor total = sum(x, {1});
  ExpectNear(RunSchedule(schedule_reduce({total}), x, total, input),
             Reference(input, shape, {false, true}, 0, add, [](double s, int64_t) { return s; }), 0,
             "sum i32");
  te::Tensor m = mean(x, {0});
  ExpectNear(RunSchedule(schedule_reduce({m}), x, m, input),
             Reference(input, shape, {true, false}, 0, add,
                       [](double s, int64_t n) { return std::trunc(s / n); }),
             0, "mean i32 truncates");
}

TEST(TopiReduction, ArgmaxAndArgminWithTies) {
  std::vector<int64_t> shape = {6, 21};
  te::Tensor x = te::placeholder({6, 21}, DataType::Float(32), "x");
  tir::HostArray input(DataType::Float(32), shape);
  // Values from a small set, so that rows hold ties.
  tir::HostArray random = RandomArray(DataType::Int(32), shape, 5);
  for (int64_t i = 0; i < input.NumElements(); ++i) input.SetFloat(i, double(random.GetInt(i) % 4));
  for (int axis : {1, -2}) {
    for (bool last : {false, true}) {
      for (bool largest : {true, false}) {
        te::Tensor out = largest ? argmax(x, axis, false, last) : argmin(x, axis, false, last);
        EXPECT_EQ(out.dtype(), DataType::Int(64));
        std::vector<bool> mask = Mask({axis}, 2);
        // Fold (best value, its index) as value * 1e3 + index would lose ties; track both.
        std::vector<double> best_index;
        {
          std::vector<double> best_value =
              Reference(input, shape, mask, largest ? -1e9 : 1e9,
                        [&](double s, double v, int64_t) { return largest ? std::max(s, v) : std::min(s, v); },
                        [](double s, int64_t) { return s; });
          int64_t rows = shape[mask[0] ? 1 : 0], len = shape[mask[0] ? 0 : 1];
          for (int64_t r = 0; r < rows; ++r) {
            int64_t found = -1;
            for (int64_t k = 0; k < len; ++k) {
              int64_t flat = mask[1] ? r * len + k : k * rows + r;
              if (input.GetFloat(flat) == best_value[r] && (found < 0 || last)) found = k;
            }
            best_index.push_back(double(found));
          }
        }
        ExpectNear(RunSchedule(schedule_reduce({out}), x, out, input), best_index, 0,
                   std::string(largest ? "argmax" : "argmin") + " axis=" + std::to_string(axis) +
                       " last=" + std::to_string(last));
      }
    }
  }
}

TEST(TopiReduction, SoftmaxAndLogSoftmaxAlongEveryAxis) {
  std::vector<int64_t> shape = {2, 3, 40};
  for (int axis : {0, 1, 2, -1}) {
    for (bool log_output : {false, true}) {
      te::Tensor x = te::placeholder({2, 3, 40}, DataType::Float(32), "x");
      te::Tensor out = log_output ? log_softmax(x, axis) : softmax(x, axis);
      tir::HostArray input = RandomArray(DataType::Float(32), shape, 9);
      std::vector<bool> mask = Mask({axis}, 3);
      std::vector<double> maxima = Reference(input, shape, mask, -1e30,
                                             [](double s, double v, int64_t) { return std::max(s, v); },
                                             [](double s, int64_t) { return s; });
      std::vector<double> want(input.NumElements());
      std::vector<double> sums(maxima.size(), 0.0);
      auto reduced_slot = [&](int64_t flat) {
        int64_t rest = flat, out = 0, stride = 1;
        for (int d = 2; d >= 0; --d) {
          int64_t i = rest % shape[d];
          rest /= shape[d];
          if (!mask[d]) {
            out += i * stride;
            stride *= shape[d];
          }
        }
        return out;
      };
      for (int64_t i = 0; i < input.NumElements(); ++i) {
        sums[reduced_slot(i)] += std::exp(input.GetFloat(i) - maxima[reduced_slot(i)]);
      }
      for (int64_t i = 0; i < input.NumElements(); ++i) {
        double shifted = input.GetFloat(i) - maxima[reduced_slot(i)];
        want[i] = log_output ? shifted - std::log(sums[reduced_slot(i)])
                             : std::exp(shifted) / sums[reduced_slot(i)];
      }
      ExpectNear(RunSchedule(schedule_softmax(out), x, out, input), want, 2e-5,
                 std::string(log_output ? "log_softmax" : "softmax") + " axis=" + std::to_string(axis));
    }
  }
}

// The exp calls in softmax's lowered loops: one per element means a single call in the
// loop nest (the axis, 32 long, needs no vector tail), softmax's output reading the
// exponentials its sum reduced.
int ExpCalls(const te::Tensor& x, const te::Tensor& out) {
  PrimFunc f = te::lower(schedule_softmax(out), {x, out}, "softmax");
  int calls = 0;
  PostOrderVisit(f->body, [&](const ObjectRef& node) {
    if (const auto* call = node.as<CallNode>()) calls += call->op.name() == "exp";
  });
  return calls;
}

TEST(TopiReduction, SoftmaxEvaluatesEachExponentialOnce) {
  for (bool log_output : {false, true}) {
    te::Tensor x = te::placeholder({5, 32}, DataType::Float(32), "x");
    EXPECT_EQ(ExpCalls(x, log_output ? log_softmax(x) : softmax(x)), 1) << log_output;
  }
}

// Rank 1 (no rows), a unit axis, negative axes, a tensor large enough to run its rows in
// parallel, and rows whose reductions accumulate 16 lanes at a time (48 and 128 long).
TEST(TopiReduction, SoftmaxShapesAndParallelRows) {
  std::vector<std::pair<std::vector<int64_t>, int>> cases = {
      {{37}, 0}, {{4, 1}, -1}, {{1, 19}, -1}, {{3, 21, 5}, -2}, {{600, 70}, 1},
      {{2, 5, 48}, -1}, {{300, 128}, 1}};
  for (const auto& [shape, axis] : cases) {
    for (bool log_output : {false, true}) {
      te::Tensor x = te::placeholder(test::Exprs(shape), DataType::Float(32), "x");
      te::Tensor out = log_output ? log_softmax(x, axis) : softmax(x, axis);
      tir::HostArray input = RandomArray(DataType::Float(32), shape, 10);
      int d = axis < 0 ? axis + static_cast<int>(shape.size()) : axis;
      int64_t extent = shape[d], inner = 1;
      for (size_t k = d + 1; k < shape.size(); ++k) inner *= shape[k];
      std::vector<double> want(input.NumElements());
      for (int64_t i = 0; i < input.NumElements(); ++i) {
        int64_t base = i / (extent * inner) * extent * inner + i % inner;
        double largest = -1e30, total = 0;
        for (int64_t k = 0; k < extent; ++k) largest = std::max(largest, input.GetFloat(base + k * inner));
        for (int64_t k = 0; k < extent; ++k) total += std::exp(input.GetFloat(base + k * inner) - largest);
        double shifted = input.GetFloat(i) - largest;
        want[i] = log_output ? shifted - std::log(total) : std::exp(shifted) / total;
      }
      ExpectNear(RunSchedule(schedule_softmax(out), x, out, input), want, 2e-5,
                 std::string(log_output ? "log_softmax" : "softmax") + " of " +
                     std::to_string(input.NumElements()) + " along " + std::to_string(axis));
    }
  }
}

TEST(TopiReduction, BadAxesAreUserErrors) {
  te::Tensor x = te::placeholder({4, 3}, DataType::Float(32), "x");
  te::Tensor i = te::placeholder({4, 3}, DataType::Int(32), "i");
  EXPECT_NE(test::ErrorOf([&] { sum(x, {2}); }).find("sum of 'x': axis 2 is out of range for rank 2 (expected -2 to 1)"),
            std::string::npos);
  EXPECT_NE(test::ErrorOf([&] { max(x, {1, -1}); }).find("axis -1 is listed twice"), std::string::npos);
  EXPECT_NE(test::ErrorOf([&] { softmax(i); }).find("softmax: 'i' is int32; the operator takes float tensors"),
            std::string::npos);
  EXPECT_NE(test::ErrorOf([&] { argmax(x, -3); }).find("argmax of 'x': axis -3 is out of range"),
            std::string::npos);
  EXPECT_NE(test::ErrorOf([&] { schedule_softmax(x); }).find("not the output of softmax"), std::string::npos);
}

}  // namespace
}  // namespace loom::topi
