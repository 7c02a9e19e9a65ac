// loom-bench-graph: whole networks compiled by the graph compiler (-O3) and run in the graph
// executor, batch 1, 224x224, float32, random weights (bench/graph/model_zoo.h), and a
// BERT-base encoder at sequence 128 (`--models bert_base`, bench/graph/transformer_zoo.h).
//
//   loom-bench-graph [--models resnet18,mobilenet_v2] [--threads 1,2] [--repeat 20]
//
// Prints one line per model and thread count, e.g.
//   model=resnet18 threads=1 loom_ms=17.9 min_ms=17.6 max_ms=18.8 compile_s=4.1 kernels=23 planned_mb=6.1 lower_bound_mb=5.2
// loom_ms is the median of --repeat timed GraphExecutor::Run calls after 3 untimed ones,
// min_ms and max_ms their extremes; compile_s the wall time of graph::Compile; kernels the
// fused kernels the model runs; planned_mb the executor's storage (the static memory
// plan's slots) and lower_bound_mb the most memory the model's live values need at once.
// LOOM_TIME_PASSES=1 adds each graph and TIR pass's time on stderr.
//
// The thread count of Loom's pool is fixed when it starts (LOOM_NUM_THREADS), so each
// thread count runs in a child process started with that environment; the kernels of a
// compiled model live in the process that compiled it, so each child compiles its models.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "bench_common.h"
#include "loom/graph/compile.h"
#include "loom/support/error.h"
#include "model_zoo.h"
#include "transformer_zoo.h"

namespace loom::bench {
namespace {

constexpr const char* kProgram = "loom-bench-graph";
constexpr int kWarmUps = 3;

struct GraphBenchOptions {
  std::vector<int> threads{1, 2};
  std::vector<std::string> models{"resnet18", "mobilenet_v2"};
  int repeat = 20;
};

// The convolutional networks, then the transformers.
std::vector<ZooModel> AllModels() {
  std::vector<ZooModel> models = ModelZoo();
  models.insert(models.end(), TransformerZoo().begin(), TransformerZoo().end());
  return models;
}

std::string ModelNames() {
  std::vector<std::string> names;
  for (const ZooModel& model : AllModels()) names.push_back(model.name);
  return JoinCommas(names);
}

const ZooModel* FindModel(const std::string& name) {
  for (const ZooModel& model : ModelZoo()) {
    if (model.name == name) return &model;
  }
  for (const ZooModel& model : TransformerZoo()) {
    if (model.name == name) return &model;
  }
  return nullptr;
}

GraphBenchOptions ParseOptions(int argc, char** argv) {
  GraphBenchOptions options;
  ParseFlags(argc, argv, kProgram,
             {ThreadCountsFlag(kProgram, &options.threads),
              {"--models",
               [&](const std::string& value) {
                 options.models = SplitCommas(value);
                 LOOM_CHECK_USER(!options.models.empty())
                     << kProgram << ": --models takes some of " << ModelNames() << ", got nothing";
                 for (const std::string& name : options.models) {
                   LOOM_CHECK_USER(FindModel(name)) << kProgram << ": --models takes some of "
                                                    << ModelNames() << ", got '" << name << "'";
                 }
               }},
              {"--repeat", [&](const std::string& value) {
                 options.repeat = static_cast<int>(
                     ParsePositive(value, kProgram, "--repeat", std::numeric_limits<int>::max()));
               }}});
  return options;
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The logits must be finite and not all zero, or the timing is of a broken model.
void CheckOutput(const runtime::NDArray& output, const std::string& model) {
  const auto* values = static_cast<const float*>(output.data());
  double largest = 0;
  for (int64_t i = 0; i < output.NumElements(); ++i) {
    LOOM_CHECK_USER(std::isfinite(values[i]))
        << kProgram << ": " << model << "'s output " << i << " is " << values[i];
    largest = std::max(largest, std::abs(static_cast<double>(values[i])));
  }
  LOOM_CHECK_USER(largest > 0) << kProgram << ": " << model << "'s outputs are all zero";
}

void RunModel(const ZooModel& zoo, int threads, int repeat) {
  graph::Function model = zoo.build(224);
  auto start = std::chrono::steady_clock::now();
  graph::CompiledModel compiled = graph::Compile(graph::IRModule::FromFunction(model), {});
  double compile_seconds = SecondsSince(start);

  runtime::GraphExecutor executor(graph::MakeGraphModel(compiled));
  runtime::NDArray image = runtime::NDArray::Empty(executor.InputShape(0), DataType::Float(32));
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  auto* pixels = static_cast<float*>(image.data());
  for (int64_t i = 0; i < image.NumElements(); ++i) pixels[i] = dist(rng);
  executor.SetInput(0, image);
  for (int i = 0; i < kWarmUps; ++i) executor.Run();
  CheckOutput(executor.GetOutput(0), zoo.name);

  std::vector<double> ms;
  for (int i = 0; i < repeat; ++i) {
    auto run_start = std::chrono::steady_clock::now();
    executor.Run();
    ms.push_back(SecondsSince(run_start) * 1e3);
  }
  std::sort(ms.begin(), ms.end());
  size_t n = ms.size();
  double median = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
  constexpr double kMiB = 1024.0 * 1024.0;
  PrintLine(Format(
      "model=%s threads=%d loom_ms=%.2f min_ms=%.2f max_ms=%.2f compile_s=%.1f "
      "kernels=%zu planned_mb=%.1f lower_bound_mb=%.1f",
      zoo.name.c_str(), threads, median, ms.front(), ms.back(), compile_seconds,
      compiled.kernel_names.size(), static_cast<double>(compiled.memory.planned_bytes) / kMiB,
      static_cast<double>(compiled.memory.lower_bound_bytes) / kMiB));
}

// One thread count, in this process (the environment is already set for it).
int RunModels(const GraphBenchOptions& options) {
  for (const std::string& name : options.models) {
    RunModel(*FindModel(name), options.threads.at(0), options.repeat);
  }
  return 0;
}

}  // namespace
}  // namespace loom::bench

int main(int argc, char** argv) {
  using loom::bench::GraphBenchOptions;
  return loom::bench::BenchMain<GraphBenchOptions>(
      argc, argv, loom::bench::ParseOptions, loom::bench::RunModels,
      [&](const GraphBenchOptions& options) {
        return loom::bench::RunPerThreadCount(
            loom::bench::kProgram, options.threads, [&](int threads) {
              return std::vector<std::string>{argv[0],
                                              "--threads",
                                              std::to_string(threads),
                                              "--models",
                                              loom::bench::JoinCommas(options.models),
                                              "--repeat",
                                              std::to_string(options.repeat)};
            });
      });
}
