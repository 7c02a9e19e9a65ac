// The cost model's view of a candidate: a fixed-length vector of features of its lowered loop nest
// (features.cc says which), the same length for every template, so that what the model learns on
// one workload carries over to others.
#pragma once

#include <cstddef>
#include <vector>

#include "loom/ir/module.h"

namespace loom::autotune {

size_t FeatureCount();
std::vector<float> LoopNestFeatures(const PrimFunc& func);

}  // namespace loom::autotune
