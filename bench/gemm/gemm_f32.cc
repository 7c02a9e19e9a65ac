#include "gemm_f32.h"

#include "gemm_blocking.h"
#include "loom/te/lower.h"
#include "loom/te/operation.h"
#include "loom/te/schedule.h"

namespace loom::bench {

namespace {
// float32 lanes of an AVX-512 register.
constexpr int kLanes = 16;
}  // namespace

PrimFunc MakeGemmF32(int64_t rows, int64_t columns, int64_t depth, const GemmF32Params& p) {
  constexpr int64_t kMaxSize = int64_t{1} << 24;  // shapes are int32 expressions
  LOOM_CHECK_USER(rows > 0 && columns > 0 && depth > 0 && rows <= kMaxSize &&
                  columns <= kMaxSize && depth <= kMaxSize)
      << "MakeGemmF32: sizes must be in [1, 2^24], got M=" << rows << " N=" << columns
      << " K=" << depth;
  const int M = static_cast<int>(rows), N = static_cast<int>(columns), K = static_cast<int>(depth);
  LOOM_CHECK_USER(p.mr > 0 && p.nr > 0 && p.nr % kLanes == 0 && p.nc >= 0 &&
                  p.nc % p.nr == 0 && p.packed_b_block_bytes > 0 && p.k_unroll > 0)
      << "MakeGemmF32: tile parameters mr=" << p.mr << " nr=" << p.nr << " nc=" << p.nc
      << " packed_b_block_bytes=" << p.packed_b_block_bytes << " k_unroll=" << p.k_unroll
      << " must be positive (nc may be 0: automatic), with nr a multiple of 16 (AVX-512 "
      << "lanes) and nc of nr";
  const DataType f32 = DataType::Float(32);
  const int mr = static_cast<int>(p.mr), nr = static_cast<int>(p.nr);
  const int row_tiles = (M + mr - 1) / mr;
  const int panels = (N + nr - 1) / nr;
  te::Tensor A = te::placeholder({M, K}, f32, "A");
  te::Tensor B = te::placeholder({K, N}, f32, "B");
  // Columns past N are zero. The condition is marked likely so that LoopPartition peels the
  // last, partial panel off: every other panel is a plain vector copy.
  te::Tensor packed_b = te::compute({panels, K, nr}, [&](Var panel, Var k, Var lane) {
    PrimExpr j = panel * nr + lane;
    if (N % nr == 0) return B(k, j);
    return te::if_then_else(call_intrin(DataType::Bool(), "likely", {j < N}), B(k, j),
                            make_const(f32, 0.0));
  }, "packed_B");
  // The register tile is a stage ("acc") whose domain is padded to the tile grid, so it is
  // computed without bound checks: rows past M read row M - 1 (clamped: the index is
  // invariant in the k loop), columns past N the zero lanes of the last panel, and C copies
  // out only [M, N].
  IterVar k = te::reduce_axis(Range(0, K), "k");
  te::Tensor acc = te::compute({row_tiles * mr, panels * nr}, [&](Var i, Var j) {
    return te::sum(A(min(i, M - 1), k->var) * packed_b(floordiv(j, nr), k->var, floormod(j, nr)),
                   {k});
  }, "acc");
  te::Tensor C = te::compute({M, N}, [&](Var i, Var j) { return acc(i, j); }, "C");

  te::Schedule s = te::create_schedule({C.op()});
  IterVar i = s[C]->leaf_iter_vars[0], j = s[C]->leaf_iter_vars[1];
  // Columns split into panels, panels into blocks (gemm_blocking.h says why the block count
  // divides the panel count).
  auto [all_panels, lane] = s[C].split(j, nr);
  int panels_per_block = PanelsPerBlock(panels, int64_t{K} * nr * 4, p.nc, p.nr,
                                        p.packed_b_block_bytes);
  auto [column_block, panel] = s[C].split(all_panels, panels_per_block);
  auto [row_tile, tile_row] = s[C].split(i, mr);
  auto [lane_vector, vector_lane] = s[C].split(lane, kLanes);
  // Unrolled so that every access to the register tile has a constant offset: LLVM keeps
  // the tile in registers only then (one variable index anywhere, even in the partial
  // tile's store, and the whole tile lives on the stack).
  s[C].unroll(tile_row);
  s[C].unroll(lane_vector);
  s[C].vectorize(vector_lane);
  s[C].reorder({column_block, row_tile, panel, tile_row, lane_vector, vector_lane});
  s[C].parallel(s[C].fuse(column_block, row_tile));

  s[acc].compute_at(s[C], panel);
  s[acc].set_scope("local");
  const auto& acc_axes = s[acc]->leaf_iter_vars;  // i, j, k
  IterVar acc_row = acc_axes[0], acc_column = acc_axes[1], acc_k = acc_axes[2];
  // One 16-lane vector per register: LLVM legalizes wider or odd-width vectors (48 lanes)
  // into pieces it then shuffles together, which would leave the tile in memory.
  auto [acc_vector, acc_lane] = s[acc].split(acc_column, kLanes);
  auto [k_step, k_unrolled] = s[acc].split(acc_k, static_cast<int>(p.k_unroll));
  s[acc].reorder({k_step, k_unrolled, acc_row, acc_vector, acc_lane});
  s[acc].unroll(k_unrolled);
  s[acc].unroll(acc_row);
  s[acc].unroll(acc_vector);
  s[acc].vectorize(acc_lane);

  const auto& pack_axes = s[packed_b]->leaf_iter_vars;  // panel, k, lane
  auto [pack_vector, pack_lane] = s[packed_b].split(pack_axes[2], kLanes);
  s[packed_b].vectorize(pack_lane);
  s[packed_b].parallel(pack_axes[0]);
  return te::lower(s, {A, B, C}, "gemm_f32");
}

}  // namespace loom::bench
