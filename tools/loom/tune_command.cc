// `loom tune model.onnx --budget 20m --records tune.jsonl`: the command's options; the work
// runs in the compiler module (tune_commands.cc).
#include <memory>

#include "compiler_commands.h"
#include "model_commands.h"
#include "rpc_commands.h"

namespace loom::cli {

void AddTuneCommand(CLI::App& app) {
  auto options = std::make_shared<TuneCommandOptions>();
  CLI::App* command =
      app.add_subcommand("tune", "Search the fastest schedule of each tunable kernel of a model");
  command->footer(
      "Finds the model's tuning tasks (each distinct convolution and dense workload, weighted by "
      "how often the model runs it), then measures candidate configurations of each within the "
      "time budget: a cost model (gradient-boosted trees over loop-nest features) proposes them, "
      "each is compiled and timed in a child process and checked against the default. Then (from "
      "85% of the budget on, or once every task is done) a confirmation: each task's 3 best "
      "points and its default are timed 3 more times, interleaved, and their medians stand (a "
      "single run on a shared machine can be "
      "slowed). Every measurement is appended to the records file as it is made; `loom compile "
      "--records` uses the best of each task, a point timed again ranked by its median ahead of "
      "points timed once. One progress line per batch goes to stderr.\n\n"
      "On VTA (--target vta, a model quantized as compile quantizes it: the same --quantize "
      "options) each convolution's tiling is searched, its cost the simulator's cycles at the "
      "configuration's clock.\n\n"
      "With --tracker and --device-key the candidates are measured on a fleet's devices "
      "(docs/rpc.md): built here for --target, checked and timed on every free device of the "
      "key at once.\n\n"
      "Example: loom tune resnet18.onnx --budget 20m --records resnet18.jsonl\n"
      "         loom compile resnet18.onnx --records resnet18.jsonl -o resnet18.so\n");
  command->add_option("model", options->model_path, "ONNX model file (.onnx)")->required();
  command
      ->add_option("--budget", options->budget,
                   "Wall time for the whole search: 90s, 20m, 1h (at least 10s)")
      ->required();
  command
      ->add_option("--records", options->records_path, "Tuning records to append to (JSON lines)")
      ->required();
  command->add_flag("--resume", options->resume,
                    "Count the records already in the file as measured (and learn from them)");
  command
      ->add_option("--target", options->target,
                   "Code generation target (as for compile); records apply to CPUs of the same "
                   "family (Intel, AMD, ...) with the vector instruction sets of float code of "
                   "the one they were measured on")
      ->capture_default_str();
  command
      ->add_option("--tuner", options->tuner,
                   "xgb: the cost-model search; random or grid: for comparison")
      ->check(CLI::IsMember({"xgb", "random", "grid"}))
      ->capture_default_str();
  command
      ->add_option("--trials-per-task", options->trials_per_task,
                   "Measurements per task at most (0: as the budget allows)")
      ->check(CLI::NonNegativeNumber);
  command->add_option("--batch", options->batch_size, "Candidates measured per round")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  command->add_option("--input-shape", options->input_shapes,
                      "NAME=DxDx...: the shape of an input with a symbolic dimension; repeatable");
  AddQuantizeOptions(*command, options->quantization);
  command->add_flag("-q,--quiet", options->quiet, "Do not print a progress line per batch");
  command->add_option("--tracker", options->tracker,
                      "HOST:PORT of a `loom rpc tracker`: measure on its devices of --device-key "
                      "(cross-compiled here for --target), several at once");
  command->add_option("--device-key", options->device_key,
                      "The devices to measure on (with --tracker), e.g. x86-avx512");
  command->add_option("--key", options->key, "The fleet's shared key (with --tracker)");
  command->add_option("--key-file", options->key_file, "File whose first line is the key");
  command
      ->add_option("--devices", options->devices,
                   "Devices at once (with --tracker; 0: every one of the key)")
      ->check(CLI::Range(0, 4096))
      ->capture_default_str();
  command->callback([options] {
    options->key = SharedKey(options->key, options->key_file);
    RunTuneInModule(*options);
  });
}

}  // namespace loom::cli
