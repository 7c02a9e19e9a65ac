// libloom_cli_compiler.so: the half of `loom` that needs the compiler (compiler_commands.h).
// `loom compile`: the ONNX importer, graph::Compile (with tuned configurations from
// --records) and ExportModel, with each stage's wall time on stderr as it finishes; `loom
// tune`: the model's tasks searched within a budget (autotune/tune.h); `loom inspect
// model.onnx`: what the importer (and, with --opt-level, a compile) makes of a model. The helpers of cli_common.h come from the `loom`
// executable, which exports its symbols.
#include "compiler_commands.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli_common.h"
#include "loom/autotune/tune.h"
#include "loom/frontend/onnx.h"
#include "loom/graph/aot.h"
#include "loom/graph/compile.h"
#include "loom/graph/quantize.h"
#include "loom/graph/strategy.h"
#include "loom/support/stack.h"
#include "loom/vta/compiler/graph.h"

namespace loom::cli {
namespace {

// The calibration samples of --calibration NAME=FILE.npy, one array per input of `main` in
// order per sample: each file holds one sample of its input's shape, or S of them stacked
// along a first axis (S the same for every input). A missing or unknown input, a repeated
// one, or an array of another dtype or shape is a loom::Error listing the model's inputs.
std::vector<std::vector<runtime::NDArray>> CalibrationSamples(
    const graph::Function& main, const std::vector<std::string>& options) {
  std::string inputs;
  for (const graph::Var& param : main->params) {
    inputs += (inputs.empty() ? "" : ", ") + param->name_hint + " " + param.type().str();
  }
  std::map<std::string, runtime::NDArray> given;
  for (const std::string& option : options) {
    const size_t eq = option.find('=');
    LOOM_CHECK_USER(eq != std::string::npos && eq > 0 && eq + 1 < option.size())
        << "--calibration " << option << ": expected NAME=FILE.npy (the model's inputs: "
        << inputs << ")";
    const std::string name = option.substr(0, eq);
    LOOM_CHECK_USER(given.count(name) == 0) << "--calibration " << name << " is given twice";
    CheckReadableFile(option.substr(eq + 1), "calibration samples");
    given[name] = runtime::NDArray::LoadNpy(option.substr(eq + 1));
  }
  int64_t count = -1;
  std::vector<std::vector<runtime::NDArray>> samples;
  for (size_t p = 0; p < main->params.size(); ++p) {
    const graph::Var& param = main->params[p];
    auto it = given.find(param->name_hint);
    LOOM_CHECK_USER(it != given.end())
        << "--quantize needs --calibration " << param->name_hint << "=FILE.npy for every "
        << "input; the model's inputs: " << inputs;
    const runtime::NDArray& array = it->second;
    const std::vector<int64_t> shape = *param.type().ConstShape();
    std::vector<int64_t> got = array.Shape();
    const bool one = got == shape;
    const bool stacked = got.size() == shape.size() + 1 &&
                         std::equal(shape.begin(), shape.end(), got.begin() + 1) && got[0] > 0;
    LOOM_CHECK_USER(array.dtype() == param.type().dtype() && (one || stacked) &&
                    (count < 0 || (one ? 1 : got[0]) == count))
        << "--calibration " << param->name_hint << ": the samples are " << array.dtype().str()
        << " " << ShapeText(got) << "; input " << param->name_hint << " takes "
        << param.type().dtype().str() << " " << ShapeText(shape) << " (one sample) or Sx"
        << ShapeText(shape) << " (S samples, as many for every input; the model's inputs: "
        << inputs << ")";
    count = one ? 1 : got[0];
    samples.resize(static_cast<size_t>(count));
    const size_t bytes = runtime::ElementBytes(array.dtype()) *
                         static_cast<size_t>(array.NumElements() / count);
    for (int64_t s = 0; s < count; ++s) {
      runtime::NDArray sample = runtime::NDArray::Empty(shape, array.dtype());
      std::memcpy(sample.data(), static_cast<const char*>(array.data()) + s * bytes, bytes);
      samples[static_cast<size_t>(s)].push_back(sample);
    }
    given.erase(it);
  }
  LOOM_CHECK_USER(given.empty()) << "--calibration " << given.begin()->first
                                 << " names no input of the model; its inputs: " << inputs;
  return samples;
}

// Each quantized layer's range, scale and rounding errors, on stderr.
void PrintQuantizeReport(const graph::QuantizeReport& report) {
  const bool power_of_two = report.scheme == "power-of-two";
  std::cerr << "quantized " << report.layers.size()
            << (report.layers.size() == 1 ? " layer" : " layers") << " to int8"
            << (power_of_two ? " with power-of-two scales (integer arithmetic between them)" : "")
            << ", calibrated on " << report.samples << " sample"
            << (report.samples == 1 ? "" : "s")
            << " (relative RMS error of rounding each layer's data and weight to 8 bits):\n";
  for (size_t i = 0; i < report.kept_float.size(); ++i) {
    std::cerr << "  kept in float: " << report.kept_float[i] << " ("
              << report.kept_float_why[i] << ")\n";
  }
  for (const graph::QuantizedLayer& layer : report.layers) {
    std::cerr << "  " << layer.name << " (" << layer.op << "): data in [" << layer.data_min
              << ", " << layer.data_max << "]";
    if (layer.range_min != layer.data_min || layer.range_max != layer.data_max) {
      std::cerr << ", quantized over [" << layer.range_min << ", " << layer.range_max << "]";
    }
    if (power_of_two) {
      std::cerr << ", scale 2^" << std::ilogb(layer.data_scale) << ", weight scale 2^"
                << std::ilogb(layer.weight_scale);
    } else {
      std::cerr << ", scale " << layer.data_scale << " zero point " << layer.data_zero_point;
    }
    std::cerr << ", error data " << std::setprecision(3)
              << layer.data_error << " weight " << layer.weight_error << std::setprecision(6)
              << "\n";
  }
}

// A positive number followed by one of `units` (each with its scale), scaled; anything else
// is a loom::Error: "OPTION 'TEXT': expected a positive EXAMPLES".
double ParseScaled(const std::string& text, const std::map<std::string, double>& units,
                   const std::string& option, const std::string& examples) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  auto unit = units.find(text.substr(std::min(used, text.size())));
  LOOM_CHECK_USER(used > 0 && unit != units.end() && value > 0 && value * unit->second < 9.2e18)
      << option << " '" << text << "': expected a positive " << examples;
  return value * unit->second;
}

// "64G", "512M", "2K" or bytes.
int64_t ParseByteSize(const std::string& text, const std::string& option) {
  const double kibi = 1024;
  return static_cast<int64_t>(ParseScaled(text,
                                          {{"", 1},
                                           {"K", kibi},
                                           {"M", kibi * kibi},
                                           {"G", kibi * kibi * kibi},
                                           {"T", kibi * kibi * kibi * kibi}},
                                          option, "size such as 64G, 512M or bytes"));
}

// The ONNX model at `path` with the --input-shape options, the importer's warnings on stderr.
frontend::onnx::ImportedModel ImportModel(const std::string& path,
                                          const std::vector<std::string>& input_shapes,
                                          bool symbolic_dimensions = false,
                                          int64_t max_loop_iterations = 4096) {
  frontend::onnx::ImportOptions import_options;
  import_options.input_shapes = ParseInputShapes(input_shapes);
  import_options.symbolic_dimensions = symbolic_dimensions;
  import_options.max_loop_iterations = max_loop_iterations;
  frontend::onnx::ImportedModel model = frontend::onnx::ImportFile(path, import_options);
  for (const std::string& warning : model.warnings) std::cerr << "warning: " << warning << "\n";
  return model;
}

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

// The weights' bytes, read off the execution graph: the kernels need not be loadable here
// (a model compiled for another architecture is only exported).
int64_t CompiledWeightBytes(const graph::CompiledModel& compiled) {
  int64_t bytes = 0;
  const nlohmann::json graph = nlohmann::json::parse(compiled.graph_json);
  for (const auto& param : graph.at("params")) {
    bytes += param.at("bytes").get<int64_t>();
  }
  return bytes;
}

// The AOT entry point's prefix: --name, else the model file's stem made a C identifier.
std::string AotName(const CompileCommandOptions& options) {
  if (!options.name.empty()) return options.name;
  return graph::CIdentifierFrom(std::filesystem::path(options.model_path).stem().string());
}

void CheckExecutorAndRuntime(const CompileCommandOptions& options) {
  LOOM_CHECK_USER(options.executor != "aot" || options.runtime == "crt")
      << "--executor aot writes C for the micro runtime: add --runtime crt";
  LOOM_CHECK_USER(options.runtime != "crt" || options.executor == "aot")
      << "--runtime crt runs models compiled ahead of time: add --executor aot";
  LOOM_CHECK_USER(options.name.empty() || options.executor == "aot")
      << "--name names the entry point of --executor aot; the other executors have none";
}

// Prints warnings on stderr, the first few in full.
void PrintWarnings(const std::vector<std::string>& warnings, const std::string& about) {
  constexpr size_t kShown = 5;
  for (size_t i = 0; i < warnings.size() && i < kShown; ++i) {
    std::fprintf(stderr, "warning: %s: %s\n", about.c_str(), warnings[i].c_str());
  }
  if (warnings.size() > kShown) {
    std::fprintf(stderr, "warning: %s: %zu more like these\n", about.c_str(),
                 warnings.size() - kShown);
  }
}

// The tuned configurations of a compile: the best record per workload of --records, then the
// shipped records for the workloads they lack (unless --no-shipped-records), the records'
// warnings on stderr. None when there is neither.
std::shared_ptr<autotune::BestRecords> LoadBestRecords(const CompileCommandOptions& options) {
  std::shared_ptr<autotune::BestRecords> best = autotune::BestRecords::ForCompile(
      options.records_path, Target::Parse(options.target), options.shipped_records);
  if (best) PrintWarnings(best->warnings(), options.records_path);
  return best;
}

// What the records did for a compile: the kernels they tuned and those they had nothing for.
void PrintRecordsUse(const autotune::BestRecords& best, const CompileCommandOptions& options) {
  if (options.quiet && options.records_path.empty()) return;
  std::vector<graph::TuningWorkload> missing = best.missing();
  std::fprintf(stderr, "records: %zu of %zu tunable kernels tuned (%zu from %s, %zu shipped)\n",
               best.queried().size() - missing.size(), best.queried().size(),
               best.queried().size() - missing.size() - best.fallbacks_used(),
               options.records_path.empty() ? "no records file" : options.records_path.c_str(),
               best.fallbacks_used());
  if (options.records_path.empty()) return;
  for (const graph::TuningWorkload& w : missing) {
    const graph::TuningTemplate& t = graph::FindTuningTemplate(w.template_name);
    std::fprintf(stderr, "records: no record for %s (default used)\n", t.describe(w.args).c_str());
  }
}

// How many layers the target's device took, and why each other one stays on the host (stderr;
// also in the artifact, for `loom inspect`).
void PrintPlacements(const std::vector<graph::LayerPlacement>& placements, bool quiet) {
  if (placements.empty() || quiet) return;
  std::map<std::string, int> per_device;
  for (const graph::LayerPlacement& p : placements) ++per_device[p.device];
  std::cerr << "placement:";
  for (const auto& [device, count] : per_device) std::cerr << " " << count << " on " << device;
  std::cerr << " (of " << placements.size() << " layers the device could take)\n";
  for (const graph::LayerPlacement& p : placements) {
    if (!p.reason.empty()) std::cerr << "  " << p.layer << " on " << p.device << ": " << p.reason << "\n";
  }
}

// The option combinations --quantize takes (before any slow work).
void CheckQuantizeOptions(const QuantizeCommandOptions& options) {
  LOOM_CHECK_USER(!options.percentile || options.calibration_method == "percentile")
      << "--percentile is for --calibration-method percentile; give both";
  LOOM_CHECK_USER(options.quantize_scheme == "affine" || !options.quantize.empty())
      << "--quantize-scheme is for --quantize int8; give both";
  LOOM_CHECK_USER(options.keep_float.empty() || !options.quantize.empty())
      << "--keep-float is for --quantize int8; give both";
  LOOM_CHECK_USER(!options.quantize_every_layer || !options.quantize.empty())
      << "--quantize-every-layer is for --quantize int8; give both";
  LOOM_CHECK_USER(!options.global_scale || options.quantize_scheme == "power-of-two")
      << "--global-scale is for --quantize-scheme power-of-two; give both";
  LOOM_CHECK_USER(!options.global_scale || *options.global_scale > 0)
      << "--global-scale " << *options.global_scale
      << ": the global scale must be a power of two (such as 4, 8 or 16)";
  LOOM_CHECK_USER(options.quantize.empty() == options.calibration.empty())
      << (options.quantize.empty() ? "--calibration is for --quantize int8; give both"
                                   : "--quantize int8 needs --calibration NAME=FILE.npy for "
                                     "each input");
}

// `module` quantized as the options say (their report on stderr unless `quiet`); the
// calibration runs on the host of `target`.
graph::IRModule Quantized(const QuantizeCommandOptions& options, const std::string& target,
                          const graph::IRModule& module, bool quiet) {
  graph::QuantizeReport report;
  // Calibration runs the float model on this machine: the host of a device target.
  graph::QuantizeOptions quantize_options{.target = Target::Parse(target).host().str(),
                                          .calibration = options.calibration_method,
                                          .scheme = options.quantize_scheme};
  if (options.percentile) quantize_options.percentile = *options.percentile;
  if (options.global_scale) quantize_options.global_scale = *options.global_scale;
  quantize_options.keep_float = options.keep_float;
  quantize_options.auto_keep_float = !options.quantize_every_layer;
  graph::IRModule quantized = graph::QuantizeInt8(
      module, CalibrationSamples(module.main(), options.calibration), quantize_options, &report);
  if (!quiet) PrintQuantizeReport(report);
  return quantized;
}

void RunCompile(const CompileCommandOptions& options) {
  CheckReadableFile(options.model_path, "model");
  CheckExecutorAndRuntime(options);
  LOOM_CHECK_USER(!IsSharedLibrary(options.model_path))
      << "model '" << options.model_path
      << "' is already a compiled model (a shared library); compile takes an ONNX model";
  const bool aot = options.executor == "aot";
  // A library goes into an existing folder; the AOT sources into a folder of their own, which
  // may be made (its parent must exist).
  std::filesystem::path output_dir =
      std::filesystem::path(options.output_path).lexically_normal().parent_path();
  if (aot && !std::filesystem::path(options.output_path).has_filename()) {
    output_dir = output_dir.parent_path();
  }
  LOOM_CHECK_USER(output_dir.empty() || std::filesystem::is_directory(output_dir))
      << "-o " << options.output_path << ": the directory '" << output_dir.string()
      << "' does not exist";

  std::error_code same_error;
  LOOM_CHECK_USER(!std::filesystem::equivalent(options.model_path, options.output_path, same_error))
      << "-o " << options.output_path << " is the model '" << options.model_path
      << "' itself; give the compiled model another name (model.so)";
  if (aot) graph::CheckAotOptions({.name = AotName(options)}, options.target);
  CheckQuantizeOptions(options.quantization);
  if (!options.records_path.empty()) CheckReadableFile(options.records_path, "tuning records");

  ProgressPrinter progress(options.quiet);
  // Dimensions --input-shape leaves unbound stay symbolic for the VM.
  const bool symbolic = options.executor == "auto" || options.executor == "vm";
  frontend::onnx::ImportedModel imported =
      ImportModel(options.model_path, options.input_shapes, symbolic, options.max_loop_iterations);
  progress.Stage("import");

  if (!options.quantization.quantize.empty()) {
    imported.module =
        Quantized(options.quantization, options.target, imported.module, options.quiet);
    progress.Stage("quantize");
  }

  // --target vta: VTA's operators, their implementation and its graph packing (this links
  // libloom_vta_compiler in).
  vta::RegisterGraphIntegration();
  graph::CompileOptions compile_options;
  compile_options.opt_level = options.opt_level;
  compile_options.target = options.target;
  compile_options.precision = options.precision;
  compile_options.executor = aot ? "graph" : options.executor;
  if (!options.memory_limit.empty()) {
    compile_options.memory_limit_bytes = ParseByteSize(options.memory_limit, "--memory-limit");
  }
  compile_options.dynamic_buckets = ParseDynamicBuckets(options.dynamic_buckets);
  compile_options.size_constraints = options.size_constraints;
  if (std::optional<DataType> half = graph::ProductOperandType(options.precision);
      half && !graph::HasHalfPrecisionProducts(Target::Parse(options.target), *half)) {
    std::cerr << "note: target '" << options.target << "' has no " << *half
              << " product kernels (AMX bf16 tiles or AVX-512 BF16 for bfloat16, GPU tensor "
              << "cores): --precision " << options.precision << " rounds the products' operands "
              << "to " << *half << " and computes them in float32, by conversion\n";
  }
  std::shared_ptr<autotune::BestRecords> records = LoadBestRecords(options);
  compile_options.configs = records;
  graph::CompiledModel compiled = graph::Compile(
      imported.module, compile_options,
      [&progress](const std::string& stage, double seconds) { progress.Print(stage, seconds); });
  if (records) PrintRecordsUse(*records, options);
  PrintPlacements(compiled.placements, options.quiet);
  if (aot) {
    std::string name = AotName(options);
    graph::AotSummary summary = graph::ExportAot(compiled, options.output_path, {.name = name});
    progress.Stage("export");
    std::cout << "compiled " << options.model_path << " -> " << options.output_path << " (" << name
              << ".h, " << name << ".c, " << name << "_kernels.c, loom_crt.h, loom_crt.c): "
              << compiled.kernel_names.size() << " kernel calls, weights "
              << BytesText(summary.weight_bytes) << " (const), workspace "
              << BytesText(summary.workspace_bytes) << " (memory plan "
              << BytesText(summary.slot_bytes) << " + kernel scratch "
              << BytesText(summary.scratch_bytes) << "), entry point " << name << "_run\n";
    return;
  }
  graph::ExportModel(compiled, options.output_path);
  progress.Stage("export");

  std::set<std::string> distinct(compiled.kernel_names.begin(), compiled.kernel_names.end());
  int64_t weights = CompiledWeightBytes(compiled);
  std::cout << "compiled " << options.model_path << " -> " << options.output_path << ": "
            << compiled.kernel_names.size() << " kernel calls (" << distinct.size()
            << " distinct kernels), ";
  if (compiled.executor == "vm") {
    std::cout << "virtual machine (shapes computed at run time; inputs";
    for (const graph::Var& input : imported.module.main()->params) {
      std::cout << " " << input->name_hint << " " << input.type().str();
    }
    std::cout << ")";
    if (!compile_options.dynamic_buckets.empty()) {
      std::cout << ", specialized for";
      for (const auto& [name, sizes] : compile_options.dynamic_buckets) {
        std::cout << " " << name << " =";
        for (size_t i = 0; i < sizes.size(); ++i) std::cout << (i ? "," : " ") << sizes[i];
      }
    }
    std::cout << ", planned memory " << BytesText(compiled.memory.planned_bytes) << " in "
              << compiled.memory.num_storages << " slots (tensors whose sizes have bounds)";
  } else {
    std::cout << "planned memory " << BytesText(compiled.memory.planned_bytes) << " in "
              << compiled.memory.num_storages << " slots (lower bound "
              << BytesText(compiled.memory.lower_bound_bytes) << ")";
  }
  std::cout << ", weights " << BytesText(weights) << ", " << std::fixed << std::setprecision(1)
            << progress.TotalSeconds() << " s\n";
}

// "float32 1x3x224x224" for a tensor of static shape, the type's own text otherwise.
std::string TypeText(const graph::Type& type) {
  if (type.is_tensor()) {
    if (std::optional<std::vector<int64_t>> shape = type.ConstShape()) {
      return type.dtype().str() + " " + ShapeText(*shape);
    }
  }
  return type.str();
}

void InspectOnnx(const InspectCommandOptions& options) {
  // Dimensions --input-shape leaves unbound show as the symbols the model names them by.
  frontend::onnx::ImportedModel model =
      ImportModel(options.model_path, options.input_shapes, /*symbolic_dimensions=*/true);
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
  if (compiled.executor == "vm") {
    std::unique_ptr<runtime::Executor> vm = graph::MakeExecutor(compiled);
    PrintVmProgram(dynamic_cast<const runtime::VirtualMachine&>(*vm).model());
    return;
  }
  PrintPlan(*graph::MakeGraphModel(compiled));
}

// "90s", "20m", "1.5h" or plain seconds, in seconds; a loom::Error for anything else.
double ParseBudget(const std::string& text) {
  return ParseScaled(text, {{"", 1}, {"s", 1}, {"m", 60}, {"h", 3600}}, "--budget",
                     "time such as 90s, 20m or 1h");
}

// "1m05s", "42s"
std::string DurationText(double seconds) {
  const int total = static_cast<int>(std::lround(std::max(seconds, 0.0)));
  char text[32];
  if (total >= 60) std::snprintf(text, sizeof text, "%dm%02ds", total / 60, total % 60);
  else std::snprintf(text, sizeof text, "%ds", total);
  return text;
}

double Gflops(const autotune::Task& task, double seconds) {
  return std::isfinite(seconds) && seconds > 0 ? task.flops / seconds / 1e9 : 0;
}

void RunTune(const TuneCommandOptions& options) {
  CheckReadableFile(options.model_path, "model");
  autotune::TuneOptions tune;
  tune.tuner = options.tuner;
  tune.budget_seconds = ParseBudget(options.budget);
  tune.max_trials_per_task = options.trials_per_task;
  tune.batch_size = static_cast<size_t>(options.batch_size);
  tune.records_path = options.records_path;
  tune.resume = options.resume;
  tune.measure.remote.tracker = options.tracker;
  tune.measure.remote.device_key = options.device_key;
  tune.measure.remote.key = options.key;
  tune.measure.remote.max_devices = options.devices;
  LOOM_CHECK_USER(options.tracker.empty() || !options.device_key.empty())
      << "--tracker needs --device-key: the key of the devices to measure on (x86-avx512)";
  autotune::CheckTuneOptions(tune);
  CheckQuantizeOptions(options.quantization);
  const double budget = tune.budget_seconds;
  const Target target = Target::Parse(options.target);
  frontend::onnx::ImportedModel imported = ImportModel(options.model_path, options.input_shapes);
  if (!options.quantization.quantize.empty()) {
    imported.module = Quantized(options.quantization, options.target, imported.module,
                                /*quiet=*/true);
  }
  // --target vta: the VTA convolutions' template (this links libloom_vta_compiler in).
  vta::RegisterGraphIntegration();
  std::vector<autotune::Task> tasks =
      autotune::ExtractTasks(imported.module, {.target = options.target});
  if (tasks.empty()) {
    std::cout << "tune " << options.model_path << ": no tunable kernels for target '"
              << options.target << "' (tunable: the x86 blocked convolutions and dense "
              << "layers, on CPUs with AVX-512; VTA's convolutions, with --target vta and "
              << "--quantize int8 --quantize-scheme power-of-two); nothing to do\n";
    return;
  }
  int kernels = 0;
  for (const autotune::Task& t : tasks) kernels += t.occurrences;
  std::fprintf(stderr, "tune %s: %zu tasks (%d kernels), budget %s, tuner %s, records %s%s\n",
               options.model_path.c_str(), tasks.size(), kernels,
               DurationText(budget).c_str(), options.tuner.c_str(),
               options.records_path.c_str(),
               options.resume && std::filesystem::exists(options.records_path) ? " (resumed)" : "");
  autotune::TuneSummary summary = autotune::TuneTasks(
      tasks, target, tune, [&](const autotune::TaskStatus& s, double left) {
        if (options.quiet) return;
        std::fprintf(stderr,
                     "[%2zu/%zu] %-60s x%d  trials %4zu/%-5zu best %7.1f GFLOP/s (default "
                     "%7.1f)  left %s%s\n",
                     s.index + 1, s.count, s.task->description.c_str(), s.task->occurrences,
                     s.trials, s.valid_points, Gflops(*s.task, s.best_cost),
                     Gflops(*s.task, s.default_cost), DurationText(left).c_str(),
                     s.confirmed  ? "  confirmed: medians of the best points' and the default's "
                                    "runs again"
                     : s.finished ? ("  done: " + s.why_finished).c_str()
                                  : "");
      });
  PrintWarnings(summary.warnings, options.records_path);
  double default_ms = 0, tuned_ms = 0;
  std::cout << "tuned " << summary.tasks.size() << " tasks in " << DurationText(summary.seconds)
            << " (records: " << options.records_path << ")\n";
  for (const autotune::TaskStatus& s : summary.tasks) {
    const bool measured =
        s.default_cost > 0 && std::isfinite(s.default_cost) && std::isfinite(s.best_cost);
    if (measured) {
      default_ms += s.task->occurrences * s.default_cost * 1e3;
      tuned_ms += s.task->occurrences * s.best_cost * 1e3;
    }
    int failures = 0;
    for (size_t k = 1; k < s.failures.size(); ++k) failures += s.failures[k];
    std::printf("  %-60s x%d  %s", s.task->description.c_str(), s.task->occurrences,
                measured            ? ""
                : s.trials == 0     ? "not measured (the budget ran out first)\n"
                                    : "no default measured (resumed, nothing left to measure)\n");
    if (measured) {
      std::printf("%7.1f -> %7.1f GFLOP/s (%.2fx), %zu trials, %d failed%s\n",
                  Gflops(*s.task, s.default_cost), Gflops(*s.task, s.best_cost),
                  s.default_cost / s.best_cost, s.trials, failures,
                  s.confirmed ? "" : " (not confirmed: the budget ran out)");
    }
  }
  std::printf("tuned kernels' time per inference: %.3f ms by default, %.3f ms tuned\n", default_ms,
              tuned_ms);
}

}  // namespace
}  // namespace loom::cli

// Each command runs on a thread with a stack deep enough for the graph's recursion on any
// practical model (support/stack.h).
void loom_cli_tune(const loom::cli::TuneCommandOptions* options) {
  loom::RunWithStack(loom::kCompilerStackBytes, [&] { loom::cli::RunTune(*options); });
}

void loom_cli_compile(const loom::cli::CompileCommandOptions* options) {
  loom::RunWithStack(loom::kCompilerStackBytes, [&] { loom::cli::RunCompile(*options); });
}

void loom_cli_inspect_onnx(const loom::cli::InspectCommandOptions* options) {
  loom::RunWithStack(loom::kCompilerStackBytes, [&] { loom::cli::InspectOnnx(*options); });
}
