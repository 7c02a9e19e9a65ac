// loom-onnx-conformance: the ONNX backend node tests (shipped by the `onnx` Python package,
// one folder per case: model.onnx and test_data_set_0/{input,output}_<i>.pb) imported,
// compiled and run by Loom and compared with their expected outputs.
//
//   loom-onnx-conformance --data-dir .../onnx/backend/test/data/node [--shard 0/4]
//                         [--expected expected_pass.txt]
//                         [--frozen expected_pass_frozen_inputs.txt] [--filter gather]
//   loom-onnx-conformance --data-dir ... --write-expected expected_pass.txt
//                         [--frozen expected_pass_frozen_inputs.txt]
//
// One line per case, "PASS|FAIL|UNSUPPORTED <case> <reason>", then the counts. A case is
// UNSUPPORTED when it uses an operator the importer does not convert, or a tensor type Loom
// does not have; that is decided from the model before importing, so those cases cost
// nothing. Every case runs as given: each input of the test is a runtime input. A case
// listed in the --frozen file may instead have its inputs frozen into constants where the
// importer needs a constant (Reshape's shape, Range's bounds: shapes Loom must know when it
// compiles); it passes only that way, and counts apart ("only with constant inputs"). With
// --expected, the exit code is 1 when a case listed in either file does not pass (as given,
// or with frozen inputs); a case that passes without being listed, or passes as given while
// listed as frozen, is printed as news. Exit code 77 (a ctest skip) when the data folder is
// missing.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "frontend/onnx/converter.h"
#include "loom/frontend/onnx.h"
#include "loom/graph/compile.h"
#include "loom/runtime/executor.h"
#include "loom/runtime/float_codec.h"
#include "loom/support/error.h"

namespace {

namespace fs = std::filesystem;
using loom::DataType;
using loom::runtime::NDArray;

constexpr int kSkipped = 77;
// Float outputs match when |actual - expected| <= kAbsTol + kRelTol * |expected|.
constexpr double kRelTol = 1e-4;
constexpr double kAbsTol = 1e-5;

struct Options {
  std::string data_dir;
  int shard = 0;
  int shards = 1;
  std::string expected;
  std::string frozen;
  std::string write_expected;
  std::string filter;
};

enum class Verdict { kPass, kFail, kUnsupported };

struct Result {
  Verdict verdict = Verdict::kFail;
  std::string reason;
  // Unsupported because an operator has no converter (not a case of a converted operator).
  bool missing_operator = false;
  // A pass only with these inputs frozen into constants.
  std::set<std::string> frozen = {};
};

const char* VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kPass:
      return "PASS";
    case Verdict::kFail:
      return "FAIL";
    case Verdict::kUnsupported:
      return "UNSUPPORTED";
  }
  return "?";
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) LOOM_THROW << "cannot read " << path.string();
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The first line of an error message (a converter's message can be long).
std::string FirstLine(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  return line.size() > 300 ? line.substr(0, 300) + "..." : line;
}

std::string OperatorKey(const onnx::NodeProto& node) {
  if (node.domain().empty() || node.domain() == "ai.onnx") return node.op_type();
  return node.domain() + "." + node.op_type();
}

// "operators: A B" naming the model's operators without a converter; empty when none.
std::string MissingOperators(const onnx::ModelProto& model) {
  static const std::vector<std::string> supported = loom::frontend::onnx::SupportedOperators();
  std::set<std::string> missing;
  for (const onnx::NodeProto& node : model.graph().node()) {
    std::string key = OperatorKey(node);
    if (!std::binary_search(supported.begin(), supported.end(), key)) missing.insert(key);
  }
  if (!missing.empty()) {
    std::string text = "operators:";
    for (const std::string& op : missing) text += " " + op;
    return text;
  }
  return "";
}

// Which model input or output is not a tensor of a type Loom has; empty when none.
std::string UnsupportedTypes(const onnx::ModelProto& model) {
  auto check = [](const onnx::ValueInfoProto& value, const char* what) -> std::string {
    if (!value.type().has_tensor_type()) {
      return std::string(what) + " '" + value.name() + "' is not a tensor";
    }
    int32_t elem_type = value.type().tensor_type().elem_type();
    try {
      loom::frontend::onnx::DataTypeOfOnnx(elem_type, value.name());
    } catch (const loom::Error&) {
      // Types newer than the ONNX library (float8, int4 ...) have no name there.
      std::string type =
          onnx::TensorProto_DataType_IsValid(elem_type)
              ? onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(elem_type))
              : "number " + std::to_string(elem_type);
      return std::string(what) + " '" + value.name() + "' has element type " + type;
    }
    return "";
  };
  for (const onnx::ValueInfoProto& input : model.graph().input()) {
    if (std::string why = check(input, "input"); !why.empty()) return why;
  }
  for (const onnx::ValueInfoProto& output : model.graph().output()) {
    if (std::string why = check(output, "output"); !why.empty()) return why;
  }
  return "";
}

