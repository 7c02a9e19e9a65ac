#include "loom/autotune/tune.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>

#include "loom/autotune/tuner.h"
#include "loom/support/error.h"

namespace loom::autotune {

namespace {

using Clock = std::chrono::steady_clock;

// Answers every question with "the default" and counts the questions.
class RecordingDispatcher : public graph::ConfigDispatcher {
 public:
  std::optional<topi::Config> Query(const Target&, const graph::TuningWorkload& w) override {
    if (counts[w]++ == 0) order.push_back(w);
    return std::nullopt;
  }
  std::vector<graph::TuningWorkload> order;
  std::map<graph::TuningWorkload, int> counts;
};

// Transfer rows at most, over every other task: each row costs a lowering.
constexpr size_t kMaxTransferRows = 128;

// The confirmation after the search: each task's best few points and its default, measured
// again in interleaved rounds (Measurer::MeasureRounds). A point is first measured once, and
// on a shared host a slow spell (seconds or more) halves a 2-thread run's speed: the search
// kept the luckiest of 40-170 single runs and compared it with one run of the default, often
// slowed (ResNet-50 on a Zen 4, 2026-11-30: "14% faster" by the search's numbers, 0-2% in the
// model). The share of the budget kept for it; the points and rounds per task.
constexpr double kConfirmShare = 0.15;
constexpr size_t kConfirmPoints = 3;
constexpr int kConfirmRounds = 3;

struct TaskState {
  const Task* task = nullptr;
  std::unique_ptr<Measurer> measurer;
  std::unique_ptr<Tuner> tuner;
  TaskStatus status;
  std::vector<topi::Config> configs;  // measured, with their costs (for transfer)
  std::vector<double> costs;
  // After each batch: the seconds spent on this task so far and the best cost then.
  std::vector<std::pair<double, double>> curve;
  double seconds = 0;
  size_t last_gain_trial = 0;
};

class Scheduler {
 public:
  Scheduler(const std::vector<Task>& tasks, const Target& target, const TuneOptions& options,
            TuneSummary& summary)
      : target_(target), options_(options), summary_(summary) {
    for (size_t i = 0; i < tasks.size(); ++i) {
      TaskState state;
      state.task = &tasks[i];
      state.status.task = &tasks[i];
      state.status.index = i;
      state.status.count = tasks.size();
      state.status.failures.assign(5, 0);
      states_.push_back(std::move(state));
    }
    if (options.resume && std::filesystem::exists(options.records_path)) LoadRecords();
    if (!options.records_path.empty())
      writer_ = std::make_unique<RecordWriter>(options.records_path);
  }

  // The task to measure next: each once in order, then the one with the largest expected gain
  // per second: its share of the model's time (occurrences x best cost) times the fraction by
  // which its last three batches (the first: against the default) cut its cost, plus an
  // exploration bonus that shrinks with its trials (0.1 / sqrt(trials)), over its seconds per
  // batch. So time goes where the model's time falls fastest, and a task that has stopped
  // improving yields to those measured less. None when all are finished.
  TaskState* Next() {
    TaskState* best = nullptr;
    double best_rate = -1;
    for (TaskState& s : states_) {
      if (s.status.finished) continue;
      if (s.curve.empty()) return &s;
      const auto& [seconds, cost] = s.curve.back();
      const size_t window = 3;
      const double earlier_cost = s.curve.size() > window
                                      ? s.curve[s.curve.size() - 1 - window].second
                                      : s.status.default_cost;
      const double gain = std::isfinite(earlier_cost) && earlier_cost > 0
                              ? std::max(0.0, (earlier_cost - cost) / earlier_cost)
                              : 0.0;
      const double bonus =
          0.1 / std::sqrt(static_cast<double>(std::max<size_t>(s.tuner->trials(), 1)));
      const double seconds_per_batch = std::max(seconds / s.curve.size(), 1e-3);
      const double rate = s.task->occurrences * cost * (gain + bonus) / seconds_per_batch;
      if (std::isfinite(rate) && rate > best_rate) best = &s, best_rate = rate;
    }
    return best;
  }

