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
#include "compiler_commands.h"
#include "model_commands.h"

namespace loom::cli {

void AddQuantizeOptions(CLI::App& command, QuantizeCommandOptions& options) {
  command
      .add_option("--quantize", options.quantize,
                  "int8: quantize the convolutions (groups 1) and dense layers to int8 before "
                  "compiling, calibrated on --calibration (uint8 data with a scale and zero "
                  "point per tensor, int8 weights with a scale per output channel); the "
                  "report of each layer's rounding error goes to stderr")
      ->check(CLI::IsMember({"int8"}));
  command.add_option("--calibration", options.calibration,
                     "NAME=FILE.npy: calibration samples of input NAME, stacked along a first "
                     "axis ([S, ...the input's shape]) or one sample of its shape; one per "
                     "input, with --quantize");
  command
      .add_option("--calibration-method", options.calibration_method,
                  "With --quantize: how each layer's data range is chosen from the values it "
                  "takes on the samples: max (all of them, the default) or percentile (all "
                  "but the rarest, --percentile; outliers then saturate)")
      ->check(CLI::IsMember({"max", "percentile"}));
  command
      .add_option("--percentile", options.percentile,
                  "With --calibration-method percentile: the share of each layer's values "
                  "kept in range, in percent (default 99.999; half of the rest is left out "
                  "at each end)")
      ->check(CLI::Range(0.0, 100.0));
  command
      .add_option("--quantize-scheme", options.quantize_scheme,
                  "With --quantize: affine (the default; like ONNX Runtime's quantizer: uint8 "
                  "data with a zero point, a weight scale per output channel, float between "
                  "the quantized layers) or power-of-two (the form integer-only accelerators "
                  "such as VTA compute: int8 values with power-of-two scales and no zero "
                  "points, integer arithmetic between the layers, requantized by shift and "
                  "clip)")
      ->check(CLI::IsMember({"affine", "power-of-two"}));
  command
      .add_option("--keep-float", options.keep_float,
                  "With --quantize: layers to leave in float, by the names the quantize report "
                  "gives them (the model's node names; repeat the option or separate names "
                  "with commas)")
      ->delimiter(',');
  command.add_flag("--quantize-every-layer", options.quantize_every_layer,
                   "With --quantize int8: quantize even the layers whose rounding error is an "
                   "outlier while they do a small share of the work (by default they stay "
                   "float: they would cost more accuracy than they save time)");
  command.add_option("--global-scale", options.global_scale,
                     "With --quantize-scheme power-of-two: every activation on the one scale "
                     "S/128 (S a power of two, such as 8) instead of its calibrated one");
}

void AddCompileCommand(CLI::App& app) {
  auto options = std::make_shared<CompileCommandOptions>();
  CLI::App* command = app.add_subcommand("compile", "Compile an ONNX model into a shared library");
  command->footer(
      "Imports the ONNX model, optimizes its graph, generates a kernel for each fused group of "
      "operators and writes one shared library holding the kernels, the execution graph and "
      "the weights; `loom run` and `loom bench` load it, as does runtime::LoadModel. Progress "
      "with each stage's time goes to stderr, a summary line to stdout.\n\n"
      "Example: loom compile resnet18.onnx -o resnet18.so --input-shape input=1x3x224x224\n"
      "Bare metal: loom compile digits.onnx --target cortex-m4 --executor aot --runtime crt "
      "-o digits_c/\n"
      "int8: loom compile digits.onnx --quantize int8 --calibration digits=samples.npy -o "
      "digits_int8.so\n");
  command->add_option("model", options->model_path, "ONNX model file (.onnx)")->required();
  command->add_option("-o,--output", options->output_path, "Compiled model to write (.so), or with --executor aot the folder of C sources")
      ->required();
  command
      ->add_option("--target", options->target,
                   "Code generation target: \"llvm\" (this CPU), \"llvm -mcpu=NAME\", or a tag "
                   "(\"x86-64-avx512\", \"x86-64-avx2\")")
      ->capture_default_str();
  command
      ->add_option("--opt-level", options->opt_level,
                   "0: one kernel per operator; 1: fusion; 2: also constant folding and "
                   "inference simplification; 3: also blocked layouts")
      ->check(CLI::Range(0, 3))
      ->capture_default_str();
  command->add_option("--input-shape", options->input_shapes,
                      "NAME=DxDx...: the shape of an input, binding its symbolic dimensions "
                      "(such as a batch size); those left unbound stay symbolic, for the "
                      "virtual machine; repeatable");
  command->add_option("--dynamic-buckets", options->dynamic_buckets,
                      "NAME=SIZE,SIZE,...: sizes of a symbolic dimension to compile "
                      "specialized kernels for (seq=16,64,128); the virtual machine runs them "
                      "when the inputs have those sizes, the general kernels otherwise; "
                      "repeatable (every combination is compiled, at most 64)");
  command->add_option("--constraint", options->size_constraints,
                      "'NAME OP N' or 'NAME % M OP N' (OP: ==, <, <=, >, >=): a constraint on "
                      "a symbolic dimension ('seq % 8 == 0', 'seq <= 512'); inputs violating "
                      "it are refused before the model runs; an upper bound also plans the "
                      "memory of the tensors it sizes, at that bound; repeatable");
  command
      ->add_option("--max-loop-iterations", options->max_loop_iterations,
                   "The most iterations an ONNX Loop or Scan is unrolled to at import, and "
                   "the most one run at run time may run; a loop that does not end within "
                   "them is an error naming its node (at import, or when it runs)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))
      ->capture_default_str();
  command
      ->add_option("--executor", options->executor,
                   "What runs the model. auto (the default): the virtual machine when an "
                   "input keeps a symbolic dimension (one --input-shape does not bind), else "
                   "graph; graph: the graph executor (every shape fixed, one static memory "
                   "plan); vm: the virtual machine (shapes computed at run time from the "
                   "inputs); aot: C sources with one entry point, for --runtime crt")
      ->check(CLI::IsMember({"auto", "graph", "vm", "aot"}))
      ->capture_default_str();
  command
      ->add_option("--runtime", options->runtime,
                   "cpp: libloom_runtime (the default); crt: the micro runtime, no OS needed "
                   "(with --executor aot and a c target; -o names a folder)")
      ->check(CLI::IsMember({"cpp", "crt"}))
      ->capture_default_str();
  command->add_option("--name", options->name,
                      "With --executor aot: the prefix of the entry point <name>_run and of "
                      "the files (default: the model file's name)");
  command->add_option("--records", options->records_path,
                      "Tuning records (JSON lines from `loom tune`): each tuned kernel takes its "
                      "fastest record for this target; the others keep their defaults");
  command->add_flag("!--no-shipped-records", options->shipped_records,
                    "Do not use the tuning records shipped with Loom (used by default for the "
                    "kernels they cover, where they apply to the target's CPU)");
  AddQuantizeOptions(*command, options->quantization);
  command
      ->add_option("--precision", options->precision,
                   "bf16: the convolutions (groups 1), dense layers and matmuls multiply "
                   "bfloat16 operands and sum in float32 (on AMX tiles or AVX-512 BF16 where "
                   "the CPU has them, on tensor cores of cuda -arch=sm_80 and up, by conversion "
                   "elsewhere); fp16: the same with float16 operands (tensor cores of sm_70 and "
                   "up); the products making the outputs (the logits) and everything else stay "
                   "float32, as the inputs and outputs do. Default float32")
      ->check(CLI::IsMember({"float32", "bf16", "fp16"}));
  command->add_option("--memory-limit", options->memory_limit,
                      "The most memory the model's tensors may need (any one tensor, and the "
                      "memory plan): 64G, 512M or bytes; more is an error. Default: this "
                      "machine's memory (raise it to compile for a larger one)");
  command->add_flag("-q,--quiet", options->quiet, "Do not print the progress of each stage");
  command->callback([options] { RunCompileInModule(*options); });
}

}  // namespace loom::cli
