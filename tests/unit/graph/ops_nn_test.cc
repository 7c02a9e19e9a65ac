// Neural-network graph operators: type relations (normal, negative-axis and error cases,
// errors naming the call and the shapes) and each call compiled through its strategy
// against a naive reference on random data.
#include <cstring>

#include "../topi/conv_reference.h"
#include "graph_test_util.h"
#include "loom/topi/elementwise.h"

namespace loom::graph {
namespace {

using runtime::NDArray;
using test::ErrorOf;
using test::In;
using test::GetFloat;
using test::RandomArray;
using test::RunCall;

const DataType kF32 = DataType::Float(32);

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// `call` alone and with a fused ReLU after it (its group scheduled with the epilogue), each
// within `tolerance` of `want` (and of relu(want)).
void ExpectAloneAndWithRelu(const Call& call, const std::vector<NDArray>& inputs,
                            std::vector<double> want, double tolerance,
                            const std::string& label) {
  test::ExpectClose(RunCall(call, inputs), want, tolerance, label);
  for (double& v : want) v = std::max(v, 0.0);
  test::ExpectClose(test::RunWithRelu(call, inputs), want, tolerance, label + " + relu");
}


tir::HostArray ToHost(const NDArray& array) {
  tir::HostArray host(array.dtype(), array.Shape());
  std::memcpy(host.memory()->data(), array.data(), array.NumBytes());
  return host;
}

// ---- convolutions

TEST(GraphOpsNN, Conv2DType) {
  Call conv =
      MakeCall("nn.conv2d", {In("x", {1, 4, 9, 9}), In("w", {6, 2, 3, 3})},
               {{"strides", Ints{2, 2}}, {"padding", Ints{1, 0, 1, 2}}, {"groups", int64_t{2}}});
  EXPECT_EQ(conv.type().str(), "Tensor[(1, 6, 5, 5), float32]");
  EXPECT_EQ(conv->attrs.GetInts("dilation"), (Ints{1, 1}));
  EXPECT_EQ(conv->op->pattern, OpPattern::kOutEWiseFusable);
  // Dimensions are int64, as in types built from integers (topi computes in int32).
  for (const PrimExpr& dim : conv.type().shape()) EXPECT_EQ(dim.dtype(), DataType::Int(64));
}

TEST(GraphOpsNN, SymbolicBatchDimensionsFlowThrough) {
  loom::Var batch = SizeVar("batch", DataType::Int(64));
  auto typed = [&](std::vector<int64_t> rest) {
    std::vector<PrimExpr> shape = {batch};
    for (int64_t d : rest) shape.push_back(IntImm(DataType::Int(64), d));
    return MakeVar("x", TensorType(shape, kF32));
  };
  EXPECT_EQ(MakeCall("nn.dense", {typed({5}), In("w", {4, 5})}).type().str(),
            "Tensor[(batch, 4), float32]");
  EXPECT_EQ(MakeCall("nn.softmax", {typed({5})}).type().str(), "Tensor[(batch, 5), float32]");
  EXPECT_EQ(MakeCall("nn.global_avg_pool2d", {typed({3, 4, 4})}).type().str(),
            "Tensor[(batch, 3, 1, 1), float32]");
  EXPECT_EQ(MakeCall("nn.conv2d", {typed({3, 8, 8}), In("w", {4, 3, 3, 3})}).type().str(),
            "Tensor[(batch, 4, 6, 6), float32]");
  // conv2d needs constant sizes but for the batch: the message says so.
  Var tall = MakeVar("x", TensorType(std::vector<PrimExpr>{IntImm(DataType::Int(64), 1),
                                                           IntImm(DataType::Int(64), 3), batch,
                                                           IntImm(DataType::Int(64), 8)},
                                     kF32));
  std::string message = ErrorOf([&] {
    MakeCall("nn.conv2d", {tall, In("w", {4, 3, 3, 3})}, {}, "stem");
  });
  EXPECT_TRUE(Has(message, "nn.conv2d 'stem': ")) << message;
  EXPECT_TRUE(Has(message, "is symbolic; the operator needs constant sizes but for the batch"))
      << message;
}

TEST(GraphOpsNN, Conv2DErrorsNameTheCallAndShapes) {
  std::string message = ErrorOf([] {
    MakeCall("nn.conv2d", {In("x", {1, 4, 9, 9}), In("w", {6, 3, 3, 3})}, {{"groups", int64_t{2}}},
             "conv_2");
  });
  EXPECT_TRUE(Has(message, "nn.conv2d 'conv_2': ")) << message;
  EXPECT_TRUE(Has(message, "has 3 input channels per group")) << message;
  EXPECT_TRUE(Has(message,
                  "data Tensor[(1, 4, 9, 9), float32], weight Tensor[(6, 3, 3, 3), "
                  "float32]"))
      << message;
  EXPECT_EQ(ErrorOf([] {
              MakeCall("nn.conv2d", {In("x", {1, 4, 9, 9}), In("w", {6, 4, 3, 3})},
                       {{"strides", Ints{1, 1, 1}}});
            }),
            "nn.conv2d call: attribute 'strides' must hold 2 integers, got [1, 1, 1]");
}

TEST(GraphOpsNN, QuantizedOperatorsTypesAndErrors) {
  const DataType u8 = DataType::UInt(8), i8 = DataType::Int(8);
  Call dequantized = MakeCall("qnn.dequantize", {In("q", {2, 3, 4}, u8), In("s", {3}, kF32),
                                                 In("z", {3}, u8)});
  EXPECT_EQ(dequantized.type().str(), "Tensor[(2, 3, 4), float32]");
  std::string message = ErrorOf([&] {
    MakeCall("qnn.dequantize", {In("q", {2, 3, 4}, u8), In("s", {4}, kF32), In("z", {4}, u8)},
             {}, "dq");
  });
  EXPECT_TRUE(Has(message, "qnn.dequantize 'dq': ")) << message;
  EXPECT_TRUE(Has(message, "axis 1 of 'q' has 3 slices, one value each")) << message;
  message = ErrorOf([&] {
    MakeCall("qnn.dequantize", {In("q", {3}, u8), In("s", {}, kF32), In("z", {}, i8)});
  });
  EXPECT_TRUE(Has(message, "zero point of its type")) << message;

  Call conv = MakeCall("qnn.conv2d", {In("x", {1, 4, 9, 9}, u8), In("w", {6, 4, 3, 3}, i8)},
                       {{"data_zero_point", int64_t{128}}, {"padding", Ints{1, 1, 1, 1}}});
  EXPECT_EQ(conv.type().str(), "Tensor[(1, 6, 9, 9), int32]");
  message = ErrorOf([&] {
    MakeCall("qnn.conv2d", {In("x", {1, 4, 9, 9}, i8), In("w", {6, 4, 3, 3}, i8)},
             {{"data_zero_point", int64_t{200}}}, "qconv");
  });
  EXPECT_TRUE(Has(message, "qnn.conv2d 'qconv': ")) << message;
  EXPECT_TRUE(Has(message, "with a zero point in its range, got int8 with zero point 200"))
      << message;
}

TEST(GraphOpsNN, Conv2DMatchesReference) {
  Attrs attrs = {{"strides", Ints{2, 1}},
                 {"padding", Ints{1, 0, 1, 2}},
                 {"dilation", Ints{1, 2}},
                 {"groups", int64_t{2}}};
  Call conv = MakeCall("nn.conv2d", {In("x", {1, 4, 7, 6}), In("w", {6, 2, 3, 3})}, attrs);
  ASSERT_EQ(conv.type().str(), "Tensor[(1, 6, 4, 4), float32]");
  NDArray x = RandomArray({1, 4, 7, 6}, kF32, 1), w = RandomArray({6, 2, 3, 3}, kF32, 2);
  topi::Conv2DAttrs a;
  a.strides = {2, 1};
  a.pads = {1, 0, 1, 2};
  a.dilations = {1, 2};
  a.groups = 2;
  std::vector<double> want = topi::test::ReferenceConv2D(ToHost(x), ToHost(w), a, 4, 4);
  ExpectAloneAndWithRelu(conv, {x, w}, want, 1e-4, "conv2d");
}

TEST(GraphOpsNN, Conv1DMatchesReference) {
  Call conv = MakeCall("nn.conv1d", {In("x", {2, 2, 9}), In("w", {3, 2, 3})},
                       {{"strides", Ints{2}}, {"padding", Ints{1, 2}}, {"dilation", Ints{1}}});
  ASSERT_EQ(conv.type().str(), "Tensor[(2, 3, 5), float32]");
  NDArray x = RandomArray({2, 2, 9}, kF32, 3), w = RandomArray({3, 2, 3}, kF32, 4);
  std::vector<double> want;
  for (int n = 0; n < 2; ++n)
    for (int k = 0; k < 3; ++k)
      for (int q = 0; q < 5; ++q) {
        double total = 0;
        for (int c = 0; c < 2; ++c)
          for (int s = 0; s < 3; ++s) {
            int pos = q * 2 + s - 1;
            if (pos >= 0 && pos < 9)
              total += GetFloat(x, (n * 2 + c) * 9 + pos) * GetFloat(w, (k * 2 + c) * 3 + s);
          }
        want.push_back(total);
      }
  test::ExpectClose(RunCall(conv, {x, w}), want, 1e-4, "conv1d");
}

TEST(GraphOpsNN, Conv2DTransposeMatchesReference) {
  // data [1, 2, 3, 3], weight [C=2, K=3, 2, 2], stride 2, output_padding 1:
  // P = (3 - 1) * 2 + (2 - 1) + 1 + 1 = 7.
  Call conv = MakeCall("nn.conv2d_transpose", {In("x", {1, 2, 3, 3}), In("w", {2, 3, 2, 2})},
                       {{"strides", Ints{2, 2}}, {"output_padding", Ints{1, 1}}});
  ASSERT_EQ(conv.type().str(), "Tensor[(1, 3, 7, 7), float32]");
  NDArray x = RandomArray({1, 2, 3, 3}, kF32, 5), w = RandomArray({2, 3, 2, 2}, kF32, 6);
  std::vector<double> want(3 * 7 * 7, 0.0);
  for (int c = 0; c < 2; ++c)
    for (int h = 0; h < 3; ++h)
      for (int wi = 0; wi < 3; ++wi)
        for (int k = 0; k < 3; ++k)
          for (int r = 0; r < 2; ++r)
            for (int s = 0; s < 2; ++s) {
              want[(k * 7 + h * 2 + r) * 7 + wi * 2 + s] +=
                  GetFloat(x, (c * 3 + h) * 3 + wi) * GetFloat(w, ((c * 3 + k) * 2 + r) * 2 + s);
            }
  test::ExpectClose(RunCall(conv, {x, w}), want, 1e-4, "conv2d_transpose");
}

TEST(GraphOpsNN, OtherConvolutionErrorsNameTheCallAndShapes) {
  std::string message = ErrorOf([] {
    MakeCall("nn.conv2d_transpose", {In("x", {1, 2, 3, 3}), In("w", {3, 3, 2, 2})}, {}, "up");
  });
  EXPECT_TRUE(Has(message, "nn.conv2d_transpose 'up': ")) << message;
  EXPECT_TRUE(Has(message,
                  "data Tensor[(1, 2, 3, 3), float32], weight Tensor[(3, 3, 2, 2), "
                  "float32]"))
      << message;
  message = ErrorOf([] {
    MakeCall("nn.conv1d", {In("x", {1, 2, 3, 3}), In("w", {3, 2, 2})}, {}, "c1");
  });
  EXPECT_TRUE(Has(message, "nn.conv1d 'c1': ")) << message;
  EXPECT_TRUE(Has(message, "must be 3-d")) << message;
  EXPECT_EQ(ErrorOf([] {
              MakeCall("nn.conv1d", {In("x", {1, 2, 9}), In("w", {3, 2, 2})},
                       {{"padding", Ints{1, 1, 1, 1}}}, "c1");
            }),
            "nn.conv1d 'c1': attribute 'padding' must hold 2 integers, got [1, 1, 1, 1]");
}

// ---- matrix products

// a [B, M, K] x b [B, K, N] (b's batch 1 broadcasting), row-major.
std::vector<double> ReferenceMatmul(const NDArray& a, const NDArray& b, int64_t B, int64_t M,
                                    int64_t K, int64_t N, bool b_transposed = false,
                                    bool b_batched = true) {
  std::vector<double> out;
  for (int64_t n = 0; n < B; ++n)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double total = 0;
        int64_t base = b_batched ? n * K * N : 0;
        for (int64_t k = 0; k < K; ++k) {
          total += GetFloat(a, (n * M + i) * K + k) *
                   GetFloat(b, base + (b_transposed ? j * K + k : k * N + j));
        }
        out.push_back(total);
      }
  return out;
}

TEST(GraphOpsNN, DenseTypeErrorsAndReference) {
  Call dense = MakeCall("nn.dense", {In("x", {2, 3, 5}), In("w", {4, 5})});
  EXPECT_EQ(dense.type().str(), "Tensor[(2, 3, 4), float32]");
  std::string message = ErrorOf([] {
    MakeCall("nn.dense", {In("x", {2, 5}), In("w", {4, 6})}, {}, "fc");
  });
  EXPECT_TRUE(Has(message, "nn.dense 'fc': ")) << message;
  EXPECT_TRUE(Has(message, "data Tensor[(2, 5), float32], weight Tensor[(4, 6), float32]"))
      << message;
  EXPECT_EQ(ErrorOf([] {
              MakeCall("nn.dense", {In("x", {2, 5}), In("w", {1, 4, 5})}, {}, "fc");
            }),
            "nn.dense 'fc': input 1 ('weight') must be 2-d, got Tensor[(1, 4, 5), float32]");

  NDArray x = RandomArray({2, 3, 5}, kF32, 7), w = RandomArray({4, 5}, kF32, 8);
  std::vector<double> want = ReferenceMatmul(x, w, 1, 6, 5, 4, true, false);
  // With the epilogue: the x86 register-tiled schedule.
  ExpectAloneAndWithRelu(dense, {x, w}, want, 1e-5, "dense");
}

TEST(GraphOpsNN, MatmulBroadcastsAndTakesVectors) {
  EXPECT_EQ(MakeCall("nn.matmul", {In("a", {2, 1, 3, 4}), In("b", {5, 4, 6})}).type().str(),
            "Tensor[(2, 5, 3, 6), float32]");
  EXPECT_EQ(MakeCall("nn.matmul", {In("a", {4}), In("b", {4, 6})}).type().str(),
            "Tensor[(6,), float32]");
  EXPECT_EQ(MakeCall("nn.matmul", {In("a", {3, 4}), In("b", {4})}).type().str(),
            "Tensor[(3,), float32]");
  std::string message = ErrorOf([] {
    MakeCall("nn.matmul", {In("a", {3, 4}), In("b", {5, 6})}, {}, "mm");
  });
  EXPECT_TRUE(Has(message, "nn.matmul 'mm': ")) << message;
  EXPECT_TRUE(Has(message, "a Tensor[(3, 4), float32], b Tensor[(5, 6), float32]")) << message;

  Call mm = MakeCall("nn.matmul", {In("a", {2, 3, 4}), In("b", {4, 5})});
  NDArray a = RandomArray({2, 3, 4}, kF32, 9), b = RandomArray({4, 5}, kF32, 10);
  std::vector<double> want = ReferenceMatmul(a, b, 2, 3, 4, 5, false, false);
  ExpectAloneAndWithRelu(mm, {a, b}, want, 1e-5, "matmul");
  // A vector operand: the generic schedules.
  Call mv = MakeCall("nn.matmul", {In("a", {3, 4}), In("b", {4})});
  NDArray a2 = RandomArray({3, 4}, kF32, 9), v = RandomArray({4}, kF32, 11);
  std::vector<double> want_mv = ReferenceMatmul(a2, v, 1, 3, 4, 1, false, false);
  ExpectAloneAndWithRelu(mv, {a2, v}, want_mv, 1e-5, "matrix-vector");
}

TEST(GraphOpsNN, BatchMatmulX86AndGeneric) {
  EXPECT_EQ(ErrorOf([] {
              MakeCall("nn.batch_matmul", {In("a", {4, 8}), In("b", {2, 8, 3})});
            }),
            "nn.batch_matmul call: input 0 ('a') must be 3-d, got Tensor[(4, 8), float32]");
  // N a multiple of 16 (whole vector tiles), and N = 20 (a scalar tail).
  for (int64_t N : {32, 20}) {
    Call bmm = MakeCall("nn.batch_matmul", {In("a", {2, 5, 8}), In("b", {2, 8, N})});
    ASSERT_EQ(bmm.type().str(), "Tensor[(2, 5, " + std::to_string(N) + "), float32]");
    NDArray a = RandomArray({2, 5, 8}, kF32, 11), b = RandomArray({2, 8, N}, kF32, 12);
    std::vector<double> want = ReferenceMatmul(a, b, 2, 5, 8, N);
    ExpectAloneAndWithRelu(bmm, {a, b}, want, 1e-5, "batch_matmul");
  }
}

// ---- bias, normalization

TEST(GraphOpsNN, BiasAddAlongAxis) {
  EXPECT_EQ(MakeCall("nn.bias_add", {In("x", {2, 3, 4}), In("b", {4})}, {{"axis", int64_t{-1}}})
                .type()
                .str(),
            "Tensor[(2, 3, 4), float32]");
  EXPECT_EQ(ErrorOf([] {
              MakeCall("nn.bias_add", {In("x", {2, 3, 4, 5}), In("b", {4})}, {}, "b");
            }),
            "nn.bias_add 'b': bias must be Tensor[(3,), float32] (dimension 1 of data "
            "Tensor[(2, 3, 4, 5), float32]), got Tensor[(4,), float32]");
  EXPECT_TRUE(
      Has(ErrorOf([] {
            MakeCall("nn.bias_add", {In("x", {2, 3}), In("b", {3})}, {{"axis", int64_t{2}}});
          }),
          "nn.bias_add call: axis 2 is out of range for data Tensor[(2, 3), float32]"));

  Call add = MakeCall("nn.bias_add", {In("x", {2, 3, 4, 5}), In("b", {3})});
  NDArray x = RandomArray({2, 3, 4, 5}, kF32, 13), b = RandomArray({3}, kF32, 14);
  std::vector<double> want;
  for (int64_t i = 0; i < x.NumElements(); ++i)
    want.push_back(GetFloat(x, i) + GetFloat(b, (i / 20) % 3));
  test::ExpectClose(RunCall(add, {x, b}), want, 1e-6, "bias_add");
}

TEST(GraphOpsNN, BatchNormMatchesReference) {
  Var x = In("x", {2, 3, 4});
  std::vector<Expr> params = {In("gamma", {3}), In("beta", {3}), In("mean", {3}), In("var", {3})};
  std::vector<Expr> args = {x};
  args.insert(args.end(), params.begin(), params.end());
  Call bn = MakeCall("nn.batch_norm", args, {{"epsilon", 1e-3}});
  EXPECT_EQ(bn.type().str(), "Tensor[(2, 3, 4), float32]");
  EXPECT_TRUE(Has(ErrorOf([&] {
                    MakeCall("nn.batch_norm", args, {{"axis", int64_t{2}}}, "bn");
                  }),
                  "nn.batch_norm 'bn': only the channel axis 1 of NC... data is supported, got "
                  "axis 2 for data Tensor[(2, 3, 4), float32]"));
  std::vector<Expr> bad = args;
  bad[1] = In("gamma", {4});
  std::string message = ErrorOf([&] { MakeCall("nn.batch_norm", bad, {}, "bn"); });
  EXPECT_TRUE(Has(message, "nn.batch_norm 'bn': ")) << message;
  EXPECT_TRUE(Has(message, "gamma Tensor[(4,), float32]")) << message;

  NDArray data = RandomArray({2, 3, 4}, kF32, 15);
  std::vector<NDArray> p = {RandomArray({3}, kF32, 16), RandomArray({3}, kF32, 17),
                            RandomArray({3}, kF32, 18), RandomArray({3}, kF32, 19)};
  for (int c = 0; c < 3; ++c) test::SetValue(p[3], c, std::abs(GetFloat(p[3], c)) + 0.1);
  std::vector<double> want;
  for (int64_t i = 0; i < data.NumElements(); ++i) {
    int64_t c = (i / 4) % 3;
    want.push_back((GetFloat(data, i) - GetFloat(p[2], c)) / std::sqrt(GetFloat(p[3], c) + 1e-3) *
                       GetFloat(p[0], c) +
                   GetFloat(p[1], c));
  }
  test::ExpectClose(RunCall(bn, {data, p[0], p[1], p[2], p[3]}), want, 1e-5, "batch_norm");
}

// x normalized (mean 0, variance 1) over each of `groups` consecutive runs of `size` elements.
std::vector<double> Normalized(const NDArray& x, int64_t groups, int64_t size, double epsilon) {
  std::vector<double> out;
  for (int64_t g = 0; g < groups; ++g) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < size; ++i) mean += GetFloat(x, g * size + i) / size;
    for (int64_t i = 0; i < size; ++i) var += std::pow(GetFloat(x, g * size + i) - mean, 2) / size;
    for (int64_t i = 0; i < size; ++i) {
      out.push_back((GetFloat(x, g * size + i) - mean) / std::sqrt(var + epsilon));
    }
  }
  return out;
}

