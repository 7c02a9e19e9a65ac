// The commands that need the compiler: `loom compile`, `loom tune` and `loom inspect` of an
// ONNX model.
// Their code lives in the module libloom_cli_compiler.so (compiler_commands.cc), which
// `loom` loads only when one of them runs. `run`, `bench` and `inspect` of a compiled model
// load the runtime alone, as a deployment does, so their memory and start-up are the
// runtime's and not LLVM's and the ONNX library's.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace loom::cli {

// --quantize and the options that go with it: compile's, and tune's (a model is tuned as it
// will be compiled).
struct QuantizeCommandOptions {
  std::string quantize;                    // "int8": Loom's quantizer (graph/quantize.h); "": none
  std::vector<std::string> calibration;    // NAME=FILE.npy: samples of an input, for --quantize
  std::string calibration_method = "max";  // or "percentile" (graph::QuantizeOptions)
  std::optional<double> percentile;        // with "percentile"; unset: QuantizeOptions' default
  std::string quantize_scheme = "affine";  // or "power-of-two" (graph::QuantizeOptions::scheme)
  std::optional<double> global_scale;      // with "power-of-two"
  std::vector<std::string> keep_float;     // layers --quantize leaves in float
  bool quantize_every_layer = false;       // not graph::QuantizeOptions::auto_keep_float
};

struct CompileCommandOptions {
  std::string model_path;
  std::string output_path;
  std::string target = "llvm";
  int opt_level = 3;
  std::vector<std::string> input_shapes;
  bool quiet = false;
  // auto: the VM when an input keeps a symbolic dimension, else graph; graph, vm or aot.
  std::string executor = "auto";
  std::string runtime = "cpp";     // or "crt" (with aot)
  std::string name;                // the AOT entry point's prefix; empty: the model file's stem
  std::string records_path;        // tuning records to take configurations from; "": defaults
  bool shipped_records = true;     // also the records shipped with Loom, where none of the user's
  QuantizeCommandOptions quantization;
  std::string precision = "float32";     // or "bf16", "fp16" (graph::CompileOptions::precision)
  std::string memory_limit;              // "64G", "512M", bytes; "": this machine's memory
  std::vector<std::string> dynamic_buckets;   // "seq=16,64,128" (graph::CompileOptions)
  std::vector<std::string> size_constraints;  // "seq % 8 == 0" (graph::CompileOptions)
  int64_t max_loop_iterations = 4096;         // frontend::onnx::ImportOptions::max_loop_iterations
};

struct TuneCommandOptions {
  std::string model_path;
  std::string target = "llvm";
  std::vector<std::string> input_shapes;
  std::string budget;  // "20m", "90s", "1h" or seconds
  std::string records_path;
  bool resume = false;
  std::string tuner = "xgb";
  int trials_per_task = 0;
  int batch_size = 16;
  bool quiet = false;
  QuantizeCommandOptions quantization;
  // Measuring on a tracker's devices (--tracker, --device-key; the key resolved from --key or
  // --key-file before the module runs).
  std::string tracker;
  std::string device_key;
  std::string key;
  std::string key_file;
  int devices = 0;
};

struct InspectCommandOptions {
  std::string model_path;
  std::vector<std::string> input_shapes;
  std::optional<int> opt_level;
  std::string target = "llvm";
};

// Load the compiler module (beside the `loom` executable) and run the command there; a
// missing module is a loom::Error naming its path.
void RunCompileInModule(const CompileCommandOptions& options);
void InspectOnnxInModule(const InspectCommandOptions& options);
void RunTuneInModule(const TuneCommandOptions& options);

}  // namespace loom::cli

// The module's entry points (C names, so dlsym finds them; C++ exceptions pass through).
extern "C" {
void loom_cli_compile(const loom::cli::CompileCommandOptions* options);
void loom_cli_inspect_onnx(const loom::cli::InspectCommandOptions* options);
void loom_cli_tune(const loom::cli::TuneCommandOptions* options);
}
