// Data-movement operators that rearrange a tensor's elements by index arithmetic alone:
// one compute per operator, reading the input at the source index of each output element.
#include "loom/topi/transform.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <sstream>

#include "loom/arith/analyzer.h"
#include "loom/ir/printer.h"
#include "loom/topi/elementwise.h"
#include "loom/topi/shape_function.h"
#include "topi/topi_util.h"

namespace loom::topi {

namespace {

using detail::ClampIndex;
using detail::ConstShape;
using detail::IndexType;
using detail::IsConst;
using detail::kInjective;
using detail::NormalizeAxis;
using detail::ShapeText;
using detail::Unravel;

Array<PrimExpr> AsExprs(const Array<Var>& vars) {
  return Array<PrimExpr>(vars.begin(), vars.end());
}

// Equal sizes: equal constants, or one and the same symbolic expression.
bool SameExtent(const PrimExpr& a, const PrimExpr& b) {
  int64_t ca = 0, cb = 0;
  return (IsConstInt(a, &ca) && IsConstInt(b, &cb)) ? ca == cb : a.same_as(b);
}

PrimExpr Product(const Array<PrimExpr>& extents, size_t begin, size_t end, DataType t) {
  PrimExpr product = make_const(t, int64_t{1});
  for (size_t d = begin; d < end; ++d) product = product * extents[d];
  return product;
}

// The row-major flat position of `index` in `shape`.
PrimExpr Ravel(const Array<PrimExpr>& index, const Array<PrimExpr>& shape, DataType t) {
  PrimExpr flat = make_zero(t);
  for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + index[d];
  return flat;
}

// x's elements in row-major order, laid out in `shape` (of x's element count).
te::Tensor ReshapeTo(const te::Tensor& x, const Array<PrimExpr>& shape, const std::string& op) {
  DataType t = IndexType(x);
  return te::compute(
      shape,
      [&](const Array<Var>& i) { return x(Unravel(Ravel(AsExprs(i), shape, t), x.shape())); },
      op, kInjective);
}

// x read at output index `out` of a broadcast to a shape of out's rank.
PrimExpr BroadcastRead(const te::Tensor& x, const Array<Var>& out) {
  Array<PrimExpr> index;
  size_t offset = out.size() - x.shape().size();
  for (size_t d = 0; d < x.shape().size(); ++d) {
    index.push_back(IsConst(x.shape()[d], 1) ? make_zero(out[offset + d].dtype())
                                             : PrimExpr(out[offset + d]));
  }
  return x(index);
}

}  // namespace

namespace {

// reshape of an x with symbolic dimensions: 0 copies a dimension, a -1 is the element count
// divided by the others' product, simplified (n * 64 / 64 is n); what cannot be shown to fit
// at compile time is an error. Sizes and positions are int64 here; each dimension keeps its
// own type (constants int32, symbolic sizes int64, as graph placeholders have them), and so
// does each index into x, since a producer inlined into the read compares it with constants
// of that type.
te::Tensor SymbolicReshape(const te::Tensor& x, const std::vector<int64_t>& shape,
                           const std::vector<PrimExpr>& given = {}) {
  const DataType wide = DataType::Int(64);
  auto widen = [&](const PrimExpr& e) { return e.dtype() == wide ? e : loom::cast(wide, e); };
  Array<PrimExpr> in;
  for (const PrimExpr& extent : x.shape()) in.push_back(widen(extent));
  arith::Analyzer analyzer;
  const PrimExpr count = Product(in, 0, in.size(), wide);
  Array<PrimExpr> out, out_wide;
  PrimExpr known = make_const(wide, int64_t{1});
  int inferred = -1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (d < given.size() && given[d].defined()) {
      out.push_back(given[d]);
      out_wide.push_back(widen(given[d]));
      known = known * out_wide.back();
      continue;
    }
    LOOM_CHECK_USER(shape[d] >= -1 && (shape[d] != -1 || inferred < 0) &&
                    (shape[d] != 0 || d < x.shape().size()))
        << "reshape of '" << x.name() << "': target shape " << ShapeText(shape)
        << " is invalid for " << ShapeText(x.shape())
        << "; entries are sizes, 0 (copy the input's), or one -1 (infer)";
    if (shape[d] == -1) inferred = static_cast<int>(d);
    out.push_back(shape[d] == 0 ? x.shape()[d] : make_const(DataType::Int(32), shape[d]));
    out_wide.push_back(widen(out.back()));
    if (shape[d] != -1) known = known * out_wide.back();
  }
  if (inferred >= 0) {
    // The other entries' sizes that are dimensions of x (copied ones) cancel out of the
    // element count first: (n, 2, 2, 16) to (0, 0, -1) leaves 2 * 16 over 1, which the
    // analyzer decides where n * 64 over n * 2 it cannot.
    std::vector<PrimExpr> remaining(in.begin(), in.end());
    PrimExpr divisor = make_const(wide, int64_t{1});
    for (size_t d = 0; d < out_wide.size(); ++d) {
      if (static_cast<int>(d) == inferred) continue;
      auto same = std::find_if(remaining.begin(), remaining.end(), [&](const PrimExpr& e) {
        return analyzer.CanProveEqual(e, out_wide[d]);
      });
      if (same != remaining.end()) {
        remaining.erase(same);
      } else {
        divisor = divisor * out_wide[d];
      }
    }
    const PrimExpr rest =
        Product(Array<PrimExpr>(remaining.begin(), remaining.end()), 0, remaining.size(), wide);
    LOOM_CHECK_USER(analyzer.CanProve(floormod(rest, divisor) == make_zero(wide)))
        << "reshape of '" << x.name() << "': cannot infer the -1 of " << ShapeText(shape)
        << " at compile time: the element count of " << ShapeText(x.shape())
        << " is not shown to be a multiple of the other entries' product";
    // A size that simplifies to a constant is an int32 one, as every constant size is: the
    // index variables of a consumer it is inlined into have that type.
    PrimExpr size = analyzer.Simplify(floordiv(rest, divisor));
    int64_t value = 0;
    out_wide[inferred] = size;
    out[inferred] = IsConstInt(size, &value) ? make_const(DataType::Int(32), value) : size;
  } else {
    LOOM_CHECK_USER(analyzer.CanProve(count == known))
        << "reshape of '" << x.name() << "': target shape " << ShapeText(shape)
        << " has an element count not shown to equal that of " << ShapeText(x.shape());
  }
  return te::compute(
      out,
      [&](const Array<Var>& i) {
        Array<PrimExpr> position;
        for (const Var& v : i) position.push_back(widen(v));
        Array<PrimExpr> index = Unravel(Ravel(position, out_wide, wide), in);
        for (size_t d = 0; d < index.size(); ++d) {
          index[d] = loom::cast(x.shape()[d].dtype(), index[d]);
        }
        return x(index);
      },
      "reshape", kInjective);
}

}  // namespace

