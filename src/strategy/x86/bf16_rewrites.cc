// The x86 layout rewrites of bfloat16 products (--precision bf16: ToHalfPrecisionProducts makes
// nn.conv2d and nn.dense with a constant weight, and nn.matmul / nn.batch_matmul of two
// activations, of bfloat16 operands summed in float32):
//   - on AMX tiles (tdpbf16ps) where the CPU has amx-bf16 and the shapes fill the tiles;
//   - else on AVX-512 BF16's vdpbf16ps where the CPU has it: the direct convolution, the
//     packed-panel GEMM and the batched product of the float32 kernels, each step 2 bfloat16
//     per lane instead of one float32 (topi::x86::conv2d_nchwc_dpbf16, dense_packed on a
//     bfloat16 weight, batch_matmul_dot; the products of two activations, nn.matmul, take
//     this path on CPUs with AMX too);
//   - else by conversion to float32, on the float32 kernels.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "loom/topi/x86/amx.h"
#include "loom/topi/x86/tensor_intrinsics.h"
#include "strategy/x86/layout_rewrites.h"

namespace loom::strategy::x86 {
namespace {

bool HasAmxBf16(const Target& target) {
  return HasBlockedKernels(target) && target.HasFeature("amx-bf16");
}

bool HasAvx512Bf16(const Target& target) {
  return HasBlockedKernels(target) && target.HasFeature("avx512bf16");
}

// The constant shapes of a product (nn.conv2d, nn.dense) of bfloat16 operands summed in
// float32 (ToHalfPrecisionProducts) with a constant weight and positive sizes.
std::optional<OperandShapes> Bf16Operands(const CallNode& call) {
  if (call.attrs.GetString("out_dtype") != "float32" || !IsConstantExpr(call.args[1])) {
    return std::nullopt;
  }
  return OperandShapesOf(call, DataType::BFloat16());
}

// A layout rewrite's operands converted to float32 (cast after the layout conversion, which
// an elementwise cast does not care about).
class Float32OperandsOf final : public LayoutRewriteContext {
 public:
  explicit Float32OperandsOf(LayoutRewriteContext& operands) : operands_(operands) {}
  Expr Operand(size_t index, const std::string& layout) override {
    return MakeCall("cast", {operands_.Operand(index, layout)},
                    {{"dtype", std::string("float32")}});
  }
  std::string OperandLayout(size_t index) override { return operands_.OperandLayout(index); }

