// The virtual machine: runs a compiled model whose tensor shapes are known only at run time
// (a sequence length n declared symbolic). Its program (docs/vm_artifact.md), written by the
// compiler beside the kernels and the weights, is register bytecode: load a weight, allocate
// a tensor of a shape computed from the size variables, invoke a kernel, release a tensor
// after its last use, jump (backwards too: a loop whose trip count only the run knows). The
// inputs' sizes bind the size variables; every run computes the shapes, checks each input
// against the model's signature, and takes its tensors from a pool that keeps freed buffers
// for the next allocation and the next run.
//
//   std::shared_ptr<const VmModel> model = LoadVmModel("encoder.so");
//   VirtualMachine vm(model);
//   vm.SetInput("hidden_states", x);   // [1, 37, 768] for a model of [1, n, 768]
//   vm.Run();
//   NDArray y = vm.GetOutput(0);       // [1, 37, 768]
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "loom/runtime/executor.h"
#include "loom/runtime/module.h"
#include "loom/runtime/packed_func.h"

namespace loom::runtime {

// A size as a program states it: a constant, a size variable (an input's dimension, or a value
// read from a tensor at run time: load_size), or an integer operation of two
// (a comparison, for the conditions of `if`, gives 1 or 0).
struct ShapeExpr {
  enum class Kind : uint8_t {
    kConst,
    kVar,
    kAdd,
    kSub,
    kMul,
    kFloorDiv,
    kFloorMod,
    kMin,
    kMax,
    kEq,
    kLt
  };
  Kind kind = Kind::kConst;
  int64_t value = 0;                // kConst: the value; kVar: the variable's index
  std::vector<ShapeExpr> operands;  // the two operands of an operation

  // The size with the variables at `vars` (an operation past int64, or a division by zero,
  // is a loom::Error naming `where`).
  int64_t Evaluate(const std::vector<int64_t>& vars, const std::string& where) const;
  // "n * 2"
  std::string str(const std::vector<std::string>& var_names) const;
};
using ShapeExprs = std::vector<ShapeExpr>;

struct VmInstruction {
  enum class Op : uint8_t {
    kLoadParam,
    kAlloc,
    kInvoke,
    kRelease,
    kMove,
    kIf,
    kGoto,
    kLoadSize,
    kSetSize,
    kWriteSize,
    kCopy,
    kStoreRow,
    kCheck
  };
  Op op = Op::kAlloc;
  // kLoadParam, kAlloc, kMove: the register written; kRelease: freed; kWriteSize, kCopy,
  // kStoreRow: the register whose tensor (already there) takes the values
  int dst = -1;
  // kMove: the register whose tensor dst takes; kLoadSize: read; kCopy, kStoreRow: the
  // tensor whose elements are copied
  int src = -1;
  int param = -1;  // kLoadParam
  // kLoadParam (constant), kAlloc; kMove when `reshape`: the shape dst views src's tensor at
  ShapeExprs shape;
  bool reshape = false;   // kMove: whether `shape` is given
  DataType dtype;         // kLoadParam, kAlloc
  int kernel = -1;        // kInvoke
  std::vector<int> args;  // kInvoke: registers, outputs last
  ShapeExpr cond;         // kIf: continue when non-zero, else jump to target; kCheck: must hold
  int target = -1;        // kIf, kGoto: the next instruction (any, or the count: the end)
  // kLoadSize: size variable `var` takes the value of src's integer (or bool) element `index`,
  // which must be at least 0 and, when `bounded`, at most `upper`; `name` (the kernel
  // computing it) names the tensor in errors. kSetSize: `var` takes `value`.
  int var = -1;
  int64_t index = 0;
  // kAlloc: the memory plan's storage the tensor is placed in (at its start), or -1: the
  // pool
  int storage = -1;
  bool bounded = false;
  ShapeExpr upper;
  std::string name;
  // kSetSize: the variable's new value; kWriteSize: the value dst's one element takes;
  // kStoreRow: the row of dst (along its first axis) that src's elements fill
  ShapeExpr value;
  std::string message;  // kCheck: the error when `cond` is zero (after "VirtualMachine: ")
};

struct VmKernel {
  std::string func;
  std::string name;
  PackedFunc packed;  // `func` looked up in the model's kernels
};

// A constraint declared on a size variable at compile time ("seq % 8 == 0"): a run whose
// inputs violate it is refused before anything runs.
struct VmConstraint {
  int var = -1;      // the size variable
  std::string text;  // as declared
  ShapeExpr cond;    // non-zero where it holds
};

struct VmIO {
  std::string name;
  int reg = -1;
  DataType dtype;
  ShapeExprs shape;  // inputs: the signature each input must fit; outputs: what they hold
};

class VmModel;
namespace detail {
std::shared_ptr<const VmModel> ParseVmModel(Module kernels, const std::string& program_json,
                                            const void* params, size_t params_size,
                                            std::shared_ptr<const void> params_owner);
}  // namespace detail

// The checked program with its kernels and weights; immutable and shared by the machines
// running it.
class VmModel {
 public:
  const std::string& target() const { return target_; }
  const std::string& precision() const { return precision_; }
  const std::vector<std::string>& size_vars() const { return size_vars_; }
  const std::vector<VmConstraint>& constraints() const { return constraints_; }
  const std::vector<VmIO>& inputs() const { return inputs_; }
  const std::vector<VmIO>& outputs() const { return outputs_; }
  const std::vector<VmInstruction>& instructions() const { return instructions_; }
  const std::vector<VmKernel>& kernels() const { return kernels_; }
  int num_registers() const { return num_registers_; }
  // The memory plan: per storage, its bytes (the most its tensors need at the sizes' bounds).
  const std::vector<int64_t>& storages() const { return storages_; }
  // Whether `reg` holds an input (the caller's tensor, for the whole run).
  bool IsInputRegister(int reg) const { return input_registers_[static_cast<size_t>(reg)]; }
  const Module& module() const { return module_; }
  // Where weight `param` lives in the parameters blob, and its bytes.
  const void* ParamData(int param) const { return params_data_ + param_offsets_[param]; }
  size_t ParamBytes(int param) const { return param_bytes_[param]; }
  const std::vector<std::string>& param_names() const { return param_names_; }
  // The most bytes one allocation may take (a run-time size past it is an error, not an
  // out-of-memory kill): the compile's memory limit.
  int64_t max_allocation_bytes() const { return max_allocation_bytes_; }

