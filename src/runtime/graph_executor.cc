// GraphExecutor: the storage of one inference and the kernel calls over it. Every kernel's
// argument list (DLTensors pointing into the slots, the parameters and the inputs) is laid
// out once at construction, so Run is a loop of calls that allocates nothing.
#include "loom/runtime/graph_executor.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <set>

#include "loom/runtime/device_api.h"
#include "loom/runtime/thread_pool.h"
#include "loom/support/error.h"

namespace loom::runtime {

GraphExecutor::GraphExecutor(std::shared_ptr<const GraphModel> model) : model_(std::move(model)) {
  LOOM_CHECK_USER(model_ != nullptr) << "GraphExecutor: the model is null";
  LOOM_CHECK_USER(model_->module().defined())
      << "GraphExecutor: the model was described from its file (DescribeModel), not loaded; "
      << "LoadModel it to run it";
  const std::vector<size_t>& slots = model_->storages();
  const DLDevice memory = model_->memory_device();
  if (!model_->device_config().empty()) {
    // On one line: the configurations are JSON documents.
    auto one_line = [](std::string text) {
      std::string line;
      for (char c : text) {
        if (c == '\n') continue;
        if (c == ' ' && !line.empty() && (line.back() == ' ' || line.back() == '{' ||
                                          line.back() == ',')) {
          continue;
        }
        line += c;
      }
      return line;
    };
    const std::string present = GetDeviceAPI(memory.device_type)->Configuration();
    LOOM_CHECK_USER(model_->device_config() == present)
        << "GraphExecutor: the model was compiled for the " << DeviceName(memory.device_type)
        << " configuration " << one_line(model_->device_config()) << ", but this runtime's "
        << "device has " << one_line(present) << "; compile for this device's configuration, "
        << "or configure the runtime as the model was compiled";
  }
  DeviceAPI* memory_api = GetDeviceAPI(memory.device_type);
  device_memory_ = memory.device_type != kDLCPU && !memory_api->SharesHostMemory();
  const bool per_entry = device_memory_ && !memory_api->AddressableOffsets();
  auto allocate = [&](size_t bytes, const std::string& what) {
    try {
      return NDArray::Empty({static_cast<int64_t>(bytes)}, DataType::UInt(8), memory);
    } catch (const Error& error) {
      LOOM_THROW << "GraphExecutor: cannot allocate " << what << " (" << bytes << " bytes) on "
                 << DeviceName(memory.device_type) << ": " << error.what();
    }
  };
  if (per_entry) {
    std::map<std::pair<int, size_t>, size_t> sizes;
    for (const GraphEntry& e : model_->entries()) {
      if (e.storage < 0) continue;
      size_t& size = sizes[{e.storage, e.offset}];
      size = std::max(size, e.bytes);
    }
    for (const auto& [key, bytes] : sizes) {
      entry_buffers_[key] = allocate(bytes, "the tensor at storages[" +
                                                std::to_string(key.first) + "] + " +
                                                std::to_string(key.second));
    }
  } else {
    for (size_t s = 0; s < slots.size(); ++s) {
      storage_.push_back(
          allocate(slots[s], "storages[" + std::to_string(s) + "] of the memory plan"));
    }
  }
  // Device kernels read the weights from the device's memory: a copy of each there, at the
  // device's alignment (DeviceAPI::DataAlignment), uploaded once.
  if (memory.device_type != kDLCPU && !model_->params().empty()) {
    const auto* host_params = static_cast<const uint8_t*>(model_->params_data());
    if (per_entry) {
      for (const GraphParam& param : model_->params()) {
        param_buffers_.push_back(allocate(param.bytes, "a weight"));
        CopyDataFromTo(host_params + param.offset, 0, param_buffers_.back().data(), 0,
                       param.bytes, kHostDevice, memory);
      }
    } else {
      const size_t alignment = std::max<size_t>(kCPUAllocAlignment, memory_api->DataAlignment());
      size_t bytes = 0;
      for (const GraphParam& param : model_->params()) {
        device_param_offsets_.push_back(bytes);
        bytes += (param.bytes + alignment - 1) / alignment * alignment;
      }
      device_params_ = allocate(bytes, "the weights");
      for (size_t p = 0; p < model_->params().size(); ++p) {
        const GraphParam& param = model_->params()[p];
        CopyDataFromTo(host_params + param.offset, 0, device_params_.data(),
                       device_param_offsets_[p], param.bytes, kHostDevice, memory);
      }
    }
  }
  // A host kernel cannot read a GPU's memory: such a model runs every kernel on the device.
  for (const GraphKernel& kernel : model_->kernels()) {
    LOOM_CHECK_USER(!device_memory_ || kernel.device_type != kDLCPU)
        << "GraphExecutor: kernel '" << kernel.name << "' runs on the host, but the model's "
        << "tensors live on " << DeviceName(memory.device_type)
        << ", which the host cannot address; the artifact is inconsistent (compile it again)";
  }
  std::vector<void*> entry_data;
  for (size_t e = 0; e < model_->entries().size(); ++e) entry_data.push_back(EntryData(e));
  BuildCallTable(entry_data, &calls_);
}

void* GraphExecutor::EntryData(int entry) const {
  const GraphEntry& e = model_->entries()[entry];
  if (e.storage < 0) {
    if (!param_buffers_.empty()) return param_buffers_[e.param].data();
    if (device_params_.defined()) {
      return static_cast<uint8_t*>(device_params_.data()) + device_param_offsets_[e.param];
    }
    return const_cast<void*>(model_->ParamData(e));
  }
  if (!entry_buffers_.empty()) return entry_buffers_.at({e.storage, e.offset}).data();
  return static_cast<uint8_t*>(storage_[e.storage].data()) + e.offset;
}

void GraphExecutor::CopyToEntry(const void* from, DLDevice from_device, int entry,
                                size_t bytes) const {
  CopyDataFromTo(from, 0, EntryData(entry), 0, bytes, from_device, model_->memory_device());
}

void GraphExecutor::BuildCallTable(const std::vector<void*>& entry_data, CallTable* table) const {
  const std::vector<GraphEntry>& entries = model_->entries();
  table->tensors.resize(entries.size());
  for (size_t e = 0; e < entries.size(); ++e) {
    DLTensor& t = table->tensors[e];
    t = DLTensor{};
    t.data = entry_data[e];
    t.device = kHostDevice;
    t.ndim = static_cast<int32_t>(entries[e].shape.size());
    t.dtype = entries[e].dtype.to_dlpack();
    // Kernels read shapes and never write them.
    t.shape = const_cast<int64_t*>(entries[e].shape.data());
  }
  // The memory device shares the host's memory: the same data, as the device's.
  table->device_tensors = table->tensors;
  for (DLTensor& t : table->device_tensors) t.device = model_->memory_device();
  table->values.clear();
  table->codes.clear();
  table->first.clear();
  for (const GraphKernel& kernel : model_->kernels()) {
    table->first.push_back(table->values.size());
    std::vector<DLTensor>& tensors =
        kernel.device_type == kDLCPU ? table->tensors : table->device_tensors;
    for (int arg : kernel.args) {
      LoomValue value{};
      value.v_handle = &tensors[arg];
      table->values.push_back(value);
      table->codes.push_back(kLoomDLTensorHandle);
    }
  }
}

void GraphExecutor::RunKernel(const CallTable& table, size_t k) const {
  const GraphKernel& kernel = model_->kernels()[k];
  ScopedTaskLimit threads(num_threads_);
  RetValue ret;
  try {
    kernel.packed.CallPacked(PackedArgs(table.values.data() + table.first[k],
                                        table.codes.data() + table.first[k],
                                        static_cast<int>(kernel.args.size())),
                             &ret);
  } catch (const Error& error) {
    LOOM_THROW << "GraphExecutor: kernel " << k << " '" << kernel.name << "' (function '"
               << kernel.func << "') failed: " << error.what();
  }
}

int GraphExecutor::CheckIndex(const char* what, int index, size_t count) const {
  LOOM_CHECK_USER(index >= 0 && static_cast<size_t>(index) < count)
      << "GraphExecutor: " << what << " index " << index << " is out of range; the model has "
      << count << " " << what << "s";
  return index;
}

std::string GraphExecutor::InputSignature(int i) const { return ShapeString(InputShape(i)); }

int GraphExecutor::NumInputs() const { return static_cast<int>(model_->inputs().size()); }
int GraphExecutor::NumOutputs() const { return static_cast<int>(model_->outputs().size()); }

const std::string& GraphExecutor::InputName(int i) const {
  return model_->inputs()[CheckIndex("input", i, model_->inputs().size())].name;
}
const std::string& GraphExecutor::OutputName(int i) const {
  return model_->outputs()[CheckIndex("output", i, model_->outputs().size())].name;
}
const GraphEntry& GraphExecutor::InputEntry(int i) const {
  return model_->entries()[model_->inputs()[CheckIndex("input", i, NumInputs())].entry];
}
const GraphEntry& GraphExecutor::OutputEntry(int i) const {
  return model_->entries()[model_->outputs()[CheckIndex("output", i, NumOutputs())].entry];
}
std::vector<int64_t> GraphExecutor::InputShape(int i) const { return InputEntry(i).shape; }
DataType GraphExecutor::InputDtype(int i) const { return InputEntry(i).dtype; }
std::vector<int64_t> GraphExecutor::OutputShape(int i) const { return OutputEntry(i).shape; }
DataType GraphExecutor::OutputDtype(int i) const { return OutputEntry(i).dtype; }

size_t GraphExecutor::StorageBytes() const {
  size_t total = 0;
  for (const NDArray& slot : storage_) total += slot.NumBytes();
  for (const auto& [key, buffer] : entry_buffers_) total += buffer.NumBytes();
  return total;
}

void GraphExecutor::SetInput(const std::string& name, const NDArray& value) {
  for (int i = 0; i < NumInputs(); ++i) {
    if (model_->inputs()[i].name == name) return SetInput(i, value);
  }
  std::string names;
  for (const GraphIO& input : model_->inputs()) {
    names += (names.empty() ? "'" : ", '") + input.name + "'";
  }
  LOOM_THROW << "GraphExecutor::SetInput: the model has no input '" << name
             << "'; its inputs are " << (names.empty() ? "none" : names);
}

void GraphExecutor::SetInput(int index, const NDArray& value) {
  const GraphIO& input = model_->inputs()[CheckIndex("input", index, NumInputs())];
  const GraphEntry& entry = model_->entries()[input.entry];
  LOOM_CHECK_USER(value.defined())
      << "GraphExecutor::SetInput: the value for input '" << input.name << "' is undefined";
  LOOM_CHECK_USER(value.dtype() == entry.dtype)
      << "GraphExecutor::SetInput: input '" << input.name << "' expects dtype " << entry.dtype
      << ", got " << value.dtype();
  LOOM_CHECK_USER(value.Shape() == entry.shape)
      << "GraphExecutor::SetInput: input '" << input.name << "' expects shape "
      << ShapeString(entry.shape) << ", got " << ShapeString(value.Shape());
  if (device_memory_) {
    CopyDataFromTo(value.data(), value->byte_offset, EntryData(input.entry), 0, entry.bytes,
                   value.device(), model_->memory_device());
  } else {
    value.CopyToBytes(EntryData(input.entry), entry.bytes);
  }
}

void GraphExecutor::Run() {
  for (size_t k = 0; k < model_->kernels().size(); ++k) RunKernel(calls_, k);
  if (device_memory_) GetDeviceAPI(model_->memory_device().device_type)->StreamSync(model_->memory_device());
}

void GraphExecutor::SetNumThreads(int num_threads) {
  int pool = ThreadPool::Global().num_threads();
  LOOM_CHECK_USER(num_threads >= 0 && num_threads <= pool)
      << "SetNumThreads(" << num_threads << "): an executor runs on 1 to " << pool
      << " threads (the runtime's pool), or 0 for all of them; size the pool with "
      << "ThreadPool::SetGlobalThreads (LoomRuntimeSetNumThreads) before the first run for more";
  num_threads_ = num_threads;
}

NDArray GraphExecutor::GetOutput(int index) const {
  const GraphIO& output = model_->outputs()[CheckIndex("output", index, NumOutputs())];
  const GraphEntry& entry = model_->entries()[output.entry];
  if (device_memory_) {
    NDArray copy = NDArray::Empty(entry.shape, entry.dtype);
    CopyDataFromTo(EntryData(output.entry), 0, copy.data(), 0, entry.bytes,
                   model_->memory_device(), kHostDevice);
    return copy;
  }
  // A view whose deleter keeps the slot's memory alive, even past this executor.
  auto* managed = new DLManagedTensor{};
  managed->dl_tensor = calls_.tensors[output.entry];
  managed->manager_ctx = new NDArray(storage_[entry.storage]);
  managed->deleter = [](DLManagedTensor* self) {
    delete static_cast<NDArray*>(self->manager_ctx);
    delete self;
  };
  return NDArray::FromDLPack(managed);
}

std::vector<GraphExecutor::KernelTime> GraphExecutor::ProfileKernels(
    int repeat, const std::function<void(size_t kernel)>& after_kernel) {
  LOOM_CHECK_USER(repeat >= 1) << "GraphExecutor::ProfileKernels: repeat must be >= 1, got "
                               << repeat;
  size_t num_kernels = model_->kernels().size();
  std::vector<std::vector<double>> samples(num_kernels);
  for (int r = 0; r < repeat; ++r) {
    for (size_t k = 0; k < num_kernels; ++k) {
      auto start = std::chrono::steady_clock::now();
      RunKernel(calls_, k);
      if (device_memory_) {
        GetDeviceAPI(model_->memory_device().device_type)->StreamSync(model_->memory_device());
      }
      std::chrono::duration<double, std::milli> elapsed = std::chrono::steady_clock::now() - start;
      samples[k].push_back(elapsed.count());
      if (after_kernel) after_kernel(k);
    }
  }
  std::vector<KernelTime> times;
  for (size_t k = 0; k < num_kernels; ++k) {
    std::vector<double>& s = samples[k];
    std::nth_element(s.begin(), s.begin() + s.size() / 2, s.end());
    const GraphKernel& kernel = model_->kernels()[k];
    times.push_back({kernel.func, kernel.name, s[s.size() / 2]});
  }
  return times;
}

namespace {

// A file name from an entry name: graph node names may hold '/', ':' and the like.
std::string SanitizeFileName(const std::string& name) {
  std::string out;
  for (char c : name) {
    bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '_' || c == '-' || c == '.';
    out += keep ? c : '_';
  }
  if (out.empty() || out[0] == '.') out = "_" + out;
  return out;
}

}  // namespace

std::vector<GraphExecutor::Intermediate> GraphExecutor::RunKeepingIntermediates() {
  const std::vector<GraphEntry>& entries = model_->entries();
  // Every entry a kernel writes gets memory of its own; inputs and parameters stay put.
  std::vector<NDArray> own(entries.size());
  std::vector<Intermediate> produced;
  for (size_t k = 0; k < model_->kernels().size(); ++k) {
    const GraphKernel& kernel = model_->kernels()[k];
    for (size_t a = kernel.args.size() - kernel.num_outputs; a < kernel.args.size(); ++a) {
      int e = kernel.args[a];
      if (own[e].defined()) continue;
      own[e] = NDArray::Empty(entries[e].shape, entries[e].dtype, model_->memory_device());
      produced.push_back({k, e, own[e]});
    }
  }
  std::vector<void*> entry_data;
  for (size_t e = 0; e < entries.size(); ++e) {
    entry_data.push_back(own[e].defined() ? own[e].data() : EntryData(e));
  }
  CallTable table;
  BuildCallTable(entry_data, &table);
  for (size_t k = 0; k < model_->kernels().size(); ++k) RunKernel(table, k);
  for (const GraphIO& output : model_->outputs()) {
    const NDArray& value = own[output.entry];
    if (value.defined()) {
      CopyToEntry(value.data(), value.device(), output.entry, entries[output.entry].bytes);
    }
  }
  for (Intermediate& i : produced) i.value = i.value.CopyTo(kHostDevice);
  return produced;
}

void GraphExecutor::DumpIntermediates(const std::string& dir) {
  std::vector<Intermediate> produced = RunKeepingIntermediates();
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  LOOM_CHECK_USER(!error) << "GraphExecutor::DumpIntermediates: cannot create directory '"
                          << dir << "': " << error.message();
  std::set<std::string> used;
  for (const Intermediate& i : produced) {
    std::string file = SanitizeFileName(model_->entries()[i.entry].name);
    // A repeated name gets the entry id; that can meet another entry's name ("a" twice and
    // "a_5"), so suffixes grow until the name is free.
    while (!used.insert(file).second) file += "_" + std::to_string(i.entry);
    i.value.SaveNpy((std::filesystem::path(dir) / (file + ".npy")).string());
  }
}

}  // namespace loom::runtime
