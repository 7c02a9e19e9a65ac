// conv2d on GPUs: direct, tiled as an implicit matrix product, and depthwise
// (loom/topi/gpu/conv2d.h).
#include "loom/topi/gpu/conv2d.h"

#include <vector>

#include "loom/support/error.h"
#include "topi/gpu/shared_tiling.h"
#include "topi/topi_util.h"

namespace loom::topi::gpu {

namespace {

// What each conv2d schedule starts from: the convolution under `out` (checked: an epilogue
// keeps its shape), a schedule of `out` with the injective stages inlined, the operands
// (data, weight) and, for `shared` operands (their indices, in order), their caches in shared
// memory; the products accumulate in registers: in the convolution itself when an epilogue
// follows, else in a cache of it. Then the output's loops and its rows' constant length.
struct ConvSchedule {
  te::Operation conv;
  Array<te::Tensor> operands;
  te::Schedule s;
  std::vector<te::Tensor> shared;
  te::Tensor accumulators;
  te::Stage output;
  IterVar n, k, p, q;

  ConvSchedule(const te::Tensor& out, const std::string& schedule,
               const std::vector<int>& shared_operands)
      : conv(detail::FindAnchor(
            out, [](const te::Operation& op) { return op->tag == "conv2d_nchw"; }, schedule,
            "the output of conv2d_nchw")),
        operands(conv->InputTensors()),
        s(te::create_schedule({out.op()})) {
    detail::CheckEpilogueKeepsShape(out, conv, schedule);
    detail::InlineInjective(s, {out.op()});
    for (int i : shared_operands) shared.push_back(s.cache_read(operands[i], "shared", {conv}));
    accumulators = detail::RegisterTile(s, out, conv);
    output = s[out];
    n = output->leaf_iter_vars[0];
    k = output->leaf_iter_vars[1];
    p = output->leaf_iter_vars[2];
    q = output->leaf_iter_vars[3];
  }

