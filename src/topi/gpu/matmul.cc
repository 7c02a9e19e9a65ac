// The shared-memory matmul schedule of GPU targets (loom/topi/gpu/matmul.h).
#include "loom/topi/gpu/matmul.h"

#include "loom/support/error.h"
#include "topi/topi_util.h"

namespace loom::topi::gpu {

te::Schedule schedule_matmul_shared(const te::Tensor& out, const MatmulTiling& tiling) {
  const std::string schedule = "schedule_matmul_shared";
  LOOM_CHECK_USER(tiling.threads_y > 0 && tiling.threads_x > 0 && tiling.rows_per_thread > 0 &&
                  tiling.cols_per_thread > 0 && tiling.tile_k > 0)
      << schedule << ": every tiling factor must be positive";
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
  te::Tensor accumulators =
      out.op() == product ? s.cache_write(out, "local") : te::Tensor(product, 0);
  if (out.op() != product) s[accumulators].set_scope("local");

  te::Stage output = s[out];
  const size_t batch_dims = output->leaf_iter_vars.size() - 2;
  const IterVar rows = output->leaf_iter_vars[batch_dims];
  const IterVar columns = output->leaf_iter_vars[batch_dims + 1];
  auto [block_y, in_block_y] = output.split(rows, tiling.threads_y * tiling.rows_per_thread);
  auto [block_x, in_block_x] = output.split(columns, tiling.threads_x * tiling.cols_per_thread);
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
    order = {block_y, block_x, vthread_y, vthread_x, thread_y, thread_x};
    output.bind(vthread_y, te::thread_axis("vthread"));
    output.bind(vthread_x, te::thread_axis("vthread"));
  } else {
    // A contiguous rows_per_thread x cols_per_thread part: one compact array.
    auto [outer_y, row] = output.split(in_block_y, tiling.rows_per_thread);
    auto [outer_x, column] = output.split(in_block_x, tiling.cols_per_thread);
    thread_y = outer_y;
    thread_x = outer_x;
    order = {block_y, block_x, thread_y, thread_x, row, column};
  }
  output.reorder(order);
  if (batch_dims > 0) {
    IterVar batch = output->leaf_iter_vars[0];
    for (size_t d = 1; d < batch_dims; ++d) batch = output.fuse(batch, output->leaf_iter_vars[1]);
    output.bind(batch, te::thread_axis("blockIdx.z"));
  }
  output.bind(block_y, te::thread_axis("blockIdx.y"));
  output.bind(block_x, te::thread_axis("blockIdx.x"));
  output.bind(thread_y, te::thread_axis("threadIdx.y"));
  output.bind(thread_x, te::thread_axis("threadIdx.x"));

  // The thread's accumulators, in registers, over the whole reduction.
  te::Stage local = s[accumulators];
  local.compute_at(output, thread_x);
  const Array<IterVar> local_leaves = local->leaf_iter_vars;
  auto [k_outer, k_inner] = local.split(local_leaves[local_leaves.size() - 1], tiling.tile_k);
  Array<IterVar> local_order{k_outer, k_inner};
  for (size_t i = 0; i + 1 < local_leaves.size(); ++i) local_order.push_back(local_leaves[i]);
  local.reorder(local_order);

  // Each step's tiles, copied by all the block's threads, neighbouring threads neighbouring
  // elements.
  const int threads = tiling.threads_y * tiling.threads_x;
  for (const te::Tensor& tile : {a_shared, b_shared}) {
    te::Stage copy = s[tile];
    copy.compute_at(local, k_outer);
    IterVar element = copy->leaf_iter_vars[0];
    for (size_t d = 1, n = copy->leaf_iter_vars.size(); d < n; ++d) {
      element = copy.fuse(element, copy->leaf_iter_vars[1]);
    }
    auto [step, by_thread] = copy.split(element, threads);
    auto [copy_y, copy_x] = copy.split(by_thread, tiling.threads_x);
    copy.bind(copy_y, te::thread_axis("threadIdx.y"));
    copy.bind(copy_x, te::thread_axis("threadIdx.x"));
  }
  return s;
}

}  // namespace loom::topi::gpu
