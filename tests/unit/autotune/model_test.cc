// The cost model's inputs and its fitting: loop-nest features of lowered functions, and the rank
// model learning an order from synthetic data.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "error_of.h"
#include "loom/autotune/cost_model.h"
#include "loom/autotune/features.h"
#include "loom/autotune/tuner.h"
#include "loom/te/lower.h"

namespace loom::autotune {
namespace {

PrimFunc ScaledCopy(int vector_lanes, bool parallel) {
  te::Tensor in = te::placeholder({64, 256}, DataType::Float(32), "in");
  te::Tensor out = te::compute(
      {64, 256}, [&](Var i, Var j) { return in(i, j) * 2.0f; }, "out");
  te::Schedule s = te::create_schedule({out.op()});
  const auto& axes = s[out]->leaf_iter_vars;
  if (parallel) s[out].parallel(axes[0]);
  if (vector_lanes > 1) {
    auto [outer, lane] = s[out].split(axes[1], vector_lanes);
    s[out].vectorize(lane);
  }
  return te::lower(s, {in, out}, "scaled_copy");
}

TEST(LoopNestFeatures, HaveOneLengthAndSeeTheSchedule) {
  std::vector<float> plain = LoopNestFeatures(ScaledCopy(1, false));
  std::vector<float> tuned = LoopNestFeatures(ScaledCopy(16, true));
  ASSERT_EQ(plain.size(), FeatureCount());
  ASSERT_EQ(tuned.size(), FeatureCount());
  // Totals: float ops, int ops, math calls, parallel extent, vector lanes, ...
  EXPECT_FLOAT_EQ(plain[0],
                  std::log2(1.0 + 64 * 256));      // one multiply per element
  EXPECT_FLOAT_EQ(plain[3], 1.0f);                 // log2(1 + 1): nothing parallel
  EXPECT_FLOAT_EQ(tuned[3], std::log2(1.0 + 64));  // the rows in parallel
  EXPECT_EQ(plain[4], 0.0f);
  EXPECT_GT(tuned[4], 0.0f);  // a vectorized innermost loop
  EXPECT_NE(plain, tuned);
  // The top accesses (the output's store and the input's load) walk contiguously.
  const size_t first_access = 9;
  EXPECT_FLOAT_EQ(plain[first_access + 4], 1.0f);  // walk: contiguous
}

TEST(LoopNestFeatures, DifferBetweenPointsOfATemplate) {
  graph::TuningWorkload conv{"x86.conv2d", {1, 16, 8, 8, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}};
  const graph::TuningTemplate& t = graph::FindTuningTemplate(conv.template_name);
  topi::ConfigSpace space = t.space(conv.args);
  std::vector<float> a = PointFeatures(conv, space.At(space.ValidIndices().front()));
  std::vector<float> b = PointFeatures(conv, space.At(space.ValidIndices().back()));
  EXPECT_EQ(a.size(), FeatureCount());
  EXPECT_NE(a, b);
}

// Kendall's tau between two score lists.
double Tau(const std::vector<float>& a, const std::vector<float>& b) {
  double agree = 0, total = 0;
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t j = i + 1; j < a.size(); ++j) {
      const double s = (a[i] - a[j]) * (b[i] - b[j]);
      agree += s > 0 ? 1 : s < 0 ? -1 : 0;
      total += 1;
    }
  return agree / total;
}

TEST(CostModel, LearnsARankingFromSyntheticData) {
  // Speed is a smooth function of two of eight features; the rest are noise.
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(0, 1);
  auto speed = [](const std::vector<float>& f) { return std::sin(3 * f[0]) + f[1] * f[1]; };
  auto sample = [&](size_t n, std::vector<std::vector<float>>& rows, std::vector<float>& speeds) {
    for (size_t i = 0; i < n; ++i) {
      std::vector<float> f(8);
      for (float& x : f) x = u(rng);
      rows.push_back(f);
      speeds.push_back(speed(f));
    }
  };
  std::vector<std::vector<float>> train, test;
  std::vector<float> train_speed, test_speed;
  sample(300, train, train_speed);
  sample(100, test, test_speed);
  CostModel model;
  EXPECT_FALSE(model.trained());
  EXPECT_NE(testing::ErrorOf([&] { model.Predict(test); }).find("before Fit"), std::string::npos);
  model.Fit(train, train_speed, {300});
  EXPECT_TRUE(model.trained());
  EXPECT_GT(Tau(model.Predict(test), test_speed), 0.7);
  EXPECT_NE(testing::ErrorOf([&] {
              model.Fit(train, train_speed, {299});
            }).find("the groups cover 299 rows of 300"),
            std::string::npos);
}

TEST(RelativeLabels, AreTheBestCostOverEachCostAndZeroForFailures) {
  EXPECT_EQ(RelativeLabels({2.0, 1.0, INFINITY, 4.0}),
            (std::vector<float>{0.5f, 1.0f, 0.0f, 0.25f}));
}

}  // namespace
}  // namespace loom::autotune