  int64_t RowLength(const std::string& schedule) const {
    int64_t length = 0;
    LOOM_CHECK_USER(IsConstInt(q->dom->extent, &length))
        << schedule << ": the output rows of '" << conv->name << "' have no constant length";
    return length;
  }
};

}  // namespace

te::Schedule schedule_conv2d_nchw_direct(const te::Tensor& out, int threads,
                                         int channels_per_thread) {
  const std::string schedule = "schedule_conv2d_nchw_direct";
  LOOM_CHECK_USER(threads > 0 && channels_per_thread > 0)
      << schedule << ": threads and channels_per_thread must be positive";
  ConvSchedule c(out, schedule, {});
  te::Stage output = c.output;
  const IterVar n = c.n;
  auto [channel_group, channel] = output.split(c.k, channels_per_thread);
  IterVar pixel = output.fuse(c.p, c.q);
  auto [pixel_block, pixel_thread] = output.split(pixel, threads);
  output.reorder({n, channel_group, pixel_block, pixel_thread, channel});
  IterVar image_channels = output.fuse(n, channel_group);
  // Images x channel groups can be many (CUDA allows 65535 blocks along y only).
  output.bind(image_channels, te::thread_axis("blockIdx.x"));
  output.bind(pixel_block, te::thread_axis("blockIdx.y"));
  output.bind(pixel_thread, te::thread_axis("threadIdx.x"));

  // Each input element loaded once per reduction step, for all the thread's channels.
  te::Stage local = c.s[c.accumulators];
  local.compute_at(output, pixel_thread);
  Array<IterVar> order;
  const Array<IterVar> leaves = local->leaf_iter_vars;
  for (size_t i = 4; i < leaves.size(); ++i) order.push_back(leaves[i]);  // rc, rr, rs
  for (size_t i = 0; i < 4; ++i) order.push_back(leaves[i]);              // n, k, p, q
  local.reorder(order);
  return c.s;
}

te::Schedule schedule_conv2d_nchw_tiled(const te::Tensor& out, const MatmulTiling& tiling) {
  const std::string schedule = "schedule_conv2d_nchw_tiled";
  shared_tiling::CheckTiling(tiling, schedule);
  LOOM_CHECK_USER(tiling.strided)
      << schedule << ": the tiling must be strided: a thread's contiguous pixels may straddle "
      << "two rows of the image, a region of accumulators of no fixed size";
  // The product of the weight (output channels x input channels and their windows) and the
  // data's windows (input channels and windows x pixels), per image; each reduction step's
  // tiles are tile_k input channels of the weight and of the data, whole windows.
  ConvSchedule c(out, schedule, {1, 0});
  const auto* data_channels = c.operands[0].shape()[1].as<IntImmNode>();
  const auto* weight_channels = c.operands[1].shape()[1].as<IntImmNode>();
  LOOM_CHECK_USER(data_channels != nullptr && weight_channels != nullptr &&
                  data_channels->value == weight_channels->value)
      << schedule << ": '" << c.conv->name << "' is not a convolution of one group";
  // A block's pixels are whole image rows, so that the data each tile reads is a rectangle
  // of one size: as many rows as a tile's columns hold, fused, in one tile; or one row (longer
  // than a tile) in blocks of columns.
  te::Stage output = c.output;
  const int64_t row_length = c.RowLength(schedule);
  const int64_t tile_columns = int64_t{tiling.threads_x} * tiling.cols_per_thread;
  const int64_t rows_per_tile = tile_columns / row_length;
  IterVar row_group = c.p, pixels = c.q;
  if (rows_per_tile > 1) {
    auto [group, row] = output.split(c.p, static_cast<int>(rows_per_tile));
    row_group = group;
    pixels = output.fuse(row, c.q);
  }
  te::Stage local = c.s[c.accumulators];
  const IterVar input_channels =
      static_cast<const te::ComputeOpNode*>(local->op.get())->reduce_axis[0];
  const te::Tensor& weight_shared = c.shared[0];
  shared_tiling::TileThroughSharedMemory(
      output, {c.n, row_group}, c.k, pixels, local, input_channels,
      {c.s[weight_shared], c.s[c.shared[1]]},
      static_cast<const te::ComputeOpNode*>(weight_shared.op().get())->axis[0], tiling,
      /*columns_in_one_tile=*/row_length <= tile_columns);
  return c.s;
}

te::Schedule schedule_depthwise_conv2d_nchw_shared(const te::Tensor& out, int threads) {
  const std::string schedule = "schedule_depthwise_conv2d_nchw_shared";
  LOOM_CHECK_USER(threads > 0) << schedule << ": threads must be positive";
  ConvSchedule c(out, schedule, {0});
  const auto* channels_per_group = c.operands[1].shape()[1].as<IntImmNode>();
  LOOM_CHECK_USER(channels_per_group != nullptr && channels_per_group->value == 1)
      << schedule << ": '" << c.conv->name << "' is not a depthwise convolution (one input "
      << "channel per group)";
  // A block per image channel and part of the image: whole rows (as many as `threads` threads
  // hold, a thread per pixel) or, for rows longer than that, `threads` columns of one row; its
  // input rectangle (one channel, with the window's margins) fetched into shared memory
  // together, then each thread's window read from there.
  te::Stage output = c.output;
  const IterVar p = c.p, q = c.q;
  const int64_t row_length = c.RowLength(schedule);
  IterVar block, pixels;
  int64_t block_threads = threads;
  if (row_length <= threads) {
    const int64_t rows = threads / row_length;
    block = p;
    pixels = q;
    if (rows > 1) {
      auto [row_group, row] = output.split(p, static_cast<int>(rows));
      block = row_group;
      pixels = output.fuse(row, q);
    }
    block_threads = rows * row_length;
  } else {
    auto [column_block, column] = output.split(q, threads);
    block = output.fuse(p, column_block);
    pixels = column;
  }
  IterVar image_channels = output.fuse(c.n, c.k);
  output.bind(image_channels, te::thread_axis("blockIdx.x"));
  output.bind(block, te::thread_axis("blockIdx.y"));
  output.bind(pixels, te::thread_axis("threadIdx.x"));

  // Fetched inside the threads' loop, at the accumulators' first loop (their reader), by all
  // the block's threads: bound inference covers every thread's window there.
  te::Stage local = c.s[c.accumulators];
  local.compute_at(output, pixels);
  te::Stage copy = c.s[c.shared[0]];
  copy.compute_at(local, local->leaf_iter_vars[0]);
  IterVar element = copy->leaf_iter_vars[0];
  for (size_t d = 1, rank = copy->leaf_iter_vars.size(); d < rank; ++d) {
    element = copy.fuse(element, copy->leaf_iter_vars[1]);
  }
  auto [step, by_thread] = copy.split(element, static_cast<int>(block_threads));
  copy.bind(by_thread, te::thread_axis("threadIdx.x"));
  return c.s;
}

}  // namespace loom::topi::gpu
