// The ONNX importer: ModelProto -> graph IRModule. Reads the model (and its external-data
// files), checks that every operator has a converter and that the nodes are in topological
// order before converting anything, makes the inputs graph variables with static shapes,
// converts each node through its converter (converter.h) and folds what the node computed
// from constants only, so shape arithmetic (Shape -> Gather -> Concat -> Reshape) becomes
// constants that later converters can read.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "frontend/onnx/converter.h"
#include "frontend/onnx/shape_values.h"
#include "loom/frontend/onnx.h"
#include "loom/graph/evaluate.h"
#include "loom/support/error.h"

namespace loom::frontend::onnx {
namespace {

bool IsDefaultDomain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

// The registry key of a node: its type, prefixed by its domain outside the default one.
std::string ConverterKey(const ::onnx::NodeProto& node) {
  return IsDefaultDomain(node.domain()) ? node.op_type() : node.domain() + "." + node.op_type();
}

// "'Conv_3'", or "#3" for a node without a name.
std::string NodeLabel(const ::onnx::NodeProto& node, int index) {
  return node.name().empty() ? "#" + std::to_string(index) : "'" + node.name() + "'";
}

// The newest opset of the default domain whose operator changes the converters know.
constexpr int64_t kNewestKnownOpset = 22;

// Whether `text` is well-formed UTF-8 (no overlong forms, surrogates or values past U+10FFFF).
bool IsUtf8(const std::string& text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  while (p < end) {
    const unsigned char c = *p;
    int extra = 0;
    uint32_t code = 0;
    if (c < 0x80) {
      ++p;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      extra = 1, code = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2, code = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3, code = c & 0x07;
    } else {
      return false;
    }
    if (end - p <= extra) return false;
    for (int k = 1; k <= extra; ++k) {
      if ((p[k] & 0xC0) != 0x80) return false;
      code = (code << 6) | (p[k] & 0x3F);
    }
    constexpr uint32_t kSmallest[] = {0, 0x80, 0x800, 0x10000};
    if (code < kSmallest[extra] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
      return false;
    }
    p += extra + 1;
  }
  return true;
}

// `text` with bytes outside printable ASCII as \xNN.
std::string Escaped(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
    } else {
      char hex[5];
      std::snprintf(hex, sizeof(hex), "\\x%02x", c);
      out += hex;
    }
  }
  return "'" + out + "'";
}

std::string NodeWhere(const ::onnx::NodeProto& node, int index) {
  return "node " + NodeLabel(node, index) + " (" + node.op_type() + ")";
}

std::string ShapeText(const std::vector<int64_t>& shape, const char* separator) {
  std::string text;
  for (size_t i = 0; i < shape.size(); ++i) {
    text += (i ? separator : "") + std::to_string(shape[i]);
  }
  return text;
}

// Reads the external data of `tensor` (location / offset / length entries, the file relative
// to `dir`) into a copy whose raw_data holds it.
::onnx::TensorProto LoadExternalData(const ::onnx::TensorProto& tensor, const std::string& dir) {
  std::string where = "initializer '" + tensor.name() + "'";
  std::string location;
  int64_t offset = 0;
  std::optional<int64_t> length;
  for (const ::onnx::StringStringEntryProto& entry : tensor.external_data()) {
    auto as_int = [&](const std::string& text) {
      try {
        size_t used = 0;
        int64_t value = std::stoll(text, &used);
        if (used == text.size() && value >= 0) return value;
      } catch (const std::exception&) {
      }
      LOOM_THROW << where << ": external data " << entry.key()
                 << " must be a non-negative integer, got '" << text << "'";
    };
    if (entry.key() == "location") location = entry.value();
    if (entry.key() == "offset") offset = as_int(entry.value());
    if (entry.key() == "length") length = as_int(entry.value());
  }
  LOOM_CHECK_USER(!location.empty())
      << where << ": its data is external, but external_data has no 'location' entry";
  // The spec's locations are relative and stay inside the model's folder; anything else
  // would let a model read arbitrary files.
  std::filesystem::path relative(location);
  bool inside = relative.is_relative() && !relative.has_root_name();
  for (const std::filesystem::path& part : relative) inside &= part != "..";
  LOOM_CHECK_USER(inside) << where << ": external data location '" << location
                          << "' must be a path relative to the model's folder, without '..'";
  DataType dtype = DataTypeOfOnnx(tensor.data_type(), where);
  int64_t bytes = CheckedTensorBytes({tensor.dims().begin(), tensor.dims().end()}, dtype, where);
  LOOM_CHECK_USER(!length || *length == bytes)
      << where << ": external data length " << *length << " does not match the " << bytes
      << " bytes of " << dtype.str() << " of its shape";

  std::filesystem::path file = std::filesystem::path(dir) / location;
  std::error_code error;
  // Symbolic links resolved: the file itself must be inside the model's folder too.
  const std::filesystem::path real = std::filesystem::canonical(file, error);
  LOOM_CHECK_USER(!error) << where << ": cannot read its external data file '" << file.string()
                          << "' (" << error.message()
                          << "); external data files are found relative to the model's folder";
  const std::filesystem::path folder = std::filesystem::canonical(
      dir.empty() ? std::filesystem::path(".") : std::filesystem::path(dir), error);
  const std::filesystem::path within = real.lexically_relative(folder);
  LOOM_CHECK_USER(!error && !within.empty() && *within.begin() != "..")
      << where << ": its external data file '" << file.string() << "' is '" << real.string()
      << "', outside the model's folder '" << folder.string()
      << "' (through a symbolic link); copy the data into the folder";
  LOOM_CHECK_USER(std::filesystem::is_regular_file(real))
      << where << ": its external data '" << file.string() << "' is not a regular file";
  uintmax_t file_size = std::filesystem::file_size(real, error);
  LOOM_CHECK_USER(!error) << where << ": cannot read its external data file '" << file.string()
                          << "' (" << error.message() << ")";
  LOOM_CHECK_USER(static_cast<uintmax_t>(offset) <= file_size &&
                  static_cast<uintmax_t>(bytes) <= file_size - static_cast<uintmax_t>(offset))
      << where << ": its external data (offset " << offset << ", " << bytes
      << " bytes) runs past the end of '" << file.string() << "' (" << file_size
      << " bytes): the file is truncated or not the model's";
  std::ifstream in(real, std::ios::binary);
  std::string data(static_cast<size_t>(bytes), '\0');
  in.seekg(offset);
  in.read(data.data(), bytes);
  LOOM_CHECK_USER(in.good()) << where << ": reading its external data from '" << file.string()
                             << "' failed";
  ::onnx::TensorProto loaded = tensor;
  loaded.clear_external_data();
  loaded.set_data_location(::onnx::TensorProto::DEFAULT);
  loaded.set_raw_data(std::move(data));
  return loaded;
}

