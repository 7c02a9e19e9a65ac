// resize2d: each output pixel's input coordinate, per ONNX Resize (float32, or float64 for
// tf_crop_and_resize, evaluated in the order of ONNX's reference so that a coordinate on the
// input's last pixel is exactly that); nearest rounds it, linear blends the 2 x 2 neighbours
// (the coordinate clamped to the image, as ONNX does), cubic the 4 x 4 ones (Keys kernel,
// edge pixels repeated outside the image).
#include <array>
#include <string>
#include <utility>

#include "loom/ir/math.h"
#include "loom/topi/transform.h"
#include "topi/topi_util.h"

namespace loom::topi {

namespace {

// The input coordinate of output coordinate `out` (an axis of length `in` resized to
// `out_size`); roi_start and roi_end are the axis's region for kTfCropAndResize.
PrimExpr InputCoordinate(const PrimExpr& out, int64_t in, int64_t out_size,
                         ResizeCoordinates mode, double roi_start, double roi_end) {
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
    case ResizeCoordinates::kTfCropAndResize: {
      const DataType f64 = DataType::Float(64);
      PrimExpr start = make_const(f64, roi_start * double(in - 1));
      if (out_size == 1) return make_const(f64, (roi_end - roi_start) * double(in - 1) / 2) + start;
      return loom::cast(f64, out) * make_const(f64, roi_end - roi_start) *
                 make_const(f64, double(in - 1)) / make_const(f64, double(out_size - 1)) +
             start;
    }
  }
  return PrimExpr();
}

// The Keys cubic kernel's weights of the taps floor(x) - 1 .. floor(x) + 2 at fraction
// `ratio` = x - floor(x) (ONNX's cubic coefficients).
std::array<PrimExpr, 4> CubicWeights(const PrimExpr& ratio, double a) {
  DataType t = ratio.dtype();
  auto c = [&](double v) { return make_const(t, v); };
  auto far = [&](const PrimExpr& d) {  // a tap 1 to 2 away
    return ((c(a) * d - c(5 * a)) * d + c(8 * a)) * d - c(4 * a);
  };
  auto near = [&](const PrimExpr& d) {  // a tap 0 to 1 away
    return ((c(a + 2) * d - c(a + 3)) * d) * d + c(1);
  };
  PrimExpr rest = c(1) - ratio;
  return {far(ratio + c(1)), near(ratio), near(rest), far(rest + c(1))};
}

PrimExpr Round(const PrimExpr& x, ResizeRounding rounding) {
  const DataType f = x.dtype();
  switch (rounding) {
    case ResizeRounding::kFloor:
      return loom::floor(x);
    case ResizeRounding::kCeil:
      return loom::ceil(x);
    case ResizeRounding::kRoundPreferFloor:  // halves go down
      return loom::ceil(x - make_const(f, 0.5));
    case ResizeRounding::kRoundPreferCeil:  // halves go up
      return loom::floor(x + make_const(f, 0.5));
  }
  return PrimExpr();
}

PrimExpr ClampToAxis(const PrimExpr& index, int64_t in) {
  return max(min(index, int(in - 1)), 0);
}

}  // namespace

