// What the x86 layout rewrites share (layout_rewrites.cc: float32 and integer products;
// bf16_rewrites.cc: bfloat16 products): the target tests, the call's workload and attributes,
// and the graph pieces every rewrite builds (padding, the packed GEMMs).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "loom/graph/op_util.h"
#include "loom/graph/strategy.h"
#include "loom/topi/x86/conv2d.h"
#include "loom/topi/x86/dense.h"

namespace loom::strategy::x86 {

using graph::Attrs;
using graph::CallNode;
using graph::Expr;
using graph::Ints;
using graph::IsConstantExpr;
using graph::LayoutRewrite;
using graph::LayoutRewriteContext;
using graph::MakeCall;

// The blocked kernels are AVX-512 code.
bool HasBlockedKernels(const Target& target);
bool PositiveShape(const std::vector<int64_t>& shape);
int64_t RoundUp(int64_t value, int64_t multiple);

// The constant shapes of a call's data and weight when both have type `dtype` and every size
// is positive (an empty tensor is valid, but the kernels take positive sizes only, and there
// is nothing to speed up).
using OperandShapes = std::pair<std::vector<int64_t>, std::vector<int64_t>>;
std::optional<OperandShapes> OperandShapesOf(const graph::CallNode& call, DataType dtype);

// The workload of a convolution call (nn.conv2d, qnn.conv2d) with data x and weight w.
topi::x86::Conv2DWorkload WorkloadOf(const graph::CallNode& call, const std::vector<int64_t>& x,
                                     const std::vector<int64_t>& w);
using graph::ops::WindowAttrs;
// A blocked convolution whose filters were padded to `filters` from `out_channels`: the
// rewrite's result, its added channels sliced off where NCHW begins (a partial block has no
// blocked layout).
graph::LayoutRewrite WithOutChannels(graph::Expr conv, int64_t block, int64_t filters,
                                     int64_t out_channels);

// A product's data (operand 0, `convert`ed: an 8-bit operand shifted to uint8, a cast, or
// nothing) in channel blocks of `block`, its `channels` padded to `padded_channels` with
// `pad_value`.
graph::Expr BlockedData(graph::LayoutRewriteContext& context,
                        const std::function<graph::Expr(graph::Expr)>& convert, int64_t channels,
                        int64_t padded_channels, int64_t block, double pad_value);

// A convolution (groups 1) as a dot-product kernel `op` (nn.contrib_conv2d_nchwc_int8 or
// nn.contrib_conv2d_nchwc_dpbf16, whose lanes sum `depth` elements): channels padded to a
// multiple of depth (the data, `convert`ed, with `pad_value`; the weight with zeros), filters
// to a multiple of 8 where the target has AVX-512 VL, or else of 16 (zero filters, for WithOutChannels to slice off), the
// weight packed by nn.contrib_conv2d_dot_weight_pack, DefaultConv2DDotConfig's tiling but for
// the input block, the data's own where it fits; `attrs` join the call's.
struct DotConv2DCall {
  graph::Expr conv;
  graph::Expr kernel;   // the KCRS weight, padded
  int64_t filters = 0;  // padded
  int64_t block = 0;    // of the output's channels
};
DotConv2DCall DotProductConv2D(const graph::CallNode& call, graph::LayoutRewriteContext& context,
                               const Target& target, int depth, const std::string& op,
                               const std::function<graph::Expr(graph::Expr)>& convert,
                               double pad_value, const graph::Attrs& attrs);

// nn.conv2d of float32 operands -> the kernel topi::x86::ChooseConv2DKernel (or a tuned
// record) picks, on blocked NCHW[x]c tensors.
std::optional<graph::LayoutRewrite> RewriteConv2D(const graph::CallNode& call,
                                                  graph::LayoutRewriteContext& context,
                                                  const Target& target);

// data times `weight` [N, K] packed once into column panels (a call on the constant, which
// FoldConstant folds) by the packed-panel GEMM with `config`'s tiling: [..., N].
graph::Expr PackedDense(const graph::Expr& data, const graph::Expr& weight, int64_t n,
                        const topi::x86::DenseConfig& config, const std::string& name);

// `value` with `amount` elements of `pad_value` after the end of dimension `axis` of its
// `rank`.
graph::Expr PadAxisEnd(graph::Expr value, size_t rank, size_t axis, int64_t amount,
                       double pad_value = 0);

// The AMX GEMMs' view of data [..., M, K]: they tile M for each index of the leading
// dimensions, so that no reshape parts the GEMM from its epilogue (measured: BERT-base's int8
// feed-forward layer wrote and reread its int32 sums). Where M is under a tile's 16 rows and
// there are leading indices (a batch of single tokens), all the rows are one [rows, K]
// instead: [16, 1, 768] x [768, 3072] in bf16 took 2.98 ms in one-row tiles, 0.20 ms as
// [16, 768].
struct AmxDenseRows {
  bool flatten = false;
  int64_t rows = 0;  // the rows the GEMM tiles: M, or all of them when flattened
};
AmxDenseRows AmxDenseRowsOf(const std::vector<int64_t>& x);

// data [..., M, K] (x, its shape) times a constant weight [N, K] as the AMX GEMM `op`
// (dense_bf16 or dense_amx_int8) with the weight packed by `pack_op`, the rows as
// AmxDenseRowsOf says: K padded to a multiple of `depth` (the GEMM's step) and N of 32 (the
// weight with zeros, so the data's padding, `pad_value`, adds nothing), and the rows to a
// multiple of 16 where no row tiling of 8 rows or more divides them (a prime number of tokens
// would otherwise take one-row tiles); `adjust` (if any) applied to the padded product and
// weight, and the result sliced (and reshaped) back to [..., M, N].
graph::Expr AmxDense(
    const std::string& op, const std::string& pack_op, int64_t depth, graph::Expr data,
    graph::Expr weight, const std::vector<int64_t>& x, int64_t n, double pad_value,
    const std::string& name,
    const std::function<graph::Expr(const graph::Expr& product, const graph::Expr& weight)>&
        adjust = {});

// A batched product (nn.matmul, qnn.matmul, ...) the dot-product kernel (topi::x86::
// batch_matmul_dot) takes: a [..., M, K] and b [..., K, N] of constant positive shapes with the
// same batch dimensions (none broadcast) and N a multiple of 16 (whole 64-byte columns).
bool FitsDotMatmul(const graph::CallNode& call);

// bf16_rewrites.cc: whether the CPU has bfloat16 products (AMX tiles or AVX-512 BF16), and
// nn.conv2d / nn.dense / nn.matmul / nn.batch_matmul of bfloat16 operands summed in float32
// (--precision bf16) as its kernels.
bool HasBf16Products(const Target& target);
std::optional<graph::LayoutRewrite> RewriteBf16Conv2D(const graph::CallNode& call,
                                                      graph::LayoutRewriteContext& context,
                                                      const Target& target);
std::optional<graph::LayoutRewrite> RewriteBf16Dense(const graph::CallNode& call,
                                                     graph::LayoutRewriteContext& context,
                                                     const Target& target);
std::optional<graph::LayoutRewrite> RewriteBf16Matmul(const graph::CallNode& call,
                                                      graph::LayoutRewriteContext& context,
                                                      const Target& target);

}  // namespace loom::strategy::x86