te::Tensor reshape(const te::Tensor& x, const std::vector<int64_t>& shape) {
  for (const PrimExpr& extent : x.shape()) {
    if (!IsConstInt(extent)) return SymbolicReshape(x, shape);
  }
  std::vector<int64_t> in = ConstShape(x, "reshape");
  int64_t count = std::accumulate(in.begin(), in.end(), int64_t{1}, std::multiplies<>());
  std::vector<int64_t> out(shape.size());
  int inferred = -1;
  int64_t known = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == -1) {
      LOOM_CHECK_USER(inferred < 0) << "reshape of '" << x.name() << "': target shape "
                                    << ShapeText(shape) << " has more than one -1";
      inferred = static_cast<int>(d);
      continue;
    }
    if (shape[d] == 0) {
      LOOM_CHECK_USER(d < in.size())
          << "reshape of '" << x.name() << "': entry 0 at position " << d << " of "
          << ShapeText(shape) << " copies an input dimension, but '" << x.name()
          << "' has rank " << in.size();
      out[d] = in[d];
    } else {
      LOOM_CHECK_USER(shape[d] > 0)
          << "reshape of '" << x.name() << "': entry " << shape[d] << " of " << ShapeText(shape)
          << " is invalid; entries are sizes, 0 (copy the input's) or -1 (infer)";
      out[d] = shape[d];
    }
    known *= out[d];
  }
  if (inferred >= 0) {
    LOOM_CHECK_USER(known != 0 && count % known == 0)
        << "reshape of '" << x.name() << "': cannot infer the -1 of " << ShapeText(shape) << ": "
        << ShapeText(in) << " has " << count << " elements, no multiple of " << known;
    out[inferred] = count / known;
  } else {
    LOOM_CHECK_USER(known == count)
        << "reshape of '" << x.name() << "': target shape " << ShapeText(out) << " has " << known
        << " elements but " << ShapeText(in) << " has " << count;
  }
  Array<PrimExpr> target;
  for (int64_t extent : out) target.push_back(make_const(IndexType(x), extent));
  return ReshapeTo(x, target, "reshape");
}

