// `loom inspect model.onnx|model.so`: what a model holds. For an ONNX model: its producer,
// opset, inputs and outputs, operator counts and (with --opt-level) the kernels a compile
// fuses it into. For a compiled model (read from the file, its code never loaded): its
// target, inputs and outputs, the kernels in execution order, the memory plan and the
// weights.
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli_common.h"
#include "compiler_commands.h"
#include "loom/runtime/graph_executor.h"
#include "model_commands.h"

namespace loom::cli {
namespace {

void PrintIO(const runtime::GraphModel& model, const std::vector<runtime::GraphIO>& values) {
  for (const runtime::GraphIO& value : values) {
    const runtime::GraphEntry& entry = model.entries()[value.entry];
    PrintValue(value.name, entry.dtype.str() + " " + ShapeText(entry.shape));
  }
}

void InspectCompiled(const InspectCommandOptions& options) {
  LOOM_CHECK_USER(options.input_shapes.empty() && !options.opt_level)
      << "--input-shape and --opt-level apply to ONNX models; '" << options.model_path
      << "' is a compiled model, whose shapes and kernels are fixed";
  // Read from the file, not loaded: inspecting a library runs none of its code.
  if (runtime::IsVmArtifact(options.model_path)) {
    std::shared_ptr<const runtime::VmModel> vm = runtime::DescribeVmModel(options.model_path);
    std::printf("%s: compiled model\ntarget: %s\nprecision: %s\n", options.model_path.c_str(),
                vm->target().c_str(), vm->precision().c_str());
    PrintVmProgram(*vm);
    return;
  }
  std::shared_ptr<const runtime::GraphModel> model = runtime::DescribeModel(options.model_path);
  std::printf("%s: compiled model\ntarget: %s\nprecision: %s\n", options.model_path.c_str(),
              model->target().c_str(), model->precision().c_str());
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
    InspectOnnxInModule(options);
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
