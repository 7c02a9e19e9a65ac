// Gathering operators: the source position along an axis comes from an index tensor, read
// inside the compute. Index arithmetic stays in the index tensor's type (int32 or int64) up to the
// position, which takes the data's index type.
#include "loom/topi/transform.h"

#include "topi/topi_util.h"

namespace loom::topi {

namespace {

using detail::IndexType;
using detail::kInjective;
using detail::NormalizeAxis;
using detail::ShapeText;

void CheckIndexTensor(const te::Tensor& indices, const std::string& op, const te::Tensor& data) {
  LOOM_CHECK_USER(indices.dtype() == DataType::Int(32) || indices.dtype() == DataType::Int(64))
      << op << " of '" << data.name() << "': indices '" << indices.name() << "' are "
      << indices.dtype().str() << "; index tensors are int32 or int64";
}

// An element of an index tensor as a position along a dimension of `extent`: a negative
// one counts from the end (ONNX), and one still out of range is clamped so that the read
// stays inside the tensor (ONNX leaves it undefined). The position is in the extent's type,
// like every other index of the data: a producer inlined into the read (a concatenation's
// select on its axis) compares it with constants of that type.
PrimExpr PositionOf(const PrimExpr& index, const PrimExpr& extent) {
  DataType t = index.dtype();
  PrimExpr size = loom::cast(t, extent);
  PrimExpr wrapped = select(index < make_zero(t), index + size, index);
  return loom::cast(extent.dtype(), min(max(wrapped, make_zero(t)), size - 1));
}

}  // namespace

te::Tensor gather(const te::Tensor& data, const te::Tensor& indices, int64_t axis) {
  CheckIndexTensor(indices, "gather", data);
  int a = NormalizeAxis(axis, data.ndim(), "gather", data);
  int q = indices.ndim();
  Array<PrimExpr> shape(data.shape().begin(), data.shape().begin() + a);
  shape.insert(shape.end(), indices.shape().begin(), indices.shape().end());
  shape.insert(shape.end(), data.shape().begin() + a + 1, data.shape().end());
  return te::compute(
      shape,
      [&](const Array<Var>& i) {
        Array<PrimExpr> index(i.begin(), i.begin() + a);
        PrimExpr position = indices(Array<PrimExpr>(i.begin() + a, i.begin() + a + q));
        index.push_back(PositionOf(position, data.shape()[a]));
        index.insert(index.end(), i.begin() + a + q, i.end());
        return data(index);
      },
      "gather", kInjective);
}

te::Tensor gather_elements(const te::Tensor& data, const te::Tensor& indices, int64_t axis) {
  CheckIndexTensor(indices, "gather_elements", data);
  int a = NormalizeAxis(axis, data.ndim(), "gather_elements", data);
  bool fits = indices.ndim() == data.ndim();
  for (int d = 0; fits && d < data.ndim(); ++d) {
    int64_t wanted = 0, available = 0;
    // Along the other axes the output reads data at its own index, which must exist.
    fits = d == a || !IsConstInt(indices.shape()[d], &wanted) ||
           !IsConstInt(data.shape()[d], &available) || wanted <= available;
  }
  LOOM_CHECK_USER(fits) << "gather_elements of '" << data.name() << "': indices '"
                        << indices.name() << "' of shape " << ShapeText(indices.shape())
                        << " do not fit data of shape " << ShapeText(data.shape())
                        << " (same rank, and no larger than data along axes other than " << a
                        << ")";
  return te::compute(
      indices.shape(),
      [&](const Array<Var>& i) {
        Array<PrimExpr> index(i.begin(), i.end());
        index[a] = PositionOf(indices(i), data.shape()[a]);
        return data(index);
      },
      "gather_elements", kInjective);
}

te::Tensor take(const te::Tensor& data, const te::Tensor& indices) {
  CheckIndexTensor(indices, "take", data);
  PrimExpr count = make_const(IndexType(data), int64_t{1});
  for (const PrimExpr& extent : data.shape()) count = count * extent;
  return te::compute(
      indices.shape(),
      [&](const Array<Var>& i) {
        return data(detail::Unravel(PositionOf(indices(i), count), data.shape()));
      },
      "take", kInjective);
}

}  // namespace loom::topi