// Element k of a host array as a double (the comparison reads every dtype this way).
double ElementAsDouble(const NDArray& a, int64_t k) {
  DataType t = a.dtype();
  const void* p = a.data();
  if (t == DataType::Float(32)) return static_cast<const float*>(p)[k];
  if (t == DataType::Float(64)) return static_cast<const double*>(p)[k];
  if (t == DataType::Int(64)) return static_cast<double>(static_cast<const int64_t*>(p)[k]);
  if (t == DataType::Int(32)) return static_cast<const int32_t*>(p)[k];
  if (t == DataType::Int(16)) return static_cast<const int16_t*>(p)[k];
  if (t == DataType::Int(8)) return static_cast<const int8_t*>(p)[k];
  if (t == DataType::UInt(64)) return static_cast<double>(static_cast<const uint64_t*>(p)[k]);
  if (t == DataType::UInt(32)) return static_cast<const uint32_t*>(p)[k];
  if (t == DataType::UInt(16)) return static_cast<const uint16_t*>(p)[k];
  if (t == DataType::UInt(8)) return static_cast<const uint8_t*>(p)[k];
  if (t == DataType::Float(16)) return loom::HalfBitsToFloat(static_cast<const uint16_t*>(p)[k]);
  if (t.is_bfloat16()) return loom::BFloat16BitsToFloat(static_cast<const uint16_t*>(p)[k]);
  if (t.is_bool()) return static_cast<const uint8_t*>(p)[k] != 0;
  throw loom::Error("no comparison for dtype " + t.str());
}

// Empty when `actual` matches `expected`, else what differs. Floats within the tolerance
// (NaN matching NaN), other types exactly (int64 compared as integers).
std::string Compare(const NDArray& actual, const NDArray& expected) {
  if (actual.dtype() != expected.dtype() || actual.Shape() != expected.Shape()) {
    return "got " + actual.dtype().str() + " " + loom::runtime::ShapeString(actual.Shape()) +
           ", expected " + expected.dtype().str() + " " +
           loom::runtime::ShapeString(expected.Shape());
  }
  bool is_float = expected.dtype().is_float();
  bool is_int64 = expected.dtype() == DataType::Int(64);
  int64_t mismatches = 0, first = -1;
  double worst = 0;
  for (int64_t k = 0; k < expected.NumElements(); ++k) {
    bool equal;
    if (is_int64) {
      equal = static_cast<const int64_t*>(actual.data())[k] ==
              static_cast<const int64_t*>(expected.data())[k];
    } else {
      double a = ElementAsDouble(actual, k), e = ElementAsDouble(expected, k);
      if (is_float) {
        equal = (std::isnan(a) && std::isnan(e)) || a == e ||
                std::fabs(a - e) <= kAbsTol + kRelTol * std::fabs(e);
        if (!equal && std::isfinite(a) && std::isfinite(e)) {
          worst = std::max(worst, std::fabs(a - e));
        }
      } else {
        equal = a == e;
      }
    }
    if (!equal && mismatches++ == 0) first = k;
  }
  if (mismatches == 0) return "";
  std::ostringstream text;
  text << mismatches << " of " << expected.NumElements() << " elements differ; first at flat "
       << first << ": got " << ElementAsDouble(actual, first) << ", expected "
       << ElementAsDouble(expected, first);
  if (is_float) text << "; max |diff| " << worst;
  return text.str();
}

