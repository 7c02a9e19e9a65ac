// Shape functions as straight-line TIR (one statement per output dimension; the operand's
// length is known when compiling, its values only when running).
#include "loom/topi/shape_function.h"

#include <algorithm>
#include <string>

#include "loom/ir/math.h"
#include "topi/loop_nest.h"
#include "topi/topi_util.h"

namespace loom::topi {

namespace {

using namespace detail;  // NOLINT: the loop-nest helpers (loop_nest.h)

// The element count of a 1-d integer operand (`what` of `op`), which must be constant.
int64_t OperandLength(const te::Tensor& operand, const std::string& op, const std::string& what) {
  int64_t length = 0;
  LOOM_CHECK_USER(operand.ndim() == 1 && IsConstInt(operand.shape()[0], &length) &&
                  operand.dtype().is_int())
      << op << ": " << what << " '" << operand.name()
      << "' must be a 1-d integer tensor of constant length";
  return length;
}

// Element `i` of a 1-d operand, as int64.
PrimExpr Element(const Buffer& operand, int64_t i) {
  return cast(kI64, BufferLoad(operand, {I64(i)}));
}

// The one element of a scalar (rank 0, or one element of rank 1).
PrimExpr ScalarOf(const Buffer& scalar) {
  Array<PrimExpr> index;
  for (size_t d = 0; d < scalar->shape.size(); ++d) index.push_back(I64(0));
  return BufferLoad(scalar, index);
}

// Whether one of the k `axes` (positions in a rank of `rank`, negative ones counting from the
// end) is position d.
PrimExpr Lists(const Buffer& axes, int64_t k, int64_t rank, int64_t d) {
  PrimExpr listed = const_false();
  for (int64_t j = 0; j < k; ++j) {
    const PrimExpr axis = Element(axes, j);
    listed = listed || select(axis < I64(0), axis + I64(rank), axis) == I64(d);
  }
  return listed;
}

// Whether every one of the k `axes` is within a rank of `rank`.
PrimExpr AllWithin(const Buffer& axes, int64_t k, int64_t rank) {
  PrimExpr within = const_true();
  for (int64_t j = 0; j < k; ++j) {
    const PrimExpr axis = Element(axes, j);
    within = within && axis >= I64(-rank) && axis < I64(rank);
  }
  return within;
}

// A tensor of rank 0 has no axis for any of k > 0 axes to name (and a shape function of
// rank 0 could not refuse them).
void CheckAxesOfAScalar(const te::Tensor& x, int64_t k, const std::string& op) {
  LOOM_CHECK_USER(x.ndim() > 0 || k == 0)
      << op << ": " << k << " axes for '" << x.name() << "', a scalar, which has none";
}

// The statements that set every one of dims's `count` values to -1 when `bad` holds.
Stmt RefuseIf(const PrimExpr& bad, const Buffer& dims, int64_t count) {
  Array<Stmt> refuse;
  for (int64_t d = 0; d < count; ++d) refuse.push_back(BufferStore(dims, I64(-1), {I64(d)}));
  return count == 0 ? Evaluate(I64(0)) : If(bad, Seq(refuse));
}

// x's dimensions but those `axes` lists (distinct, within x's rank; with `only_ones`, each of
// size 1): int64 [rank - k], -1 each where they are not. Dropping every dimension gives
// int64 [1] holding 1 (-1 where the axes do not fit): an empty result could refuse nothing,
// so the caller reshapes the one dimension away.
te::Tensor DroppedDims(const te::Tensor& x, const te::Tensor& axes, const std::string& op,
                       bool only_ones) {
  const int64_t k = OperandLength(axes, op, "axes"), rank = x.ndim();
  LOOM_CHECK_USER(k <= rank) << op << ": " << k << " axes '" << axes.name() << "' for '" << x.name()
                             << "' of rank " << rank;
  const int64_t kept = std::max<int64_t>(rank - k, 1);
  return te::extern_op(
      {I64(kept)}, kI64, {x, axes},
      [&](const Array<Buffer>& in, const Array<Buffer>& out) {
        Array<Stmt> body;
        PrimExpr dropped = I64(0), bad = !AllWithin(in[1], k, rank);
        for (int64_t d = 0; d < rank; ++d) {
          const PrimExpr listed = Lists(in[1], k, rank, d), size = cast(kI64, in[0]->shape[d]);
          // Kept dimension d lands after the kept ones before it.
          const PrimExpr at = I64(d) - dropped;
          body.push_back(If(!listed && at < I64(rank - k), BufferStore(out[0], size, {at})));
          if (only_ones) bad = bad || (listed && size != I64(1));
          dropped = dropped + select(listed, I64(1), I64(0));
        }
        if (rank == k) body.push_back(BufferStore(out[0], I64(1), {I64(0)}));
        body.push_back(RefuseIf(bad || dropped != I64(k), out[0], kept));
        return Seq(body);
      },
      op + "_dims", "shape_function");
}

// The pads ONNX Pad's `pads` (k begins, then k ends) and `axes` give dimension d of a tensor
// of rank `rank` (0 where no axis names it), and how many axes name it.
struct DimensionPads {
  PrimExpr before, after, listed;
};
DimensionPads PadsOf(const Buffer& pads, const Buffer& axes, int64_t k, int64_t rank, int64_t d) {
  DimensionPads p{I64(0), I64(0), I64(0)};
  for (int64_t j = 0; j < k; ++j) {
    const PrimExpr axis = Element(axes, j);
    const PrimExpr here = select(axis < I64(0), axis + I64(rank), axis) == I64(d);
    p.before = select(here, Element(pads, j), p.before);
    p.after = select(here, Element(pads, j + k), p.after);
    p.listed = p.listed + select(here, I64(1), I64(0));
  }
  return p;
}

// A kernel's plan: int64 [2 * rank], two values per dimension that `of(d)` gives, computed
// once before the kernel's loops rather than per element.
te::Tensor Plan(
    int64_t rank, const Array<te::Tensor>& operands, const std::string& name,
    const std::function<std::pair<PrimExpr, PrimExpr>(const Array<Buffer>& in, int64_t d)>& of) {
  return te::extern_op(
      {I64(2 * rank)}, kI64, operands,
      [&](const Array<Buffer>& in, const Array<Buffer>& out) {
        Array<Stmt> body;
        for (int64_t d = 0; d < rank; ++d) {
          auto [first, second] = of(in, d);
          body.push_back(BufferStore(out[0], first, {I64(2 * d)}));
          body.push_back(BufferStore(out[0], second, {I64(2 * d + 1)}));
        }
        return rank == 0 ? Evaluate(I64(0)) : Seq(body);
      },
      name, "shape_function");
}

}  // namespace

te::Tensor reduce_dims(const te::Tensor& x, const te::Tensor& axes, bool keepdims) {
  if (!keepdims) return DroppedDims(x, axes, "reduce", /*only_ones=*/false);
  const int64_t k = OperandLength(axes, "reduce", "axes"), rank = x.ndim();
  CheckAxesOfAScalar(x, k, "reduce");
  return te::extern_op(
      {I64(rank)}, kI64, {x, axes},
      [&](const Array<Buffer>& in, const Array<Buffer>& out) {
        Array<Stmt> body;
        for (int64_t d = 0; d < rank; ++d) {
          body.push_back(BufferStore(
              out[0], select(Lists(in[1], k, rank, d), I64(1), cast(kI64, in[0]->shape[d])),
              {I64(d)}));
        }
        body.push_back(RefuseIf(!AllWithin(in[1], k, rank), out[0], rank));
        return Seq(body);
      },
      "reduce_dims", "shape_function");
}

te::Tensor squeeze_dims(const te::Tensor& x, const te::Tensor& axes) {
  return DroppedDims(x, axes, "squeeze", /*only_ones=*/true);
}

te::Tensor unsqueeze_dims(const te::Tensor& x, const te::Tensor& axes) {
  const int64_t k = OperandLength(axes, "unsqueeze", "axes"), rank = x.ndim(), out_rank = rank + k;
  return te::extern_op(
      {I64(out_rank)}, kI64, {x, axes},
      [&](const Array<Buffer>& in, const Array<Buffer>& out) {
        Array<Stmt> body;
        PrimExpr inserted = I64(0);
        for (int64_t p = 0; p < out_rank; ++p) {
          const PrimExpr listed = Lists(in[1], k, out_rank, p);
          // Position p takes x's dimension p - (the 1s inserted before it).
          const PrimExpr source = I64(p) - inserted;
          PrimExpr size = I64(-1);
          for (int64_t d = rank - 1; d >= 0; --d) {
            size = select(source == I64(d), cast(kI64, in[0]->shape[d]), size);
          }
          body.push_back(BufferStore(out[0], select(listed, I64(1), size), {I64(p)}));
          inserted = inserted + select(listed, I64(1), I64(0));
        }
        body.push_back(
            RefuseIf(!AllWithin(in[1], k, out_rank) || inserted != I64(k), out[0], out_rank));
        return Seq(body);
      },
      "unsqueeze_dims", "shape_function");
}

te::Tensor slice_dims(const te::Tensor& x, const te::Tensor& starts, const te::Tensor& ends,
                      const te::Tensor& axes, const te::Tensor& steps) {
  const int64_t k = OperandLength(starts, "slice", "starts"), rank = x.ndim();
  CheckAxesOfAScalar(x, k, "slice");
  for (const te::Tensor* operand : {&ends, &axes, &steps}) {
    LOOM_CHECK_USER(OperandLength(*operand, "slice", "an operand") == k)
        << "slice: '" << operand->name() << "' must have " << k << " entries, as starts '"
        << starts.name() << "'";
  }
  return te::extern_op(
      {I64(rank)}, kI64, {x, starts, ends, axes, steps},
      [&](const Array<Buffer>& in, const Array<Buffer>& out) {
        Array<Stmt> body;
        PrimExpr bad = !AllWithin(in[3], k, rank);
        for (int64_t d = 0; d < rank; ++d) {
          detail::SliceBounds bounds = detail::SliceAlong(
              d, rank, in[0]->shape[d], k,
              [&](int operand, int64_t j) { return Element(in[1 + operand], j); });
          body.push_back(BufferStore(out[0], bounds.count, {I64(d)}));
          bad = bad || bounds.bad;
        }
        body.push_back(RefuseIf(bad, out[0], rank));
        return Seq(body);
      },
      "slice_dims", "shape_function");
}

te::Tensor slice_plan(const Array<PrimExpr>& dims, const Array<te::Tensor>& operands) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  const int64_t k = OperandLength(operands[0], "slice", "starts");
  return Plan(rank, operands, "slice_plan", [&](const Array<Buffer>& in, int64_t d) {
    detail::SliceBounds bounds = detail::SliceAlong(
        d, rank, dims[static_cast<size_t>(d)], k,
        [&](int operand, int64_t j) { return Element(in[static_cast<size_t>(operand)], j); });
    return std::make_pair(bounds.first, bounds.step);
  });
}

