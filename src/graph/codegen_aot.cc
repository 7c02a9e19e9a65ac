// The AOT executor (loom/graph/aot.h): the execution graph becomes straight-line C that calls
// each kernel with tensors at fixed places -- a user pointer for a model input or output, a
// const array for a weight, the workspace at the memory plan's offset for everything else.
// It reads the same "loom-graph-1" document the graph executor runs (docs/graph_artifact.md).
#include "loom/graph/aot.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "graph/crt_sources.h"
#include "loom/runtime/ndarray.h"
#include "loom/target/codegen.h"

namespace loom::graph {
namespace {

constexpr int64_t kAlignment = 64;  // LOOM_CRT_ALIGNMENT: what kernels check

int64_t AlignUp(int64_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }

bool IsCKeyword(const std::string& word) {
  static const std::set<std::string> kKeywords = {
      "auto",     "break",  "case",    "char",   "const",    "continue", "default",
      "do",       "double", "else",    "enum",   "extern",   "float",    "for",
      "goto",     "if",     "inline",  "int",    "long",     "register", "restrict",
      "return",   "short",  "signed",  "sizeof", "static",   "struct",   "switch",
      "typedef",  "union",  "unsigned", "void",  "volatile", "while",    "bool",
      "_Bool",    "_Complex", "_Imaginary", "true", "false", "NULL"};
  return kKeywords.count(word) != 0;
}

// A struct field for `name`: a C identifier (CIdentifierFrom) with '_' after a C keyword
// and a number after a name `taken` already.
std::string FieldName(const std::string& name, std::set<std::string>* taken) {
  std::string field = CIdentifierFrom(name);
  if (IsCKeyword(field)) field += "_";
  std::string unique = field;
  for (int n = 2; !taken->insert(unique).second; ++n) unique = field + "_" + std::to_string(n);
  return unique;
}

// `text` safe inside a /* */ comment.
std::string CommentText(std::string text) {
  for (size_t at = text.find("*/"); at != std::string::npos; at = text.find("*/", at)) {
    text.replace(at, 2, "* /");
  }
  return text;
}

std::string Upper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

std::string Bytes(int64_t bytes) {
  std::ostringstream text;
  if (bytes >= 1 << 20) {
    text << static_cast<double>(bytes) / (1 << 20) << " MiB";
  } else if (bytes >= 1 << 10) {
    text << static_cast<double>(bytes) / (1 << 10) << " KiB";
  } else {
    text << bytes << " B";
  }
  text << " (" << bytes << " bytes)";
  return text.str();
}

struct Entry {
  std::string name;
  std::vector<int64_t> shape;
  DataType dtype;
  int storage = -1;  // or
  int param = -1;
  int64_t offset = 0;
  int64_t bytes = 0;
};

// Where a tensor's data is, as a C expression of type void*.
struct Placement {
  std::map<int, std::string> io;   // entry -> the user's pointer (inputs, outputs)
  std::vector<int64_t> slot_offset;  // storage -> its offset in the workspace
};

class AotWriter {
 public:
  AotWriter(const CompiledModel& model, const AotOptions& options)
      : model_(model), name_(options.name), graph_(nlohmann::json::parse(model.graph_json)) {
    target_ = graph_.at("target").get<std::string>();
    for (const auto& item : graph_.at("entries")) {
      Entry entry;
      entry.name = item.at("name").get<std::string>();
      entry.shape = item.at("shape").get<std::vector<int64_t>>();
      entry.dtype = DataType::Parse(item.at("dtype").get<std::string>());
      entry.bytes = static_cast<int64_t>(runtime::ElementBytes(entry.dtype));
      for (int64_t d : entry.shape) entry.bytes *= d;
      if (item.contains("param")) {
        entry.param = item.at("param").get<int>();
      } else {
        entry.storage = item.at("storage").get<int>();
        entry.offset = item.at("offset").get<int64_t>();
      }
      entries_.push_back(std::move(entry));
    }
  }

