// The shared-memory matmul schedule of GPU targets (loom/topi/gpu/matmul.h).
#include "loom/topi/gpu/matmul.h"

#include "loom/support/error.h"

namespace loom::topi::gpu {

void ScheduleSharedMatmul(te::Schedule& s, const te::Tensor& c, const te::Tensor& a,
                          const te::Tensor& b, const MatmulTiling& tiling) {
  LOOM_CHECK_USER(tiling.threads_y > 0 && tiling.threads_x > 0 && tiling.rows_per_thread > 0 &&
                  tiling.cols_per_thread > 0 && tiling.tile_k > 0)
      << "ScheduleSharedMatmul: every tiling factor must be positive";
  te::Tensor a_shared = s.cache_read(a, "shared", {c.op()});
  te::Tensor b_shared = s.cache_read(b, "shared", {c.op()});
  te::Tensor local = s.cache_write(c, "local");
  LOOM_CHECK_USER(s[c]->leaf_iter_vars.size() == 2)
      << "ScheduleSharedMatmul: '" << c.op()->name << "' has "
      << s[c]->leaf_iter_vars.size() << " loops; a matmul's output has two (rows, columns) after its reduction moves to the accumulator";

  const IterVar rows = s[c]->leaf_iter_vars[0], columns = s[c]->leaf_iter_vars[1];
  auto [block_y, in_block_y] = s[c].split(rows, tiling.threads_y * tiling.rows_per_thread);
  auto [block_x, in_block_x] = s[c].split(columns, tiling.threads_x * tiling.cols_per_thread);
  IterVar thread_y, thread_x;
  if (tiling.strided) {
    // Rows and columns strided by the threads' count: the strides are virtual threads, so
    // that bound inference gives each its own accumulator (it would cover a strided part of
    // one thread with its whole span).
    auto [vthread_y, inner_y] = s[c].split(in_block_y, tiling.threads_y);
    auto [vthread_x, inner_x] = s[c].split(in_block_x, tiling.threads_x);
    thread_y = inner_y;
    thread_x = inner_x;
    s[c].reorder({block_y, block_x, vthread_y, vthread_x, thread_y, thread_x});
    s[c].bind(vthread_y, te::thread_axis("vthread"));
    s[c].bind(vthread_x, te::thread_axis("vthread"));
  } else {
    // A contiguous rows_per_thread x cols_per_thread part: one compact array.
    auto [outer_y, row] = s[c].split(in_block_y, tiling.rows_per_thread);
    auto [outer_x, column] = s[c].split(in_block_x, tiling.cols_per_thread);
    thread_y = outer_y;
    thread_x = outer_x;
    s[c].reorder({block_y, block_x, thread_y, thread_x, row, column});
  }
  s[c].bind(block_y, te::thread_axis("blockIdx.y"));
  s[c].bind(block_x, te::thread_axis("blockIdx.x"));
  s[c].bind(thread_y, te::thread_axis("threadIdx.y"));
  s[c].bind(thread_x, te::thread_axis("threadIdx.x"));

  // The thread's accumulators, in registers, over the whole reduction.
  s[local].compute_at(s[c], thread_x);
  const IterVar local_row = s[local]->leaf_iter_vars[0];
  const IterVar local_column = s[local]->leaf_iter_vars[1];
  const IterVar reduction = s[local]->leaf_iter_vars[2];
  auto [k_outer, k_inner] = s[local].split(reduction, tiling.tile_k);
  s[local].reorder({k_outer, k_inner, local_row, local_column});

  // Each step's tiles, copied by all the block's threads, neighbouring threads neighbouring
  // elements.
  const int threads = tiling.threads_y * tiling.threads_x;
  for (const te::Tensor& tile : {a_shared, b_shared}) {
    s[tile].compute_at(s[local], k_outer);
    const IterVar tile_row = s[tile]->leaf_iter_vars[0];
    const IterVar tile_column = s[tile]->leaf_iter_vars[1];
    IterVar element = s[tile].fuse(tile_row, tile_column);
    auto [step, by_thread] = s[tile].split(element, threads);
    auto [copy_y, copy_x] = s[tile].split(by_thread, tiling.threads_x);
    s[tile].bind(copy_y, te::thread_axis("threadIdx.y"));
    s[tile].bind(copy_x, te::thread_axis("threadIdx.x"));
  }
}

}  // namespace loom::topi::gpu
