#include "gemm_u8s8s32.h"

#include <algorithm>

#include "loom/ir/expr_ops.h"
#include "loom/te/lower.h"
#include "loom/te/operation.h"
#include "loom/te/schedule.h"
#include "loom/topi/x86/dense.h"
#include "loom/topi/x86/tensor_intrinsics.h"

namespace loom::bench {

namespace {
using topi::x86::VnniDot16x4;
constexpr int kLanes = topi::x86::kVnniLanes;
constexpr int kDepth = topi::x86::kVnniDepth;
const DataType kU8 = DataType::UInt(8);
const DataType kI8 = DataType::Int(8);
const DataType kI32 = DataType::Int(32);
}  // namespace

namespace {
// The intrinsic c[j, k] = b[k, j] for j < 16, k < 4: 4 rows of 16 int8 (b, rows of B, any
// stride apart) interleaved into one 64-byte vector of the packed layout (c). Its statement
// widens each row's bytes to the 16 int32 lanes, shifted into byte k, and ors them: 4 16-byte
// loads and about 10 vector instructions where the loop it replaces copies 64 single bytes.
// (A 64-lane shuffle of the 4 rows became a chain of some 40 two-source byte permutations.)
te::TensorIntrin VnniPack16x4() {
  te::Tensor b = te::placeholder({kDepth, kLanes}, kI8, "b");
  te::Tensor c = te::compute({kLanes, kDepth}, [&](Var j, Var k) { return b(k, j); }, "c");
  return te::decl_tensor_intrin(c.op(), [](const Array<Buffer>& in, const Array<Buffer>& out) {
    const DataType words = DataType::UInt(32).with_lanes(kLanes);
    PrimExpr zero = make_zero(kI32), one = make_const(kI32, int64_t{1});
    PrimExpr interleaved;
    for (int k = 0; k < kDepth; ++k) {
      PrimExpr row = BufferLoad(in[0], {make_const(kI32, int64_t{k}), Ramp(zero, one, kLanes)});
      PrimExpr word = cast(words, call_intrin(kU8.with_lanes(kLanes), "reinterpret", {row}));
      if (k == 0) {
        interleaved = word;
        continue;
      }
      PrimExpr shift = Broadcast(make_const(DataType::UInt(32), int64_t{8 * k}), kLanes);
      word = call_intrin(words, "shift_left", {word, shift});
      interleaved = call_intrin(words, "bitwise_or", {interleaved, word});
    }
    PrimExpr bytes = call_intrin(kI8.with_lanes(kLanes * kDepth), "reinterpret", {interleaved});
    Stmt store = BufferStore(out[0], bytes, {zero, Ramp(zero, one, kLanes * kDepth)});
    return te::TensorIntrinStmts{store, Stmt(), Stmt()};
  }, "vnni_pack_16x4");
}
}  // namespace

PrimFunc MakeGemmU8S8S32(int64_t rows, int64_t columns, int64_t depth,
                         const GemmU8S8S32Params& p) {
  constexpr int64_t kMaxSize = int64_t{1} << 24;  // shapes are int32 expressions
  LOOM_CHECK_USER(rows > 0 && columns > 0 && depth > 0 && rows <= kMaxSize &&
                  columns <= kMaxSize && depth <= kMaxSize)
      << "MakeGemmU8S8S32: sizes must be in [1, 2^24], got M=" << rows << " N=" << columns
      << " K=" << depth;
  LOOM_CHECK_USER(p.mr > 0 && p.nr > 0 && p.nr % kLanes == 0 && p.nc >= 0 &&
                  p.nc % p.nr == 0 && p.packed_b_block_bytes > 0 && p.k_unroll > 0)
      << "MakeGemmU8S8S32: tile parameters mr=" << p.mr << " nr=" << p.nr << " nc=" << p.nc
      << " packed_b_block_bytes=" << p.packed_b_block_bytes << " k_unroll=" << p.k_unroll
      << " must be positive (nc may be 0: automatic), with nr a multiple of 16 (int32 lanes "
      << "of AVX-512) and nc of nr";
  const int M = static_cast<int>(rows), N = static_cast<int>(columns), K = static_cast<int>(depth);
  const int mr = static_cast<int>(p.mr), nr = static_cast<int>(p.nr);
  const int row_tiles = (M + mr - 1) / mr;
  const int panels = (N + nr - 1) / nr;
  const int k_groups = (K + kDepth - 1) / kDepth;
  te::Tensor A = te::placeholder({M, K}, kU8, "A");
  te::Tensor B = te::placeholder({K, N}, kI8, "B");

  // The intrinsic reads 4 bytes of A at once: a K that 4 does not divide needs A copied with
  // its rows padded (by repeating the last column: B is zero there, so its value is
  // irrelevant and the copy needs no select).
  te::Tensor padded_a = A;
  if (K % kDepth != 0) {
    padded_a = te::compute({M, k_groups * kDepth}, [&](Var i, Var k) {
      return A(i, min(k, K - 1));
    }, "padded_A");
  }
  // Columns past N repeat column N - 1 (they only feed accumulator columns that are never
  // stored); k past K is zero, so that the padded k add nothing. Sizes that need neither
  // keep the reads of B contiguous.
  te::Tensor packed_b = te::compute(
      {panels * nr / kLanes, k_groups, kLanes, kDepth}, [&](Var column_group, Var k_group,
                                                            Var lane, Var k_lane) {
        PrimExpr k = k_group * kDepth + k_lane;
        PrimExpr column = column_group * kLanes + lane;
        if (N % nr != 0) column = min(column, N - 1);
        if (K % kDepth == 0) return B(k, column);
        return te::if_then_else(k < K, B(min(k, K - 1), column), make_zero(kI8));
      }, "packed_B");
  // The accumulator stage covers whole tiles (its domain is padded to the tile grid), so the
  // register tile is computed without bound checks; rows past M read row M - 1, and C copies
  // out only [M, N].
  IterVar k = te::reduce_axis(Range(0, k_groups * kDepth), "k");
  te::Tensor acc = te::compute({row_tiles * mr, panels * nr}, [&](Var i, Var j) {
    PrimExpr b = packed_b(floordiv(j, kLanes), floordiv(k->var, kDepth), floormod(j, kLanes),
                          floormod(k->var, kDepth));
    return te::sum(cast(kI32, padded_a(min(i, M - 1), k->var)) * cast(kI32, b), {k});
  }, "acc");
  te::Tensor C = te::compute({M, N}, [&](Var i, Var j) { return acc(i, j); }, "C");

  te::Schedule s = te::create_schedule({C.op()});
  IterVar i = s[C]->leaf_iter_vars[0], j = s[C]->leaf_iter_vars[1];
  // Columns split into panels, panels into blocks (topi::x86::PanelsPerBlock says why the
  // block count divides the panel count).
  auto [all_panels, lane] = s[C].split(j, nr);
  topi::x86::DenseConfig blocking;
  blocking.tile_columns = p.nr;
  blocking.block_columns = p.nc;
  blocking.block_bytes = p.packed_b_block_bytes;
  int panels_per_block =
      topi::x86::PanelsPerBlock(panels, int64_t{k_groups} * kDepth * nr, blocking);
  auto [column_block, panel] = s[C].split(all_panels, panels_per_block);
  auto [row_tile, tile_row] = s[C].split(i, mr);
  auto [lane_vector, vector_lane] = s[C].split(lane, kLanes);
  s[C].reorder({column_block, row_tile, panel, tile_row, lane_vector, vector_lane});
  // Unrolled so that every access to the register tile has a constant offset: LLVM keeps
  // the tile in registers only then (see gemm_f32.cc).
  s[C].unroll(tile_row);
  s[C].unroll(lane_vector);
  s[C].vectorize(vector_lane);
  IterVar task = s[C].fuse(column_block, row_tile);
  s[C].parallel(task);

  s[acc].compute_at(s[C], panel);
  s[acc].set_scope("local");
  const auto& acc_axes = s[acc]->leaf_iter_vars;  // i, j, k
  IterVar acc_row = acc_axes[0], acc_column = acc_axes[1], acc_k = acc_axes[2];
  auto [acc_vector, acc_lane] = s[acc].split(acc_column, kLanes);
  auto [k_group, k_lane] = s[acc].split(acc_k, kDepth);
  // A factor that divides the k groups, so that the unrolled copies need no bound check.
  int k_unroll = static_cast<int>(std::min<int64_t>(p.k_unroll, k_groups));
  while (k_groups % k_unroll != 0) --k_unroll;
  auto [k_step, k_unrolled] = s[acc].split(k_group, k_unroll);
  s[acc].reorder({k_step, k_unrolled, acc_row, acc_vector, acc_lane, k_lane});
  s[acc].unroll(k_unrolled);
  s[acc].unroll(acc_row);
  s[acc].unroll(acc_vector);
  s[acc].tensorize(acc_lane, VnniDot16x4());

  if (K % kDepth != 0) s[padded_a].parallel(s[padded_a]->leaf_iter_vars[0]);
  const auto& pack_axes = s[packed_b]->leaf_iter_vars;  // column group, k group, lane, k lane
  s[packed_b].parallel(pack_axes[0]);
  // The intrinsic matches the plain copy only: sizes that need padding (a clamped column, a
  // zero k) keep the per-byte loop.
  if (N % nr == 0 && K % kDepth == 0) s[packed_b].tensorize(pack_axes[2], VnniPack16x4());
  Array<te::Tensor> args{A, B, C};
  return te::lower(s, args, "gemm_u8s8s32");
}

}  // namespace loom::bench