// The test data stores bfloat16 tensors as uint16 (numpy has no bfloat16): their bits, read
// as the bfloat16 the model declares for the value named `name`.
NDArray AsDeclared(const NDArray& array, const onnx::ModelProto& model, const std::string& name) {
  for (const auto* values : {&model.graph().input(), &model.graph().output()}) {
    for (const onnx::ValueInfoProto& value : *values) {
      if (value.name() == name &&
          value.type().tensor_type().elem_type() == onnx::TensorProto::BFLOAT16 &&
          array.dtype() == DataType::UInt(16)) {
        return array.CreateView(array.Shape(), DataType::BFloat16());
      }
    }
  }
  return array;
}

std::vector<NDArray> ReadTensors(const fs::path& dir, const std::string& prefix) {
  std::vector<NDArray> tensors;
  for (int i = 0;; ++i) {
    fs::path file = dir / (prefix + "_" + std::to_string(i) + ".pb");
    if (!fs::exists(file)) break;
    tensors.push_back(loom::frontend::onnx::ReadTensorProtoFile(file.string()));
  }
  return tensors;
}

// The model's inputs that are not initializers, in order.
std::vector<std::string> RuntimeInputs(const onnx::ModelProto& model) {
  std::set<std::string> initializers;
  for (const onnx::TensorProto& init : model.graph().initializer())
    initializers.insert(init.name());
  std::vector<std::string> names;
  for (const onnx::ValueInfoProto& input : model.graph().input()) {
    if (!initializers.count(input.name())) names.push_back(input.name());
  }
  return names;
}

// A copy of `model` whose inputs named in `frozen` are initializers holding the test's
// values: Loom's shapes are static, so shape-like operands (Reshape's shape, Slice's starts,
// Range's bounds ...), which the node tests pass as inputs, must be constants.
std::string FreezeInputs(const onnx::ModelProto& model, const std::set<std::string>& frozen,
                         const fs::path& inputs_dir, const std::vector<std::string>& inputs) {
  onnx::ModelProto copy = model;
  onnx::GraphProto* graph = copy.mutable_graph();
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!frozen.count(inputs[i])) continue;
    onnx::TensorProto* init = graph->add_initializer();
    std::string bytes = ReadFile(inputs_dir / ("input_" + std::to_string(i) + ".pb"));
    if (!init->ParseFromString(bytes)) LOOM_THROW << "cannot parse input " << i;
    init->set_name(inputs[i]);
  }
  auto* values = graph->mutable_input();
  values->erase(
      std::remove_if(values->begin(), values->end(),
                     [&](const onnx::ValueInfoProto& v) { return frozen.count(v.name()) != 0; }),
      values->end());
  // Initializers that are not graph inputs need IR version 4.
  copy.set_ir_version(std::max<int64_t>(copy.ir_version(), 4));
  return copy.SerializeAsString();
}

// The inputs to freeze in the retries after an import that needed a constant: first those
// read only as a later operand of nodes (the shape-like ones: Reshape's shape, Slice's
// starts ...), never as a node's first (data) operand; then every input.
std::vector<std::set<std::string>> FreezeCandidates(const onnx::ModelProto& model,
                                                    const std::vector<std::string>& inputs) {
  std::set<std::string> all(inputs.begin(), inputs.end()), data, operands;
  for (const onnx::NodeProto& node : model.graph().node()) {
    for (int i = 0; i < node.input_size(); ++i) {
      if (all.count(node.input(i))) (i == 0 ? data : operands).insert(node.input(i));
    }
  }
  for (const std::string& name : data) operands.erase(name);
  std::vector<std::set<std::string>> candidates;
  if (!operands.empty() && operands != all) candidates.push_back(operands);
  candidates.push_back(all);
  return candidates;
}