te::Tensor reshape(const te::Tensor& x, const std::vector<int64_t>& shape,
                   const std::vector<PrimExpr>& given) {
  LOOM_CHECK_USER(given.size() == shape.size())
      << "reshape of '" << x.name() << "': " << given.size() << " given sizes for a target of "
      << shape.size() << " entries";
  return SymbolicReshape(x, shape, given);
}

te::Tensor reshape_to(const te::Tensor& x, const Array<PrimExpr>& shape) {
  return ReshapeTo(x, shape, "reshape");
}

te::Tensor expand_to(const te::Tensor& x, const Array<PrimExpr>& shape) {
  LOOM_CHECK_USER(shape.size() >= x.shape().size())
      << "expand of '" << x.name() << "': the target " << ShapeText(shape)
      << " has a lower rank than " << ShapeText(x.shape());
  return te::compute(
      shape, [&](const Array<Var>& i) { return BroadcastRead(x, i); }, "expand", kInjective);
}

te::Tensor tile_to(const te::Tensor& x, const Array<PrimExpr>& shape) {
  LOOM_CHECK_USER(shape.size() == x.shape().size())
      << "tile of '" << x.name() << "': the target " << ShapeText(shape) << " has another rank "
      << "than " << ShapeText(x.shape());
  return te::compute(
      shape,
      [&](const Array<Var>& i) {
        Array<PrimExpr> index;
        for (size_t d = 0; d < i.size(); ++d) {
          // An empty x makes an empty output: the modulo never runs by 0.
          const PrimExpr extent = loom::cast(i[d].dtype(), x.shape()[d]);
          const PrimExpr at =
              IsConst(x.shape()[d], 1) ? make_zero(i[d].dtype()) : floormod(i[d], extent);
          index.push_back(loom::cast(x.shape()[d].dtype(), at));
        }
        return x(index);
      },
      "tile", kInjective);
}

te::Tensor flatten(const te::Tensor& x, int64_t axis) {
  int64_t rank = x.ndim();
  // Unlike other axes, axis == rank is allowed (an outer dimension of everything).
  LOOM_CHECK_USER(axis >= -rank && axis <= rank)
      << "flatten of '" << x.name() << "': axis " << axis << " is out of range for rank " << rank
      << " (expected " << -rank << " to " << rank << ")";
  size_t split = static_cast<size_t>(axis < 0 ? axis + rank : axis);
  DataType t = IndexType(x);
  return ReshapeTo(x, {Product(x.shape(), 0, split, t), Product(x.shape(), split, rank, t)},
                   "flatten");
}