// layer_norm's row schedule (rows in parallel, statistics 16 lanes at a time over rows of
// 64) and, normalizing every dimension (axis 0: no rows), the generic reduction schedule.
TEST(GraphOpsNN, LayerNormOverRowsAndOverEverything) {
  for (int64_t axis : {-1, 0}) {
    const std::vector<int64_t> normalized =
        axis == 0 ? std::vector<int64_t>{1, 40, 64} : std::vector<int64_t>{64};
    const int64_t size = axis == 0 ? 2560 : 64;
    Call ln = MakeCall("nn.layer_norm",
                       {In("x", {1, 40, 64}), In("g", normalized), In("b", normalized)},
                       {{"axis", axis}});
    NDArray x = RandomArray({1, 40, 64}, kF32, 25), g = RandomArray(normalized, kF32, 26),
            b = RandomArray(normalized, kF32, 27);
    std::vector<double> want = Normalized(x, 2560 / size, size, 1e-5);
    for (size_t i = 0; i < want.size(); ++i)
      want[i] = want[i] * GetFloat(g, i % size) + GetFloat(b, i % size);
    test::ExpectClose(RunCall(ln, {x, g, b}), want, 1e-4, "layer_norm axis " + std::to_string(axis));
  }
}

TEST(GraphOpsNN, LayerAndInstanceNormMatchReference) {
  Call ln = MakeCall("nn.layer_norm", {In("x", {2, 3, 4}), In("g", {3, 4}), In("b", {3, 4})},
                     {{"axis", int64_t{-2}}});
  EXPECT_EQ(ln.type().str(), "Tensor[(2, 3, 4), float32]");
  std::string message = ErrorOf([] {
    MakeCall("nn.layer_norm", {In("x", {2, 3, 4}), In("g", {3}), In("b", {4})}, {}, "ln");
  });
  EXPECT_TRUE(Has(message, "nn.layer_norm 'ln': ")) << message;
  NDArray x = RandomArray({2, 3, 4}, kF32, 20), g = RandomArray({3, 4}, kF32, 21),
          b = RandomArray({3, 4}, kF32, 22);
  std::vector<double> want = Normalized(x, 2, 12, 1e-5);
  for (size_t i = 0; i < want.size(); ++i)
    want[i] = want[i] * GetFloat(g, i % 12) + GetFloat(b, i % 12);
  test::ExpectClose(RunCall(ln, {x, g, b}), want, 1e-4, "layer_norm");

  Call in = MakeCall("nn.instance_norm", {In("x", {2, 3, 4}), In("g", {3}), In("b", {3})});
  NDArray gc = RandomArray({3}, kF32, 23), bc = RandomArray({3}, kF32, 24);
  want = Normalized(x, 6, 4, 1e-5);
  for (size_t i = 0; i < want.size(); ++i) {
    want[i] = want[i] * GetFloat(gc, (i / 4) % 3) + GetFloat(bc, (i / 4) % 3);
  }
  test::ExpectClose(RunCall(in, {x, gc, bc}), want, 1e-4, "instance_norm");
}

