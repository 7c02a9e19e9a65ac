// The shared-memory matmul schedule of GPU targets (loom/topi/gpu/matmul.h).
#include "loom/topi/gpu/matmul.h"

#include <tuple>

#include "loom/support/error.h"
#include "topi/gpu/shared_tiling.h"
#include "topi/topi_util.h"

namespace loom::topi::gpu {

namespace shared_tiling {

void CheckTiling(const MatmulTiling& tiling, const std::string& schedule) {
  LOOM_CHECK_USER(tiling.threads_y > 0 && tiling.threads_x > 0 && tiling.rows_per_thread > 0 &&
                  tiling.cols_per_thread > 0 && tiling.tile_k > 0)
      << schedule << ": every tiling factor must be positive";
  LOOM_CHECK_USER(tiling.vector_width == 1 || tiling.vector_width == 2 || tiling.vector_width == 4)
      << schedule << ": vector_width is " << tiling.vector_width
      << "; a GPU thread loads 1, 2 or 4 elements at once";
}

namespace {

// Whether each thread's columns (contiguous parts) are accumulated and stored vector_width at
// a time.
bool VectorizesColumns(const MatmulTiling& tiling) {
  return tiling.vector_width > 1 && !tiling.strided &&
         tiling.cols_per_thread % tiling.vector_width == 0;
}

}  // namespace

void TileThroughSharedMemory(te::Stage output, const std::vector<IterVar>& batch,
                             const IterVar& rows, const IterVar& columns, te::Stage local,
                             const IterVar& reduction, const std::vector<te::Stage>& tiles,
                             const IterVar& row_axis, const MatmulTiling& tiling,
                             bool columns_in_one_tile) {
  auto [block_y, in_block_y] = output.split(rows, tiling.threads_y * tiling.rows_per_thread);
  IterVar block_x, in_block_x = columns;
  if (!columns_in_one_tile) {
    std::tie(block_x, in_block_x) =
        output.split(columns, tiling.threads_x * tiling.cols_per_thread);
  }
  IterVar thread_y, thread_x;
  Array<IterVar> order;
  if (tiling.strided) {
    // Rows and columns strided by the threads' count: the strides are virtual threads, so
    // that bound inference gives each its own accumulator (it would cover a strided part of
    // one thread with its whole span).
    auto [vthread_y, inner_y] = output.split(in_block_y, tiling.threads_y);
    auto [vthread_x, inner_x] = output.split(in_block_x, tiling.threads_x);
    thread_y = inner_y;
    thread_x = inner_x;
    order = {block_y, vthread_y, vthread_x, thread_y, thread_x};
    output.bind(vthread_y, te::thread_axis("vthread"));
    output.bind(vthread_x, te::thread_axis("vthread"));
  } else {
    // A contiguous rows_per_thread x cols_per_thread part: one compact array.
    auto [outer_y, row] = output.split(in_block_y, tiling.rows_per_thread);
    auto [outer_x, column] = output.split(in_block_x, tiling.cols_per_thread);
    thread_y = outer_y;
    thread_x = outer_x;
    order = {block_y, thread_y, thread_x, row, column};
    if (VectorizesColumns(tiling)) {
      auto [column_chunk, column_lane] = output.split(column, tiling.vector_width);
      order.back() = column_chunk;
      order.push_back(column_lane);
      output.vectorize(column_lane);
    }
  }
  if (block_x.defined()) order.insert(order.begin() + 1, block_x);
  order.insert(order.begin(), batch.begin(), batch.end());
  output.reorder(order);
  if (!batch.empty()) {
    IterVar fused = batch[0];
    for (size_t d = 1; d < batch.size(); ++d) fused = output.fuse(fused, batch[d]);
    output.bind(fused, te::thread_axis("blockIdx.z"));
  }
  output.bind(block_y, te::thread_axis("blockIdx.y"));
  if (block_x.defined()) output.bind(block_x, te::thread_axis("blockIdx.x"));
  output.bind(thread_y, te::thread_axis("threadIdx.y"));
  output.bind(thread_x, te::thread_axis("threadIdx.x"));

  // The thread's accumulators, in registers, over the whole reduction.
  local.compute_at(output, thread_x);
  const Array<IterVar> local_leaves = local->leaf_iter_vars;
  auto [k_outer, k_inner] = local.split(reduction, tiling.tile_k);
  Array<IterVar> local_order{k_outer, k_inner};
  for (bool data : {false, true}) {
    for (const IterVar& leaf : local_leaves) {
      if (leaf.same_as(reduction) || (leaf->iter_type == IterVarType::kDataPar) != data) continue;
      local_order.push_back(leaf);
    }
  }
  local.reorder(local_order);
  if (VectorizesColumns(tiling)) {
    auto [column_chunk, column_lane] = local.split(local_order.back(), tiling.vector_width);
    local.vectorize(column_lane);
  }

  // A row of tile_k elements padded to tile_k + 1.
  if (tiling.pad_rows && tiling.tile_k > 1) {
    te::Stage rows_tile = tiles[0];
    rows_tile.storage_align(row_axis, tiling.tile_k, 1);
  }
  // Each step's tiles, copied by all the block's threads, neighbouring threads neighbouring
  // elements.
  const int threads = tiling.threads_y * tiling.threads_x;
  for (te::Stage copy : tiles) {
    copy.compute_at(local, k_outer);
    IterVar element = copy->leaf_iter_vars[0];
    for (size_t d = 1, n = copy->leaf_iter_vars.size(); d < n; ++d) {
      element = copy.fuse(element, copy->leaf_iter_vars[1]);
    }
    if (tiling.vector_width > 1) {
      auto [chunk, lane] = copy.split(element, tiling.vector_width);
      copy.vectorize(lane);
      element = chunk;
    }
    auto [step, by_thread] = copy.split(element, threads);
    auto [copy_y, copy_x] = copy.split(by_thread, tiling.threads_x);
    copy.bind(copy_y, te::thread_axis("threadIdx.y"));
    copy.bind(copy_x, te::thread_axis("threadIdx.x"));
    if (tiling.double_buffer) copy.double_buffer();
  }
}

}  // namespace shared_tiling

te::Schedule schedule_matmul_shared(const te::Tensor& out, const MatmulTiling& tiling) {
  const std::string schedule = "schedule_matmul_shared";
  shared_tiling::CheckTiling(tiling, schedule);
  te::Operation product = detail::FindAnchor(
      out, [](const te::Operation& op) { return op->tag == "matmul"; }, schedule,
      "the output of matmul");
  detail::CheckEpilogueKeepsShape(out, product, schedule);
  const Array<te::Tensor> operands = product->InputTensors();
  LOOM_CHECK_USER(operands.size() == 2 && out.ndim() >= 2)
      << schedule << ": '" << product->name << "' reads " << operands.size() << " tensors into "
      << out.ndim() << " dimensions; a matrix product reads two into at "
      << "least two";
  te::Schedule s = te::create_schedule({out.op()});
  detail::InlineInjective(s, {out.op()});
  te::Tensor a_shared = s.cache_read(operands[0], "shared", {product});
  te::Tensor b_shared = s.cache_read(operands[1], "shared", {product});
  // The products accumulate in registers: the product itself when an epilogue follows, else
  // a cache of it.
  te::Tensor accumulators = detail::RegisterTile(s, out, product);
  te::Stage output = s[out];
  const Array<IterVar> leaves = output->leaf_iter_vars;
  const size_t batch_dims = leaves.size() - 2;
  const Array<IterVar> local_leaves = s[accumulators]->leaf_iter_vars;
  shared_tiling::TileThroughSharedMemory(
      output, std::vector<IterVar>(leaves.begin(), leaves.begin() + batch_dims), leaves[batch_dims],
      leaves[batch_dims + 1], s[accumulators], local_leaves[local_leaves.size() - 1],
      {s[a_shared], s[b_shared]},
      static_cast<const te::ComputeOpNode*>(a_shared.op().get())->axis[a_shared.ndim() - 2],
      tiling);
  return s;
}

}  // namespace loom::topi::gpu