// Imports a subgraph (GraphProto) with its inputs bound, inside the scope named by the last
// argument; its outputs.
using SubgraphImporter = std::function<std::vector<graph::Expr>(
    const ::onnx::GraphProto&, const std::vector<graph::Expr>&, const std::string&)>;

// A tensor of `values` that has `var` as a dimension (the first by name: the same graph every
// import), where a run reads the size.
std::optional<SizeSource> SizeSourceIn(const std::unordered_map<std::string, graph::Expr>& values,
                                       const loom::VarNode* var) {
  std::optional<SizeSource> found;
  std::string found_name;
  for (const auto& [name, value] : values) {
    const graph::Type& type = value.type();
    if (!type.is_tensor() || (found && name >= found_name)) continue;
    for (size_t d = 0; d < type.shape().size(); ++d) {
      if (type.shape()[d].get() == var) {
        found = SizeSource{value, static_cast<int64_t>(d)};
        found_name = name;
        break;
      }
    }
  }
  return found;
}

// What a converter sees of the node it converts. `scope` is empty for the model's own graph,
// else the path of the subgraph import the node is in ("Loop_3/body[2]").
class ImportNodeContext final : public NodeContext {
 public:
  ImportNodeContext(const ::onnx::NodeProto& node, int index, int64_t opset,
                    int64_t max_loop_iterations,
                    const std::unordered_map<std::string, graph::Expr>& values,
                    const std::unordered_map<std::string, ShapeValue>& shape_values,
                    const std::string& scope, SubgraphImporter import_subgraph,
                    std::map<std::string, graph::Function>* functions)
      : node_(node),
        where_(NodeWhere(node, index) + (scope.empty() ? "" : " in " + scope)),
        call_name_(
            (scope.empty() ? "" : scope + "/") +
            (node.name().empty() ? node.op_type() + "_" + std::to_string(index) : node.name())),
        opset_(opset),
        max_loop_iterations_(max_loop_iterations),
        values_(values),
        shape_values_(shape_values),
        import_subgraph_(std::move(import_subgraph)),
        functions_(*functions) {}

  const ::onnx::NodeProto& node() const override { return node_; }
  std::string Where() const override { return where_; }
  int64_t opset() const override { return opset_; }
  int64_t max_loop_iterations() const override { return max_loop_iterations_; }
  const std::string& CallName() const override { return call_name_; }
  int NumInputs() const override { return node_.input_size(); }
  bool HasInput(int i) const override {
    return i >= 0 && i < node_.input_size() && !node_.input(i).empty();
  }
  graph::Expr Input(int i) const override {
    if (!HasInput(i)) Fail("input " + std::to_string(i) + " is required but absent");
    if (auto shape = shape_values_.find(node_.input(i)); shape != shape_values_.end()) {
      // A shape value the node reads as data: computed when the model runs.
      try {
        return ShapeValueTensor(
            shape->second, [this](const loom::VarNode* var) { return SizeSourceIn(values_, var); },
            call_name_ + "." + node_.input(i));
      } catch (const Error& e) {
        Fail("input " + std::to_string(i) + " ('" + node_.input(i) + "') is computed from the " +
             "symbolic shape of a tensor, " + ShapeValueText(shape->second) +
             ", which Loom cannot compute at run time: " + e.what());
      }
    }
    auto it = values_.find(node_.input(i));
    LOOM_ICHECK(it != values_.end()) << where_ << ": the order check defines every input";
    return it->second;
  }