TEST(GraphOpsNN, InstanceNormAndGlobalPoolErrors) {
  std::string message = ErrorOf([] {
    MakeCall("nn.instance_norm", {In("x", {2, 3, 4}), In("g", {2}), In("b", {3})}, {}, "in");
  });
  EXPECT_TRUE(Has(message, "nn.instance_norm 'in': ")) << message;
  EXPECT_TRUE(Has(message, "gamma Tensor[(2,), float32]")) << message;
  message = ErrorOf([] { MakeCall("nn.global_avg_pool2d", {In("x", {2, 3, 4})}, {}, "gap"); });
  EXPECT_TRUE(Has(message, "nn.global_avg_pool2d 'gap': ")) << message;
  EXPECT_TRUE(Has(message, "data Tensor[(2, 3, 4), float32]")) << message;
}

TEST(GraphOpsNN, LrnMatchesReference) {
  EXPECT_TRUE(Has(ErrorOf([] {
                    MakeCall("nn.lrn", {In("x", {1, 4, 2})});
                  }),
                  "nn.lrn call: the required attribute 'size'"));
  Call lrn = MakeCall("nn.lrn", {In("x", {1, 4, 2})}, {{"size", int64_t{3}}, {"alpha", 0.5}});
  NDArray x = RandomArray({1, 4, 2}, kF32, 25);
  std::vector<double> want;
  for (int c = 0; c < 4; ++c)
    for (int i = 0; i < 2; ++i) {
      double square_sum = 0;
      for (int j = std::max(0, c - 1); j <= std::min(3, c + 1); ++j) {
        square_sum += std::pow(GetFloat(x, j * 2 + i), 2);
      }
      want.push_back(GetFloat(x, c * 2 + i) / std::pow(1.0 + 0.5 / 3 * square_sum, 0.75));
    }
  test::ExpectClose(RunCall(lrn, {x}), want, 1e-4, "lrn");
}

