#include "loom/topi/matmul.h"

#include <string>

#include "loom/ir/printer.h"
#include "loom/topi/elementwise.h"
#include "topi/topi_util.h"

namespace loom::topi {

te::Tensor matmul(const te::Tensor& a, const te::Tensor& b, DataType out_dtype) {
  LOOM_CHECK_USER(a.dtype() == b.dtype())
      << "matmul: operand types differ ('" << a.name() << "' is " << a.dtype().str() << ", '"
      << b.name() << "' is " << b.dtype().str() << "); cast one operand to the other's type";
  LOOM_CHECK_USER(a.ndim() >= 1 && b.ndim() >= 1 && !a.dtype().is_bool())
      << "matmul of '" << a.name() << "' and '" << b.name()
      << "': operands must be numeric tensors of at least one dimension";
  // The matrix views: a 1-D operand gains a unit dimension.
  Array<PrimExpr> a_shape = a.shape(), b_shape = b.shape();
  bool a_vector = a.ndim() == 1, b_vector = b.ndim() == 1;
  if (a_vector) a_shape.insert(a_shape.begin(), 1);
  if (b_vector) b_shape.push_back(1);
  PrimExpr depth = a_shape.back();
  LOOM_CHECK_USER(detail::SameExtent(depth, b_shape[b_shape.size() - 2]))
      << "matmul of '" << a.name() << "' " << detail::ShapeText(a.shape()) << " and '" << b.name()
      << "' " << detail::ShapeText(b.shape()) << ": the inner dimensions differ (" << depth
      << " against " << b_shape[b_shape.size() - 2] << "); a [..., M, K] needs b [..., K, N]";
  Array<PrimExpr> a_batch(a_shape.begin(), a_shape.end() - 2);
  Array<PrimExpr> b_batch(b_shape.begin(), b_shape.end() - 2);
  Array<PrimExpr> batch = BroadcastShape(a_batch, b_batch, "matmul");
  Array<PrimExpr> out_shape = batch;
  if (!a_vector) out_shape.push_back(a_shape[a_shape.size() - 2]);
  if (!b_vector) out_shape.push_back(b_shape.back());
  IterVar k = te::reduce_axis(Range(0, depth), "k");
  return te::compute(
      out_shape,
      [&](const Array<Var>& i) {
        size_t next = batch.size();
        Array<PrimExpr> batch_index(i.begin(), i.begin() + next);
        Array<PrimExpr> a_index = detail::BroadcastIndex(a_batch, batch_index);
        Array<PrimExpr> b_index = detail::BroadcastIndex(b_batch, batch_index);
        if (!a_vector) a_index.push_back(i[next++]);
        a_index.push_back(k->var);
        b_index.push_back(k->var);
        if (!b_vector) b_index.push_back(i[next++]);
        if (out_dtype.is_void()) return te::sum(a(a_index) * b(b_index), {k});
        return te::sum(cast(out_dtype, a(a_index)) * cast(out_dtype, b(b_index)), {k});
      },
      "matmul", "matmul");
}

te::Schedule schedule_matmul(const te::Tensor& out, int tile_rows, int vector_lanes) {
  const te::Operation product = detail::FindAnchor(
      out, [](const te::Operation& op) { return op->tag == "matmul"; }, "schedule_matmul",
      "the output of matmul");
  detail::CheckEpilogueKeepsShape(out, product, "schedule_matmul");
  LOOM_CHECK_USER(tile_rows > 0) << "schedule_matmul: tile_rows must be positive, got "
                                 << tile_rows;
  te::Schedule s = te::create_schedule({out.op()});
  detail::InlineInjective(s, {out.op()});
  if (out.ndim() == 0) return s;  // a dot product of two vectors: one reduction loop
  te::Tensor tile = detail::RegisterTile(s, out, product);
  te::Stage c = s[out];
  Array<IterVar> axes = c->leaf_iter_vars;
  // The last output dimension is split into vectors; the one before it (M, when there is
  // one) into tiles of rows; dimensions before those (batch) and the row tiles are fused
  // into the parallel loop, so that the tile's own extents stay constant.
  auto [column_vectors, lanes] = c.split(axes.back(), vector_lanes);
  c.vectorize(lanes);
  if (axes.size() == 1) {
    s[tile].compute_at(c, column_vectors);
  } else {
    auto [row_tiles, tile_row] = c.split(axes[axes.size() - 2], tile_rows);
    Array<IterVar> order(axes.begin(), axes.end() - 2);
    order.push_back(row_tiles);
    IterVar task = order[0];
    order.insert(order.end(), {column_vectors, tile_row, lanes});
    c.reorder(order);
    for (size_t d = 1; d + 3 < order.size(); ++d) task = c.fuse(task, order[d]);
    c.unroll(tile_row);
    c.parallel(task);
    s[tile].compute_at(c, column_vectors);
  }
  // The tile: k outermost, then its rows (unrolled) and the 16 columns (one vector).
  Array<IterVar> tile_axes = s[tile]->leaf_iter_vars;  // output dims..., k
  IterVar tile_k = tile_axes.back();
  IterVar tile_columns = tile_axes[tile_axes.size() - 2];
  Array<IterVar> order{tile_k};
  for (size_t d = 0; d + 2 < tile_axes.size(); ++d) order.push_back(tile_axes[d]);
  order.push_back(tile_columns);
  s[tile].reorder(order);
  for (size_t d = 0; d + 2 < tile_axes.size(); ++d) s[tile].unroll(tile_axes[d]);
  s[tile].vectorize(tile_columns);
  return s;
}

}  // namespace loom::topi