  std::optional<ShapeValue> ShapeInput(int i) const override {
    if (!HasInput(i)) return std::nullopt;
    if (auto shape = shape_values_.find(node_.input(i)); shape != shape_values_.end()) {
      return shape->second;
    }
    std::optional<runtime::NDArray> constant = ConstantInput(i);
    if (!constant || constant->dtype().is_float() || constant->Shape().size() > 1) {
      return std::nullopt;
    }
    ShapeValue value{{}, constant->Shape().empty(), constant->dtype()};
    for (int64_t v : ConstantInts(i)) value.elements.push_back(IntImm(DataType::Int(64), v));
    return value;
  }

  // Whether the node reads a shape value, or takes the Shape (Size) of a symbolic tensor.
  bool ReadsSymbolicShape() const {
    for (int i = 0; i < NumInputs(); ++i) {
      if (HasInput(i) && shape_values_.count(node_.input(i))) return true;
    }
    return (op_type() == "Shape" || op_type() == "Size") && HasInput(0) &&
           !Input(0).type().ConstShape().has_value();
  }

  graph::Expr Call(const std::string& op, std::vector<graph::Expr> args,
                   graph::Attrs attrs) override {
    std::string name = NextName();
    try {
      graph::Call call = graph::MakeCall(op, std::move(args), std::move(attrs), name);
      produced_.insert(call.get());
      produced_calls_.push_back(call);
      return call;
    } catch (const Error& e) {
      Fail(e.what());
    }
  }

  // Constants are named apart from calls, so the node's first call keeps the node's name.
  graph::Expr Const(runtime::NDArray value) override {
    int k = const_count_++;
    return graph::MakeConstant(std::move(value),
                               call_name_ + ".const" + (k == 0 ? "" : std::to_string(k)));
  }

  std::vector<graph::Expr> ImportSubgraph(const std::string& attr,
                                          const std::vector<graph::Expr>& inputs,
                                          const std::string& label) override {
    const ::onnx::GraphProto& body = AttrGraph(attr);
    if (static_cast<size_t>(body.input_size()) != inputs.size()) {
      Fail("its subgraph '" + attr + "' takes " + std::to_string(body.input_size()) +
           " input(s), the operator gives it " + std::to_string(inputs.size()));
    }
    return import_subgraph_(body, inputs, call_name_ + "/" + label);
  }

  void AddFunction(const std::string& name, graph::Function function) override {
    LOOM_ICHECK(functions_.emplace(name, std::move(function)).second)
        << Where() << ": a second function named '" << name << "'";
  }

  // Whether `message` is an error of a node in one of this node's subgraphs.
  bool NamesInnerNode(const std::string& message) const {
    return message.rfind("node ", 0) == 0 &&
           message.find(" in " + call_name_ + "/") != std::string::npos;
  }

  // Whether `call` is one this node's converter built.
  bool Produced(const graph::CallNode* call) const { return produced_.count(call) != 0; }

 private:
  std::string NextName() {
    int k = name_count_++;
    return k == 0 ? call_name_ : call_name_ + "." + std::to_string(k);
  }

  const ::onnx::NodeProto& node_;
  std::string where_;
  std::string call_name_;
  int64_t opset_;
  int64_t max_loop_iterations_;
  const std::unordered_map<std::string, graph::Expr>& values_;
  const std::unordered_map<std::string, ShapeValue>& shape_values_;
  SubgraphImporter import_subgraph_;
  std::map<std::string, graph::Function>& functions_;
  std::unordered_set<const graph::CallNode*> produced_;
  std::vector<graph::Call> produced_calls_;  // keeps the pointers in produced_ unique
  int name_count_ = 0;
  int const_count_ = 0;
};

// Folds the calls one node produced whose arguments are all constants (after folding their
// own arguments) into constants, evaluated with Loom for the host; tuple projections of
// such calls fold to the projected field.
class NodeFolder {
 public:
  explicit NodeFolder(const ImportNodeContext& ctx) : ctx_(ctx) {}

  graph::Expr Fold(const graph::Expr& expr) {
    auto it = folded_.find(expr.get());
    if (it != folded_.end()) return it->second;
    graph::Expr result = FoldNew(expr);
    folded_.emplace(expr.get(), result);
    return result;
  }

 private:
  static const Target& Host() {
    static const Target target = Target::Parse("llvm");
    return target;
  }

