// _loom.runtime: models compiled here (loom.compile) or loaded from an artifact (loom.load).
// A model hands each caller an executor of its own from a pool (they share the kernels and
// weights), so Python threads run one model at once; compiling and running release the GIL.
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "bindings.h"
#include "loom/autotune/record.h"
#include "loom/frontend/onnx.h"
#include "loom/graph/compile.h"
#include "loom/runtime/executor.h"
#include "loom/runtime/graph_executor.h"
#include "loom/support/error.h"
#include "loom/vta/compiler/graph.h"

namespace loom::python {
namespace {

using runtime::Executor;
using runtime::NDArray;

// An input or output as Python sees it: name, dtype and shape (None for a size only a run
// knows), and the signature text ("(1, n, 768)") for messages.
struct TensorInfo {
  std::string name;
  std::optional<std::string> dtype;
  std::optional<std::vector<std::optional<int64_t>>> shape;
};

struct CompileArgs {
  std::string target = "llvm";
  int opt_level = 3;
  std::map<std::string, std::vector<int64_t>> input_shapes;
  std::string records;
  bool shipped_records = true;
  std::string precision = "float32";
  std::string executor = "auto";
};

class Model {
 public:
  Model(runtime::LoadedModel loaded, std::optional<graph::CompiledModel> compiled,
        std::string artifact_path)
      : loaded_(std::move(loaded)),
        compiled_(std::move(compiled)),
        artifact_path_(std::move(artifact_path)) {
    std::unique_ptr<Executor> first = loaded_.NewExecutor();
    for (int i = 0; i < first->NumInputs(); ++i) {
      std::vector<std::optional<int64_t>> shape;
      for (int64_t d : first->InputShape(i))
        shape.push_back(d < 0 ? std::nullopt : std::optional(d));
      inputs_.push_back({first->InputName(i), first->InputDtype(i).str(), shape});
    }
    auto* graph = dynamic_cast<runtime::GraphExecutor*>(first.get());
    for (int i = 0; i < first->NumOutputs(); ++i) {
      TensorInfo info{first->OutputName(i), std::nullopt, std::nullopt};
      if (graph != nullptr) {  // the VM's outputs take their types when it runs
        info.dtype = graph->OutputDtype(i).str();
        std::vector<std::optional<int64_t>> shape;
        for (int64_t d : graph->OutputShape(i)) shape.push_back(d);
        info.shape = shape;
      }
      outputs_.push_back(info);
    }
    idle_.push_back(std::move(first));
  }

  const char* executor_kind() const { return loaded_.kind(); }
  const std::vector<TensorInfo>& inputs() const { return inputs_; }
  const std::vector<TensorInfo>& outputs() const { return outputs_; }

  // Runs with `inputs` (every input once, by name) on `threads` threads (0: all): the outputs,
  // copied to arrays of their own. Called without the GIL.
  std::vector<NDArray> Run(const std::vector<std::pair<std::string, NDArray>>& inputs,
                           int threads) {
    Lease lease(*this, inputs, threads);
    lease->Run();
    std::vector<NDArray> outputs;
    for (int i = 0; i < lease->NumOutputs(); ++i) {
      outputs.push_back(lease->GetOutput(i).CopyTo(runtime::kHostDevice));
    }
    return outputs;
  }

  // Each of `repeat` runs' wall time in seconds, after `warmup` runs. Called without the GIL.
  std::vector<double> Time(const std::vector<std::pair<std::string, NDArray>>& inputs, int warmup,
                           int repeat, int threads) {
    LOOM_CHECK_USER(repeat >= 1 && warmup >= 0)
        << "benchmark: repeat must be at least 1 and warmup at least 0, got repeat=" << repeat
        << " warmup=" << warmup;
    Lease lease(*this, inputs, threads);
    return runtime::TimeRuns(*lease, warmup, repeat);
  }

  // One run keeping every kernel's output: (kernel name, which of the kernel's outputs, how
  // many it has, the value), in execution order. The graph executor's only (shapes fixed).
  std::vector<std::tuple<std::string, int, int, NDArray>> Intermediates(
      const std::vector<std::pair<std::string, NDArray>>& inputs) {
    Lease lease(*this, inputs, 0);
    auto* graph = dynamic_cast<runtime::GraphExecutor*>(lease.get());
    LOOM_CHECK_USER(graph != nullptr)
        << "per-layer outputs need a model run by the graph executor (every shape fixed); this "
        << "one runs on the virtual machine: compile it with input_shapes binding every "
        << "symbolic dimension (or executor=\"graph\")";
    std::vector<std::tuple<std::string, int, int, NDArray>> values;
    for (runtime::GraphExecutor::Intermediate& i : graph->RunKeepingIntermediates()) {
      const runtime::GraphKernel& kernel = graph->model().kernels()[i.kernel];
      const auto first_output = kernel.args.end() - kernel.num_outputs;
      const auto position = std::find(first_output, kernel.args.end(), i.entry) - first_output;
      values.emplace_back(kernel.name, static_cast<int>(position), kernel.num_outputs, i.value);
    }
    return values;
  }

