#include "loom/autotune/tuner.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "loom/autotune/features.h"
#include "loom/support/error.h"

namespace loom::autotune {

std::vector<float> RelativeLabels(const std::vector<double>& costs) {
  double best = std::numeric_limits<double>::infinity();
  for (double c : costs) best = std::min(best, c);
  std::vector<float> labels;
  for (double c : costs) labels.push_back(std::isfinite(c) ? static_cast<float>(best / c) : 0.f);
  return labels;
}

void TransferHistory::AddTask(const std::vector<std::vector<float>>& rows,
                              const std::vector<double>& costs) {
  LOOM_ICHECK(rows.size() == costs.size()) << "one cost per row";
  if (rows.empty()) return;
  features.insert(features.end(), rows.begin(), rows.end());
  std::vector<float> relative = RelativeLabels(costs);
  labels.insert(labels.end(), relative.begin(), relative.end());
  groups.push_back(static_cast<unsigned>(rows.size()));
}

std::vector<float> PointFeatures(const graph::TuningWorkload& workload,
                                 const topi::Config& config) {
  const graph::TuningTemplate& t = graph::FindTuningTemplate(workload.template_name);
  graph::MeasurableKernel kernel = t.instantiate(workload.args, config);
  return LoopNestFeatures(kernel.module.Lookup(kernel.timed.function));
}

Tuner::Tuner(graph::TuningWorkload workload)
    : workload_(std::move(workload)),
      space_(graph::FindTuningTemplate(workload_.template_name).space(workload_.args)),
      best_cost_(std::numeric_limits<double>::infinity()) {}

void Tuner::Update(const std::vector<int64_t>& points, const std::vector<MeasureResult>& results) {
  LOOM_ICHECK(points.size() == results.size()) << "one result per point";
  for (size_t i = 0; i < points.size(); ++i) {
    measured_.insert(points[i]);
    if (results[i].cost() < best_cost_) {
      best_cost_ = results[i].cost();
      best_point_ = points[i];
    }
  }
}

void Tuner::KeepDefaultLayouts() {
  LOOM_ICHECK(measured_.empty()) << "layouts are kept before the first measurement";
  space_.PinLayouts(
      graph::FindTuningTemplate(workload_.template_name).default_config(workload_.args));
}

std::vector<topi::Config> Tuner::Configs(const std::vector<int64_t>& points) const {
  std::vector<topi::Config> configs;
  for (int64_t p : points) configs.push_back(space_.At(p));
  return configs;
}

int64_t Tuner::RandomUnmeasured(std::mt19937_64& rng) const {
  const std::vector<int64_t>& valid = space_.ValidIndices();
  if (Exhausted()) return -1;
  // Rejection while few are measured; a scan when most are.
  if (measured_.size() * 2 < valid.size()) {
    while (true) {
      int64_t p = valid[std::uniform_int_distribution<size_t>(0, valid.size() - 1)(rng)];
      if (!Measured(p)) return p;
    }
  }
  std::vector<int64_t> left;
  for (int64_t p : valid) {
    if (!Measured(p)) left.push_back(p);
  }
  return left[std::uniform_int_distribution<size_t>(0, left.size() - 1)(rng)];
}

namespace {

class GridTuner : public Tuner {
 public:
  using Tuner::Tuner;
  std::vector<int64_t> NextBatch(size_t count) override {
    std::vector<int64_t> batch;
    const std::vector<int64_t>& valid = space_.ValidIndices();
    for (; next_ < valid.size() && batch.size() < count; ++next_) {
      if (!Measured(valid[next_])) batch.push_back(valid[next_]);
    }
    return batch;
  }

 private:
  size_t next_ = 0;
};

class RandomTuner : public Tuner {
 public:
  RandomTuner(graph::TuningWorkload workload, uint64_t seed)
      : Tuner(std::move(workload)), rng_(seed) {}
  std::vector<int64_t> NextBatch(size_t count) override {
    std::set<int64_t> batch;
    while (batch.size() < count && measured_.size() + batch.size() < space_.ValidIndices().size()) {
      int64_t p = RandomUnmeasured(rng_);
      batch.insert(p);
    }
    return {batch.begin(), batch.end()};
  }

