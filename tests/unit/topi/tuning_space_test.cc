// Configuration spaces (topi/config_space.h) and the x86 templates' spaces: every valid point of
// every template compiles and computes what the reference computes, on small shapes; the defaults
// are points of their spaces; configs from elsewhere are refused by name.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "conv_kernel_check.h"
#include "loom/topi/config_space.h"
#include "loom/topi/x86/conv2d_winograd.h"
#include "loom/topi/x86/dense.h"
#include "topi_test_util.h"

namespace loom::topi {
namespace {

using test::ErrorOf;

ConfigSpace SmallSpace() {
  ConfigSpace space;
  space.AddKnob("a", KnobKind::kSplit, {1, 2, 4});
  space.AddKnob("b", KnobKind::kAnnotate, {0, 1});
  space.AddConstraint("a * (b + 1) <= 4",
                      [](const Config& c) { return c["a"] * (c["b"] + 1) <= 4; });
  return space;
}

TEST(ConfigSpace, NumbersPointsWithTheFirstKnobSlowest) {
  ConfigSpace space = SmallSpace();
  EXPECT_EQ(space.product_size(), 6);
  EXPECT_EQ(space.At(0).str(), "a=1 b=0");
  EXPECT_EQ(space.At(1).str(), "a=1 b=1");
  EXPECT_EQ(space.At(5).str(), "a=4 b=1");
  for (int64_t i = 0; i < space.product_size(); ++i) {
    EXPECT_EQ(space.IndexOf(space.At(i)), i);
    EXPECT_EQ(space.IndexOfDigits(space.Digits(i)), i);
  }
  EXPECT_EQ(space.Digits(3), (std::vector<int64_t>{1, 1}));
}

TEST(ConfigSpace, ValidIndicesAreThePointsMeetingEveryConstraint) {
  ConfigSpace space = SmallSpace();
  EXPECT_EQ(space.ValidIndices(), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  std::string failed;
  EXPECT_FALSE(space.IsValid(space.At(5), &failed));
  EXPECT_EQ(failed, "a * (b + 1) <= 4");
}

TEST(ConfigSpace, RefusesBadKnobsAndForeignConfigsByName) {
  ConfigSpace space = SmallSpace();
  EXPECT_NE(
      ErrorOf([&] { space.AddKnob("a", KnobKind::kSplit, {3}); }).find("knob 'a' added twice"),
      std::string::npos);
  EXPECT_NE(ErrorOf([&] { space.AddKnob("c", KnobKind::kSplit, {}); }).find("no candidate values"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              space.AddKnob("c", KnobKind::kSplit, {2, 2});
            }).find("repeat"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              space.IndexOf(Config({{"a", 3}, {"b", 0}}));
            }).find("a=3 is not one of this space's candidates"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              space.IndexOf(Config({{"a", 1}}));
            }).find("has no knob 'b'"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              space.IndexOf(Config({{"a", 1}, {"b", 0}, {"z", 0}}));
            }).find("has knobs this space lacks"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { space.At(6); }).find("outside the space of 6"), std::string::npos);
}

}  // namespace

