// Tuners: which points of a task's configuration space to measure next. Grid search walks the valid
// points in order, random search samples them, and the model-based tuner fits gradient-boosted
// trees (cost_model.h) to the loop-nest features (features.h) of what was measured and explores
// with simulated annealing on the model's scores, keeping an epsilon share of each batch random.
//
//   std::unique_ptr<Tuner> tuner = MakeTuner("xgb", workload, &history,
//   /*seed=*/1); std::vector<int64_t> points = tuner->NextBatch(16);
//   tuner->Update(points, measurer.Measure(tuner->Configs(points)));
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "loom/autotune/cost_model.h"
#include "loom/autotune/measure.h"
#include "loom/graph/tuning.h"

namespace loom::autotune {

// Measurements of earlier tasks (and earlier runs) that warm a new task's cost model: rows of
// features with labels relative to their task's best, a group per task.
struct TransferHistory {
  std::vector<std::vector<float>> features;
  std::vector<float> labels;
  std::vector<unsigned> groups;
  // Adds one task's measurements (failures label 0).
  void AddTask(const std::vector<std::vector<float>>& features, const std::vector<double>& costs);
};

// Relative labels: best cost / cost (1 for the best, 0 for a failure).
std::vector<float> RelativeLabels(const std::vector<double>& costs);

class Tuner {
 public:
  explicit Tuner(graph::TuningWorkload workload);
  virtual ~Tuner() = default;

  // Up to `count` valid points not yet measured (fewer when the space runs out).
  virtual std::vector<int64_t> NextBatch(size_t count) = 0;
  // What measuring `points` gave.
  virtual void Update(const std::vector<int64_t>& points,
                      const std::vector<MeasureResult>& results);

  // Narrows the search to the default's layouts (ConfigSpace::PinLayouts), before any
  // measurement: what tuning within a model does (tune.h, TuneOptions::keep_layouts).
  void KeepDefaultLayouts();

  std::vector<topi::Config> Configs(const std::vector<int64_t>& points) const;
  const graph::TuningWorkload& workload() const { return workload_; }
  const topi::ConfigSpace& space() const { return space_; }
  bool Exhausted() const { return measured_.size() >= space_.ValidIndices().size(); }
  size_t trials() const { return measured_.size(); }
  // The lowest cost so far (infinity before any success) and its point (-1 then).
  double best_cost() const { return best_cost_; }
  int64_t best_point() const { return best_point_; }

 protected:
  bool Measured(int64_t point) const { return measured_.count(point) != 0; }
  // A uniformly random valid point not yet measured (-1 when none is left).
  int64_t RandomUnmeasured(std::mt19937_64& rng) const;

  graph::TuningWorkload workload_;
  topi::ConfigSpace space_;
  std::set<int64_t> measured_;
  double best_cost_;
  int64_t best_point_ = -1;
};

// A loom::Error naming the tuners unless `kind` is one: "xgb" (the model-based tuner), "random" or
// "grid".
void CheckTunerKind(const std::string& kind);
// A tuner of that kind. `history` (may be null) warms the model-based tuner.
std::unique_ptr<Tuner> MakeTuner(const std::string& kind, const graph::TuningWorkload& workload,
                                 const TransferHistory* history, uint64_t seed);

// The loop-nest features of a point: its kernel's timed function, lowered.
std::vector<float> PointFeatures(const graph::TuningWorkload& workload, const topi::Config& config);

}  // namespace loom::autotune