te::Tensor pad_plan(const Array<PrimExpr>& dims, const te::Tensor& pads, const te::Tensor& axes) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  const int64_t k = OperandLength(axes, "pad", "axes");
  return Plan(rank, {pads, axes}, "pad_plan", [&](const Array<Buffer>& in, int64_t d) {
    DimensionPads p = PadsOf(in[0], in[1], k, rank, d);
    return std::make_pair(p.before, p.after);
  });
}

te::Tensor pad_dims(const te::Tensor& x, const te::Tensor& pads, const te::Tensor& axes, int mode) {
  const int64_t k = OperandLength(axes, "pad", "axes"), rank = x.ndim();
  CheckAxesOfAScalar(x, k, "pad");
  LOOM_CHECK_USER(OperandLength(pads, "pad", "pads") == 2 * k)
      << "pad: pads '" << pads.name() << "' must hold " << 2 * k << " values for " << k << " axes";
  return te::extern_op(
      {I64(rank)}, kI64, {x, pads, axes},
      [&](const Array<Buffer>& in, const Array<Buffer>& out) {
        Array<Stmt> body;
        PrimExpr bad = !AllWithin(in[2], k, rank);
        for (int64_t d = 0; d < rank; ++d) {
          auto [before, after, listed] = PadsOf(in[1], in[2], k, rank, d);
          // Past +-2^61 a pad is refused rather than summed: with a dimension below 2^62,
          // the sums below stay within int64.
          const PrimExpr huge = I64(int64_t{1} << 61);
          bad = bad || listed > I64(1) || before > huge || before < -huge || after > huge ||
                after < -huge;
          const PrimExpr extent = cast(kI64, in[0]->shape[d]);
          const PrimExpr cropped = extent + min(before, I64(0)) + min(after, I64(0));
          const PrimExpr padded = before > I64(0) || after > I64(0);
          bad = bad || cropped < I64(0);
          if (mode == 1) bad = bad || (padded && (before >= cropped || after >= cropped));
          if (mode >= 2) bad = bad || (padded && cropped == I64(0));
          body.push_back(
              BufferStore(out[0], cropped + max(before, I64(0)) + max(after, I64(0)), {I64(d)}));
        }
        body.push_back(RefuseIf(bad, out[0], rank));
        return Seq(body);
      },
      "pad_dims", "shape_function");
}