 private:
  friend std::shared_ptr<const VmModel> detail::ParseVmModel(Module, const std::string&,
                                                             const void*, size_t,
                                                             std::shared_ptr<const void>);
  VmModel() = default;

  std::string target_;
  std::string precision_ = "float32";
  std::vector<std::string> size_vars_;
  std::vector<VmConstraint> constraints_;
  std::vector<VmIO> inputs_, outputs_;
  std::vector<VmInstruction> instructions_;
  std::vector<VmKernel> kernels_;
  int num_registers_ = 0;
  std::vector<int64_t> storages_;
  std::vector<bool> input_registers_;
  int64_t max_allocation_bytes_ = 0;
  std::vector<std::string> param_names_;
  std::vector<size_t> param_offsets_, param_bytes_;
  Module module_;
  const uint8_t* params_data_ = nullptr;
  std::shared_ptr<const void> params_owner_;
};

// From parts (what graph::Compile produces in process): the program JSON is parsed and
// checked here (an unknown instruction, a register or kernel out of range, a register read
// before it is written, a weight outside the blob: a loom::Error naming the field).
std::shared_ptr<const VmModel> MakeVmModel(Module kernels, const std::string& program_json,
                                           const void* params, size_t params_size,
                                           std::shared_ptr<const void> params_owner);

// Whether `json` is a VM program (its "format" is the VM's), not the graph executor's.
bool IsVmProgram(const std::string& json);

// Whether the model library at `path` holds a VM program (read from the file, nothing
// loaded; its digest checked).
bool IsVmArtifact(const std::string& path);

// From an artifact written by graph::ExportModel for the VM, checked as LoadModel checks one.
std::shared_ptr<const VmModel> LoadVmModel(const std::string& path);
// What LoadVmModel reads, from the file alone, nothing loaded (`loom inspect`): a model
// without kernels, which a machine refuses.
std::shared_ptr<const VmModel> DescribeVmModel(const std::string& path);

class VirtualMachine final : public Executor {
 public:
  explicit VirtualMachine(std::shared_ptr<const VmModel> model);

