// Reductions: one Reduce compute (tag "comm_reduce") per reduction, plus injective stages
// for what follows it (mean's division, l2's square root, softmax's normalization).
#include "loom/topi/reduction.h"

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

// A Reduce compute over the `reduced` dimensions of x (shape `shape`): its output drops them,
// or keeps them as 1 with keepdims.
te::Tensor ReduceCompute(const Array<PrimExpr>& shape, const std::vector<bool>& reduced,
                         bool keepdims, const std::string& name, const SourceOf& source,
                         const Reducer& reducer) {
  Array<PrimExpr> out_shape;
  std::vector<IterVar> dim_axis(shape.size());
  Array<IterVar> axes;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (reduced[d]) {
      dim_axis[d] = te::reduce_axis(Range(0, shape[d]), "k" + std::to_string(d));
      axes.push_back(dim_axis[d]);
      if (keepdims) out_shape.push_back(1);
    } else {
      out_shape.push_back(shape[d]);
    }
  }
  return te::compute(
      out_shape,
      [&](const Array<Var>& i) {
        Array<PrimExpr> index;
        size_t position = 0;
        for (size_t d = 0; d < shape.size(); ++d) {
          if (reduced[d]) {
            index.push_back(dim_axis[d]->var);
            position += keepdims ? 1 : 0;
          } else {
            index.push_back(i[position++]);
          }
        }
        return reducer(source(index), axes);
      },
      name, kReduceTag);
}

te::Tensor Reduce(const te::Tensor& x, const std::vector<int>& axes, bool keepdims,
                  const std::string& op, const std::function<PrimExpr(PrimExpr)>& transform,
                  const Reducer& reducer) {
  return ReduceCompute(
      x.shape(), ReducedDims(x, axes, op), keepdims, op,
      [&](const Array<PrimExpr>& index) { return transform(x(index)); }, reducer);
}

PrimExpr Identity(PrimExpr v) { return v; }
Reducer SumReducer() { return [](const PrimExpr& v, const Array<IterVar>& a) { return te::sum(v, a); }; }

// The index of a keepdims-shaped tensor for element `index` of the full shape: reduced
// dimensions read 0.
Array<PrimExpr> KeptIndex(const Array<PrimExpr>& index, const std::vector<bool>& reduced) {
  Array<PrimExpr> kept;
  for (size_t d = 0; d < index.size(); ++d) {
    kept.push_back(reduced[d] ? make_zero(index[d].dtype()) : index[d]);
  }
  return kept;
}

// The keepdims-shaped index for an output index of a reduction without keepdims.
Array<PrimExpr> ExpandIndex(const Array<Var>& out, const std::vector<bool>& reduced) {
  Array<PrimExpr> kept;
  size_t position = 0;
  for (bool r : reduced) kept.push_back(r ? make_zero(DataType::Int(32)) : PrimExpr(out[position++]));
  return kept;
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
  return Reduce(x, axes, keepdims, "sum", Identity, SumReducer());
}

te::Tensor mean(const te::Tensor& x, const std::vector<int>& axes, bool keepdims) {
  std::vector<bool> reduced = ReducedDims(x, axes, "mean");
  PrimExpr count = make_const(DataType::Int(32), int64_t{1});
  for (size_t d = 0; d < reduced.size(); ++d) {
    if (reduced[d]) count = count * x.shape()[d];
  }
  te::Tensor total = sum(x, axes, keepdims);
  DataType t = x.dtype();
  return te::compute(
      total.shape(),
      [&](const Array<Var>& i) {
        return t.is_float() ? total(i) / loom::cast(t, count) : truncdiv(total(i), loom::cast(t, count));
      },
      "mean", "elemwise");
}

te::Tensor max(const te::Tensor& x, const std::vector<int>& axes, bool keepdims) {
  return Reduce(x, axes, keepdims, "max", Identity,
                [](const PrimExpr& v, const Array<IterVar>& a) { return te::max(v, a); });
}

te::Tensor min(const te::Tensor& x, const std::vector<int>& axes, bool keepdims) {
  return Reduce(x, axes, keepdims, "min", Identity,
                [](const PrimExpr& v, const Array<IterVar>& a) { return te::min(v, a); });
}

te::Tensor prod(const te::Tensor& x, const std::vector<int>& axes, bool keepdims) {
  return Reduce(x, axes, keepdims, "prod", Identity,
                [](const PrimExpr& v, const Array<IterVar>& a) { return te::prod(v, a); });
}

te::Tensor l1_norm(const te::Tensor& x, const std::vector<int>& axes, bool keepdims) {
  return Reduce(
      x, axes, keepdims, "l1_norm",
      [](PrimExpr v) {
        if (v.dtype().is_float()) return loom::fabs(v);
        return select(v < make_zero(v.dtype()), make_zero(v.dtype()) - v, v);
      },
      SumReducer());
}

te::Tensor sum_square(const te::Tensor& x, const std::vector<int>& axes, bool keepdims) {
  return Reduce(x, axes, keepdims, "sum_square", [](PrimExpr v) { return v * v; }, SumReducer());
}

te::Tensor l2_norm(const te::Tensor& x, const std::vector<int>& axes, bool keepdims) {
  detail::CheckFloat(x, "l2_norm");
  te::Tensor squares = sum_square(x, axes, keepdims);
  return te::compute(
      squares.shape(), [&](const Array<Var>& i) { return loom::sqrt(squares(i)); }, "l2_norm",
      "elemwise");
}

te::Tensor logsumexp(const te::Tensor& x, const std::vector<int>& axes, bool keepdims) {
  detail::CheckFloat(x, "logsumexp");
  std::vector<bool> reduced = ReducedDims(x, axes, "logsumexp");
  te::Tensor largest = max(x, axes, /*keepdims=*/true);
  te::Tensor total = ReduceCompute(
      x.shape(), reduced, /*keepdims=*/true, "logsumexp_sum",
      [&](const Array<PrimExpr>& index) {
        return loom::exp(x(index) - largest(KeptIndex(index, reduced)));
      },
      SumReducer());
  Array<PrimExpr> out_shape;
  for (size_t d = 0; d < reduced.size(); ++d) {
    if (!reduced[d]) out_shape.push_back(x.shape()[d]);
    else if (keepdims) out_shape.push_back(1);
  }
  return te::compute(
      out_shape,
      [&](const Array<Var>& i) {
        Array<PrimExpr> kept =
            keepdims ? Array<PrimExpr>(i.begin(), i.end()) : ExpandIndex(i, reduced);
        return loom::log(total(kept)) + largest(kept);
      },
      "logsumexp", "elemwise");
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