te::Tensor resize_dims(const te::Tensor& x, const te::Tensor& operand, const ResizeBy& by) {
  const int64_t rank = x.ndim(), k = static_cast<int64_t>(by.axes.size());
  const bool sizes = by.operand == ResizeOperand::kSizes;
  LOOM_CHECK_USER(operand.ndim() == 1 && IsConst(operand.shape()[0], k) &&
                  (sizes ? operand.dtype().is_int() : operand.dtype().is_float()))
      << "resize: " << (sizes ? "sizes" : "scales") << " '" << operand.name() << "' must be a 1-d "
      << (sizes ? "integer" : "float") << " tensor of " << k << " values (one per axis)";
  LOOM_CHECK_USER(rank >= 2) << "resize: '" << x.name()
                             << "' needs two spatial (trailing) dimensions, got " << rank << "-d";
  const DataType f64 = DataType::Float(64);
  return te::extern_op(
      {I64(rank)}, kI64, {x, operand},
      [&](const Array<Buffer>& in, const Array<Buffer>& out) {
        const Array<PrimExpr> scales = ResizeScales(
            rank, by, [&](int64_t j) { return cast(f64, BufferLoad(in[1], {I64(j)})); },
            [&](int64_t d) { return in[0]->shape[static_cast<size_t>(d)]; });
        Array<Stmt> body;
        PrimExpr bad = const_false();
        for (int64_t d = 0; d < rank; ++d) {
          const PrimExpr extent = cast(kI64, in[0]->shape[static_cast<size_t>(d)]);
          const PrimExpr scale = scales[static_cast<size_t>(d)];
          PrimExpr dim = extent;
          for (int64_t j = 0; j < k; ++j) {
            if (by.axes[static_cast<size_t>(j)] != d) continue;
            // Past 2^62 elements a dimension is refused rather than converted (the float
            // product of a huge scale would not fit int64).
            const PrimExpr product = scale * cast(f64, extent);
            const PrimExpr huge = make_const(f64, 0x1p62);
            if (sizes) {
              bad = bad || Element(in[1], j) < I64(0) || extent == I64(0);
            } else {
              bad = bad || !(scale > make_const(f64, 0.0));
            }
            bad = bad || product >= huge;
            const PrimExpr fits = product < huge;
            if (!sizes) {
              dim = select(fits, cast(kI64, floor(product)), I64(-1));
            } else if (by.policy == AspectPolicy::kStretch) {
              dim = Element(in[1], j);
            } else {  // round half up
              dim = select(fits, cast(kI64, product + make_const(f64, 0.5)), I64(-1));
            }
          }
          if (d < rank - 2) bad = bad || scale != make_const(f64, 1.0);
          body.push_back(BufferStore(out[0], dim, {I64(d)}));
        }
        body.push_back(RefuseIf(bad, out[0], rank));
        return Seq(body);
      },
      "resize_dims", "shape_function");
}

