// Matrix products on tensor cores (loom/topi/gpu/tensor_core.h): the four tensor intrinsics
// of the warp matrix operations, and the schedule that tensorizes a product onto them.
#include "loom/topi/gpu/tensor_core.h"

#include <string>
#include <vector>

#include "loom/ir/expr_ops.h"
#include "loom/support/error.h"
#include "loom/te/tensor_intrin.h"
#include "loom/tir/transform.h"
#include "topi/topi_util.h"

namespace loom::topi::gpu {
namespace {

constexpr int kTile = TensorCoreTiling::kTile;
// Shared rows padded by this many elements (16 bytes of float16, 32 of float32), so that
// the rows a fragment load or store touches start on different banks, while each row still
// starts 32 bytes aligned from the tile's, as the matrix operations need.
constexpr int kOperandPad = 8;
constexpr int kAccumulatorPad = 4;

const DataType kSumType = DataType::Float(32);

// The number of the fragment at the start of `buffer`, a 16x16 tile of a fragment allocation
// whose rows are strides[0] elements long (a multiple of 16): fragments are numbered row of
// tiles by row of tiles.
PrimExpr FragmentIndex(const Buffer& buffer) {
  const PrimExpr row_length = buffer->strides[0];
  const PrimExpr offset = buffer->elem_offset;
  return floordiv(offset, row_length * kTile) * floordiv(row_length, kTile) +
         floordiv(floormod(offset, row_length), kTile);
}

Stmt Call(const char* op, Array<PrimExpr> args) {
  return Evaluate(call_intrin(DataType::Int(32), op, std::move(args)));
}

// A 16x16 copy `to` = `from` (what the loads and the store compute).
te::Tensor TileCopy(const te::Tensor& from, const std::string& name) {
  return te::compute(
      {kTile, kTile}, [&](const Array<Var>& i) { return from(i[0], i[1]); }, name);
}

// Loads an A (rows x depth) or B (depth x columns) tile of `dtype` from memory into a
// fragment of `scope`.
te::TensorIntrin FragmentLoad(DataType dtype, const char* scope) {
  te::Tensor tile = te::placeholder({kTile, kTile}, dtype, "tile");
  te::Tensor fragment = TileCopy(tile, "fragment");
  return te::decl_tensor_intrin(
      fragment.op(),
      [](const Array<Buffer>& in, const Array<Buffer>& out) {
        Stmt load = Call(tir::builtin::kMmaLoad,
                         {out[0]->data, FragmentIndex(out[0]),
                          te::access_ptr(in[0], tir::builtin::kAccessRead), in[0]->strides[0]});
        return te::TensorIntrinStmts{load, Stmt(), Stmt()};
      },
      std::string("mma_load_") + scope, {{"fragment", {scope, kTile}}});
}

// c = a x b in float32 from float16 / bfloat16 fragments; accumulates across the outer
// reduction loops.
te::TensorIntrin FragmentProduct(DataType dtype) {
  te::Tensor a = te::placeholder({kTile, kTile}, dtype, "a");
  te::Tensor b = te::placeholder({kTile, kTile}, dtype, "b");
  IterVar k = te::reduce_axis(Range(0, kTile), "k");
  te::Tensor c = te::compute(
      {kTile, kTile},
      [&](const Array<Var>& i) {
        return te::sum(cast(kSumType, a(i[0], k->var)) * cast(kSumType, b(k->var, i[1])), {k});
      },
      "c");
  return te::decl_tensor_intrin(
      c.op(),
      [](const Array<Buffer>& in, const Array<Buffer>& out) {
        const Buffer& c = out[0];
        Stmt fill = Call(tir::builtin::kMmaFill, {c->data, FragmentIndex(c), make_zero(kSumType)});
        Stmt update = Call(tir::builtin::kMmaSync,
                           {c->data, FragmentIndex(c), in[0]->data, FragmentIndex(in[0]),
                            in[1]->data, FragmentIndex(in[1]), c->data, FragmentIndex(c)});
        return te::TensorIntrinStmts{SeqStmt({fill, update}), fill, update};
      },
      "mma_sync",
      {{"a", {tir::builtin::kMatrixA, kTile}},
       {"b", {tir::builtin::kMatrixB, kTile}},
       {"c", {tir::builtin::kAccumulator, kTile}}});
}

// Stores an accumulator fragment into memory.
te::TensorIntrin FragmentStore() {
  te::Tensor fragment = te::placeholder({kTile, kTile}, kSumType, "fragment");
  te::Tensor tile = TileCopy(fragment, "tile");
  return te::decl_tensor_intrin(tile.op(),
                                [](const Array<Buffer>& in, const Array<Buffer>& out) {
                                  Stmt store =
                                      Call(tir::builtin::kMmaStore,
                                           {te::access_ptr(out[0], tir::builtin::kAccessWrite),
                                            in[0]->data, FragmentIndex(in[0]), out[0]->strides[0]});
                                  return te::TensorIntrinStmts{store, Stmt(), Stmt()};
                                },
                                "mma_store", {{"fragment", {tir::builtin::kAccumulator, kTile}}});
}

// Spreads `element` (a stage's loops fused) over all the block's threads, neighbouring lanes
// neighbouring elements: threadIdx.x (the lanes), then threadIdx.z, threadIdx.y.
void SpreadOverThreads(te::Stage stage, const IterVar& element, const TensorCoreTiling& tiling) {
  auto [step, by_thread] = stage.split(element, tiling.threads());
  auto [warp, lane] = stage.split(by_thread, TensorCoreTiling::kWarpLanes);
  auto [warp_row, warp_column] = stage.split(warp, tiling.warps_n);
  stage.bind(warp_row, te::thread_axis("threadIdx.y"));
  stage.bind(warp_column, te::thread_axis("threadIdx.z"));
  stage.bind(lane, te::thread_axis("threadIdx.x"));
}

// The axis of the compute `op` at dimension `d` from the end.
IterVar AxisFromEnd(const te::Operation& op, size_t d) {
  const auto* compute = static_cast<const te::ComputeOpNode*>(op.get());
  return compute->axis[compute->axis.size() - d];
}

}  // namespace

int64_t TensorCoreTiling::shared_bytes(int64_t operand_bytes) const {
  const int64_t a = int64_t{block_rows()} * (tile_k() + kOperandPad) * operand_bytes;
  const int64_t b = int64_t{tile_k()} * (block_columns() + kOperandPad) * operand_bytes;
  const int64_t c = int64_t{block_rows()} * (block_columns() + kAccumulatorPad) * 4;
  return a + b + c;
}

bool TensorCoreTilingFits(int64_t rows, int64_t columns, int64_t depth,
                          const TensorCoreTiling& tiling) {
  return rows % tiling.block_rows() == 0 && columns % tiling.block_columns() == 0 &&
         depth % tiling.tile_k() == 0;
}

te::Schedule schedule_matmul_tensor_core(const te::Tensor& out, const TensorCoreTiling& tiling) {
  const std::string schedule = "schedule_matmul_tensor_core";
  LOOM_CHECK_USER(tiling.warps_m > 0 && tiling.warps_n > 0 && tiling.warp_tiles_m > 0 &&
                  tiling.warp_tiles_n > 0 && tiling.k_tiles > 0)
      << schedule << ": every tiling factor must be positive";
  te::Operation product = detail::FindAnchor(
      out, [](const te::Operation& op) { return op->tag == "matmul"; }, schedule,
      "the output of matmul");
  detail::CheckEpilogueKeepsShape(out, product, schedule);
  const Array<te::Tensor> operands = product->InputTensors();
  const te::Tensor result(product, 0);
  LOOM_CHECK_USER(operands.size() == 2 && out.ndim() >= 2 && result.dtype() == kSumType &&
                  operands[0].dtype() == operands[1].dtype() &&
                  !tir::builtin::TensorCoreFeature(operands[0].dtype()).empty())
      << schedule << ": '" << product->name << "' must multiply two float16 or bfloat16 "
      << "operands of at least two dimensions into float32 (matmul with out_dtype float32)";
  const int64_t rows = detail::ConstShape(out, schedule)[out.ndim() - 2];
  const int64_t columns = detail::ConstShape(out, schedule)[out.ndim() - 1];
  const int64_t depth = detail::ConstShape(operands[0], schedule).back();
  LOOM_CHECK_USER(TensorCoreTilingFits(rows, columns, depth, tiling))
      << schedule << ": '" << product->name << "' is " << rows << " x " << columns << " over "
      << depth << ", which does not divide into tiles of " << tiling.block_rows() << " x "
      << tiling.block_columns() << " over steps of " << tiling.tile_k()
      << " (every lane of a warp must run the matrix operations: no partial tiles); use "
      << "schedule_matmul_shared for this product";
  const DataType operand_type = operands[0].dtype();

  te::Schedule s = te::create_schedule({out.op()});
  detail::InlineInjective(s, {out.op()});
  te::Tensor a_shared = s.cache_read(operands[0], "shared", {product});
  te::Tensor b_shared = s.cache_read(operands[1], "shared", {product});
  te::Tensor a_fragment = s.cache_read(a_shared, tir::builtin::kMatrixA, {product});
  te::Tensor b_fragment = s.cache_read(b_shared, tir::builtin::kMatrixB, {product});
  // The sums in the warps' accumulators; the product's stage becomes a copy of them, which
  // is the shared C tile (or, with no epilogue, the output: then the tile is a cache of it).
  te::Tensor accumulator = s.cache_write(result, tir::builtin::kAccumulator);
  te::Stage output = s[out];
  te::Tensor c_shared = result;
  if (out.op() == product) {
    c_shared = s.cache_read(accumulator, "shared", {output->op});
  } else {
    s[result].set_scope("shared");
  }

  // The output: blocks of block_rows x block_columns, copied out of the shared C tile by all
  // the block's threads.
  const Array<IterVar> out_leaves = output->leaf_iter_vars;
  const size_t batch_dims = out_leaves.size() - 2;
  auto [block_y, row] = output.split(out_leaves[batch_dims], tiling.block_rows());
  auto [block_x, column] = output.split(out_leaves[batch_dims + 1], tiling.block_columns());
  Array<IterVar> order(out_leaves.begin(), out_leaves.begin() + batch_dims);
  for (const IterVar& leaf : {block_y, block_x, row, column}) order.push_back(leaf);
  output.reorder(order);
  if (batch_dims > 0) {
    IterVar fused = out_leaves[0];
    for (size_t d = 1; d < batch_dims; ++d) fused = output.fuse(fused, out_leaves[d]);
    output.bind(fused, te::thread_axis("blockIdx.z"));
  }
  output.bind(block_y, te::thread_axis("blockIdx.y"));
  output.bind(block_x, te::thread_axis("blockIdx.x"));
  SpreadOverThreads(output, output.fuse(row, column), tiling);

  // The C tile: each warp stores its fragments.
  te::Stage c_tile = s[c_shared];
  c_tile.compute_at(output, block_x);
  c_tile.storage_align(AxisFromEnd(c_tile->op, 2), tiling.block_columns(), kAccumulatorPad);
  const Array<IterVar> c_leaves = c_tile->leaf_iter_vars;
  auto [c_warp_row, c_row] = c_tile.split(c_leaves[batch_dims], tiling.warp_tiles_m * kTile);
  auto [c_warp_column, c_column] =
      c_tile.split(c_leaves[batch_dims + 1], tiling.warp_tiles_n * kTile);
  auto [c_row_tile, c_row_16] = c_tile.split(c_row, kTile);
  auto [c_column_tile, c_column_16] = c_tile.split(c_column, kTile);
  c_tile.reorder({c_warp_row, c_warp_column, c_row_tile, c_column_tile, c_row_16, c_column_16});
  c_tile.bind(c_warp_row, te::thread_axis("threadIdx.y"));
  c_tile.bind(c_warp_column, te::thread_axis("threadIdx.z"));
  c_tile.tensorize(c_row_16, FragmentStore());
  // Every loop over a warp's fragments unrolled: a fragment's registers are named by
  // constant indices only.
  c_tile.unroll(c_row_tile);
  c_tile.unroll(c_column_tile);

  // The warp's accumulators over the whole reduction, tile_k a step.
  te::Stage sum = s[accumulator];
  sum.compute_at(c_tile, c_warp_column);
  const Array<IterVar> sum_leaves = sum->leaf_iter_vars;
  const size_t n = sum_leaves.size();
  auto [k_outer, k_rest] = sum.split(sum_leaves[n - 1], tiling.tile_k());
  auto [k_tile, k_16] = sum.split(k_rest, kTile);
  auto [row_tile, row_16] = sum.split(sum_leaves[n - 3], kTile);
  auto [column_tile, column_16] = sum.split(sum_leaves[n - 2], kTile);
  sum.reorder({k_outer, k_tile, row_tile, column_tile, row_16, column_16, k_16});
  sum.tensorize(row_16, FragmentProduct(operand_type));
  for (const IterVar& loop : {k_tile, row_tile, column_tile}) sum.unroll(loop);

  // The fragments of a step of 16, from the shared tiles.
  te::Stage a_load = s[a_fragment];
  a_load.compute_at(sum, k_tile);
  {
    const Array<IterVar> leaves = a_load->leaf_iter_vars;
    auto [tile, row_in_tile] = a_load.split(leaves[leaves.size() - 2], kTile);
    a_load.reorder({tile, row_in_tile, leaves.back()});
    a_load.tensorize(row_in_tile, FragmentLoad(operand_type, tir::builtin::kMatrixA));
    a_load.unroll(tile);
  }
  te::Stage b_load = s[b_fragment];
  b_load.compute_at(sum, k_tile);
  {
    const Array<IterVar> leaves = b_load->leaf_iter_vars;
    const IterVar depth_leaf = leaves[leaves.size() - 2];
    auto [tile, column_in_tile] = b_load.split(leaves.back(), kTile);
    b_load.reorder({tile, depth_leaf, column_in_tile});
    b_load.tensorize(depth_leaf, FragmentLoad(operand_type, tir::builtin::kMatrixB));
    b_load.unroll(tile);
  }

  // The shared tiles of a step of tile_k, copied by all the block's threads.
  const std::pair<te::Tensor, int64_t> tiles[] = {{a_shared, tiling.tile_k()},
                                                  {b_shared, tiling.block_columns()}};
  for (const auto& [tile, row_length] : tiles) {
    te::Stage copy = s[tile];
    copy.compute_at(sum, k_outer);
    copy.storage_align(AxisFromEnd(copy->op, 2), row_length, kOperandPad);
    const Array<IterVar> leaves = copy->leaf_iter_vars;
    IterVar element = leaves[0];
    for (size_t d = 1; d < leaves.size(); ++d) element = copy.fuse(element, leaves[d]);
    SpreadOverThreads(copy, element, tiling);
  }
  return s;
}

}  // namespace loom::topi::gpu