 private:
  LayoutRewriteContext& operands_;
};

// A product of bfloat16 operands summed in float32 that no bfloat16 kernel takes, by
// conversion: `float_rewrite` of the product of its operands cast to float32 (the values
// they hold), without out_dtype.
std::optional<LayoutRewrite> ByConversion(const CallNode& call, LayoutRewriteContext& context,
                                          const Target& target,
                                          const graph::LayoutRewriteFn& float_rewrite) {
  std::vector<Expr> widened;
  for (const Expr& arg : call.args) {
    widened.push_back(MakeCall("cast", {arg}, {{"dtype", std::string("float32")}}));
  }
  std::map<std::string, graph::AttrValue> attrs = call.attrs.values();
  attrs.erase("out_dtype");
  graph::Call product = MakeCall(call.op, widened, Attrs(attrs), call.name_hint);
  Float32OperandsOf operands(context);
  return float_rewrite(*product.get(), operands, target);
}

// A convolution of few channels (16 < C * S <= 32, as a network's stem: 3 x 7) as the AMX kernel's
// convolution of its input with the kernel columns unfolded into one block of 32 channels
// (topi::x86::unfold_columns_nchwc): the S kernel columns become tile depth (21 of 32 used
// for a 3-channel 7x7 stem, against 3 of 32 with the channels padded), the kernel R x 1 with
// the column stride 1. The weight [K, C, R, S] is laid out alike: [K, S * C, R, 1].
std::optional<Expr> UnfoldedColumnsConv2D(const CallNode& call, LayoutRewriteContext& context,
                                          const std::vector<int64_t>& x,
                                          const std::vector<int64_t>& w) {
  constexpr int64_t kBlock = topi::x86::kAmxBlockColumns;
  const int64_t depth = x[1] * w[3];
  const Ints& strides = call.attrs.GetInts("strides");
  const Ints& dilation = call.attrs.GetInts("dilation");
  // At least two kernel columns (a 1x1 conv's unfolding is only its channels padded) filling
  // more than half the tile depth: MobileNetV2's 3-channel 3x3 stem (9 of 32 lanes) and its
  // 16-channel 1x1 expansion ran slower this way than by conversion (0.38 against 0.24 ms,
  // 0.77 against 0.42 ms), ResNet's 7x7 stem (21 of 32) 2x faster.
  if (w[3] < 2 || 2 * depth <= kBlock || depth > kBlock || w[0] % kBlock != 0 || dilation[1] != 1) {
    return std::nullopt;
  }
  Expr data = MakeCall("nn.contrib_unfold_columns", {context.Operand(0, "")},
                       WindowAttrs(call).With("kernel_columns", w[3]));
  Expr kernel = MakeCall("transpose", {context.Operand(1, "")}, {{"axes", Ints{0, 3, 1, 2}}});
  kernel = MakeCall("reshape", {kernel}, {{"newshape", Ints{w[0], depth, w[2], 1}}});
  kernel = PadAxisEnd(kernel, 4, 1, kBlock - depth);
  Attrs attrs = {{"strides", Ints{strides[0], 1}},
                 {"padding", Ints{0, 0, 0, 0}},
                 {"dilation", Ints{dilation[0], 1}}};
  return MakeCall("nn.contrib_conv2d_nchwc_bf16",
                  {data, MakeCall("nn.contrib_bf16_weight_pack", {kernel})}, attrs, call.name_hint);
}

}  // namespace

bool HasBf16Products(const Target& target) {
  return HasAmxBf16(target) || HasAvx512Bf16(target);
}

// nn.conv2d of bfloat16 operands (groups 1, constant weight):
//   - with AMX, the tiles' kernel (topi::x86::conv2d_nchwc_bf16) on NCHW32c data, or on its
//     kernel columns unfolded into channels where they fit one block (UnfoldedColumnsConv2D);
//   - else, and for channels or filters that are not whole blocks of 32 (padding them and
//     slicing the result, with the layout conversions around, cost more than the tiles
//     gained: MobileNetV2's 24- and 144-channel layers, 1.1x slower than float32), the
//     vdpbf16ps kernel where the CPU has AVX-512 BF16, its channels padded to an even count
//     and its filters to a multiple of 8 or 16 (DotProductConv2D);
//   - else by conversion to the float32 kernels.
std::optional<LayoutRewrite> RewriteBf16Conv2D(const CallNode& call, LayoutRewriteContext& context,
                                               const Target& target) {
  auto operands = Bf16Operands(call);
  if (!operands || call.attrs.GetInt("groups") != 1 || !HasBf16Products(target)) {
    return std::nullopt;
  }
  const auto& [x, w] = *operands;
  constexpr int64_t kBlock = topi::x86::kAmxBlockColumns;
  if (HasAmxBf16(target)) {
    if (x[1] % kBlock == 0 && w[0] % kBlock == 0) {
      Expr data = context.Operand(0, graph::BlockedDataLayout(kBlock));
      Expr packed = MakeCall("nn.contrib_bf16_weight_pack", {context.Operand(1, "")});
      Expr conv = MakeCall("nn.contrib_conv2d_nchwc_bf16", {data, packed}, WindowAttrs(call),
                           call.name_hint);
      return LayoutRewrite{conv, graph::BlockedDataLayout(kBlock)};
    }
    if (std::optional<Expr> conv = UnfoldedColumnsConv2D(call, context, x, w)) {
      return LayoutRewrite{*conv, graph::BlockedDataLayout(kBlock)};
    }
  }
  if (!HasAvx512Bf16(target)) return ByConversion(call, context, target, RewriteConv2D);
  DotConv2DCall dot = DotProductConv2D(
      call, context, target, topi::x86::kDpbf16Depth, "nn.contrib_conv2d_nchwc_dpbf16",
      [](Expr data) { return data; }, 0, {});
  return WithOutChannels(dot.conv, dot.block, dot.filters, w[0]);
}

// nn.dense of bfloat16 data [..., K] and a constant bfloat16 weight [N, K] -> the AMX GEMM
// (topi::x86::dense_bf16, AmxDense) where the CPU has AMX, else the packed-panel GEMM on
// vdpbf16ps (topi::x86::dense_packed of a bfloat16 weight) with K padded to an even count.
std::optional<LayoutRewrite> RewriteBf16Dense(const CallNode& call, LayoutRewriteContext& context,
                                              const Target& target) {
  auto operands = Bf16Operands(call);
  if (!operands || operands->first.size() < 2 || !HasBf16Products(target)) return std::nullopt;
  const auto& [x, w] = *operands;
  const int64_t n = w[0], k = w[1];
  if (HasAmxBf16(target)) {
    return LayoutRewrite{
        AmxDense("nn.contrib_dense_bf16", "nn.contrib_bf16_weight_pack", topi::x86::kAmxDepth,
                 context.Operand(0, ""), context.Operand(1, ""), x, n, 0, call.name_hint),
        ""};
  }
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < x.size(); ++d) rows *= x[d];
  const int64_t padded_k = RoundUp(k, topi::x86::kDpbf16Depth);
  Expr data = PadAxisEnd(context.Operand(0, ""), x.size(), x.size() - 1, padded_k - k);
  Expr weight = PadAxisEnd(context.Operand(1, ""), 2, 1, padded_k - k);
  const topi::x86::DenseConfig config = topi::x86::DefaultDenseConfig(rows, n, padded_k);
  return LayoutRewrite{PackedDense(data, weight, n, config, call.name_hint), ""};
}

// nn.matmul / nn.batch_matmul of two bfloat16 activations summed in float32 (attention's
// scores and context) -> topi::x86::batch_matmul_dot on vdpbf16ps where the CPU has AVX-512
// BF16 and the product fits it (FitsDotMatmul): a padded to an even K, b packed when the
// product runs. Else the call stays, and the float32 schedule computes it by conversion.
std::optional<LayoutRewrite> RewriteBf16Matmul(const CallNode& call, LayoutRewriteContext& context,
                                               const Target& target) {
  const DataType bf16 = DataType::BFloat16();
  if (!HasAvx512Bf16(target) || call.args[0].type().dtype() != bf16 ||
      call.args[1].type().dtype() != bf16 || call.attrs.GetString("out_dtype") != "float32" ||
      !FitsDotMatmul(call)) {
    return std::nullopt;
  }
  const std::vector<int64_t> x = *call.args[0].type().ConstShape();
  const int64_t k = x.back();
  Expr a = PadAxisEnd(context.Operand(0, ""), x.size(), x.size() - 1,
                      RoundUp(k, topi::x86::kDpbf16Depth) - k);
  Expr packed_b = MakeCall("nn.contrib_batch_matmul_dot_pack", {context.Operand(1, "")});
  return LayoutRewrite{
      MakeCall("nn.contrib_batch_matmul_dot", {a, packed_b}, {}, call.name_hint), ""};
}

}  // namespace loom::strategy::x86