// ---- pooling

// NCHW pooling of x [1, C, H, W] with a square window k, stride s, symmetric pad p.
std::vector<double> ReferencePool(const NDArray& x, int64_t k, int64_t s, int64_t p, bool max,
                                  bool include_pad) {
  std::vector<int64_t> shape = x.Shape();
  int64_t C = shape[1], H = shape[2], W = shape[3];
  int64_t P = (H + 2 * p - k) / s + 1, Q = (W + 2 * p - k) / s + 1;
  std::vector<double> out;
  for (int64_t c = 0; c < C; ++c)
    for (int64_t i = 0; i < P; ++i)
      for (int64_t j = 0; j < Q; ++j) {
        double best = -1e300, total = 0;
        int64_t count = 0;
        for (int64_t r = 0; r < k; ++r)
          for (int64_t t = 0; t < k; ++t) {
            int64_t h = i * s + r - p, w = j * s + t - p;
            if (h < 0 || h >= H || w < 0 || w >= W) continue;
            double v = GetFloat(x, (c * H + h) * W + w);
            best = std::max(best, v);
            total += v;
            ++count;
          }
        out.push_back(max ? best : total / (include_pad ? k * k : count));
      }
  return out;
}

TEST(GraphOpsNN, PoolTypes) {
  Attrs attrs = {{"pool_size", Ints{3, 3}}, {"strides", Ints{2, 2}}};
  EXPECT_EQ(MakeCall("nn.max_pool2d", {In("x", {1, 1, 6, 6})}, attrs).type().str(),
            "Tensor[(1, 1, 2, 2), float32]");
  EXPECT_EQ(MakeCall("nn.max_pool2d", {In("x", {1, 1, 6, 6})}, attrs.With("ceil_mode", int64_t{1}))
                .type()
                .str(),
            "Tensor[(1, 1, 3, 3), float32]");
  EXPECT_EQ(MakeCall("nn.avg_pool2d", {In("x", {1, 2, 6, 6, 16})},
                     attrs.With("layout", std::string("NCHW16c")))
                .type()
                .str(),
            "Tensor[(1, 2, 2, 2, 16), float32]");
  EXPECT_EQ(ErrorOf([] {
              MakeCall("nn.max_pool2d", {In("x", {1, 1, 6, 6})}, {}, "pool");
            }),
            "nn.max_pool2d 'pool': the required attribute 'pool_size' (ints: window (h, w)) is "
            "missing");
  std::string message = ErrorOf([] {
    MakeCall("nn.avg_pool2d", {In("x", {1, 1, 6, 6})},
             {{"pool_size", Ints{2, 2}}, {"layout", std::string("NHWC")}}, "pool");
  });
  EXPECT_TRUE(Has(message, "nn.avg_pool2d 'pool': ")) << message;
  EXPECT_TRUE(Has(message, "NHWC")) << message;
  EXPECT_FALSE(
      MakeCall("nn.max_pool2d", {In("x", {1, 1, 6, 6})}, attrs)->attrs.Has("count_include_pad"));
}

