// Tuning a model: its tasks (one per distinct workload of a tunable template, weighted by how often
// the model runs it), and a scheduler that spends a time budget over them, measuring batches of
// each task's tuner's candidates and appending every measurement to a records file as it is made.
//
//   std::vector<Task> tasks = ExtractTasks(module, {.target = "llvm
//   -mcpu=native"}); TuneSummary summary = TuneTasks(tasks, target,
//   {.budget_seconds = 1200,
//                                                   .records_path =
//                                                   "tune.jsonl"});
//   // then: Compile(module, {.configs = std::make_shared<BestRecords>(...)})
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "loom/autotune/measure.h"
#include "loom/autotune/record.h"
#include "loom/graph/compile.h"

namespace loom::autotune {

struct Task {
  graph::TuningWorkload workload;
  int occurrences = 0;  // kernels of the model with this workload
  std::string description;
  double flops = 0;  // of one call
};

// Compiles the model's graph (graph::OptimizeGraph) with a dispatcher that records every workload
// the strategies ask about; tasks in the order the model first meets them.
std::vector<Task> ExtractTasks(const graph::IRModule& model, const graph::CompileOptions& options);

struct TuneOptions {
  std::string tuner = "xgb";    // "xgb", "random" or "grid"
  double budget_seconds = 0;    // wall time for every task together (required)
  int max_trials_per_task = 0;  // 0: as many as the budget allows
  size_t batch_size = 16;
  // A task stops once this many trials have passed without a better point.
  int early_stopping = 128;
  // Search only points with the default's layouts (channel blocks): the model's other kernels
  // expect them, and a kernel measured alone does not pay the conversions that others cost.
  bool keep_layouts = true;
  MeasureOptions measure;
  std::string records_path;  // appended to; "" writes none
  // The records already in records_path count as measured (and warm the cost models).
  bool resume = false;
  uint64_t seed = 1;
};

// Seconds a budget must have at least: one measurement (building a candidate and the default point,
// then checking and timing each).
inline constexpr double kMinBudgetSeconds = 10;

struct TaskStatus {
  const Task* task = nullptr;
  size_t index = 0, count = 0;  // this task's position among `count`
  size_t trials = 0, valid_points = 0;
  double best_cost = 0, default_cost = 0;  // seconds per call
  std::vector<int> failures;               // per MeasureError kind
  bool finished = false;
  std::string why_finished;  // "space exhausted", "no gain in 128 trials", ...
  // The best points and the default measured again after the search, in interleaved rounds:
  // best_cost and default_cost are then those rounds' medians.
  bool confirmed = false;
};

struct TuneSummary {
  std::vector<TaskStatus> tasks;
  std::vector<std::string> warnings;  // records of the file that were not used, and why
  double seconds = 0;
};

// A loom::Error naming the option that is out of range (TuneTasks checks too; a caller checks
// before slow work such as importing a model).
void CheckTuneOptions(const TuneOptions& options);

// The search takes most of the budget (all but a share kept for this); then, while the budget
// lasts, each task's best points and default are measured again (TaskStatus::confirmed), the tasks
// with the largest share of the model's time first. `progress` is called after each batch and each
// confirmation with the task's status and the seconds left.
TuneSummary TuneTasks(
    const std::vector<Task>& tasks, const Target& target, const TuneOptions& options,
    const std::function<void(const TaskStatus&, double seconds_left)>& progress = {});

}  // namespace loom::autotune
