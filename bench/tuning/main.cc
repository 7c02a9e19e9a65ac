// loom-bench-tuning: how fast each tuner finds a fast point. For three convolutions and one
// dense layer it runs the model-based tuner (xgb), random search and grid search for a number
// of trials each (xgb and random with several seeds), every candidate measured as `loom tune`
// measures it, and writes the best GFLOP/s after each trial as CSV lines:
//   task,tuner,seed,trial,gflops
// bench/tuning/plot_curves.py draws them and reports the trials each tuner needs to reach 95%
// of the best point found.
//
//   loom-bench-tuning --trials 128 --seeds 2 [--tasks name,name] > curves.csv
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

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

const char* TextFlag(int argc, char** argv, const char* flag, const char* fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], flag) == 0) return argv[i + 1];
  }
  return fallback;
}

int IntFlag(int argc, char** argv, const char* flag, int fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], flag) == 0) return std::atoi(argv[i + 1]);
  }
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const int trials = IntFlag(argc, argv, "--trials", 128);
  const int seeds = IntFlag(argc, argv, "--seeds", 2);
  const loom::Target target = loom::Target::Parse("llvm");
  loom::autotune::MeasureOptions options;
  options.min_repeat_ms = 20;
  std::printf("task,tuner,seed,trial,gflops\n");
  const std::string only = TextFlag(argc, argv, "--tasks", "");  // a comma list; "": all
  for (const BenchTask& task : kTasks) {
    if (!only.empty() &&
        ("," + only + ",").find(std::string(",") + task.name + ",") == std::string::npos) {
      continue;
    }
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