  graph::Expr FoldNew(const graph::Expr& expr) {
    if (const auto* call = expr.as<graph::CallNode>()) {
      if (!ctx_.Produced(call)) return expr;
      std::vector<graph::Expr> args;
      bool changed = false, all_constant = true;
      for (const graph::Expr& arg : call->args) {
        args.push_back(Fold(arg));
        changed |= !args.back().same_as(arg);
        all_constant &= args.back().as<graph::ConstantNode>() != nullptr;
      }
      graph::Call rebuilt = changed ? graph::MakeCall(call->op, args, call->attrs, call->name_hint)
                                    : Downcast<graph::Call>(expr);
      // A dequantized constant (a QDQ model's weight) stays a call here: the graph passes
      // see its integers (FoldQuantizedProducts), and FoldConstant folds what they leave.
      if (!all_constant || !call->op->compute || !call->checked_type.is_tensor() ||
          !SmallEnoughToFold(call->checked_type) || call->op->name == "qnn.dequantize") {
        return rebuilt;
      }
      // An empty result needs no evaluation (and kernels over empty tensors are not built).
      std::vector<int64_t> shape = *call->checked_type.ConstShape();
      if (IsEmpty(shape)) {
        return graph::MakeConstant(runtime::NDArray::Empty(shape, call->checked_type.dtype()),
                                   call->name_hint);
      }
      return graph::MakeConstant(EvaluateOnce(*rebuilt.get(), args).at(0), call->name_hint);
    }
    if (const auto* item = expr.as<graph::TupleGetItemNode>()) {
      graph::Expr tuple = Fold(item->tuple);
      if (const auto* fields = tuple.as<graph::TupleNode>()) return fields->fields.at(item->index);
      const auto* call = tuple.as<graph::CallNode>();
      bool all_constant = call != nullptr && call->op != nullptr && call->op->compute;
      for (size_t i = 0; all_constant && i < call->args.size(); ++i) {
        all_constant = call->args[i].as<graph::ConstantNode>() != nullptr;
      }
      if (all_constant) {
        return graph::MakeConstant(Evaluate(*call).at(static_cast<size_t>(item->index)),
                                   call->name_hint + "." + std::to_string(item->index));
      }
      return tuple.same_as(item->tuple) ? expr : graph::MakeTupleGetItem(tuple, item->index);
    }
    if (const auto* tuple = expr.as<graph::TupleNode>()) {
      std::vector<graph::Expr> fields;
      bool changed = false;
      for (const graph::Expr& field : tuple->fields) {
        fields.push_back(Fold(field));
        changed |= !fields.back().same_as(field);
      }
      return changed ? graph::MakeTuple(fields) : expr;
    }
    return expr;
  }

  static bool IsEmpty(const std::vector<int64_t>& shape) {
    return std::find(shape.begin(), shape.end(), 0) != shape.end();
  }

  // Whether a value of `type` is small enough to compute at import; a larger one (an Expand
  // or Tile of constants to a huge shape) is left for run time.
  static bool SmallEnoughToFold(const graph::Type& type) {
    std::optional<std::vector<int64_t>> shape = type.ConstShape();
    if (!shape) return false;
    int64_t bytes = static_cast<int64_t>(runtime::ElementBytes(type.dtype()));
    for (int64_t dim : *shape) {
      if (dim < 0 || __builtin_mul_overflow(bytes, dim, &bytes)) return false;
    }
    return bytes <= kMaxComputedConstantBytes;
  }

  // The outputs of `call` on its constant arguments.
  std::vector<runtime::NDArray> EvaluateOnce(const graph::CallNode& call,
                                             const std::vector<graph::Expr>& args) const {
    std::vector<runtime::NDArray> arrays;
    for (const graph::Expr& arg : args) arrays.push_back(arg.as<graph::ConstantNode>()->data);
    try {
      return graph::EvaluateCallOutputs(call, arrays, Host());
    } catch (const Error& e) {
      ctx_.Fail(std::string("folding its constant inputs failed: ") + e.what());
    }
  }

  // The outputs of a tuple-valued call (which folded_ keeps alive), computed once for all
  // its projections.
  const std::vector<runtime::NDArray>& Evaluate(const graph::CallNode& call) {
    auto [it, inserted] = evaluated_.try_emplace(&call);
    if (inserted) it->second = EvaluateOnce(call, call.args);
    return it->second;
  }

  const ImportNodeContext& ctx_;
  std::unordered_map<const Object*, graph::Expr> folded_;
  std::unordered_map<const graph::CallNode*, std::vector<runtime::NDArray>> evaluated_;
};

class Importer {
 public:
  Importer(const ::onnx::ModelProto& model, std::string external_data_dir,
           const ImportOptions& options)
      : model_(model),
        graph_(model.graph()),
        dir_(std::move(external_data_dir)),
        options_(options) {}

  ImportedModel Run() {
    LOOM_CHECK_USER(options_.max_loop_iterations >= 1)
        << "ImportOptions::max_loop_iterations must be at least 1, got "
        << options_.max_loop_iterations;
    ImportedModel result;
    ReadOpsets(&result.warnings);
    CheckNamesAreUtf8(graph_);
    CheckOperatorsSupported();
    CheckModelNodeOrder();
    result.opset = opsets_.at("");
    if (!model_.producer_name().empty()) {
      result.producer = model_.producer_name();
      if (!model_.producer_version().empty()) result.producer += " " + model_.producer_version();
    }
    ForEachNode(graph_, [&](const ::onnx::NodeProto& node, int) {
      ++result.op_counts[ConverterKey(node)];
    });

    ImportInitializers();
    std::vector<graph::Var> inputs = ImportInputs();
    for (int i = 0; i < graph_.node_size(); ++i) ImportNode(graph_.node(i), i, "");

    std::vector<graph::Expr> outputs;
    std::vector<std::string> names;
    for (const ::onnx::ValueInfoProto& output : graph_.output()) {
      if (auto shape = shape_values_.find(output.name()); shape != shape_values_.end()) {
        // A shape value the model returns: computed when it runs.
        outputs.push_back(ShapeValueTensor(
            shape->second, [this](const loom::VarNode* var) { return SizeSourceIn(values_, var); },
            output.name()));
        names.push_back(output.name());
        continue;
      }
      auto it = values_.find(output.name());
      LOOM_CHECK_USER(it != values_.end()) << "the model's output '" << output.name()
                                           << "' is not computed by any node, initializer or input";
      outputs.push_back(it->second);
      names.push_back(output.name());
    }
    LOOM_CHECK_USER(!outputs.empty()) << "the model's graph has no outputs";
    graph::Expr body = outputs.size() == 1 ? outputs[0] : graph::MakeTuple(outputs);
    result.module = graph::IRModule::FromFunction(graph::MakeFunction(inputs, body));
    for (auto& [name, function] : functions_) result.module.Add(name, function);
    result.module.SetOutputNames(names);
    return result;
  }