 private:
  std::mt19937_64 rng_;
};

// Simulated annealing on the model's scores: chains start at the best measured points and at random
// ones, each step moves one knob to another of its values, and a worse score is accepted with
// probability exp(-(drop) / temperature) as the temperature falls to zero. The points it visits
// (never measured ones) are ranked by score; the batch takes the best of them and an epsilon share
// of random points. Features are computed by lowering each point, and the moves of each step are
// scored together; the walk stops once it has lowered about kMaxNewFeatures new points.
class ModelTuner : public Tuner {
 public:
  ModelTuner(graph::TuningWorkload workload, const TransferHistory* history, uint64_t seed)
      : Tuner(std::move(workload)), rng_(seed) {
    if (history) history_ = *history;
    if (!history_.features.empty()) Fit();  // transfer: a model before the first measurement
  }

  std::vector<int64_t> NextBatch(size_t count) override {
    std::set<int64_t> batch;
    if (model_.trained()) {
      for (int64_t p : Anneal(count)) {
        if (batch.size() + RandomShare(count) >= count) break;
        batch.insert(p);
      }
    }
    while (batch.size() < count && measured_.size() + batch.size() < space_.ValidIndices().size()) {
      batch.insert(RandomUnmeasured(rng_));
    }
    return {batch.begin(), batch.end()};
  }

  void Update(const std::vector<int64_t>& points,
              const std::vector<MeasureResult>& results) override {
    Tuner::Update(points, results);
    for (size_t i = 0; i < points.size(); ++i) {
      measured_points_.push_back(points[i]);
      measured_costs_.push_back(results[i].cost());
    }
    Fit();
  }

 private:
  static constexpr double kEpsilon = 0.1;
  static constexpr size_t kChains = 32;
  static constexpr int kSteps = 40;
  static constexpr size_t kMaxNewFeatures = 128;

  size_t RandomShare(size_t count) const {
    return static_cast<size_t>(std::ceil(kEpsilon * static_cast<double>(count)));
  }

  const std::vector<float>& Features(int64_t point) {
    auto it = features_.find(point);
    if (it == features_.end()) {
      it = features_.emplace(point, PointFeatures(workload_, space_.At(point))).first;
    }
    return it->second;
  }

  void Fit() {
    std::vector<std::vector<float>> rows = history_.features;
    std::vector<float> labels = history_.labels;
    std::vector<unsigned> groups = history_.groups;
    for (int64_t p : measured_points_) rows.push_back(Features(p));
    std::vector<float> own = RelativeLabels(measured_costs_);
    labels.insert(labels.end(), own.begin(), own.end());
    if (!own.empty()) groups.push_back(static_cast<unsigned>(own.size()));
    // A rank model needs two different labels somewhere to learn an order.
    if (std::adjacent_find(labels.begin(), labels.end(), std::not_equal_to<>()) == labels.end()) {
      return;
    }
    model_.Fit(rows, labels, groups);
    scores_.clear();
  }

  // The model's scores of `points`, those not scored since the last fit predicted in one call.
  std::vector<float> Scores(const std::vector<int64_t>& points) {
    std::vector<int64_t> fresh;
    for (int64_t p : points) {
      if (!scores_.count(p) && std::find(fresh.begin(), fresh.end(), p) == fresh.end()) {
        fresh.push_back(p);
      }
    }
    if (!fresh.empty()) {
      std::vector<std::vector<float>> rows;
      for (int64_t p : fresh) rows.push_back(Features(p));
      std::vector<float> predicted = model_.Predict(rows);
      for (size_t i = 0; i < fresh.size(); ++i) scores_[fresh[i]] = predicted[i];
    }
    std::vector<float> out;
    for (int64_t p : points) out.push_back(scores_.at(p));
    return out;
  }

