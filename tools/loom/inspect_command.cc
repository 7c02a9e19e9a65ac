// `loom inspect model.onnx|model.so`: what a model holds. For an ONNX model: its producer,
// opset, inputs and outputs, operator counts and (with --opt-level) the kernels a compile
// fuses it into. For a compiled model: its target, inputs and outputs, the kernels in
// execution order, the memory plan and the weights.
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli_common.h"
#include "loom/frontend/onnx.h"
#include "loom/graph/compile.h"
#include "loom/runtime/graph_executor.h"
#include "model_commands.h"

namespace loom::cli {
namespace {

struct InspectCommandOptions {
  std::string model_path;
  std::vector<std::string> input_shapes;
  std::optional<int> opt_level;
  std::string target = "llvm";
};

// "float32 1x3x224x224" for a tensor of static shape, the type's own text otherwise.
std::string TypeText(const graph::Type& type) {
  if (type.is_tensor()) {
    if (std::optional<std::vector<int64_t>> shape = type.ConstShape()) {
      return type.dtype().str() + " " + ShapeText(*shape);
    }
  }
  return type.str();
}

void PrintValue(const std::string& name, const std::string& description) {
  std::printf("  %-24s %s\n", name.c_str(), description.c_str());
}

void PrintIO(const runtime::GraphModel& model, const std::vector<runtime::GraphIO>& values) {
  for (const runtime::GraphIO& value : values) {
    const runtime::GraphEntry& entry = model.entries()[value.entry];
    PrintValue(value.name, entry.dtype.str() + " " + ShapeText(entry.shape));
  }
}

// The kernels in execution order with the graph nodes each runs, the memory plan and the
// weights: what a compile made of the model.
void PrintPlan(const runtime::GraphModel& model) {
  std::printf("kernels, in execution order (%zu):\n", model.kernels().size());
  for (size_t k = 0; k < model.kernels().size(); ++k) {
    const runtime::GraphKernel& kernel = model.kernels()[k];
    std::string nodes;
    for (const std::string& node : kernel.nodes) nodes += (nodes.empty() ? "" : ", ") + node;
    std::printf("  %4zu  %s  [%s]\n", k, kernel.func.c_str(), nodes.c_str());
  }
  int64_t planned = 0;
  for (size_t bytes : model.storages()) planned += static_cast<int64_t>(bytes);
  std::printf("memory plan: %s in %zu slots\n", BytesText(planned).c_str(),
              model.storages().size());
  std::printf("weights: %s in %zu tensors\n", BytesText(WeightBytes(model)).c_str(),
              model.params().size());
}

void InspectOnnx(const InspectCommandOptions& options) {
  frontend::onnx::ImportOptions import_options;
  import_options.input_shapes = ParseInputShapes(options.input_shapes);
  frontend::onnx::ImportedModel model =
      frontend::onnx::ImportFile(options.model_path, import_options);
  const graph::Function& main = model.module.main();
  std::printf("%s: ONNX model, producer %s, opset %lld\n", options.model_path.c_str(),
              model.producer.empty() ? "(none)" : ("'" + model.producer + "'").c_str(),
              static_cast<long long>(model.opset));
  std::printf("inputs:\n");
  for (const graph::Var& param : main->params) PrintValue(param->name_hint, TypeText(param.type()));
  std::printf("outputs:\n");
  const graph::Type& result = main->body.type();
  std::vector<graph::Type> results = result.is_tuple() ? result.fields() : std::vector{result};
  const std::vector<std::string>& names = model.module.output_names();
  for (size_t i = 0; i < results.size(); ++i) {
    bool named = i < names.size() && !names[i].empty();
    PrintValue(named ? names[i] : "output" + std::to_string(i), TypeText(results[i]));
  }
  int nodes = 0;
  for (const auto& [op, count] : model.op_counts) nodes += count;
  std::printf("operators (%d nodes, %zu types):\n", nodes, model.op_counts.size());
  for (const auto& [op, count] : model.op_counts) PrintValue(op, std::to_string(count));

  if (!options.opt_level) return;
  graph::CompileOptions compile_options;
  compile_options.opt_level = *options.opt_level;
  compile_options.target = options.target;
  graph::CompiledModel compiled = graph::Compile(model.module, compile_options);
  std::printf("compiled at -O%d for target '%s':\n", *options.opt_level, options.target.c_str());
  PrintPlan(*graph::MakeGraphModel(compiled));
}

void InspectCompiled(const InspectCommandOptions& options) {
  LOOM_CHECK_USER(options.input_shapes.empty() && !options.opt_level)
      << "--input-shape and --opt-level apply to ONNX models; '" << options.model_path
      << "' is a compiled model, whose shapes and kernels are fixed";
  std::shared_ptr<const runtime::GraphModel> model = runtime::LoadModel(options.model_path);
  std::printf("%s: compiled model\ntarget: %s\n", options.model_path.c_str(),
              model->target().c_str());
  std::printf("inputs:\n");
  PrintIO(*model, model->inputs());
  std::printf("outputs:\n");
  PrintIO(*model, model->outputs());
  PrintPlan(*model);
}

void RunInspect(const InspectCommandOptions& options) {
  CheckReadableFile(options.model_path, "model");
  if (IsSharedLibrary(options.model_path)) {
    InspectCompiled(options);
  } else {
    InspectOnnx(options);
  }
}

}  // namespace

void AddInspectCommand(CLI::App& app) {
  auto options = std::make_shared<InspectCommandOptions>();
  CLI::App* command =
      app.add_subcommand("inspect", "Show what an ONNX model or a compiled model holds");
  command->footer(
      "An ONNX model: producer, opset, inputs and outputs, and how many nodes of each "
      "operator it has; with --opt-level, also the kernels a compile at that level fuses it "
      "into and their memory plan (nothing is written). A compiled model (a shared library "
      "from loom compile): target, inputs and outputs, kernels in execution order with the "
      "graph nodes each runs, the planned memory and the weights. The kind is read from the "
      "file's contents, not its name.\n\n"
      "Example: loom inspect bert.onnx --input-shape input_ids=1x128 --opt-level 3\n");
  command->add_option("model", options->model_path, "ONNX model (.onnx) or compiled model (.so)")
      ->required();
  command->add_option("--input-shape", options->input_shapes,
                      "NAME=DxDx...: the shape of an ONNX model's input (required for each "
                      "input with a symbolic dimension); repeatable");
  command
      ->add_option("--opt-level", options->opt_level,
                   "Also compile the ONNX model at this level (0-3) and list its kernels")
      ->check(CLI::Range(0, 3));
  command
      ->add_option("--target", options->target,
                   "Code generation target of that compile (with --opt-level)")
      ->capture_default_str();
  command->callback([options] { RunInspect(*options); });
}

}  // namespace loom::cli
