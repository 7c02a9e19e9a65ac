// lower(): bound inference, loop nests, the function's parameters, simplification, then the
// TIR lowering pipeline.
#include "loom/te/lower.h"

#include <set>
#include <unordered_set>

#include "loom/ir/functor.h"
#include "loom/tir/pipeline.h"
#include "loom/tir/transform.h"
#include "te/schedule_ops.h"

namespace loom::te {

PrimFunc ScheduleToPrimFunc(const Schedule& schedule, const Array<Tensor>& args,
                            const std::string& name) {
  detail::ScheduleGraph graph = detail::BuildScheduleGraph(schedule);
  std::unordered_set<const Object*> arg_buffers;
  for (const Tensor& t : args) {
    LOOM_CHECK_USER(t.defined()) << "lower '" << name << "': an argument tensor is undefined";
    LOOM_CHECK_USER(arg_buffers.insert(t.buffer().get()).second)
        << "lower '" << name << "': tensor '" << t.name() << "' is passed twice";
  }
  std::set<const StageNode*> materialized;
  for (const Stage& stage : graph.compute_stages) {
    bool passed = false;
    for (const Buffer& b : stage->op->output_buffers) passed = passed || arg_buffers.count(b.get());
    if (stage->is_output) {
      for (const Buffer& b : stage->op->output_buffers) {
        LOOM_CHECK_USER(arg_buffers.count(b.get()))
            << "lower '" << name << "': output '" << b->name
            << "' is not among the arguments; pass every output tensor";
      }
    }
    if (!stage->is_output && !passed) continue;
    LOOM_CHECK_USER(stage->attach_type == AttachType::kRoot)
        << "lower '" << name << "': tensor '" << stage->name()
        << "' is an argument, so it is computed whole and cannot be attached with compute_at";
    LOOM_CHECK_USER(stage->scope == "global")
        << "lower '" << name << "': tensor '" << stage->name() << "' is an argument, so it "
        << "lives in its argument buffer and cannot be allocated in scope '" << stage->scope
        << "'";
    LOOM_CHECK_USER(stage->storage_alignments.empty())
        << "storage_align of stage '" << stage->name() << "': the tensor is an argument of '"
        << name << "', whose layout the caller decides; align a cache stage instead";
    materialized.insert(stage.operator->());
  }
  for (const Stage& stage : schedule.stages()) {
    LOOM_CHECK_USER(!stage->double_buffered || stage->attach_type == AttachType::kScope)
        << "double_buffer of stage '" << stage->name() << "': the stage is "
        << (stage->attach_type == AttachType::kInline ? "inlined" : "computed at the root")
        << ", not attached inside a loop; compute_at it into the loop whose iterations should "
        << "overlap its production";
  }
  BoundMap bounds = InferBound(schedule);
  Stmt body = detail::ScheduleOps(graph, bounds, materialized);

  // Every tensor the body still reads or writes through its own buffer must be a parameter.
  PostOrderVisit(body, [&](const ObjectRef& node) {
    Buffer buffer;
    if (const auto* load = node.as<BufferLoadNode>()) buffer = load->buffer;
    if (const auto* store = node.as<BufferStoreNode>()) buffer = store->buffer;
    if (!buffer.defined() || arg_buffers.count(buffer.get())) return;
    std::optional<Tensor> tensor = TensorFromBuffer(buffer);
    LOOM_CHECK_USER(!tensor.has_value())
        << "lower '" << name << "': tensor '" << buffer->name
        << "' is read but is not among the arguments; pass every placeholder the outputs use";
  });
  Array<Var> params;
  BufferMap buffer_map;
  for (const Tensor& t : args) {
    params.push_back(t.buffer()->data);
    buffer_map.emplace_back(t.buffer()->data, t.buffer());
  }
  PrimFunc func(params, buffer_map, body, DataType::Void(), {{"global_symbol", StringImm(name)}});
  return tir::transform::Simplify()(func);
}

PrimFunc lower(const Schedule& schedule, const Array<Tensor>& args, const std::string& name) {
  return tir::DefaultLoweringPipeline()(ScheduleToPrimFunc(schedule, args, name));
}

}  // namespace loom::te
