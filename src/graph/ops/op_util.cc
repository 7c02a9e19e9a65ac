#include "loom/graph/op_util.h"

#include "loom/topi/elementwise.h"

namespace loom::graph::ops {

TypeRelationFn BroadcastInputs() {
  return [](const CallInfo& info) {
    for (size_t i = 0; i < info.input_types.size(); ++i) {
      LOOM_CHECK_USER(info.input_types[i].is_tensor())
          << info.where << ": input " << i << " must be a tensor, got "
          << info.input_types[i].str();
    }
    const Type& first = info.input_types[0];
    Array<PrimExpr> shape = first.shape();
    for (size_t i = 1; i < info.input_types.size(); ++i) {
      const Type& t = info.input_types[i];
      LOOM_CHECK_USER(t.dtype() == first.dtype())
          << info.where << ": inputs must share one dtype, got " << first.str() << " and "
          << t.str();
      shape = topi::BroadcastShape(shape, t.shape(), info.where);
    }
    return TensorType(shape, first.dtype());
  };
}

std::string InputName(const CallInfo& info, size_t i) {
  return info.op->variadic() ? "input" + std::to_string(i) : info.op->inputs[i];
}

void RequireFloatTensor(const CallInfo& info, int index) {
  const Type& t = info.input_types[index];
  LOOM_CHECK_USER(t.is_tensor() && t.dtype().is_float())
      << info.where << ": input " << index << " ('" << InputName(info, index)
      << "') must be a float tensor, got " << t.str();
}

void RequireRank(const CallInfo& info, int index, int rank) {
  const Type& t = info.input_types[index];
  LOOM_CHECK_USER(t.is_tensor() && t.ndim() == rank)
      << info.where << ": input " << index << " ('" << InputName(info, index) << "') must be "
      << rank << "-d, got " << t.str();
}

std::vector<int64_t> ConstInputShape(const CallInfo& info, int index) {
  std::optional<std::vector<int64_t>> shape = info.input_types[index].ConstShape();
  LOOM_CHECK_USER(shape.has_value())
      << info.where << ": input " << index << " needs a constant shape, got "
      << info.input_types[index].str() << " (bind its symbolic dimensions first)";
  return *shape;
}

te::Schedule ScheduleAsWritten(const CallInfo&, const std::vector<te::Tensor>& outputs,
                               const Target&) {
  Array<te::Operation> ops;
  for (const te::Tensor& t : outputs) ops.push_back(t.op());
  return te::create_schedule(ops);
}

}  // namespace loom::graph::ops