 private:
  void ReadOpsets(std::vector<std::string>* warnings) {
    for (const ::onnx::OperatorSetIdProto& opset : model_.opset_import()) {
      opsets_[IsDefaultDomain(opset.domain()) ? "" : opset.domain()] = opset.version();
    }
    LOOM_CHECK_USER(opsets_.count("") != 0)
        << "the model imports no opset of the default ONNX domain (opset_import lists "
        << model_.opset_import_size() << " other domains)";
    const int64_t version = opsets_.at("");
    LOOM_CHECK_USER(version >= 1) << "the model imports opset " << version
                                  << " of the default ONNX domain; opsets "
                                  << "start at 1 (the model is malformed: re-export it)";
    if (version > kNewestKnownOpset) {
      warnings->push_back("the model imports opset " + std::to_string(version) +
                          " of the default ONNX domain, newer than the newest this importer "
                          "knows (" +
                          std::to_string(kNewestKnownOpset) +
                          "): its operators are read as that opset defines them");
    }
  }

  // Every name the model gives (graph inputs, outputs, initializers, nodes and the values
  // they read and write) is UTF-8, as ONNX requires: names reach the artifact's JSON.
  void CheckNamesAreUtf8(const ::onnx::GraphProto& graph) const {
    auto check = [](const std::string& name, const std::string& what) {
      LOOM_CHECK_USER(IsUtf8(name)) << what << " has a name that is not UTF-8 (" << Escaped(name)
                                    << "); ONNX names are UTF-8 strings";
    };
    for (const ::onnx::ValueInfoProto& v : graph.input()) check(v.name(), "a graph input");
    for (const ::onnx::ValueInfoProto& v : graph.output()) check(v.name(), "a graph output");
    for (const ::onnx::TensorProto& t : graph.initializer()) check(t.name(), "an initializer");
    for (int i = 0; i < graph.node_size(); ++i) {
      const ::onnx::NodeProto& node = graph.node(i);
      const std::string where = "node #" + std::to_string(i);
      check(node.name(), where);
      check(node.op_type(), where + "'s operator type");
      for (const std::string& input : node.input()) check(input, where + "'s input");
      for (const std::string& output : node.output()) check(output, where + "'s output");
      ForEachSubgraph(node, [&](const ::onnx::GraphProto& body) { CheckNamesAreUtf8(body); });
    }
  }

  // Calls `visit` on each subgraph a node holds (If's branches, Loop's and Scan's body).
  template <typename Visit>
  static void ForEachSubgraph(const ::onnx::NodeProto& node, const Visit& visit) {
    for (const ::onnx::AttributeProto& attr : node.attribute()) {
      if (attr.has_g()) visit(attr.g());
      for (const ::onnx::GraphProto& body : attr.graphs()) visit(body);
    }
  }

  // Calls `visit(node, index)` on every node of `graph` and of the subgraphs in it.
  template <typename Visit>
  static void ForEachNode(const ::onnx::GraphProto& graph, const Visit& visit) {
    for (int i = 0; i < graph.node_size(); ++i) {
      visit(graph.node(i), i);
      ForEachSubgraph(graph.node(i),
                      [&](const ::onnx::GraphProto& body) { ForEachNode(body, visit); });
    }
  }

  int64_t OpsetOf(const ::onnx::NodeProto& node, int index) const {
    auto it = opsets_.find(IsDefaultDomain(node.domain()) ? "" : node.domain());
    LOOM_CHECK_USER(it != opsets_.end()) << NodeWhere(node, index) << ": its domain '"
                                         << node.domain() << "' is not in the model's opset_import";
    return it->second;
  }

  // One error listing every operator type without a converter (in subgraphs too), with
  // counts and node names.
  void CheckOperatorsSupported() const {
    std::map<std::string, std::vector<std::string>> missing;
    ForEachNode(graph_, [&](const ::onnx::NodeProto& node, int i) {
      std::string key = ConverterKey(node);
      if (FindConverter(key) == nullptr) missing[key].push_back(NodeLabel(node, i));
    });
    if (missing.empty()) return;
    std::ostringstream message;
    message << "the model uses " << missing.size()
            << " ONNX operator type(s) that Loom cannot import:";
    for (const auto& [type, nodes] : missing) {
      message << "\n  " << type << ": " << nodes.size() << (nodes.size() == 1 ? " node" : " nodes")
              << " (";
      for (size_t k = 0; k < nodes.size() && k < 3; ++k) message << (k ? ", " : "") << nodes[k];
      if (nodes.size() > 3) message << ", ...";
      message << ")";
    }
    LOOM_THROW << message.str();
  }