  void MeasureBatch(TaskState& s) {
    Clock::time_point start = Clock::now();
    if (!s.tuner) Start(s);
    size_t count = options_.batch_size;
    if (options_.max_trials_per_task > 0) {
      const size_t limit = static_cast<size_t>(options_.max_trials_per_task);
      if (s.tuner->trials() >= limit) {
        Finish(s, "trial limit reached");
        return;
      }
      count = std::min(count, limit - s.tuner->trials());
    }
    std::vector<int64_t> points = s.tuner->NextBatch(count);
    if (points.empty()) {
      Finish(s, "every valid point measured");
      return;
    }
    const double before = s.tuner->best_cost();
    std::vector<topi::Config> configs = s.tuner->Configs(points);
    std::vector<MeasureResult> results = s.measurer->Measure(configs);
    if (s.curve.empty()) RecordDefault(s);
    s.tuner->Update(points, results);
    for (size_t i = 0; i < points.size(); ++i) {
      Write(s, configs[i], results[i]);
      ++s.status.failures[static_cast<int>(results[i].error)];
    }
    if (s.tuner->best_cost() < before) s.last_gain_trial = s.tuner->trials();
    s.seconds += std::chrono::duration<double>(Clock::now() - start).count();
    s.curve.emplace_back(s.seconds, s.tuner->best_cost());
    Refresh(s);
    if (s.tuner->Exhausted()) {
      Finish(s, "every valid point measured");
    } else if (options_.max_trials_per_task > 0 &&
               s.tuner->trials() >= static_cast<size_t>(options_.max_trials_per_task)) {
      Finish(s, "trial limit reached");
    } else if (s.tuner->trials() - s.last_gain_trial >=
               static_cast<size_t>(options_.early_stopping)) {
      Finish(s, "no gain in " + std::to_string(options_.early_stopping) + " trials");
    }
  }

  TaskStatus& status(TaskState& s) { return s.status; }

  // The tasks whose search measured something, the largest share of the model's time first.
  std::vector<TaskState*> ToConfirm() {
    std::vector<TaskState*> order;
    for (TaskState& s : states_) {
      if (s.measurer && !s.configs.empty()) order.push_back(&s);
    }
    std::stable_sort(order.begin(), order.end(), [](const TaskState* a, const TaskState* b) {
      return a->task->occurrences * a->status.best_cost >
             b->task->occurrences * b->status.best_cost;
    });
    return order;
  }

  // Measures the task's kConfirmPoints best distinct points and its default kConfirmRounds times
  // more each, interleaved, writes every run as a record, and reports the medians of those runs
  // (the successful ones) as the task's best and default costs. A task whose default cannot be
  // measured (resumed, never run here) stays as the search left it, with a warning.
  void Confirm(TaskState& s) {
    const graph::TuningWorkload& w = s.task->workload;
    const topi::Config fallback = graph::FindTuningTemplate(w.template_name).default_config(w.args);
    std::vector<size_t> order(s.configs.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return s.costs[a] < s.costs[b]; });
    std::vector<topi::Config> points;
    for (size_t i : order) {
      if (points.size() >= kConfirmPoints || !std::isfinite(s.costs[i])) break;
      if (std::find(points.begin(), points.end(), s.configs[i]) == points.end()) {
        points.push_back(s.configs[i]);
      }
    }
    if (std::find(points.begin(), points.end(), fallback) == points.end()) {
      points.push_back(fallback);
    }
    std::vector<std::vector<MeasureResult>> rounds;
    try {
      rounds = s.measurer->MeasureRounds(points, kConfirmRounds);
    } catch (const Error& e) {
      summary_.warnings.push_back(w.str() + ": not confirmed (" + std::string(e.what()) + ")");
      return;
    }
    double best = std::numeric_limits<double>::infinity(), default_cost = best;
    for (size_t i = 0; i < points.size(); ++i) {
      std::vector<double> costs;
      for (const MeasureResult& result : rounds[i]) {
        Write(s, points[i], result);
        if (result.error == MeasureError::kNone) costs.push_back(result.cost());
      }
      if (costs.empty()) continue;
      std::sort(costs.begin(), costs.end());
      const double median = costs[costs.size() / 2];
      if (points[i] == fallback) default_cost = median;
      best = std::min(best, median);
    }
    if (!std::isfinite(best) || !std::isfinite(default_cost)) return;  // as the search left it
    s.status.best_cost = best;
    s.status.default_cost = default_cost;
    s.status.confirmed = true;
  }

