// Timing a compiled function the way the tuner and a remote device both need it (TVM's
// time_evaluator): several timings, each the mean of enough calls to last a minimum time,
// optionally with some arguments evicted from the caches before every call (a kernel reads
// its weights from memory inside a model).
//
//   TimeOptions options;
//   options.repeat = 5;
//   options.cold_arguments = {1};   // the weights
//   std::vector<double> seconds = TimeFunction(kernel, {input, weights, output}, options);
#pragma once

#include <cstddef>
#include <vector>

#include "loom/runtime/ndarray.h"
#include "loom/runtime/packed_func.h"

namespace loom::runtime {

struct TimeOptions {
  // Calls per timing; 0: as many as last min_repeat_ms, counted from one untimed call (with
  // its eviction, for cold arguments).
  int number = 0;
  int repeat = 3;
  double min_repeat_ms = 40;
  // Positions of arguments to evict from every cache before each call; each call is then
  // timed alone and the times summed.
  std::vector<size_t> cold_arguments;
  // Write over a buffer larger than the caches before each timing.
  bool flush_caches = false;
};

// Seconds per call, one value per repeat. Options out of range (repeat < 1, a cold argument
// position past the arguments) are a loom::Error.
std::vector<double> TimeFunction(const PackedFunc& function, const std::vector<NDArray>& arguments,
                                 const TimeOptions& options);

}  // namespace loom::runtime