te::Tensor squeeze(const te::Tensor& x, const std::vector<int64_t>& axes) {
  std::vector<bool> dropped(x.ndim(), false);
  for (int d = 0; d < x.ndim() && axes.empty(); ++d) dropped[d] = IsConst(x.shape()[d], 1);
  for (int64_t axis : axes) {
    int d = NormalizeAxis(axis, x.ndim(), "squeeze", x);
    LOOM_CHECK_USER(!dropped[d]) << "squeeze of '" << x.name() << "': axis " << axis
                                 << " is listed twice";
    LOOM_CHECK_USER(IsConst(x.shape()[d], 1))
        << "squeeze of '" << x.name() << "': dimension " << d << " of " << ShapeText(x.shape())
        << " is " << x.shape()[d] << ", not 1";
    dropped[d] = true;
  }
  Array<PrimExpr> shape;
  for (int d = 0; d < x.ndim(); ++d) {
    if (!dropped[d]) shape.push_back(x.shape()[d]);
  }
  return te::compute(
      shape,
      [&](const Array<Var>& i) {
        Array<PrimExpr> index;
        size_t kept = 0;
        for (int d = 0; d < x.ndim(); ++d) {
          index.push_back(dropped[d] ? make_zero(IndexType(x)) : PrimExpr(i[kept++]));
        }
        return x(index);
      },
      "squeeze", kInjective);
}

te::Tensor unsqueeze(const te::Tensor& x, const std::vector<int64_t>& axes) {
  int64_t rank = x.ndim() + static_cast<int64_t>(axes.size());
  std::vector<bool> inserted(rank, false);
  for (int64_t axis : axes) {
    int d = NormalizeAxis(axis, rank, "unsqueeze", x);
    LOOM_CHECK_USER(!inserted[d]) << "unsqueeze of '" << x.name() << "': axis " << axis
                                  << " is listed twice";
    inserted[d] = true;
  }
  Array<PrimExpr> shape;
  for (int64_t d = 0, kept = 0; d < rank; ++d) {
    shape.push_back(inserted[d] ? make_const(IndexType(x), int64_t{1}) : x.shape()[kept++]);
  }
  return te::compute(
      shape,
      [&](const Array<Var>& i) {
        Array<PrimExpr> index;
        for (int64_t d = 0; d < rank; ++d) {
          if (!inserted[d]) index.push_back(i[d]);
        }
        return x(index);
      },
      "unsqueeze", kInjective);
}

te::Tensor transpose(const te::Tensor& x, const std::vector<int64_t>& perm) {
  int rank = x.ndim();
  std::vector<int> order(rank);
  if (perm.empty()) {
    for (int d = 0; d < rank; ++d) order[d] = rank - 1 - d;
  } else {
    LOOM_CHECK_USER(static_cast<int>(perm.size()) == rank)
        << "transpose of '" << x.name() << "': perm " << ShapeText(perm) << " has " << perm.size()
        << " entries for a tensor of rank " << rank;
    std::vector<bool> seen(rank, false);
    for (int d = 0; d < rank; ++d) {
      order[d] = NormalizeAxis(perm[d], rank, "transpose", x);
      LOOM_CHECK_USER(!seen[order[d]]) << "transpose of '" << x.name() << "': perm "
                                       << ShapeText(perm) << " is not a permutation of the axes";
      seen[order[d]] = true;
    }
  }
  Array<PrimExpr> shape;
  for (int d = 0; d < rank; ++d) shape.push_back(x.shape()[order[d]]);
  return te::compute(
      shape,
      [&](const Array<Var>& i) {
        Array<PrimExpr> index(rank);
        for (int d = 0; d < rank; ++d) index[order[d]] = i[d];
        return x(index);
      },
      "transpose", kInjective);
}

te::Tensor reverse(const te::Tensor& x, int64_t axis) {
  const int d = NormalizeAxis(axis, x.ndim(), "reverse", x);
  return te::compute(
      x.shape(),
      [&](const Array<Var>& i) {
        Array<PrimExpr> index(i.begin(), i.end());
        const PrimExpr& extent = x.shape()[d];
        index[d] = extent - make_const(extent.dtype(), int64_t{1}) - i[d];
        return x(index);
      },
      "reverse", kInjective);
}

