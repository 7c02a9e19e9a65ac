// GraphModel: the execution graph of docs/graph_artifact.md parsed and checked once, so an
// executor can trust every id, size and offset in it. Every check that fails names the JSON
// field ("entries[3].storage") and says what was expected and what was found.
#include <dlfcn.h>
#include <link.h>

#include <nlohmann/json.hpp>

#include "loom/runtime/cpu_features.h"
#include "loom/runtime/device_api.h"
#include "loom/runtime/graph_executor.h"
#include "loom/runtime/vm.h"
#include "loom/support/error.h"
#include "runtime/artifact.h"
#include "runtime/json_checks.h"

namespace loom::runtime {

namespace {

using nlohmann::json;
using KindTest = JsonChecks::KindTest;

constexpr const char* kFormat = "loom-graph-1";
// Kernels check that their tensors are this aligned (MakePackedAPI).
constexpr size_t kDataAlignment = 64;

const JsonChecks kJson("graph JSON", "the graph");

GraphEntry ParseEntry(const json& item, size_t i, size_t num_storages, size_t num_params) {
  std::string where = "entries[" + std::to_string(i) + "]";
  kJson.Object(item, where);
  GraphEntry entry;
  entry.name = kJson.Text(item, "name", where);
  entry.dtype = kJson.ParseDtype(kJson.Text(item, "dtype", where), where);
  const json& shape = kJson.Array(item, "shape", where);
  for (size_t d = 0; d < shape.size(); ++d) {
    entry.shape.push_back(kJson.NonNegative(shape[d], where + ".shape[" + std::to_string(d) + "]"));
  }
  entry.bytes = kJson.TensorBytes(entry.shape, entry.dtype, where, entry.name);
  bool in_storage = item.contains("storage");
  LOOM_CHECK_USER(in_storage != item.contains("param"))
      << "graph JSON: " << where << " ('" << entry.name
      << "') must have exactly one of 'storage' (a slot) and 'param' (a constant)";
  if (in_storage) {
    entry.storage = kJson.Id(item, "storage", where, num_storages, "storages");
    entry.offset = static_cast<size_t>(kJson.Count(item, "offset", where));
    LOOM_CHECK_USER(entry.offset % kDataAlignment == 0)
        << "graph JSON: " << where << ".offset = " << entry.offset << " ('" << entry.name
        << "') must be a multiple of " << kDataAlignment << " bytes (kernels need aligned data)";
  } else {
    entry.param = kJson.Id(item, "param", where, num_params, "params");
  }
  return entry;
}

GraphKernel ParseKernel(const json& item, size_t k, const std::vector<GraphEntry>& entries,
                        const std::vector<bool>& is_input, const Module& module) {
  std::string where = "kernels[" + std::to_string(k) + "]";
  kJson.Object(item, where);
  GraphKernel kernel;
  kernel.func = kJson.Text(item, "func", where);
  kernel.name = item.contains("name") ? kJson.Text(item, "name", where) : kernel.func;
  const json& args = kJson.Array(item, "args", where);
  for (size_t a = 0; a < args.size(); ++a) {
    std::string field = where + ".args[" + std::to_string(a) + "]";
    int64_t arg = kJson.NonNegative(args[a], field);
    LOOM_CHECK_USER(static_cast<uint64_t>(arg) < entries.size())
        << "graph JSON: " << field << " = " << arg << " is not an entry id (the graph has "
        << entries.size() << " entries)";
    kernel.args.push_back(static_cast<int>(arg));
  }
  // Checked before narrowing to int, so 2^32 + 1 cannot pass as 1.
  int64_t num_outputs = kJson.Count(item, "num_outputs", where);
  LOOM_CHECK_USER(num_outputs >= 1 && static_cast<uint64_t>(num_outputs) <= args.size())
      << "graph JSON: " << where << ".num_outputs = " << num_outputs << " ('" << kernel.name
      << "') must be between 1 and the number of args (" << args.size() << ")";
  kernel.num_outputs = static_cast<int>(num_outputs);
  for (size_t a = args.size() - kernel.num_outputs; a < args.size(); ++a) {
    const GraphEntry& out = entries[kernel.args[a]];
    LOOM_CHECK_USER(out.storage >= 0 && !is_input[kernel.args[a]])
        << "graph JSON: " << where << ".args[" << a << "] = " << kernel.args[a] << " ('"
        << out.name << "') is an output of kernel '" << kernel.name << "' but is a "
        << (out.storage < 0 ? "parameter" : "model input") << ", which kernels only read";
  }
  if (item.contains("device_type")) {
    const int64_t type = kJson.Count(item, "device_type", where);
    LOOM_CHECK_USER(type != kDLCPU)
        << "graph JSON: " << where << ".device_type = " << type << " ('" << kernel.name
        << "') is the host's; only a device's kernel has a device_type";
    LOOM_CHECK_USER(FindDeviceAPI(static_cast<DLDeviceType>(type)) != nullptr)
        << "graph JSON: " << where << ".device_type = " << type << " ('" << kernel.name
        << "') is not a device this runtime has (" << DeviceName(static_cast<DLDeviceType>(type))
        << "); link or load the device's library (libloom_vta for VTA)";
    kernel.device_type = static_cast<DLDeviceType>(type);
  }
  if (item.contains("nodes")) {
    const json& nodes = kJson.Array(item, "nodes", where);
    for (size_t n = 0; n < nodes.size(); ++n) {
      LOOM_CHECK_USER(nodes[n].is_string()) << "graph JSON: " << where << ".nodes[" << n
                                            << "] must be a string, got " << kJson.Shown(nodes[n]);
      kernel.nodes.push_back(nodes[n].get<std::string>());
    }
  }
  if (!module.defined()) return kernel;  // described, not loaded: no code to find
  kernel.packed = module.GetFunction(kernel.func, /*query_imports=*/true);
  LOOM_CHECK_USER(kernel.packed.defined())
      << "graph JSON: " << where << ".func: kernel '" << kernel.name << "' calls function '"
      << kernel.func << "', which " << module->description()
      << " does not define; the graph and the kernels come from different compiles";
  return kernel;
}

// Kernels run in the listed order, so every value a kernel reads and every model output must
// be a parameter, a model input or written by an earlier kernel.
void CheckDefinedBeforeUse(const GraphModel& model) {
  std::vector<bool> defined(model.entries().size(), false);
  for (size_t e = 0; e < defined.size(); ++e) defined[e] = model.entries()[e].param >= 0;
  for (const GraphIO& input : model.inputs()) defined[input.entry] = true;
  for (size_t k = 0; k < model.kernels().size(); ++k) {
    const GraphKernel& kernel = model.kernels()[k];
    size_t num_inputs = kernel.args.size() - kernel.num_outputs;
    for (size_t a = 0; a < num_inputs; ++a) {
      const GraphEntry& entry = model.entries()[kernel.args[a]];
      LOOM_CHECK_USER(defined[kernel.args[a]])
          << "graph JSON: kernels[" << k << "].args[" << a << "] = " << kernel.args[a] << " ('"
          << entry.name << "') is read by kernel '" << kernel.name
          << "' before any kernel writes it (kernels are listed in execution order)";
    }
    for (size_t a = num_inputs; a < kernel.args.size(); ++a) defined[kernel.args[a]] = true;
  }
  for (size_t i = 0; i < model.outputs().size(); ++i) {
    const GraphIO& output = model.outputs()[i];
    LOOM_CHECK_USER(defined[output.entry])
        << "graph JSON: outputs[" << i << "].entry = " << output.entry << " ('" << output.name
        << "') is written by no kernel";
  }
}

// Lifetimes are the compiler's business; what the executor relies on is that nothing but a
// kernel writes a slot, and that inputs and outputs are not overwritten by other entries.
void CheckPlan(const GraphModel& model, const std::vector<GraphIO>& inputs,
               const std::vector<GraphIO>& outputs) {
  std::vector<int> entries_in_slot(model.storages().size(), 0);
  for (const GraphEntry& entry : model.entries()) {
    if (entry.storage >= 0) ++entries_in_slot[entry.storage];
  }
  auto check_own_slot = [&](const GraphIO& io, const char* list, size_t i) {
    const GraphEntry& entry = model.entries()[io.entry];
    std::string where = std::string(list) + "[" + std::to_string(i) + "].entry";
    LOOM_CHECK_USER(entry.storage >= 0)
        << "graph JSON: " << where << " = " << io.entry << " ('" << io.name
        << "') is a parameter; inputs and outputs must live in storage slots";
    LOOM_CHECK_USER(entries_in_slot[entry.storage] == 1)
        << "graph JSON: " << where << " = " << io.entry << " ('" << io.name << "') lives in "
        << "storages[" << entry.storage << "], which " << entries_in_slot[entry.storage] - 1
        << " other entries share; inputs and outputs need slots of their own";
  };
  for (size_t i = 0; i < inputs.size(); ++i) check_own_slot(inputs[i], "inputs", i);
  for (size_t i = 0; i < outputs.size(); ++i) check_own_slot(outputs[i], "outputs", i);
}

}  // namespace

std::shared_ptr<const GraphModel> MakeGraphModel(Module kernels, const std::string& graph_json,
                                                 const void* params, size_t params_size,
                                                 std::shared_ptr<const void> params_owner) {
  LOOM_CHECK_USER(kernels.defined()) << "MakeGraphModel: the kernel module is undefined";
  return detail::ParseGraphModel(std::move(kernels), graph_json, params, params_size,
                                 std::move(params_owner));
}

std::shared_ptr<const GraphModel> detail::ParseGraphModel(
    Module kernels, const std::string& graph_json, const void* params, size_t params_size,
    std::shared_ptr<const void> params_owner) {
  detail::CheckParamsBlob("MakeGraphModel", params, params_size);
  json doc = kJson.Parse(graph_json);
  kJson.Object(doc, "the document");
  std::string format = kJson.Text(doc, "format", "the document");
  LOOM_CHECK_USER(format == kFormat) << "graph JSON: unknown format '" << format
                                     << "'; this runtime reads '" << kFormat << "'";

  std::shared_ptr<GraphModel> model(new GraphModel());
  model->module_ = std::move(kernels);
  model->params_data_ = static_cast<const uint8_t*>(params);
  model->params_size_ = params_size;
  model->params_owner_ = std::move(params_owner);
  if (doc.contains("target")) {
    model->target_ = kJson.Text(doc, "target", "the document");
    // Only a model that runs needs this CPU's features.
    if (model->module_.defined()) CheckCpuFeatures(model->target_);
  }
  if (doc.contains("precision")) model->precision_ = kJson.Text(doc, "precision", "the document");

  const json& storages = kJson.Array(doc, "storages", "the document");
  for (size_t i = 0; i < storages.size(); ++i) {
    std::string where = "storages[" + std::to_string(i) + "]";
    model->storages_.push_back(
        static_cast<size_t>(kJson.Count(kJson.Object(storages[i], where), "bytes", where)));
  }
  const json& params_json = kJson.Array(doc, "params", "the document");
  for (size_t i = 0; i < params_json.size(); ++i) {
    std::string where = "params[" + std::to_string(i) + "]";
    kJson.Object(params_json[i], where);
    GraphParam param{kJson.Text(params_json[i], "name", where),
                     static_cast<size_t>(kJson.Count(params_json[i], "offset", where)),
                     static_cast<size_t>(kJson.Count(params_json[i], "bytes", where))};
    LOOM_CHECK_USER(param.offset % kDataAlignment == 0)
        << "graph JSON: " << where << ".offset = " << param.offset << " ('" << param.name
        << "') must be a multiple of " << kDataAlignment << " bytes";
    LOOM_CHECK_USER(param.offset <= params_size && param.bytes <= params_size - param.offset)
        << "graph JSON: " << where << " ('" << param.name << "') spans bytes " << param.offset
        << " to " << param.offset + param.bytes << " but the parameters blob has "
        << params_size << " bytes";
    model->params_.push_back(std::move(param));
  }
  const json& entries = kJson.Array(doc, "entries", "the document");
  for (size_t i = 0; i < entries.size(); ++i) {
    GraphEntry entry = ParseEntry(entries[i], i, model->storages_.size(), model->params_.size());
    std::string where = "entries[" + std::to_string(i) + "]";
    if (entry.storage >= 0) {
      size_t slot = model->storages_[entry.storage];
      LOOM_CHECK_USER(entry.offset <= slot && entry.bytes <= slot - entry.offset)
          << "graph JSON: " << where << " ('" << entry.name << "', " << entry.dtype
          << ShapeString(entry.shape) << ", " << entry.bytes << " bytes at offset "
          << entry.offset << ") does not fit storages[" << entry.storage << "] of " << slot
          << " bytes";
    } else {
      const GraphParam& param = model->params_[entry.param];
      LOOM_CHECK_USER(entry.bytes <= param.bytes)
          << "graph JSON: " << where << " ('" << entry.name << "', " << entry.dtype
          << ShapeString(entry.shape) << ") needs " << entry.bytes << " bytes but params["
          << entry.param << "] ('" << param.name << "') has " << param.bytes;
      entry.offset = param.offset;
    }
    model->entries_.push_back(std::move(entry));
  }

  size_t num_entries = model->entries_.size();
  auto parse_io = [&](const char* list, std::vector<GraphIO>* out) {
    const json& items = kJson.Array(doc, list, "the document");
    for (size_t i = 0; i < items.size(); ++i) {
      std::string where = std::string(list) + "[" + std::to_string(i) + "]";
      kJson.Object(items[i], where);
      GraphIO io{kJson.Text(items[i], "name", where),
                 kJson.Id(items[i], "entry", where, num_entries, "entries")};
      // Executors (and the C API) find inputs by name: a repeated name would hide one.
      for (size_t j = 0; j < out->size(); ++j) {
        LOOM_CHECK_USER((*out)[j].name != io.name)
            << "graph JSON: " << where << ".name '" << io.name << "' repeats " << list << "["
            << j << "].name; " << list << " need distinct names";
      }
      out->push_back(std::move(io));
    }
  };
  parse_io("inputs", &model->inputs_);
  parse_io("outputs", &model->outputs_);
  CheckPlan(*model, model->inputs_, model->outputs_);

  std::vector<bool> is_input(num_entries, false);
  for (const GraphIO& input : model->inputs_) is_input[input.entry] = true;
  const json& kernels_json = kJson.Array(doc, "kernels", "the document");
  for (size_t k = 0; k < kernels_json.size(); ++k) {
    model->kernels_.push_back(
        ParseKernel(kernels_json[k], k, model->entries_, is_input, model->module_));
  }
  CheckDefinedBeforeUse(*model);
  for (const GraphKernel& kernel : model->kernels_) {
    if (kernel.device_type == kDLCPU) continue;
    LOOM_CHECK_USER(model->memory_device_.device_type == kDLCPU ||
                    model->memory_device_.device_type == kernel.device_type)
        << "graph JSON: kernels run on two devices, "
        << DeviceName(model->memory_device_.device_type) << " and "
        << DeviceName(kernel.device_type) << "; a model has one device besides the host";
    model->memory_device_ = {kernel.device_type, 0};
  }
  if (doc.contains("placements")) {
    const json& placements = kJson.Array(doc, "placements", "the document");
    for (size_t i = 0; i < placements.size(); ++i) {
      const std::string where = "placements[" + std::to_string(i) + "]";
      kJson.Object(placements[i], where);
      model->placements_.push_back({kJson.Text(placements[i], "layer", where),
                                    kJson.Text(placements[i], "device", where),
                                    kJson.Text(placements[i], "reason", where)});
    }
  }
  if (doc.contains("device_config") && model->memory_device_.device_type != kDLCPU) {
    model->device_config_ = kJson.Text(doc, "device_config", "the document");
  }
  return model;
}

namespace {

// The address of data symbol `name` defined by the library `handle` itself (dlsym alone
// would also find a symbol of that name in the library's dependencies), or null.
const void* FindOwnData(void* handle, const char* name) {
  void* symbol = dlsym(handle, name);
  if (symbol == nullptr) return nullptr;
  struct link_map* own = nullptr;
  struct link_map* owner = nullptr;
  Dl_info info{};
  if (dlinfo(handle, RTLD_DI_LINKMAP, &own) != 0 ||
      dladdr1(symbol, &info, reinterpret_cast<void**>(&owner), RTLD_DL_LINKMAP) == 0) {
    return nullptr;
  }
  return owner == own ? symbol : nullptr;
}

}  // namespace

void detail::CheckParamsBlob(const char* api, const void* params, size_t params_size) {
  LOOM_CHECK_USER(params_size == 0 || params != nullptr)
      << api << ": the parameters are null but params_size is " << params_size;
  LOOM_CHECK_USER(reinterpret_cast<uintptr_t>(params) % kDataAlignment == 0)
      << api << ": the parameters blob must be " << kDataAlignment << "-byte aligned, got address "
      << params;
}

detail::ArtifactData detail::LoadArtifact(const std::string& path, const std::string& api) {
  // The file, then its digest: a corrupt library must not reach the dynamic loader.
  CheckLibraryFile(path);
  CheckArtifact(path);
  ArtifactData data;
  // Checks the file and points the library's backend-service globals at this runtime.
  data.kernels = LoadModuleFromFile(path);
  // The same library again (already loaded: this only takes a reference) to read its data.
  std::string open_path = path.find('/') == std::string::npos ? "./" + path : path;
  void* handle = dlopen(open_path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  LOOM_ICHECK(handle != nullptr) << "the library LoadModuleFromFile just loaded is not loaded: "
                                 << dlerror();
  std::shared_ptr<void> library(handle, [](void* h) { dlclose(h); });
  auto require = [&](const char* symbol) {
    const void* address = FindOwnData(handle, symbol);
    LOOM_CHECK_USER(address != nullptr)
        << api << "('" << path << "'): the library has no symbol '" << symbol
        << "': it holds kernels but no model; load a model library written by ExportModel "
        << "(loom compile), or load kernels alone with LoadModuleFromFile";
    return address;
  };
  data.program = static_cast<const char*>(require("loom_graph_json"));
  data.params = require("loom_params");
  data.params_size = *static_cast<const uint64_t*>(require("loom_params_size"));
  data.params_owner = library;
  return data;
}

std::shared_ptr<const GraphModel> LoadModel(const std::string& path) {
  detail::ArtifactData data = detail::LoadArtifact(path, "LoadModel");
  LOOM_CHECK_USER(!IsVmProgram(data.program))
      << "LoadModel('" << path << "'): the model runs on the virtual machine (its shapes are "
      << "computed at run time); load it with LoadExecutor or LoadVmModel";
  try {
    return MakeGraphModel(std::move(data.kernels), data.program, data.params, data.params_size,
                          data.params_owner);
  } catch (const Error& error) {
    LOOM_THROW << "LoadModel('" << path << "'): " << error.what();
  }
}

}  // namespace loom::runtime
