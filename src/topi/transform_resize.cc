// resize2d: each output pixel's input coordinate, in float32, per ONNX Resize; nearest
// rounds it, linear blends the four neighbours (clamped to the image, as ONNX does).
#include <string>

#include "loom/ir/math.h"
#include "loom/topi/transform.h"
#include "topi/topi_util.h"

namespace loom::topi {

namespace {

// The input coordinate of output coordinate `out` (an axis of length `in` resized to
// `out_size`).
PrimExpr InputCoordinate(const PrimExpr& out, int64_t in, int64_t out_size,
                         ResizeCoordinates mode) {
  const DataType f32 = DataType::Float(32);
  PrimExpr o = loom::cast(f32, out);
  double scale = static_cast<double>(out_size) / in;
  switch (mode) {
    case ResizeCoordinates::kHalfPixel:
      return (o + make_const(f32, 0.5)) / make_const(f32, scale) - make_const(f32, 0.5);
    case ResizeCoordinates::kPytorchHalfPixel:
      if (out_size == 1) return make_const(f32, 0.0);
      return (o + make_const(f32, 0.5)) / make_const(f32, scale) - make_const(f32, 0.5);
    case ResizeCoordinates::kAlignCorners:
      if (out_size == 1) return make_const(f32, 0.0);
      return o * make_const(f32, static_cast<double>(in - 1) / (out_size - 1));
    case ResizeCoordinates::kAsymmetric:
      return o / make_const(f32, scale);
  }
  return PrimExpr();
}

PrimExpr Round(const PrimExpr& x, ResizeRounding rounding) {
  const DataType f32 = DataType::Float(32);
  switch (rounding) {
    case ResizeRounding::kFloor:
      return loom::floor(x);
    case ResizeRounding::kCeil:
      return loom::ceil(x);
    case ResizeRounding::kRoundPreferFloor:  // halves go down
      return loom::ceil(x - make_const(f32, 0.5));
    case ResizeRounding::kRoundPreferCeil:  // halves go up
      return loom::floor(x + make_const(f32, 0.5));
  }
  return PrimExpr();
}

PrimExpr ClampToAxis(const PrimExpr& index, int64_t in) {
  return max(min(index, int(in - 1)), 0);
}

}  // namespace

te::Tensor resize2d(const te::Tensor& x, int64_t out_h, int64_t out_w, ResizeMethod method,
                    ResizeCoordinates coordinates, ResizeRounding rounding) {
  const std::string op = "resize2d";
  LOOM_CHECK_USER(x.ndim() >= 2) << op << ": '" << x.name()
                                 << "' needs two spatial (trailing) dimensions, got "
                                 << x.ndim() << "-d";
  LOOM_CHECK_USER(out_h > 0 && out_w > 0)
      << op << ": the output size " << out_h << "x" << out_w << " must be positive";
  LOOM_CHECK_USER(method == ResizeMethod::kNearest || x.dtype().is_float())
      << op << ": linear resizing of '" << x.name() << "' needs a float tensor, got "
      << x.dtype().str();
  std::vector<int64_t> shape = detail::ConstShape(x, op);
  const int64_t H = shape[shape.size() - 2], W = shape.back();
  Array<PrimExpr> out_shape(x.shape().begin(), x.shape().end() - 2);
  out_shape.push_back(int(out_h));
  out_shape.push_back(int(out_w));
  const DataType i32 = DataType::Int(32);
  return te::compute(
      out_shape,
      [&](const Array<Var>& i) {
        Array<PrimExpr> index(i.begin(), i.end() - 2);
        PrimExpr h = InputCoordinate(i[i.size() - 2], H, out_h, coordinates);
        PrimExpr w = InputCoordinate(i.back(), W, out_w, coordinates);
        auto at = [&](const PrimExpr& row, const PrimExpr& column) {
          Array<PrimExpr> full = index;
          full.push_back(row);
          full.push_back(column);
          return x(full);
        };
        if (method == ResizeMethod::kNearest) {
          return at(ClampToAxis(loom::cast(i32, Round(h, rounding)), H),
                    ClampToAxis(loom::cast(i32, Round(w, rounding)), W));
        }
        // Linear: the coordinate clamped into the image, its floor and the fractions.
        const DataType t = x.dtype();
        PrimExpr hc = max(min(h, make_const(DataType::Float(32), double(H - 1))), make_const(DataType::Float(32), 0.0));
        PrimExpr wc = max(min(w, make_const(DataType::Float(32), double(W - 1))), make_const(DataType::Float(32), 0.0));
        PrimExpr h0 = loom::cast(i32, loom::floor(hc)), w0 = loom::cast(i32, loom::floor(wc));
        PrimExpr h1 = min(h0 + 1, int(H - 1)), w1 = min(w0 + 1, int(W - 1));
        PrimExpr fh = loom::cast(t, hc - loom::floor(hc)), fw = loom::cast(t, wc - loom::floor(wc));
        PrimExpr one = make_const(t, 1.0);
        PrimExpr top = at(h0, w0) * (one - fw) + at(h0, w1) * fw;
        PrimExpr bottom = at(h1, w0) * (one - fw) + at(h1, w1) * fw;
        return top * (one - fh) + bottom * fh;
      },
      op, "injective");
}

}  // namespace loom::topi