  // Decides where every tensor lives; returns the slots' total.
  int64_t Place() {
    std::set<std::string> taken;
    for (const auto& input : graph_.at("inputs")) {
      int entry = input.at("entry").get<int>();
      inputs_.push_back({FieldName(input.at("name").get<std::string>(), &taken), entry});
      placement_.io[entry] = "(void*)inputs->" + inputs_.back().field;
    }
    taken.clear();
    for (const auto& output : graph_.at("outputs")) {
      int entry = output.at("entry").get<int>();
      outputs_.push_back({FieldName(output.at("name").get<std::string>(), &taken), entry});
      // The first output of an entry that no input is: kernels write it in place. Others
      // (an input passed through, an entry output twice) are copied after the kernels.
      placement_.io.emplace(entry, "(void*)outputs->" + outputs_.back().field);
    }
    // The graph gives model inputs and outputs slots of their own (docs/graph_artifact.md):
    // those slots take no workspace, their tensors living in the caller's buffers.
    std::set<int> io_storages;
    for (const auto& [entry, pointer] : placement_.io) {
      LOOM_ICHECK(entries_[entry].param < 0 && entries_[entry].offset == 0)
          << "model input or output '" << entries_[entry].name << "' is a weight or not at the "
          << "start of its slot";
      io_storages.insert(entries_[entry].storage);
    }
    for (size_t e = 0; e < entries_.size(); ++e) {
      LOOM_ICHECK(placement_.io.count(static_cast<int>(e)) || entries_[e].param >= 0 ||
                  !io_storages.count(entries_[e].storage))
          << "entry '" << entries_[e].name << "' shares the slot of a model input or output";
    }
    const auto& storages = graph_.at("storages");
    int64_t total = 0;
    for (size_t s = 0; s < storages.size(); ++s) {
      placement_.slot_offset.push_back(total);
      if (!io_storages.count(static_cast<int>(s))) {
        total += AlignUp(storages[s].at("bytes").get<int64_t>());
      }
    }
    return total;
  }

  const std::string& target() const { return target_; }

  std::string Header(const AotSummary& summary) const {
    const std::string& target = target_;
    std::string upper = Upper(name_);
    std::ostringstream h;
    h << "/* Generated by Loom: model '" << name_ << "', compiled ahead of time for target '"
      << CommentText(target) << "'.\n"
      << " * Compile " << name_ << ".c and loom_crt.c with a C99 compiler; link with libm. */\n"
      << "#ifndef " << upper << "_H_\n#define " << upper << "_H_\n\n"
      << "#include <stdint.h>\n\n#include \"loom_crt.h\"\n\n"
      << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
      << "/* Bytes of the workspace " << name_ << "_run needs, LOOM_CRT_ALIGNMENT aligned: the\n"
      << " * memory plan's slots (" << summary.slot_bytes << ") then the kernels' scratch ("
      << summary.scratch_bytes << "). */\n"
      << "#define " << upper << "_WORKSPACE_SIZE " << summary.workspace_bytes << "\n"
      << "/* Bytes of the weights (const data). */\n"
      << "#define " << upper << "_WEIGHT_SIZE " << summary.weight_bytes << "\n\n";
    auto fields = [&](const std::vector<IO>& list, const char* constness) {
      for (const IO& io : list) {
        const Entry& entry = entries_[io.entry];
        h << "  " << constness << codegen::CStorageType(entry.dtype) << "* " << io.field << "; /* "
          << entry.dtype.str() << " [";
        for (size_t i = 0; i < entry.shape.size(); ++i) h << (i ? ", " : "") << entry.shape[i];
        h << "], " << entry.bytes << " bytes */\n";
      }
    };
    h << "/* Each pointer LOOM_CRT_ALIGNMENT-byte aligned, to the whole tensor, row-major. */\n"
      << "typedef struct {\n";
    fields(inputs_, "const ");
    if (inputs_.empty()) h << "  char none; /* the model has no inputs (C has no empty struct) */\n";
    h << "} " << name_ << "_inputs;\n\ntypedef struct {\n";
    fields(outputs_, "");
    h << "} " << name_ << "_outputs;\n\n"
      << "/* Runs the model once. `workspace`: " << upper << "_WORKSPACE_SIZE bytes, aligned.\n"
      << " * 0 on success; otherwise nonzero, and LoomCrtGetLastError() says why. One call at a\n"
      << " * time (the micro runtime's state is static). */\n"
      << "int " << name_ << "_run(const " << name_ << "_inputs* inputs, " << name_
      << "_outputs* outputs, void* workspace);\n\n"
      << "#ifdef __cplusplus\n}  /* extern \"C\" */\n#endif\n\n#endif  /* " << upper
      << "_H_ */\n";
    return h.str();
  }