te::Tensor split_dims(const te::Tensor& x, const te::Tensor& split, int64_t axis) {
  const int64_t n = OperandLength(split, "split", "split"), rank = x.ndim();
  LOOM_CHECK_USER(axis >= 0 && axis < rank)
      << "split: axis " << axis << " of '" << x.name() << "' of rank " << rank;
  return te::extern_op(
      {I64(n)}, kI64, {x, split},
      [&](const Array<Buffer>& in, const Array<Buffer>& out) {
        const PrimExpr extent = cast(kI64, in[0]->shape[static_cast<size_t>(axis)]);
        Array<Stmt> body;
        PrimExpr total = I64(0), bad = const_false();
        for (int64_t j = 0; j < n; ++j) {
          // Each size within [0, extent], so the running total stays below 2^63.
          const PrimExpr size = Element(in[1], j);
          bad = bad || size < I64(0) || size > extent;
          total = total + select(size < I64(0) || size > extent, I64(0), size);
          body.push_back(BufferStore(out[0], size, {I64(j)}));
        }
        body.push_back(RefuseIf(bad || total != extent, out[0], n));
        return Seq(body);
      },
      "split_dims", "shape_function");
}

te::Tensor reshape_dims(const te::Tensor& x, const te::Tensor& shape, bool allowzero) {
  const int64_t r = OperandLength(shape, "reshape", "the target shape");
  const int64_t rank = x.ndim();
  return te::extern_op(
      {I64(r)}, kI64, {x, shape},
      [&](const Array<Buffer>& in, const Array<Buffer>& out) {
        const Buffer &data = in[0], &target = in[1], &dims = out[0];
        Counter known("known"), inferred("inferred"), bad("bad");
        PrimExpr count = I64(1);
        for (int64_t d = 0; d < rank; ++d) count = count * cast(kI64, data->shape[d]);
        Array<Stmt> body = {known.Set(I64(1)), inferred.Set(I64(-1)), bad.Set(I64(0))};
        for (int64_t d = 0; d < r; ++d) {
          // 0 copies x's dimension (one past x's rank copies nothing: -2, refused below).
          const PrimExpr given = Element(target, d);
          const PrimExpr copied = d < rank ? cast(kI64, data->shape[d]) : I64(-2);
          body.push_back(BufferStore(
              dims, allowzero ? given : select(given == I64(0), copied, given), {I64(d)}));
          const PrimExpr size = BufferLoad(dims, {I64(d)});
          // A product past int64 is refused, not wrapped (it could wrap to x's count).
          const PrimExpr overflows =
              size > I64(0) &&
              known.value() > floordiv(I64(INT64_MAX), select(size > I64(0), size, I64(1)));
          body.push_back(IfThenElse(
              size == I64(-1),
              Seq({If(inferred.value() >= I64(0), bad.Set(I64(1))), inferred.Set(I64(d))}),
              IfThenElse(size < I64(0) || overflows, bad.Set(I64(1)),
                         known.Set(known.value() * size))));
        }
        // The -1 is what the others leave of x's element count.
        const PrimExpr divisor = select(known.value() == I64(0), I64(1), known.value());
        body.push_back(IfThenElse(
            inferred.value() >= I64(0),
            Seq({If(known.value() == I64(0) || floormod(count, divisor) != I64(0), bad.Set(I64(1))),
                 BufferStore(dims, floordiv(count, divisor), {inferred.value()})}),
            If(known.value() != count, bad.Set(I64(1)))));
        Array<Stmt> refuse;
        for (int64_t d = 0; d < r; ++d) refuse.push_back(BufferStore(dims, I64(-1), {I64(d)}));
        body.push_back(If(bad.value() != I64(0), Seq(refuse)));
        return known.Scope(inferred.Scope(bad.Scope(Seq(body))));
      },
      "reshape_dims", "shape_function");
}