namespace x86 {
namespace {

using conv_check::ExpectKernelMatchesReference;
using conv_check::Workload;

// Every valid point takes about 0.3 s to compile and check, so the unit run takes every point only
// of spaces up to kUnitRunPoints, and of larger spaces that many spread evenly (always the first
// and the last); ctest's tuning_spaces_every_point (label slow) sets
// LOOM_TUNING_SPACE_EVERY_POINT=1 and takes them all.
constexpr size_t kUnitRunPoints = 24;

std::vector<int64_t> PointsToCheck(const ConfigSpace& space) {
  const std::vector<int64_t>& valid = space.ValidIndices();
  if (std::getenv("LOOM_TUNING_SPACE_EVERY_POINT") || valid.size() <= kUnitRunPoints) return valid;
  std::vector<int64_t> points;
  for (size_t i = 0; i < kUnitRunPoints; ++i) {
    points.push_back(valid[i * (valid.size() - 1) / (kUnitRunPoints - 1)]);
  }
  return points;
}

// Every valid point of the workload's space (PointsToCheck), compiled and run against the
// reference; returns the algorithms seen.
std::set<std::string> ExpectEveryPointComputesTheReference(const Conv2DWorkload& wl) {
  ConfigSpace space = Conv2DConfigSpace(wl);
  std::set<std::string> algorithms;
  for (int64_t index : PointsToCheck(space)) {
    Config config = space.At(index);
    SCOPED_TRACE(config.str());
    Conv2DChoice choice = Conv2DChoiceOf(wl, config);
    algorithms.insert(choice.algorithm);
    EXPECT_EQ(Conv2DConfigOf(wl, choice), config);
    ExpectKernelMatchesReference(wl, MakeConv2DKernel(wl, choice));
    if (::testing::Test::HasFailure()) break;
  }
  return algorithms;
}

TEST(TuningSpaceX86, DefaultsArePointsOfTheirSpaces) {
  std::vector<Conv2DWorkload> cases = {
      Workload({1, 64, 56, 56}, {64, 3, 3}, 1, {1, 1, 1, 1}),      // Winograd by default
      Workload({1, 3, 224, 224}, {64, 7, 7}, 2, {3, 3, 3, 3}),     // a stem
      Workload({1, 256, 14, 14}, {1024, 1, 1}, 1, {0, 0, 0, 0}),   // 1x1
      Workload({1, 96, 56, 56}, {96, 3, 3}, 2, {1, 1, 1, 1}, 96),  // depthwise
      Workload({1, 64, 28, 28}, {64, 3, 3}, 1, {1, 1, 1, 1}, 4),   // grouped
      Workload({1, 512, 7, 7}, {512, 3, 3}, 1, {1, 1, 1, 1}),
  };
  for (const Conv2DWorkload& wl : cases) {
    SCOPED_TRACE(wl.str());
    ConfigSpace space = Conv2DConfigSpace(wl);
    Config fallback = DefaultConv2DConfig(wl);
    EXPECT_TRUE(space.IsValid(fallback));
    EXPECT_GT(space.ValidIndices().size(), 10u);
    Conv2DChoice choice = Conv2DChoiceOf(wl, fallback);
    Conv2DChoice chosen = ChooseConv2DKernel(wl);
    EXPECT_EQ(choice.algorithm, chosen.algorithm);
    if (chosen.algorithm == "winograd") {
      // Winograd uses the channel blocks of the direct tiling only.
      EXPECT_EQ(choice.winograd.str(), chosen.winograd.str());
      EXPECT_EQ(choice.config.ic_bn, chosen.config.ic_bn);
      EXPECT_EQ(choice.config.oc_bn, chosen.config.oc_bn);
    } else {
      EXPECT_EQ(choice.config.str(), chosen.config.str());
    }
  }
  for (auto [m, n, k] : std::vector<std::array<int64_t, 3>>{
           {1, 1000, 512}, {128, 768, 768}, {3, 10, 5}, {64, 4096, 1024}}) {
    ConfigSpace space = DenseConfigSpace(m, n, k);
    DenseConfig fallback = DefaultDenseConfig(m, n, k);
    Config point = DenseConfigOf(fallback);
    EXPECT_TRUE(space.IsValid(point)) << point.str();
    EXPECT_EQ(DenseConfigFrom(m, n, k, point).str(), fallback.str());
  }
}

TEST(TuningSpaceX86, EveryDirectPointComputesTheReference) {
  // 4x4 outputs keep the space small (reg_h, reg_w in {1, 2, 4}).
  auto algorithms =
      ExpectEveryPointComputesTheReference(Workload({1, 8, 4, 4}, {16, 3, 3}, 1, {1, 1, 1, 1}));
  EXPECT_EQ(algorithms, std::set<std::string>{"direct"});
}

TEST(TuningSpaceX86, EveryGroupedAndDepthwisePointComputesTheReference) {
  ExpectEveryPointComputesTheReference(Workload({1, 16, 5, 4}, {16, 3, 3}, 1, {1, 1, 1, 1}, 2));
  EXPECT_EQ(ExpectEveryPointComputesTheReference(
                Workload({1, 32, 6, 4}, {32, 3, 3}, 2, {1, 1, 1, 1}, 32)),
            std::set<std::string>{"depthwise"});
}

TEST(TuningSpaceX86, EveryWinogradPointComputesTheReference) {
  // 16 tiles of 4x4: the smallest Winograd workload.
  auto algorithms =
      ExpectEveryPointComputesTheReference(Workload({1, 16, 16, 16}, {16, 3, 3}, 1, {1, 1, 1, 1}));
  EXPECT_EQ(algorithms, (std::set<std::string>{"direct", "winograd"}));
}

TEST(TuningSpaceX86, EveryDensePointComputesTheReference) {
  const int64_t M = 5, N = 40, K = 24;
  const DataType f32 = DataType::Float(32);
  tir::HostArray in_x = target_test::RandomArray(f32, {M, K}, 1);
  tir::HostArray in_w = target_test::RandomArray(f32, {N, K}, 2);
  ConfigSpace space = DenseConfigSpace(M, N, K);
  for (int64_t index : PointsToCheck(space)) {
    Config config = space.At(index);
    SCOPED_TRACE(config.str());
    DenseConfig tiling = DenseConfigFrom(M, N, K, config);
    EXPECT_EQ(DenseConfigOf(tiling), config);
    te::Tensor x = te::placeholder({int(M), int(K)}, f32, "x");
    te::Tensor w = te::placeholder({int(N), int(K)}, f32, "w");
    te::Tensor y = dense_packed(x, pack_dense_weight(w, /*transposed=*/true, tiling), N);
    tir::HostArray got =
        topi::test::RunScheduled(schedule_dense_packed(y, tiling), {x, w}, {y}, {in_x, in_w})[0];
    topi::test::ExpectClose(
        got,
        [&](int64_t i) {
          double total = 0;
          for (int64_t k = 0; k < K; ++k) {
            total += in_x.GetFloat(i / N * K + k) * in_w.GetFloat(i % N * K + k);
          }
          return total;
        },
        1e-5, "dense");
    if (::testing::Test::HasFailure()) break;
  }
}

TEST(TuningSpaceX86, ConfigsOfAnotherSpaceAreRefusedByName) {
  Conv2DWorkload wl = Workload({1, 8, 4, 4}, {16, 3, 3}, 1, {1, 1, 1, 1});
  Config config = DefaultConv2DConfig(wl);
  std::map<std::string, int64_t> values = config.values();
  values["reg_w"] = 3;
  EXPECT_NE(ErrorOf([&] {
              Conv2DChoiceOf(wl, Config(values));
            }).find("reg_w=3 is not one of this space's candidates"),
            std::string::npos);
  values = config.values();
  values["oc_tile"] = 4, values["reg_h"] = 4, values["reg_w"] = 4;
  EXPECT_NE(ErrorOf([&] {
              Conv2DChoiceOf(wl, Config(values));
            }).find("breaks a constraint: oc_tile divides the output channel blocks"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { DenseConfigFrom(4, 32, 8, config); }).find("has no knob"),
            std::string::npos);
}

}  // namespace
}  // namespace x86
}  // namespace loom::topi
