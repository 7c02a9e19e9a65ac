// Checking and timing one candidate kernel, wherever it runs: the same steps for a child
// process here and for a remote device (KernelHost says where). The builder writes the
// kernel's description beside its library; the runner allocates its buffers (inputs random from
// a fixed sequence, the rest zeros), runs the setup, the timed step and the finish, compares the
// result with the default point's (the reference) and times the timed step.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "loom/autotune/measure.h"
#include "loom/graph/tuning.h"
#include "loom/runtime/device_api.h"
#include "loom/runtime/module.h"
#include "loom/runtime/ndarray.h"
#include "loom/runtime/time_evaluator.h"

namespace loom::autotune {

// Where a candidate's kernel runs. Buffers are numbered in the order they are added.
class KernelHost {
 public:
  virtual ~KernelHost() = default;
  virtual void Load(const std::string& library) = 0;
  // A new buffer holding `initial`'s values.
  virtual void Add(const runtime::NDArray& initial) = 0;
  virtual void Call(const std::string& function, const std::vector<size_t>& buffers) = 0;
  // A host copy of a buffer.
  virtual runtime::NDArray Read(size_t buffer) = 0;
  // Seconds per call, one per repeat (runtime::TimeFunction there).
  virtual std::vector<double> Time(const std::string& function, const std::vector<size_t>& buffers,
                                   const runtime::TimeOptions& options) = 0;
  // A simulated device's modelled time since the last call (VTA's simulator); none for real
  // hardware.
  virtual std::optional<double> TakeSimulatedSeconds() { return std::nullopt; }
};

// The kernel's description, beside its library, for the runner.
void WriteDescription(const graph::MeasurableKernel& kernel, const std::string& path);

// Runs, checks and times the kernel of `library` and `description` on `host`. The first result
// of a task is written to `reference` (write_reference); later ones are compared with it.
// Returns the runner's report: "ok <seconds per call>..." or "wrong_result <why>".
std::string CheckAndTime(KernelHost& host, const std::string& library,
                         const std::string& description, const std::string& reference,
                         bool write_reference, const MeasureOptions& options);

// A report ("ok <numbers>..." or "<error kind> <message>") as a result: the numbers are the
// costs (the builder's report carries its seconds the same way).
MeasureResult ParseReport(const std::string& report);

// The buffers and steps in this process, on `device` (configured as `configuration` when the
// device comes in several): the local runner's child.
class LocalKernelHost : public KernelHost {
 public:
  LocalKernelHost(DLDevice device, const std::string& configuration);
  void Load(const std::string& library) override;
  void Add(const runtime::NDArray& initial) override;
  void Call(const std::string& function, const std::vector<size_t>& buffers) override;
  runtime::NDArray Read(size_t buffer) override;
  std::vector<double> Time(const std::string& function, const std::vector<size_t>& buffers,
                           const runtime::TimeOptions& options) override;
  std::optional<double> TakeSimulatedSeconds() override;

 private:
  std::vector<runtime::NDArray> Arguments(const std::vector<size_t>& buffers) const;

  DLDevice device_;
  runtime::DeviceAPI* api_;
  runtime::Module module_;
  std::vector<runtime::NDArray> buffers_;
};

}  // namespace loom::autotune
