// The graph executor: runs a compiled model (docs/graph_artifact.md) without the compiler.
// A GraphModel is what one compile produces -- the kernels, the execution graph parsed from
// its JSON and checked once, and the parameters -- immutable and shared; a GraphExecutor
// owns the memory of one inference (the storage slots of the static memory plan), so
// several executors of one model run concurrently on different threads.
//
//   auto model = runtime::LoadModel("model.so");
//   runtime::GraphExecutor exec(model);
//   exec.SetInput("data", image);
//   exec.Run();
//   NDArray scores = exec.GetOutput(0);
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "loom/runtime/data_type.h"
#include "loom/runtime/executor.h"
#include "loom/runtime/module.h"
#include "loom/runtime/ndarray.h"

namespace loom::runtime {

// One tensor value of the graph: in a storage slot of the executor or in the parameters.
struct GraphEntry {
  std::string name;
  std::vector<int64_t> shape;
  DataType dtype;
  size_t bytes = 0;     // NumElements * element size
  int storage = -1;     // slot index, or -1 for a parameter
  size_t offset = 0;    // byte offset in the slot, or in the parameters blob
  int param = -1;       // index into params, or -1
};

struct GraphParam {
  std::string name;
  size_t offset = 0;
  size_t bytes = 0;
};

// Where the compiler placed a layer a device could take ("vta", or "host" with the reason).
struct GraphPlacement {
  std::string layer, device, reason;
};

// A named model input or output.
struct GraphIO {
  std::string name;
  int entry = 0;
};

struct GraphKernel {
  std::string func;
  std::string name;
  std::vector<int> args;  // entry ids, outputs last
  int num_outputs = 0;
  std::vector<std::string> nodes;
  PackedFunc packed;      // `func` looked up in the model's kernels
  // Where it runs: the host (kDLCPU), or a device (its tensors are passed as the device's).
  DLDeviceType device_type = kDLCPU;
};

// The checked execution graph with its kernels and parameters. Built only by MakeGraphModel
// and LoadModel; read-only afterwards (tools print the plan from it).
class GraphModel;
namespace detail {
// MakeGraphModel, the kernel module may be undefined: a model that describes (DescribeModel)
// and does not run.
std::shared_ptr<const GraphModel> ParseGraphModel(Module kernels, const std::string& graph_json,
                                                  const void* params, size_t params_size,
                                                  std::shared_ptr<const void> params_owner);
}  // namespace detail

class GraphModel {
 public:
  const std::string& target() const { return target_; }
  // The precision it was compiled at: "float32", "bf16" or "fp16" (products of bfloat16 or
  // float16 operands).
  const std::string& precision() const { return precision_; }
  const std::vector<GraphEntry>& entries() const { return entries_; }
  const std::vector<size_t>& storages() const { return storages_; }
  const std::vector<GraphParam>& params() const { return params_; }
  const std::vector<GraphIO>& inputs() const { return inputs_; }
  const std::vector<GraphIO>& outputs() const { return outputs_; }
  const std::vector<GraphKernel>& kernels() const { return kernels_; }
  const std::vector<GraphPlacement>& placements() const { return placements_; }
  const Module& module() const { return module_; }
  // Where every tensor lives: the host, or the device of the model's device kernels (VTA's,
  // which shares the host's memory; a GPU's, whose memory the executor copies inputs to,
  // outputs from and the weights to once).
  DLDevice memory_device() const { return memory_device_; }
  // The device configuration the device kernels were compiled for (DeviceAPI::Configuration);
  // an executor refuses a device of another. Empty: any.
  const std::string& device_config() const { return device_config_; }
  // Where parameter entry `entry` lives (inside the parameters blob).
  const void* ParamData(const GraphEntry& entry) const { return params_data_ + entry.offset; }
  // The parameters blob (GraphParam::offset counts from here).
  const void* params_data() const { return params_data_; }