  void Summarize() {
    for (TaskState& s : states_) {
      if (s.tuner) Refresh(s);
      summary_.tasks.push_back(s.status);
    }
  }

 private:
  void Start(TaskState& s) {
    const graph::TuningWorkload& w = s.task->workload;
    s.measurer = std::make_unique<Measurer>(w, target_, options_.measure);
    TransferHistory history = History(s);
    s.tuner = MakeTuner(options_.tuner, w, &history, options_.seed + s.status.index);
    if (options_.keep_layouts) s.tuner->KeepDefaultLayouts();
    s.status.valid_points = s.tuner->space().ValidIndices().size();
    // Records of this workload from earlier runs count as measured.
    std::vector<int64_t> points;
    std::vector<MeasureResult> results;
    const topi::Config fallback = graph::FindTuningTemplate(w.template_name).default_config(w.args);
    for (const auto& [config, result] : resumed_[w]) {
      // Records of other layouts (a run without keep_layouts) are not points of this search.
      if (options_.keep_layouts && !s.tuner->space().SameLayouts(config, fallback)) continue;
      try {
        int64_t p = s.tuner->space().IndexOf(config);
        points.push_back(p);
        results.push_back(result);
        s.configs.push_back(config);
        s.costs.push_back(result.cost());
      } catch (const Error& e) {
        summary_.warnings.push_back(w.str() + ": a record's config does not fit (" +
                                    std::string(e.what()) + "); ignored");
      }
    }
    if (!points.empty()) {
      s.tuner->Update(points, results);
      s.last_gain_trial = s.tuner->trials();
    }
    // The default's cost as recorded, for a task that has nothing left to measure.
    for (const auto& [config, result] : resumed_[w]) {
      if (config == fallback && result.error == MeasureError::kNone) {
        s.status.default_cost = result.cost();
      }
    }
  }

  // The default point's measurement, made by the Measurer as its reference.
  void RecordDefault(TaskState& s) {
    const graph::TuningTemplate& t = graph::FindTuningTemplate(s.task->workload.template_name);
    const topi::Config fallback = t.default_config(s.task->workload.args);
    const int64_t point = s.tuner->space().IndexOf(fallback);
    s.status.default_cost = s.measurer->reference().cost();
    if (s.tuner->trials() == 0 || s.tuner->best_cost() > s.status.default_cost) {
      s.tuner->Update({point}, {s.measurer->reference()});
      Write(s, fallback, s.measurer->reference());
    }
  }

  void Write(TaskState& s, const topi::Config& config, const MeasureResult& result) {
    s.configs.push_back(config);
    s.costs.push_back(result.cost());
    if (writer_) writer_->Write(TuningRecord::Make(s.task->workload, target_, config, result));
  }

  void Refresh(TaskState& s) {
    if (s.status.confirmed) return;  // the confirmation's medians stand
    s.status.trials = s.tuner->trials();
    s.status.best_cost = s.tuner->best_cost();
    if (s.measurer && s.measurer->has_reference() && s.status.default_cost == 0) {
      s.status.default_cost = s.measurer->reference().cost();
    }
  }

  void Finish(TaskState& s, const std::string& why) {
    s.status.finished = true;
    s.status.why_finished = why;
    Refresh(s);
  }

  // What other tasks measured (this run and resumed records), for the new task's model: the best
  // and a spread of the rest of each, kMaxTransferRows at most.
  TransferHistory History(const TaskState& self) {
    TransferHistory history;
    if (options_.tuner != "xgb") return history;
    std::vector<const TaskState*> others;
    for (const TaskState& s : states_) {
      if (&s != &self && !s.configs.empty()) others.push_back(&s);
    }
    std::map<graph::TuningWorkload, std::vector<std::pair<topi::Config, double>>> sources;
    for (const TaskState* s : others) {
      for (size_t i = 0; i < s->configs.size(); ++i) {
        sources[s->task->workload].emplace_back(s->configs[i], s->costs[i]);
      }
    }
    for (const auto& [w, measured] : resumed_) {
      if (w == self.task->workload || sources.count(w)) continue;
      for (const auto& [config, result] : measured) sources[w].emplace_back(config, result.cost());
    }
    if (sources.empty()) return history;
    const size_t per_source = std::max<size_t>(4, kMaxTransferRows / sources.size());
    size_t rows = 0;
    for (const auto& [w, measured] : sources) {
      if (rows >= kMaxTransferRows) break;
      std::vector<std::vector<float>> features;
      std::vector<double> costs;
      const size_t take = std::min({per_source, measured.size(), kMaxTransferRows - rows});
      for (size_t k = 0; k < take; ++k) {
        const auto& [config, cost] = measured[k * measured.size() / take];
        try {
          features.push_back(PointFeatures(w, config));
          costs.push_back(cost);
        } catch (const Error&) {
          // A record of another template version: nothing to learn from.
        }
      }
      rows += features.size();
      history.AddTask(features, costs);
    }
    return history;
  }

