#include "loom/topi/quantize.h"

#include <string>

#include "loom/ir/expr_ops.h"
#include "loom/topi/matmul.h"
#include "loom/topi/transform.h"
#include "topi/topi_util.h"

namespace loom::topi {
namespace {

bool IsInteger8(DataType t) {
  return (t.is_int() || t.is_uint()) && t.bits() == 8 && t.lanes() == 1;
}

// x - zero_point in int32 (an injective stage, inlined into its reader).
te::Tensor Centered(const te::Tensor& x, int64_t zero_point, const std::string& op) {
  const DataType t = x.dtype();
  const int64_t lo = t.is_uint() ? 0 : -128, hi = t.is_uint() ? 255 : 127;
  LOOM_CHECK_USER(IsInteger8(t) && zero_point >= lo && zero_point <= hi)
      << op << ": '" << x.name() << "' must be int8 or uint8 with a zero point in its range, got "
      << t.str() << " with zero point " << zero_point;
  const DataType i32 = DataType::Int(32);
  return te::compute(
      x.shape(),
      [&](const Array<Var>& i) {
        PrimExpr wide = cast(i32, x(i));
        return zero_point == 0 ? wide : wide - make_const(i32, zero_point);
      },
      x.name() + "_centered", detail::kInjective);
}

}  // namespace

te::Tensor dequantize(const te::Tensor& q, const te::Tensor& scale, const te::Tensor& zero_point,
                      int axis) {
  const std::string op = "dequantize";
  const DataType f32 = DataType::Float(32);
  LOOM_CHECK_USER((q.dtype().is_int() || q.dtype().is_uint()) && q.dtype().lanes() == 1 &&
                  scale.dtype() == f32 && zero_point.dtype() == q.dtype())
      << op << ": '" << q.name() << "' must be an integer tensor, its scale float32 and its "
      << "zero point of its type; got " << q.dtype().str() << ", " << scale.dtype().str() << " and "
      << zero_point.dtype().str();
  const int rank = q.ndim();
  LOOM_CHECK_USER(scale.ndim() == zero_point.ndim() && scale.ndim() <= 1)
      << op << ": the scale and zero point must both be scalars or both 1-d, got " << scale.ndim()
      << "-d and " << zero_point.ndim() << "-d";
  const bool per_axis = scale.ndim() == 1;
  if (per_axis) {
    LOOM_CHECK_USER(axis >= -rank && axis < rank)
        << op << ": axis " << axis << " is outside '" << q.name() << "' of rank " << rank;
    if (axis < 0) axis += rank;
    const std::vector<int64_t> q_shape = detail::ConstShape(q, op);
    const std::vector<int64_t> s = detail::ConstShape(scale, op);
    const std::vector<int64_t> z = detail::ConstShape(zero_point, op);
    LOOM_CHECK_USER(s[0] == q_shape[static_cast<size_t>(axis)] && z[0] == s[0])
        << op << ": the scale and zero point hold " << s[0] << " and " << z[0] << " values; axis "
        << axis << " of '" << q.name() << "' has " << q_shape[static_cast<size_t>(axis)]
        << " slices, one value each";
  }
  return te::compute(
      q.shape(),
      [&](const Array<Var>& i) {
        Array<PrimExpr> param;
        if (per_axis) param.push_back(i[static_cast<size_t>(axis)]);
        return (cast(f32, q(i)) - cast(f32, zero_point(param))) * scale(param);
      },
      op, "broadcast");
}

te::Tensor conv2d_nchw_integer(const te::Tensor& data, const te::Tensor& weight,
                               int64_t data_zero_point, int64_t weight_zero_point,
                               const Conv2DAttrs& attrs) {
  const std::string op = "conv2d_nchw_integer";
  return conv2d_nchw(Centered(data, data_zero_point, op), Centered(weight, weight_zero_point, op),
                     attrs);
}

te::Tensor dense_integer(const te::Tensor& data, const te::Tensor& weight, int64_t data_zero_point,
                         int64_t weight_zero_point) {
  const std::string op = "dense_integer";
  LOOM_CHECK_USER(data.ndim() >= 1 && weight.ndim() == 2)
      << op << ": data '" << data.name() << "' must be [..., K] and weight '" << weight.name()
      << "' [N, K], got " << data.ndim() << "-d and " << weight.ndim() << "-d";
  te::Tensor centered = Centered(weight, weight_zero_point, op);
  return matmul(Centered(data, data_zero_point, op), transpose(centered, {1, 0}));
}

te::Tensor matmul_integer(const te::Tensor& a, const te::Tensor& b, int64_t a_zero_point,
                          int64_t b_zero_point) {
  const std::string op = "matmul_integer";
  return matmul(Centered(a, a_zero_point, op), Centered(b, b_zero_point, op));
}

}  // namespace loom::topi
