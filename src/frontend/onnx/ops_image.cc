// AffineGrid: the sampling grid of a spatial transformer. Its output's spatial sizes come from
// the `size` input: constant sizes give a constant shape, sizes only a run knows are read then
// (dims_of_value, the VM).
#include <string>
#include <vector>

#include "frontend/onnx/converter.h"

namespace loom::frontend::onnx {
namespace {

using graph::Expr;
using graph::Ints;

// theta [N, 2, 3] (or [N, 3, 4]) and size (int64 [4]: N, C, H, W; or [5]: N, C, D, H, W) give
// the grid [N, H, W, 2] (or [N, D, H, W, 3]). N is theta's; size's N and C only say what the
// grid is for.
Outputs ConvertAffineGrid(NodeContext& ctx) {
  const int64_t align_corners = ctx.AttrInt("align_corners", 0);
  if (align_corners != 0 && align_corners != 1) {
    ctx.Fail("align_corners must be 0 or 1, got " + std::to_string(align_corners));
  }
  const std::vector<int64_t> size_shape = ctx.InputShape(1);
  if (size_shape.size() != 1 || (size_shape[0] != 4 && size_shape[0] != 5) ||
      !ctx.InputDtype(1).is_int()) {
    ctx.Fail("size must be 4 or 5 integers (N, C, then H, W or D, H, W), got " +
             ctx.Input(1).type().str());
  }
  const int64_t spatial = size_shape[0] - 2;
  const graph::Type& theta = ctx.Input(0).type();
  int64_t rows = 0, columns = 0;
  if (theta.ndim() != 3 || !theta.dtype().is_float() || !IsConstInt(theta.shape()[1], &rows) ||
      !IsConstInt(theta.shape()[2], &columns) || rows != spatial || columns != spatial + 1) {
    ctx.Fail("theta must be floats [N, " + std::to_string(spatial) + ", " +
             std::to_string(spatial + 1) + "] for a size of " + std::to_string(size_shape[0]) +
             " integers, got " + theta.str());
  }
  Expr sizes;
  if (std::optional<runtime::NDArray> constant = ctx.ConstantInput(1)) {
    Ints size = ctx.ConstantInts(1);
    std::vector<int64_t> dims(size.begin() + 2, size.end());
    for (int64_t d : dims) {
      if (d < 0) ctx.Fail("size " + runtime::ShapeString(size) + " has a negative dimension");
    }
    dims.push_back(0);  // sizes carried by an empty tensor's shape, as dims_of_value's
    sizes = ctx.Const(runtime::NDArray::Empty(dims, DataType::Int(64)));
  } else {
    Expr cast = ctx.Call("cast", {ctx.Input(1)}, {{"dtype", DataType::Int(64).str()}});
    Expr spatial_sizes =
        ctx.Call("strided_slice", {cast},
                 {{"begin", Ints{2}}, {"end", Ints{2 + spatial}}, {"axes", Ints{0}}});
    sizes = SizesOfValue(ctx, spatial_sizes, spatial_sizes, kUnbounded, "size");
  }
  return {ctx.Call("affine_grid_to", {ctx.Input(0), sizes}, {{"align_corners", align_corners}})};
}

[[maybe_unused]] const bool kRegistered = [] {
  LOOM_REGISTER_ONNX_CONVERTER("AffineGrid", ConvertAffineGrid);
  return true;
}();

}  // namespace
}  // namespace loom::frontend::onnx
