// resize2d and resize_to: each output row's and column's input coordinate, per ONNX Resize
// (float32 by the sizes' ratio; float64 by a given or run-time scale and for
// tf_crop_and_resize; evaluated in the order of ONNX's reference so that a coordinate on the
// input's last pixel is exactly that), in a table per axis; nearest rounds it, linear blends the 2
// x 2 neighbours (the coordinate clamped to the image, as ONNX does), cubic the 4 x 4 ones (Keys
// kernel, edge pixels repeated outside the image).
#include <array>
#include <string>
#include <utility>

#include "loom/ir/math.h"
#include "loom/topi/transform.h"
#include "topi/topi_util.h"

namespace loom::topi {

namespace {

// One resized axis: its input and output extents (integers); the ONNX scale and the
// real-valued output extent scale * in, in the coordinate type (ONNX's reference maps
// align_corners and tf_crop_and_resize by that extent, not by the whole output size); and
// the tf_crop_and_resize region (float64).
struct ResizeAxis {
  PrimExpr in, out, scale, width, roi_start, roi_end;
};

// `when_one` where the real-valued output extent is 1, else `otherwise` (decided when
// compiling for a constant extent).
PrimExpr WhenWidthIsOne(const PrimExpr& width, const PrimExpr& when_one,
                        const PrimExpr& otherwise) {
  if (const auto* w = width.as<FloatImmNode>()) return w->value == 1 ? when_one : otherwise;
  return select(width == make_const(width.dtype(), 1.0), when_one, otherwise);
}

// The input coordinate of output index `out` along `axis`, in ONNX's reference's order of
// operations (so that a coordinate on the input's last pixel is exactly that); float64 for
// kTfCropAndResize.
PrimExpr InputCoordinate(const PrimExpr& out, const ResizeAxis& axis, ResizeCoordinates mode) {
  const DataType t = axis.scale.dtype();
  auto c = [&](double v) { return make_const(t, v); };
  const PrimExpr o = loom::cast(t, out), in = loom::cast(t, axis.in);
  switch (mode) {
    case ResizeCoordinates::kHalfPixel:
      return (o + c(0.5)) / axis.scale - c(0.5);
    case ResizeCoordinates::kPytorchHalfPixel:
      return WhenWidthIsOne(axis.width, c(0), (o + c(0.5)) / axis.scale - c(0.5));
    case ResizeCoordinates::kHalfPixelSymmetric: {
      // The output's centre lands on the input's: an offset of in / 2 * (1 - out / width).
      const PrimExpr offset = in / c(2) * (c(1) - loom::cast(t, axis.out) / axis.width);
      return offset + (o + c(0.5)) / axis.scale - c(0.5);
    }
    case ResizeCoordinates::kAlignCorners:
      return WhenWidthIsOne(axis.width, c(0), o * ((in - c(1)) / (axis.width - c(1))));
    case ResizeCoordinates::kAsymmetric:
      return o / axis.scale;
    case ResizeCoordinates::kTfCropAndResize: {
      const DataType f64 = DataType::Float(64);
      auto d = [&](double v) { return make_const(f64, v); };
      const PrimExpr last = loom::cast(f64, axis.in) - d(1), width = loom::cast(f64, axis.width);
      const PrimExpr span = axis.roi_end - axis.roi_start, start = axis.roi_start * last;
      return WhenWidthIsOne(width, span * last / d(2) + start,
                            loom::cast(f64, out) * span * last / (width - d(1)) + start);
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

// An index along `axis` clamped into the input: edge pixels repeat.
PrimExpr ClampToAxis(const PrimExpr& index, const ResizeAxis& axis) {
  return max(min(index, axis.in - 1), make_zero(index.dtype()));
}

// x (of rank >= 2) resized in its two trailing dimensions along `rows` and `columns` to
// `out_shape`. Each output row's and column's input coordinate is computed once, in a table
// per axis (a stage the injective schedules do not inline), not per element: a division
// each, by a run-time scale, tripled a resize's time.
te::Tensor ResizeTrailing(const te::Tensor& x, const Array<PrimExpr>& out_shape,
                          const ResizeAxis& rows, const ResizeAxis& columns,
                          const ResizeAttrs& attrs) {
  const ResizeMethod method = attrs.method;
  const bool crop = attrs.coordinates == ResizeCoordinates::kTfCropAndResize;
  auto table = [&](const ResizeAxis& a, const std::string& name) {
    return te::compute(
        {a.out}, [&](const Array<Var>& i) { return InputCoordinate(i[0], a, attrs.coordinates); },
        name, "resize_coordinates");
  };
  const te::Tensor row_coordinates = table(rows, "row_coordinates");
  const te::Tensor column_coordinates = table(columns, "column_coordinates");
  return te::compute(
      out_shape,
      [&](const Array<Var>& i) {
        Array<PrimExpr> index(i.begin(), i.end() - 2);
        PrimExpr h = row_coordinates(i[i.size() - 2]);
        PrimExpr w = column_coordinates(i.back());
        auto at = [&](const PrimExpr& row, const PrimExpr& column) {
          Array<PrimExpr> full = index;
          full.push_back(row);
          full.push_back(column);
          return x(full);
        };
        // An index along `axis` from a coordinate (rounded, floored), in the axis's type.
        auto index_along = [](const PrimExpr& v, const ResizeAxis& axis) {
          return loom::cast(axis.in.dtype(), v);
        };
        const DataType t = x.dtype();
        PrimExpr value;
        if (method == ResizeMethod::kNearest) {
          value = at(ClampToAxis(index_along(Round(h, attrs.rounding), rows), rows),
                     ClampToAxis(index_along(Round(w, attrs.rounding), columns), columns));
        } else if (method == ResizeMethod::kLinear) {
          // The coordinate clamped into the image, its floor and the fractions.
          auto clamp = [](const PrimExpr& v, const ResizeAxis& axis) {
            return max(min(v, loom::cast(v.dtype(), axis.in - 1)), make_zero(v.dtype()));
          };
          PrimExpr hc = clamp(h, rows), wc = clamp(w, columns);
          PrimExpr h0 = index_along(loom::floor(hc), rows);
          PrimExpr w0 = index_along(loom::floor(wc), columns);
          PrimExpr h1 = min(h0 + 1, rows.in - 1), w1 = min(w0 + 1, columns.in - 1);
          PrimExpr fh = loom::cast(t, hc - loom::floor(hc)), fw = loom::cast(t, wc - loom::floor(wc));
          PrimExpr one = make_const(t, 1.0);
          PrimExpr top = at(h0, w0) * (one - fw) + at(h0, w1) * fw;
          PrimExpr bottom = at(h1, w0) * (one - fw) + at(h1, w1) * fw;
          value = top * (one - fh) + bottom * fh;
        } else {
          // Per axis: the four taps (clamped: edge pixels repeat) and their weights.
          auto taps = [&](const PrimExpr& coordinate, const ResizeAxis& axis) {
            PrimExpr first = index_along(loom::floor(coordinate), axis) - 1;
            std::array<PrimExpr, 4> weights =
                CubicWeights(loom::cast(t, coordinate - loom::floor(coordinate)), attrs.cubic_coeff_a);
            std::array<PrimExpr, 4> positions;
            PrimExpr total = make_zero(t);
            for (int k = 0; k < 4; ++k) {
              PrimExpr tap = first + k;
              positions[k] = ClampToAxis(tap, axis);
              if (attrs.exclude_outside) {
                weights[k] = select(tap >= 0 && tap < axis.in, weights[k], make_zero(t));
                total = total + weights[k];
              }
            }
            if (attrs.exclude_outside) {
              for (PrimExpr& weight : weights) weight = weight / total;
            }
            return std::pair{positions, weights};
          };
          auto [row_taps, row_weights] = taps(h, rows);
          auto [column_taps, column_weights] = taps(w, columns);
          value = make_zero(t);
          for (int r = 0; r < 4; ++r) {
            PrimExpr row = make_zero(t);
            for (int c = 0; c < 4; ++c)
              row = row + at(row_taps[r], column_taps[c]) * column_weights[c];
            value = value + row * row_weights[r];
          }
        }
        if (!crop) return value;
        // Outside the input, TF's CropAndResize (and ONNX) give the extrapolation value.
        auto inside = [](const PrimExpr& v, const ResizeAxis& axis) {
          return v >= make_zero(v.dtype()) && v <= loom::cast(v.dtype(), axis.in - 1);
        };
        return select(inside(h, rows) && inside(w, columns), value,
                      make_const(t, attrs.extrapolation_value));
      },
      "resize2d", "injective");
}

void CheckResizable(const te::Tensor& x, const ResizeAttrs& attrs, const std::string& op) {
  LOOM_CHECK_USER(x.ndim() >= 2) << op << ": '" << x.name()
                                 << "' needs two spatial (trailing) dimensions, got " << x.ndim()
                                 << "-d";
  LOOM_CHECK_USER(attrs.method == ResizeMethod::kNearest || x.dtype().is_float())
      << op << ": " << (attrs.method == ResizeMethod::kLinear ? "linear" : "cubic")
      << " resizing of '" << x.name() << "' needs a float tensor, got " << x.dtype().str();
}

}  // namespace

namespace detail {

Array<PrimExpr> ResizeScales(int64_t rank, const ResizeBy& by,
                             const std::function<PrimExpr(int64_t j)>& value,
                             const std::function<PrimExpr(int64_t d)>& extent) {
  const DataType f64 = DataType::Float(64);
  Array<PrimExpr> scales(static_cast<size_t>(rank), make_const(f64, 1.0));
  PrimExpr common;
  for (size_t j = 0; j < by.axes.size(); ++j) {
    const size_t d = static_cast<size_t>(by.axes[j]);
    PrimExpr scale = by.operand == ResizeOperand::kScales
                         ? value(static_cast<int64_t>(j))
                         : value(static_cast<int64_t>(j)) / loom::cast(f64, extent(by.axes[j]));
    scales[d] = scale;
    if (by.policy != AspectPolicy::kStretch) {
      const bool smallest = by.policy == AspectPolicy::kNotLarger;
      common = !common.defined() ? scale : smallest ? min(common, scale) : max(common, scale);
    }
  }
  if (by.operand == ResizeOperand::kSizes && common.defined()) {
    for (int64_t axis : by.axes) scales[static_cast<size_t>(axis)] = common;
  }
  return scales;
}

}  // namespace detail

te::Tensor resize2d(const te::Tensor& x, int64_t out_h, int64_t out_w, const ResizeAttrs& attrs) {
  const std::string op = "resize2d";
  CheckResizable(x, attrs, op);
  LOOM_CHECK_USER(out_h > 0 && out_w > 0)
      << op << ": the output size " << out_h << "x" << out_w << " must be positive";
  std::vector<int64_t> shape = detail::ConstShape(x, op);
  Array<PrimExpr> out_shape(x.shape().begin(), x.shape().end() - 2);
  out_shape.push_back(int(out_h));
  out_shape.push_back(int(out_w));
  // Coordinates by the sizes' ratio stay float32 (they land on the reference's pixels);
  // by a given scale, float64.
  auto axis = [](int64_t in, int64_t out, double given, double roi_start, double roi_end) {
    const DataType t = DataType::Float(given > 0 ? 64 : 32);
    const double scale = given > 0 ? given : static_cast<double>(out) / in;
    const double width = given > 0 ? given * in : static_cast<double>(out);
    const DataType f64 = DataType::Float(64);
    return ResizeAxis{make_const(DataType::Int(32), in),
                      make_const(DataType::Int(32), out),
                      make_const(t, scale),
                      make_const(t, width),
                      make_const(f64, roi_start),
                      make_const(f64, roi_end)};
  };
  const int64_t H = shape[shape.size() - 2], W = shape.back();
  return ResizeTrailing(x, out_shape, axis(H, out_h, attrs.scales[0], attrs.roi[0], attrs.roi[2]),
                        axis(W, out_w, attrs.scales[1], attrs.roi[1], attrs.roi[3]), attrs);
}

te::Tensor resize2d(const te::Tensor& x, int64_t out_h, int64_t out_w, ResizeMethod method,
                    ResizeCoordinates coordinates, ResizeRounding rounding) {
  ResizeAttrs attrs;
  attrs.method = method;
  attrs.coordinates = coordinates;
  attrs.rounding = rounding;
  return resize2d(x, out_h, out_w, attrs);
}

te::Tensor resize_to(const te::Tensor& x, const te::Tensor& operand, const te::Tensor& roi,
                     const Array<PrimExpr>& shape, const ResizeBy& by, const ResizeAttrs& attrs) {
  const std::string op = "resize_to";
  CheckResizable(x, attrs, op);
  const int64_t rank = x.ndim(), k = static_cast<int64_t>(by.axes.size());
  LOOM_CHECK_USER(static_cast<int64_t>(shape.size()) == rank && operand.ndim() == 1 &&
                  detail::IsConst(operand.shape()[0], k))
      << op << " of '" << x.name() << "': the operand must hold " << k
      << " values (one per axis) and the shape be of rank " << rank;
  const bool crop = attrs.coordinates == ResizeCoordinates::kTfCropAndResize;
  LOOM_CHECK_USER(!crop || (roi.ndim() == 1 && detail::IsConst(roi.shape()[0], 2 * k) &&
                            roi.dtype().is_float()))
      << op << " of '" << x.name() << "': tf_crop_and_resize needs roi '" << roi.name() << "' of "
      << 2 * k << " floats (each axis's start, then each end)";
  const DataType f64 = DataType::Float(64);
  auto element = [&](const te::Tensor& t, int64_t j) {
    return loom::cast(f64, t(make_const(DataType::Int(64), j)));
  };
  Array<PrimExpr> scales = detail::ResizeScales(
      rank, by, [&](int64_t j) { return element(operand, j); },
      [&](int64_t d) { return x.shape()[static_cast<size_t>(d)]; });
  auto axis = [&](int64_t d) {
    ResizeAxis a{x.shape()[static_cast<size_t>(d)],
                 shape[static_cast<size_t>(d)],
                 scales[static_cast<size_t>(d)],
                 PrimExpr(),
                 make_const(f64, 0.0),
                 make_const(f64, 1.0)};
    a.width = a.scale * loom::cast(f64, a.in);
    for (int64_t j = 0; crop && j < k; ++j) {
      if (by.axes[static_cast<size_t>(j)] != d) continue;
      a.roi_start = element(roi, j);
      a.roi_end = element(roi, j + k);
    }
    return a;
  };
  return ResizeTrailing(x, shape, axis(rank - 2), axis(rank - 1), attrs);
}

te::Tensor affine_grid(const te::Tensor& theta, const Array<PrimExpr>& spatial,
                       bool align_corners) {
  const size_t k = spatial.size();
  LOOM_CHECK_USER((k == 2 || k == 3) && theta.ndim() == 3 && theta.dtype().is_float() &&
                  detail::IsConst(theta.shape()[1], static_cast<int64_t>(k)) &&
                  detail::IsConst(theta.shape()[2], static_cast<int64_t>(k) + 1))
      << "affine_grid of '" << theta.name() << "': theta must be floats [N, " << k << ", " << k + 1
      << "] for " << k << " spatial dimensions, got " << theta.dtype()
      << detail::ShapeText(theta.shape());
  const DataType t = theta.dtype();
  auto c = [&](double v) { return make_const(t, v); };
  Array<PrimExpr> shape = {theta.shape()[0]};
  for (const PrimExpr& size : spatial) shape.push_back(size);
  shape.push_back(make_const(spatial[0].dtype(), static_cast<int64_t>(k)));
  return te::compute(
      shape,
      [&](const Array<loom::Var>& i) {
        const PrimExpr n = i[0], row = i[k + 1];
        auto entry = [&](size_t column) {
          return theta(n, row, make_const(row.dtype(), static_cast<int64_t>(column)));
        };
        PrimExpr value = entry(k);
        for (size_t j = 0; j < k; ++j) {
          // Output axis 1 + j holds coordinate k - 1 - j (x runs along the last).
          const PrimExpr at = loom::cast(t, i[1 + j]), size = loom::cast(t, spatial[j]);
          const PrimExpr coordinate =
              align_corners ? select(spatial[j] > make_const(spatial[j].dtype(), int64_t{1}),
                                     at * c(2) / (size - c(1)) - c(1), c(-1))
                            : (at * c(2) + c(1)) / size - c(1);
          value = value + entry(k - 1 - j) * coordinate;
        }
        return value;
      },
      "affine_grid", "injective");
}

}  // namespace loom::topi