te::Tensor expand(const te::Tensor& x, const Array<PrimExpr>& shape) {
  Array<PrimExpr> out = BroadcastShape(x.shape(), shape, "expand of '" + x.name() + "'");
  return te::compute(
      out, [&](const Array<Var>& i) { return BroadcastRead(x, i); }, "expand", kInjective);
}

te::Tensor split_piece(const te::Tensor& x, const Array<PrimExpr>& sizes, int64_t axis,
                       int64_t index) {
  LOOM_CHECK_USER(axis >= 0 && axis < x.ndim() && index >= 0 &&
                  index < static_cast<int64_t>(sizes.size()))
      << "split_piece of '" << x.name() << "': piece " << index << " of " << sizes.size()
      << " along axis " << axis << " of a tensor of rank " << x.ndim();
  const DataType i64 = DataType::Int(64);
  PrimExpr offset = make_const(i64, int64_t{0});
  for (int64_t j = 0; j < index; ++j) offset = offset + cast(i64, sizes[static_cast<size_t>(j)]);
  Array<PrimExpr> shape = x.shape();
  shape[static_cast<size_t>(axis)] = sizes[static_cast<size_t>(index)];
  return te::compute(
      shape,
      [&](const Array<Var>& i) {
        Array<PrimExpr> at(i.begin(), i.end());
        at[static_cast<size_t>(axis)] = cast(i64, i[static_cast<size_t>(axis)]) + offset;
        return x(at);
      },
      "split", kInjective);
}

te::Tensor strided_slice_to(const te::Tensor& x, const Array<te::Tensor>& operands,
                            const Array<PrimExpr>& shape) {
  LOOM_CHECK_USER(operands.size() == 4 && static_cast<int>(shape.size()) == x.ndim())
      << "strided_slice_to of '" << x.name() << "': takes starts, ends, axes and steps and a "
      << "shape of rank " << x.ndim();
  int64_t k = -1;
  if (operands[0].ndim() == 1 && !IsConstInt(operands[0].shape()[0], &k)) k = -1;
  for (const te::Tensor& operand : operands) {
    LOOM_CHECK_USER(k >= 0 && operand.ndim() == 1 && detail::IsConst(operand.shape()[0], k) &&
                    operand.dtype().is_int())
        << "strided_slice_to of '" << x.name() << "': starts, ends, axes and steps must be 1-d "
        << "integer tensors of one constant length; '" << operand.name() << "' is not";
  }
  // Each dimension's first element and step, computed once (not per element).
  te::Tensor plan = slice_plan(x.shape(), operands);
  const DataType i64 = DataType::Int(64);
  return te::compute(
      shape,
      [&](const Array<Var>& i) {
        Array<PrimExpr> index;
        for (int d = 0; d < x.ndim(); ++d) {
          const PrimExpr first = plan(make_const(i64, int64_t{2} * d));
          const PrimExpr step = plan(make_const(i64, int64_t{2} * d + 1));
          index.push_back(first + loom::cast(i64, i[d]) * step);
        }
        return x(index);
      },
      "strided_slice", kInjective);
}