  // The model's graph in order, its initializers and inputs (each listed once) defined.
  void CheckModelNodeOrder() {
    std::unordered_set<std::string> defined;
    for (const ::onnx::TensorProto& init : graph_.initializer()) defined.insert(init.name());
    std::unordered_set<std::string> inputs;
    for (const ::onnx::ValueInfoProto& input : graph_.input()) {
      LOOM_CHECK_USER(inputs.insert(input.name()).second)
          << "the model lists the graph input '" << input.name() << "' twice";
      defined.insert(input.name());
    }
    CheckNodeOrder(graph_, std::move(defined), "");
  }

  // Every input a node of `graph` reads is `defined` (initializers, inputs, the scopes
  // around a subgraph) or defined by an earlier node (the spec's topological order), and
  // every value is defined once. Records what nodes and outputs read in used_ (a subgraph's
  // reads of outer values included).
  void CheckNodeOrder(const ::onnx::GraphProto& graph, std::unordered_set<std::string> defined,
                      const std::string& scope) {
    const std::string in_scope = scope.empty() ? "" : " in " + scope;
    for (int i = 0; i < graph.node_size(); ++i) {
      const ::onnx::NodeProto& node = graph.node(i);
      for (const std::string& input : node.input()) {
        LOOM_CHECK_USER(input.empty() || defined.count(input) != 0)
            << NodeWhere(node, i) << in_scope << " reads '" << input
            << "', which no earlier node, initializer or graph input defines (ONNX graphs "
               "list their nodes in topological order)";
        used_.insert(input);
      }
      for (const std::string& output : node.output()) {
        LOOM_CHECK_USER(output.empty() || defined.insert(output).second)
            << NodeWhere(node, i) << in_scope << " defines '" << output
            << "', which an earlier node, initializer or graph input already defines";
      }
      ForEachSubgraph(node, [&](const ::onnx::GraphProto& body) {
        ForEachNode(body, [&](const ::onnx::NodeProto& inner, int) {
          used_.insert(inner.input().begin(), inner.input().end());
        });
        for (const ::onnx::ValueInfoProto& output : body.output()) used_.insert(output.name());
      });
    }
    for (const ::onnx::ValueInfoProto& output : graph.output()) used_.insert(output.name());
  }

  // The subgraph `body` imported in `scope` with its inputs bound to `inputs`: the values
  // around it stay visible, its initializers and nodes are its own; its outputs.
  std::vector<graph::Expr> ImportSubgraph(const ::onnx::GraphProto& body,
                                          const std::vector<graph::Expr>& inputs,
                                          const std::string& scope) {
    LOOM_ICHECK(static_cast<size_t>(body.input_size()) == inputs.size())
        << scope << ": the context checked the subgraph's inputs";
    std::unordered_map<std::string, graph::Expr> outer = values_;
    std::unordered_map<std::string, ShapeValue> outer_shapes = shape_values_;
    std::unordered_set<std::string> defined;
    for (const auto& [name, value] : values_) defined.insert(name);
    for (const auto& [name, value] : shape_values_) defined.insert(name);
    for (const ::onnx::TensorProto& init : body.initializer()) {
      values_[init.name()] =
          InitializerConstant(init, "initializer '" + init.name() + "' in " + scope);
      defined.insert(init.name());
    }
    for (int k = 0; k < body.input_size(); ++k) {
      values_[body.input(k).name()] = inputs[static_cast<size_t>(k)];
      defined.insert(body.input(k).name());
    }
    std::vector<graph::Expr> outputs;
    try {
      CheckNodeOrder(body, std::move(defined), scope);
      for (int i = 0; i < body.node_size(); ++i) ImportNode(body.node(i), i, scope);
      for (const ::onnx::ValueInfoProto& output : body.output()) {
        if (auto shape = shape_values_.find(output.name()); shape != shape_values_.end()) {
          outputs.push_back(ShapeValueTensor(
              shape->second,
              [this](const loom::VarNode* var) { return SizeSourceIn(values_, var); },
              scope + "/" + output.name()));
          continue;
        }
        auto it = values_.find(output.name());
        LOOM_CHECK_USER(it != values_.end())
            << scope << ": the subgraph's output '" << output.name()
            << "' is not computed by any of its nodes, initializers or inputs";
        outputs.push_back(it->second);
      }
    } catch (...) {
      values_ = std::move(outer);
      shape_values_ = std::move(outer_shapes);
      throw;
    }
    values_ = std::move(outer);
    shape_values_ = std::move(outer_shapes);
    return outputs;
  }

  // Initializer `init` (of the model's graph or a subgraph, named in `where`) as a constant.
  graph::Constant InitializerConstant(const ::onnx::TensorProto& init,
                                      const std::string& where) const {
    runtime::NDArray array = init.data_location() == ::onnx::TensorProto::EXTERNAL
                                 ? ArrayOfTensorProto(LoadExternalData(init, dir_), where)
                                 : ArrayOfTensorProto(init, where);
    return graph::MakeConstant(array, init.name());
  }

  void ImportInitializers() {
    for (const ::onnx::TensorProto& init : graph_.initializer()) {
      values_[init.name()] = InitializerConstant(init, "initializer '" + init.name() + "'");
    }
  }