 private:
  friend std::shared_ptr<const GraphModel> detail::ParseGraphModel(Module, const std::string&,
                                                                   const void*, size_t,
                                                                   std::shared_ptr<const void>);
  GraphModel() = default;

  std::string target_;
  std::string precision_ = "float32";
  std::vector<GraphEntry> entries_;
  std::vector<size_t> storages_;
  std::vector<GraphParam> params_;
  std::vector<GraphIO> inputs_;
  std::vector<GraphIO> outputs_;
  std::vector<GraphKernel> kernels_;
  std::vector<GraphPlacement> placements_;
  DLDevice memory_device_{kDLCPU, 0};
  std::string device_config_;
  Module module_;
  const uint8_t* params_data_ = nullptr;
  size_t params_size_ = 0;
  std::shared_ptr<const void> params_owner_;
};

// From parts (what graph::Compile produces in process). The JSON is parsed and checked
// here: an unknown format, an id out of range, an entry that does not fit its slot or
// parameter, an unknown dtype or a kernel function missing from `kernels` is a loom::Error
// naming the field. `params` (64-byte aligned) must stay valid as long as the model:
// `params_owner` keeps it alive (null for static data).
std::shared_ptr<const GraphModel> MakeGraphModel(Module kernels, const std::string& graph_json,
                                                 const void* params, size_t params_size,
                                                 std::shared_ptr<const void> params_owner);

// From an artifact written by ExportModel: a shared library whose kernels are its functions
// and whose execution graph and parameters are the read-only data behind the symbols
// loom_graph_json, loom_params and loom_params_size. The weights are used in place (mapped
// from the file, never copied). Before the library is loaded, the file's digest is checked
// (CheckArtifact): a changed byte anywhere (a corrupt copy) is an error, not a crash in the
// loader or changed outputs. (It guards against corruption, not against a malicious author:
// an artifact is code, to be run only from trusted sources.)
std::shared_ptr<const GraphModel> LoadModel(const std::string& path);

// What LoadModel reads of an artifact, from the file alone (its dynamic symbol table and the
// bytes behind it), without loading its code: the graph and the weights, the digest checked.
// The model describes the artifact (`loom inspect`), of any architecture; it has no kernels,
// and a GraphExecutor refuses it. A file that is no model library is a loom::Error saying
// what is missing.
std::shared_ptr<const GraphModel> DescribeModel(const std::string& path);

// The digest of a model library: ContentDigest of the whole file with the 8 bytes of its
// loom_digest symbol taken as zero, stored in those bytes. SealArtifact writes it (ExportModel
// does, last); CheckArtifact verifies it, a loom::Error when the file changed.
void SealArtifact(const std::string& path);
void CheckArtifact(const std::string& path);
// A 64-bit digest of `size` bytes (multiply-rotate in four lanes, about 8 GB/s); not a
// cryptographic hash.
uint64_t ContentDigest(const void* data, size_t size);

class GraphExecutor final : public Executor {
 public:
  // Allocates every storage slot of the plan (a slot that cannot be allocated is an error
  // naming it); nothing is allocated after this.
  explicit GraphExecutor(std::shared_ptr<const GraphModel> model);
  // The call table points into this object's own vectors: moving keeps them, copying not.
  GraphExecutor(const GraphExecutor&) = delete;
  GraphExecutor& operator=(const GraphExecutor&) = delete;
  GraphExecutor(GraphExecutor&&) = default;
  GraphExecutor& operator=(GraphExecutor&&) = default;

  const GraphModel& model() const { return *model_; }
  const char* kind() const override { return "graph"; }
  int NumInputs() const override;
  int NumOutputs() const override;
  const std::string& InputName(int i) const override;
  const std::string& OutputName(int i) const override;
  std::vector<int64_t> InputShape(int i) const override;
  std::string InputSignature(int i) const override;
  DataType InputDtype(int i) const override;
  std::vector<int64_t> OutputShape(int i) const;
  DataType OutputDtype(int i) const;
  // The graph entry of an input or output; it lives as long as the model (the C API hands
  // out pointers to its shape).
  const GraphEntry& InputEntry(int i) const;
  const GraphEntry& OutputEntry(int i) const;
  // Bytes of memory this executor owns (the sum of the plan's slots).
  size_t StorageBytes() const;

