// The `loom` commands on models: compile (ONNX to a compiled model), tune, run, bench
// and inspect.
// Each lives in its own file (compile_command.cc, ...); docs/cli.md is their reference.
#pragma once

#include <CLI/CLI.hpp>

namespace loom::cli {

// `loom compile model.onnx -o model.so`: import, graph passes, lowering, codegen, export.
void AddCompileCommand(CLI::App& app);
struct QuantizeCommandOptions;
// --quantize int8 and its options (compile_command.cc), for compile and tune.
void AddQuantizeOptions(CLI::App& command, QuantizeCommandOptions& options);
// `loom tune model.onnx --budget 20m --records tune.jsonl`: schedule search per task.
void AddTuneCommand(CLI::App& app);
// `loom run model.so --input name=x.npy --output-dir out/`: one inference, outputs as .npy.
void AddRunCommand(CLI::App& app);
// `loom bench model.so`: latency over repeated runs, one machine-readable line.
void AddBenchCommand(CLI::App& app);
// `loom inspect model.onnx|model.so`: what a model holds.
void AddInspectCommand(CLI::App& app);

}  // namespace loom::cli