  // The model inputs that are not initializers, as variables of static shapes.
  std::vector<graph::Var> ImportInputs() {
    std::vector<const ::onnx::ValueInfoProto*> inputs;
    for (const ::onnx::ValueInfoProto& input : graph_.input()) {
      if (values_.count(input.name()) == 0) inputs.push_back(&input);
    }
    for (const auto& [name, shape] : options_.input_shapes) {
      bool known = false;
      for (const auto* input : inputs) known |= input->name() == name;
      if (known) continue;
      std::string listed;
      for (const auto* input : inputs)
        listed += (listed.empty() ? "'" : ", '") + input->name() + "'";
      LOOM_THROW << "a shape is given for '" << name << "', which is not an input of the model; "
                 << "its inputs are " << (listed.empty() ? "none" : listed);
    }
    std::vector<graph::Var> vars;
    for (const auto* input : inputs) {
      graph::Var var = graph::MakeVar(input->name(), InputType(*input));
      values_[input->name()] = var;
      vars.push_back(var);
    }
    return vars;
  }

  graph::Type InputType(const ::onnx::ValueInfoProto& input) const {
    std::string where = "model input '" + input.name() + "'";
    LOOM_CHECK_USER(input.type().has_tensor_type())
        << where << " is not a tensor (sequences, maps and optionals are not supported)";
    const ::onnx::TypeProto_Tensor& tensor = input.type().tensor_type();
    DataType dtype = DataTypeOfOnnx(tensor.elem_type(), where);
    auto bound = options_.input_shapes.find(input.name());
    if (!tensor.has_shape()) {
      LOOM_CHECK_USER(bound != options_.input_shapes.end())
          << where << " has no shape in the model; give it, for example --input-shape "
          << input.name() << "=1x3x224x224 (ImportOptions::input_shapes)";
      return CheckedTensorType(bound->second, dtype, where);
    }
    const auto& dims = tensor.shape().dim();
    std::vector<int64_t> example;
    for (const auto& dim : dims) example.push_back(dim.has_dim_value() ? dim.dim_value() : 1);
    if (bound != options_.input_shapes.end()) {
      const std::vector<int64_t>& given = bound->second;
      bool fits = static_cast<int>(given.size()) == dims.size();
      for (int d = 0; fits && d < dims.size(); ++d) {
        fits = !dims[d].has_dim_value() || dims[d].dim_value() == given[static_cast<size_t>(d)];
      }
      LOOM_CHECK_USER(fits) << "the shape " << ShapeText(given, "x") << " given for " << where
                            << " contradicts its shape in the model, " << DimsText(dims);
      return CheckedTensorType(given, dtype, where);
    }
    if (options_.symbolic_dimensions) {
      std::vector<PrimExpr> shape;
      for (int d = 0; d < dims.size(); ++d) {
        if (dims[d].has_dim_value()) {
          shape.push_back(IntImm(DataType::Int(64), dims[d].dim_value()));
          continue;
        }
        std::string name =
            dims[d].has_dim_param() ? dims[d].dim_param() : input.name() + "." + std::to_string(d);
        auto it = size_vars_.find(name);
        if (it == size_vars_.end()) {
          it = size_vars_.emplace(name, SizeVar(name, DataType::Int(64))).first;
        }
        shape.push_back(it->second);
      }
      CheckedTensorBytes(example, dtype, where);
      return graph::TensorType(shape, dtype);
    }
    for (int d = 0; d < dims.size(); ++d) {
      if (dims[d].has_dim_value()) continue;
      LOOM_THROW << where << " has the shape " << DimsText(dims) << ": dimension " << d
                 << (dims[d].has_dim_param() ? " ('" + dims[d].dim_param() + "') is symbolic"
                                             : " is unknown")
                 << "; give the input's whole shape, for example --input-shape " << input.name()
                 << "=" << ShapeText(example, "x") << " (ImportOptions::input_shapes)";
    }
    return CheckedTensorType(example, dtype, where);
  }

  // A tensor type whose size is countable: shapes derived from it cannot overflow int64.
  static graph::Type CheckedTensorType(const std::vector<int64_t>& shape, DataType dtype,
                                       const std::string& where) {
    CheckedTensorBytes(shape, dtype, where);
    return graph::TensorType(shape, dtype);
  }

  // "[batch, 3, 224, 224]"
  static std::string DimsText(
      const google::protobuf::RepeatedPtrField<::onnx::TensorShapeProto_Dimension>& dims) {
    std::string text = "[";
    for (int d = 0; d < dims.size(); ++d) {
      text += d ? ", " : "";
      text += dims[d].has_dim_value()   ? std::to_string(dims[d].dim_value())
              : dims[d].has_dim_param() ? dims[d].dim_param()
                                        : "?";
    }
    return text + "]";
  }

  // Shape arithmetic on symbolic sizes (shape_values.h), evaluated here: a result whose
  // elements are all constant is an ordinary constant. False when the node is no such
  // arithmetic.
  bool ImportShapeArithmetic(ImportNodeContext& ctx) {
    std::optional<std::vector<ShapeValue>> results;
    try {
      results = EvaluateShapeArithmetic(ctx);
    } catch (const Error& e) {
      if (std::string(e.what()).rfind(ctx.Where(), 0) == 0) throw;
      ctx.Fail(e.what());
    }
    if (!results) return false;
    const ::onnx::NodeProto& node = ctx.node();
    for (size_t k = 0; k < results->size() && k < static_cast<size_t>(node.output_size()); ++k) {
      const std::string& name = node.output(static_cast<int>(k));
      const ShapeValue& value = (*results)[k];
      std::vector<int64_t> ints;
      for (const PrimExpr& e : value.elements) {
        int64_t v = 0;
        if (IsConstInt(e, &v)) ints.push_back(v);
      }
      if (ints.size() < value.elements.size()) {
        shape_values_[name] = value;
        values_.erase(name);
        continue;
      }
      std::vector<int64_t> shape;
      if (!value.scalar) shape.push_back(static_cast<int64_t>(ints.size()));
      runtime::NDArray array = runtime::NDArray::Empty(shape, value.dtype);
      for (size_t e = 0; e < ints.size(); ++e) {
        SetIntElement(array, static_cast<int64_t>(e), ints[e]);
      }
      values_[name] = graph::MakeConstant(array, name);
      shape_values_.erase(name);
    }
    return true;
  }

