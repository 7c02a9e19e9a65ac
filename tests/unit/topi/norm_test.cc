// Normalization operators compiled against references written here: batch_norm (inference),
// layer_norm over the last one or two dimensions, instance_norm, LRN with even and odd
// window sizes at the channel edges; and the user errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "loom/topi/nn.h"
#include "loom/topi/schedule.h"
#include "topi_test_util.h"

namespace loom::topi {
namespace {

using target_test::RandomArray;

constexpr double kEpsilon = 1e-5;

// Mean and variance of `count` elements of `x` from `first` with stride 1.
std::pair<double, double> Statistics(const tir::HostArray& x, int64_t first, int64_t count) {
  double sum = 0, squares = 0;
  for (int64_t i = 0; i < count; ++i) sum += x.GetFloat(first + i);
  double mean = sum / count;
  for (int64_t i = 0; i < count; ++i) squares += std::pow(x.GetFloat(first + i) - mean, 2);
  return {mean, squares / count};
}

TEST(TopiNorm, BatchNormInference) {
  te::Tensor x = te::placeholder({2, 3, 5, 7}, DataType::Float(32), "x");
  std::vector<te::Tensor> params;
  for (const char* name : {"scale", "bias", "mean", "var"}) {
    params.push_back(te::placeholder({3}, DataType::Float(32), name));
  }
  te::Tensor y = batch_norm(x, params[0], params[1], params[2], params[3], kEpsilon);
  tir::HostArray in = RandomArray(DataType::Float(32), {2, 3, 5, 7}, 61);
  std::vector<tir::HostArray> p;
  for (unsigned seed = 0; seed < 4; ++seed) p.push_back(RandomArray(DataType::Float(32), {3}, 62 + seed));
  for (int64_t c = 0; c < 3; ++c) p[3].SetFloat(c, std::abs(p[3].GetFloat(c)) + 0.5);  // variance
  tir::HostArray got = test::RunScheduled(schedule_injective({y}), {x, params[0], params[1], params[2], params[3]},
                                          {y}, {in, p[0], p[1], p[2], p[3]})[0];
  test::ExpectClose(
      got,
      [&](int64_t i) {
        int64_t c = (i / 35) % 3;
        return (in.GetFloat(i) - p[2].GetFloat(c)) / std::sqrt(p[3].GetFloat(c) + kEpsilon) *
                   p[0].GetFloat(c) +
               p[1].GetFloat(c);
      },
      1e-5, "batch_norm");
}

TEST(TopiNorm, LayerNormOverTrailingDimensions) {
  for (int axis : {-1, 1}) {
    te::Tensor x = te::placeholder({4, 6, 20}, DataType::Float(32), "x");
    Array<PrimExpr> pshape = axis == -1 ? Array<PrimExpr>{20} : Array<PrimExpr>{6, 20};
    std::vector<int64_t> pdims = axis == -1 ? std::vector<int64_t>{20} : std::vector<int64_t>{6, 20};
    te::Tensor scale = te::placeholder(pshape, DataType::Float(32), "scale");
    te::Tensor bias = te::placeholder(pshape, DataType::Float(32), "bias");
    te::Tensor y = layer_norm(x, scale, bias, axis, kEpsilon);
    tir::HostArray in = RandomArray(DataType::Float(32), {4, 6, 20}, 71);
    tir::HostArray s = RandomArray(DataType::Float(32), pdims, 72), b = RandomArray(DataType::Float(32), pdims, 73);
    tir::HostArray got = test::RunScheduled(schedule_reduce({y}), {x, scale, bias}, {y}, {in, s, b})[0];
    int64_t group = axis == -1 ? 20 : 120;
    test::ExpectClose(
        got,
        [&](int64_t i) {
          auto [mean, var] = Statistics(in, i / group * group, group);
          int64_t p = i % group;
          return (in.GetFloat(i) - mean) / std::sqrt(var + kEpsilon) * s.GetFloat(p) + b.GetFloat(p);
        },
        2e-5, "layer_norm axis=" + std::to_string(axis));
  }
}

// schedule_layer_norm: rows in parallel (from 2^15 elements on), the statistics per row,
// accumulated 16 lanes at a time where the innermost normalized dimension allows (32, 48,
// 768) and serially where it does not (20), over one and two normalized dimensions; and
// instance_norm, whose rows are (n, c).
TEST(TopiNorm, LayerNormRowScheduleMatchesTheReference) {
  struct Case {
    std::vector<int64_t> shape;
    int axis;
  };
  for (const Case& c : std::vector<Case>{{{4, 6, 20}, -1}, {{4, 6, 32}, 1}, {{3, 2, 48}, 2},
                                         {{1, 64, 768}, -1}}) {
    const int rank = static_cast<int>(c.shape.size());
    const int first = c.axis < 0 ? c.axis + rank : c.axis;
    std::vector<int64_t> pdims(c.shape.begin() + first, c.shape.end());
    int64_t group = 1;
    for (int64_t d : pdims) group *= d;
    te::Tensor x = te::placeholder(test::Exprs(c.shape), DataType::Float(32), "x");
    te::Tensor scale = te::placeholder(test::Exprs(pdims), DataType::Float(32), "scale");
    te::Tensor bias = te::placeholder(test::Exprs(pdims), DataType::Float(32), "bias");
    te::Tensor y = layer_norm(x, scale, bias, c.axis, kEpsilon);
    tir::HostArray in = RandomArray(DataType::Float(32), c.shape, 74);
    tir::HostArray s = RandomArray(DataType::Float(32), pdims, 75);
    tir::HostArray b = RandomArray(DataType::Float(32), pdims, 76);
    tir::HostArray got = test::RunScheduled(schedule_layer_norm(y, first), {x, scale, bias}, {y},
                                            {in, s, b})[0];
    test::ExpectClose(
        got,
        [&](int64_t i) {
          auto [mean, var] = Statistics(in, i / group * group, group);
          int64_t p = i % group;
          return (in.GetFloat(i) - mean) / std::sqrt(var + kEpsilon) * s.GetFloat(p) + b.GetFloat(p);
        },
        2e-5, "layer_norm " + std::to_string(in.NumElements()) + " from " + std::to_string(first));
  }
  te::Tensor x = te::placeholder({2, 3, 4, 16}, DataType::Float(32), "x");
  te::Tensor scale = te::placeholder({3}, DataType::Float(32), "scale");
  te::Tensor bias = te::placeholder({3}, DataType::Float(32), "bias");
  te::Tensor y = instance_norm(x, scale, bias, kEpsilon);
  tir::HostArray in = RandomArray(DataType::Float(32), {2, 3, 4, 16}, 77);
  tir::HostArray s = RandomArray(DataType::Float(32), {3}, 78), b = RandomArray(DataType::Float(32), {3}, 79);
  tir::HostArray got =
      test::RunScheduled(schedule_layer_norm(y, 2), {x, scale, bias}, {y}, {in, s, b})[0];
  test::ExpectClose(
      got,
      [&](int64_t i) {
        auto [mean, var] = Statistics(in, i / 64 * 64, 64);
        int64_t c = (i / 64) % 3;
        return (in.GetFloat(i) - mean) / std::sqrt(var + kEpsilon) * s.GetFloat(c) + b.GetFloat(c);
      },
      2e-5, "instance_norm by schedule_layer_norm");
  EXPECT_NE(test::ErrorOf([&] { schedule_layer_norm(y, 0); })
                .find("schedule_layer_norm: the normalized dimensions must start at 1..3 of"),
            std::string::npos);
}

TEST(TopiNorm, InstanceNormPerChannel) {
  te::Tensor x = te::placeholder({2, 3, 5, 9}, DataType::Float(32), "x");
  te::Tensor scale = te::placeholder({3}, DataType::Float(32), "scale");
  te::Tensor bias = te::placeholder({3}, DataType::Float(32), "bias");
  te::Tensor y = instance_norm(x, scale, bias, kEpsilon);
  tir::HostArray in = RandomArray(DataType::Float(32), {2, 3, 5, 9}, 81);
  tir::HostArray s = RandomArray(DataType::Float(32), {3}, 82), b = RandomArray(DataType::Float(32), {3}, 83);
  tir::HostArray got = test::RunScheduled(schedule_reduce({y}), {x, scale, bias}, {y}, {in, s, b})[0];
  test::ExpectClose(
      got,
      [&](int64_t i) {
        auto [mean, var] = Statistics(in, i / 45 * 45, 45);
        int64_t c = (i / 45) % 3;
        return (in.GetFloat(i) - mean) / std::sqrt(var + kEpsilon) * s.GetFloat(c) + b.GetFloat(c);
      },
      2e-5, "instance_norm");
}

TEST(TopiNorm, LrnAcrossChannels) {
  const int64_t C = 7, HW = 6;
  for (int64_t size : {3, 4}) {
    te::Tensor x = te::placeholder({2, int(C), 2, 3}, DataType::Float(32), "x");
    te::Tensor y = lrn(x, size, 0.02, 0.75, 1.5);
    tir::HostArray in = RandomArray(DataType::Float(32), {2, C, 2, 3}, 91);
    tir::HostArray got = test::RunScheduled(schedule_reduce({y}), {x}, {y}, {in})[0];
    test::ExpectClose(
        got,
        [&](int64_t i) {
          int64_t n = i / (C * HW), c = (i / HW) % C, s = i % HW;
          double squares = 0;
          for (int64_t k = c - (size - 1) / 2; k <= c + size / 2; ++k) {
            if (k >= 0 && k < C) squares += std::pow(in.GetFloat((n * C + k) * HW + s), 2);
          }
          return in.GetFloat(i) / std::pow(1.5 + 0.02 / size * squares, 0.75);
        },
        1e-5, "lrn size=" + std::to_string(size));
  }
}

TEST(TopiNorm, BadParametersAreUserErrors) {
  te::Tensor x = te::placeholder({2, 3, 4}, DataType::Float(32), "x");
  te::Tensor c3 = te::placeholder({3}, DataType::Float(32), "c3");
  te::Tensor c4 = te::placeholder({4}, DataType::Float(32), "c4");
  te::Tensor i = te::placeholder({2, 3, 4}, DataType::Int(32), "i");
  EXPECT_NE(test::ErrorOf([&] { batch_norm(x, c3, c3, c3, c4); }).find("var 'c4' is (4) float32; expected (3) float32"),
            std::string::npos);
  EXPECT_NE(test::ErrorOf([&] { layer_norm(x, c3, c3); }).find("scale 'c3' is (3) float32; expected (4) float32"),
            std::string::npos);
  EXPECT_NE(test::ErrorOf([&] { layer_norm(x, c4, c4, 3); }).find("axis 3 is out of range"), std::string::npos);
  EXPECT_NE(test::ErrorOf([&] { instance_norm(i, c3, c3); }).find("takes float tensors"), std::string::npos);
  EXPECT_NE(test::ErrorOf([&] { lrn(x, 0); }).find("size must be positive"), std::string::npos);
}

}  // namespace
}  // namespace loom::topi
