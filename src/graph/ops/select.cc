// Selections (topk, nonzero, non_max_suppression: topi/select.h loop nests) and
// dims_of_value, through which sizes computed at run time enter the types: an empty tensor
// whose dimensions are a tensor's values, from which the *_like operators and topk_like /
// nonzero take their sizes like from any dimension. The VM reads the values when it runs
// that call (graph/codegen_vm.cc), each checked against its bound.
#include "loom/topi/select.h"

#include <map>
#include <mutex>

#include "loom/graph/expr.h"
#include "loom/graph/op_util.h"

namespace loom::graph::ops {

namespace {

using Tensors = std::vector<te::Tensor>;

constexpr const char* kDimsOfValue = "dims_of_value";

// like_dim: the values are bounded by like's element count / by nothing.
constexpr int64_t kBoundByCount = -1, kUnbounded = -2;

// The size of `like` that bounds a value read at run time: its dimension `dim`, its element
// count (kBoundByCount), or none (kUnbounded: undefined).
PrimExpr Bound(const std::vector<PrimExpr>& like, int64_t dim) {
  if (dim == kUnbounded) return PrimExpr();
  if (dim >= 0) return like.at(static_cast<size_t>(dim));
  PrimExpr count = make_const(DataType::Int(64), int64_t{1});
  for (const PrimExpr& d : like) count = count * cast(DataType::Int(64), d);
  return count;
}

// The size variables of a dims_of_value call of `count` values: "size", or "size[i]" each.
std::vector<loom::Var> SizesNamed(const std::string& size, int64_t count) {
  std::vector<loom::Var> vars;
  for (int64_t i = 0; i < count; ++i) {
    vars.push_back(DataDependentSize(count == 1 ? size : size + "[" + std::to_string(i) + "]"));
  }
  return vars;
}

void RegisterDimsOfValue() {
  RegisterComputedOp(
      kDimsOfValue,
      [](const CallInfo& info, const Tensors& in) {
        const Type& value = info.input_types[0];
        const std::optional<int64_t> count = value.NumElements();
        LOOM_CHECK_USER(value.dtype().is_int() && value.ndim() <= 1 && count)
            << info.where << ": value must be an integer tensor of rank 0 or 1 with a constant "
            << "number of elements, got " << value.str();
        const int64_t dim = info.attrs.GetInt("like_dim");
        LOOM_CHECK_USER(dim >= kUnbounded && dim < in[1].ndim())
            << info.where << ": like_dim " << dim << " must be -2, -1 or a dimension of like "
            << info.input_types[1].str();
        Array<PrimExpr> shape;
        for (const loom::Var& size : SizesNamed(info.attrs.GetString("size"), *count)) {
          shape.push_back(size);
        }
        shape.push_back(make_const(DataType::Int(64), int64_t{0}));
        return Tensors{te::compute(
            shape, [](const Array<loom::Var>&) { return make_zero(DataType::Int(64)); }, "dims",
            "injective")};
      })
      .Describe(
          "an empty int64 tensor (v0, ..., vk, 0) whose dimensions are value's k + 1 elements, "
          "read at run time, each at least 0 and at most like's dimension like_dim (-1: like's "
          "element count, -2: no bound)")
      .Inputs({"value", "like"})
      .Pattern(OpPattern::kOpaque)
      .Schedule(ScheduleAsWritten)
      .Attr("size", AttrKind::kString, std::nullopt,
            "the size variables' name, \"size\" for one value, \"size[i]\" for several (one "
            "name is one variable)")
      .Attr("like_dim", AttrKind::kInt, kBoundByCount, "what bounds the values");
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
        .Schedule(ScheduleAsWritten)
        .Attr("axis", AttrKind::kInt, int64_t{-1}, "the dimension selected along")
        .Attr("largest", AttrKind::kInt, int64_t{1}, "1: the largest elements, 0: the smallest");
  };
  topk_attrs(RegisterComputedOp(
                 "topk",
                 [topk](const CallInfo& info, const Tensors& in) {
                   const int64_t k = info.attrs.GetInt("k");
                   LOOM_CHECK_USER(k >= 0 && k <= INT32_MAX)
                       << info.where << ": k = " << k << " must be in [0, 2^31)";
                   return topk(info, in[0], make_const(DataType::Int(32), k));
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
      .Schedule(ScheduleAsWritten);
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
          "int64 [1], int64 [batches, classes, boxes] of working space for the candidates); "
          "the first count rows are the selection")
      .Inputs({"boxes", "scores", "max_output_boxes_per_class", "iou_threshold", "score_threshold"})
      .Pattern(OpPattern::kOpaque)
      .Schedule(ScheduleAsWritten)
      .Attr("center_point_box", AttrKind::kInt, int64_t{0},
            "0: boxes are (y1, x1, y2, x2); 1: (x_center, y_center, width, height)");
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterDimsOfValue();
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

std::optional<ValueSizes> ValueSizesOf(const CallNode& call) {
  if (call.op == nullptr || call.op->name != kDimsOfValue) return std::nullopt;
  const std::vector<PrimExpr> like = call.args[1].type().shape();
  return ValueSizes{
      SizesNamed(call.attrs.GetString("size"), call.args[0].type().NumElements().value()),
      Bound(like, call.attrs.GetInt("like_dim"))};
}

}  // namespace loom::graph::ops
