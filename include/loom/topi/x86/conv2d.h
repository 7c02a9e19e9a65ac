// conv2d for x86 CPUs in the blocked layouts that vector units want, with tuned schedules.
//
// Layouts (ic_bn / oc_bn: the channel blocks; c_in = C / ic_bn, c_out = K / oc_bn):
//   data     NCHW[ic_bn]c          [N, c_in, H, W, ic_bn]
//   weight   OIHW[ic_bn]i[oc_bn]o  [c_out, c_in, R, S, ic_bn, oc_bn]
//   output   NCHW[oc_bn]c          [N, c_out, P, Q, oc_bn]
// The output block is the vector of the inner loop: whole 16-lane vectors of output
// channels where oc_bn is a multiple of 16, else one vector of oc_bn lanes (the default
// oc_bn is the largest divisor of K up to 16: 12 for K = 24), so every multiply-add of the
// inner loop is one broadcast input value times a vector of weights.
// A depthwise convolution (groups = C = K) keeps its channels in one block layout:
//   weight   [c, 1, R, S, 1, bn], output [N, c, P, Q, bn] with c = C / bn.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "loom/ir/module.h"
#include "loom/te/operation.h"
#include "loom/te/schedule.h"
#include "loom/topi/config_space.h"
#include "loom/topi/nn.h"

