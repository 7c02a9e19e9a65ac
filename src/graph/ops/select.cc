// Selections (topk, nonzero, non_max_suppression: topi/select.h loop nests) and dim_of_value,
// through which a size computed at run time enters the types: an empty tensor whose first
// dimension is a tensor's value, from which the *_like operators and topk_like / nonzero
// take their sizes like from any dimension. The VM reads the value when it runs that call
// (graph/codegen_vm.cc), checked against its bound.
#include "loom/topi/select.h"

#include <map>
#include <mutex>

#include "loom/graph/expr.h"
#include "loom/graph/op_util.h"

namespace loom::graph::ops {

namespace {

using Tensors = std::vector<te::Tensor>;

constexpr const char* kDimOfValue = "dim_of_value";

// The schedule of a group of selections: their loop nests as written.
te::Schedule AsWritten(const CallInfo&, const Tensors& outputs, const Target&) {
  Array<te::Operation> ops;
  for (const te::Tensor& t : outputs) ops.push_back(t.op());
  return te::create_schedule(ops);
}

// The size of `like` that bounds a value read at run time: its dimension `dim`, or its
// element count when dim is -1.
PrimExpr Bound(const std::vector<PrimExpr>& like, int64_t dim) {
  if (dim >= 0) return like.at(static_cast<size_t>(dim));
  PrimExpr count = make_const(DataType::Int(64), int64_t{1});
  for (const PrimExpr& d : like) count = count * cast(DataType::Int(64), d);
  return count;
}

void RegisterDimOfValue() {
  RegisterComputedOp(
      kDimOfValue,
      [](const CallInfo& info, const Tensors& in) {
        const Type& value = info.input_types[0];
        LOOM_CHECK_USER(value.dtype().is_int() && value.NumElements() == 1)
            << info.where << ": value must be an integer tensor of one element, got "
            << value.str();
        const int64_t dim = info.attrs.GetInt("like_dim");
        LOOM_CHECK_USER(dim >= -1 && dim < in[1].ndim())
            << info.where << ": like_dim " << dim << " must be -1 or a dimension of like "
            << info.input_types[1].str();
        const loom::Var size = DataDependentSize(info.attrs.GetString("size"));
        return Tensors{te::compute(
            {size, make_const(DataType::Int(64), int64_t{0})},
            [](const Array<loom::Var>&) { return make_zero(DataType::Int(64)); }, "dims", "injective")};
      })
      .Describe(
          "an empty int64 tensor (size, 0) whose first dimension `size` is value's element, read "
          "at run time, at least 0 and at most like's dimension like_dim (-1: like's element "
          "count)")
      .Inputs({"value", "like"})
      .Pattern(OpPattern::kOpaque)
      .Schedule(AsWritten)
      .Attr("size", AttrKind::kString, std::nullopt,
            "the size variable's name (one name is one variable)")
      .Attr("like_dim", AttrKind::kInt, int64_t{-1}, "like's dimension bounding the value");
}

te::Tensor LikeSize(const CallInfo& info, const te::Tensor& like) {
  LOOM_CHECK_USER(like.ndim() >= 1)
      << info.where << ": like must have a first dimension (the size), got "
      << info.input_types.back().str();
  return like;
}

void RegisterSelections() {
  auto topk = [](const CallInfo& info, const te::Tensor& x, const PrimExpr& k) {
    Array<te::Tensor> out =
        topi::topk(x, k, IntAttr(info, "axis"), info.attrs.GetInt("largest") != 0);
    return Tensors{out[0], out[1]};
  };
  auto topk_attrs = [](OpBuilder op) {
    op.Pattern(OpPattern::kOpaque)
        .Schedule(AsWritten)
        .Attr("axis", AttrKind::kInt, int64_t{-1}, "the dimension selected along")
        .Attr("largest", AttrKind::kInt, int64_t{1}, "1: the largest elements, 0: the smallest");
  };
  topk_attrs(RegisterComputedOp(
                 "topk",
                 [topk](const CallInfo& info, const Tensors& in) {
                   return topk(info, in[0],
                               make_const(DataType::Int(32), info.attrs.GetInt("k")));
                 },
                 /*tuple_output=*/true)
                 .Describe("the k largest or smallest elements along axis, sorted, and their "
                           "int64 indices (ONNX TopK)")
                 .Inputs({"data"})
                 .Attr("k", AttrKind::kInt, std::nullopt, "how many"));
  topk_attrs(RegisterComputedOp(
                 "topk_like",
                 [topk](const CallInfo& info, const Tensors& in) {
                   return topk(info, in[0], LikeSize(info, in[1]).shape()[0]);
                 },
                 /*tuple_output=*/true)
                 .Describe("topk whose k is like's first dimension (a k read at run time, "
                           "through dim_of_value)")
                 .Inputs({"data", "like"}));
  RegisterComputedOp("nonzero",
                     [](const CallInfo& info, const Tensors& in) {
                       return Tensors{topi::nonzero(in[0], LikeSize(info, in[1]).shape()[0])};
                     })
      .Describe(
          "int64 [rank, count]: the indices of data's non-zero elements, row-major, count "
          "being like's first dimension (their number, through dim_of_value)")
      .Inputs({"data", "like"})
      .Pattern(OpPattern::kOpaque)
      .Schedule(AsWritten);
  RegisterComputedOp(
      "vision.non_max_suppression",
      [](const CallInfo& info, const Tensors& in) {
        for (size_t i = 2; i < 5; ++i) {
          LOOM_CHECK_USER(info.input_types[i].ConstShape() == std::vector<int64_t>{1})
              << info.where << ": " << InputName(info, i) << " must be a tensor of shape (1,), "
              << "got " << info.input_types[i].str();
        }
        LOOM_CHECK_USER(in[2].dtype() == DataType::Int(64))
            << info.where << ": max_output_boxes_per_class must be int64";
        Array<te::Tensor> out = topi::non_max_suppression(
            in[0], in[1], in[2], in[3], in[4], info.attrs.GetInt("center_point_box") != 0);
        return Tensors{out[0], out[1], out[2]};
      },
      /*tuple_output=*/true)
      .Describe(
          "ONNX NonMaxSuppression with room for every box: (selected int64 [rows, 3], count "
          "int64 [1], the sorted candidates int64 [batches, classes, boxes] as working space); "
          "the first count rows are the selection")
      .Inputs({"boxes", "scores", "max_output_boxes_per_class", "iou_threshold",
               "score_threshold"})
      .Pattern(OpPattern::kOpaque)
      .Schedule(AsWritten)
      .Attr("center_point_box", AttrKind::kInt, int64_t{0},
            "0: boxes are (y1, x1, y2, x2); 1: (x_center, y_center, width, height)");
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterDimOfValue();
  RegisterSelections();
  return true;
}();

}  // namespace

loom::Var DataDependentSize(const std::string& name) {
  static std::mutex mutex;
  static auto* sizes = new std::map<std::string, loom::Var>();  // never destroyed, like the ops
  std::lock_guard<std::mutex> lock(mutex);
  auto it = sizes->find(name);
  if (it == sizes->end()) it = sizes->emplace(name, SizeVar(name, DataType::Int(64))).first;
  return it->second;
}

std::optional<ValueSize> ValueSizeOf(const CallNode& call) {
  if (call.op == nullptr || call.op->name != kDimOfValue) return std::nullopt;
  const std::vector<PrimExpr> like = call.args[1].type().shape();
  return ValueSize{DataDependentSize(call.attrs.GetString("size")),
                   Bound(like, call.attrs.GetInt("like_dim"))};
}

}  // namespace loom::graph::ops
