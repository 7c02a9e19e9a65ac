// Selections as TIR loop nests (te::extern_op bodies): top-k by insertion into the sorted
// output row, non-zero positions by a running count, non-maximum suppression by a greedy
// pass over the candidates taken from a heap.
#include "loom/topi/select.h"

#include <string>

#include "loom/arith/analyzer.h"
#include "loom/ir/expr_ops.h"
#include "topi/loop_nest.h"
#include "topi/topi_util.h"

namespace loom::topi {

namespace {

using namespace detail;  // NOLINT: the loop-nest helpers (loop_nest.h)

// The loops over every dimension of `shape` but `skip` (-1: none) around body(index), where
// index holds the loop variables and, at `skip`, a 0 the body replaces with its own. The
// outermost loop runs in parallel when `parallel`.
template <typename Body>
Stmt OverDims(const Array<PrimExpr>& shape, int skip, bool parallel, const Body& body) {
  std::vector<Var> vars;
  Array<PrimExpr> index;
  for (size_t d = 0; d < shape.size(); ++d) {
    vars.emplace_back("i" + std::to_string(d), kI64);
    index.push_back(static_cast<int>(d) == skip ? I64(0) : PrimExpr(vars.back()));
  }
  Stmt stmt = body(index);
  for (size_t d = shape.size(); d-- > 0;) {
    if (static_cast<int>(d) == skip) continue;
    const bool outermost = d == 0 || (d == 1 && skip == 0);
    stmt = Loop(vars[d], shape[d], stmt,
                parallel && outermost ? ForKind::kParallel : ForKind::kSerial);
  }
  return stmt;
}

// `index` with position `axis` replaced by `at`.
Array<PrimExpr> At(Array<PrimExpr> index, int axis, const PrimExpr& at) {
  index[static_cast<size_t>(axis)] = at;
  return index;
}

// One row of top-k: each element i is inserted into the sorted output row (values and
// indices along `axis`) after the entries that are at least as good (ties keep the lower
// index first), the row's last entry dropping out once k are kept.
Stmt TopKRow(const Buffer& x, const Buffer& values, const Buffer& indices, int axis,
             bool largest, const Array<PrimExpr>& row) {
  const PrimExpr n = cast(kI64, x->shape[static_cast<size_t>(axis)]);
  const PrimExpr k = cast(kI64, values->shape[static_cast<size_t>(axis)]);
  Var i("i", kI64), j("j", kI64), t("t", kI64);
  Counter position("position");
  const PrimExpr v = BufferLoad(x, At(row, axis, i));
  const PrimExpr kept = BufferLoad(values, At(row, axis, j));
  const PrimExpr ahead = largest ? kept >= v : kept <= v;
  const PrimExpr p = position.value();
  // The kept entries [p, last) move one place on; `last` is the slot the last one reaches.
  const PrimExpr last = min(i, k - I64(1));
  const PrimExpr to = last - t;
  auto move = [&](const Buffer& buffer) {
    return BufferStore(buffer, BufferLoad(buffer, At(row, axis, to - I64(1))), At(row, axis, to));
  };
  Stmt insert = Seq({Loop(t, last - p, Seq({move(values), move(indices)})),
                     BufferStore(values, v, At(row, axis, p)),
                     BufferStore(indices, i, At(row, axis, p))});
  Stmt element = Seq({position.Set(I64(0)),
                      Loop(j, min(i, k), position.Add(select(ahead, I64(1), I64(0)))),
                      If(p < k, insert)});
  // Once k are kept, most elements lose to the last of them: one comparison each (the nested
  // If reads that slot only when there is one).
  const PrimExpr worst = BufferLoad(values, At(row, axis, k - I64(1)));
  const PrimExpr enters = i < k || (largest ? v > worst : v < worst);
  return position.Scope(Loop(i, n, If(k > I64(0), If(enters, element))));
}

// Whether boxes a and b of `boxes` (batch `batch`) overlap by more than `threshold`
// (intersection over union, in float64 as ONNX's reference computes it; boxes of no area
// never suppress).
PrimExpr Overlaps(const Buffer& boxes, const PrimExpr& batch, const PrimExpr& a, const PrimExpr& b,
                  const PrimExpr& threshold, bool center_point_box) {
  const DataType f64 = DataType::Float(64);
  struct Extent {
    PrimExpr x_min, x_max, y_min, y_max;
  };
  auto extent = [&](const PrimExpr& box) {
    auto at = [&](int64_t c) { return cast(f64, BufferLoad(boxes, {batch, box, I64(c)})); };
    if (center_point_box) {  // (x_center, y_center, width, height)
      const PrimExpr half_w = at(2) * 0.5, half_h = at(3) * 0.5;
      return Extent{at(0) - half_w, at(0) + half_w, at(1) - half_h, at(1) + half_h};
    }
    // (y1, x1, y2, x2), either corner first
    return Extent{min(at(1), at(3)), max(at(1), at(3)), min(at(0), at(2)), max(at(0), at(2))};
  };
  const Extent p = extent(a), q = extent(b);
  const PrimExpr width = min(p.x_max, q.x_max) - max(p.x_min, q.x_min);
  const PrimExpr height = min(p.y_max, q.y_max) - max(p.y_min, q.y_min);
  const PrimExpr area_p = (p.x_max - p.x_min) * (p.y_max - p.y_min);
  const PrimExpr area_q = (q.x_max - q.x_min) * (q.y_max - q.y_min);
  const PrimExpr overlap = width * height;
  const PrimExpr union_area = area_p + area_q - overlap;
  const PrimExpr zero = make_zero(f64);
  return width > zero && height > zero && area_p > zero && area_q > zero && union_area > zero &&
         overlap / union_area > cast(f64, threshold);
}

}  // namespace

Array<te::Tensor> topk(const te::Tensor& x, PrimExpr k, int axis, bool largest) {
  const int a = detail::NormalizeAxis(axis, x.ndim(), "topk", x);
  const PrimExpr n = x.shape()[static_cast<size_t>(a)];
  int64_t k_value = 0, n_value = 0;
  LOOM_CHECK_USER(!IsConstInt(k, &k_value) || k_value >= 0)
      << "topk of '" << x.name() << "': k = " << k_value << " must not be negative";
  LOOM_CHECK_USER(!IsConstInt(k, &k_value) || !IsConstInt(n, &n_value) || k_value <= n_value)
      << "topk of '" << x.name() << "': k = " << k_value << " exceeds the " << n_value
      << " elements along axis " << a;
  Array<PrimExpr> shape = x.shape();
  shape[static_cast<size_t>(a)] = k;
  return te::extern_op(
      {shape, shape}, {x.dtype(), kI64}, {x},
      [&](const Array<Buffer>& in, const Array<Buffer>& out) {
        return OverDims(in[0]->shape, a, /*parallel=*/true, [&](const Array<PrimExpr>& row) {
          return TopKRow(in[0], out[0], out[1], a, largest, row);
        });
      },
      "topk", "select");
}

te::Tensor nonzero(const te::Tensor& x, PrimExpr count) {
  LOOM_CHECK_USER(x.ndim() >= 1) << "nonzero of '" << x.name()
                                 << "': the input must have at least one dimension";
  const int rank = x.ndim();
  return te::extern_op(
      {I64(rank), count}, kI64, {x},
      [&](const Array<Buffer>& in, const Array<Buffer>& out) {
        Counter found("found");
        Stmt nest = OverDims(in[0]->shape, -1, /*parallel=*/false, [&](const Array<PrimExpr>& at) {
          Array<Stmt> write;
          for (int d = 0; d < rank; ++d) {
            write.push_back(BufferStore(out[0], at[static_cast<size_t>(d)], {I64(d), found.value()}));
          }
          write.push_back(found.Add(I64(1)));
          // Never past the count the caller computed (a count that disagrees with this
          // kernel's test leaves positions unwritten rather than writing past the output).
          return If(BufferLoad(in[0], at) != make_zero(in[0]->dtype) &&
                        found.value() < cast(kI64, out[0]->shape[1]),
                    Seq(write));
        });
        return found.Scope(Seq({found.Set(I64(0)), nest}));
      },
      "nonzero", "select");
}

Array<te::Tensor> non_max_suppression(const te::Tensor& boxes, const te::Tensor& scores,
                                      const te::Tensor& max_output_boxes_per_class,
                                      const te::Tensor& iou_threshold,
                                      const te::Tensor& score_threshold, bool center_point_box) {
  // The kernel reads scores at boxes' batch and box indices: the shapes must be shown to
  // agree when compiling (the same constant, or the same size variable).
  auto same = [](const PrimExpr& a, const PrimExpr& b) {
    return arith::Analyzer().CanProveEqual(cast(kI64, a), cast(kI64, b));
  };
  LOOM_CHECK_USER(boxes.ndim() == 3 && scores.ndim() == 3 && same(boxes.shape()[2], I64(4)) &&
                  same(boxes.shape()[0], scores.shape()[0]) &&
                  same(boxes.shape()[1], scores.shape()[2]))
      << "non_max_suppression: boxes must be [batches, boxes, 4] and scores [batches, "
      << "classes, boxes], got " << detail::ShapeText(boxes.shape()) << " and "
      << detail::ShapeText(scores.shape());
  const PrimExpr batches = boxes.shape()[0], n = boxes.shape()[1], classes = scores.shape()[1];
  const PrimExpr rows = cast(kI64, batches) * cast(kI64, classes) * cast(kI64, n);
  return te::extern_op(
      {{rows, I64(3)}, {I64(1)}, {batches, classes, n}}, {kI64, kI64, kI64},
      {boxes, scores, max_output_boxes_per_class, iou_threshold, score_threshold},
      [&](const Array<Buffer>& in, const Array<Buffer>& out) {
        const Buffer &box_data = in[0], &score_data = in[1], &selected = out[0], &heap = out[2];
        const PrimExpr limit = cast(kI64, BufferLoad(in[2], {I64(0)}));
        const PrimExpr iou = BufferLoad(in[3], {I64(0)});
        const PrimExpr score_floor = BufferLoad(in[4], {I64(0)});
        Var b("b", kI64), c("c", kI64), i("i", kI64), s("s", kI64), r("r", kI64);
        Counter total("total"), size("size"), at("at"), child("child"), sifting("sifting"),
            carried("carried"), top("top"), first("first"), suppressed("suppressed");
        auto score = [&](const PrimExpr& box) { return BufferLoad(score_data, {b, c, box}); };
        auto held = [&](const PrimExpr& slot) { return BufferLoad(heap, {b, c, slot}); };
        auto hold = [&](const PrimExpr& box, const PrimExpr& slot) {
          return BufferStore(heap, box, {b, c, slot});
        };
        // Whether box p comes before box q: a higher score, or the same and a lower index.
        auto before = [&](const PrimExpr& p, const PrimExpr& q) {
          return score(p) > score(q) || (score(p) == score(q) && p < q);
        };
        // The box at slot `start` moved down the heap (of size() boxes, each before its
        // children) until no child comes before it.
        auto sift_down = [&](const PrimExpr& start) {
          const PrimExpr pos = at.value(), left = pos * I64(2) + I64(1), pick = child.value();
          // The right child is read only where there is one (a condition's operands are all
          // evaluated, and a box index read past the heap would index the scores).
          Stmt choose =
              Seq({child.Set(left),
                   If(left + I64(1) < size.value(),
                      If(before(held(left + I64(1)), held(left)), child.Set(left + I64(1))))});
          Stmt swap = Seq({carried.Set(held(pos)), hold(held(pick), pos),
                           hold(carried.value(), pick), at.Set(pick)});
          Stmt step = IfThenElse(
              left >= size.value(), sifting.Set(I64(0)),
              Seq({choose, IfThenElse(before(held(pick), held(pos)), swap, sifting.Set(I64(0)))}));
          return Seq({at.Set(start), sifting.Set(I64(1)), While(sifting.value() != I64(0), step)});
        };
        // The candidates above the score floor in a heap (heap[b, c, :]): the next one is
        // taken from its top only when the greedy pass needs it, so a class stops after
        // max_output_boxes_per_class kept ones without sorting the rest.
        const PrimExpr half = floordiv(size.value(), I64(2));
        Stmt build = Seq(
            {size.Set(I64(0)),
             Loop(i, n, If(score(i) > score_floor, Seq({hold(i, size.value()), size.Add(I64(1))}))),
             Loop(s, half, sift_down(half - I64(1) - s))});
        // Each candidate in turn, kept unless it overlaps one kept before it in this class.
        const PrimExpr kept = total.value() - first.value(), box = top.value();
        Stmt check = Loop(
            r, kept,
            If(Overlaps(box_data, b, box, BufferLoad(selected, {first.value() + r, I64(2)}), iou,
                        center_point_box),
               suppressed.Set(I64(1))));
        Stmt keep = Seq({BufferStore(selected, b, {total.value(), I64(0)}),
                         BufferStore(selected, c, {total.value(), I64(1)}),
                         BufferStore(selected, box, {total.value(), I64(2)}), total.Add(I64(1))});
        Stmt take = Seq({top.Set(held(I64(0))), size.Add(I64(-1)), hold(held(size.value()), I64(0)),
                         sift_down(I64(0))});
        Stmt greedy =
            Seq({first.Set(total.value()), While(size.value() > I64(0) && kept < limit,
                                                 Seq({take, suppressed.Set(I64(0)), check,
                                                      If(suppressed.value() == I64(0), keep)}))});
        Stmt per_class = Loop(b, batches, Loop(c, classes, Seq({build, greedy})));
        Stmt body = Seq({total.Set(I64(0)), per_class, BufferStore(out[1], total.value(), {I64(0)})});
        for (const Counter* counter :
             {&suppressed, &first, &top, &carried, &sifting, &child, &at, &size, &total}) {
          body = counter->Scope(body);
        }
        return body;
      },
      "non_max_suppression", "select");
}

}  // namespace loom::topi
