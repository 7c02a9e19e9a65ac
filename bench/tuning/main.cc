// loom-bench-tuning: how fast each tuner finds a fast point. For three convolutions and one
// dense layer it runs the model-based tuner (xgb), random search and grid search for a number
// of trials each (xgb and random with several seeds), every candidate measured as `loom tune`
// measures it, and writes the best GFLOP/s after each trial as CSV lines:
//   task,tuner,seed,trial,gflops
// bench/tuning/plot_curves.py draws them and reports the trials each tuner needs to reach 95%
// of the best point found.
//
//   loom-bench-tuning [--trials 128] [--seeds 2] [--tasks name,name] > curves.csv
//
// An unknown option or task name is an error that lists the accepted ones (exit status 2).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_common.h"
#include "loom/autotune/tune.h"
#include "loom/autotune/tuner.h"

namespace {

using loom::autotune::MakeTuner;
using loom::autotune::Measurer;
using loom::autotune::MeasureResult;
using loom::graph::TuningWorkload;

struct BenchTask {
  const char* name;
  TuningWorkload workload;
};

// Layers none of the defaults were measured on: a ResNet-50 bottleneck's 1x1 reduction, the
// strided 3x3 of a ResNet-50 downsampling block, a RegNetX-400MF grouped 3x3 (groups of 16
// channels), and ResNet-50's classifier.
const std::vector<BenchTask> kTasks = {
    {"resnet50_1x1_256to64_56",
     {"x86.conv2d", {1, 256, 56, 56, 64, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1}}},
    {"resnet50_3x3s2_128_56",
     {"x86.conv2d", {1, 128, 56, 56, 128, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1}}},
    {"regnetx_grouped_3x3_160_14",
     {"x86.conv2d", {1, 160, 14, 14, 160, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 10}}},
    {"resnet50_fc_2048to1000", {"x86.dense", {1, 1000, 2048}}},
};

constexpr const char* kProgram = "loom-bench-tuning";

struct Options {
  int trials = 128;
  int seeds = 2;
  std::vector<const BenchTask*> tasks;  // all unless --tasks names some
};

Options Parse(int argc, char** argv) {
  Options options;
  std::string only;
  loom::bench::ParseFlags(
      argc, argv, kProgram,
      {{"--trials",
        [&](const std::string& v) {
          options.trials =
              static_cast<int>(loom::bench::ParsePositive(v, kProgram, "--trials", 100000));
        }},
       {"--seeds",
        [&](const std::string& v) {
          options.seeds =
              static_cast<int>(loom::bench::ParsePositive(v, kProgram, "--seeds", 1000));
        }},
       {"--tasks", [&](const std::string& v) { only = v; }}});
  std::string known;
  for (const BenchTask& task : kTasks) {
    known += (known.empty() ? "" : ",") + std::string(task.name);
    if (only.empty() ||
        ("," + only + ",").find(std::string(",") + task.name + ",") != std::string::npos) {
      options.tasks.push_back(&task);
    }
  }
  size_t named =
      only.empty() ? 0 : 1 + static_cast<size_t>(std::count(only.begin(), only.end(), ','));
  LOOM_CHECK_USER(only.empty() || options.tasks.size() == named)
      << kProgram << ": --tasks " << only << " names a task that is not one of " << known;
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  Options parsed;
  try {
    parsed = Parse(argc, argv);
  } catch (const loom::Error& error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 2;
  }
  const int trials = parsed.trials, seeds = parsed.seeds;
  const loom::Target target = loom::Target::Parse("llvm");
  loom::autotune::MeasureOptions options;
  options.min_repeat_ms = 20;
  std::printf("task,tuner,seed,trial,gflops\n");
  for (const BenchTask* task_pointer : parsed.tasks) {
    const BenchTask& task = *task_pointer;
    const loom::graph::TuningTemplate& t =
        loom::graph::FindTuningTemplate(task.workload.template_name);
    const double flops =
        t.instantiate(task.workload.args, t.default_config(task.workload.args)).flops;
    for (const char* kind : {"xgb", "random", "grid"}) {
      const int runs = std::strcmp(kind, "grid") == 0 ? 1 : seeds;
      for (int seed = 1; seed <= runs; ++seed) {
        Measurer measurer(task.workload, target, options);
        std::unique_ptr<loom::autotune::Tuner> tuner =
            MakeTuner(kind, task.workload, nullptr, seed);
        double best = 0;
        int trial = 0;
        while (trial < trials && !tuner->Exhausted()) {
          std::vector<int64_t> points = tuner->NextBatch(std::min(16, trials - trial));
          if (points.empty()) break;
          std::vector<MeasureResult> results = measurer.Measure(tuner->Configs(points));
          tuner->Update(points, results);
          for (const MeasureResult& r : results) {
            if (r.error == loom::autotune::MeasureError::kNone)
              best = std::max(best, flops / r.cost() / 1e9);
            std::printf("%s,%s,%d,%d,%.2f\n", task.name, kind, seed, ++trial, best);
          }
          std::fflush(stdout);
        }
        std::fprintf(stderr, "%s %s seed %d: %d trials, best %.1f GFLOP/s\n", task.name, kind, seed,
                     trial, best);
      }
    }
  }
  return 0;
}