// Runs a case as given, or, with `may_freeze`, with the inputs an import needs as constants
// frozen into them.
Result RunCase(const fs::path& case_dir, bool may_freeze) {
  onnx::ModelProto model;
  std::string bytes = ReadFile(case_dir / "model.onnx");
  if (!model.ParseFromString(bytes)) return {Verdict::kFail, "cannot parse model.onnx"};
  if (std::string why = MissingOperators(model); !why.empty()) {
    return {Verdict::kUnsupported, why, /*missing_operator=*/true};
  }
  if (std::string why = UnsupportedTypes(model); !why.empty()) {
    return {Verdict::kUnsupported, why};
  }
  fs::path data_dir = case_dir / "test_data_set_0";
  std::vector<NDArray> inputs, expected;
  try {
    inputs = ReadTensors(data_dir, "input");
    expected = ReadTensors(data_dir, "output");
    for (int i = 0; i < static_cast<int>(expected.size()) && i < model.graph().output_size(); ++i) {
      expected[i] = AsDeclared(expected[i], model, model.graph().output(i).name());
    }
  } catch (const std::exception& e) {
    return {Verdict::kUnsupported, "test data: " + FirstLine(e.what())};
  }
  std::vector<std::string> names = RuntimeInputs(model);
  if (names.size() != inputs.size()) {
    return {Verdict::kFail, "the model has " + std::to_string(names.size()) +
                                " inputs, the test data " + std::to_string(inputs.size())};
  }

  // Import, freezing inputs into constants when a converter needs one.
  std::set<std::string> frozen = {};
  std::vector<std::set<std::string>> retries = FreezeCandidates(model, names);
  loom::frontend::onnx::ImportedModel imported;
  for (size_t attempt = 0;; ++attempt) {
    loom::frontend::onnx::ImportOptions options;
    for (size_t i = 0; i < names.size(); ++i) {
      if (!frozen.count(names[i])) options.input_shapes[names[i]] = inputs[i].Shape();
    }
    try {
      std::string model_bytes =
          frozen.empty() ? bytes : FreezeInputs(model, frozen, data_dir, names);
      imported = loom::frontend::onnx::ImportBytes(model_bytes, case_dir.string(), options);
      break;
    } catch (const std::exception& e) {
      // Any import error may come of an input the import would need as a constant (a
      // converter asks for one, or a size read at run time does not fit a static rule).
      std::string message = e.what();
      if (!may_freeze || attempt >= retries.size()) {
        return {Verdict::kFail, "import: " + FirstLine(message)};
      }
      frozen = retries[attempt];
    }
  }

  std::string stage = "compile";
  try {
    loom::graph::CompiledModel compiled = loom::graph::Compile(imported.module, {.opt_level = 1});
    stage = "run";
    // The executor the model was compiled for: the graph executor, or the VM where a size is
    // known only at run time (NonZero's count).
    std::unique_ptr<loom::runtime::Executor> run = loom::graph::MakeExecutor(compiled);
    loom::runtime::Executor& executor = *run;
    for (size_t i = 0; i < names.size(); ++i) {
      if (!frozen.count(names[i])) {
        executor.SetInput(names[i], AsDeclared(inputs[i], model, names[i]));
      }
    }
    executor.Run();
    if (executor.NumOutputs() != static_cast<int>(expected.size())) {
      return {Verdict::kFail, "got " + std::to_string(executor.NumOutputs()) +
                                  " outputs, expected " + std::to_string(expected.size())};
    }
    for (size_t i = 0; i < expected.size(); ++i) {
      std::string diff = Compare(executor.GetOutput(static_cast<int>(i)), expected[i]);
      if (!diff.empty()) {
        return {Verdict::kFail, "output " + std::to_string(i) + " '" +
                                    executor.OutputName(static_cast<int>(i)) + "': " + diff};
      }
    }
  } catch (const std::exception& e) {
    return {Verdict::kFail, stage + ": " + FirstLine(e.what())};
  }
  std::string note;
  if (!frozen.empty()) {
    note = "(only with constant inputs:";
    for (const std::string& name : frozen) note += " " + name;
    note += ")";
  }
  return {Verdict::kPass, note, false, frozen};
}