  std::string Source(const AotSummary& summary) const {
    std::ostringstream c;
    c << "/* Generated by Loom: the AOT executor of model '" << name_ << "'. */\n"
      << "/* The kernels, private to this file. */\n"
      << "#define LOOM_EXPORT static\n#include \"" << name_ << "_kernels.c\"\n\n"
      << "#include \"" << name_ << ".h\"\n\n";
    Weights(c);
    Shapes(c);
    c << "int " << name_ << "_run(const " << name_ << "_inputs* inputs, " << name_
      << "_outputs* outputs, void* workspace) {\n"
      << "  uint8_t* slots = (uint8_t*)workspace;\n"
      << "  LoomCrtClearError();\n"
      << "  if (inputs == NULL || outputs == NULL || workspace == NULL ||\n"
      << "      (uintptr_t)workspace % LOOM_CRT_ALIGNMENT != 0) {\n"
      << "    LoomCrtSetLastError(\"" << name_
      << "_run: inputs, outputs and an aligned workspace are required\");\n"
      << "    return -1;\n  }\n"
      << "  LoomCrtScratchInit(slots + " << summary.slot_bytes << ", " << summary.scratch_bytes
      << ");\n"
      << "  __LoomAPISetLastError = LoomCrtSetLastError;\n"
      << "  __LoomBackendAllocWorkspace = LoomCrtScratchAlloc;\n"
      << "  __LoomBackendFreeWorkspace = LoomCrtScratchFree;\n";
    for (const auto& kernel : graph_.at("kernels")) Call(c, kernel);
    Copies(c);
    c << "  return 0;\n}\n";
    return c.str();
  }

 private:
  struct IO {
    std::string field;
    int entry;
  };

  void Weights(std::ostringstream& c) const {
    const auto& params = graph_.at("params");
    for (size_t p = 0; p < params.size(); ++p) {
      int64_t offset = params[p].at("offset").get<int64_t>();
      int64_t bytes = params[p].at("bytes").get<int64_t>();
      c << "/* " << CommentText(params[p].at("name").get<std::string>()) << " */\n"
        << "static const uint8_t LOOM_CRT_ALIGNED weight" << p << "["
        << std::max<int64_t>(bytes, 1) << "] = {";
      for (int64_t i = 0; i < bytes; ++i) {
        if (i % 32 == 0) c << "\n ";
        c << static_cast<int>(model_.params[offset + i]) << ",";
      }
      c << (bytes == 0 ? "0" : "") << "\n};\n";
    }
    c << "\n";
  }

  void Shapes(std::ostringstream& c) const {
    for (size_t e = 0; e < entries_.size(); ++e) {
      if (entries_[e].shape.empty()) continue;
      c << "static const int64_t shape" << e << "[" << entries_[e].shape.size() << "] = {";
      for (size_t i = 0; i < entries_[e].shape.size(); ++i) {
        c << (i ? ", " : "") << entries_[e].shape[i];
      }
      c << "};\n";
    }
    c << "\n";
  }

  std::string DataOf(int e) const {
    const Entry& entry = entries_[e];
    if (auto it = placement_.io.find(e); it != placement_.io.end()) return it->second;
    if (entry.param >= 0) return "(void*)weight" + std::to_string(entry.param);
    return "(void*)(slots + " +
           std::to_string(placement_.slot_offset[entry.storage] + entry.offset) + ")";
  }

  void Call(std::ostringstream& c, const nlohmann::json& kernel) const {
    std::vector<int> args = kernel.at("args").get<std::vector<int>>();
    c << "  { /* " << CommentText(kernel.at("name").get<std::string>()) << " */\n"
      << "    LoomTensor t[" << args.size() << "] = {\n";
    for (int e : args) {
      const Entry& entry = entries_[e];
      DLDataType dtype = entry.dtype.to_dlpack();
      c << "      {" << DataOf(e) << ", {1, 0}, " << entry.shape.size() << ", {"
        << static_cast<int>(dtype.code) << ", " << static_cast<int>(dtype.bits) << ", "
        << dtype.lanes << "}, " << (entry.shape.empty() ? "NULL" : "shape" + std::to_string(e))
        << ", NULL, 0},\n";
    }
    c << "    };\n    LoomValue args[" << args.size() << "];\n    int32_t codes["
      << args.size() << "];\n    LoomValue ret;\n    int32_t ret_code;\n"
      << "    for (int i = 0; i < " << args.size()
      << "; ++i) { args[i].v_handle = &t[i]; codes[i] = 7; /* a tensor */ }\n"
      << "    if (" << kernel.at("func").get<std::string>() << "(args, codes, " << args.size()
      << ", &ret, &ret_code, NULL) != 0) return -1;\n  }\n";
  }