  void Export(const std::string& path) const {
    if (compiled_) {
      graph::ExportModel(*compiled_, path);
      return;
    }
    std::error_code error;
    if (std::filesystem::equivalent(artifact_path_, path, error)) return;
    std::filesystem::copy_file(artifact_path_, path,
                               std::filesystem::copy_options::overwrite_existing, error);
    LOOM_CHECK_USER(!error) << "export('" << path << "'): cannot copy the artifact '"
                            << artifact_path_ << "': " << error.message();
  }

 private:
  // An executor of the pool, for one caller, with the inputs set; back to the pool at the end.
  class Lease {
   public:
    Lease(Model& model, const std::vector<std::pair<std::string, NDArray>>& inputs, int threads)
        : model_(model) {
      {
        std::lock_guard<std::mutex> lock(model.mutex_);
        if (!model.idle_.empty()) {
          executor_ = std::move(model.idle_.back());
          model.idle_.pop_back();
        }
      }
      if (!executor_) executor_ = model.loaded_.NewExecutor();
      try {
        model.SetInputs(*executor_, inputs);
        executor_->SetNumThreads(threads);
      } catch (...) {
        Return();
        throw;
      }
    }
    ~Lease() { Return(); }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Executor* operator->() const { return executor_.get(); }
    Executor& operator*() const { return *executor_; }
    Executor* get() const { return executor_.get(); }

   private:
    void Return() {
      std::lock_guard<std::mutex> lock(model_.mutex_);
      model_.idle_.push_back(std::move(executor_));
    }

    Model& model_;
    std::unique_ptr<Executor> executor_;
  };

  // Every call's path: the list of names for a message is made only when one is needed.
  void SetInputs(Executor& executor, const std::vector<std::pair<std::string, NDArray>>& given) {
    std::set<std::string> seen;
    for (const auto& [name, value] : given) {
      bool known = false;
      for (const TensorInfo& input : inputs_) known |= input.name == name;
      LOOM_CHECK_USER(known) << "the model has no input '" << name
                             << "'; its inputs: " << InputNames();
      LOOM_CHECK_USER(seen.insert(name).second) << "input '" << name << "' is given twice";
      executor.SetInput(name, value);
    }
    for (const TensorInfo& input : inputs_) {
      LOOM_CHECK_USER(seen.count(input.name))
          << "input '" << input.name << "' is missing; the model's inputs: " << InputNames()
          << " (pass each by name, or the first positionally)";
    }
  }

  std::string InputNames() const {
    std::string names;
    for (const TensorInfo& input : inputs_) names += (names.empty() ? "" : ", ") + input.name;
    return names;
  }