te::Tensor slice_to(const te::Tensor& x, const std::vector<int64_t>& axes,
                    const std::vector<int64_t>& begins, const Array<PrimExpr>& ends) {
  const std::string op = "slice of '" + x.name() + "'";
  LOOM_CHECK_USER(axes.size() == begins.size() && axes.size() == ends.size())
      << op << ": " << axes.size() << " axes, " << begins.size() << " begins and " << ends.size()
      << " ends";
  Array<PrimExpr> shape = x.shape();
  std::vector<int64_t> offset(shape.size(), 0);
  for (size_t k = 0; k < axes.size(); ++k) {
    int a = NormalizeAxis(axes[k], x.ndim(), "slice", x);
    // A symbolic end keeps its type (a size variable's int64); a constant one is int32, as
    // every constant size.
    int64_t end_value = 0, extent = 0;
    const PrimExpr end =
        IsConstInt(ends[k], &end_value) ? make_const(DataType::Int(32), end_value) : ends[k];
    const DataType t = end.dtype();
    LOOM_CHECK_USER(
        begins[k] >= 0 && (!IsConstInt(end, &end_value) || end_value >= begins[k]) &&
        (!IsConstInt(end, &end_value) || !IsConstInt(shape[a], &extent) || end_value <= extent))
        << op << ": [" << begins[k] << ", " << end << ") does not lie within axis " << a << " of "
        << ShapeText(x.shape());
    offset[static_cast<size_t>(a)] = begins[k];
    arith::Analyzer analyzer;
    shape[a] = analyzer.Simplify(end - make_const(t, begins[k]));
  }
  return te::compute(
      shape,
      [&](const Array<Var>& i) {
        Array<PrimExpr> index;
        for (size_t d = 0; d < i.size(); ++d) {
          PrimExpr at =
              offset[d] == 0 ? PrimExpr(i[d]) : i[d] + make_const(i[d].dtype(), offset[d]);
          const DataType t = x.shape()[d].dtype();
          index.push_back(at.dtype() == t ? at : loom::cast(t, at));
        }
        return x(index);
      },
      "slice", kInjective);
}

te::Tensor broadcast_to(const te::Tensor& x, const Array<PrimExpr>& shape) {
  std::string op = "broadcast_to of '" + x.name() + "'";
  Array<PrimExpr> out = BroadcastShape(x.shape(), shape, op);
  bool exact = out.size() == shape.size();
  for (size_t d = 0; exact && d < out.size(); ++d) exact = SameExtent(out[d], shape[d]);
  LOOM_CHECK_USER(exact) << op << ": " << ShapeText(x.shape()) << " does not broadcast to "
                         << ShapeText(shape) << " (it would give " << ShapeText(out)
                         << "); use expand to broadcast in both directions";
  return te::compute(
      shape, [&](const Array<Var>& i) { return BroadcastRead(x, i); }, "broadcast_to", kInjective);
}

te::Tensor concat(const Array<te::Tensor>& tensors, int64_t axis) {
  LOOM_CHECK_USER(!tensors.empty()) << "concat: no tensors to concatenate";
  const te::Tensor& first = tensors[0];
  int a = NormalizeAxis(axis, first.ndim(), "concat", first);
  // offsets[k]: where tensor k starts along the axis; offsets.back() is the output's extent.
  Array<PrimExpr> offsets = {make_zero(IndexType(first))};
  for (const te::Tensor& t : tensors) {
    LOOM_CHECK_USER(t.dtype() == first.dtype())
        << "concat: '" << t.name() << "' is " << t.dtype().str() << " but '" << first.name()
        << "' is " << first.dtype().str() << "; all tensors need one dtype";
    bool same = t.ndim() == first.ndim();
    for (int d = 0; same && d < t.ndim(); ++d) {
      same = d == a || SameExtent(t.shape()[d], first.shape()[d]);
    }
    LOOM_CHECK_USER(same) << "concat along axis " << axis << ": '" << t.name() << "' has shape "
                          << ShapeText(t.shape()) << " but '" << first.name() << "' has "
                          << ShapeText(first.shape())
                          << "; all dimensions but the axis must be equal";
    offsets.push_back(offsets.back() + t.shape()[a]);
  }
  Array<PrimExpr> shape = first.shape();
  shape[a] = offsets.back();
  return te::compute(
      shape,
      [&](const Array<Var>& i) {
        PrimExpr value;
        for (size_t k = tensors.size(); k-- > 0;) {
          if (IsConst(tensors[k].shape()[a], 0)) continue;  // contributes nothing
          Array<PrimExpr> index = AsExprs(i);
          index[a] = ClampIndex(i[a] - offsets[k], tensors[k].shape()[a]);
          PrimExpr read = tensors[k](index);
          value = value.defined() ? select(i[a] < offsets[k + 1], read, value) : read;
        }
        // Every tensor empty along the axis: so is the output, and the body never runs.
        return value.defined() ? value : make_zero(first.dtype());
      },
      "concat", kInjective);
}

