// The x86 layout rewrites (AlterOpLayout asks for them through graph/strategy.h): each
// nn.conv2d becomes the kernel topi::x86::ChooseConv2DKernel picks for its workload (direct,
// depthwise or Winograd) on blocked NCHW[x]c tensors, and nn.dense with a constant weight
// the GEMM on a weight packed once into column panels. The blocked kernels are AVX-512 code:
// on CPUs without it the calls stay as they are.
#include <algorithm>
#include <optional>

#include "loom/graph/strategy.h"
#include "loom/graph/tuning.h"
#include "loom/topi/x86/conv2d.h"
#include "loom/topi/x86/conv2d_winograd.h"
#include "loom/topi/x86/dense.h"
#include "strategy/x86/workloads.h"

namespace loom::strategy::x86 {
namespace {

using graph::Attrs;
using graph::CallNode;
using graph::Expr;
using graph::Ints;
using graph::LayoutRewrite;
using graph::LayoutRewriteContext;
using graph::MakeCall;
using topi::x86::Conv2DNCHWcConfig;
using topi::x86::Conv2DWorkload;
using topi::x86::WinogradConfig;

bool HasBlockedKernels(const Target& target) { return target.HasFeature("avx512f"); }

bool PositiveShape(const std::vector<int64_t>& shape) {
  return std::all_of(shape.begin(), shape.end(), [](int64_t d) { return d > 0; });
}

// Constants and calls of constants only (what FoldConstant turns into one constant).
bool IsConstantExpr(const Expr& e) {
  if (e.as<graph::ConstantNode>()) return true;
  const auto* call = e.as<CallNode>();
  return call != nullptr && call->op != nullptr &&
         std::all_of(call->args.begin(), call->args.end(), IsConstantExpr);
}

// The output channels a conv computes for `channels`: those, or the next multiple of the
// vector width when that takes fewer vectors than the largest block dividing `channels`
// does (1000 classes: 63 vectors of 16, not 100 of 10 lanes).
int64_t WholeVectorChannels(int64_t channels, int64_t lanes) {
  const int64_t padded_vectors = (channels + lanes - 1) / lanes;
  int64_t block = std::min(channels, lanes);
  while (channels % block != 0) --block;
  const int64_t block_vectors = channels / block;
  return padded_vectors < block_vectors ? padded_vectors * lanes : channels;
}

// The constant shapes of a call's data and weight when both are float32 (what the blocked
// kernels compute) and every size is positive (an empty tensor is valid, but the kernels
// take positive sizes only, and there is nothing to speed up).
std::optional<std::pair<std::vector<int64_t>, std::vector<int64_t>>> Float32Operands(
    const CallNode& call) {
  const graph::Type& data = call.args[0].type();
  const graph::Type& weight = call.args[1].type();
  const DataType f32 = DataType::Float(32);
  std::optional<std::vector<int64_t>> x = data.ConstShape(), w = weight.ConstShape();
  if (!x || !w || data.dtype() != f32 || weight.dtype() != f32) return std::nullopt;
  if (!PositiveShape(*x) || !PositiveShape(*w)) return std::nullopt;
  return std::make_pair(*x, *w);
}

std::optional<LayoutRewrite> RewriteConv2D(const CallNode& call, LayoutRewriteContext& context,
                                           const Target& target) {
  auto operands = Float32Operands(call);
  if (!HasBlockedKernels(target) || !operands) return std::nullopt;
  const std::vector<int64_t>* x = &operands->first;
  const std::vector<int64_t>* w = &operands->second;
  Conv2DWorkload wl;
  wl.n = (*x)[0], wl.c = (*x)[1], wl.h = (*x)[2], wl.w = (*x)[3];
  wl.k = (*w)[0], wl.r = (*w)[2], wl.s = (*w)[3];
  const Ints& strides = call.attrs.GetInts("strides");
  const Ints& padding = call.attrs.GetInts("padding");
  const Ints& dilation = call.attrs.GetInts("dilation");
  wl.attrs.strides = {strides[0], strides[1]};
  wl.attrs.pads = {padding[0], padding[1], padding[2], padding[3]};
  wl.attrs.dilations = {dilation[0], dilation[1]};
  wl.attrs.groups = call.attrs.GetInt("groups");
  const int64_t lanes = target.VectorLanes(32);
  // Grouped: the direct kernel, its channel blocks within a group. Groups of at least a
  // 128-bit vector of output channels gain over the generic schedule (1 thread, 2026-11-29:
  // RegNetX-400MF, 16 per group, 25.2 -> 7.1 ms; RegNetY-400MF, 8, 18.5 -> 10.7 ms;
  // ResNeXt-50 32x4d, 4, 71.1 -> 59.4 ms); narrower groups stay generic.
  constexpr int64_t kMinGroupChannels = 4;
  const bool grouped = wl.attrs.groups != 1 && !wl.depthwise();
  if (grouped && (wl.c % wl.attrs.groups != 0 || wl.k % wl.attrs.groups != 0 ||
                  (wl.k / wl.attrs.groups) % kMinGroupChannels != 0)) {
    return std::nullopt;
  }
  const int64_t out_channels = wl.k;
  if (!wl.depthwise() && !grouped) wl.k = WholeVectorChannels(out_channels, lanes);
  // A tuned point where the compile has one (graph/tuning.h), else the default.
  const std::optional<topi::Config> tuned =
      graph::QueryTunedConfig(target, Conv2DTuningWorkload(wl));
  const topi::x86::Conv2DChoice choice = tuned ? topi::x86::Conv2DChoiceOf(wl, *tuned)
                                               : topi::x86::ChooseConv2DKernel(wl);
  const Conv2DNCHWcConfig& cfg = choice.config;

  Expr blocked_data = context.Operand(0, graph::BlockedDataLayout(cfg.ic_bn));
  Expr kernel = context.Operand(1, "");
  if (wl.k != out_channels) {
    // Zero filters for the added channels (folded into the weight when it is constant).
    const Ints pad_width = {0, 0, 0, 0, wl.k - out_channels, 0, 0, 0};
    kernel = MakeCall("nn.pad", {kernel}, {{"pad_width", pad_width}});
  }
  Attrs attrs = {{"strides", strides}, {"padding", padding}, {"dilation", dilation}};
  graph::Call conv;
  if (choice.algorithm == "winograd") {
    const WinogradConfig& wg = choice.winograd;
    attrs = attrs.With("oc_bn", cfg.oc_bn)
                .With("fuse_tile_rows", int64_t{wg.fuse_tile_rows})
                .With("gemm_rows", wg.gemm_rows)
                .With("gemm_columns", wg.gemm_columns)
                .With("gemm_unroll", wg.gemm_unroll);
    Expr transformed = MakeCall("nn.contrib_conv2d_winograd_weight_transform", {kernel});
    conv = MakeCall("nn.contrib_conv2d_winograd_nchwc", {blocked_data, transformed}, attrs,
                    call.name_hint);
  } else {
    const bool depthwise = choice.algorithm == "depthwise";
    if (grouped) attrs = attrs.With("groups", wl.attrs.groups);
    attrs = attrs.With("oc_tile", cfg.oc_tile)
                .With("reg_h", cfg.reg_h)
                .With("reg_w", cfg.reg_w)
                .With("unroll_kw", int64_t{cfg.unroll_kw})
                .With("row_tiles_per_task", cfg.row_tiles_per_task);
    // A depthwise weight [C, 1, R, S] is OIHW with input blocks of one channel.
    std::string weight_layout = "OIHW" + std::to_string(depthwise ? 1 : cfg.ic_bn) + "i" +
                                std::to_string(cfg.oc_bn) + "o";
    Expr blocked_weight =
        MakeCall("layout_transform", {kernel},
                 {{"src_layout", std::string("OIHW")}, {"dst_layout", weight_layout}});
    conv = MakeCall(depthwise ? "nn.contrib_depthwise_conv2d_nchwc" : "nn.contrib_conv2d_nchwc",
                    {blocked_data, blocked_weight}, attrs, call.name_hint);
  }
  const std::string blocked = graph::BlockedDataLayout(cfg.oc_bn);
  if (wl.k == out_channels) return LayoutRewrite{conv, blocked};
  // The added channels end where NCHW begins: a partial block has no blocked layout.
  Expr nchw = MakeCall("layout_transform", {conv},
                       {{"src_layout", blocked}, {"dst_layout", std::string("NCHW")}});
  Expr sliced = MakeCall("strided_slice", {nchw},
                         {{"begin", Ints{0}}, {"end", Ints{out_channels}}, {"axes", Ints{1}}});
  return LayoutRewrite{sliced, "NCHW"};
}

// nn.dense(x, W) with a constant float32 weight W [N, K] -> the packed-panel GEMM on W
// packed once (a call on the constant, which FoldConstant folds), with topi's default
// tiling for the shape.
std::optional<LayoutRewrite> RewriteDense(const CallNode& call, LayoutRewriteContext& context,
                                          const Target& target) {
  auto operands = Float32Operands(call);
  if (!HasBlockedKernels(target) || !operands || operands->first.size() < 2 ||
      !IsConstantExpr(call.args[1])) {
    return std::nullopt;
  }
  const std::vector<int64_t>& x = operands->first;
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < x.size(); ++d) rows *= x[d];
  const int64_t n = operands->second[0], k = operands->second[1];
  const std::optional<topi::Config> tuned =
      graph::QueryTunedConfig(target, DenseTuningWorkload(rows, n, k));
  topi::x86::DenseConfig config = tuned ? topi::x86::DenseConfigFrom(rows, n, k, *tuned)
                                        : topi::x86::DefaultDenseConfig(rows, n, k);
  Expr packed = MakeCall("nn.contrib_dense_pack", {call.args[1]},
                         {{"tile_columns", config.tile_columns}});
  Expr product = MakeCall("nn.contrib_dense_packed", {context.Operand(0, ""), packed},
                          {{"units", n},
                           {"tile_rows", config.tile_rows},
                           {"block_columns", config.block_columns},
                           {"block_bytes", config.block_bytes},
                           {"k_unroll", config.k_unroll}},
                          call.name_hint);
  return LayoutRewrite{product, ""};
}

[[maybe_unused]] const bool kRegistered = [] {
  graph::RegisterLayoutRewrite("nn.conv2d", "x86", RewriteConv2D);
  graph::RegisterLayoutRewrite("nn.dense", "x86", RewriteDense);
  return true;
}();

}  // namespace
}  // namespace loom::strategy::x86
