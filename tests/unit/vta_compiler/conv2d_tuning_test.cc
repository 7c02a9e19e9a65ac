// The tuning template of VTA's convolution (loom/vta/compiler/conv2d_tuning.h): its space holds
// exactly the tilings that divide the output and fit the buffers, its default is
// DefaultConv2DTiling, a point's measured cost is the simulator's cycles at the configuration's
// clock (the same on every run), and every point computes what the default computes.
#include "loom/vta/compiler/conv2d_tuning.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "conv_workload.h"
#include "error_of.h"
#include "loom/autotune/measure.h"
#include "loom/runtime/device_api.h"
#include "loom/runtime/module.h"
#include "loom/target/build.h"
#include "loom/vta/compiler/graph.h"
#include "loom/vta/runtime.h"

namespace loom::vta {
namespace {

using loom::testing::ErrorOf;

using loom::vta::testing::Conv;

const graph::TuningTemplate& Template() {
  RegisterGraphIntegration();
  return graph::FindTuningTemplate(kConv2DTemplate);
}

Conv2DTiling TilingOfPoint(const topi::Config& c) {
  return {c["rows"], c["oc_blocks"], c["virtual_threads"]};
}

TEST(VtaConv2DTuning, TheSpaceHoldsTheTilingsThatDivideAndFit) {
  const Environment env(VTAConfig::Default());
  const Conv2DWorkload w = Conv(64, 256, 14, 3, 1);
  const graph::TuningWorkload workload = Conv2DTuningWorkload(env, w, 1, 2);
  const topi::ConfigSpace space = Template().space(workload.args);
  const int64_t out_blocks = w.out_channels / env.block_out();
  size_t valid = 0;
  for (int64_t index = 0; index < space.product_size(); ++index) {
    const topi::Config point = space.At(index);
    const Conv2DTiling t = TilingOfPoint(point);
    const Conv2DFootprint f = FootprintOf(w, t, 1);
    const bool fits = f.inp <= env.Memory(Environment::kInpScope).depth &&
                      f.wgt <= env.Memory(Environment::kWgtScope).depth &&
                      f.acc <= env.Memory(Environment::kAccScope).depth;
    const bool divides = w.out_height() % t.rows == 0 && out_blocks % t.oc_blocks == 0 &&
                         (out_blocks / t.oc_blocks) % t.virtual_threads == 0;
    EXPECT_EQ(space.IsValid(point), fits && divides) << point.str();
    valid += space.IsValid(point);
  }
  // Whole-image tiles of many channels overflow the accumulator: the space is not all valid.
  EXPECT_GT(valid, 10u);
  EXPECT_LT(valid, static_cast<size_t>(space.product_size()));

  const topi::Config fallback = Template().default_config(workload.args);
  EXPECT_TRUE(space.IsValid(fallback));
  const Conv2DTiling expected = DefaultConv2DTiling(env, w, 1, 2);
  const Conv2DTiling got = TilingOf(env, w, 1, fallback);
  EXPECT_EQ(got.rows, expected.rows);
  EXPECT_EQ(got.oc_blocks, expected.oc_blocks);
  EXPECT_EQ(got.virtual_threads, expected.virtual_threads);

  // A point of the product that overflows a buffer is refused, naming the constraint.
  const topi::Config too_big({{"rows", 14}, {"oc_blocks", 16}, {"virtual_threads", 1}});
  EXPECT_NE(ErrorOf([&] { TilingOf(env, w, 1, too_big); }).find("fits the on-chip buffers"),
            std::string::npos);
}

TEST(VtaConv2DTuning, TheWorkloadNamesTheConfigurationAndTheThreads) {
  const Conv2DWorkload w = Conv(32, 32, 8, 3, 1);
  const Environment standard(VTAConfig::Default());
  VTAConfig small = VTAConfig::Default();
  small.log_acc_buff_size -= 1;
  const Environment smaller(small);
  EXPECT_NE(Conv2DTuningWorkload(standard, w, 0, 2), Conv2DTuningWorkload(smaller, w, 0, 2));
  EXPECT_NE(Conv2DTuningWorkload(standard, w, 0, 2), Conv2DTuningWorkload(standard, w, 0, 1));
  // One virtual thread at most: the knob has no second value.
  const topi::ConfigSpace one = Template().space(Conv2DTuningWorkload(standard, w, 0, 1).args);
  for (const topi::Knob& knob : one.knobs()) {
    if (knob.name == "virtual_threads") {
      EXPECT_EQ(knob.values, std::vector<int64_t>{1});
    }
  }
  EXPECT_NE(Template().describe(Conv2DTuningWorkload(standard, w, 1, 2).args).find("residual"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { Template().space({1, 2, 3}); }).find("a workload is"), std::string::npos);
}

// The cycles of one call of a point's kernel, run here on the simulator.
int64_t SimulatedCycles(const graph::TuningWorkload& workload, const topi::Config& config) {
  const graph::MeasurableKernel kernel = Template().instantiate(workload.args, config);
  runtime::Module module = build(kernel.module, Target::Parse("vta"));
  std::vector<runtime::NDArray> arrays;
  for (const auto& buffer : kernel.buffers) {
    runtime::NDArray host = runtime::NDArray::Empty(buffer.shape, buffer.dtype);
    std::memset(host.data(), 1, host.NumBytes());
    arrays.push_back(host.CopyTo(DLDevice{kDLExtDev, 0}));
  }
  std::vector<runtime::NDArray> args;
  for (size_t a : kernel.timed.arguments) args.push_back(arrays[a]);
  ResetRunTotals(VTATLSCommandHandle());
  module.GetRequiredFunction(kernel.timed.function).CallWithArrays(args);
  return static_cast<int64_t>(RunTotalsOf(VTATLSCommandHandle()).timing.total_cycles);
}

TEST(VtaConv2DTuning, AMeasurementIsTheSimulatorsCyclesAtTheClock) {
  const Environment env(VTAConfig::Default());
  const Conv2DWorkload w = Conv(32, 64, 8, 3, 1);
  const graph::TuningWorkload workload = Conv2DTuningWorkload(env, w, 1, 2);
  const topi::Config whole({{"rows", 8}, {"oc_blocks", 2}, {"virtual_threads", 2}});
  const topi::Config rows({{"rows", 1}, {"oc_blocks", 4}, {"virtual_threads", 1}});
  autotune::Measurer measurer(workload, Target::Parse("vta"), {.build_parallel = 2});
  const std::vector<autotune::MeasureResult> results = measurer.Measure({whole, rows});
  std::set<double> costs;
  for (size_t i = 0; i < results.size(); ++i) {
    ASSERT_EQ(results[i].error, autotune::MeasureError::kNone) << results[i].message;
    ASSERT_EQ(results[i].costs.size(), 3u);
    // The model's time, not the host's: every run the same.
    EXPECT_EQ(results[i].costs[0], results[i].costs[2]);
    costs.insert(results[i].cost());
  }
  EXPECT_EQ(costs.size(), 2u) << "two tilings, one cost";
  EXPECT_DOUBLE_EQ(results[0].cost(), env.config().SecondsOf(SimulatedCycles(workload, whole)));
  EXPECT_DOUBLE_EQ(results[1].cost(), env.config().SecondsOf(SimulatedCycles(workload, rows)));
}

}  // namespace
}  // namespace loom::vta
