// What runs a compiled model, whichever executor its artifact names: the graph executor
// (a static memory plan, every shape fixed when compiling) or the virtual machine (shapes
// computed at run time from the inputs' sizes). `loom run`, `loom bench` and the C API take
// a model through this interface.
//
//   std::unique_ptr<runtime::Executor> exec = runtime::LoadExecutor("model.so");
//   exec->SetInput("tokens", tokens);   // any length the model's signature allows
//   exec->Run();
//   NDArray logits = exec->GetOutput(0);
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "loom/runtime/data_type.h"
#include "loom/runtime/ndarray.h"

namespace loom::runtime {

class Executor {
 public:
  virtual ~Executor() = default;

  // "graph" or "vm".
  virtual const char* kind() const = 0;
  virtual int NumInputs() const = 0;
  virtual int NumOutputs() const = 0;
  virtual const std::string& InputName(int i) const = 0;
  virtual const std::string& OutputName(int i) const = 0;
  virtual DataType InputDtype(int i) const = 0;
  // The input's shape, -1 for a dimension known only at run time.
  virtual std::vector<int64_t> InputShape(int i) const = 0;
  // The input's shape as the model declares it: "(1, 3, 224, 224)", "(1, n, 768)".
  virtual std::string InputSignature(int i) const = 0;
  // Copies `value` into the input; its name, dtype and shape are checked against the model,
  // with a message naming the input, what it expects and what it got.
  virtual void SetInput(const std::string& name, const NDArray& value) = 0;
  virtual void SetInput(int index, const NDArray& value) = 0;
  virtual void Run() = 0;
  // The threads the kernels run on: 1 to the runtime pool's, or 0 for all of them.
  virtual void SetNumThreads(int num_threads) = 0;
  // The output of the last Run, valid until the next Run (CopyTo to keep).
  virtual NDArray GetOutput(int index) const = 0;

  // Debug: per-kernel median wall time over `repeat` runs, in execution order.
  struct KernelTime {
    std::string func;
    std::string name;
    double ms;
  };
  virtual std::vector<KernelTime> ProfileKernels(int repeat) = 0;
};

// Runs the executor `warmup` times, then times `repeat` runs: each run's wall time in seconds.
std::vector<double> TimeRuns(Executor& executor, int warmup, int repeat);

class GraphModel;
class VmModel;

// A model loaded once (kernels and weights) that any number of executors share, each with
// memory of its own: one executor per thread runs the model on several threads at once.
class LoadedModel {
 public:
  // The model library at `path` (written by graph::ExportModel) for the executor its
  // artifact names. The file is checked as LoadModel checks it.
  static LoadedModel Load(const std::string& path);
  explicit LoadedModel(std::shared_ptr<const GraphModel> graph) : graph_(std::move(graph)) {}
  explicit LoadedModel(std::shared_ptr<const VmModel> vm) : vm_(std::move(vm)) {}

  // "graph" or "vm".
  const char* kind() const { return graph_ ? "graph" : "vm"; }
  std::unique_ptr<Executor> NewExecutor() const;

 private:
  std::shared_ptr<const GraphModel> graph_;
  std::shared_ptr<const VmModel> vm_;
};

// LoadedModel::Load(path).NewExecutor().
std::unique_ptr<Executor> LoadExecutor(const std::string& path);

}  // namespace loom::runtime
