// Normalization operators: statistics as reductions (keepdims, so the output reads them with
// the reduced dimensions at 0), the normalization itself elementwise.
#include <string>

#include "loom/ir/math.h"
#include "loom/topi/nn.h"
#include "loom/topi/reduction.h"
#include "topi/topi_util.h"

namespace loom::topi {

namespace {

// A parameter must have exactly `shape` (constant extents compared by value).
void CheckParameter(const te::Tensor& p, const Array<PrimExpr>& shape, DataType t,
                    const std::string& op, const std::string& role) {
  bool same = p.ndim() == static_cast<int>(shape.size()) && p.dtype() == t;
  for (size_t d = 0; same && d < shape.size(); ++d) same = detail::SameExtent(p.shape()[d], shape[d]);
  LOOM_CHECK_USER(same) << op << ": " << role << " '" << p.name() << "' is "
                        << detail::ShapeText(p.shape()) << " " << p.dtype().str() << "; expected "
                        << detail::ShapeText(shape) << " " << t.str();
}

// x's index with the dimensions listed in `reduced` at 0 (a keepdims statistic's index).
Array<PrimExpr> StatisticIndex(const Array<Var>& i, const std::vector<bool>& reduced) {
  Array<PrimExpr> index;
  for (size_t d = 0; d < i.size(); ++d) {
    index.push_back(reduced[d] ? make_zero(i[d].dtype()) : PrimExpr(i[d]));
  }
  return index;
}

// (x - mean) / sqrt(var + epsilon) over the `first..` dimensions, then scale and bias read at
// the index `parameter_index` gives.
te::Tensor Normalize(const te::Tensor& x, int first, double epsilon, const std::string& op,
                     const std::function<PrimExpr(const Array<Var>&, const PrimExpr&)>& affine) {
  std::vector<int> axes;
  std::vector<bool> reduced(x.ndim(), false);
  for (int d = first; d < x.ndim(); ++d) {
    axes.push_back(d);
    reduced[d] = true;
  }
  DataType t = x.dtype();
  te::Tensor average = mean(x, axes, /*keepdims=*/true);
  te::Tensor centered_square = te::compute(
      x.shape(),
      [&](const Array<Var>& i) {
        PrimExpr centered = x(i) - average(StatisticIndex(i, reduced));
        return centered * centered;
      },
      op + "_centered_square", "elemwise");
  te::Tensor variance = mean(centered_square, axes, /*keepdims=*/true);
  return te::compute(
      x.shape(),
      [&](const Array<Var>& i) {
        Array<PrimExpr> s = StatisticIndex(i, reduced);
        PrimExpr normalized =
            (x(i) - average(s)) / loom::sqrt(variance(s) + make_const(t, epsilon));
        return affine(i, normalized);
      },
      op, "elemwise");
}

}  // namespace

te::Tensor batch_norm(const te::Tensor& x, const te::Tensor& scale, const te::Tensor& bias,
                      const te::Tensor& mean, const te::Tensor& var, double epsilon) {
  const std::string op = "batch_norm";
  detail::CheckFloat(x, op);
  LOOM_CHECK_USER(x.ndim() >= 2) << op << ": '" << x.name() << "' must be [N, C, ...], got "
                                 << x.ndim() << "-d";
  Array<PrimExpr> channels{x.shape()[1]};
  CheckParameter(scale, channels, x.dtype(), op, "scale");
  CheckParameter(bias, channels, x.dtype(), op, "bias");
  CheckParameter(mean, channels, x.dtype(), op, "mean");
  CheckParameter(var, channels, x.dtype(), op, "var");
  DataType t = x.dtype();
  return te::compute(
      x.shape(),
      [&](const Array<Var>& i) {
        PrimExpr c = i[1];
        return (x(i) - mean(c)) / loom::sqrt(var(c) + make_const(t, epsilon)) * scale(c) + bias(c);
      },
      op, "broadcast");
}

te::Tensor layer_norm(const te::Tensor& x, const te::Tensor& scale, const te::Tensor& bias,
                      int axis, double epsilon) {
  const std::string op = "layer_norm";
  detail::CheckFloat(x, op);
  int first = detail::NormalizeAxis(axis, x.ndim(), op, x);
  Array<PrimExpr> normalized_shape(x.shape().begin() + first, x.shape().end());
  CheckParameter(scale, normalized_shape, x.dtype(), op, "scale");
  CheckParameter(bias, normalized_shape, x.dtype(), op, "bias");
  return Normalize(x, first, epsilon, op, [&](const Array<Var>& i, const PrimExpr& v) {
    Array<PrimExpr> p(i.begin() + first, i.end());
    return v * scale(p) + bias(p);
  });
}

te::Tensor instance_norm(const te::Tensor& x, const te::Tensor& scale, const te::Tensor& bias,
                         double epsilon) {
  const std::string op = "instance_norm";
  detail::CheckFloat(x, op);
  LOOM_CHECK_USER(x.ndim() >= 3) << op << ": '" << x.name()
                                 << "' must be [N, C, D1, ...] with a spatial dimension, got "
                                 << x.ndim() << "-d";
  Array<PrimExpr> channels{x.shape()[1]};
  CheckParameter(scale, channels, x.dtype(), op, "scale");
  CheckParameter(bias, channels, x.dtype(), op, "bias");
  return Normalize(x, 2, epsilon, op, [&](const Array<Var>& i, const PrimExpr& v) {
    return v * scale(i[1]) + bias(i[1]);
  });
}

te::Tensor lrn(const te::Tensor& x, int64_t size, double alpha, double beta, double bias) {
  const std::string op = "lrn";
  detail::CheckFloat(x, op);
  LOOM_CHECK_USER(x.ndim() >= 2) << op << ": '" << x.name() << "' must be [N, C, ...], got "
                                 << x.ndim() << "-d";
  LOOM_CHECK_USER(size > 0) << op << ": size must be positive, got " << size;
  DataType t = x.dtype();
  // Channels c - floor((size - 1) / 2) .. c + ceil((size - 1) / 2), those inside [0, C).
  const int64_t before = (size - 1) / 2;
  IterVar r = te::reduce_axis(Range(0, int(size)), "r");
  PrimExpr channels = x.shape()[1];
  te::Tensor square_sum = te::compute(
      x.shape(),
      [&](const Array<Var>& i) {
        PrimExpr c = i[1] + r->var - int(before);
        Array<PrimExpr> index(i.begin(), i.end());
        index[1] = detail::ClampIndex(c, channels);
        PrimExpr v = x(index);
        return te::sum(select(c >= 0 && c < channels, v * v, make_zero(t)), {r});
      },
      op + "_square_sum", "comm_reduce");
  return te::compute(
      x.shape(),
      [&](const Array<Var>& i) {
        PrimExpr denominator = make_const(t, bias) + make_const(t, alpha / size) * square_sum(i);
        return x(i) / loom::pow(denominator, make_const(t, beta));
      },
      op, "elemwise");
}

}  // namespace loom::topi
