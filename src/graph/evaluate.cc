#include "loom/graph/evaluate.h"

#include <mutex>
#include <unordered_map>

#include "graph/attrs_key.h"
#include "loom/graph/op_util.h"
#include "loom/runtime/module.h"
#include "loom/target/build.h"
#include "loom/te/lower.h"

namespace loom::graph {

namespace {

// The type of `array`, checked against the type of the call's argument `index`: equal dtype
// and rank, and equal dimensions where the argument's are constant.
Type ConcreteInputType(const CallNode& call, size_t index, const runtime::NDArray& array) {
  const Type& declared = call.args[index].type();
  LOOM_CHECK_USER(array.defined()) << call.Where() << ": no array for input " << index;
  Type concrete = TensorType(array.Shape(), array.dtype());
  bool fits = declared.is_tensor() && declared.dtype() == concrete.dtype() &&
              declared.ndim() == concrete.ndim();
  for (int d = 0; fits && d < declared.ndim(); ++d) {
    int64_t dim = 0;
    fits = !IsConstInt(declared.shape()[d], &dim) || dim == array.Shape()[d];
  }
  LOOM_CHECK_USER(fits) << call.Where() << ": input " << index << " takes " << declared.str()
                        << ", got an array " << concrete.str();
  return concrete;
}

// What determines the kernel of a call: its operator, attributes, input types and the
// target.
std::string KernelKey(const CallInfo& info, const Target& target) {
  std::string key = info.op->name + "(";
  for (const Type& type : info.input_types) key += type.str() + ";";
  return key + ")" + AttrsKey(info.attrs) + target.str();
}

// The compiled kernel of `info`'s call, from a process-wide cache: constant folding compiles
// the same few calls over and over (a model's batch norms of one width share theirs).
runtime::Module CompiledKernel(const CallInfo& info, const Target& target) {
  static constexpr size_t kMaxKernels = 1024;
  static std::mutex mutex;
  // Never destroyed, like the operator registry: no JIT session is torn down at exit.
  static auto* kernels = new std::unordered_map<std::string, runtime::Module>();
  std::string key = KernelKey(info, target);
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = kernels->find(key);
    if (it != kernels->end()) return it->second;
  }
  std::vector<te::Tensor> placeholders = ops::InputPlaceholders(info);
  std::vector<te::Tensor> outputs = info.op->compute(info, placeholders);
  size_t expected = info.output_type.is_tuple() ? info.output_type.fields().size() : 1;
  LOOM_ICHECK(outputs.size() == expected) << info.where << ": the compute gives " << outputs.size()
                                          << " tensors for the type " << info.output_type.str();
  te::Schedule schedule = ScheduleGroup(info, outputs, target);
  Array<te::Tensor> params(placeholders.begin(), placeholders.end());
  params.insert(params.end(), outputs.begin(), outputs.end());
  runtime::Module module = build(te::lower(schedule, params, "evaluate"), target);
  std::lock_guard<std::mutex> lock(mutex);
  if (kernels->size() >= kMaxKernels) kernels->clear();
  kernels->emplace(std::move(key), module);
  return module;
}

}  // namespace

std::vector<runtime::NDArray> EvaluateCallOutputs(const CallNode& call,
                                                  const std::vector<runtime::NDArray>& inputs,
                                                  const Target& target) {
  LOOM_ICHECK(call.op) << "EvaluateCall of a call of a fused function";
  LOOM_CHECK_USER(inputs.size() == call.args.size())
      << call.Where() << ": evaluated with " << inputs.size() << " arrays for " << call.args.size()
      << " inputs";
  LOOM_CHECK_USER(call.op->compute)
      << call.Where() << ": " << call.op->name << " has no compute, so it cannot be evaluated";
  CallInfo info;
  info.op = call.op;
  info.attrs = call.attrs;
  info.where = call.Where();
  for (size_t i = 0; i < inputs.size(); ++i) {
    info.input_types.push_back(ConcreteInputType(call, i, inputs[i]));
  }
  info.output_type = call.op->type_relation(info);

  std::vector<Type> output_types =
      info.output_type.is_tuple() ? info.output_type.fields() : std::vector<Type>{info.output_type};
  // The arrays are the host's: a device whose memory the host cannot address (a GPU)
  // evaluates on its host instead.
  runtime::Module module =
      CompiledKernel(info, target.kind_def().opaque_memory ? target.host() : target);

  std::vector<runtime::NDArray> results;
  for (const Type& type : output_types) {
    std::optional<std::vector<int64_t>> shape = type.ConstShape();
    LOOM_ICHECK(shape) << call.Where() << ": output type " << type.str()
                       << " is not constant for constant-shaped inputs";
    results.push_back(runtime::NDArray::Empty(*shape, type.dtype()));
  }
  std::vector<runtime::NDArray> args = inputs;
  args.insert(args.end(), results.begin(), results.end());
  module.GetRequiredFunction("evaluate").CallWithArrays(args);
  return results;
}

runtime::NDArray EvaluateCall(const CallNode& call, const std::vector<runtime::NDArray>& inputs,
                              const Target& target) {
  LOOM_ICHECK(call.checked_type.is_tensor())
      << call.Where() << " returns a tuple " << call.checked_type.str()
      << ": evaluate it with EvaluateCallOutputs";
  return EvaluateCallOutputs(call, inputs, target).front();
}

}  // namespace loom::graph
