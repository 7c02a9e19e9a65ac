// Reductions: one Reduce compute (tag "comm_reduce") per reduction, plus injective stages
// for what follows it (mean's division, l2's square root, softmax's normalization).
#include "loom/topi/reduction.h"

#include <map>
#include <string>

#include "loom/ir/math.h"
#include "loom/topi/elementwise.h"
#include "topi/topi_util.h"

namespace loom::topi {

namespace {

constexpr const char* kReduceTag = "comm_reduce";

// Which dimensions `axes` reduces (all of them when empty).
std::vector<bool> ReducedDims(const te::Tensor& x, const std::vector<int>& axes,
                              const std::string& op) {
  int rank = x.ndim();
  std::vector<bool> reduced(rank, axes.empty());
  for (int axis : axes) {
    int d = detail::NormalizeAxis(axis, rank, op, x);
    LOOM_CHECK_USER(!reduced[d]) << op << " of '" << x.name() << "': axis " << axis
                                 << " is listed twice";
    reduced[d] = true;
  }
  return reduced;
}

using Reducer = std::function<PrimExpr(const PrimExpr& source, const Array<IterVar>& axes)>;
// The element of x a reduction reads, from the output index and the reduction variables.
using SourceOf = std::function<PrimExpr(const Array<PrimExpr>& x_index)>;

// Where a reduction reads: its output's shape, its reduction axes, the index of x it reads at
// an output index (the axes' variables in it), and how many elements each output reduces.
struct Geometry {
  Array<PrimExpr> out_shape;
  Array<IterVar> axes;
  std::function<Array<PrimExpr>(const Array<Var>& out)> x_index;
  PrimExpr count;
};

// Over the `reduced` dimensions of `shape`: the output drops them, or keeps them as 1 with
// keepdims.
Geometry OverDims(const Array<PrimExpr>& shape, const std::vector<bool>& reduced, bool keepdims) {
  Geometry g;
  std::vector<IterVar> dim_axis(shape.size());
  g.count = make_const(DataType::Int(32), int64_t{1});
  for (size_t d = 0; d < shape.size(); ++d) {
    if (reduced[d]) {
      dim_axis[d] = te::reduce_axis(Range(0, shape[d]), "k" + std::to_string(d));
      g.axes.push_back(dim_axis[d]);
      g.count = g.count * shape[d];
      if (keepdims) g.out_shape.push_back(1);
    } else {
      g.out_shape.push_back(shape[d]);
    }
  }
  g.x_index = [dim_axis, reduced, keepdims](const Array<Var>& i) {
    Array<PrimExpr> index;
    size_t position = 0;
    for (size_t d = 0; d < reduced.size(); ++d) {
      if (reduced[d]) {
        index.push_back(dim_axis[d]->var);
        position += keepdims ? 1 : 0;
      } else {
        index.push_back(i[position++]);
      }
    }
    return index;
  };
  return g;
}

// To `shape`, each of whose dimensions is x's (kept) or 1 (reduced), as a run gives them:
// along dimension d the output reads x_d - s_d + 1 elements from its own index on (all x_d
// from 0 where s_d is 1, its own element where s_d is x_d).
Geometry ToShape(const te::Tensor& x, const Array<PrimExpr>& shape) {
  const DataType i64 = DataType::Int(64);
  LOOM_CHECK_USER(static_cast<int>(shape.size()) == x.ndim())
      << "reduce_to: '" << x.name() << "' of rank " << x.ndim() << " reduced to a shape of rank "
      << shape.size();
  Geometry g;
  g.out_shape = shape;
  g.count = make_const(i64, int64_t{1});
  for (size_t d = 0; d < shape.size(); ++d) {
    const PrimExpr extent =
        cast(i64, x.shape()[d]) - cast(i64, shape[d]) + make_const(i64, int64_t{1});
    g.axes.push_back(
        te::reduce_axis(Range(make_const(i64, int64_t{0}), extent), "k" + std::to_string(d)));
    g.count = g.count * extent;
  }
  g.x_index = [axes = g.axes](const Array<Var>& i) {
    Array<PrimExpr> index;
    for (size_t d = 0; d < axes.size(); ++d) {
      index.push_back(cast(DataType::Int(64), i[d]) + axes[d]->var);
    }
    return index;
  };
  return g;
}

te::Tensor ReduceCompute(const Geometry& g, const std::string& name, const SourceOf& source,
                         const Reducer& reducer) {
  return te::compute(
      g.out_shape, [&](const Array<Var>& i) { return reducer(source(g.x_index(i)), g.axes); }, name,
      kReduceTag);
}

// A Reduce compute over the `reduced` dimensions of `shape`: its output drops them, or keeps
// them as 1 with keepdims.
te::Tensor ReduceCompute(const Array<PrimExpr>& shape, const std::vector<bool>& reduced,
                         bool keepdims, const std::string& name, const SourceOf& source,
                         const Reducer& reducer) {
  return ReduceCompute(OverDims(shape, reduced, keepdims), name, source, reducer);
}

// What a reduction operator reduces: its geometry (made anew, with fresh reduction axes, for
// each compute; `keep`: the reduced dimensions kept as 1), whether its output keeps them, and
// the keepdims-shaped index of an output index.
struct Reduction {
  std::function<Geometry(bool keep)> geometry;
  bool keepdims = true;
  std::function<Array<PrimExpr>(const Array<Var>& out)> kept_index;
};

// Over the listed axes (every one when empty; ONNX noop_with_empty_axes = 0).
Reduction OverAxes(const te::Tensor& x, const std::vector<int>& axes, bool keepdims,
                   const std::string& op) {
  std::vector<bool> reduced = ReducedDims(x, axes, op);
  Reduction r;
  r.geometry = [shape = x.shape(), reduced](bool keep) { return OverDims(shape, reduced, keep); };
  r.keepdims = keepdims;
  r.kept_index = [reduced, keepdims](const Array<Var>& out) {
    Array<PrimExpr> kept;
    size_t position = 0;
    for (bool is_reduced : reduced) {
      if (is_reduced && !keepdims) {
        kept.push_back(make_zero(DataType::Int(32)));
      } else {
        kept.push_back(out[position++]);
      }
    }
    return kept;
  };
  return r;
}

// To a shape a run gives (ToShape; the output keeps every dimension).
Reduction OverShape(const te::Tensor& x, const Array<PrimExpr>& shape) {
  Reduction r;
  r.geometry = [x, shape](bool) { return ToShape(x, shape); };
  r.kept_index = [](const Array<Var>& out) { return Array<PrimExpr>(out.begin(), out.end()); };
  return r;
}

PrimExpr Identity(PrimExpr v) { return v; }
Reducer SumReducer() {
  return [](const PrimExpr& v, const Array<IterVar>& a) { return te::sum(v, a); };
}

// x's elements, `transform`ed, reduced by `reducer`.
te::Tensor Reduce(const te::Tensor& x, const Reduction& r, const std::string& name,
                  const std::function<PrimExpr(PrimExpr)>& transform, const Reducer& reducer) {
  return ReduceCompute(
      r.geometry(r.keepdims), name,
      [&](const Array<PrimExpr>& index) { return transform(x(index)); }, reducer);
}

// The index of a keepdims-shaped tensor for element `index` of the full shape: reduced
// dimensions read 0.
Array<PrimExpr> KeptIndex(const Array<PrimExpr>& index, const std::vector<bool>& reduced) {
  Array<PrimExpr> kept;
  for (size_t d = 0; d < index.size(); ++d) {
    kept.push_back(reduced[d] ? make_zero(index[d].dtype()) : index[d]);
  }
  return kept;
}

te::Tensor SumOf(const te::Tensor& x, const Reduction& r) {
  return Reduce(x, r, "sum", Identity, SumReducer());
}

// Integers divide truncating, as ONNX ReduceMean.
te::Tensor MeanOf(const te::Tensor& x, const Reduction& r) {
  Geometry g = r.geometry(r.keepdims);
  te::Tensor total = ReduceCompute(
      g, "sum", [&](const Array<PrimExpr>& index) { return x(index); }, SumReducer());
  DataType t = x.dtype();
  return te::compute(
      total.shape(),
      [&](const Array<Var>& i) {
        if (t.is_float()) return total(i) / loom::cast(t, g.count);
        // In int64, so that a count past the type's range neither wraps nor reaches 0; an
        // empty reduction (count 0) gives 0 rather than a trap.
        const DataType i64 = DataType::Int(64);
        const PrimExpr count = loom::cast(i64, g.count);
        const PrimExpr one = make_const(i64, int64_t{1});
        return loom::cast(t, select(count == make_zero(i64), make_zero(i64),
                                    truncdiv(loom::cast(i64, total(i)), max(count, one))));
      },
      "mean", "elemwise");
}

te::Tensor MaxOf(const te::Tensor& x, const Reduction& r) {
  return Reduce(x, r, "max", Identity,
                [](const PrimExpr& v, const Array<IterVar>& a) { return te::max(v, a); });
}

te::Tensor MinOf(const te::Tensor& x, const Reduction& r) {
  return Reduce(x, r, "min", Identity,
                [](const PrimExpr& v, const Array<IterVar>& a) { return te::min(v, a); });
}

te::Tensor ProdOf(const te::Tensor& x, const Reduction& r) {
  return Reduce(x, r, "prod", Identity,
                [](const PrimExpr& v, const Array<IterVar>& a) { return te::prod(v, a); });
}

te::Tensor L1NormOf(const te::Tensor& x, const Reduction& r) {
  return Reduce(
      x, r, "l1_norm",
      [](PrimExpr v) {
        if (v.dtype().is_float()) return loom::fabs(v);
        return select(v < make_zero(v.dtype()), make_zero(v.dtype()) - v, v);
      },
      SumReducer());
}

te::Tensor SumSquareOf(const te::Tensor& x, const Reduction& r) {
  return Reduce(
      x, r, "sum_square", [](PrimExpr v) { return v * v; }, SumReducer());
}

te::Tensor L2NormOf(const te::Tensor& x, const Reduction& r) {
  detail::CheckFloat(x, "l2_norm");
  te::Tensor squares = SumSquareOf(x, r);
  return te::compute(
      squares.shape(), [&](const Array<Var>& i) { return loom::sqrt(squares(i)); }, "l2_norm",
      "elemwise");
}

// log(sum(exp(x))) as m + log(sum(exp(x - m))), m the maximum (no overflow); the maximum and
// the sum keep the reduced dimensions, the last stage drops them where the operator does.
te::Tensor LogSumExpOf(const te::Tensor& x, const Reduction& r) {
  detail::CheckFloat(x, "logsumexp");
  Reduction kept = r;
  kept.keepdims = true;
  te::Tensor largest = MaxOf(x, kept);
  Geometry g = r.geometry(/*keep=*/true);
  te::Tensor total = te::compute(
      g.out_shape,
      [&](const Array<Var>& i) { return te::sum(loom::exp(x(g.x_index(i)) - largest(i)), g.axes); },
      "logsumexp_sum", kReduceTag);
  return te::compute(
      r.geometry(r.keepdims).out_shape,
      [&](const Array<Var>& i) {
        Array<PrimExpr> at = r.kept_index(i);
        return loom::log(total(at)) + largest(at);
      },
      "logsumexp", "elemwise");
}

te::Tensor ArgReduce(const te::Tensor& x, int axis, bool keepdims, bool select_last_index,
                     bool largest, const std::string& op) {
  LOOM_CHECK_USER(!x.dtype().is_bool())
      << op << ": '" << x.name() << "' is bool; the operator takes numeric tensors";
  int d = detail::NormalizeAxis(axis, x.ndim(), op, x);
  std::vector<bool> reduced(x.ndim(), false);
  reduced[d] = true;
  te::CommReducerBuilder reducer = te::comm_reducer(
      [largest, select_last_index](const Array<Var>& a, const Array<Var>& b) {
        // (index, value) pairs; b wins when its value is better, or equal and its index is
        // the one ties prefer.
        PrimExpr better = largest ? b[1] > a[1] : b[1] < a[1];
        PrimExpr tie_index = select_last_index ? b[0] > a[0] : b[0] < a[0];
        PrimExpr take_b = better || (b[1] == a[1] && tie_index);
        return Array<PrimExpr>{select(take_b, b[0], a[0]), select(take_b, b[1], a[1])};
      },
      [largest](const Array<DataType>& t) {
        return Array<PrimExpr>{make_const(t[0], int64_t{-1}),
                               largest ? te::min_value(t[1]) : te::max_value(t[1])};
      },
      op);
  Array<PrimExpr> out_shape;
  for (int k = 0; k < x.ndim(); ++k) {
    if (k != d) out_shape.push_back(x.shape()[k]);
    else if (keepdims) out_shape.push_back(1);
  }
  IterVar r = te::reduce_axis(Range(0, x.shape()[d]), "k");
  Array<te::Tensor> outs = te::compute(
      out_shape,
      [&](const Array<Var>& i) {
        Array<PrimExpr> index;
        size_t position = 0;
        for (int k = 0; k < x.ndim(); ++k) {
          if (k == d) {
            index.push_back(r->var);
            position += keepdims ? 1 : 0;
          } else {
            index.push_back(i[position++]);
          }
        }
        return reducer({loom::cast(DataType::Int(64), r->var), x(index)}, {r});
      },
      op + "_pair", kReduceTag);
  // The (index, value) reduction has two outputs; the operator's result is the index alone,
  // copied out so that the pair stays an intermediate.
  te::Tensor index = outs[0];
  return te::compute(
      index.shape(), [&](const Array<Var>& i) { return index(i); }, op, "elemwise");
}

}  // namespace

te::Tensor sum(const te::Tensor& x, const std::vector<int>& axes, bool keepdims) {
  return SumOf(x, OverAxes(x, axes, keepdims, "sum"));
}
te::Tensor mean(const te::Tensor& x, const std::vector<int>& axes, bool keepdims) {
  return MeanOf(x, OverAxes(x, axes, keepdims, "mean"));
}
te::Tensor max(const te::Tensor& x, const std::vector<int>& axes, bool keepdims) {
  return MaxOf(x, OverAxes(x, axes, keepdims, "max"));
}
te::Tensor min(const te::Tensor& x, const std::vector<int>& axes, bool keepdims) {
  return MinOf(x, OverAxes(x, axes, keepdims, "min"));
}
te::Tensor prod(const te::Tensor& x, const std::vector<int>& axes, bool keepdims) {
  return ProdOf(x, OverAxes(x, axes, keepdims, "prod"));
}
te::Tensor l1_norm(const te::Tensor& x, const std::vector<int>& axes, bool keepdims) {
  return L1NormOf(x, OverAxes(x, axes, keepdims, "l1_norm"));
}
te::Tensor l2_norm(const te::Tensor& x, const std::vector<int>& axes, bool keepdims) {
  return L2NormOf(x, OverAxes(x, axes, keepdims, "l2_norm"));
}
te::Tensor sum_square(const te::Tensor& x, const std::vector<int>& axes, bool keepdims) {
  return SumSquareOf(x, OverAxes(x, axes, keepdims, "sum_square"));
}
te::Tensor logsumexp(const te::Tensor& x, const std::vector<int>& axes, bool keepdims) {
  return LogSumExpOf(x, OverAxes(x, axes, keepdims, "logsumexp"));
}

te::Tensor reduce_to(const te::Tensor& x, const Array<PrimExpr>& shape,
                     const std::string& reducer) {
  using Kind = te::Tensor (*)(const te::Tensor&, const Reduction&);
  static const std::map<std::string, Kind> kKinds = {{"sum", SumOf},
                                                     {"mean", MeanOf},
                                                     {"max", MaxOf},
                                                     {"min", MinOf},
                                                     {"prod", ProdOf},
                                                     {"l1_norm", L1NormOf},
                                                     {"l2_norm", L2NormOf},
                                                     {"sum_square", SumSquareOf},
                                                     {"logsumexp", LogSumExpOf}};
  auto kind = kKinds.find(reducer);
  LOOM_CHECK_USER(kind != kKinds.end())
      << "reduce_to: unknown reducer '" << reducer
      << "'; known: sum, mean, max, min, prod, l1_norm, l2_norm, sum_square, logsumexp";
  return kind->second(x, OverShape(x, shape));
}

te::Tensor argmax(const te::Tensor& x, int axis, bool keepdims, bool select_last_index) {
  return ArgReduce(x, axis, keepdims, select_last_index, /*largest=*/true, "argmax");
}

te::Tensor argmin(const te::Tensor& x, int axis, bool keepdims, bool select_last_index) {
  return ArgReduce(x, axis, keepdims, select_last_index, /*largest=*/false, "argmin");
}

namespace {

// Softmax and log_softmax share the maximum and the sum of exponentials; the output stage's
// tag carries the axis for schedule_softmax ("softmax_output:<axis>"). Softmax keeps each
// exp(x - max) in a stage (tag "softmax_exp") that both the sum and the output read, so
// every exponential is evaluated once; log_softmax needs them only for the sum.
te::Tensor SoftmaxLike(const te::Tensor& x, int axis, bool log_output) {
  const std::string op = log_output ? "log_softmax" : "softmax";
  detail::CheckFloat(x, op);
  int d = detail::NormalizeAxis(axis, x.ndim(), op, x);
  std::vector<bool> reduced(x.ndim(), false);
  reduced[d] = true;
  te::Tensor largest = max(x, {d}, /*keepdims=*/true);
  auto shifted = [&](const Array<PrimExpr>& index) {
    return x(index) - largest(KeptIndex(index, reduced));
  };
  te::Tensor exponentials;
  if (!log_output) {
    exponentials = te::compute(
        x.shape(),
        [&](const Array<Var>& i) {
          return loom::exp(shifted(Array<PrimExpr>(i.begin(), i.end())));
        },
        op + "_exp", "softmax_exp");
  }
  te::Tensor total = ReduceCompute(
      x.shape(), reduced, /*keepdims=*/true, op + "_sum",
      [&](const Array<PrimExpr>& index) {
        return log_output ? loom::exp(shifted(index)) : exponentials(index);
      },
      SumReducer());
  return te::compute(
      x.shape(),
      [&](const Array<Var>& i) {
        Array<PrimExpr> index(i.begin(), i.end());
        Array<PrimExpr> kept = KeptIndex(index, reduced);
        return log_output ? shifted(index) - loom::log(total(kept))
                          : exponentials(index) / total(kept);
      },
      op, "softmax_output:" + std::to_string(d));
}

}  // namespace

te::Tensor softmax(const te::Tensor& x, int axis) { return SoftmaxLike(x, axis, false); }
te::Tensor log_softmax(const te::Tensor& x, int axis) { return SoftmaxLike(x, axis, true); }

}  // namespace loom::topi