  // A neighbour: one knob moved to another of its values (the point itself when that is not valid).
  int64_t Neighbour(int64_t point) {
    std::vector<int64_t> digits = space_.Digits(point);
    std::vector<size_t> movable;
    for (size_t k = 0; k < digits.size(); ++k) {
      if (space_.knobs()[k].values.size() > 1) movable.push_back(k);
    }
    if (movable.empty()) return point;
    const size_t k = movable[std::uniform_int_distribution<size_t>(0, movable.size() - 1)(rng_)];
    const int64_t radix = static_cast<int64_t>(space_.knobs()[k].values.size());
    digits[k] = (digits[k] + std::uniform_int_distribution<int64_t>(1, radix - 1)(rng_)) % radix;
    const int64_t next = space_.IndexOfDigits(digits);
    return space_.IsValid(space_.At(next)) ? next : point;
  }

  std::vector<int64_t> Anneal(size_t count) {
    const size_t budget_end = features_.size() + kMaxNewFeatures;
    std::vector<int64_t> chains;
    std::vector<std::pair<double, int64_t>> measured;
    for (size_t i = 0; i < measured_points_.size(); ++i) {
      measured.emplace_back(measured_costs_[i], measured_points_[i]);
    }
    std::sort(measured.begin(), measured.end());
    for (size_t i = 0; i < measured.size() && chains.size() < kChains / 2; ++i) {
      chains.push_back(measured[i].second);
    }
    while (chains.size() < kChains) {
      const int64_t p = RandomUnmeasured(rng_);
      if (p < 0) break;
      chains.push_back(p);
    }
    std::vector<float> scores = Scores(chains);
    std::unordered_map<int64_t, float> visited;
    for (size_t c = 0; c < chains.size(); ++c) {
      if (!Measured(chains[c])) visited[chains[c]] = scores[c];
    }
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    for (int step = 0; step < kSteps && features_.size() < budget_end; ++step) {
      const double temperature = 1.0 - static_cast<double>(step) / kSteps;
      // Every chain's move of this step, scored together.
      std::vector<int64_t> moves;
      for (int64_t point : chains) moves.push_back(Neighbour(point));
      const std::vector<float> move_scores = Scores(moves);
      for (size_t c = 0; c < chains.size(); ++c) {
        const int64_t next = moves[c];
        if (next == chains[c]) continue;
        const float score = move_scores[c];
        if (!Measured(next)) visited[next] = score;
        const double drop = scores[c] - score;
        if (drop <= 0 || uniform(rng_) < std::exp(-drop / std::max(temperature, 1e-3))) {
          chains[c] = next;
          scores[c] = score;
        }
      }
    }
    std::vector<std::pair<float, int64_t>> ranked;
    for (const auto& [point, score] : visited) ranked.emplace_back(-score, point);
    std::sort(ranked.begin(), ranked.end());
    std::vector<int64_t> best;
    for (size_t i = 0; i < ranked.size() && best.size() < count; ++i)
      best.push_back(ranked[i].second);
    return best;
  }

  std::mt19937_64 rng_;
  TransferHistory history_;
  CostModel model_;
  std::unordered_map<int64_t, std::vector<float>> features_;
  std::unordered_map<int64_t, float> scores_;  // by the current model
  std::vector<int64_t> measured_points_;
  std::vector<double> measured_costs_;
};

}  // namespace

void CheckTunerKind(const std::string& kind) {
  LOOM_CHECK_USER(kind == "xgb" || kind == "random" || kind == "grid")
      << "unknown tuner '" << kind << "' (expected xgb, random or grid)";
}

std::unique_ptr<Tuner> MakeTuner(const std::string& kind, const graph::TuningWorkload& workload,
                                 const TransferHistory* history, uint64_t seed) {
  CheckTunerKind(kind);
  if (kind == "xgb") return std::make_unique<ModelTuner>(workload, history, seed);
  if (kind == "random") return std::make_unique<RandomTuner>(workload, seed);
  return std::make_unique<GridTuner>(workload);
}

}  // namespace loom::autotune
