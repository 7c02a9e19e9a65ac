// `loom bench model.so`: the latency of whole-model runs, as one machine-readable line
//   median_ms=8.412 min_ms=8.301 max_ms=9.873 mean_ms=8.530 repeat=20 threads=2
// (bench/models parses it), and with --profile each kernel's median time.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "cli_common.h"
#include "loom/rpc/client.h"
#include "loom/runtime/device_api.h"
#include "loom/runtime/graph_executor.h"
#include "loom/vta/runtime.h"
#include "model_commands.h"
#include "rpc_commands.h"

namespace loom::cli {
namespace {

struct BenchCommandOptions {
  std::string model_path;
  std::vector<std::string> inputs;
  std::optional<int> threads;
  int repeat = 20;
  int warmup = 5;
  bool profile = false;
  std::string vta_config;
  RemoteOptions remote;
  std::vector<std::string> input_shapes;  // NAME=DxDx...: random inputs of these shapes
};

// Input `index` of the executor's model, of `shape`, filled with seeded random values: floats
// uniform in [-1, 1), integers and bools 0 or 1 (valid as indices, masks and token ids alike).
runtime::NDArray RandomInput(const runtime::Executor& executor, int index,
                             const std::vector<int64_t>& shape, std::mt19937& rng) {
  runtime::NDArray array = runtime::NDArray::Empty(shape, executor.InputDtype(index));
  VisitElementType(
      array.dtype(),
      "random values for input '" + executor.InputName(index) + "' (give it with --input)",
      [&](auto zero) {
        using T = decltype(zero);
        T* data = static_cast<T*>(array.data());
        if constexpr (std::is_floating_point_v<T>) {
          std::uniform_real_distribution<T> dist(-1, 1);
          for (int64_t i = 0; i < array.NumElements(); ++i) data[i] = dist(rng);
        } else if constexpr (kIsHalfFloatElement<T>) {
          std::uniform_real_distribution<float> dist(-1, 1);
          for (int64_t i = 0; i < array.NumElements(); ++i) data[i] = T(dist(rng));
        } else {
          std::uniform_int_distribution<int> dist(0, 1);
          for (int64_t i = 0; i < array.NumElements(); ++i) {
            data[i] = static_cast<T>(dist(rng));
          }
        }
      });
  return array;
}

// Whether the model's device kernels run on VTA (the vta device, whose counters bench reads).
bool OnVta(const runtime::GraphModel& model) {
  const DLDeviceType device = model.memory_device().device_type;
  return device != kDLCPU && runtime::DeviceName(device) == "vta";
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// Each kernel's median wall time; for a model with VTA kernels also each one's simulated
// cycles (the last run's).
void PrintProfile(runtime::Executor& executor, int repeat) {
  auto* graph = dynamic_cast<runtime::GraphExecutor*>(&executor);
  const bool vta = graph != nullptr && OnVta(graph->model());
  std::vector<uint64_t> cycles(graph ? graph->model().kernels().size() : 0, 0);
  VTACommandHandle cmd = vta ? VTATLSCommandHandle() : nullptr;
  if (vta) vta::ResetRunTotals(cmd);
  std::vector<runtime::Executor::KernelTime> times =
      vta ? graph->ProfileKernels(repeat,
                                  [&](size_t k) {
                                    cycles[k] = vta::RunTotalsOf(cmd).timing.total_cycles;
                                    vta::ResetRunTotals(cmd);
                                  })
          : executor.ProfileKernels(repeat);
  double total = 0;
  for (const auto& time : times) total += time.ms;
  std::printf("per-kernel profile (median of %d runs, execution order; total %.3f ms):\n", repeat,
              total);
  std::printf("%5s %10s %7s%s  %s\n", "#", "ms", "%", vta ? "   vta_cycles" : "",
              "kernel (graph node)");
  for (size_t k = 0; k < times.size(); ++k) {
    char simulated[32] = "";
    if (vta) {
      std::snprintf(simulated, sizeof(simulated), " %12llu",
                    static_cast<unsigned long long>(cycles[k]));
    }
    std::printf("%5zu %10.3f %6.1f%%%s  %s (%s)\n", k, times[k].ms,
                total > 0 ? 100 * times[k].ms / total : 0.0, simulated, times[k].func.c_str(),
                times[k].name.c_str());
  }
}

void RunBench(const BenchCommandOptions& options) {
  CheckReadableFile(options.model_path, "model");
  LOOM_CHECK_USER(!options.remote.remote() || !options.profile)
      << "--profile is not available with a remote device: run `loom bench --profile` there";
  OpenedModel model =
      OpenModel(options.model_path, options.threads, options.vta_config, options.remote);
  const int threads = model.threads;
  if (!model.device.empty()) std::fprintf(stderr, "running on %s\n", model.device.c_str());
  runtime::Executor& executor = *model.executor;
  std::map<std::string, runtime::NDArray> given =
      LoadInputs(executor, options.inputs, /*require_all=*/false);
  std::map<std::string, std::vector<int64_t>> shapes = ParseInputShapes(options.input_shapes);
  std::mt19937 rng(0);
  for (int i = 0; i < executor.NumInputs(); ++i) {
    const std::string& name = executor.InputName(i);
    auto it = given.find(name);
    if (it != given.end()) {
      LOOM_CHECK_USER(shapes.count(name) == 0)
          << "--input-shape " << name << ": the input is given with --input, whose shape it has";
      executor.SetInput(i, it->second);
      continue;
    }
    std::vector<int64_t> shape = executor.InputShape(i);
    auto bound = shapes.find(name);
    if (bound != shapes.end()) {
      LOOM_CHECK_USER(ShapeFits(bound->second, shape))
          << "--input-shape " << name << "=" << ShapeText(bound->second) << ": input '" << name
          << "' takes shape " << executor.InputSignature(i);
      shape = bound->second;
    }
    LOOM_CHECK_USER(ShapeFits(shape, shape) &&
                    std::find(shape.begin(), shape.end(), -1) == shape.end())
        << "input '" << name << "' has the symbolic shape " << executor.InputSignature(i)
        << ": choose the size to time with --input-shape " << name << "=DxDx... (or give the "
        << "input with --input)";
    executor.SetInput(i, RandomInput(executor, i, shape, rng));
  }
  for (const auto& [name, shape] : shapes) {
    bool known = false;
    for (int i = 0; i < executor.NumInputs(); ++i) known |= executor.InputName(i) == name;
    LOOM_CHECK_USER(known) << "--input-shape " << name << ": the model has no input '" << name
                           << "'";
  }

  std::vector<double> ms;
  // A remote one is timed where it runs: the network's round trips are not the model's latency.
  auto* on_device = dynamic_cast<rpc::RemoteExecutor*>(&executor);
  for (double seconds : on_device ? on_device->TimeRuns(options.warmup, options.repeat)
                                  : runtime::TimeRuns(executor, options.warmup, options.repeat)) {
    ms.push_back(seconds * 1e3);
  }
  double mean = std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(ms.size());
  std::printf("median_ms=%.3f min_ms=%.3f max_ms=%.3f mean_ms=%.3f repeat=%d threads=%d\n",
              Median(ms), *std::min_element(ms.begin(), ms.end()),
              *std::max_element(ms.begin(), ms.end()), mean, options.repeat, threads);
  std::fflush(stdout);
  if (auto* graph = dynamic_cast<runtime::GraphExecutor*>(&executor);
      graph != nullptr && OnVta(graph->model())) {
    // The simulator's counters and cycles of one inference, all VTA kernels summed.
    vta::ResetRunTotals(VTATLSCommandHandle());
    executor.Run();
    const vta::RunTotals& totals = vta::RunTotalsOf(VTATLSCommandHandle());
    std::printf("vta_kernel_runs=%llu\n", static_cast<unsigned long long>(totals.runs));
    std::fputs(vta::CounterLines(totals.counters, totals.timing).c_str(), stdout);
  }
  if (options.profile) PrintProfile(executor, options.repeat);
}

}  // namespace

void AddBenchCommand(CLI::App& app) {
  auto options = std::make_shared<BenchCommandOptions>();
  CLI::App* command = app.add_subcommand("bench", "Measure the latency of a compiled model");
  command->footer(
      "Runs the model --warmup times, then times --repeat runs and prints one line:\n"
      "  median_ms=... min_ms=... max_ms=... mean_ms=... repeat=N threads=N\n"
      "Inputs not given with --input get seeded random values (floats in [-1, 1), integers "
      "and bools 0 or 1). --profile then prints each kernel's median time in execution "
      "order. A model of symbolic dimensions (run by the virtual machine) is timed at the "
      "shapes --input-shape chooses.\n\n"
      "Example: loom bench resnet18.so --threads 1 --repeat 50\n"
      "         loom bench encoder.so --input-shape hidden_states=1x384x768\n"
      "With --rpc HOST:PORT (or --tracker and --device-key) the model is uploaded to a `loom rpc "
      "server` and timed there, on the device.\n");
  command->add_option("model", options->model_path, "Compiled model (.so from loom compile)")
      ->required();
  command->add_option("-i,--input", options->inputs,
                      "NAME=FILE.npy: a model input (others are random); repeatable");
  command->add_option("--input-shape", options->input_shapes,
                      "NAME=DxDx...: the shape of a random input (required for an input of "
                      "symbolic dimensions: the size to time); repeatable");
  command
      ->add_option("--threads", options->threads,
                   "Threads of the runtime's pool (default: LOOM_NUM_THREADS, else one per "
                   "physical core)")
      ->check(CLI::Range(1, 4096));
  command->add_option("--repeat", options->repeat, "Timed runs")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  command->add_option("--warmup", options->warmup, "Untimed runs first")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  command->add_flag("--profile", options->profile,
                    "Also print each kernel's median time over --repeat runs");
  command->add_option("--vta-config", options->vta_config,
                      "The VTA device's configuration (JSON) for a model compiled for VTA; "
                      "default: the default configuration (vta/default_config.json)");
  AddRemoteOptions(*command, options->remote);
  command->callback([options] { RunBench(*options); });
}

}  // namespace loom::cli
