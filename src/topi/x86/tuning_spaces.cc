// The tuning spaces of the x86 templates: every choice the conv2d (direct, grouped, depthwise,
// Winograd) and dense schedules leave open, as knobs with candidate values, and the constraints
// that keep each point schedulable. Each default (DefaultConv2DNCHWcConfig, DefaultWinogradConfig,
// DefaultDenseConfig) is a point of its space.
#include <algorithm>

#include "loom/topi/x86/conv2d.h"
#include "loom/topi/x86/conv2d_winograd.h"
#include "loom/topi/x86/dense.h"
#include "topi/topi_util.h"

namespace loom::topi::x86 {

namespace {

using detail::CeilDiv;
using detail::kAvx512Lanes;
using detail::kMaxTileRegisters;

// AVX-512's 32 zmm registers.
constexpr int64_t kVectorRegisters = 32;

// The last `count` values of an ascending list (the largest candidates).
std::vector<int64_t> Largest(std::vector<int64_t> values, size_t count) {
  if (values.size() > count) values.erase(values.begin(), values.end() - count);
  return values;
}

// `values` with `value` added (kept ascending) when absent: the default is always a point.
std::vector<int64_t> With(std::vector<int64_t> values, int64_t value) {
  if (std::find(values.begin(), values.end(), value) == values.end()) {
    values.insert(std::upper_bound(values.begin(), values.end(), value), value);
  }
  return values;
}

// Channel blocks a vector loop handles: under 16 (one vector of that many lanes) or whole 16-lane
// vectors; up to 64, the largest four.
std::vector<int64_t> ChannelBlocks(int64_t channels) {
  std::vector<int64_t> blocks;
  for (int64_t d : DivisorsUpTo(channels, 64)) {
    if (d <= kAvx512Lanes || d % kAvx512Lanes == 0) blocks.push_back(d);
  }
  return Largest(blocks, 4);
}

int64_t VectorsPerBlock(int64_t block) { return CeilDiv(block, kAvx512Lanes); }

constexpr int64_t kDirect = 0, kWinograd = 1;

}  // namespace

ConfigSpace Conv2DConfigSpace(const Conv2DWorkload& wl) {
  const Conv2DChoice fallback = ChooseConv2DKernel(wl);  // checks the workload
  const Conv2DNCHWcConfig& d = fallback.config;
  const int64_t p = wl.out_h(), q = wl.out_w();
  ConfigSpace space;
  if (wl.depthwise()) {
    space.AddKnob("ic_bn", KnobKind::kLayout, With(ChannelBlocks(wl.c), d.ic_bn));
    space.AddKnob("reg_w", KnobKind::kSplit, With(DivisorsUpTo(q, 28), d.reg_w));
    space.AddKnob("row_tiles_per_task", KnobKind::kSplit,
                  With(DivisorsUpTo(p, 8), d.row_tiles_per_task));
    space.AddConstraint("reg_w x the block's vectors fit the register tile", [](const Config& c) {
      return c["reg_w"] * VectorsPerBlock(c["ic_bn"]) <= kMaxTileRegisters;
    });
    return space;
  }
  const int64_t groups = wl.attrs.groups;
  const bool winograd_fits = PreferWinograd(wl);
  if (winograd_fits) space.AddKnob("algorithm", KnobKind::kChoice, {kDirect, kWinograd});
  space.AddKnob("ic_bn", KnobKind::kLayout, With(ChannelBlocks(wl.c / groups), d.ic_bn));
  space.AddKnob("oc_bn", KnobKind::kLayout, With(ChannelBlocks(wl.k / groups), d.oc_bn));
  space.AddKnob("oc_tile", KnobKind::kSplit, {1, 2, 3, 4});
  space.AddKnob("reg_h", KnobKind::kSplit, With(DivisorsUpTo(p, 8), d.reg_h));
  space.AddKnob("reg_w", KnobKind::kSplit, With(DivisorsUpTo(q, 28), d.reg_w));
  space.AddKnob("unroll_kw", KnobKind::kAnnotate,
                wl.s > 1 ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{0});
  auto is_winograd = [winograd_fits](const Config& c) {
    return winograd_fits && c["algorithm"] == kWinograd;
  };
  space.AddConstraint("oc_tile divides the output channel blocks",
                      [wl](const Config& c) { return (wl.k / c["oc_bn"]) % c["oc_tile"] == 0; });
  space.AddConstraint("the register tile fits the 32 vector registers", [](const Config& c) {
    const int64_t accumulators =
        c["oc_tile"] * c["reg_h"] * c["reg_w"] * VectorsPerBlock(c["oc_bn"]);
    return accumulators + c["oc_tile"] + 2 <= kVectorRegisters;
  });
  if (!winograd_fits) return space;

  const WinogradConfig w = DefaultWinogradConfig(wl);
  const bool can_fuse = wl.n == 1 && p % 4 == 0 && q % 4 == 0;
  space.AddKnob("fuse_tile_rows", KnobKind::kAnnotate,
                can_fuse ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{0});
  space.AddKnob("gemm_rows", KnobKind::kSplit, With({4, 6, 8, 12, 16, 24}, w.gemm_rows));
  std::vector<int64_t> columns;
  for (int64_t c : {16, 32, 64}) {
    if (wl.k % c == 0) columns.push_back(c);
  }
  space.AddKnob("gemm_columns", KnobKind::kSplit, columns);
  space.AddKnob("gemm_unroll", KnobKind::kSplit, DivisorsUpTo(wl.c, 4));
  // One algorithm's knobs stay at their first value while the other's is chosen, so that each
  // kernel is one point.
  space.AddConstraint("a direct point leaves the Winograd knobs first", [=](const Config& c) {
    return is_winograd(c) || (c["fuse_tile_rows"] == 0 && c["gemm_rows"] == 4 &&
                              c["gemm_columns"] == 16 && c["gemm_unroll"] == 1);
  });
  space.AddConstraint("a Winograd point leaves the register tiling first", [=](const Config& c) {
    return !is_winograd(c) ||
           (c["oc_tile"] == 1 && c["reg_h"] == 1 && c["reg_w"] == 1 && c["unroll_kw"] == 0);
  });
  space.AddConstraint("Winograd's output blocks are whole vectors", [=](const Config& c) {
    return !is_winograd(c) || c["oc_bn"] % kAvx512Lanes == 0;
  });
  space.AddConstraint("Winograd's GEMM tile fits the register tile", [=](const Config& c) {
    return !is_winograd(c) ||
           c["gemm_rows"] * (c["gemm_columns"] / kAvx512Lanes) <= kMaxTileRegisters;
  });
  return space;
}

Config Conv2DConfigOf(const Conv2DWorkload& wl, const Conv2DChoice& choice) {
  const Conv2DNCHWcConfig& d = choice.config;
  std::map<std::string, int64_t> values;
  if (wl.depthwise()) {
    values = {{"ic_bn", d.ic_bn}, {"reg_w", d.reg_w}, {"row_tiles_per_task", d.row_tiles_per_task}};
    return Config(values);
  }
  const bool winograd = choice.algorithm == "winograd";
  values = {{"ic_bn", d.ic_bn}, {"oc_bn", d.oc_bn}};
  if (winograd) {
    values.insert({{"oc_tile", 1}, {"reg_h", 1}, {"reg_w", 1}, {"unroll_kw", 0}});
  } else {
    values.insert({{"oc_tile", d.oc_tile},
                   {"reg_h", d.reg_h},
                   {"reg_w", d.reg_w},
                   {"unroll_kw", d.unroll_kw ? 1 : 0}});
  }
  if (PreferWinograd(wl)) {
    const WinogradConfig& w = choice.winograd;
    values["algorithm"] = winograd ? kWinograd : kDirect;
    if (winograd) {
      values.insert({{"fuse_tile_rows", w.fuse_tile_rows ? 1 : 0},
                     {"gemm_rows", w.gemm_rows},
                     {"gemm_columns", w.gemm_columns},
                     {"gemm_unroll", w.gemm_unroll}});
    } else {
      values.insert(
          {{"fuse_tile_rows", 0}, {"gemm_rows", 4}, {"gemm_columns", 16}, {"gemm_unroll", 1}});
    }
  }
  return Config(values);
}

Config DefaultConv2DConfig(const Conv2DWorkload& wl) {
  return Conv2DConfigOf(wl, ChooseConv2DKernel(wl));
}

Conv2DChoice Conv2DChoiceOf(const Conv2DWorkload& wl, const Config& config) {
  const ConfigSpace space = Conv2DConfigSpace(wl);
  space.IndexOf(config);  // every knob of this space, each a candidate
  std::string failed;
  LOOM_CHECK_USER(space.IsValid(config, &failed)) << "conv2d config {" << config.str() << "} for "
                                                  << wl.str() << " breaks a constraint: " << failed;
  Conv2DChoice choice;
  Conv2DNCHWcConfig& d = choice.config;
  d.ic_bn = config["ic_bn"];
  if (wl.depthwise()) {
    choice.algorithm = "depthwise";
    d.oc_bn = d.ic_bn;
    d.reg_w = config["reg_w"];
    d.row_tiles_per_task = config["row_tiles_per_task"];
    return choice;
  }
  d.oc_bn = config["oc_bn"];
  d.oc_tile = config["oc_tile"];
  d.reg_h = config["reg_h"];
  d.reg_w = config["reg_w"];
  d.unroll_kw = config["unroll_kw"] != 0;
  choice.algorithm = "direct";
  if (config.Has("algorithm") && config["algorithm"] == kWinograd) {
    choice.algorithm = "winograd";
    choice.winograd.fuse_tile_rows = config["fuse_tile_rows"] != 0;
    choice.winograd.gemm_rows = config["gemm_rows"];
    choice.winograd.gemm_columns = config["gemm_columns"];
    choice.winograd.gemm_unroll = config["gemm_unroll"];
  }
  return choice;
}

ConfigSpace DenseConfigSpace(int64_t M, int64_t N, int64_t K) {
  const DenseConfig d = DefaultDenseConfig(M, N, K);  // checks the sizes
  ConfigSpace space;
  std::vector<int64_t> rows;
  for (int64_t r : {1, 2, 4, 6, 8, 12, 16}) {
    if (r <= M) rows.push_back(r);
  }
  space.AddKnob("tile_rows", KnobKind::kSplit, With(rows, d.tile_rows));
  std::vector<int64_t> columns;
  for (int64_t c : {16, 32, 48, 64}) {
    if (c <= CeilDiv(N, kAvx512Lanes) * kAvx512Lanes) columns.push_back(c);
  }
  space.AddKnob("tile_columns", KnobKind::kSplit, With(columns, d.tile_columns));
  // Panels per column block; 0: as many as fit in block_bytes (1 MiB).
  const int64_t default_panels = d.block_columns / d.tile_columns;
  space.AddKnob("block_panels", KnobKind::kSplit, With({0, 1, 2, 4, 8}, default_panels));
  space.AddKnob("k_unroll", KnobKind::kAnnotate, With({1, 2, 4, 8, 16}, d.k_unroll));
  space.AddConstraint("the register tile fits 28 vector registers", [](const Config& c) {
    return c["tile_rows"] * (c["tile_columns"] / kAvx512Lanes) <= kMaxTileRegisters;
  });
  return space;
}

Config DenseConfigOf(const DenseConfig& config) {
  return Config({{"tile_rows", config.tile_rows},
                 {"tile_columns", config.tile_columns},
                 {"block_panels", config.block_columns / config.tile_columns},
                 {"k_unroll", config.k_unroll}});
}

DenseConfig DenseConfigFrom(int64_t M, int64_t N, int64_t K, const Config& config) {
  const ConfigSpace space = DenseConfigSpace(M, N, K);
  space.IndexOf(config);
  std::string failed;
  LOOM_CHECK_USER(space.IsValid(config, &failed))
      << "dense config {" << config.str() << "} for M=" << M << " N=" << N << " K=" << K
      << " breaks a constraint: " << failed;
  DenseConfig d;
  d.tile_rows = config["tile_rows"];
  d.tile_columns = config["tile_columns"];
  d.block_columns = config["block_panels"] * d.tile_columns;
  d.k_unroll = config["k_unroll"];
  return d;
}

}  // namespace loom::topi::x86