TEST(GraphOpsNN, PoolsMatchReference) {
  NDArray x = RandomArray({1, 2, 7, 7}, kF32, 26);
  Attrs attrs = {{"pool_size", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"padding", Ints{1, 1, 1, 1}}};
  Call max_pool = MakeCall("nn.max_pool2d", {In("x", {1, 2, 7, 7})}, attrs);
  std::vector<double> want = ReferencePool(x, 3, 2, 1, true, false);
  ExpectAloneAndWithRelu(max_pool, {x}, want, 1e-6, "max_pool2d");
  test::ExpectClose(RunCall(MakeCall("nn.avg_pool2d", {In("x", {1, 2, 7, 7})}, attrs), {x}),
                    ReferencePool(x, 3, 2, 1, false, false), 1e-5, "avg_pool2d");
  test::ExpectClose(RunCall(MakeCall("nn.avg_pool2d", {In("x", {1, 2, 7, 7})},
                                     attrs.With("count_include_pad", int64_t{1})),
                            {x}),
                    ReferencePool(x, 3, 2, 1, false, true), 1e-5, "avg_pool2d count_include_pad");
}

TEST(GraphOpsNN, GlobalPoolsMatchReference) {
  Call avg = MakeCall("nn.global_avg_pool2d", {In("x", {1, 3, 4, 5})});
  Call max = MakeCall("nn.global_max_pool2d", {In("x", {1, 3, 4, 5})});
  EXPECT_EQ(avg.type().str(), "Tensor[(1, 3, 1, 1), float32]");
  NDArray x = RandomArray({1, 3, 4, 5}, kF32, 27);
  std::vector<double> want_avg, want_max;
  for (int c = 0; c < 3; ++c) {
    double total = 0, best = -1e300;
    for (int i = 0; i < 20; ++i) {
      total += GetFloat(x, c * 20 + i);
      best = std::max(best, GetFloat(x, c * 20 + i));
    }
    want_avg.push_back(total / 20);
    want_max.push_back(best);
  }
  test::ExpectClose(RunCall(avg, {x}), want_avg, 1e-5, "global_avg_pool2d");
  test::ExpectClose(RunCall(max, {x}), want_max, 0, "global_max_pool2d");
}