te::Tensor broadcast_dims(const te::Tensor& x, const te::Tensor& shape) {
  const int64_t r = OperandLength(shape, "expand", "the shape");
  const int64_t rank = x.ndim(), out_rank = std::max(rank, r);
  return te::extern_op(
      {I64(out_rank)}, kI64, {x, shape},
      [&](const Array<Buffer>& in, const Array<Buffer>& out) {
        Array<Stmt> body;
        for (int64_t j = 0; j < out_rank; ++j) {
          const int64_t xd = j - (out_rank - rank), sd = j - (out_rank - r);
          const PrimExpr given = sd >= 0 ? Element(in[1], sd) : I64(1);
          PrimExpr size = given;  // where x has no dimension, or x's is the constant 1
          if (xd >= 0 && !IsConst(x.shape()[static_cast<size_t>(xd)], 1)) {
            const PrimExpr own = cast(kI64, in[0]->shape[static_cast<size_t>(xd)]);
            size = select(given == I64(1) || given == own, own, I64(-1));
          }
          body.push_back(BufferStore(out[0], size, {I64(j)}));
        }
        return Seq(body);
      },
      "broadcast_dims", "shape_function");
}

te::Tensor tile_dims(const te::Tensor& x, const te::Tensor& repeats) {
  const int64_t r = OperandLength(repeats, "tile", "repeats");
  LOOM_CHECK_USER(r == x.ndim()) << "tile: repeats '" << repeats.name() << "' has " << r
                                 << " entries for '" << x.name() << "' of rank " << x.ndim();
  return te::extern_op(
      {I64(r)}, kI64, {x, repeats},
      [&](const Array<Buffer>& in, const Array<Buffer>& out) {
        Array<Stmt> body;
        for (int64_t d = 0; d < r; ++d) {
          const PrimExpr times = Element(in[1], d), extent = cast(kI64, in[0]->shape[d]);
          // A negative repeat, or a product past int64, is refused.
          const PrimExpr fits =
              times >= I64(0) &&
              times <= floordiv(I64(INT64_MAX), select(extent > I64(0), extent, I64(1)));
          body.push_back(BufferStore(out[0], select(fits, extent * times, I64(-1)), {I64(d)}));
        }
        return Seq(body);
      },
      "tile_dims", "shape_function");
}

