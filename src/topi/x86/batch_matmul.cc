#include "loom/topi/x86/batch_matmul.h"

#include <algorithm>
#include <sstream>

#include "topi/topi_util.h"

namespace loom::topi::x86 {

namespace {

constexpr int kLanes = detail::kAvx512Lanes;

}  // namespace

std::string BatchMatmulConfig::str() const {
  std::ostringstream text;
  text << "tile_rows=" << tile_rows << " tile_columns=" << tile_columns << " k_unroll=" << k_unroll;
  return text.str();
}

// Measured with one thread on this machine (2-core AVX-512 Xeon shared with other jobs;
// GFLOP/s, medians of interleaved runs in one process; oneDNN is dnnl_sgemm per batch):
//   BERT attention [12,128,64]x[12,64,128]: 4 x 64 168, 6 x 64 164, 8 x 32 164, 7 x 64 118
//     (a partial row tile per 128 rows), generic schedule_matmul 96, oneDNN 162;
//   [12,128,128]x[12,128,64]: 4 x 64 168, 6 x 64 166, 8 x 32 163, generic 77, oneDNN 156;
//   [1,128,768]x[768,768] (broadcast batch): 4 x 64 150, 6 x 64 159, 8 x 32 156, generic 46,
//     oneDNN 168.
// k_unroll 8 matched 4 (167 both). Widths that are no multiple of 16, e.g. [2,33,17]x[2,17,50]:
// one-vector tiles 26, 4 x 64 tiles 2.5 (the partial tile is scalar code), generic 25,
// oneDNN 30.
BatchMatmulConfig DefaultBatchMatmulConfig(int64_t M, int64_t N, int64_t K) {
  LOOM_CHECK_USER(M > 0 && N > 0 && K > 0)
      << "DefaultBatchMatmulConfig: sizes must be positive, got M=" << M << " N=" << N
      << " K=" << K;
  BatchMatmulConfig c;
  c.tile_rows = std::min(c.tile_rows, M);
  if (N % kLanes != 0) {
    // The partial last vector is computed by scalar code in its own column tile: one vector
    // wide, so that every other column stays vector code.
    c.tile_columns = kLanes;
    c.tile_rows = std::min<int64_t>(8, M);
    return c;
  }
  // Whole tiles across N (see schedule_batch_matmul): the widest divisor of N / 16 vectors.
  int64_t vectors = c.tile_columns / kLanes;
  while ((N / kLanes) % vectors != 0) --vectors;
  c.tile_columns = vectors * kLanes;
  return c;
}

te::Schedule schedule_batch_matmul(const te::Tensor& out, const BatchMatmulConfig& config) {
  const std::string op = "schedule_batch_matmul";
  LOOM_CHECK_USER(config.tile_rows > 0 && config.tile_columns > 0 &&
                  config.tile_columns % kLanes == 0 && config.k_unroll > 0)
      << op << ": config " << config.str() << " is invalid: every size must be positive, "
      << "with tile_columns a multiple of " << kLanes << " (AVX-512 lanes)";
  detail::CheckRegisterTile(config.tile_rows, config.tile_columns, op, config.str());
  te::Operation matmul = detail::FindAnchor(
      out, [](const te::Operation& stage) { return stage->tag == "matmul"; }, op,
      "the output of matmul");
  for (const te::Tensor& operand : matmul->InputTensors()) {
    LOOM_CHECK_USER(operand.ndim() >= 2)
        << op << ": operand '" << operand.name() << "' " << detail::ShapeText(operand.shape())
        << " of matmul '" << matmul->name << "' is a vector; schedule matrix-vector products "
        << "with topi::schedule_matmul";
  }
  detail::CheckEpilogueKeepsShape(out, matmul, op);
  std::vector<int64_t> shape = detail::ConstShape(matmul->output(0), op);
  const int64_t rows = shape[shape.size() - 2], columns = shape.back();
  // A tile taller than the rows or wider than the columns would only add bound checks. An
  // empty output keeps a tile of one row and one vector (a split needs a positive factor):
  // its loops then run no iteration.
  const int tile_rows = static_cast<int>(std::clamp(rows, int64_t{1}, config.tile_rows));
  const int tile_columns = static_cast<int>(std::min(
      config.tile_columns, std::max(detail::CeilDiv(columns, kLanes), int64_t{1}) * kLanes));

  te::Schedule s = te::create_schedule({out.op()});
  detail::InlineInjective(s, {out.op()});
  te::Tensor tile;
  if (matmul == out.op()) {
    tile = s.cache_write(out, "local");
  } else {
    s[matmul].set_scope("local");
    tile = matmul->output(0);
  }
  te::Stage c = s[out];
  Array<IterVar> axes = c->leaf_iter_vars;  // batch..., i, j
  const size_t batch_dims = axes.size() - 2;
  auto [column_tile, tile_column] = c.split(axes.back(), tile_columns);
  auto [row_tile, tile_row] = c.split(axes[batch_dims], tile_rows);
  auto [column_vector, lane] = c.split(tile_column, kLanes);
  // Column tiles that divide N join the parallel loop, outside the row tiles: the b columns
  // of a tile then stay in L2 while every row tile streams past. A partial last column tile
  // has a bound check per lane, which keeps the tile's loops scalar unless LoopPartition
  // peels it off a serial loop: those column tiles run serially inside each row tile.
  const bool whole_column_tiles = columns % tile_columns == 0;
  Array<IterVar> order(axes.begin(), axes.begin() + batch_dims);
  if (whole_column_tiles) order.push_back(column_tile);
  order.push_back(row_tile);
  const size_t parallel_loops = order.size();
  if (!whole_column_tiles) order.push_back(column_tile);
  order.insert(order.end(), {tile_row, column_vector, lane});
  c.reorder(order);
  // Unrolled so that the register tile is accessed at constant offsets only (LLVM keeps it
  // in registers then).
  c.unroll(tile_row);
  c.unroll(column_vector);
  c.vectorize(lane);
  IterVar task = order[0];
  for (size_t d = 1; d < parallel_loops; ++d) task = c.fuse(task, order[d]);
  c.parallel(task);

  te::Stage acc = s[tile];
  acc.compute_at(c, whole_column_tiles ? task : column_tile);
  Array<IterVar> acc_axes = acc->leaf_iter_vars;  // batch..., i, j, k
  IterVar acc_k = acc_axes.back();
  auto [acc_vector, acc_lane] = acc.split(acc_axes[acc_axes.size() - 2], kLanes);
  auto [k_step, k_unrolled] = acc.split(acc_k, static_cast<int>(config.k_unroll));
  Array<IterVar> acc_order{k_step, k_unrolled};
  acc_order.insert(acc_order.end(), acc_axes.begin(), acc_axes.end() - 2);  // batch..., i
  acc_order.insert(acc_order.end(), {acc_vector, acc_lane});
  acc.reorder(acc_order);
  for (size_t d = 0; d + 2 < acc_axes.size(); ++d) acc.unroll(acc_axes[d]);
  acc.unroll(k_unrolled);
  acc.unroll(acc_vector);
  acc.vectorize(acc_lane);
  return s;
}

}  // namespace loom::topi::x86