Array<te::Tensor> split(const te::Tensor& x, int64_t axis, const std::vector<int64_t>& sizes) {
  int a = NormalizeAxis(axis, x.ndim(), "split", x);
  int64_t extent = 0;
  LOOM_CHECK_USER(IsConstInt(x.shape()[a], &extent))
      << "split of '" << x.name() << "': dimension " << a << " of " << ShapeText(x.shape())
      << " is symbolic; the operator needs a constant size";
  int64_t total = 0;
  for (int64_t size : sizes) {
    LOOM_CHECK_USER(size >= 0) << "split of '" << x.name() << "': sizes " << ShapeText(sizes)
                               << " include a negative size";
    total += size;
  }
  LOOM_CHECK_USER(!sizes.empty() && total == extent)
      << "split of '" << x.name() << "': sizes " << ShapeText(sizes) << " sum to " << total
      << " but dimension " << a << " of " << ShapeText(x.shape()) << " is " << extent;
  Array<te::Tensor> pieces;
  int64_t offset = 0;
  for (int64_t size : sizes) {
    Array<PrimExpr> shape = x.shape();
    shape[a] = make_const(IndexType(x), size);
    pieces.push_back(te::compute(
        shape,
        [&](const Array<Var>& i) {
          Array<PrimExpr> index = AsExprs(i);
          index[a] = i[a] + make_const(i[a].dtype(), offset);
          return x(index);
        },
        "split", kInjective));
    offset += size;
  }
  return pieces;
}

Array<te::Tensor> split_by_count(const te::Tensor& x, int64_t axis, int64_t num_outputs) {
  int a = NormalizeAxis(axis, x.ndim(), "split_by_count", x);
  int64_t extent = 0;
  LOOM_CHECK_USER(IsConstInt(x.shape()[a], &extent))
      << "split_by_count of '" << x.name() << "': dimension " << a << " of " << ShapeText(x.shape())
      << " is symbolic; the operator needs a constant size";
  LOOM_CHECK_USER(num_outputs >= 1)
      << "split_by_count of '" << x.name() << "': num_outputs " << num_outputs << " must be at least 1";
  int64_t part = (extent + num_outputs - 1) / num_outputs;
  int64_t last = extent - part * (num_outputs - 1);
  LOOM_CHECK_USER(last >= 0)
      << "split_by_count of '" << x.name() << "': dimension " << a << " of " << ShapeText(x.shape())
      << " does not divide into " << num_outputs << " parts of " << part
      << " (the last one smaller); use explicit sizes";
  std::vector<int64_t> sizes(num_outputs, part);
  sizes.back() = last;
  return split(x, axis, sizes);
}