// The case names listed in an expected-pass file (comments start with '#').
std::set<std::string> ReadExpected(const std::string& path) {
  std::istringstream text(ReadFile(path));
  std::set<std::string> cases;
  for (std::string line; std::getline(text, line);) {
    line.erase(0, line.find_first_not_of(" \t"));
    line.erase(line.find_last_not_of(" \t\r") + 1);
    if (!line.empty() && line[0] != '#') cases.insert(line);
  }
  return cases;
}

// Where the comments that --write-expected writes begin.
constexpr const char* kFailingHeader =
    "# Cases of converted operators that do not pass, and why (written by --write-expected):";

// Rewrites `path`: the comment lines at its top kept (up to `failing_header`, or the first
// line that is not a comment), then, with a header, one comment line per case of a
// converted operator that does not pass, then the passing cases.
void WriteExpected(const std::string& path, const std::vector<std::string>& passing,
                   const char* failing_header, const std::vector<std::string>& failing) {
  std::string header;
  if (fs::exists(path)) {
    std::istringstream text(ReadFile(path));
    for (std::string line; std::getline(text, line);) {
      if (line.empty() || line[0] != '#' || (failing_header && line == failing_header)) break;
      header += line + "\n";
    }
  }
  std::ofstream out(path);
  out << header;
  if (failing_header) {
    out << failing_header << "\n";
    for (const std::string& line : failing) out << "#   " << line << "\n";
  }
  for (const std::string& name : passing) out << name << "\n";
  if (!out) LOOM_THROW << "cannot write " << path;
}

void Usage(std::ostream& os) {
  os << "usage: loom-onnx-conformance --data-dir DIR [--shard I/N] [--filter TEXT]\n"
        "                             [--expected FILE | --write-expected FILE]\n"
        "  --data-dir DIR         the node tests (onnx/backend/test/data/node)\n"
        "  --shard I/N            run the cases whose index modulo N is I\n"
        "  --filter TEXT          only cases whose name contains TEXT\n"
        "  --expected FILE        fail when a case listed in FILE does not pass as given\n"
        "  --frozen FILE          the cases that pass only with inputs frozen into constants:\n"
        "                         they may freeze them, and fail when they do not pass\n"
        "  --write-expected FILE  rewrite FILE: the cases that pass as given, and as comments\n"
        "                         why the cases of converted operators that do not pass fail;\n"
        "                         with --frozen, rewrite that file too: the cases that pass\n"
        "                         only with frozen inputs\n";
}

Options ParseOptions(int argc, char** argv) {
  Options options;
  // Given but empty (CMake found no node tests) is a skip, not a usage error.
  bool given_data_dir = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) LOOM_THROW << arg << " needs a value";
      return argv[++i];
    };
    if (arg == "--data-dir") {
      options.data_dir = value();
      given_data_dir = true;
    } else if (arg == "--shard") {
      std::string shard = value();
      char slash = 0;
      std::istringstream in(shard);
      if (!(in >> options.shard >> slash >> options.shards) || slash != '/' || !in.eof() ||
          options.shards < 1 || options.shard < 0 || options.shard >= options.shards) {
        LOOM_THROW << "--shard must be I/N with 0 <= I < N, got '" << shard << "'";
      }
    } else if (arg == "--expected") {
      options.expected = value();
    } else if (arg == "--frozen") {
      options.frozen = value();
    } else if (arg == "--write-expected") {
      options.write_expected = value();
    } else if (arg == "--filter") {
      options.filter = value();
    } else if (arg == "--help" || arg == "-h") {
      Usage(std::cout);
      std::exit(0);
    } else {
      LOOM_THROW << "unknown argument '" << arg << "' (see --help)";
    }
  }
  if (!given_data_dir) LOOM_THROW << "--data-dir is required (see --help)";
  if (!options.write_expected.empty() && (options.shards > 1 || !options.filter.empty())) {
    LOOM_THROW << "--write-expected writes the whole list: run it without --shard and --filter";
  }
  return options;
}