  // Outputs that do not own their entry's pointer: copies once the kernels are done.
  void Copies(std::ostringstream& c) const {
    for (const IO& output : outputs_) {
      std::string own = "(void*)outputs->" + output.field;
      std::string source = DataOf(output.entry);
      if (source == own) continue;
      c << "  memcpy(" << own << ", " << source << ", " << entries_[output.entry].bytes
        << ");\n";
    }
  }

  const CompiledModel& model_;
  std::string name_;
  nlohmann::json graph_;
  std::string target_;
  std::vector<Entry> entries_;
  std::vector<IO> inputs_, outputs_;
  Placement placement_;
};

void WriteText(const std::filesystem::path& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary);
  file << text;
  file.close();
  LOOM_CHECK_USER(file.good()) << "ExportAot: could not write '" << path.string() << "'";
}

}  // namespace

std::string CIdentifierFrom(const std::string& text) {
  std::string name;
  for (char c : text) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) name = "_" + name;
  return name;
}

void CheckAotOptions(const AotOptions& options, const std::string& target) {
  LOOM_CHECK_USER(codegen::IsCIdentifier(options.name))
      << "ExportAot: the model name '" << options.name
      << "' is not a C identifier (letters, digits and '_', not starting with a digit); it "
         "names the entry point <name>_run";
  LOOM_CHECK_USER(options.name != "loom_crt")
      << "ExportAot: the model name 'loom_crt' is the micro runtime's; choose another";
  LOOM_CHECK_USER(codegen::CodegenForTarget(Target::Parse(target)).c_source)
      << "ExportAot: the model is compiled for '" << target
      << "', whose kernels are not C; the AOT executor with the crt runtime needs a c target "
         "(--target c, or a micro-controller tag such as cortex-m4)";
}

AotSummary ExportAot(const CompiledModel& model, const std::string& directory,
                     const AotOptions& options) {
  AotWriter writer(model, options);
  const std::string& target_text = writer.target();
  CheckAotOptions(options, target_text);
  const codegen::CSource* source = codegen::FindCSource(model.kernels);
  LOOM_ICHECK(source != nullptr) << "a c target's module holds no C source";
  LOOM_CHECK_USER(source->unbounded_function.empty())
      << "ExportAot: kernel '" << source->unbounded_function
      << "' allocates a buffer of symbolic size, which a static workspace cannot hold";

  AotSummary summary;
  summary.slot_bytes = writer.Place();
  summary.scratch_bytes = source->scratch_bytes;
  // At least one aligned unit: `uint8_t workspace[<NAME>_WORKSPACE_SIZE]` must be valid C.
  summary.workspace_bytes = std::max(summary.slot_bytes + summary.scratch_bytes, kAlignment);
  summary.weight_bytes = static_cast<int64_t>(model.params.size());

  Target target = Target::Parse(target_text);
  int64_t flash = target.Has("flash-bytes") ? target.GetInt("flash-bytes") : 0;
  int64_t ram = target.Has("ram-bytes") ? target.GetInt("ram-bytes") : 0;
  LOOM_CHECK_USER(flash == 0 || summary.weight_bytes <= flash)
      << "ExportAot: model '" << options.name << "' has " << Bytes(summary.weight_bytes)
      << " of weights, but target '" << target_text << "' declares " << Bytes(flash)
      << " of flash (-flash-bytes); use a smaller model or a board with more flash";
  LOOM_CHECK_USER(ram == 0 || summary.workspace_bytes <= ram)
      << "ExportAot: model '" << options.name << "' needs a workspace of "
      << Bytes(summary.workspace_bytes) << " (memory plan " << summary.slot_bytes
      << " bytes + kernel scratch " << summary.scratch_bytes << " bytes), but target '"
      << target_text << "' declares " << Bytes(ram)
      << " of RAM (-ram-bytes); use a smaller input or model, or a board with more RAM";

  std::filesystem::path folder(directory);
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  LOOM_CHECK_USER(!error) << "ExportAot: could not create the folder '" << directory
                          << "': " << error.message();
  WriteText(folder / (options.name + ".h"), writer.Header(summary));
  WriteText(folder / (options.name + ".c"), writer.Source(summary));
  WriteText(folder / (options.name + "_kernels.c"), source->text);
  for (const EmbeddedFile& file : CrtSources()) WriteText(folder / file.name, file.text);
  return summary;
}

}  // namespace loom::graph