te::Tensor strided_slice(const te::Tensor& x, const std::vector<int64_t>& starts,
                         const std::vector<int64_t>& ends, const std::vector<int64_t>& axes,
                         const std::vector<int64_t>& steps) {
  const std::string op = "strided_slice";
  LOOM_CHECK_USER(ends.size() == starts.size() &&
                  (axes.empty() || axes.size() == starts.size()) &&
                  (steps.empty() || steps.size() == starts.size()))
      << op << " of '" << x.name() << "': starts " << ShapeText(starts) << ", ends "
      << ShapeText(ends) << ", axes " << ShapeText(axes) << " and steps " << ShapeText(steps)
      << " differ in length";
  std::vector<int64_t> first(x.ndim(), 0), stride(x.ndim(), 1);
  Array<PrimExpr> shape = x.shape();
  std::vector<bool> sliced(x.ndim(), false);
  for (size_t k = 0; k < starts.size(); ++k) {
    int d = NormalizeAxis(axes.empty() ? static_cast<int64_t>(k) : axes[k], x.ndim(), op, x);
    LOOM_CHECK_USER(!sliced[d]) << op << " of '" << x.name() << "': axis " << d
                                << " is sliced twice";
    sliced[d] = true;
    int64_t step = steps.empty() ? 1 : steps[k];
    LOOM_CHECK_USER(step != 0) << op << " of '" << x.name() << "': step 0 along axis " << d;
    int64_t extent = 0;
    LOOM_CHECK_USER(IsConstInt(x.shape()[d], &extent))
        << op << " of '" << x.name() << "': dimension " << d << " of " << ShapeText(x.shape())
        << " is symbolic; the operator needs a constant size";
    // ONNX Slice: negative bounds count from the end, then clamp to [0, extent] going
    // forward or [-1, extent - 1] going backward (where -1 is "before the first").
    int64_t start = starts[k] < 0 ? starts[k] + extent : starts[k];
    int64_t end = ends[k] < 0 ? ends[k] + extent : ends[k];
    if (extent == 0) {  // nothing to read, in either direction
      start = end = 0;
    } else if (step > 0) {
      start = std::clamp<int64_t>(start, 0, extent);
      end = std::clamp<int64_t>(end, 0, extent);
    } else {
      start = std::clamp<int64_t>(start, 0, extent - 1);
      end = std::clamp<int64_t>(end, -1, extent - 1);
    }
    int64_t span = step > 0 ? end - start : start - end;
    // Unsigned, so that steps up to INT64_MIN and INT64_MAX neither overflow nor wrap.
    uint64_t magnitude = step > 0 ? uint64_t(step) : uint64_t{0} - uint64_t(step);
    int64_t count = span <= 0 ? 0 : int64_t(1 + uint64_t(span - 1) / magnitude);
    first[d] = start;
    // A single element needs no step, which then need not fit the index type.
    stride[d] = count > 1 ? step : 1;
    shape[d] = make_const(IndexType(x), count);
  }
  return te::compute(
      shape,
      [&](const Array<Var>& i) {
        Array<PrimExpr> index;
        for (int d = 0; d < x.ndim(); ++d) {
          DataType t = i[d].dtype();
          index.push_back(sliced[d] ? make_const(t, first[d]) + i[d] * make_const(t, stride[d])
                                    : PrimExpr(i[d]));
        }
        return x(index);
      },
      op, kInjective);
}

te::Tensor tile(const te::Tensor& x, const std::vector<int64_t>& repeats) {
  LOOM_CHECK_USER(static_cast<int>(repeats.size()) == x.ndim())
      << "tile of '" << x.name() << "': repeats " << ShapeText(repeats) << " has "
      << repeats.size() << " entries for a tensor of rank " << x.ndim();
  Array<PrimExpr> shape;
  for (int d = 0; d < x.ndim(); ++d) {
    LOOM_CHECK_USER(repeats[d] >= 0) << "tile of '" << x.name() << "': repeats "
                                     << ShapeText(repeats) << " must not be negative";
    shape.push_back(x.shape()[d] * make_const(x.shape()[d].dtype(), repeats[d]));
  }
  return te::compute(
      shape,
      [&](const Array<Var>& i) {
        Array<PrimExpr> index;
        for (int d = 0; d < x.ndim(); ++d) {
          // An empty dimension (or a repeat of 0) leaves the output empty: no modulo by 0.
          bool wraps = repeats[d] > 1 && !IsConst(x.shape()[d], 0);
          index.push_back(wraps ? floormod(i[d], x.shape()[d]) : PrimExpr(i[d]));
        }
        return x(index);
      },
      "tile", kInjective);
}

}  // namespace loom::topi
