// Reductions (ONNX ReduceSum, ReduceMean, ..., ArgMax / ArgMin): topi computes scheduled by
// the generic reduction schedule (ScheduleGroup's default for kCommReduce).
#include "loom/topi/reduction.h"

#include "loom/graph/op_util.h"

namespace loom::graph::ops {
namespace {

using Tensors = std::vector<te::Tensor>;
using ReduceFn = te::Tensor (*)(const te::Tensor&, const std::vector<int>&, bool);
using ArgReduceFn = te::Tensor (*)(const te::Tensor&, int, bool, bool);

void RegisterReduce(const std::string& name, ReduceFn fn, const std::string& doc) {
  RegisterComputedOp(
      name,
      [fn](const CallInfo& info, const Tensors& in) {
        return Tensors{fn(in[0], IntsAttr(info, "axis"), info.attrs.GetInt("keepdims") != 0)};
      })
      .Describe(doc)
      .Inputs({"data"})
      .Pattern(OpPattern::kCommReduce)
      .Attr("axis", AttrKind::kInts, Ints{},
            "reduced dimensions (negative from the end; none: all)")
      .Attr("keepdims", AttrKind::kInt, int64_t{0}, "1: reduced dimensions stay as 1");
}

void RegisterArgReduce(const std::string& name, ArgReduceFn fn, const std::string& doc) {
  RegisterComputedOp(
      name,
      [fn](const CallInfo& info, const Tensors& in) {
        return Tensors{fn(in[0], IntAttr(info, "axis"), info.attrs.GetInt("keepdims") != 0,
                          info.attrs.GetInt("select_last_index") != 0)};
      })
      .Describe(doc)
      .Inputs({"data"})
      .Pattern(OpPattern::kCommReduce)
      .Attr("axis", AttrKind::kInt, int64_t{0}, "the reduced dimension")
      .Attr("keepdims", AttrKind::kInt, int64_t{1}, "1: the reduced dimension stays as 1")
      .Attr("select_last_index", AttrKind::kInt, int64_t{0}, "1: ties take the last index");
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterReduce("sum", topi::sum, "sum over axis");
  RegisterReduce("mean", topi::mean, "mean over axis");
  RegisterReduce("max", topi::max, "maximum over axis");
  RegisterReduce("min", topi::min, "minimum over axis");
  RegisterReduce("prod", topi::prod, "product over axis");
  RegisterReduce("logsumexp", topi::logsumexp, "log(sum(exp(x))) over axis");
  RegisterReduce("l1_norm", topi::l1_norm, "sum(|x|) over axis (ONNX ReduceL1)");
  RegisterReduce("l2_norm", topi::l2_norm, "sqrt(sum(x^2)) over axis (ONNX ReduceL2)");
  RegisterReduce("sum_square", topi::sum_square, "sum(x^2) over axis (ONNX ReduceSumSquare)");
  RegisterArgReduce("argmax", topi::argmax, "int64 index of the largest element along axis");
  RegisterArgReduce("argmin", topi::argmin, "int64 index of the smallest element along axis");
  return true;
}();

}  // namespace
}  // namespace loom::graph::ops
