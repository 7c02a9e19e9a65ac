// Neural-network operators: convolutions, matrix products, pooling, normalization and
// softmax. Each is its topi compute (whose shape rules TypeFromCompute reads the output
// type off) with topi's schedule for it.
#include "loom/topi/nn.h"

#include "loom/graph/op_util.h"
#include "loom/ir/structural.h"
#include "loom/topi/elementwise.h"
#include "loom/topi/matmul.h"
#include "loom/topi/quantize.h"
#include "loom/topi/reduction.h"
#include "loom/topi/schedule.h"
#include "loom/topi/transform.h"

namespace loom::graph::ops {
namespace {

using Tensors = std::vector<te::Tensor>;

// The schedule of a group whose master is an anchor (a convolution, a product, a pooling)
// tagged `tag`: topi's own schedule when the group is the anchor alone, or when the schedule
// takes elementwise stages after it (`takes_epilogue`: the convolutions' and the products',
// which compute them on each tile before it is stored). Otherwise the generic reduction schedule
// (the anchor's outputs in parallel, the epilogue inlined), correct but slow: a 3x3 64-channel
// 56x56 conv2d with a ReLU took 6x the conv2d's time alone that way. Vectors are the target's width
// (Target::VectorLanes).
ScheduleFn AnchorSchedule(std::string tag, te::Schedule (*schedule)(const te::Tensor&, int),
                          bool takes_epilogue = false) {
  return [tag = std::move(tag), schedule, takes_epilogue](const CallInfo&, const Tensors& outputs,
                                                          const Target& target) {
    const int lanes = target.VectorLanes(32);
    if (outputs.size() == 1 && (takes_epilogue || outputs[0].op()->tag == tag)) {
      return schedule(outputs[0], lanes);
    }
    return topi::schedule_reduce(Array<te::Tensor>(outputs.begin(), outputs.end()), lanes);
  };
}

// topi::schedule_matmul with its default tile (an epilogue on the tile), as AnchorSchedule
// takes it.
te::Schedule ScheduleMatmul(const te::Tensor& out, int lanes) {
  return topi::schedule_matmul(out, /*tile_rows=*/4, lanes);
}

ScheduleFn ReduceSchedule() {
  return [](const CallInfo&, const Tensors& outputs, const Target& target) {
    return topi::schedule_reduce(Array<te::Tensor>(outputs.begin(), outputs.end()),
                                 target.VectorLanes(32));
  };
}

// The attributes of a 2-d convolution with a "groups" attribute.
topi::Conv2DAttrs GroupedConv2DAttrs(const CallInfo& info) {
  return Conv2DAttrsOf(info, info.attrs.GetInt("groups"));
}

// A product's "out_dtype": the type its operands are cast to, summed in and returned in
// (float32 for bfloat16 operands); empty: the operands' own.
DataType OutDtype(const CallInfo& info) {
  const std::string& text = info.attrs.GetString("out_dtype");
  return text.empty() ? DataType::Void() : DataType::Parse(text);
}

OpBuilder& OutDtypeAttr(OpBuilder& op) {
  return op.Attr("out_dtype", AttrKind::kString, std::string(),
                 "the type the operands are multiplied and summed in and the result has "
                 "(\"float32\" for bfloat16 operands); empty: the operands'");
}

void ConvAttrs(OpBuilder& op, Ints strides, Ints padding, Ints dilation, const std::string& dims) {
  op.Attr("strides", AttrKind::kInts, strides, "step between windows, " + dims)
      .Attr("padding", AttrKind::kInts, padding,
            "zeros added before then after each spatial dimension (" +
                std::string(padding.size() == 4 ? "top, left, bottom, right" : "left, right") + ")")
      .Attr("dilation", AttrKind::kInts, dilation, "step between kernel taps, " + dims)
      .Attr("groups", AttrKind::kInt, int64_t{1}, "channel groups (channels = groups: depthwise)");
}

void RegisterConvolutions() {
  OpBuilder conv2d = RegisterComputedOp("nn.conv2d", [](const CallInfo& info, const Tensors& in) {
    return Tensors{topi::conv2d_nchw(in[0], in[1], GroupedConv2DAttrs(info), OutDtype(info))};
  });
  conv2d.Describe("2-d convolution, data NCHW, weight OIHW (ONNX Conv)")
      .Inputs({"data", "weight"})
      .Pattern(OpPattern::kOutEWiseFusable)
      .Schedule(AnchorSchedule("conv2d_nchw", topi::schedule_conv2d_nchw, true));
  ConvAttrs(conv2d, {1, 1}, {0, 0, 0, 0}, {1, 1}, "(h, w)");
  OutDtypeAttr(conv2d);

  OpBuilder transpose =
      RegisterComputedOp("nn.conv2d_transpose", [](const CallInfo& info, const Tensors& in) {
        return Tensors{topi::conv2d_transpose_nchw(in[0], in[1], GroupedConv2DAttrs(info),
                                                   FixedInts<2>(info, "output_padding"))};
      });
  transpose.Describe("2-d transposed convolution, data NCHW, weight IOHW (ONNX ConvTranspose)")
      .Inputs({"data", "weight"})
      .Pattern(OpPattern::kOutEWiseFusable)
      .Schedule(AnchorSchedule("conv2d_transpose_nchw", topi::schedule_conv2d_nchw, true));
  ConvAttrs(transpose, {1, 1}, {0, 0, 0, 0}, {1, 1}, "(h, w)");
  transpose.Attr("output_padding", AttrKind::kInts, Ints{0, 0},
                 "extra rows and columns at the end of the output (h, w)");

  OpBuilder conv1d = RegisterComputedOp("nn.conv1d", [](const CallInfo& info, const Tensors& in) {
    topi::Conv1DAttrs attrs;
    attrs.stride = FixedInts<1>(info, "strides")[0];
    attrs.pads = FixedInts<2>(info, "padding");
    attrs.dilation = FixedInts<1>(info, "dilation")[0];
    attrs.groups = info.attrs.GetInt("groups");
    return Tensors{topi::conv1d_ncw(in[0], in[1], attrs)};
  });
  conv1d.Describe("1-d convolution, data NCW, weight OIW (ONNX Conv)")
      .Inputs({"data", "weight"})
      .Pattern(OpPattern::kOutEWiseFusable)
      .Schedule(AnchorSchedule("conv1d_ncw", topi::schedule_conv1d_ncw, true));
  ConvAttrs(conv1d, {1}, {0, 0}, {1}, "(w)");
}

// Quantized tensors: dequantization (ONNX DequantizeLinear, per tensor or per axis) and the
// integer products FoldQuantizedProducts and ConvInteger / QLinearConv make.
void RegisterQuantized() {
  RegisterComputedOp("qnn.dequantize",
                     [](const CallInfo& info, const Tensors& in) {
                       return Tensors{topi::dequantize(in[0], in[1], in[2], IntAttr(info, "axis"))};
                     })
      .Describe("(q - zero_point) * scale in float32 (ONNX DequantizeLinear)")
      .Inputs({"q", "scale", "zero_point"})
      .Pattern(OpPattern::kBroadcast)
      .Attr("axis", AttrKind::kInt, int64_t{1},
            "the axis of q that 1-d scales and zero points run along");

  OpBuilder conv2d =
      RegisterComputedOp("qnn.conv2d", [](const CallInfo& info, const Tensors& in) {
        return Tensors{topi::conv2d_nchw_integer(in[0], in[1],
                                                 info.attrs.GetInt("data_zero_point"),
                                                 info.attrs.GetInt("weight_zero_point"),
                                                 GroupedConv2DAttrs(info))};
      });
  conv2d.Describe("sum((data - data_zero_point) * (weight - weight_zero_point)) in int32 of int8 "
                  "or uint8 NCHW data and an OIHW weight (ONNX ConvInteger)")
      .Inputs({"data", "weight"})
      .Pattern(OpPattern::kOutEWiseFusable)
      .Schedule(AnchorSchedule("conv2d_nchw", topi::schedule_conv2d_nchw, true));
  ConvAttrs(conv2d, {1, 1}, {0, 0, 0, 0}, {1, 1}, "(h, w)");
  conv2d.Attr("data_zero_point", AttrKind::kInt, int64_t{0}, "the data's zero point")
      .Attr("weight_zero_point", AttrKind::kInt, int64_t{0}, "the weight's zero point");

  RegisterComputedOp("qnn.dense",
                     [](const CallInfo& info, const Tensors& in) {
                       RequireRank(info, 1, 2);
                       return Tensors{topi::dense_integer(in[0], in[1],
                                                          info.attrs.GetInt("data_zero_point"),
                                                          info.attrs.GetInt("weight_zero_point"))};
                     })
      .Describe(
          "sum((data - data_zero_point) * (weight - weight_zero_point)) in int32: 8-bit "
          "data [..., K] x weight [N, K] transposed -> [..., N]")
      .Inputs({"data", "weight"})
      .Pattern(OpPattern::kOutEWiseFusable)
      .Schedule(AnchorSchedule("matmul", ScheduleMatmul, true))
      .Attr("data_zero_point", AttrKind::kInt, int64_t{0}, "the data's zero point")
      .Attr("weight_zero_point", AttrKind::kInt, int64_t{0}, "the weight's zero point");

  RegisterComputedOp("qnn.matmul",
                     [](const CallInfo& info, const Tensors& in) {
                       return Tensors{topi::matmul_integer(in[0], in[1],
                                                           info.attrs.GetInt("a_zero_point"),
                                                           info.attrs.GetInt("b_zero_point"))};
                     })
      .Describe(
          "sum((a - a_zero_point) * (b - b_zero_point)) in int32 of two 8-bit operands "
          "a [..., M, K] and b [..., K, N], batch dimensions broadcasting (ONNX "
          "MatMulInteger; a QDQ model's attention products)")
      .Inputs({"a", "b"})
      .Pattern(OpPattern::kOutEWiseFusable)
      .Schedule(AnchorSchedule("matmul", ScheduleMatmul, true))
      .Attr("a_zero_point", AttrKind::kInt, int64_t{0}, "a's zero point")
      .Attr("b_zero_point", AttrKind::kInt, int64_t{0}, "b's zero point");
}

// batch_matmul's operands: two 3-d tensors.
void CheckBatchOperands(const CallInfo& info) {
  RequireRank(info, 0, 3);
  RequireRank(info, 1, 3);
}

void RegisterProducts() {
  OpBuilder dense = RegisterComputedOp(
      "nn.dense", [](const CallInfo& info, const Tensors& in) {
        RequireRank(info, 1, 2);
        return Tensors{topi::matmul(in[0], topi::transpose(in[1], {1, 0}), OutDtype(info))};
      });
  dense.Describe("data [..., K] x weight [N, K] transposed -> [..., N] (a Linear layer)")
      .Inputs({"data", "weight"})
      .Pattern(OpPattern::kOutEWiseFusable)
      .Schedule(AnchorSchedule("matmul", ScheduleMatmul, true));
  OutDtypeAttr(dense);

  OpBuilder matmul = RegisterComputedOp("nn.matmul", [](const CallInfo& info, const Tensors& in) {
    return Tensors{topi::matmul(in[0], in[1], OutDtype(info))};
  });
  matmul.Describe("numpy.matmul / ONNX MatMul: batch dimensions broadcast, 1-d operands")
      .Inputs({"a", "b"})
      .Pattern(OpPattern::kOutEWiseFusable)
      .Schedule(AnchorSchedule("matmul", ScheduleMatmul, true));
  OutDtypeAttr(matmul);

  OpBuilder batch_matmul =
      RegisterComputedOp("nn.batch_matmul", [](const CallInfo& info, const Tensors& in) {
        CheckBatchOperands(info);
        return Tensors{topi::matmul(in[0], in[1], OutDtype(info))};
      });
  batch_matmul.Describe("a [B, M, K] x b [B, K, N] -> [B, M, N] (B broadcasts from 1)")
      .Inputs({"a", "b"})
      .Pattern(OpPattern::kOutEWiseFusable)
      .Schedule(AnchorSchedule("matmul", ScheduleMatmul, true));
  OutDtypeAttr(batch_matmul);
}

topi::Pool2DAttrs Pool2DAttrsOf(const CallInfo& info) {
  topi::Pool2DAttrs attrs;
  attrs.kernel = FixedInts<2>(info, "pool_size");
  attrs.strides = FixedInts<2>(info, "strides");
  attrs.pads = FixedInts<4>(info, "padding");
  attrs.dilations = FixedInts<2>(info, "dilation");
  attrs.ceil_mode = info.attrs.GetInt("ceil_mode") != 0;
  if (info.op->FindAttr("count_include_pad")) {
    attrs.count_include_pad = info.attrs.GetInt("count_include_pad") != 0;
  }
  return attrs;
}

using PoolFn = te::Tensor (*)(const te::Tensor&, const topi::Pool2DAttrs&, const std::string&);
using GlobalPoolFn = te::Tensor (*)(const te::Tensor&, const std::string&);

OpBuilder RegisterPool(const std::string& name, PoolFn pool, const std::string& doc) {
  OpBuilder op = RegisterComputedOp(name, [pool](const CallInfo& info, const Tensors& in) {
    return Tensors{pool(in[0], Pool2DAttrsOf(info), info.attrs.GetString("layout"))};
  });
  op.Describe(doc)
      .Inputs({"data"})
      .Pattern(OpPattern::kOutEWiseFusable)
      .Schedule(AnchorSchedule("pool2d", topi::schedule_pool2d))
      .Attr("pool_size", AttrKind::kInts, std::nullopt, "window (h, w)")
      .Attr("strides", AttrKind::kInts, Ints{1, 1}, "step between windows (h, w)")
      .Attr("padding", AttrKind::kInts, Ints{0, 0, 0, 0}, "top, left, bottom, right")
      .Attr("dilation", AttrKind::kInts, Ints{1, 1}, "step between window taps (h, w)")
      .Attr("ceil_mode", AttrKind::kInt, int64_t{0}, "1: output size rounded up")
      .Attr("layout", AttrKind::kString, std::string("NCHW"), "\"NCHW\" or blocked \"NCHW<k>c\"");
  return op;
}

void RegisterGlobalPool(const std::string& name, GlobalPoolFn pool, const std::string& doc) {
  RegisterComputedOp(name,
                     [pool](const CallInfo& info, const Tensors& in) {
                       return Tensors{pool(in[0], info.attrs.GetString("layout"))};
                     })
      .Describe(doc)
      .Inputs({"data"})
      .Pattern(OpPattern::kOutEWiseFusable)
      .Schedule(ReduceSchedule())
      .Attr("layout", AttrKind::kString, std::string("NCHW"), "\"NCHW\" or blocked \"NCHW<k>c\"");
}

void RegisterPooling() {
  RegisterPool("nn.max_pool2d", topi::max_pool2d, "2-d max pooling (ONNX MaxPool)");
  RegisterPool("nn.avg_pool2d", topi::avg_pool2d, "2-d average pooling (ONNX AveragePool)")
      .Attr("count_include_pad", AttrKind::kInt, int64_t{0},
            "1: padded positions count in the divisor");
  RegisterGlobalPool("nn.global_avg_pool2d", topi::global_avg_pool2d,
                     "mean over H and W (ONNX GlobalAveragePool)");
  RegisterGlobalPool("nn.global_max_pool2d", topi::global_max_pool2d,
                     "maximum over H and W (ONNX GlobalMaxPool)");
}

// bias [C] added along `axis` of data.
te::Tensor BiasAdd(const CallInfo& info, const te::Tensor& data, const te::Tensor& bias) {
  const Type& data_type = info.input_types[0];
  const Type& bias_type = info.input_types[1];
  int ndim = data_type.ndim();
  int64_t axis = info.attrs.GetInt("axis");
  LOOM_CHECK_USER(axis >= -ndim && axis < ndim)
      << info.where << ": axis " << axis << " is out of range for data " << data_type.str();
  if (axis < 0) axis += ndim;
  LOOM_CHECK_USER(bias_type.ndim() == 1 && bias_type.dtype() == data_type.dtype() &&
                  StructuralEqual(bias_type.shape()[0], data_type.shape()[axis]))
      << info.where << ": bias must be "
      << TensorType(std::vector<PrimExpr>{data_type.shape()[axis]}, data_type.dtype()).str()
      << " (dimension " << axis << " of data " << data_type.str() << "), got " << bias_type.str();
  std::vector<int64_t> trailing;
  for (int64_t d = 1; d < ndim - axis; ++d) trailing.push_back(d);
  return topi::add(data, trailing.empty() ? bias : topi::unsqueeze(bias, trailing));
}

void RegisterNormalizations() {
  RegisterComputedOp(
      "nn.bias_add",
      [](const CallInfo& info, const Tensors& in) { return Tensors{BiasAdd(info, in[0], in[1])}; })
      .Describe("data + bias along axis")
      .Inputs({"data", "bias"})
      .Pattern(OpPattern::kBroadcast)
      .Attr("axis", AttrKind::kInt, int64_t{1}, "data's dimension the bias runs along");

  RegisterComputedOp("nn.batch_norm",
                     [](const CallInfo& info, const Tensors& in) {
                       int ndim = info.input_types[0].ndim();
                       int64_t axis = info.attrs.GetInt("axis");
                       LOOM_CHECK_USER(axis == 1 || (ndim >= 2 && axis == 1 - ndim))
                           << info.where
                           << ": only the channel axis 1 of NC... data is supported, got axis "
                           << axis << " for data " << info.input_types[0].str();
                       return Tensors{topi::batch_norm(in[0], in[1], in[2], in[3], in[4],
                                                       info.attrs.GetFloat("epsilon"))};
                     })
      .Describe("inference batch normalization: (x - mean) / sqrt(var + epsilon) * gamma + beta")
      .Inputs({"data", "gamma", "beta", "moving_mean", "moving_var"})
      .Pattern(OpPattern::kOpaque)
      .Attr("epsilon", AttrKind::kFloat, 1e-5, "added to the variance")
      .Attr("axis", AttrKind::kInt, int64_t{1}, "the channel axis (1)");

  RegisterComputedOp("nn.layer_norm",
                     [](const CallInfo& info, const Tensors& in) {
                       return Tensors{topi::layer_norm(in[0], in[1], in[2], IntAttr(info, "axis"),
                                                       info.attrs.GetFloat("epsilon"))};
                     })
      .Describe("layer normalization over dimensions axis.. (ONNX LayerNormalization)")
      .Inputs({"data", "gamma", "beta"})
      .Pattern(OpPattern::kOpaque)
      .Schedule([](const CallInfo& info, const Tensors& outputs, const Target& target) {
        LOOM_ICHECK(outputs.size() == 1) << "an opaque layer_norm group has one output";
        int ndim = info.input_types[0].ndim();
        int64_t first = IntAttr(info, "axis");
        if (first < 0) first += ndim;
        const int lanes = target.VectorLanes(32);
        // Normalizing every dimension leaves no rows to run in parallel.
        if (first == 0) return topi::schedule_reduce({outputs[0]}, lanes);
        return topi::schedule_layer_norm(outputs[0], static_cast<int>(first), lanes);
      })
      .Attr("axis", AttrKind::kInt, int64_t{-1}, "first normalized dimension")
      .Attr("epsilon", AttrKind::kFloat, 1e-5, "added to the variance");

  RegisterComputedOp(
      "nn.instance_norm",
      [](const CallInfo& info, const Tensors& in) {
        return Tensors{topi::instance_norm(in[0], in[1], in[2], info.attrs.GetFloat("epsilon"))};
      })
      .Describe("normalization per (n, c) over the spatial dimensions (ONNX InstanceNormalization)")
      .Inputs({"data", "gamma", "beta"})
      .Pattern(OpPattern::kOpaque)
      .Schedule(ReduceSchedule())
      .Attr("epsilon", AttrKind::kFloat, 1e-5, "added to the variance");

  RegisterComputedOp(
      "nn.lrn",
      [](const CallInfo& info, const Tensors& in) {
        return Tensors{topi::lrn(in[0], info.attrs.GetInt("size"), info.attrs.GetFloat("alpha"),
                                 info.attrs.GetFloat("beta"), info.attrs.GetFloat("bias"))};
      })
      .Describe("local response normalization across channels (ONNX LRN)")
      .Inputs({"data"})
      .Pattern(OpPattern::kOpaque)
      .Schedule(ReduceSchedule())
      .Attr("size", AttrKind::kInt, std::nullopt, "channels summed over")
      .Attr("alpha", AttrKind::kFloat, 1e-4, "scale of the sum")
      .Attr("beta", AttrKind::kFloat, 0.75, "exponent")
      .Attr("bias", AttrKind::kFloat, 1.0, "added to the scaled sum");
}

using SoftmaxFn = te::Tensor (*)(const te::Tensor&, int);

void RegisterSoftmax(const std::string& name, SoftmaxFn fn, const std::string& doc) {
  RegisterComputedOp(name,
                     [fn](const CallInfo& info, const Tensors& in) {
                       return Tensors{fn(in[0], IntAttr(info, "axis"))};
                     })
      .Describe(doc)
      .Inputs({"data"})
      .Pattern(OpPattern::kOpaque)
      .Schedule([](const CallInfo&, const Tensors& outputs, const Target& target) {
        LOOM_ICHECK(outputs.size() == 1) << "an opaque softmax group has one output";
        return topi::schedule_softmax(outputs[0], target.VectorLanes(32));
      })
      .Attr("axis", AttrKind::kInt, int64_t{-1}, "the normalized dimension");
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterConvolutions();
  RegisterQuantized();
  RegisterProducts();
  RegisterPooling();
  RegisterNormalizations();
  RegisterSoftmax("nn.softmax", topi::softmax, "exp(x - max) / sum(exp(x - max)) along axis");
  RegisterSoftmax("nn.log_softmax", topi::log_softmax, "log of softmax along axis");
  return true;
}();

}  // namespace
}  // namespace loom::graph::ops
