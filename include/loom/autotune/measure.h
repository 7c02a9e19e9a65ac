// Measuring candidate configurations of one tuning task: a builder compiles the candidates' kernels
// in parallel child processes, and a runner times each in a child process of its own, one at a
// time (or on remote devices, several at once: RemoteDevices), after checking its result against
// the template's default point. A candidate that fails to
// compile, crashes, hangs or computes something else is recorded with the kind of failure; the
// tuner's process never runs candidate code itself. A target kind's device holds the kernel's
// tensors (configured as the target says, for a device that comes in configurations); on a
// simulated device (runtime::DeviceAPI::TakeSimulatedSeconds: VTA's simulator) the cost is the
// modelled time of one call, which does not vary between runs.
//
//   Measurer measurer(task.workload, Target::Parse("llvm -mcpu=native"), {});
//   std::vector<MeasureResult> results = measurer.Measure({config_a,
//   config_b});
#pragma once

#include <string>
#include <vector>

#include "loom/graph/tuning.h"
#include "loom/target/target.h"
#include "loom/topi/config_space.h"

namespace loom::autotune {

enum class MeasureError {
  kNone,
  kCompileError,  // the template refused the point, or lowering or codegen
                  // failed
  kRuntimeError,  // the kernel returned an error or the process died (a signal)
  kTimeout,       // building or running took longer than allowed
  kWrongResult,   // the result differs from the default point's
};
const char* MeasureErrorName(MeasureError error);
// The inverse of MeasureErrorName; a loom::Error naming the known kinds otherwise.
MeasureError MeasureErrorFromName(const std::string& name);

// Measuring on a fleet of remote devices (`loom rpc tracker`, docs/rpc.md) instead of a child
// process here: the builder cross-compiles here, and each candidate is checked and timed on
// whichever device of `device_key` is free, several at once.
struct RemoteDevices {
  std::string tracker;             // "host:port"; "" measures here
  std::string device_key;          // the devices to ask the tracker for ("aarch64-neon")
  std::string key;                 // the fleet's shared key, if it has one
  int max_devices = 0;             // devices at once; 0: as many as the tracker has of device_key
  double request_timeout_s = 600;  // waiting for a free device
  bool enabled() const { return !tracker.empty(); }
};

struct MeasureOptions {
  int build_parallel = 0;        // builder processes at once; 0: the machine's CPUs
  double build_timeout_s = 120;  // per candidate
  double run_timeout_s = 30;     // per candidate, checking and timing together
  int repeat = 3;                // timings per candidate, each the mean of several calls
  double min_repeat_ms = 40;     // each timing calls the kernel until this much time passed
  bool flush_cache = false;      // write over a buffer larger than the caches before each timing
  // Evict the kernel's weights from every cache before each timed call, and time the calls one
  // by one. In a model a kernel reads its weights once per inference, after the other kernels
  // have run, so they come from memory; timed with its weights left in L2 by its previous call,
  // a kernel measured 30-40% faster than in the model (and a tiling that reads more weight
  // bytes, such as Winograd's, looked better than it is).
  bool cold_weights = true;
  // The result may differ from the default point's by this much, relative to its largest magnitude
  // (summation orders differ between tilings and algorithms).
  double tolerance = 1e-3;
  RemoteDevices remote{};
};

struct MeasureResult {
  MeasureError error = MeasureError::kNone;
  std::string message;        // what failed, for a failure
  std::vector<double> costs;  // seconds per call, one per repeat
  double build_seconds = 0;
  // The median of costs (infinity for a failure).
  double cost() const;
};

class Measurer {
 public:
  // Checks that the workload's template exists. Intermediate files live in a temporary folder
  // removed with the Measurer.
  Measurer(graph::TuningWorkload workload, Target target, MeasureOptions options = {});
  ~Measurer();
  Measurer(const Measurer&) = delete;
  Measurer& operator=(const Measurer&) = delete;

  // One result per config, in order. The first call also runs the default point to have the
  // reference result; a default point that fails is a loom::Error (the task cannot be tuned).
  std::vector<MeasureResult> Measure(const std::vector<topi::Config>& configs);

  // Each config measured `rounds` times, built once, the rounds interleaved: round r runs the
  // configs in turn starting at the r-th, so that a slow spell of a shared host (seconds or
  // more with every 2-thread kernel at half speed) falls on several configs' runs rather
  // than on all of one config's. results[config][round].
  std::vector<std::vector<MeasureResult>> MeasureRounds(const std::vector<topi::Config>& configs,
                                                        int rounds);

  // The default point's measurement, once the first Measure has made it.
  bool has_reference() const { return have_reference_; }
  const MeasureResult& reference() const { return reference_; }

 private:
  struct Built;
  std::vector<Built> Build(const std::vector<topi::Config>& configs);
  // Each built kernel run, checked and timed (a build failure stays the result): one at a time
  // in child processes here, or on the remote devices at once.
  std::vector<MeasureResult> RunAll(const std::vector<const Built*>& built, bool reference);
  MeasureResult Run(const Built& built, bool reference);
  void Discard(const Built& built);
  void MeasureReference();

  graph::TuningWorkload workload_;
  Target target_;
  DLDevice device_;            // where the kernels' tensors live: the target kind's device
  std::string configuration_;  // the device's configuration the target compiles for
  MeasureOptions options_;
  std::string folder_;
  bool have_reference_ = false;
  MeasureResult reference_;
  int serial_ = 0;
};

}  // namespace loom::autotune
