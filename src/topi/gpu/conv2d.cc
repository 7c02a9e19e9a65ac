// Direct conv2d on GPUs (loom/topi/gpu/conv2d.h).
#include "loom/topi/gpu/conv2d.h"

#include "loom/support/error.h"
#include "topi/topi_util.h"

namespace loom::topi::gpu {

te::Schedule schedule_conv2d_nchw_direct(const te::Tensor& out, int threads,
                                         int channels_per_thread) {
  const std::string schedule = "schedule_conv2d_nchw_direct";
  LOOM_CHECK_USER(threads > 0 && channels_per_thread > 0)
      << schedule << ": threads and channels_per_thread must be positive";
  te::Operation conv = detail::FindAnchor(
      out, [](const te::Operation& op) { return op->tag == "conv2d_nchw"; }, schedule,
      "the output of conv2d_nchw");
  detail::CheckEpilogueKeepsShape(out, conv, schedule);
  te::Schedule s = te::create_schedule({out.op()});
  detail::InlineInjective(s, {out.op()});
  // The products accumulate in registers: the convolution itself when an epilogue follows,
  // else a cache of it.
  te::Tensor accumulators = out.op() == conv ? s.cache_write(out, "local") : te::Tensor(conv, 0);
  if (out.op() != conv) s[accumulators].set_scope("local");

  te::Stage output = s[out];
  const IterVar n = output->leaf_iter_vars[0], k = output->leaf_iter_vars[1];
  const IterVar p = output->leaf_iter_vars[2], q = output->leaf_iter_vars[3];
  auto [channel_group, channel] = output.split(k, channels_per_thread);
  IterVar pixel = output.fuse(p, q);
  auto [pixel_block, pixel_thread] = output.split(pixel, threads);
  output.reorder({n, channel_group, pixel_block, pixel_thread, channel});
  IterVar image_channels = output.fuse(n, channel_group);
  // Images x channel groups can be many (CUDA allows 65535 blocks along y only).
  output.bind(image_channels, te::thread_axis("blockIdx.x"));
  output.bind(pixel_block, te::thread_axis("blockIdx.y"));
  output.bind(pixel_thread, te::thread_axis("threadIdx.x"));

  // Each input element loaded once per reduction step, for all the thread's channels.
  te::Stage local = s[accumulators];
  local.compute_at(output, pixel_thread);
  Array<IterVar> order;
  const Array<IterVar> leaves = local->leaf_iter_vars;
  for (size_t i = 4; i < leaves.size(); ++i) order.push_back(leaves[i]);  // rc, rr, rs
  for (size_t i = 0; i < 4; ++i) order.push_back(leaves[i]);              // n, k, p, q
  local.reorder(order);
  return s;
}

}  // namespace loom::topi::gpu