  void LoadRecords() {
    RecordsFile file = ReadRecords(options_.records_path);
    if (!file.error.empty()) summary_.warnings.push_back(file.error);
    for (size_t i = 0; i < file.records.size(); ++i) {
      const TuningRecord& r = file.records[i];
      std::string mismatch = r.Mismatch(target_);
      if (!mismatch.empty()) {
        summary_.warnings.push_back(options_.records_path + " line " +
                                    std::to_string(file.lines[i]) + ": " + mismatch + "; ignored");
        continue;
      }
      resumed_[r.workload].emplace_back(r.config, r.result);
    }
  }

  const Target& target_;
  const TuneOptions& options_;
  TuneSummary& summary_;
  std::vector<TaskState> states_;
  std::unique_ptr<RecordWriter> writer_;
  std::map<graph::TuningWorkload, std::vector<std::pair<topi::Config, MeasureResult>>> resumed_;
};

}  // namespace

std::vector<Task> ExtractTasks(const graph::IRModule& model, const graph::CompileOptions& options) {
  auto recorder = std::make_shared<RecordingDispatcher>();
  graph::CompileOptions recording = options;
  recording.configs = recorder;
  graph::OptimizeGraph(model, recording);
  std::vector<Task> tasks;
  for (const graph::TuningWorkload& w : recorder->order) {
    const graph::TuningTemplate& t = graph::FindTuningTemplate(w.template_name);
    Task task;
    task.workload = w;
    task.occurrences = recorder->counts[w];
    task.description = t.describe(w.args);
    task.flops = t.instantiate(w.args, t.default_config(w.args)).flops;
    tasks.push_back(std::move(task));
  }
  return tasks;
}

void CheckTuneOptions(const TuneOptions& options) {
  LOOM_CHECK_USER(options.budget_seconds >= kMinBudgetSeconds)
      << "a tuning budget of " << options.budget_seconds << " s is smaller than one measurement "
      << "(building and timing a candidate and the default point takes " << kMinBudgetSeconds
      << " s or more); give at least " << kMinBudgetSeconds << " s, e.g. --budget 20m";
  LOOM_CHECK_USER(options.batch_size >= 1 && options.early_stopping >= 1 &&
                  options.max_trials_per_task >= 0)
      << "TuneTasks: batch_size and early_stopping must be at least 1, max_trials_per_task not "
      << "negative";
  LOOM_CHECK_USER(!options.resume || !options.records_path.empty())
      << "resuming needs the records file to resume from";
  CheckTunerKind(options.tuner);
}

TuneSummary TuneTasks(const std::vector<Task>& tasks, const Target& target,
                      const TuneOptions& options,
                      const std::function<void(const TaskStatus&, double)>& progress) {
  CheckTuneOptions(options);
  TuneSummary summary;
  Clock::time_point start = Clock::now();
  auto after = [&](double seconds) {
    return start +
           std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  };
  const Clock::time_point deadline = after(options.budget_seconds);
  const Clock::time_point search_deadline = after(options.budget_seconds * (1 - kConfirmShare));
  auto seconds_left = [&] {
    return std::chrono::duration<double>(deadline - Clock::now()).count();
  };
  Scheduler scheduler(tasks, target, options, summary);
  while (Clock::now() < search_deadline) {
    TaskState* next = scheduler.Next();
    if (!next) break;
    scheduler.MeasureBatch(*next);
    if (progress) progress(scheduler.status(*next), seconds_left());
  }
  for (TaskState* s : scheduler.ToConfirm()) {
    if (Clock::now() >= deadline) break;
    scheduler.Confirm(*s);
    if (progress) progress(scheduler.status(*s), seconds_left());
  }
  scheduler.Summarize();
  summary.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return summary;
}

}  // namespace loom::autotune