int Main(int argc, char** argv) {
  Options options = ParseOptions(argc, argv);
  if (options.data_dir.empty() || !fs::is_directory(options.data_dir)) {
    std::cout << "SKIP: no ONNX node tests at '" << options.data_dir
              << "' (the onnx Python package in .venv ships them: run `make deps`)\n";
    return kSkipped;
  }
  std::vector<std::string> cases;
  for (const fs::directory_entry& entry : fs::directory_iterator(options.data_dir)) {
    if (fs::exists(entry.path() / "model.onnx")) cases.push_back(entry.path().filename());
  }
  std::sort(cases.begin(), cases.end());
  std::set<std::string> expected, frozen;
  if (!options.expected.empty()) expected = ReadExpected(options.expected);
  // Rewriting the lists finds which cases pass only with frozen inputs: every case may.
  const bool writing = !options.write_expected.empty();
  if (!options.frozen.empty() && !writing) frozen = ReadExpected(options.frozen);

  int counts[3] = {0, 0, 0};
  int passing_frozen = 0;
  std::vector<std::string> passing, passing_only_frozen, failing, regressions, news;
  auto start = std::chrono::steady_clock::now();
  for (size_t index = 0; index < cases.size(); ++index) {
    const std::string& name = cases[index];
    if (static_cast<int>(index % options.shards) != options.shard) continue;
    if (name.find(options.filter) == std::string::npos) continue;
    Result result =
        RunCase(fs::path(options.data_dir) / name, writing || frozen.count(name) != 0);
    const bool passed = result.verdict == Verdict::kPass;
    const bool as_given = passed && result.frozen.empty();
    if (passed && !as_given) {
      ++passing_frozen;
    } else {
      ++counts[static_cast<int>(result.verdict)];
    }
    std::cout << VerdictName(result.verdict) << " " << name
              << (result.reason.empty() ? "" : " " + result.reason) << std::endl;
    if (as_given) {
      passing.push_back(name);
    } else if (passed) {
      passing_only_frozen.push_back(name);
    }
    // (A pass with frozen inputs is listed in the --frozen file, not among the failures.)
    if (!passed && !result.missing_operator) {
      failing.push_back(name + ": " + VerdictName(result.verdict) + " " + result.reason);
    }
    if (!options.expected.empty()) {
      if ((expected.count(name) && !as_given) || (frozen.count(name) && !passed)) {
        regressions.push_back(name);
      }
      if (as_given && !expected.count(name)) {
        news.push_back(name + (frozen.count(name) ? " (listed as passing only with frozen "
                                                    "inputs: move it)"
                                                  : ""));
      }
    }
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "pass " << counts[0] << ", fail " << counts[1] << ", unsupported " << counts[2]
            << ", passing only with constant inputs " << passing_frozen << " (" << seconds
            << " s)\n";
  for (const std::string& name : news) {
    std::cout << "NEWLY PASSING (add it to the expected list): " << name << "\n";
  }
  for (const std::string& name : regressions) {
    std::cout << "REGRESSION (listed as passing): " << name << "\n";
  }
  if (writing) {
    WriteExpected(options.write_expected, passing, kFailingHeader, failing);
    if (!options.frozen.empty()) {
      WriteExpected(options.frozen, passing_only_frozen, nullptr, {});
    }
  }
  return regressions.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "loom-onnx-conformance: " << e.what() << "\n";
    return 2;
  }
}
