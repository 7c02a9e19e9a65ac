// The learned cost model: gradient-boosted trees (XGBoost's C API) over loop-nest features, trained
// with a pairwise rank objective on each task's measurements (a group per task: the model learns
// which candidate of a workload is faster, so workloads of different sizes train one model). Scores
// are relative: higher is faster.
#pragma once

#include <cstdint>
#include <vector>

namespace loom::autotune {

class CostModel {
 public:
  CostModel();
  ~CostModel();
  CostModel(const CostModel&) = delete;
  CostModel& operator=(const CostModel&) = delete;

  // Trains a new model: rows of features, a label per row (higher: faster; 0 for a failed
  // candidate) and the size of each group of consecutive rows (their labels compare only within the
  // group). A loom::Error when the sizes disagree.
  void Fit(const std::vector<std::vector<float>>& features, const std::vector<float>& labels,
           const std::vector<unsigned>& groups, int rounds = 60);
  bool trained() const { return booster_ != nullptr; }
  // One score per row; a loom::Error before Fit.
  std::vector<float> Predict(const std::vector<std::vector<float>>& features) const;

 private:
  void* booster_ = nullptr;  // BoosterHandle
};

}  // namespace loom::autotune
