#include "loom/autotune/cost_model.h"

#include <xgboost/c_api.h>

#include <string>

#include "loom/support/error.h"

namespace loom::autotune {

namespace {

void Check(int status, const char* call) {
  LOOM_CHECK_USER(status == 0) << "XGBoost " << call << " failed: " << XGBGetLastError();
}

// One matrix of rows, freed with the scope.
class Matrix {
 public:
  explicit Matrix(const std::vector<std::vector<float>>& rows) {
    LOOM_CHECK_USER(!rows.empty()) << "CostModel: no rows";
    const size_t columns = rows[0].size();
    std::vector<float> flat;
    flat.reserve(rows.size() * columns);
    for (const std::vector<float>& row : rows) {
      LOOM_CHECK_USER(row.size() == columns) << "CostModel: rows of different lengths";
      flat.insert(flat.end(), row.begin(), row.end());
    }
    Check(XGDMatrixCreateFromMat(flat.data(), rows.size(), columns, -1.0f, &handle_),
          "XGDMatrixCreateFromMat");
  }
  ~Matrix() { XGDMatrixFree(handle_); }
  DMatrixHandle handle() const { return handle_; }

 private:
  DMatrixHandle handle_ = nullptr;
};

}  // namespace

CostModel::CostModel() = default;

CostModel::~CostModel() {
  if (booster_) XGBoosterFree(booster_);
}

void CostModel::Fit(const std::vector<std::vector<float>>& features,
                    const std::vector<float>& labels, const std::vector<unsigned>& groups,
                    int rounds) {
  LOOM_CHECK_USER(features.size() == labels.size())
      << "CostModel::Fit: " << features.size() << " rows but " << labels.size() << " labels";
  size_t grouped = 0;
  for (unsigned g : groups) grouped += g;
  LOOM_CHECK_USER(grouped == labels.size())
      << "CostModel::Fit: the groups cover " << grouped << " rows of " << labels.size();
  Matrix train(features);
  Check(XGDMatrixSetFloatInfo(train.handle(), "label", labels.data(), labels.size()),
        "XGDMatrixSetFloatInfo");
  Check(XGDMatrixSetUIntInfo(train.handle(), "group", groups.data(), groups.size()),
        "XGDMatrixSetUIntInfo");
  BoosterHandle booster = nullptr;
  DMatrixHandle matrices[] = {train.handle()};
  Check(XGBoosterCreate(matrices, 1, &booster), "XGBoosterCreate");
  // TVM's XGBTuner settings: shallow trees, a learning rate of 0.3, one thread (the measuring runs
  // beside it).
  for (auto [key, value] : {std::pair{"objective", "rank:pairwise"},
                            {"max_depth", "6"},
                            {"gamma", "0.0001"},
                            {"min_child_weight", "1"},
                            {"subsample", "1"},
                            {"eta", "0.3"},
                            {"lambda", "1"},
                            {"alpha", "0"},
                            {"nthread", "1"},
                            {"verbosity", "0"},
                            {"seed", "7"}}) {
    Check(XGBoosterSetParam(booster, key, value), "XGBoosterSetParam");
  }
  for (int i = 0; i < rounds; ++i) {
    Check(XGBoosterUpdateOneIter(booster, i, train.handle()), "XGBoosterUpdateOneIter");
  }
  if (booster_) XGBoosterFree(booster_);
  booster_ = booster;
}

std::vector<float> CostModel::Predict(const std::vector<std::vector<float>>& features) const {
  LOOM_CHECK_USER(booster_ != nullptr) << "CostModel::Predict before Fit";
  Matrix rows(features);
  bst_ulong length = 0;
  const float* scores = nullptr;
  Check(XGBoosterPredict(booster_, rows.handle(), 0, 0, 0, &length, &scores), "XGBoosterPredict");
  return std::vector<float>(scores, scores + length);
}

}  // namespace loom::autotune