te::Tensor range_length(const te::Tensor& start, const te::Tensor& limit, const te::Tensor& delta) {
  for (const te::Tensor* t : {&start, &limit, &delta}) {
    LOOM_CHECK_USER(t->dtype() == start.dtype() && t->ndim() <= 1 &&
                    (t->ndim() == 0 || IsConst(t->shape()[0], 1)))
        << "range: start, limit and delta must be scalars of one dtype; '" << t->name() << "' is "
        << t->dtype();
  }
  return te::extern_op(
      {I64(1)}, kI64, {start, limit, delta},
      [&](const Array<Buffer>& in, const Array<Buffer>& out) {
        const PrimExpr first = ScalarOf(in[0]), end = ScalarOf(in[1]), step = ScalarOf(in[2]);
        const PrimExpr zero = make_zero(step.dtype());
        PrimExpr steps;
        if (step.dtype().is_float()) {
          // A NaN, an infinity or a count past int64 is refused (-1), not converted.
          const DataType f64 = DataType::Float(64);
          const PrimExpr count = ceil((cast(f64, end) - cast(f64, first)) / cast(f64, step));
          steps = select(count > make_const(f64, -9.0e18) && count < make_const(f64, 9.0e18),
                         cast(kI64, count), I64(-1));
          steps = select(count <= make_const(f64, 0.0), I64(0), steps);
        } else {  // ceil division, the divisor never 0 (that case is refused)
          const PrimExpr diff = cast(kI64, end) - cast(kI64, first);
          const PrimExpr divisor = select(step == zero, I64(1), cast(kI64, step));
          steps = floordiv(diff, divisor) + select(floormod(diff, divisor) != I64(0), I64(1), I64(0));
        }
        const PrimExpr length = step.dtype().is_float() ? steps : max(steps, I64(0));
        return BufferStore(out[0], select(step == zero, I64(-1), length), {I64(0)});
      },
      "range_length", "shape_function");
}

}  // namespace loom::topi
