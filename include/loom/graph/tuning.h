// The seam between operator strategies and the auto-tuner (autotune/). A strategy whose kernel has
// tunable parameters registers a TuningTemplate (its configuration space, its default point, and a
// standalone kernel for any point, to measure), and asks the compile's ConfigDispatcher for a tuned
// point of each workload it meets:
//
//   TuningWorkload workload{"x86.conv2d", {n, c, h, w, k, ...}};
//   std::optional<topi::Config> tuned = QueryTunedConfig(target, workload);
//   choice = tuned ? Conv2DChoiceOf(wl, *tuned) : ChooseConv2DKernel(wl);
//
// Compile (compile.h) makes CompileOptions::configs the current dispatcher; the tuner's task
// extraction uses one that records every query, and `loom compile --records` one that answers from
// tuning records.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "loom/ir/module.h"
#include "loom/target/target.h"
#include "loom/topi/config_space.h"

namespace loom::graph {

// One workload of a template: the template's name and the integers that describe its shapes (the
// template defines their order).
struct TuningWorkload {
  std::string template_name;
  std::vector<int64_t> args;
  // "x86.conv2d(1, 64, 56, 56, ...)"
  std::string str() const;
  bool operator<(const TuningWorkload& o) const {
    return std::tie(template_name, args) < std::tie(o.template_name, o.args);
  }
  bool operator==(const TuningWorkload& o) const {
    return template_name == o.template_name && args == o.args;
  }
};

// A template's kernel for one point, standing alone so that it can be built and timed: the
// functions of `module` run in order on `buffers` (inputs filled with random values; on the
// target's device), the `timed` step is measured, and `result` is compared across points (every
// point of a workload computes the same result, in the same layout).
struct MeasurableKernel {
  struct Buffer {
    std::vector<int64_t> shape;
    DataType dtype = DataType::Float(32);  // float32, int8 or int32
    // Filled with random values before the first step: in [-1, 1] (float32), integers in
    // [-128, 127] (int8, int32).
    bool input = false;
    // In a model this buffer is a weight (or a weight's packed form): read once per inference,
    // so it comes from memory, not from a cache (MeasureOptions::cold_weights).
    bool weight = false;
  };
  struct Step {
    std::string function;           // a function of `module`
    std::vector<size_t> arguments;  // indices into `buffers`
  };
  IRModule module;
  std::vector<Buffer> buffers;
  std::vector<Step> setup;  // run once before timing (packing a weight, a layout change)
  Step timed;
  std::vector<Step> finish;  // run after timing, to bring the result to its common layout
  size_t result = 0;
  double flops = 0;  // floating-point operations of one timed call
};

struct TuningTemplate {
  std::string name;  // "x86.conv2d": the records' key
  std::function<topi::ConfigSpace(const std::vector<int64_t>& args)> space;
  std::function<topi::Config(const std::vector<int64_t>& args)> default_config;
  // The kernel of a point (a loom::Error for a point of another space).
  std::function<MeasurableKernel(const std::vector<int64_t>& args, const topi::Config& config)>
      instantiate;
  // "conv2d n=1 c=64 h=56 ...": the workload for people.
  std::function<std::string(const std::vector<int64_t>& args)> describe;
};

void RegisterTuningTemplate(TuningTemplate tuning_template);
// The template of that name; a loom::Error naming the registered ones when there is none.
const TuningTemplate& FindTuningTemplate(const std::string& name);

// Answers a compile's questions about tuned configs.
class ConfigDispatcher {
 public:
  virtual ~ConfigDispatcher() = default;
  // The point to use for `workload` on `target`; none: the template's default.
  virtual std::optional<topi::Config> Query(const Target& target,
                                            const TuningWorkload& workload) = 0;
};

// What the current dispatcher answers (none when there is no dispatcher): what strategies call.
std::optional<topi::Config> QueryTunedConfig(const Target& target, const TuningWorkload& workload);

// Makes `dispatcher` (may be null: defaults only) current on this thread until the scope ends.
class ConfigDispatchScope {
 public:
  explicit ConfigDispatchScope(std::shared_ptr<ConfigDispatcher> dispatcher);
  ~ConfigDispatchScope();
  ConfigDispatchScope(const ConfigDispatchScope&) = delete;
  ConfigDispatchScope& operator=(const ConfigDispatchScope&) = delete;

 private:
  std::shared_ptr<ConfigDispatcher> previous_;
};

}  // namespace loom::graph
