// `loom run model.so --input name=x.npy ... --output-dir out/`: one inference of a compiled
// model on inputs from .npy files; each output is written as out/<output name>.npy and
// summarized (dtype, shape, first values) on stdout.
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cli_common.h"
#include "loom/runtime/graph_executor.h"
#include "model_commands.h"
#include "rpc_commands.h"

namespace loom::cli {
namespace {

struct RunCommandOptions {
  std::string model_path;
  std::vector<std::string> inputs;
  std::string output_dir;
  std::optional<int> threads;
  int values_shown = 8;
  std::string vta_config;
  RemoteOptions remote;
};

// One file name per output, from its name: distinct even when two sanitized names collide.
std::vector<std::string> OutputFileNames(const runtime::Executor& executor) {
  std::vector<std::string> files;
  std::set<std::string> taken;
  for (int i = 0; i < executor.NumOutputs(); ++i) {
    std::string stem = SanitizeFileName(executor.OutputName(i));
    std::string file = stem + ".npy";
    for (int suffix = 1; taken.count(file) != 0; ++suffix) {
      file = stem + "_" + std::to_string(suffix) + ".npy";
    }
    taken.insert(file);
    files.push_back(file);
  }
  return files;
}

void RunRun(const RunCommandOptions& options) {
  CheckReadableFile(options.model_path, "model");
  OpenedModel model =
      OpenModel(options.model_path, options.threads, options.vta_config, options.remote);
  if (!model.device.empty()) std::cout << "running on " << model.device << "\n";
  runtime::Executor& executor = *model.executor;
  std::map<std::string, runtime::NDArray> inputs =
      LoadInputs(executor, options.inputs, /*require_all=*/true);
  for (const auto& [name, value] : inputs) executor.SetInput(name, value);
  executor.Run();

  std::filesystem::path dir(options.output_dir);
  if (!options.output_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    LOOM_CHECK_USER(!ec && std::filesystem::is_directory(dir))
        << "--output-dir " << options.output_dir << ": cannot create the directory"
        << (ec ? ": " + ec.message() : "");
  }
  std::vector<std::string> files = OutputFileNames(executor);
  for (int i = 0; i < executor.NumOutputs(); ++i) {
    runtime::NDArray output = executor.GetOutput(i);
    std::cout << executor.OutputName(i) << ": " << output.dtype() << " "
              << ShapeText(output.Shape()) << " " << FirstValuesText(output, options.values_shown);
    if (!options.output_dir.empty()) {
      std::string path = (dir / files[i]).string();
      output.SaveNpy(path);
      std::cout << " -> " << path;
    }
    std::cout << "\n";
  }
}

}  // namespace

void AddRunCommand(CLI::App& app) {
  auto options = std::make_shared<RunCommandOptions>();
  CLI::App* command = app.add_subcommand("run", "Run a compiled model once on .npy inputs");
  command->footer(
      "Every model input must be given as NAME=FILE.npy, with the dtype and shape the model "
      "takes (`loom inspect model.so` lists them; a model of symbolic dimensions, run by the "
      "virtual machine, takes any size there, inputs sharing a symbol agreeing). Each output is "
      "printed with its first "
      "values and, with --output-dir, written there as <output name>.npy (characters other "
      "than letters, digits, '.', '-' and '_' in the name become '_').\n\n"
      "With --rpc HOST:PORT (or --tracker and --device-key) the model is uploaded to a `loom rpc "
      "server` and run there; inputs and outputs travel with it.\n\n"
      "Example: loom run resnet18.so --input input=image.npy --output-dir out/\n"
      "         loom run resnet18-arm.so --rpc 127.0.0.1:9090 --input input=image.npy\n");
  command->add_option("model", options->model_path, "Compiled model (.so from loom compile)")
      ->required();
  command->add_option("-i,--input", options->inputs, "NAME=FILE.npy: a model input; repeatable");
  command->add_option("-o,--output-dir", options->output_dir,
                      "Directory to write each output to as <name>.npy (created if missing)");
  command
      ->add_option("--threads", options->threads,
                   "Threads of the runtime's pool (default: LOOM_NUM_THREADS, else one per "
                   "physical core)")
      ->check(CLI::Range(1, 4096));
  command->add_option("--values", options->values_shown, "How many values of each output to print")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  command->add_option("--vta-config", options->vta_config,
                      "The VTA device's configuration (JSON) for a model compiled for VTA; "
                      "default: the default configuration (vta/default_config.json)");
  AddRemoteOptions(*command, options->remote);
  command->callback([options] { RunRun(*options); });
}

}  // namespace loom::cli