  // Copies `value` into the input's storage; the name, dtype and shape are checked, with a
  // message naming the input, the expected and the given.
  void SetInput(const std::string& name, const NDArray& value) override;
  void SetInput(int index, const NDArray& value) override;
  // Runs every kernel in order and waits for a device's to finish; allocates nothing.
  void Run() override;
  // The threads this executor's kernels run on: 1 to the runtime pool's count
  // (ThreadPool::Global, sized by ThreadPool::SetGlobalThreads or LOOM_NUM_THREADS), or 0 for
  // all of them (the default). Another count is a loom::Error naming the pool's.
  void SetNumThreads(int num_threads) override;
  int num_threads() const { return num_threads_; }
  // The output: a view of the executor's storage, valid until the next Run (CopyTo to keep);
  // for a model on a device the host cannot address (a GPU), a copy on the host.
  NDArray GetOutput(int index) const override;

  // Debug: per-kernel wall time over `repeat` runs (the median), in kernel order.
  // `after_kernel`, when given, is called with each kernel's index right after it ran (what
  // a device's own counters then hold is that kernel's).
  std::vector<KernelTime> ProfileKernels(int repeat,
                                         const std::function<void(size_t kernel)>& after_kernel);
  std::vector<KernelTime> ProfileKernels(int repeat) override { return ProfileKernels(repeat, {}); }
  // Debug: runs once and returns every entry a kernel produces, on the host, in kernel
  // order, each from its own buffer: with storage sharing a later kernel may overwrite an
  // earlier value, so this mode gives every entry its own memory. The outputs are also left
  // where GetOutput reads them.
  struct Intermediate {
    size_t kernel = 0;  // the kernel that wrote it (model().kernels())
    int entry = 0;      // model().entries()
    NDArray value;
  };
  std::vector<Intermediate> RunKeepingIntermediates();
  // Debug: RunKeepingIntermediates, each written as <dir>/<entry name>.npy (names sanitized,
  // made unique with the entry id).
  void DumpIntermediates(const std::string& dir);

 private:
  // The packed arguments of every kernel call, laid out once so a run only calls.
  struct CallTable {
    std::vector<DLTensor> tensors;  // one per entry, as the host's
    std::vector<DLTensor> device_tensors;  // the same, as the memory device's (device kernels)
    std::vector<LoomValue> values;  // every kernel's args, back to back
    std::vector<int32_t> codes;
    std::vector<size_t> first;      // kernel k's args start at values[first[k]]
  };
  void BuildCallTable(const std::vector<void*>& entry_data, CallTable* table) const;
  void RunKernel(const CallTable& table, size_t k) const;
  int CheckIndex(const char* what, int index, size_t count) const;
  void* EntryData(int entry) const;

  // Copies `bytes` from `from` (on `from_device`) to entry `entry`'s memory.
  void CopyToEntry(const void* from, DLDevice from_device, int entry, size_t bytes) const;

  std::shared_ptr<const GraphModel> model_;
  // Whether the tensors live on a device the host cannot address (a GPU): inputs, outputs
  // and weights are copied there and back, and Run waits for the device.
  bool device_memory_ = false;
  std::vector<NDArray> storage_;
  // On a device whose allocations cannot be offset into (OpenCL), each planned tensor is an
  // allocation of its own, one per (storage, offset) of the plan, instead of the slots.
  std::map<std::pair<int, size_t>, NDArray> entry_buffers_;
  // The parameters in the memory device's memory, when that is not the host's: each at its
  // offset in one allocation, or (no offsets) each an allocation of its own.
  NDArray device_params_;
  std::vector<size_t> device_param_offsets_;
  std::vector<NDArray> param_buffers_;
  CallTable calls_;
  int num_threads_ = 0;
};

}  // namespace loom::runtime