  runtime::LoadedModel loaded_;
  std::optional<graph::CompiledModel> compiled_;
  std::string artifact_path_;
  std::vector<TensorInfo> inputs_, outputs_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Executor>> idle_;
};

std::unique_ptr<Model> Compile(const frontend::onnx::ImportedModel& imported,
                               const CompileArgs& args) {
  vta::RegisterGraphIntegration();  // --target vta: VTA's operators and graph packing
  graph::CompileOptions options;
  options.opt_level = args.opt_level;
  options.target = args.target;
  options.precision = args.precision;
  options.executor = args.executor;
  options.configs = autotune::BestRecords::ForCompile(args.records, Target::Parse(args.target),
                                                      args.shipped_records);
  graph::CompiledModel compiled = graph::Compile(imported.module, options);
  runtime::LoadedModel loaded = graph::MakeLoadedModel(compiled);
  return std::make_unique<Model>(std::move(loaded), std::move(compiled), "");
}

frontend::onnx::ImportOptions ImportOptionsFor(const CompileArgs& args) {
  LOOM_CHECK_USER(args.executor == "auto" || args.executor == "graph" || args.executor == "vm")
      << "compile: executor must be \"auto\", \"graph\" or \"vm\", got \"" << args.executor << "\"";
  frontend::onnx::ImportOptions options;
  options.input_shapes = args.input_shapes;
  // Dimensions input_shapes leaves unbound stay symbolic for the VM.
  options.symbolic_dimensions = args.executor != "graph";
  return options;
}

// The importer's warnings, as Python warnings.
void Warn(const std::vector<std::string>& warnings) {
  for (const std::string& warning : warnings) {
    if (PyErr_WarnEx(PyExc_UserWarning, warning.c_str(), 2) != 0) throw nb::python_error();
  }
}

// Inputs or outputs as Python reads them: (name, dtype, shape) tuples.
std::vector<std::tuple<std::string, std::optional<std::string>,
                       std::optional<std::vector<std::optional<int64_t>>>>>
InfoTuples(const std::vector<TensorInfo>& infos) {
  std::vector<std::tuple<std::string, std::optional<std::string>,
                         std::optional<std::vector<std::optional<int64_t>>>>>
      tuples;
  for (const TensorInfo& t : infos) tuples.emplace_back(t.name, t.dtype, t.shape);
  return tuples;
}

std::vector<std::pair<std::string, NDArray>> InputArrays(
    const std::vector<std::pair<std::string, nb::object>>& inputs) {
  std::vector<std::pair<std::string, NDArray>> arrays;
  for (const auto& [name, value] : inputs) {
    arrays.emplace_back(name, ToNDArray(value, "input '" + name + "'"));
  }
  return arrays;
}

}  // namespace

void BindModel(nb::module_& m) {
  nb::module_ runtime = m.def_submodule("runtime", "Compiled models and running them");
  nb::class_<Model>(runtime, "Model")
      .def_prop_ro("executor", &Model::executor_kind)
      .def_prop_ro("inputs", [](const Model& model) { return InfoTuples(model.inputs()); })
      .def_prop_ro("outputs", [](const Model& model) { return InfoTuples(model.outputs()); })
      .def(
          "run",
          [](Model& model, const std::vector<std::pair<std::string, nb::object>>& inputs,
             int threads) {
            std::vector<std::pair<std::string, NDArray>> arrays = InputArrays(inputs);
            nb::gil_scoped_release release;
            return model.Run(arrays, threads);
          },
          nb::arg("inputs"), nb::arg("threads") = 0)
      .def(
          "time",
          [](Model& model, const std::vector<std::pair<std::string, nb::object>>& inputs,
             int warmup, int repeat, int threads) {
            std::vector<std::pair<std::string, NDArray>> arrays = InputArrays(inputs);
            nb::gil_scoped_release release;
            return model.Time(arrays, warmup, repeat, threads);
          },
          nb::arg("inputs"), nb::arg("warmup"), nb::arg("repeat"), nb::arg("threads"))
      .def(
          "intermediates",
          [](Model& model, const std::vector<std::pair<std::string, nb::object>>& inputs) {
            std::vector<std::pair<std::string, NDArray>> arrays = InputArrays(inputs);
            nb::gil_scoped_release release;
            return model.Intermediates(arrays);
          },
          nb::arg("inputs"))
      .def("export", &Model::Export, nb::arg("path"), nb::call_guard<nb::gil_scoped_release>());

  runtime.def(
      "compile",
      [](nb::handle model, const std::string& target, int opt_level,
         const std::map<std::string, std::vector<int64_t>>& input_shapes,
         const std::string& records, bool shipped_records, const std::string& precision,
         const std::string& executor) {
        CompileArgs args{target,          opt_level, input_shapes, records,
                         shipped_records, precision, executor};
        // A serialized ModelProto (bytes) or the path of one; read and imported without the GIL.
        const bool serialized = nb::isinstance<nb::bytes>(model);
        const std::string source = serialized ? std::string(nb::cast<nb::bytes>(model).c_str(),
                                                            nb::cast<nb::bytes>(model).size())
                                              : nb::cast<std::string>(model);
        frontend::onnx::ImportedModel imported;
        {
          nb::gil_scoped_release release;
          const frontend::onnx::ImportOptions options = ImportOptionsFor(args);
          imported = serialized ? frontend::onnx::ImportBytes(source, "", options)
                                : frontend::onnx::ImportFile(source, options);
        }
        Warn(imported.warnings);
        nb::gil_scoped_release release;
        return Compile(imported, args);
      },
      nb::arg("model"), nb::arg("target"), nb::arg("opt_level"), nb::arg("input_shapes"),
      nb::arg("records"), nb::arg("shipped_records"), nb::arg("precision"), nb::arg("executor"),
      nb::sig("def compile(model: str | bytes, target: str, opt_level: int, "
              "input_shapes: dict[str, list[int]], records: str, shipped_records: bool, "
              "precision: str, executor: str) -> Model"));
  runtime.def(
      "load",
      [](const std::string& path) {
        return std::make_unique<Model>(runtime::LoadedModel::Load(path), std::nullopt, path);
      },
      nb::arg("path"), nb::call_guard<nb::gil_scoped_release>());
}

}  // namespace loom::python