te::Tensor resize2d(const te::Tensor& x, int64_t out_h, int64_t out_w, const ResizeAttrs& attrs) {
  const std::string op = "resize2d";
  LOOM_CHECK_USER(x.ndim() >= 2) << op << ": '" << x.name()
                                 << "' needs two spatial (trailing) dimensions, got "
                                 << x.ndim() << "-d";
  LOOM_CHECK_USER(out_h > 0 && out_w > 0)
      << op << ": the output size " << out_h << "x" << out_w << " must be positive";
  const ResizeMethod method = attrs.method;
  LOOM_CHECK_USER(method == ResizeMethod::kNearest || x.dtype().is_float())
      << op << ": " << (method == ResizeMethod::kLinear ? "linear" : "cubic") << " resizing of '"
      << x.name() << "' needs a float tensor, got " << x.dtype().str();
  std::vector<int64_t> shape = detail::ConstShape(x, op);
  const int64_t H = shape[shape.size() - 2], W = shape.back();
  Array<PrimExpr> out_shape(x.shape().begin(), x.shape().end() - 2);
  out_shape.push_back(int(out_h));
  out_shape.push_back(int(out_w));
  const DataType i32 = DataType::Int(32);
  const bool crop = attrs.coordinates == ResizeCoordinates::kTfCropAndResize;
  return te::compute(
      out_shape,
      [&](const Array<Var>& i) {
        Array<PrimExpr> index(i.begin(), i.end() - 2);
        PrimExpr h = InputCoordinate(i[i.size() - 2], H, out_h, attrs.coordinates, attrs.roi[0],
                                     attrs.roi[2]);
        PrimExpr w = InputCoordinate(i.back(), W, out_w, attrs.coordinates, attrs.roi[1],
                                     attrs.roi[3]);
        auto at = [&](const PrimExpr& row, const PrimExpr& column) {
          Array<PrimExpr> full = index;
          full.push_back(row);
          full.push_back(column);
          return x(full);
        };
        const DataType t = x.dtype();
        PrimExpr value;
        if (method == ResizeMethod::kNearest) {
          value = at(ClampToAxis(loom::cast(i32, Round(h, attrs.rounding)), H),
                     ClampToAxis(loom::cast(i32, Round(w, attrs.rounding)), W));
        } else if (method == ResizeMethod::kLinear) {
          // The coordinate clamped into the image, its floor and the fractions.
          auto clamp = [](const PrimExpr& v, int64_t in) {
            return max(min(v, make_const(v.dtype(), double(in - 1))), make_const(v.dtype(), 0.0));
          };
          PrimExpr hc = clamp(h, H), wc = clamp(w, W);
          PrimExpr h0 = loom::cast(i32, loom::floor(hc)), w0 = loom::cast(i32, loom::floor(wc));
          PrimExpr h1 = min(h0 + 1, int(H - 1)), w1 = min(w0 + 1, int(W - 1));
          PrimExpr fh = loom::cast(t, hc - loom::floor(hc)), fw = loom::cast(t, wc - loom::floor(wc));
          PrimExpr one = make_const(t, 1.0);
          PrimExpr top = at(h0, w0) * (one - fw) + at(h0, w1) * fw;
          PrimExpr bottom = at(h1, w0) * (one - fw) + at(h1, w1) * fw;
          value = top * (one - fh) + bottom * fh;
        } else {
          // Per axis: the four taps (clamped: edge pixels repeat) and their weights.
          auto taps = [&](const PrimExpr& coordinate, int64_t in) {
            PrimExpr first = loom::cast(i32, loom::floor(coordinate)) - 1;
            std::array<PrimExpr, 4> weights =
                CubicWeights(loom::cast(t, coordinate - loom::floor(coordinate)), attrs.cubic_coeff_a);
            std::array<PrimExpr, 4> positions;
            PrimExpr total = make_zero(t);
            for (int k = 0; k < 4; ++k) {
              PrimExpr tap = first + k;
              positions[k] = ClampToAxis(tap, in);
              if (attrs.exclude_outside) {
                weights[k] = select(tap >= 0 && tap < int(in), weights[k], make_zero(t));
                total = total + weights[k];
              }
            }
            if (attrs.exclude_outside) {
              for (PrimExpr& weight : weights) weight = weight / total;
            }
            return std::pair{positions, weights};
          };
          auto [rows, row_weights] = taps(h, H);
          auto [columns, column_weights] = taps(w, W);
          value = make_zero(t);
          for (int r = 0; r < 4; ++r) {
            PrimExpr row = make_zero(t);
            for (int c = 0; c < 4; ++c) row = row + at(rows[r], columns[c]) * column_weights[c];
            value = value + row * row_weights[r];
          }
        }
        if (!crop) return value;
        // Outside the input, TF's CropAndResize (and ONNX) give the extrapolation value.
        auto inside = [](const PrimExpr& v, int64_t in) {
          return v >= make_zero(v.dtype()) && v <= make_const(v.dtype(), double(in - 1));
        };
        return select(inside(h, H) && inside(w, W), value,
                      make_const(t, attrs.extrapolation_value));
      },
      op, "injective");
}

te::Tensor resize2d(const te::Tensor& x, int64_t out_h, int64_t out_w, ResizeMethod method,
                    ResizeCoordinates coordinates, ResizeRounding rounding) {
  ResizeAttrs attrs;
  attrs.method = method;
  attrs.coordinates = coordinates;
  attrs.rounding = rounding;
  return resize2d(x, out_h, out_w, attrs);
}

}  // namespace loom::topi
