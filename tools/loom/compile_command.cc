// `loom compile model.onnx -o model.so`: the ONNX importer, graph::Compile and ExportModel,
// with each stage's wall time on stderr as it finishes (a ResNet-50 compile takes seconds).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cli_common.h"
#include "loom/frontend/onnx.h"
#include "loom/graph/compile.h"
#include "model_commands.h"

namespace loom::cli {
namespace {

struct CompileCommandOptions {
  std::string model_path;
  std::string output_path;
  std::string target = "llvm";
  int opt_level = 3;
  std::vector<std::string> input_shapes;
  bool quiet = false;
};

// Prints "<stage>  <seconds> s" lines on stderr unless quiet; `Stage` takes the time since
// the previous stage (or since construction).
class ProgressPrinter {
 public:
  explicit ProgressPrinter(bool quiet) : quiet_(quiet) {}
  void Stage(const std::string& stage) {
    auto now = std::chrono::steady_clock::now();
    Print(stage, std::chrono::duration<double>(now - last_).count());
    last_ = now;
  }
  // A stage timed elsewhere (graph::Compile's callback), ending now.
  void Print(const std::string& stage, double seconds) {
    last_ = std::chrono::steady_clock::now();
    if (quiet_) return;
    std::fprintf(stderr, "%-13s %7.2f s\n", stage.c_str(), seconds);
  }
  double TotalSeconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  bool quiet_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_ = start_;
};

void RunCompile(const CompileCommandOptions& options) {
  CheckReadableFile(options.model_path, "model");
  LOOM_CHECK_USER(!IsSharedLibrary(options.model_path))
      << "model '" << options.model_path
      << "' is already a compiled model (a shared library); compile takes an ONNX model";
  std::filesystem::path output_dir = std::filesystem::path(options.output_path).parent_path();
  LOOM_CHECK_USER(output_dir.empty() || std::filesystem::is_directory(output_dir))
      << "-o " << options.output_path << ": the directory '" << output_dir.string()
      << "' does not exist";

  frontend::onnx::ImportOptions import_options;
  import_options.input_shapes = ParseInputShapes(options.input_shapes);
  ProgressPrinter progress(options.quiet);
  frontend::onnx::ImportedModel imported =
      frontend::onnx::ImportFile(options.model_path, import_options);
  progress.Stage("import");

  graph::CompileOptions compile_options;
  compile_options.opt_level = options.opt_level;
  compile_options.target = options.target;
  graph::CompiledModel compiled = graph::Compile(
      imported.module, compile_options,
      [&progress](const std::string& stage, double seconds) { progress.Print(stage, seconds); });
  graph::ExportModel(compiled, options.output_path);
  progress.Stage("export");

  std::set<std::string> distinct(compiled.kernel_names.begin(), compiled.kernel_names.end());
  int64_t weights = WeightBytes(*graph::MakeGraphModel(compiled));
  std::cout << "compiled " << options.model_path << " -> " << options.output_path << ": "
            << compiled.kernel_names.size() << " kernel calls (" << distinct.size()
            << " distinct kernels), planned memory " << BytesText(compiled.memory.planned_bytes)
            << " in " << compiled.memory.num_storages << " slots (lower bound "
            << BytesText(compiled.memory.lower_bound_bytes) << "), weights " << BytesText(weights)
            << ", " << std::fixed << std::setprecision(1) << progress.TotalSeconds() << " s\n";
}

}  // namespace

void AddCompileCommand(CLI::App& app) {
  auto options = std::make_shared<CompileCommandOptions>();
  CLI::App* command = app.add_subcommand("compile", "Compile an ONNX model into a shared library");
  command->footer(
      "Imports the ONNX model, optimizes its graph, generates a kernel for each fused group of "
      "operators and writes one shared library holding the kernels, the execution graph and "
      "the weights; `loom run` and `loom bench` load it, as does runtime::LoadModel. Progress "
      "with each stage's time goes to stderr, a summary line to stdout.\n\n"
      "Example: loom compile resnet18.onnx -o resnet18.so --input-shape input=1x3x224x224\n");
  command->add_option("model", options->model_path, "ONNX model file (.onnx)")->required();
  command->add_option("-o,--output", options->output_path, "Compiled model to write (.so)")
      ->required();
  command
      ->add_option("--target", options->target,
                   "Code generation target: \"llvm\" (this CPU) or \"llvm -mcpu=NAME\"")
      ->capture_default_str();
  command
      ->add_option("--opt-level", options->opt_level,
                   "0: one kernel per operator; 1: fusion; 2: also constant folding and "
                   "inference simplification; 3: also blocked layouts")
      ->check(CLI::Range(0, 3))
      ->capture_default_str();
  command->add_option("--input-shape", options->input_shapes,
                      "NAME=DxDx...: the shape of an input (required for each input with a "
                      "symbolic dimension, such as a batch size); repeatable");
  command->add_flag("-q,--quiet", options->quiet, "Do not print the progress of each stage");
  command->callback([options] { RunCompile(*options); });
}

}  // namespace loom::cli
