// Calibration samples for the quantizer's tests: inputs [1, 8, 6, 6] uniform in [-1, 3], the
// ends included, so the first layer's range is known exactly.
#pragma once

#include <vector>

#include "pass_test_util.h"

namespace loom::graph::test {

inline std::vector<std::vector<runtime::NDArray>> Samples(int count) {
  std::vector<std::vector<runtime::NDArray>> samples;
  for (int s = 0; s < count; ++s) {
    runtime::NDArray x =
        RandomArray({1, 8, 6, 6}, DataType::Float(32), 40 + static_cast<unsigned>(s));
    for (int64_t i = 0; i < x.NumElements(); ++i) SetValue(x, i, 1 + GetFloat(x, i) / 2);
    SetValue(x, 0, -1);
    SetValue(x, 1, 3);
    samples.push_back({x});
  }
  return samples;
}

}  // namespace loom::graph::test