// ---- softmax

TEST(GraphOpsNN, SoftmaxAlongAxisMatchesReference) {
  EXPECT_TRUE(Has(ErrorOf([] {
                    MakeCall("nn.softmax", {In("x", {2, 3})}, {{"axis", int64_t{2}}}, "sm");
                  }),
                  "nn.softmax 'sm': "));
  NDArray x = RandomArray({2, 3, 4}, kF32, 28);
  std::vector<double> soft(24), log_soft(24);
  // axis 1 for softmax (stride 4), axis -1 for log_softmax (stride 1).
  for (int n = 0; n < 2; ++n)
    for (int j = 0; j < 4; ++j) {
      double total = 0;
      for (int c = 0; c < 3; ++c) total += std::exp(GetFloat(x, n * 12 + c * 4 + j));
      for (int c = 0; c < 3; ++c)
        soft[n * 12 + c * 4 + j] = std::exp(GetFloat(x, n * 12 + c * 4 + j)) / total;
    }
  for (int row = 0; row < 6; ++row) {
    double total = 0;
    for (int j = 0; j < 4; ++j) total += std::exp(GetFloat(x, row * 4 + j));
    for (int j = 0; j < 4; ++j) log_soft[row * 4 + j] = GetFloat(x, row * 4 + j) - std::log(total);
  }
  test::ExpectClose(
      RunCall(MakeCall("nn.softmax", {In("x", {2, 3, 4})}, {{"axis", int64_t{1}}}), {x}), soft,
      1e-5, "softmax");
  test::ExpectClose(RunCall(MakeCall("nn.log_softmax", {In("x", {2, 3, 4})}), {x}), log_soft, 1e-5,
                    "log_softmax");
}

}  // namespace
}  // namespace loom::graph