namespace loom::topi::x86 {

// One convolution as a model states it (NCHW data, KCRS weight).
struct Conv2DWorkload {
  int64_t n = 1, c = 0, h = 0, w = 0;  // data
  int64_t k = 0, r = 0, s = 0;         // weight: k filters of c / groups x r x s
  Conv2DAttrs attrs;
  // The output size; a loom::Error unless strides and dilations are positive, pads
  // non-negative and the kernel fits the padded input.
  int64_t out_h() const;
  int64_t out_w() const;
  bool depthwise() const { return attrs.groups > 1 && attrs.groups == c && k == c; }
  // "n=1 c=64 h=56 w=56 k=64 r=3 s=3 stride=1 pad=1 groups=1"
  std::string str() const;
};

// The tiling choices of the direct NCHWc schedules, named for the auto-tuner. The layout
// choices (ic_bn, oc_bn) fix the tensors' shapes; the rest only the loop nest.
struct Conv2DNCHWcConfig {
  int64_t ic_bn = 16;  // input channels per block (divides C)
  int64_t oc_bn = 16;  // output channels per block (divides K)
  // The register tile: oc_tile channel blocks x reg_h output rows x reg_w output columns,
  // each position the oc_bn outputs of a block (oc_tile * reg_h * reg_w * ceil(oc_bn / 16)
  // of the 32 zmm registers). reg_w divides Q, reg_h divides P, oc_tile divides K / oc_bn.
  int64_t oc_tile = 1;
  int64_t reg_h = 1;
  int64_t reg_w = 1;
  // Copies of the body over the kernel columns (the s loop unrolled).
  bool unroll_kw = false;
  // Depthwise only (1 otherwise): the rows of register tiles one parallel task computes, over
  // every channel block; divides P / reg_h.
  int64_t row_tiles_per_task = 1;
  std::string str() const;
};

// The tiling choices of the Winograd schedule (conv2d_winograd.h), named for the auto-tuner.
struct WinogradConfig {
  // Whether each row of tiles runs all its stages in one parallel iteration (the padded
  // input rows, the input transform, the GEMMs, the output transform), its intermediates
  // staying in cache, or each stage runs over the whole layer in parallel over its own loops,
  // reading the transformed weight once (better where it is large next to the data: few
  // tiles, many channels). Fusing needs one image whose output is whole 4x4 tiles.
  bool fuse_tile_rows = true;
  // The GEMM's register tile: gemm_rows tiles x gemm_columns output channels, accumulated
  // over all input channels in gemm_rows * gemm_columns / 16 zmm registers (the loads of
  // the weight take gemm_columns / 16 more). gemm_columns is a multiple of 16 dividing K.
  int64_t gemm_rows = 6;
  int64_t gemm_columns = 64;
  // Copies of the GEMM body over consecutive input channels (a divisor of C).
  int64_t gemm_unroll = 4;
  std::string str() const;
};

// The default configuration for a workload: measured on this machine (see the .cc).
Conv2DNCHWcConfig DefaultConv2DNCHWcConfig(const Conv2DWorkload& workload);
// A depthwise `config` of `workload` on channel blocks of `block` (its data's, where that is
// wider: a depthwise conv computes each channel alone), its column tile narrowed where the
// wider block's vectors would no longer fit the registers.
Conv2DNCHWcConfig DepthwiseConfigWithBlock(const Conv2DWorkload& workload,
                                           Conv2DNCHWcConfig config, int64_t block);

// ONNX Conv semantics (as topi::conv2d_nchw) on the blocked layouts; groups must be 1.
// Errors name the operator and the mismatching sizes. Tag "conv2d_nchwc".
te::Tensor conv2d_nchwc(const te::Tensor& data, const te::Tensor& weight,
                        const Conv2DAttrs& attrs = {});
// Depthwise (groups = channels, one filter each) on the blocked layouts. Tag
// "depthwise_conv2d_nchwc".
te::Tensor depthwise_conv2d_nchwc(const te::Tensor& data, const te::Tensor& weight,
                                  const Conv2DAttrs& attrs = {});

// int8 (AVX-512 VNNI): uint8 data NCHW[ic_bn]c (ic_bn a multiple of 4) and int8 weight
// OIHW[ic_bn/4]i[oc_bn]o4i, [c_out, c_in, R, S, ic_bn / 4, oc_bn, 4] (oc_bn a multiple of 16:
// the 4 input channels of 16 output channels are one 64-byte vpdpbusd operand; or 8, on
// 256-bit registers, which needs AVX-512 VL), to int32
// NCHW[oc_bn]c: sum(data * weight), exact, the border padded with `pad_value` (a zero point:
// the caller subtracts pad_value * sum(weight) per output channel). groups must be 1. Tag
// "conv2d_nchwc_int8".
te::Tensor conv2d_nchwc_int8(const te::Tensor& data, const te::Tensor& weight,
                             const Conv2DAttrs& attrs, int64_t pad_value);
// bfloat16 (AVX-512 BF16): the same loop nest on bfloat16 data NCHW[ic_bn]c (ic_bn even) and
// a bfloat16 weight OIHW[ic_bn/2]i[oc_bn]o2i (2 input channels of 16 output channels per
// 64-byte vdpbf16ps operand), to float32 NCHW[oc_bn]c: each product exact, summed in float32
// (Dpbf16Dot16x2 says how the instruction rounds), the border zero. groups must be 1. Tag
// "conv2d_nchwc_dpbf16".
te::Tensor conv2d_nchwc_dpbf16(const te::Tensor& data, const te::Tensor& weight,
                               const Conv2DAttrs& attrs);
// Depthwise int8 (AVX-512 VNNI, taps across vpdpbusd's 4 bytes): uint8 data NCHW[x]c (x a
// multiple of 16) and int8 weight [c, R, S/4, x, 4] (each channel's kernel row in groups of
// 4 taps; a kernel width that is not a multiple of 4 gets zero taps, and the caller pads the
// right border by as many columns) to int32 NCHW[x]c: sum(data * weight), exact, the border
// padded with `pad_value` (a zero point, as conv2d_nchwc_int8). groups must be the channels
// and the column dilation 1. Tag "depthwise_conv2d_nchwc_int8".
te::Tensor depthwise_conv2d_nchwc_int8(const te::Tensor& data, const te::Tensor& weight,
                                       const Conv2DAttrs& attrs, int64_t pad_value);
// The default tiling of conv2d_nchwc_int8 / conv2d_nchwc_dpbf16 for a workload whose
// dot-product lanes sum `depth` elements (DotProductDepth: 4 int8, 2 bfloat16): groups 1, c a
// multiple of depth, k of 8 (blocks of 8 unless k is a multiple of 16); a loom::Error otherwise.
Conv2DNCHWcConfig DefaultConv2DDotConfig(const Conv2DWorkload& workload, int depth);
// An int8 or bfloat16 KCRS weight in conv2d_nchwc_int8's / conv2d_nchwc_dpbf16's layout, each
// group of DotProductDepth(type) input channels innermost (K and C must split into the
// blocks).
te::Tensor pack_conv2d_weight_dot(const te::Tensor& weight, int64_t ic_bn, int64_t oc_bn);

// Schedules `out`, which is a conv2d_nchwc / depthwise_conv2d_nchwc / conv2d_nchwc_int8 /
// conv2d_nchwc_dpbf16 / depthwise_conv2d_nchwc_int8 output or an elementwise epilogue of one (bias add, ReLU, residual add, requantization, ...:
// injective stages between the convolution and `out` are inlined, and the epilogue runs on
// the register tile before it is stored). Rows of output in parallel, the register tile of `config`; a direct
// convolution's padded input is materialized once, a depthwise one reads its input in
// place (the padding's bounds peeled off the border tiles). A config that does not fit the
// shapes is a loom::Error.
te::Schedule schedule_conv2d_nchwc(const te::Tensor& out, const Conv2DNCHWcConfig& config);

// The compiled form of one workload, as a graph compiler or a benchmark uses it: every
// function below is a TE computation lowered by Loom, to be built together.
//   pack_data(data NCHW, packed)         NCHW -> the kernel's data layout
//   pack_weight(weight KCRS, packed)     run once per model (weights are constants)
//   conv(packed data, packed weight, out)  the convolution, timed
//   unpack_output(out, result NCHW)
// Which kernel a workload gets, and its tiling.
struct Conv2DChoice {
  std::string algorithm;  // "direct", "depthwise" or "winograd"
  // The channel blocks (ic_bn, oc_bn) of the layouts, for every algorithm; its register
  // tiling is used by "direct" and "depthwise" only.
  Conv2DNCHWcConfig config;
  // The tiling of "winograd" (DefaultWinogradConfig); the default value otherwise.
  WinogradConfig winograd;
};

struct Conv2DKernel : Conv2DChoice {
  IRModule module;  // "pack_data", "pack_weight", "conv", "unpack_output": loom::build it
};

// The kernel Loom compiles by default for `workload`: depthwise for depthwise workloads,
// Winograd where it measured faster (PreferWinograd, conv2d_winograd.h), else direct. A
// given `config` picks the direct (or depthwise) kernel with that tiling. Checks the
// workload and the config (loom::Error naming them).
Conv2DChoice ChooseConv2DKernel(const Conv2DWorkload& workload,
                                const std::optional<Conv2DNCHWcConfig>& config = std::nullopt);
// ChooseConv2DKernel's kernel, as the four functions above.
Conv2DKernel MakeConv2DKernel(const Conv2DWorkload& workload,
                              const std::optional<Conv2DNCHWcConfig>& config = std::nullopt);
// The kernel of a given choice (Conv2DChoiceOf: a point of the tuning space).
Conv2DKernel MakeConv2DKernel(const Conv2DWorkload& workload, const Conv2DChoice& choice);

// The tuning space of a workload's kernel (tuning_spaces.cc). Knobs: ic_bn and oc_bn (the
// channel blocks, within a group), the register tile (oc_tile, reg_h, reg_w), unroll_kw; for
// depthwise ic_bn (= oc_bn), reg_w and row_tiles_per_task; where Winograd applies
// (PreferWinograd) also "algorithm" (0 direct, 1 Winograd) and Winograd's fuse_tile_rows,
// gemm_rows, gemm_columns and gemm_unroll (the other algorithm's knobs stay at their first
// value, so each kernel is one point). ChooseConv2DKernel's choice is a point of it.
ConfigSpace Conv2DConfigSpace(const Conv2DWorkload& workload);
Config Conv2DConfigOf(const Conv2DWorkload& workload, const Conv2DChoice& choice);
Config DefaultConv2DConfig(const Conv2DWorkload& workload);
// The kernel a point stands for; a config of another space, or one that breaks a
// constraint, is a loom::Error naming the knob or the constraint.
Conv2DChoice Conv2DChoiceOf(const Conv2DWorkload& workload, const Config& config);

}  // namespace loom::topi::x86
