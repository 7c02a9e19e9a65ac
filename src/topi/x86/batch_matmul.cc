#include "loom/topi/x86/batch_matmul.h"

#include <algorithm>
#include <sstream>

#include "loom/topi/x86/tensor_intrinsics.h"
#include "topi/topi_util.h"

namespace loom::topi::x86 {

namespace {

constexpr int kLanes = detail::kAvx512Lanes;
const char* const kDotTag = "matmul_dot";

// The dimensions before the last two of a tensor's shape.
Array<PrimExpr> BatchIndex(const Array<Var>& i, size_t batch_dims) {
  return Array<PrimExpr>(i.begin(), i.begin() + static_cast<std::ptrdiff_t>(batch_dims));
}

}  // namespace

te::Tensor pack_batch_matmul_dot(const te::Tensor& b) {
  const std::string op = "pack_batch_matmul_dot";
  std::vector<int64_t> shape = detail::ConstShape(b, op);
  LOOM_CHECK_USER(IsDotProductWeight(b.dtype()) && shape.size() >= 2 &&
                  shape.back() % kVnniLanes == 0 && shape[shape.size() - 2] > 0)
      << op << ": b '" << b.name() << "' must be int8 or bfloat16 [..., K, N] with N a "
      << "multiple of " << kVnniLanes << ", got " << b.dtype().str() << " "
      << detail::ShapeText(shape);
  const int depth = DotProductDepth(b.dtype());
  const size_t batch_dims = shape.size() - 2;
  const int64_t K = shape[batch_dims], N = shape.back();
  Array<PrimExpr> packed_shape;
  for (size_t d = 0; d < batch_dims; ++d) packed_shape.push_back(int(shape[d]));
  packed_shape.push_back(int(N / kVnniLanes));
  packed_shape.push_back(int(detail::CeilDiv(K, depth)));
  packed_shape.push_back(kVnniLanes);
  packed_shape.push_back(depth);
  return te::compute(
      packed_shape,
      [&](const Array<Var>& i) {
        Array<PrimExpr> index = BatchIndex(i, batch_dims);
        PrimExpr k = i[batch_dims + 1] * depth + i[batch_dims + 3];
        index.push_back(k);
        index.push_back(i[batch_dims] * kVnniLanes + i[batch_dims + 2]);
        PrimExpr value = b(index);
        if (K % depth == 0) return value;
        return te::if_then_else(call_intrin(DataType::Bool(), "likely", {k < int(K)}), value,
                                make_zero(b.dtype()));
      },
      b.name() + "_packed", detail::kInjective);
}

te::Tensor batch_matmul_dot(const te::Tensor& a, const te::Tensor& packed_b) {
  const std::string op = "batch_matmul_dot";
  std::vector<int64_t> x = detail::ConstShape(a, op), w = detail::ConstShape(packed_b, op);
  const size_t batch_dims = x.size() >= 2 ? x.size() - 2 : 0;
  const bool int8 = a.dtype() == DataType::UInt(8) && packed_b.dtype() == DataType::Int(8);
  const bool bf16 =
      a.dtype() == DataType::BFloat16() && packed_b.dtype() == DataType::BFloat16();
  const int depth = int8 ? kVnniDepth : kDpbf16Depth;
  LOOM_CHECK_USER((int8 || bf16) && x.size() >= 2 && w.size() == batch_dims + 4 &&
                  std::equal(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(batch_dims),
                             w.begin()) &&
                  w[batch_dims + 2] == kVnniLanes && w[batch_dims + 3] == depth &&
                  x.back() == w[batch_dims + 1] * depth)
      << op << ": a '" << a.name() << "' must be uint8 (bfloat16) [..., M, K] and b '"
      << packed_b.name() << "' int8 (bfloat16) packed by pack_batch_matmul_dot [..., N / 16, "
      << "K / g, 16, g] with the same batch dimensions (g = 4 (2)), got " << a.dtype().str()
      << " " << detail::ShapeText(x) << " and " << packed_b.dtype().str() << " "
      << detail::ShapeText(w);
  Array<PrimExpr> out_shape;
  for (size_t d = 0; d <= batch_dims; ++d) out_shape.push_back(int(x[d]));
  out_shape.push_back(int(w[batch_dims] * kVnniLanes));
  IterVar k = te::reduce_axis(Range(0, int(w[batch_dims + 1])), "k");
  IterVar k_lane = te::reduce_axis(Range(0, depth), "k_lane");
  const DataType sum_dtype = int8 ? DataType::Int(32) : DataType::Float(32);
  return te::compute(
      out_shape,
      [&](const Array<Var>& i) {
        Array<PrimExpr> a_index = BatchIndex(i, batch_dims), b_index = a_index;
        PrimExpr j = i[batch_dims + 1];
        a_index.push_back(i[batch_dims]);
        a_index.push_back(k->var * depth + k_lane->var);
        for (PrimExpr e : {floordiv(j, kVnniLanes), PrimExpr(k->var), floormod(j, kVnniLanes),
                           PrimExpr(k_lane->var)}) {
          b_index.push_back(e);
        }
        return te::sum(cast(sum_dtype, a(a_index)) * cast(sum_dtype, packed_b(b_index)),
                       {k, k_lane});
      },
      op, kDotTag);
}

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
      out,
      [](const te::Operation& stage) { return stage->tag == "matmul" || stage->tag == kDotTag; },
      op, "the output of matmul or batch_matmul_dot");
  const bool dot = matmul->tag == kDotTag;
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
  te::Tensor tile = detail::RegisterTile(s, out, matmul);
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
  // batch..., i, j, k (dot: k groups, then the 4 / 2 k of a group)
  Array<IterVar> acc_axes = acc->leaf_iter_vars;
  const size_t k_axes = dot ? 2 : 1;
  const size_t j_axis = acc_axes.size() - k_axes - 1;
  IterVar acc_k = acc_axes[j_axis + 1];
  auto [acc_vector, acc_lane] = acc.split(acc_axes[j_axis], kLanes);
  // dot: a divisor of the k groups, so that no bound test parts the tensorized block from
  // its loop
  int64_t k_unroll = config.k_unroll;
  if (dot) {
    std::vector<int64_t> packed = detail::ConstShape(matmul->InputTensors()[1], op);
    k_unroll = detail::LargestDivisorUpTo(packed[packed.size() - 3], k_unroll);
  }
  auto [k_step, k_unrolled] = acc.split(acc_k, static_cast<int>(k_unroll));
  Array<IterVar> acc_order{k_step, k_unrolled};
  acc_order.insert(acc_order.end(), acc_axes.begin(), acc_axes.begin() + j_axis);  // batch..., i
  acc_order.insert(acc_order.end(), {acc_vector, acc_lane});
  if (dot) acc_order.push_back(acc_axes.back());
  acc.reorder(acc_order);
  for (size_t d = 0; d < j_axis; ++d) acc.unroll(acc_axes[d]);
  acc.unroll(k_unrolled);
  acc.unroll(acc_vector);
  // 16 columns by 4 k per vpdpbusd, by 2 per vdpbf16ps
  if (dot) acc.tensorize(acc_lane, DotIntrinsicFor(matmul->InputTensors()[0].dtype()));
  else acc.vectorize(acc_lane);
  return s;
}

}  // namespace loom::topi::x86