  const VmModel& model() const { return *model_; }
  const char* kind() const override { return "vm"; }
  int NumInputs() const override;
  int NumOutputs() const override;
  const std::string& InputName(int i) const override;
  const std::string& OutputName(int i) const override;
  DataType InputDtype(int i) const override;
  std::vector<int64_t> InputShape(int i) const override;
  std::string InputSignature(int i) const override;
  // The input is checked against its signature when it is set (dtype, rank, constant
  // dimensions) and when the run binds the size variables (a variable two inputs give
  // different sizes, or a size below 1).
  void SetInput(const std::string& name, const NDArray& value) override;
  void SetInput(int index, const NDArray& value) override;
  void Run() override;
  void SetNumThreads(int num_threads) override;
  NDArray GetOutput(int index) const override;
  std::vector<KernelTime> ProfileKernels(int repeat) override;

  // The size variables' values in the last run, by name.
  std::map<std::string, int64_t> SizeValues() const;
  // Bytes the pool holds (in use and kept for reuse).
  size_t PoolBytes() const;
  // Bytes of the memory plan's storages (the tensors whose sizes have bounds), held for the
  // machine's lifetime.
  size_t PlannedBytes() const;

 private:
  void BindSizes();
  void Execute(std::vector<double>* kernel_ms);
  // A tensor from the pool for `instruction` (named in errors; its buffer in *buffer, for
  // Release).
  NDArray Acquire(const std::vector<int64_t>& shape, DataType dtype, const std::string& instruction,
                  NDArray* buffer);
  // The bytes of a tensor `instruction` allocates (a negative or overflowing size, or one past
  // the model's allocation limit, is an error).
  uint64_t AllocationBytes(const std::vector<int64_t>& shape, DataType dtype,
                           const std::string& instruction) const;
  // alloc with a storage (instruction n): a view of the storage, which must hold the tensor.
  NDArray InStorage(const std::vector<int64_t>& shape, DataType dtype, const VmInstruction& insn,
                    size_t n) const;
  void Release(NDArray buffer);
  // The tensor `insn` (instruction n, `op`: write_size, copy, store_row) writes into: one from
  // the pool (not a weight's or an input's).
  NDArray Writable(const VmInstruction& insn, size_t n, const char* op) const;
  // move with a shape: `src` viewed at it (at most its bytes).
  NDArray View(const NDArray& src, const VmInstruction& insn, size_t n) const;
  int CheckIndex(const char* what, int index, size_t count) const;

  std::shared_ptr<const VmModel> model_;
  std::vector<NDArray> inputs_;  // as set, one per input
  std::vector<NDArray> params_;  // the view each load_param instruction loads
  std::vector<std::string> instruction_names_;  // "instruction 7", for messages
  std::vector<NDArray> registers_;
  std::vector<NDArray> buffers_;  // each register's pool buffer, if it holds one
  std::vector<bool> in_storage_;  // whether a register holds a tensor in a storage of the plan
  std::vector<NDArray> storages_;  // the memory plan's, per storage
  size_t planned_bytes_ = 0;
  std::vector<NDArray> outputs_;  // of the last run
  std::vector<NDArray> output_buffers_;
  std::vector<int64_t> sizes_;  // the size variables of the last run
  // Freed buffers by byte size (a size class), reused by the next allocation of that size;
  // one no run has taken for kPoolIdleRuns runs is returned to the system (inputs of other
  // sizes need other buffers).
  struct FreeBuffer {
    NDArray buffer;
    uint64_t last_run = 0;
  };
  static constexpr uint64_t kPoolIdleRuns = 4;
  void TrimPool();
  std::multimap<size_t, FreeBuffer> free_;
  size_t pool_bytes_ = 0;
  uint64_t runs_ = 0;
  int num_threads_ = 0;
};

}  // namespace loom::runtime
