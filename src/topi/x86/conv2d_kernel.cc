// The conv2d strategy for x86: which algorithm and which tiling a workload gets by default,
// and the four functions (layout packing, the convolution, unpacking) it compiles to.
#include <algorithm>
#include <sstream>
#include <string>

#include "loom/te/lower.h"
#include "loom/topi/schedule.h"
#include "loom/topi/transform.h"
#include "loom/topi/x86/conv2d.h"
#include "loom/topi/x86/conv2d_winograd.h"
#include "loom/topi/x86/tensor_intrinsics.h"
#include "topi/topi_util.h"

namespace loom::topi::x86 {

int64_t Conv2DWorkload::out_h() const {
  return detail::CheckedConv2DOutputSize("Conv2DWorkload(" + str() + ")", h, w, r, s, attrs).p;
}

int64_t Conv2DWorkload::out_w() const {
  return detail::CheckedConv2DOutputSize("Conv2DWorkload(" + str() + ")", h, w, r, s, attrs).q;
}

std::string Conv2DWorkload::str() const {
  std::ostringstream text;
  text << "n=" << n << " c=" << c << " h=" << h << " w=" << w << " k=" << k << " r=" << r
       << " s=" << s << " stride=" << attrs.strides[0] << " pad=" << attrs.pads[0]
       << " groups=" << attrs.groups;
  return text.str();
}

namespace {

using detail::LargestDivisorUpTo;

// AVX-512's zmm registers.
constexpr int64_t kVectorRegisters = 32;

}  // namespace

Conv2DNCHWcConfig DepthwiseConfigWithBlock(const Conv2DWorkload& wl, Conv2DNCHWcConfig config,
                                           int64_t block) {
  LOOM_CHECK_USER(wl.depthwise() && block > 0 && wl.c % block == 0)
      << "DepthwiseConfigWithBlock: " << wl.str() << " is not a depthwise conv whose channels "
      << "split into blocks of " << block;
  config.ic_bn = config.oc_bn = block;
  const int64_t vectors = detail::CeilDiv(block, detail::kAvx512Lanes);
  const int64_t columns = std::max<int64_t>(1, detail::kMaxTileRegisters / vectors);
  config.reg_w = LargestDivisorUpTo(wl.out_w(), std::min(config.reg_w, columns));
  return config;
}

Conv2DNCHWcConfig DefaultConv2DNCHWcConfig(const Conv2DWorkload& wl) {
  Conv2DNCHWcConfig config;
  const int64_t p = wl.out_h(), q = wl.out_w();
  if (wl.depthwise()) {
    config.ic_bn = config.oc_bn = LargestDivisorUpTo(wl.c, detail::kAvx512Lanes);
    config.reg_w = LargestDivisorUpTo(q, 16);
    // Blocks of up to 4 rows, at least 8 blocks where there are 16 rows or more: on the
    // 112x112 and 56x56 layers, 4 rows per task measured 10-20% faster on 2 threads than 1,
    // 2 or 7 to 14 (one row per task: more tasks that each stream through every channel
    // block), and as fast on 1 thread (2026-11-25).
    config.row_tiles_per_task = LargestDivisorUpTo(p, std::clamp<int64_t>(p / 8, 1, 4));
    return config;
  }
  // Blocks within a group's channels (all of them when groups = 1).
  config.ic_bn = LargestDivisorUpTo(wl.c / wl.attrs.groups, detail::kAvx512Lanes);
  config.oc_bn = LargestDivisorUpTo(wl.k / wl.attrs.groups, detail::kAvx512Lanes);
  if (wl.attrs.groups > 1) {
    // Grouped: a tile of one channel block. Channel blocks of different groups read
    // different input channels, so a tile across them takes a broadcast per block and
    // position, one per multiply-add. A row of up to 14 columns, the kernel's columns
    // unrolled: RegNetY-400MF's and ResNeXt-50's 4- and 8-channel groups, tuned on a Zen 4
    // (2 threads, 2026-11-30), ran fastest with 14 to 16 accumulators of one block, 1.9-4x
    // the default's tile of two blocks by 14 columns (RegNetY's 104 channels, 28x28: 49 ->
    // 176 GFLOP/s with 4x4; 56x56 to 28x28, 52 -> 98).
    constexpr int64_t kGroupedTileColumns = 14;
    config.reg_w = LargestDivisorUpTo(q, kGroupedTileColumns);
    config.reg_h = LargestDivisorUpTo(p, std::max<int64_t>(1, kGroupedTileColumns / config.reg_w));
    config.unroll_kw = true;
    return config;
  }
  const int64_t chunks = wl.k / config.oc_bn;
  // Enough independent accumulators to hide the FMA latency (two pipes, four cycles: 8 at
  // least), as many as the registers hold beside a weight vector per channel block and the
  // broadcast input value: one register more and LLVM spills and shuffles the tile (seen
  // with 4 blocks x 7 columns). Ties go to two channel blocks per tile, which measured best
  // where 14 columns fit (56x56 and 28x28: 159 against 145 GFLOP/s for one block of 28
  // columns, 1 thread, 2026-11-24).
  Conv2DNCHWcConfig best = config;
  int64_t best_accumulators = 0;
  for (int64_t oc_tile : {2, 3, 4, 1}) {
    if (chunks % oc_tile != 0) continue;
    const int64_t budget = kVectorRegisters - 2 - oc_tile;
    Conv2DNCHWcConfig candidate = config;
    candidate.oc_tile = oc_tile;
    candidate.reg_w = LargestDivisorUpTo(q, budget / oc_tile);
    candidate.reg_h = LargestDivisorUpTo(p, budget / (oc_tile * candidate.reg_w));
    int64_t accumulators = oc_tile * candidate.reg_h * candidate.reg_w;
    if (accumulators > best_accumulators) {
      best = candidate;
      best_accumulators = accumulators;
    }
  }
  config = best;
  return config;
}

Conv2DNCHWcConfig DefaultConv2DDotConfig(const Conv2DWorkload& wl, int depth) {
  constexpr int64_t kHalfLanes = kVnniLanes / 2;
  LOOM_CHECK_USER(depth > 0 && wl.attrs.groups == 1 && wl.c % depth == 0 &&
                  wl.k % kHalfLanes == 0)
      << "DefaultConv2DDotConfig(" << wl.str() << ", depth " << depth << "): the dot-product "
      << "kernels take groups = 1, channels in multiples of " << depth
      << " and filters in multiples of " << kHalfLanes << " (pad them)";
  // The register tiling of the float kernel: vpdpbusd and vdpbf16ps, like the FMA, add into
  // one vector of 16 accumulators from a broadcast input value and a vector of weights.
  Conv2DNCHWcConfig config = DefaultConv2DNCHWcConfig(wl);
  // Input blocks of whole groups (up to 16 channels); output blocks of 16, one instruction
  // each, or of 8 on 256-bit registers where the filters are no multiple of 16 (24: three
  // blocks, where padding to 32 would need a slice and layout conversions after).
  config.ic_bn = depth * LargestDivisorUpTo(wl.c / depth, 16 / depth);
  config.oc_bn = wl.k % kVnniLanes == 0 ? kVnniLanes : kHalfLanes;
  config.oc_tile = LargestDivisorUpTo(wl.k / config.oc_bn, config.oc_tile);
  return config;
}

namespace {

std::string Blocked(int64_t block) { return "NCHW" + std::to_string(block) + "c"; }

PrimFunc LowerInjective(const te::Tensor& in, const te::Tensor& out, const std::string& name) {
  return te::lower(schedule_injective({out}), {in, out}, name);
}

}  // namespace

Conv2DChoice ChooseConv2DKernel(const Conv2DWorkload& wl,
                                const std::optional<Conv2DNCHWcConfig>& config) {
  const std::string op = "ChooseConv2DKernel(" + wl.str() + ")";
  LOOM_CHECK_USER(wl.n > 0 && wl.c > 0 && wl.h > 0 && wl.w > 0 && wl.k > 0 && wl.r > 0 &&
                  wl.s > 0)
      << op << ": every size must be positive";
  // Checked up front: the default tilings divide by the output size.
  detail::CheckedConv2DOutputSize(op, wl.h, wl.w, wl.r, wl.s, wl.attrs);
  const int64_t groups = wl.attrs.groups;
  LOOM_CHECK_USER(groups >= 1 && wl.c % groups == 0 && wl.k % groups == 0)
      << op << ": groups must divide the input and output channels";
  Conv2DChoice choice;
  const bool winograd = !wl.depthwise() && !config && PreferWinograd(wl);
  choice.algorithm = wl.depthwise() ? "depthwise" : winograd ? "winograd" : "direct";
  choice.config = config ? *config : DefaultConv2DNCHWcConfig(wl);
  if (winograd) choice.winograd = DefaultWinogradConfig(wl);
  const Conv2DNCHWcConfig& cfg = choice.config;
  // A grouped (not depthwise) convolution's blocks lie within its groups.
  const int64_t block_groups = wl.depthwise() ? 1 : groups;
  LOOM_CHECK_USER(cfg.ic_bn > 0 && (wl.c / block_groups) % cfg.ic_bn == 0 && cfg.oc_bn > 0 &&
                  (wl.k / block_groups) % cfg.oc_bn == 0 &&
                  (!wl.depthwise() || cfg.ic_bn == cfg.oc_bn))
      << op << ": " << cfg.str() << ": ic_bn must divide " << wl.c / block_groups
      << " and oc_bn " << wl.k / block_groups
      << (wl.depthwise() ? " (and be equal, depthwise)"
                         : block_groups > 1 ? " (the channels of one group)" : "");
  return choice;
}

Conv2DKernel MakeConv2DKernel(const Conv2DWorkload& wl,
                              const std::optional<Conv2DNCHWcConfig>& config) {
  return MakeConv2DKernel(wl, ChooseConv2DKernel(wl, config));
}

Conv2DKernel MakeConv2DKernel(const Conv2DWorkload& wl, const Conv2DChoice& choice) {
  Conv2DKernel kernel;
  static_cast<Conv2DChoice&>(kernel) = choice;
  const bool winograd = kernel.algorithm == "winograd";
  const Conv2DNCHWcConfig& cfg = kernel.config;

  const DataType f32 = DataType::Float(32);
  auto extents = [](std::initializer_list<int64_t> shape) {
    Array<PrimExpr> out;
    for (int64_t extent : shape) out.push_back(int(extent));
    return out;
  };
  te::Tensor data = te::placeholder(extents({wl.n, wl.c, wl.h, wl.w}), f32, "data");
  te::Tensor weight =
      te::placeholder(extents({wl.k, wl.c / wl.attrs.groups, wl.r, wl.s}), f32, "weight");
  te::Tensor packed_data = layout_transform(data, "NCHW", Blocked(cfg.ic_bn));
  te::Tensor packed_weight =
      winograd ? winograd_weight_transform(weight)
               : pack_conv2d_weight(weight, wl.depthwise() ? 1 : cfg.ic_bn, cfg.oc_bn);
  kernel.module.Add("pack_data", LowerInjective(data, packed_data, "pack_data"));
  kernel.module.Add("pack_weight", LowerInjective(weight, packed_weight, "pack_weight"));

  te::Tensor conv_data = te::placeholder(packed_data.shape(), f32, "packed_data");
  te::Tensor conv_weight = te::placeholder(packed_weight.shape(), f32, "packed_weight");
  te::Tensor out;
  te::Schedule schedule;
  if (winograd) {
    out = conv2d_nchwc_winograd(conv_data, conv_weight, wl.attrs, cfg.oc_bn);
    schedule = schedule_conv2d_nchwc_winograd(out, kernel.winograd);
  } else {
    out = wl.depthwise() ? depthwise_conv2d_nchwc(conv_data, conv_weight, wl.attrs)
                         : conv2d_nchwc(conv_data, conv_weight, wl.attrs);
    schedule = schedule_conv2d_nchwc(out, cfg);
  }
  kernel.module.Add("conv", te::lower(schedule, {conv_data, conv_weight, out}, "conv"));

  te::Tensor blocked_out = te::placeholder(out.shape(), f32, "blocked_output");
  te::Tensor result = layout_transform(blocked_out, Blocked(cfg.oc_bn), "NCHW");
  kernel.module.Add("unpack_output", LowerInjective(blocked_out, result, "unpack_output"));
  return kernel;
}

}  // namespace loom::topi::x86
