// Tuning small models end to end: their tasks (deduplicated, counted), a short budget spent over
// them with the records written, the tuned compile computing what the reference does, resuming from
// the records, and the budget's floor.
#include "loom/autotune/tune.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "compile_test_models.h"
#include "error_of.h"

namespace loom::autotune {
namespace {

namespace models = graph::test::models;

TEST(ExtractTasks, FindsEachDistinctWorkloadOnceWithItsCount) {
  std::vector<Task> tasks = ExtractTasks(graph::IRModule::FromFunction(models::ResidualNet()), {});
  // c1 and c2 share a workload; c3, the 1x1 shortcut and c4 are one each.
  ASSERT_EQ(tasks.size(), 4u);
  EXPECT_EQ(tasks[0].workload.template_name, "x86.conv2d");
  EXPECT_EQ(tasks[0].occurrences, 2);
  EXPECT_EQ(tasks[0].description, "conv2d n=1 c=4 h=8 w=8 k=4 r=3 s=3 stride=1 pad=1 groups=1");
  EXPECT_DOUBLE_EQ(tasks[0].flops, 2.0 * 4 * 8 * 8 * 4 * 9);
  for (size_t i = 1; i < tasks.size(); ++i) EXPECT_EQ(tasks[i].occurrences, 1);
  std::vector<Task> mlp = ExtractTasks(graph::IRModule::FromFunction(models::Mlp()), {});
  ASSERT_EQ(mlp.size(), 2u);
  EXPECT_EQ(mlp[0].workload.str(), "x86.dense(2, 32, 16)");
  // Below -O3 no layout is altered: nothing to tune.
  EXPECT_TRUE(ExtractTasks(graph::IRModule::FromFunction(models::Mlp()), {.opt_level = 2}).empty());
}

TEST(TuneTasks, SpendsTheBudgetWritesRecordsAndTheTunedModelComputesTheSame) {
  const std::string records =
      (std::filesystem::temp_directory_path() / "loom_tune_test.jsonl").string();
  std::filesystem::remove(records);
  graph::Function main = models::SmallCnn();
  graph::IRModule module = graph::IRModule::FromFunction(main);
  std::vector<Task> tasks = ExtractTasks(module, {});
  ASSERT_EQ(tasks.size(), 3u);  // two convolutions, the dense layer
  const Target target = Target::Parse("llvm");
  TuneOptions options;
  options.budget_seconds = 300;
  options.max_trials_per_task = 6;
  options.batch_size = 3;
  options.records_path = records;
  options.measure.min_repeat_ms = 2;
  int progress_calls = 0;
  TuneSummary summary =
      TuneTasks(tasks, target, options, [&](const TaskStatus& status, double left) {
        ++progress_calls;
        EXPECT_LT(status.index, 3u);
        EXPECT_GT(left, 0);
      });
  ASSERT_EQ(summary.tasks.size(), 3u);
  for (const TaskStatus& status : summary.tasks) {
    SCOPED_TRACE(status.task->description);
    EXPECT_TRUE(status.finished);
    EXPECT_EQ(status.why_finished, "trial limit reached");
    EXPECT_GE(status.trials, 6u);
    EXPECT_GT(status.default_cost, 0);
    EXPECT_LE(status.best_cost, status.default_cost);
    // The search ended early: the best points and the default were measured again.
    EXPECT_TRUE(status.confirmed);
  }
  EXPECT_GE(progress_calls, 9);  // 6 batches or more, then 3 confirmations
  RecordsFile file = ReadRecords(records);
  EXPECT_EQ(file.error, "");
  EXPECT_GE(file.records.size(), 18u);
  for (const Task& task : tasks) {
    SCOPED_TRACE(task.description);
    const graph::TuningTemplate& t = graph::FindTuningTemplate(task.workload.template_name);
    const topi::Config fallback = t.default_config(task.workload.args);
    size_t default_runs = 0;
    for (const TuningRecord& r : file.records) {
      default_runs += r.workload == task.workload && r.config == fallback;
    }
    EXPECT_GE(default_runs, 3u);  // the confirmation's rounds
  }

  // The tuned compile: every task answered from the records, the result unchanged.
  auto best = std::make_shared<BestRecords>(file.records, target, file.lines);
  graph::CompiledModel tuned = graph::Compile(module, {.configs = best});
  EXPECT_TRUE(best->missing().empty());
  EXPECT_EQ(best->queried().size(), 3u);
  std::vector<runtime::NDArray> inputs = {
      graph::test::RandomArray({1, 3, 16, 16}, models::kF32, 5)};
  std::vector<runtime::NDArray> got = models::RunModel(graph::MakeGraphModel(tuned), inputs);
  std::vector<runtime::NDArray> want = models::Reference(main, inputs);
  for (size_t i = 0; i < want.size(); ++i) {
    graph::test::ExpectClose(got[i], graph::test::Values(want[i]), 1e-4, "tuned output");
  }

  // Resuming: the records count as trials, so every task is at its limit already; only the
  // confirmation measures, points measured before.
  options.resume = true;
  TuneSummary resumed = TuneTasks(tasks, target, options);
  for (const TaskStatus& status : resumed.tasks) {
    EXPECT_GE(status.trials, 6u);
    EXPECT_EQ(status.why_finished, "trial limit reached");
    EXPECT_TRUE(status.confirmed);
  }
  RecordsFile after = ReadRecords(records);
  EXPECT_GT(after.records.size(), file.records.size());
  for (size_t i = file.records.size(); i < after.records.size(); ++i) {
    const TuningRecord& added = after.records[i];
    EXPECT_TRUE(std::any_of(file.records.begin(), file.records.end(),
                            [&](const TuningRecord& r) {
                              return r.workload == added.workload && r.config == added.config;
                            }))
        << "line " << after.lines[i] << " measured a new point";
  }
  std::filesystem::remove(records);
}

TEST(TuneTasks, RefusesABudgetSmallerThanOneMeasurementAndUnknownTuners) {
  std::vector<Task> tasks = ExtractTasks(graph::IRModule::FromFunction(models::Mlp()), {});
  TuneOptions options;
  options.budget_seconds = 2;
  EXPECT_NE(testing::ErrorOf([&] {
              TuneTasks(tasks, Target::Parse("llvm"), options);
            }).find("a tuning budget of 2 s is smaller than one measurement"),
            std::string::npos);
  options.budget_seconds = 60;
  options.tuner = "genetic";
  EXPECT_NE(testing::ErrorOf([&] {
              TuneTasks(tasks, Target::Parse("llvm"), options);
            }).find("unknown tuner 'genetic' (expected xgb, random or grid)"),
            std::string::npos);
}

}  // namespace
}  // namespace loom::autotune