  void ImportNode(const ::onnx::NodeProto& node, int index, const std::string& scope) {
    ImportNodeContext ctx(
        node, index, OpsetOf(node, index), options_.max_loop_iterations, values_, shape_values_,
        scope,
        [this](const ::onnx::GraphProto& body, const std::vector<graph::Expr>& inputs,
               const std::string& inner) { return ImportSubgraph(body, inputs, inner); },
        &functions_);
    if (ctx.ReadsSymbolicShape() && ImportShapeArithmetic(ctx)) return;
    const Converter* converter = FindConverter(ConverterKey(node));
    LOOM_ICHECK(converter != nullptr) << "CheckOperatorsSupported checked " << ctx.Where();
    Outputs outputs;
    try {
      outputs = (*converter)(ctx);
    } catch (const Error& e) {
      // Errors of helpers a converter calls directly name the node here; those of a node
      // in its subgraph name that node and where it is.
      std::string message = e.what();
      if (message.rfind(ctx.Where(), 0) == 0 || ctx.NamesInnerNode(message)) throw;
      ctx.Fail(message);
    }
    NodeFolder folder(ctx);
    for (int k = 0; k < node.output_size(); ++k) {
      const std::string& name = node.output(k);
      if (name.empty()) continue;
      if (static_cast<size_t>(k) >= outputs.size()) {
        if (used_.count(name) == 0) continue;
        ctx.Fail("the model uses its output " + std::to_string(k) + " ('" + name +
                 "'), but Loom computes only its first " + std::to_string(outputs.size()) +
                 " output(s)");
      }
      LOOM_ICHECK(outputs[k].defined() && outputs[k].type().is_tensor())
          << ctx.Where() << ": a converter returns one tensor per output";
      graph::Expr value = folder.Fold(outputs[k]);
      if (const auto* constant = value.as<graph::ConstantNode>()) {
        value = graph::MakeConstant(constant->data, name);  // named after the ONNX value
      }
      values_[name] = value;
      shape_values_.erase(name);  // a loop body's value of an earlier iteration
    }
  }

  const ::onnx::ModelProto& model_;
  const ::onnx::GraphProto& graph_;
  std::string dir_;
  const ImportOptions& options_;
  std::map<std::string, int64_t> opsets_;  // domain ("" for the default) -> version
  std::unordered_set<std::string> used_;   // values some node or the graph's outputs read
  std::unordered_map<std::string, graph::Expr> values_;
  // Values computed from symbolic shapes, which have no graph value (shape_values.h).
  std::unordered_map<std::string, ShapeValue> shape_values_;
  // The size variables of symbolic input dimensions, by name (ImportOptions::symbolic_dimensions).
  mutable std::map<std::string, loom::Var> size_vars_;
  // Functions converters add to the module (the bodies of loops run at run time).
  std::map<std::string, graph::Function> functions_;
};

ImportedModel ImportParsed(const std::string& bytes, const std::string& source,
                           const std::string& external_data_dir, const ImportOptions& options) {
  ::onnx::ModelProto model;
  LOOM_CHECK_USER(model.ParseFromString(bytes))
      << "cannot parse " << source
      << " as an ONNX model (ModelProto): it is corrupt, truncated or not an ONNX file";
  LOOM_CHECK_USER(model.has_graph() && model.graph().node_size() + model.graph().output_size() > 0)
      << source << " holds no ONNX graph: it is truncated or not an ONNX model";
  return Importer(model, external_data_dir, options).Run();
}

}  // namespace

ImportedModel ImportFile(const std::string& path, const ImportOptions& options) {
  // Read in one piece: models with inline weights run to hundreds of megabytes.
  std::error_code error;
  uintmax_t size = std::filesystem::file_size(path, error);
  std::ifstream file(path, std::ios::binary);
  LOOM_CHECK_USER(!error && file.good()) << "cannot open the ONNX model '" << path << "'";
  std::string bytes(static_cast<size_t>(size), '\0');
  file.read(bytes.data(), static_cast<std::streamsize>(size));
  LOOM_CHECK_USER(file.good() || size == 0) << "reading the ONNX model '" << path << "' failed";
  std::string dir = std::filesystem::path(path).parent_path().string();
  return ImportParsed(bytes, "'" + path + "'", dir.empty() ? "." : dir, options);
}

ImportedModel ImportBytes(const std::string& bytes, const std::string& external_data_dir,
                          const ImportOptions& options) {
  return ImportParsed(bytes, "the model bytes", external_data_dir, options);
}

}  // namespace loom::frontend::onnx
