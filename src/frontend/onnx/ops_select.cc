// Selections whose output sizes may depend on values: TopK (k a run-time input), NonZero
// (as many columns as non-zero elements) and NonMaxSuppression (as many rows as boxes kept).
// A size only a run can know enters the graph through dims_of_value, whose size variable is
// named after the node; the VM reads it when the model runs.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "frontend/onnx/converter.h"

namespace loom::frontend::onnx {
namespace {

using graph::Expr;
using graph::Ints;
using runtime::NDArray;

Outputs Fields(const Expr& tuple, int count) {
  Outputs fields;
  for (int i = 0; i < count; ++i) fields.push_back(graph::MakeTupleGetItem(tuple, i));
  return fields;
}

// TopK: k is an attribute before opset 10, an input from then on; a constant k is a constant
// size, any other k is read when the model runs (between 0 and the axis's size).
Outputs ConvertTopK(NodeContext& ctx) {
  const int64_t axis = NormalizeAxis(ctx, ctx.AttrInt("axis", -1), ctx.InputRank(0));
  const int64_t largest = ctx.AttrInt("largest", 1);
  if (largest != 0 && largest != 1) ctx.Fail("largest must be 0 or 1, got " + std::to_string(largest));
  // Sorted or not, Loom returns the selection sorted (ONNX leaves the order open then).
  std::optional<int64_t> k;
  if (ctx.opset() < 10) {
    k = ctx.AttrInt("k");
  } else if (ctx.ConstantInput(1)) {
    Ints ks = ctx.ConstantInts(1);
    if (ks.size() != 1) ctx.Fail("K must hold one value, got " + std::to_string(ks.size()));
    k = ks[0];
  }
  const bool axis_constant = IsConstInt(ctx.Input(0).type().shape()[static_cast<size_t>(axis)]);
  if (k && axis_constant) {
    return Fields(ctx.Call("topk", {ctx.Input(0)}, {{"k", *k}, {"axis", axis}, {"largest", largest}}),
                  2);
  }
  // k read at run time, or a constant k over a symbolic axis: checked against the axis's size
  // when the model runs.
  Expr k_tensor = ctx.Input(1);
  if (k) {
    NDArray value = NDArray::Empty({1}, DataType::Int(64));
    SetIntElement(value, 0, *k);
    k_tensor = ctx.Const(value);
  }
  Expr dims = SizesOfValue(ctx, k_tensor, ctx.Input(0), axis, "k");
  return Fields(ctx.Call("topk_like", {ctx.Input(0), dims}, {{"axis", axis}, {"largest", largest}}),
                2);
}

// NonZero: the count of non-zero elements first (a reduction), then their indices.
Outputs ConvertNonZero(NodeContext& ctx) {
  const Expr x = ctx.Input(0);
  if (ctx.InputRank(0) == 0) ctx.Fail("a scalar input is not supported; give it one dimension");
  Expr nonzero = ctx.InputDtype(0).is_bool()
                     ? x
                     : ctx.Call("not_equal", {x, ctx.Scalar(0, ctx.InputDtype(0))});
  Expr count = ctx.Call("sum", {ctx.Call("cast", {nonzero}, {{"dtype", std::string("int64")}})},
                        {{"axis", Ints{}}, {"keepdims", int64_t{0}}});
  return {ctx.Call("nonzero", {x, SizesOfValue(ctx, count, x, kBoundByCount, "count")})};
}

// NonMaxSuppression: the selection with room for every box, then its first `count` rows.
// Absent scalars take ONNX's defaults (no boxes, no overlap allowed, no score floor).
Outputs ConvertNonMaxSuppression(NodeContext& ctx) {
  auto scalar = [&](int i, double fallback, DataType dtype, const char* name) {
    if (!ctx.HasInput(i)) {
      NDArray value = NDArray::Empty({1}, dtype);
      SetElement(value, 0, fallback);
      return ctx.Const(value);
    }
    if (ctx.InputDtype(i) != dtype) {
      ctx.Fail(std::string(name) + " must be " + dtype.str() + ", got " + ctx.InputDtype(i).str());
    }
    return ctx.Call("reshape", {ctx.Input(i)}, {{"newshape", Ints{1}}});
  };
  const int64_t center_point_box = ctx.AttrInt("center_point_box", 0);
  if (center_point_box != 0 && center_point_box != 1) {
    ctx.Fail("center_point_box must be 0 or 1, got " + std::to_string(center_point_box));
  }
  Expr selection = ctx.Call(
      "vision.non_max_suppression",
      {ctx.Input(0), ctx.Input(1),
       scalar(2, 0, DataType::Int(64), "max_output_boxes_per_class"),
       scalar(3, 0, DataType::Float(32), "iou_threshold"),
       scalar(4, -std::numeric_limits<double>::infinity(), DataType::Float(32), "score_threshold")},
      {{"center_point_box", center_point_box}});
  Outputs fields = Fields(selection, 2);  // the selection and its count
  Expr dims = SizesOfValue(ctx, fields[1], fields[0], 0, "count");
  return {ctx.Call("slice_like", {fields[0], dims},
                   {{"begin", Ints{0}}, {"end", Ints{0}}, {"axes", Ints{0}}, {"like_dims", Ints{0}}})};
}

[[maybe_unused]] const bool kRegistered = [] {
  LOOM_REGISTER_ONNX_CONVERTER("TopK", ConvertTopK);
  LOOM_REGISTER_ONNX_CONVERTER("NonZero", ConvertNonZero);
  LOOM_REGISTER_ONNX_CONVERTER("NonMaxSuppression", ConvertNonMaxSuppression);
  return true;
}();

}  // namespace
}  // namespace loom::frontend::onnx
