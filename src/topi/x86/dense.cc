#include "loom/topi/x86/dense.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include "loom/topi/x86/tensor_intrinsics.h"
#include "topi/topi_util.h"

namespace loom::topi::x86 {

namespace {

constexpr int kLanes = detail::kAvx512Lanes;
// Sizes are int32 expressions.
constexpr int64_t kMaxExtent = int64_t{1} << 30;
const char* const kPackTag = "dense_pack";
const char* const kDenseTag = "dense_packed";
const char* const kTileTag = "dense_packed_tile";

void CheckConfig(const DenseConfig& c, const std::string& op) {
  LOOM_CHECK_USER(c.tile_rows > 0 && c.tile_columns > 0 && c.tile_columns % kLanes == 0 &&
                  c.block_columns >= 0 && c.block_columns % c.tile_columns == 0 &&
                  c.block_bytes > 0 && c.k_unroll > 0)
      << op << ": config " << c.str() << " is invalid: every size must be positive "
      << "(block_columns may be 0: automatic), with tile_columns a multiple of " << kLanes
      << " (AVX-512 lanes) and block_columns of tile_columns";
  detail::CheckRegisterTile(c.tile_rows, c.tile_columns, op, c.str());
}

void CheckFloat32(const te::Tensor& x, const std::string& op) {
  LOOM_CHECK_USER(x.dtype() == DataType::Float(32))
      << op << ": '" << x.name() << "' is " << x.dtype().str() << "; the operator takes float32";
}

// Panels in parallel, each row of a float panel one vector copy (an int8 / bfloat16 panel
// interleaves 4 / 2 rows: an element copy, done once per model).
void SchedulePack(te::Stage pack) {
  const auto& axes = pack->leaf_iter_vars;  // panel, k, lane (dot: panel, k group, lane, k)
  pack.parallel(axes[0]);
  if (axes.size() != 3) return;
  auto [vectors, lane] = pack.split(axes[2], kLanes);
  pack.vectorize(lane);
}

}  // namespace

std::string DenseConfig::str() const {
  std::ostringstream text;
  text << "tile_rows=" << tile_rows << " tile_columns=" << tile_columns
       << " block_columns=" << block_columns << " block_bytes=" << block_bytes
       << " k_unroll=" << k_unroll;
  return text.str();
}

// Measured with one thread on this machine (2-core AVX-512 Xeon, 2 MiB L2 per core, shared
// with other jobs: medians of interleaved runs in one process, against oneDNN's sgemm on
// unpacked weights; packing excluded since weights are constants):
//   - from 8 rows up the large GEMM's 8 x 32 tile with blocks filling 1 MiB of L2 is within
//     noise of 4 x 64, 8 x 48 and 12 x 32 (and of blocks of 64 to 512 columns) at BERT-base's
//     128 x {768, 3072} x {768, 3072}, at 16 x 256 x 256 and at 64 x 1024 x 1024, and matches
//     oneDNN at 128 x 768 x 768 (75-140 GFLOP/s across runs, oneDNN 80-113);
//   - below 8 rows the whole M is one tile, 64 columns wide (at 3 x 512 x 512: 65 GFLOP/s
//     against 48 for 3 x 32, oneDNN 46): 4 vectors a row keep enough multiply-adds in flight;
//   - with one row tile a column block gains nothing from staying in L2, so each panel is a
//     block of its own and the panels spread over the threads. At M = 1 the product streams
//     the weight once (memory bound): 1 x 64 panels reach oneDNN's speed at 1 x 1000 x
//     {512, 1280, 2048} (12-14, 6-7 and 5-7 GFLOP/s), 16-column panels are 25% slower.
//   - on a 2-core Emerald Rapids Xeon (2 MiB L2 per core, a slow path to L3), from 16 to 512
//     rows with a weight of 8 MiB or more (streamed from L3 whatever the blocking) a 4 x 64
//     tile with one panel per block is 3-6% faster than 8 x 32 in 1 MiB blocks (CPU time,
//     4 interleaved runs each: BERT-base's FFN at 128 x 768 x 3072 and 128 x 3072 x 768, 130
//     against 123 GFLOP/s; at 512 rows 150 against 146), and within noise or slower below
//     (128 x 768 x 768, 64 x 1024 x 1024), so the rule stops at 8 MiB.
DenseConfig DefaultDenseConfig(int64_t M, int64_t N, int64_t K) {
  LOOM_CHECK_USER(M > 0 && N > 0 && K > 0)
      << "DefaultDenseConfig: sizes must be positive, got M=" << M << " N=" << N << " K=" << K;
  DenseConfig c;
  constexpr int64_t kStreamedWeightBytes = int64_t{8} << 20;
  if (M < c.tile_rows) {
    c.tile_rows = M;
    c.tile_columns = 64;
  } else if (M >= 16 && M <= 512 && N >= 64 && N * K * 4 >= kStreamedWeightBytes) {
    c.tile_rows = 4;
    c.tile_columns = 64;
    c.block_columns = 64;
  }
  // No panel wider than N (rounded up to whole vectors): its zero columns would be computed.
  c.tile_columns = std::min(c.tile_columns, detail::CeilDiv(N, kLanes) * kLanes);
  if (M <= c.tile_rows) c.block_columns = c.tile_columns;
  return c;
}

te::Tensor pack_dense_weight(const te::Tensor& weight, bool transposed, const DenseConfig& config) {
  const std::string op = "pack_dense_weight";
  CheckConfig(config, op);
  LOOM_CHECK_USER(weight.ndim() == 2)
      << op << ": weight '" << weight.name() << "' must be 2-d ("
      << (transposed ? "[N, K]" : "[K, N]") << "), got " << detail::ShapeText(weight.shape());
  const bool dot = IsDotProductWeight(weight.dtype());
  if (!dot) CheckFloat32(weight, op);
  const int depth = dot ? DotProductDepth(weight.dtype()) : 1;
  std::vector<int64_t> shape = detail::ConstShape(weight, op);
  const int64_t K = transposed ? shape[1] : shape[0], N = transposed ? shape[0] : shape[1];
  const int nr = static_cast<int>(config.tile_columns);
  LOOM_CHECK_USER(K > 0 && N > 0 && K * (detail::CeilDiv(N, nr) * nr) < kMaxExtent &&
                  K % depth == 0)
      << op << ": weight '" << weight.name() << "' " << detail::ShapeText(shape)
      << " must be non-empty, with fewer than 2^30 elements once packed"
      << (dot ? " and K a multiple of " + std::to_string(depth) + " (" + weight.dtype().str() +
                    ": the k one dot-product lane sums)"
              : "");
  const int panels = static_cast<int>(detail::CeilDiv(N, nr));
  auto element = [&](PrimExpr j, PrimExpr k) {
    PrimExpr value = transposed ? weight(j, k) : weight(k, j);
    if (N % nr == 0) return value;
    // Columns past N are zero. Marked likely, so that LoopPartition peels the last,
    // partial panel off: every other panel is a plain vector copy.
    return te::if_then_else(call_intrin(DataType::Bool(), "likely", {j < static_cast<int>(N)}),
                            value, make_zero(weight.dtype()));
  };
  if (dot) {
    return te::compute(
        {panels, static_cast<int>(K / depth), nr, depth},
        [&](Var panel, Var k_group, Var lane, Var k) {
          return element(panel * nr + lane, k_group * depth + k);
        },
        weight.name() + "_packed", kPackTag);
  }
  return te::compute(
      {panels, static_cast<int>(K), nr},
      [&](Var panel, Var k, Var lane) { return element(panel * nr + lane, k); },
      weight.name() + "_packed", kPackTag);
}

te::Tensor dense_packed(const te::Tensor& data, const te::Tensor& packed_weight, int64_t N) {
  const std::string op = "dense_packed";
  const bool dot = packed_weight.ndim() == 4;
  LOOM_CHECK_USER(data.ndim() >= 2 && (packed_weight.ndim() == 3 || dot))
      << op << ": data '" << data.name() << "' must be [..., M, K] and the packed weight '"
      << packed_weight.name() << "' [panels, K, panel width] (int8 / bfloat16: [panels, K / g, "
      << "panel width, g]; from pack_dense_weight), got " << detail::ShapeText(data.shape())
      << " and " << detail::ShapeText(packed_weight.shape());
  int depth = 1;
  DataType sum_dtype = DataType::Float(32);
  if (dot) {
    const bool int8 = packed_weight.dtype() == DataType::Int(8);
    LOOM_CHECK_USER((int8 && data.dtype() == DataType::UInt(8)) ||
                    (packed_weight.dtype() == DataType::BFloat16() &&
                     data.dtype() == DataType::BFloat16()))
        << op << ": an int8 packed weight takes uint8 data and a bfloat16 one bfloat16 data, "
        << "got " << data.dtype().str() << " data and a " << packed_weight.dtype().str()
        << " weight";
    depth = DotProductDepth(packed_weight.dtype());
    if (int8) sum_dtype = DataType::Int(32);
  } else {
    CheckFloat32(data, op);
    CheckFloat32(packed_weight, op);
  }
  // The rows may be a size only a run knows (one of data's row dimensions; the others 1).
  const Array<PrimExpr> row_shape(data.shape().begin(), data.shape().end() - 1);
  int symbolic_row_dim = -1;
  for (size_t d = 0; d < row_shape.size(); ++d) {
    int64_t extent = 0;
    if (IsConstInt(row_shape[d], &extent)) continue;
    LOOM_CHECK_USER(symbolic_row_dim < 0)
        << op << ": data '" << data.name() << "' " << detail::ShapeText(data.shape())
        << " has more than one symbolic row dimension";
    symbolic_row_dim = static_cast<int>(d);
  }
  std::vector<int64_t> in;
  for (const PrimExpr& extent : data.shape()) {
    int64_t value = 1;
    IsConstInt(extent, &value);
    in.push_back(value);  // a symbolic row dimension counts as 1 in the checks below
  }
  std::vector<int64_t> packed = detail::ConstShape(packed_weight, op);
  const int64_t K = in.back(), panels = packed[0], nr = packed[2];
  LOOM_CHECK_USER(IsConstInt(data.shape().back()))
      << op << ": data '" << data.name() << "' " << detail::ShapeText(data.shape())
      << " must have a constant K (its last dimension)";
  LOOM_CHECK_USER(packed[1] * depth == K)
      << op << ": data '" << data.name() << "' " << detail::ShapeText(data.shape())
      << " has K=" << K << " but the packed weight '" << packed_weight.name() << "' "
      << detail::ShapeText(packed) << " was packed from K=" << packed[1] * depth << " rows";
  LOOM_CHECK_USER(N > (panels - 1) * nr && N <= panels * nr)
      << op << ": N=" << N << " does not match the packed weight '" << packed_weight.name()
      << "' " << detail::ShapeText(packed) << " (" << panels << " panels of " << nr
      << " columns hold N in [" << (panels - 1) * nr + 1 << ", " << panels * nr << "])";
  std::vector<int64_t> row_dims(in.begin(), in.end() - 1);  // [..., M]
  int64_t constant_rows = 1;
  for (int64_t extent : row_dims) constant_rows *= extent;
  LOOM_CHECK_USER(constant_rows > 0 && K > 0 &&
                  constant_rows * std::max(K, panels * nr) < kMaxExtent)
      << op << ": data '" << data.name() << "' " << detail::ShapeText(data.shape())
      << " must be non-empty, and it and the output below 2^30 elements";
  LOOM_CHECK_USER(symbolic_row_dim < 0 || constant_rows == 1)
      << op << ": data '" << data.name() << "' " << detail::ShapeText(data.shape())
      << " has a symbolic row dimension beside row dimensions other than 1";
  // Symbolic: the one symbolic dimension's rows (the others are 1, so the row index is it).
  const PrimExpr rows = symbolic_row_dim >= 0 ? row_shape[static_cast<size_t>(symbolic_row_dim)]
                                              : PrimExpr(static_cast<int>(constant_rows));
  auto row_index = [&](const PrimExpr& i) {
    if (row_shape.size() == 1) return Array<PrimExpr>{i};
    if (symbolic_row_dim < 0) return detail::Unravel(i, row_shape);
    Array<PrimExpr> index;
    for (size_t d = 0; d < row_shape.size(); ++d) {
      index.push_back(static_cast<int>(d) == symbolic_row_dim ? i : make_zero(i.dtype()));
    }
    return index;
  };
  // The register tiles' stage: rows fused, columns padded to whole panels (the zero
  // columns of the last panel), so that a tile is computed without bound checks on its
  // columns; the output copies out [..., N]. Rows are not padded: the rows of a partial
  // last row tile get a bound check each, the same for all lanes, so the tile stays vector
  // code (measured at 37 x 1024 x 1024: as fast per flop as 40 x 1024 x 1024), and
  // LoopPartition peels that tile off when the parallel loop holds one column block.
  // int8 / bfloat16: k in groups of 4 / 2 (the intrinsic's reduction innermost), products in
  // int32 / float32.
  IterVar k = te::reduce_axis(Range(0, static_cast<int>(K / depth)), "k");
  IterVar k_lane = te::reduce_axis(Range(0, depth), "k_lane");
  const int width = static_cast<int>(nr);
  te::Tensor tile = te::compute(
      {rows, static_cast<int>(panels * nr)},
      [&](Var i, Var j) {
        Array<PrimExpr> index = row_index(i);
        if (!dot) {
          index.push_back(k->var);
          return te::sum(
              data(index) * packed_weight(floordiv(j, width), k->var, floormod(j, width)), {k});
        }
        index.push_back(k->var * depth + k_lane->var);
        PrimExpr w = packed_weight(floordiv(j, width), k->var, floormod(j, width), k_lane->var);
        return te::sum(cast(sum_dtype, data(index)) * cast(sum_dtype, w), {k, k_lane});
      },
      op + "_tile", kTileTag);
  Array<PrimExpr> out_shape = row_shape;
  out_shape.push_back(static_cast<int>(N));
  return te::compute(
      out_shape,
      [&](const Array<Var>& i) {
        PrimExpr row = i[0];
        if (symbolic_row_dim >= 0) {
          row = i[static_cast<size_t>(symbolic_row_dim)];
        } else {
          for (size_t d = 1; d + 1 < i.size(); ++d) row = row * row_shape[d] + i[d];
        }
        return tile(row, i.back());
      },
      op, kDenseTag);
}

te::Schedule schedule_dense_pack(const te::Tensor& packed_weight) {
  LOOM_CHECK_USER(packed_weight.op()->tag == kPackTag)
      << "schedule_dense_pack: '" << packed_weight.name()
      << "' is not the output of pack_dense_weight";
  te::Schedule s = te::create_schedule({packed_weight.op()});
  detail::InlineInjective(s, {packed_weight.op()});
  SchedulePack(s[packed_weight]);
  return s;
}

te::Schedule schedule_dense_packed(const te::Tensor& out, const DenseConfig& config) {
  const std::string op = "schedule_dense_packed";
  CheckConfig(config, op);
  te::Operation dense = detail::FindAnchor(
      out, [](const te::Operation& stage) { return stage->tag == kDenseTag; }, op,
      "the output of dense_packed");
  detail::CheckEpilogueKeepsShape(out, dense, op);
  Array<te::Tensor> dense_inputs = dense->InputTensors();
  LOOM_ICHECK(dense_inputs.size() == 1 && dense_inputs[0].op()->tag == kTileTag)
      << "dense_packed reads its register tiles only";
  te::Tensor tile = dense_inputs[0];
  Array<te::Tensor> tile_inputs = tile.op()->InputTensors();  // data, packed weight
  LOOM_ICHECK(tile_inputs.size() == 2) << "the dense tile reads data and the packed weight";
  te::Tensor packed = tile_inputs[1];
  std::vector<int64_t> packed_shape = detail::ConstShape(packed, op);
  const int64_t panels = packed_shape[0], K = packed_shape[1], nr = packed_shape[2];
  LOOM_CHECK_USER(nr == config.tile_columns)
      << op << ": the weight '" << packed.name() << "' was packed in panels of " << nr
      << " columns but config " << config.str() << " has tile_columns=" << config.tile_columns
      << "; pack the weight with the config the product is scheduled with";
  // Row tiles cover the rows of every batch entry [..., M] fused only where each tile holds
  // whole entries (or there is one tile). A tile holding part of an entry's rows is bounded
  // through the fused index's division and remainder by M, which bound inference relaxes:
  // to all M rows of the entry where the tile may straddle two (every tile computed them
  // all: a [1, 35, 512] x [512, 10000] decoder ran 9 times over), or to a symbolic row count
  // that the tile's unrolling refuses. Otherwise each entry's M rows are tiled apart, the
  // batch dimensions outermost.
  // A symbolic row count (the tile's rows: one symbolic dimension, the others 1) is tiled
  // as one entry, its last row tile checked row by row.
  int64_t rows_total = 0;
  const bool symbolic_rows = !IsConstInt(tile.shape()[0], &rows_total);
  const size_t out_rank = out.shape().size();
  int64_t m = 0;
  IsConstInt(out.shape()[out_rank - 2], &m);
  // Tile rows past the data's rows would only add bound checks.
  int mr =
      static_cast<int>(symbolic_rows ? config.tile_rows : std::min(config.tile_rows, rows_total));
  const bool tile_entries_apart = !symbolic_rows && out_rank > 2 && rows_total > mr && mr % m != 0;
  if (tile_entries_apart) mr = static_cast<int>(std::min(config.tile_rows, m));

  te::Schedule s = te::create_schedule({out.op()});
  detail::InlineInjective(s, {out.op()});
  if (dense != out.op()) s[dense].compute_inline();
  if (packed.op()->tag == kPackTag) SchedulePack(s[packed]);

  te::Stage c = s[out];
  Array<IterVar> axes = c->leaf_iter_vars;
  const size_t row_axis = axes.size() - 2;
  IterVar rows = axes[0], batch;  // batch: the entries' dimensions fused, when tiled apart
  if (symbolic_rows) {
    // The symbolic dimension itself: fused with the others (all 1), its index would be a
    // remainder by the symbolic size, whose bounds cover every row.
    for (size_t d = 0; d <= row_axis; ++d) {
      if (!IsConstInt(out.shape()[d])) rows = axes[d];
    }
  } else if (!tile_entries_apart) {
    for (size_t d = 1; d <= row_axis; ++d) rows = c.fuse(rows, axes[d]);
  } else {
    batch = axes[0];
    for (size_t d = 1; d < row_axis; ++d) batch = c.fuse(batch, axes[d]);
    rows = axes[row_axis];
  }
  auto [all_panels, lane] = c.split(axes.back(), static_cast<int>(nr));
  // A panel is K x nr floats, or (int8 / bfloat16) K / g groups x nr x g elements of 4 / g
  // bytes: 4 * (K / g) * nr bytes either way.
  const bool dot = packed_shape.size() == 4;
  int panels_per_block = PanelsPerBlock(panels, K * nr * 4, config);
  auto [column_block, panel] = c.split(all_panels, panels_per_block);
  auto [row_tile, tile_row] = c.split(rows, mr);
  auto [lane_vector, vector_lane] = c.split(lane, kLanes);
  // Unrolled so that every access to the register tile has a constant offset: LLVM keeps
  // the tile in registers only then (one variable index anywhere, even in the partial
  // tile's store, and the whole tile lives on the stack).
  c.unroll(tile_row);
  c.unroll(lane_vector);
  c.vectorize(vector_lane);
  c.reorder({column_block, row_tile, panel, tile_row, lane_vector, vector_lane});
  // A symbolic row count: the column blocks are the tasks, each running every row tile over
  // its block of weights (which stays in cache); fused with the row tiles, the task index
  // would be divided by their symbolic count.
  IterVar tasks = symbolic_rows ? column_block : c.fuse(column_block, row_tile);
  // (A batch of one stays an outer loop of one iteration: fused in, it would put a division
  // by the task count into every index.)
  if (batch.defined() && !symbolic_rows && rows_total > m) {
    c.reorder({batch, tasks});
    tasks = c.fuse(batch, tasks);
  }
  c.parallel(tasks);

  te::Stage acc = s[tile];
  acc.compute_at(c, panel);
  acc.set_scope("local");
  const auto& acc_axes = acc->leaf_iter_vars;  // i, j, k (dot: k groups, then k_lane)
  IterVar acc_row = acc_axes[0], acc_column = acc_axes[1], acc_k = acc_axes[2];
  IterVar k_lane = dot ? acc_axes[3] : IterVar();
  // One 16-lane vector per register: LLVM legalizes wider vectors into pieces it then
  // shuffles together, which would leave the tile in memory.
  auto [acc_vector, acc_lane] = acc.split(acc_column, kLanes);
  auto [k_step, k_unrolled] = acc.split(acc_k, static_cast<int>(config.k_unroll));
  Array<IterVar> order = {k_step, k_unrolled, acc_row, acc_vector, acc_lane};
  if (dot) order.push_back(k_lane);
  acc.reorder(order);
  acc.unroll(k_unrolled);
  acc.unroll(acc_row);
  acc.unroll(acc_vector);
  // 16 columns by 4 k per vpdpbusd, by 2 per vdpbf16ps
  if (dot) acc.tensorize(acc_lane, DotIntrinsicFor(tile_inputs[0].dtype()));
  else acc.vectorize(acc_lane);
  return s;
}

int PanelsPerBlock(int64_t panels, int64_t panel_bytes, const DenseConfig& c) {
  // Only what the blocking divides by: GEMMs of other element types (bench/gemm's
  // u8s8s32) share it with register tiles of their own.
  LOOM_CHECK_USER(panels > 0 && panel_bytes > 0 && c.tile_columns > 0 && c.block_columns >= 0 &&
                  c.block_columns % c.tile_columns == 0 &&
                  (c.block_columns > 0 || c.block_bytes > 0))
      << "PanelsPerBlock: " << panels << " panels of " << panel_bytes << " bytes with config "
      << c.str() << ": the panel count, the panel bytes and tile_columns must be positive, "
      << "and block_columns a multiple of tile_columns (or 0, with block_bytes positive)";
  int64_t wanted = c.block_columns > 0 ? c.block_columns / c.tile_columns
                                       : std::max<int64_t>(1, c.block_bytes / panel_bytes);
  int64_t count = std::min(wanted, panels);
  while (panels % count != 0) --count;
  return static_cast<int>(count);
}

}  // namespace loom::topi::x86
