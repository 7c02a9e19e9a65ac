// The CNN operator converters (ops_nn.cc), each imported from a one-node model, compiled at
// -O0 and -O3 and compared with a naive reference written here from the ONNX spec.
#include <gtest/gtest.h>

#include <cmath>

#include "onnx_test_util.h"

namespace loom::frontend::onnx::test {
namespace {

using Shape = std::vector<int64_t>;

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Row-major offset of `index` in `shape`.
int64_t Offset(const Shape& shape, const Shape& index) {
  int64_t offset = 0;
  for (size_t d = 0; d < shape.size(); ++d) offset = offset * shape[d] + index[d];
  return offset;
}

double At(const runtime::NDArray& a, const Shape& index) {
  return GetFloat(a, Offset(a.Shape(), index));
}

// A float32 array of `shape` whose element at `index` is f(index).
runtime::NDArray Generate(const Shape& shape, const std::function<double(const Shape&)>& f) {
  runtime::NDArray out = runtime::NDArray::Empty(shape, kF32);
  Shape index(shape.size(), 0);
  for (int64_t i = 0; i < out.NumElements(); ++i) {
    int64_t rest = i;
    for (size_t d = shape.size(); d-- > 0;) {
      index[d] = rest % shape[d];
      rest /= shape[d];
    }
    SetValue(out, i, f(index));
  }
  return out;
}

runtime::NDArray Map(const runtime::NDArray& x, const std::function<double(double)>& f) {
  return Generate(x.Shape(), [&](const Shape& i) { return f(At(x, i)); });
}

// Runs `op` on one input "x" of x's shape with `attrs` and compares with f applied to x.
void ExpectUnary(const std::string& op, const std::vector<::onnx::AttributeProto>& attrs,
                 const std::function<double(double)>& f, int64_t opset = 17) {
  SCOPED_TRACE(op);
  runtime::NDArray x = RandomArray({2, 3, 4}, kF32, 7);
  ModelBuilder model(opset);
  model.Input("x", x.Shape()).Node(op, {"x"}, {"y"}, attrs).Output("y");
  ExpectOutputs(model, {x}, {Map(x, f)}, 1e-5);
}

// --- convolutions ---------------------------------------------------------------------

struct ConvParams {
  Shape strides{1, 1}, pads{0, 0, 0, 0}, dilations{1, 1};  // pads: top, left, bottom, right
  int64_t group = 1;
  Shape output_padding{0, 0};
};

// ONNX Conv of NCHW x and KCRS w (a 1-d conv is this with H = R = 1).
runtime::NDArray ConvRef(const runtime::NDArray& x, const runtime::NDArray& w,
                         const runtime::NDArray& bias, const ConvParams& p) {
  Shape xs = x.Shape(), ws = w.Shape();
  int64_t H = xs[2], W = xs[3], K = ws[0], Cg = ws[1], R = ws[2], S = ws[3];
  int64_t P = (H + p.pads[0] + p.pads[2] - p.dilations[0] * (R - 1) - 1) / p.strides[0] + 1;
  int64_t Q = (W + p.pads[1] + p.pads[3] - p.dilations[1] * (S - 1) - 1) / p.strides[1] + 1;
  int64_t Kg = K / p.group;
  return Generate({xs[0], K, P, Q}, [&](const Shape& i) {
    int64_t g = i[1] / Kg;
    double sum = bias.defined() ? GetFloat(bias, i[1]) : 0;
    for (int64_t c = 0; c < Cg; ++c) {
      for (int64_t r = 0; r < R; ++r) {
        for (int64_t s = 0; s < S; ++s) {
          int64_t h = i[2] * p.strides[0] - p.pads[0] + r * p.dilations[0];
          int64_t v = i[3] * p.strides[1] - p.pads[1] + s * p.dilations[1];
          if (h < 0 || h >= H || v < 0 || v >= W) continue;
          sum += At(x, {i[0], g * Cg + c, h, v}) * At(w, {i[1], c, r, s});
        }
      }
    }
    return sum;
  });
}

// ONNX ConvTranspose of NCHW x and C(K/group)RS w: every input element scatters its window.
runtime::NDArray ConvTransposeRef(const runtime::NDArray& x, const runtime::NDArray& w,
                                  const ConvParams& p) {
  Shape xs = x.Shape(), ws = w.Shape();
  int64_t C = xs[1], H = xs[2], W = xs[3], Kg = ws[1], R = ws[2], S = ws[3];
  int64_t Cg = C / p.group;
  int64_t P = (H - 1) * p.strides[0] - p.pads[0] - p.pads[2] + p.dilations[0] * (R - 1) + 1 +
              p.output_padding[0];
  int64_t Q = (W - 1) * p.strides[1] - p.pads[1] - p.pads[3] + p.dilations[1] * (S - 1) + 1 +
              p.output_padding[1];
  runtime::NDArray y = Generate({xs[0], Kg * p.group, P, Q}, [](const Shape&) { return 0.0; });
  for (int64_t n = 0; n < xs[0]; ++n) {
    for (int64_t c = 0; c < C; ++c) {
      int64_t g = c / Cg;
      for (int64_t h = 0; h < H; ++h) {
        for (int64_t v = 0; v < W; ++v) {
          for (int64_t k = 0; k < Kg; ++k) {
            for (int64_t r = 0; r < R; ++r) {
              for (int64_t s = 0; s < S; ++s) {
                int64_t oh = h * p.strides[0] - p.pads[0] + r * p.dilations[0];
                int64_t ow = v * p.strides[1] - p.pads[1] + s * p.dilations[1];
                if (oh < 0 || oh >= P || ow < 0 || ow >= Q) continue;
                int64_t at = Offset(y.Shape(), {n, g * Kg + k, oh, ow});
                SetValue(y, at, GetFloat(y, at) + At(x, {n, c, h, v}) * At(w, {c, k, r, s}));
              }
            }
          }
        }
      }
    }
  }
  return y;
}

TEST(OnnxConv, PadsStridesDilationsGroupsAndBias) {
  runtime::NDArray x = RandomArray({1, 4, 7, 6}, kF32, 1);
  runtime::NDArray w = RandomArray({6, 2, 3, 2}, kF32, 2);
  runtime::NDArray b = RandomArray({6}, kF32, 3);
  ModelBuilder model;
  model.Input("x", x.Shape()).Initializer("w", w).Initializer("b", b);
  // ONNX pads: x1_begin, x2_begin, x1_end, x2_end = top, left, bottom, right.
  model.Node("Conv", {"x", "w", "b"}, {"y"},
             {IntsAttr("pads", {1, 0, 2, 1}), IntsAttr("strides", {2, 1}),
              IntsAttr("dilations", {1, 2}), IntAttr("group", 2)},
             "conv");
  model.Output("y");
  ConvParams p{.strides = {2, 1}, .pads = {1, 0, 2, 1}, .dilations = {1, 2}, .group = 2};
  ExpectOutputs(model, {x}, {ConvRef(x, w, b, p)});
}

TEST(OnnxConv, AutoPad) {
  runtime::NDArray x = RandomArray({1, 2, 6, 7}, kF32, 4);
  runtime::NDArray w = RandomArray({3, 2, 4, 3}, kF32, 5);
  // 6 rows, stride 2, kernel 4: output 3 rows, total pad 2 + 4 - 6 = 2... and 7 columns,
  // stride 2, kernel 3: output 4, total pad 6 + 3 - 7 = 2; odd totals below.
  struct Case {
    const char* auto_pad;
    Shape strides;
    Shape pads;
  } cases[] = {{"SAME_UPPER", {2, 2}, {1, 1, 1, 1}},
               {"SAME_UPPER", {1, 1}, {1, 1, 2, 1}},  // total 3 rows: the odd one at the end
               {"SAME_LOWER", {1, 1}, {2, 1, 1, 1}},  // ... at the beginning
               {"VALID", {1, 2}, {0, 0, 0, 0}}};
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.auto_pad) + " strides " + std::to_string(c.strides[0]));
    ModelBuilder model;
    model.Input("x", x.Shape()).Initializer("w", w);
    model.Node("Conv", {"x", "w"}, {"y"},
               {StringAttr("auto_pad", c.auto_pad), IntsAttr("strides", c.strides)});
    model.Output("y");
    ConvParams p{.strides = c.strides, .pads = c.pads};
    ExpectOutputs(model, {x}, {ConvRef(x, w, runtime::NDArray(), p)});
  }
}

TEST(OnnxConv, OneDimensionalConvolution) {
  runtime::NDArray x = RandomArray({2, 3, 9}, kF32, 6);
  runtime::NDArray w = RandomArray({4, 3, 3}, kF32, 7);
  runtime::NDArray b = RandomArray({4}, kF32, 8);
  ModelBuilder model;
  model.Input("x", x.Shape()).Initializer("w", w).Initializer("b", b);
  model.Node("Conv", {"x", "w", "b"}, {"y"},
             {IntsAttr("pads", {2, 1}), IntsAttr("strides", {2}), IntsAttr("kernel_shape", {3})});
  model.Output("y");
  ImportedModel imported = model.Import();
  EXPECT_TRUE(Contains(graph::ToText(imported.module), "nn.conv1d"));
  ConvParams p{.strides = {1, 2}, .pads = {0, 2, 0, 1}};
  runtime::NDArray y =
      ConvRef(x.CreateView({2, 3, 1, 9}, kF32), w.CreateView({4, 3, 1, 3}, kF32), b, p);
  ExpectOutputs(model, {x}, {y.CreateView({2, 4, 5}, kF32)});
}

TEST(OnnxConv, UnsupportedFormsAreErrors) {
  ModelBuilder conv3d;
  conv3d.Input("x", {1, 1, 2, 2, 2}).Initializer("w", RandomArray({1, 1, 1, 1, 1}, kF32, 1));
  conv3d.Node("Conv", {"x", "w"}, {"y"}, {}, "c3").Output("y");
  EXPECT_EQ(ErrorOf([&] { conv3d.Import(); }),
            "node 'c3' (Conv): only 1-d or 2-d spatial inputs are supported, got input 0 of "
            "shape [1, 1, 2, 2, 2]");

  ModelBuilder bad;
  bad.Input("x", {1, 1, 4, 4}).Initializer("w", RandomArray({1, 1, 3, 3}, kF32, 1));
  bad.Node("Conv", {"x", "w"}, {"y"}, {StringAttr("auto_pad", "SAME")}, "c").Output("y");
  EXPECT_TRUE(Contains(ErrorOf([&] { bad.Import(); }),
                       "auto_pad 'SAME' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID"));
  bad.proto().mutable_graph()->mutable_node(0)->mutable_attribute(0)->CopyFrom(
      IntsAttr("kernel_shape", {2, 2}));
  EXPECT_TRUE(Contains(ErrorOf([&] { bad.Import(); }),
                       "kernel_shape [2, 2] differs from the weight's spatial shape [3, 3]"));
}

TEST(OnnxConvTranspose, PadsOutputPaddingAndGroups) {
  runtime::NDArray x = RandomArray({1, 4, 3, 4}, kF32, 9);
  runtime::NDArray w = RandomArray({4, 3, 3, 2}, kF32, 10);  // C, K / group, R, S
  ModelBuilder model;
  model.Input("x", x.Shape()).Initializer("w", w);
  model.Node("ConvTranspose", {"x", "w"}, {"y"},
             {IntsAttr("strides", {2, 3}), IntsAttr("pads", {1, 0, 0, 1}),
              IntsAttr("output_padding", {1, 2}), IntAttr("group", 2)});
  model.Output("y");
  ConvParams p{.strides = {2, 3}, .pads = {1, 0, 0, 1}, .group = 2, .output_padding = {1, 2}};
  ExpectOutputs(model, {x}, {ConvTransposeRef(x, w, p)});
}

TEST(OnnxConvTranspose, OutputShapeAndSamePadding) {
  runtime::NDArray x = RandomArray({1, 2, 3, 3}, kF32, 11);
  runtime::NDArray w = RandomArray({2, 2, 3, 3}, kF32, 12);
  runtime::NDArray b = RandomArray({2}, kF32, 13);
  // Stride 2: the full output is 2 * 2 + 3 = 7; output_shape 6 pads 1 in total, at the
  // beginning (NOTSET puts the larger half first); SAME_UPPER asks for 3 * 2 = 6, the odd
  // pixel at the end.
  struct Case {
    std::vector<::onnx::AttributeProto> attrs;
    Shape pads;
  } cases[] = {{{IntsAttr("output_shape", {6, 7})}, {1, 0, 0, 0}},
               {{StringAttr("auto_pad", "SAME_UPPER")}, {0, 0, 1, 1}}};
  for (Case& c : cases) {
    c.attrs.push_back(IntsAttr("strides", {2, 2}));
    ModelBuilder model;
    model.Input("x", x.Shape()).Initializer("w", w).Initializer("b", b);
    model.Node("ConvTranspose", {"x", "w", "b"}, {"y"}, c.attrs).Output("y");
    runtime::NDArray y = ConvTransposeRef(x, w, ConvParams{.strides = {2, 2}, .pads = c.pads});
    for (int64_t i = 0; i < y.NumElements(); ++i) {
      SetValue(y, i, GetFloat(y, i) + GetFloat(b, i / (y.Shape()[2] * y.Shape()[3]) % 2));
    }
    ExpectOutputs(model, {x}, {y});
  }
}

TEST(OnnxConvTranspose, OutputShapeBeyondTheFullSizeAndOneDimensional) {
  // Stride 3, kernel 3 on 3 rows: the full output is 9; output_shape 10 adds a row at the
  // end (the ONNX reference's floor halves: begin 0, end -1).
  runtime::NDArray x = RandomArray({1, 1, 3, 3}, kF32, 40);
  runtime::NDArray w = RandomArray({1, 2, 3, 3}, kF32, 41);
  ModelBuilder model;
  model.Input("x", x.Shape()).Initializer("w", w);
  model.Node("ConvTranspose", {"x", "w"}, {"y"},
             {IntsAttr("strides", {3, 2}), IntsAttr("output_shape", {10, 8})});
  model.Output("y");
  ExpectOutputs(model, {x},
                {ConvTransposeRef(x, w, ConvParams{.strides = {3, 2}, .output_padding = {1, 1}})});

  runtime::NDArray x1 = RandomArray({2, 2, 5}, kF32, 42);
  runtime::NDArray w1 = RandomArray({2, 3, 3}, kF32, 43);
  ModelBuilder one_d;
  one_d.Input("x", x1.Shape()).Initializer("w", w1);
  one_d.Node("ConvTranspose", {"x", "w"}, {"y"},
             {IntsAttr("strides", {2}), IntsAttr("pads", {1, 0})});
  one_d.Output("y");
  runtime::NDArray y =
      ConvTransposeRef(x1.CreateView({2, 2, 1, 5}, kF32), w1.CreateView({2, 3, 1, 3}, kF32),
                       ConvParams{.strides = {1, 2}, .pads = {0, 1, 0, 0}});
  ExpectOutputs(one_d, {x1}, {y.CreateView({2, 3, 10}, kF32)});
}

// --- pooling and normalization ---------------------------------------------------------

// ONNX MaxPool / AveragePool over NCHW x (floor output sizes).
runtime::NDArray PoolRef(const runtime::NDArray& x, bool max, Shape kernel, const ConvParams& p,
                         bool count_include_pad) {
  Shape xs = x.Shape();
  int64_t H = xs[2], W = xs[3];
  int64_t P = (H + p.pads[0] + p.pads[2] - p.dilations[0] * (kernel[0] - 1) - 1) / p.strides[0] + 1;
  int64_t Q = (W + p.pads[1] + p.pads[3] - p.dilations[1] * (kernel[1] - 1) - 1) / p.strides[1] + 1;
  return Generate({xs[0], xs[1], P, Q}, [&](const Shape& i) {
    double acc = max ? -INFINITY : 0;
    int64_t count = 0;
    for (int64_t r = 0; r < kernel[0]; ++r) {
      for (int64_t s = 0; s < kernel[1]; ++s) {
        int64_t h = i[2] * p.strides[0] - p.pads[0] + r * p.dilations[0];
        int64_t v = i[3] * p.strides[1] - p.pads[1] + s * p.dilations[1];
        if (count_include_pad) ++count;
        if (h < 0 || h >= H || v < 0 || v >= W) continue;
        double value = At(x, {i[0], i[1], h, v});
        acc = max ? std::max(acc, value) : acc + value;
        if (!count_include_pad) ++count;
      }
    }
    return max ? acc : acc / static_cast<double>(count);
  });
}

TEST(OnnxPool, MaxAndAverage) {
  runtime::NDArray x = RandomArray({1, 3, 7, 8}, kF32, 14);
  ConvParams p{.strides = {2, 1}, .pads = {1, 0, 1, 2}, .dilations = {1, 2}};
  std::vector<::onnx::AttributeProto> attrs = {
      IntsAttr("kernel_shape", {3, 2}), IntsAttr("strides", {2, 1}), IntsAttr("pads", {1, 0, 1, 2}),
      IntsAttr("dilations", {1, 2})};
  ModelBuilder max;
  max.Input("x", x.Shape()).Node("MaxPool", {"x"}, {"y"}, attrs).Output("y");
  ExpectOutputs(max, {x}, {PoolRef(x, true, {3, 2}, p, false)});

  for (bool include : {false, true}) {
    SCOPED_TRACE(include ? "count_include_pad" : "padding not counted");
    std::vector<::onnx::AttributeProto> avg_attrs = attrs;
    avg_attrs.push_back(IntAttr("count_include_pad", include));
    ModelBuilder avg(19);  // dilations on AveragePool from opset 19
    avg.Input("x", x.Shape()).Node("AveragePool", {"x"}, {"y"}, avg_attrs).Output("y");
    ExpectOutputs(avg, {x}, {PoolRef(x, false, {3, 2}, p, include)});
  }
}

TEST(OnnxPool, CeilModeAndSamePadding) {
  runtime::NDArray x = RandomArray({1, 2, 5, 5}, kF32, 15);
  // ceil_mode: (5 - 2) / 2 + 1 rounded up is 3 windows, the last overhanging by one.
  ModelBuilder ceil;
  ceil.Input("x", x.Shape());
  ceil.Node(
      "MaxPool", {"x"}, {"y"},
      {IntsAttr("kernel_shape", {2, 2}), IntsAttr("strides", {2, 2}), IntAttr("ceil_mode", 1)});
  ceil.Output("y");
  ExpectOutputs(
      ceil, {x},
      {PoolRef(x, true, {2, 2}, ConvParams{.strides = {2, 2}, .pads = {0, 0, 1, 1}}, false)});
  // SAME_UPPER: 3 outputs of stride 2 and kernel 3 need 2 + 3 - 5 = 0... use stride 1.
  ModelBuilder same;
  same.Input("x", x.Shape());
  same.Node("AveragePool", {"x"}, {"y"},
            {IntsAttr("kernel_shape", {2, 3}), StringAttr("auto_pad", "SAME_UPPER")});
  same.Output("y");
  ExpectOutputs(same, {x}, {PoolRef(x, false, {2, 3}, ConvParams{.pads = {0, 1, 1, 1}}, false)});
}

TEST(OnnxPool, OneDimensionalAndEightBitInputs) {
  runtime::NDArray x = RandomArray({1, 2, 9}, kF32, 44);
  ModelBuilder avg;
  avg.Input("x", x.Shape());
  avg.Node("AveragePool", {"x"}, {"y"},
           {IntsAttr("kernel_shape", {3}), IntsAttr("strides", {2}), IntsAttr("pads", {1, 1})});
  avg.Output("y");
  runtime::NDArray y = PoolRef(x.CreateView({1, 2, 1, 9}, kF32), false, {1, 3},
                               ConvParams{.strides = {1, 2}, .pads = {0, 1, 0, 1}}, false);
  ExpectOutputs(avg, {x}, {y.CreateView({1, 2, 5}, kF32)});

  // uint8 max pooling runs in float32 and returns uint8.
  runtime::NDArray bytes = RandomArray({1, 1, 4, 4}, DataType::UInt(8), 45);
  ModelBuilder max;
  max.Input("x", bytes.Shape(), DataType::UInt(8));
  max.Node("MaxPool", {"x"}, {"y"},
           {IntsAttr("kernel_shape", {2, 2}), IntsAttr("strides", {2, 2})});
  max.Output("y");
  runtime::NDArray as_float = Map(bytes, [](double v) { return v; });
  runtime::NDArray pooled = PoolRef(as_float, true, {2, 2}, ConvParams{.strides = {2, 2}}, false);
  ExpectOutputs(max, {bytes}, {ArrayOf({1, 1, 2, 2}, DataType::UInt(8), Values(pooled))});

  ModelBuilder avg_int;
  avg_int.Input("x", bytes.Shape(), DataType::UInt(8));
  avg_int.Node("AveragePool", {"x"}, {"y"}, {IntsAttr("kernel_shape", {2, 2})}, "ap").Output("y");
  EXPECT_EQ(ErrorOf([&] { avg_int.Import(); }),
            "node 'ap' (AveragePool): input of type uint8 is not supported (float types)");
}

TEST(OnnxPool, GlobalPoolsAndErrors) {
  runtime::NDArray x = RandomArray({2, 3, 4, 5}, kF32, 16);
  auto reduce = [&](const runtime::NDArray& in, bool max) {
    Shape s = in.Shape();
    int64_t spatial = in.NumElements() / (s[0] * s[1]);
    Shape out = {s[0], s[1]};
    out.resize(s.size(), 1);
    return Generate(out, [&](const Shape& i) {
      double acc = max ? -INFINITY : 0;
      for (int64_t k = 0; k < spatial; ++k) {
        double v = GetFloat(in, (i[0] * s[1] + i[1]) * spatial + k);
        acc = max ? std::max(acc, v) : acc + v;
      }
      return max ? acc : acc / static_cast<double>(spatial);
    });
  };
  runtime::NDArray x3 = RandomArray({2, 3, 6}, kF32, 17);
  for (bool max : {false, true}) {
    for (const runtime::NDArray& in : {x, x3}) {
      ModelBuilder model;
      model.Input("x", in.Shape());
      model.Node(max ? "GlobalMaxPool" : "GlobalAveragePool", {"x"}, {"y"}).Output("y");
      ExpectOutputs(model, {in}, {reduce(in, max)});
    }
  }

  ModelBuilder indices;
  indices.Input("x", x.Shape());
  indices.Node("MaxPool", {"x"}, {"y", "i"}, {IntsAttr("kernel_shape", {2, 2})}, "mp");
  indices.Output("y");
  EXPECT_EQ(ErrorOf([&] { indices.Import(); }),
            "node 'mp' (MaxPool): the Indices output is not supported (only the pooled values)");
  ModelBuilder pool4d;
  pool4d.Input("x", {1, 1, 2, 2, 2, 2});
  pool4d.Node("AveragePool", {"x"}, {"y"}, {IntsAttr("kernel_shape", {2, 2, 2, 2})}, "ap");
  pool4d.Output("y");
  EXPECT_TRUE(Contains(ErrorOf([&] { pool4d.Import(); }),
                       "node 'ap' (AveragePool): only 1-d or 2-d or 3-d spatial inputs are "
                       "supported"));
}

// 3-d pools (two 2-d pools in the importer) against a direct 3-d window: pads, strides and
// dilations differing per axis; averages with and without the pads counted.
TEST(OnnxPool, ThreeDimensionalPoolsMatchTheDirectWindow) {
  runtime::NDArray x = RandomArray({1, 2, 5, 6, 7}, kF32, 19);
  const Shape kernel = {2, 3, 2}, strides = {2, 1, 3}, dilations = {1, 2, 1};
  const Shape pads = {1, 0, 1, 0, 2, 1};  // begins (d, h, w), then ends
  Shape out(3);
  for (int a = 0; a < 3; ++a) {
    int64_t extent = x.Shape()[2 + a] + pads[a] + pads[3 + a] - dilations[a] * (kernel[a] - 1);
    out[a] = (extent - 1) / strides[a] + 1;
  }
  auto reference = [&](bool max, bool count_include_pad) {
    return Generate({1, 2, out[0], out[1], out[2]}, [&](const Shape& i) {
      double acc = max ? -INFINITY : 0;
      int64_t count = 0;
      for (int64_t r = 0; r < kernel[0] * kernel[1] * kernel[2]; ++r) {
        Shape at = {i[0], i[1], 0, 0, 0};
        bool inside = true;
        for (int a = 0, rest = static_cast<int>(r); a < 3; ++a) {
          int64_t k = a == 0 ? rest / (kernel[1] * kernel[2])
                             : a == 1 ? rest / kernel[2] % kernel[1] : rest % kernel[2];
          at[2 + a] = i[2 + a] * strides[a] - pads[a] + k * dilations[a];
          inside = inside && at[2 + a] >= 0 && at[2 + a] < x.Shape()[2 + a];
        }
        if (count_include_pad) ++count;
        if (!inside) continue;
        acc = max ? std::max(acc, At(x, at)) : acc + At(x, at);
        if (!count_include_pad) ++count;
      }
      return max ? acc : acc / static_cast<double>(count);
    });
  };
  std::vector<::onnx::AttributeProto> attrs = {
      IntsAttr("kernel_shape", kernel), IntsAttr("strides", strides),
      IntsAttr("dilations", dilations), IntsAttr("pads", pads)};
  ModelBuilder max;
  max.Input("x", x.Shape()).Node("MaxPool", {"x"}, {"y"}, attrs).Output("y");
  ExpectOutputs(max, {x}, {reference(true, false)});
  for (int64_t include : {0, 1}) {
    std::vector<::onnx::AttributeProto> avg_attrs = attrs;
    avg_attrs.push_back(IntAttr("count_include_pad", include));
    ModelBuilder avg;
    avg.Input("x", x.Shape()).Node("AveragePool", {"x"}, {"y"}, avg_attrs).Output("y");
    ExpectOutputs(avg, {x}, {reference(false, include != 0)});
  }
}

TEST(OnnxNormalization, BatchInstanceAndLrn) {
  runtime::NDArray x = RandomArray({2, 3, 2, 3}, kF32, 18);
  runtime::NDArray scale = ArrayOf({3}, kF32, {0.5, -1, 2});
  runtime::NDArray bias = ArrayOf({3}, kF32, {1, 0, -1});
  runtime::NDArray mean = ArrayOf({3}, kF32, {0.1, -0.2, 0.3});
  runtime::NDArray var = ArrayOf({3}, kF32, {1, 2, 0.5});
  ModelBuilder bn(9);
  bn.Input("x", x.Shape()).Initializer("s", scale).Initializer("b", bias);
  bn.Initializer("m", mean).Initializer("v", var);
  bn.Node("BatchNormalization", {"x", "s", "b", "m", "v"}, {"y"}, {FloatAttr("epsilon", 0.01f)});
  bn.Output("y");
  ExpectOutputs(bn, {x}, {Generate(x.Shape(), [&](const Shape& i) {
                  int64_t c = i[1];
                  return (At(x, i) - GetFloat(mean, c)) / std::sqrt(GetFloat(var, c) + 0.01f) *
                             GetFloat(scale, c) +
                         GetFloat(bias, c);
                })});

  ModelBuilder in;
  in.Input("x", x.Shape()).Initializer("s", scale).Initializer("b", bias);
  in.Node("InstanceNormalization", {"x", "s", "b"}, {"y"}).Output("y");
  ExpectOutputs(in, {x}, {Generate(x.Shape(), [&](const Shape& i) {
                  double sum = 0, sq = 0;
                  for (int64_t h = 0; h < 2; ++h) {
                    for (int64_t w = 0; w < 3; ++w) sum += At(x, {i[0], i[1], h, w});
                  }
                  double m = sum / 6;
                  for (int64_t h = 0; h < 2; ++h) {
                    for (int64_t w = 0; w < 3; ++w)
                      sq += std::pow(At(x, {i[0], i[1], h, w}) - m, 2);
                  }
                  return (At(x, i) - m) / std::sqrt(sq / 6 + 1e-5) * GetFloat(scale, i[1]) +
                         GetFloat(bias, i[1]);
                })});

  runtime::NDArray wide = RandomArray({1, 5, 2, 2}, kF32, 19);
  ModelBuilder lrn;
  lrn.Input("x", wide.Shape());
  lrn.Node("LRN", {"x"}, {"y"},
           {IntAttr("size", 3), FloatAttr("alpha", 0.3f), FloatAttr("beta", 0.6f),
            FloatAttr("bias", 2.0f)});
  lrn.Output("y");
  ExpectOutputs(lrn, {wide}, {Generate(wide.Shape(), [&](const Shape& i) {
                  double sum = 0;
                  for (int64_t c = std::max<int64_t>(0, i[1] - 1);
                       c <= std::min<int64_t>(4, i[1] + 1); ++c) {
                    sum += std::pow(At(wide, {0, c, i[2], i[3]}), 2);
                  }
                  return At(wide, i) / std::pow(2.0 + 0.3 / 3 * sum, 0.6);
                })});

  bn.proto().mutable_graph()->mutable_node(0)->add_attribute()->CopyFrom(
      IntAttr("training_mode", 1));
  EXPECT_TRUE(Contains(ErrorOf([&] { bn.Import(); }), "training_mode = 1 is not supported"));
}

// --- Gemm, Flatten, activations ----------------------------------------------------------

TEST(OnnxGemm, TransposesScalesAndBroadcastBias) {
  runtime::NDArray a = RandomArray({3, 4}, kF32, 20);  // transA: A is [K, M] = [3, 4]
  runtime::NDArray b = RandomArray({3, 5}, kF32, 21);  // B [K, N]
  runtime::NDArray c = RandomArray({1, 5}, kF32, 22);  // broadcast over rows
  ModelBuilder model;
  model.Input("a", a.Shape()).Input("b", b.Shape()).Initializer("c", c);
  model.Node("Gemm", {"a", "b", "c"}, {"y"},
             {IntAttr("transA", 1), FloatAttr("alpha", 0.5f), FloatAttr("beta", -2.0f)});
  model.Output("y");
  ExpectOutputs(model, {a, b}, {Generate({4, 5}, [&](const Shape& i) {
                  double sum = 0;
                  for (int64_t k = 0; k < 3; ++k) sum += At(a, {k, i[0]}) * At(b, {k, i[1]});
                  return 0.5 * sum - 2.0 * At(c, {0, i[1]});
                })});
}

TEST(OnnxGemm, ConstantTransposedWeightIsTheDenseWeight) {
  runtime::NDArray x = RandomArray({2, 6}, kF32, 23);
  runtime::NDArray w = RandomArray({4, 6}, kF32, 24);  // [N, K] with transB = 1
  runtime::NDArray bias = RandomArray({4}, kF32, 25);
  auto expected = Generate({2, 4}, [&](const Shape& i) {
    double sum = GetFloat(bias, i[1]);
    for (int64_t k = 0; k < 6; ++k) sum += At(x, {i[0], k}) * At(w, {i[1], k});
    return sum;
  });
  for (int64_t trans_b : {1, 0}) {
    SCOPED_TRACE("transB " + std::to_string(trans_b));
    runtime::NDArray weight = trans_b ? w : Generate({6, 4}, [&](const Shape& i) {
      return At(w, {i[1], i[0]});
    });
    ModelBuilder model;
    model.Input("x", x.Shape()).Initializer("w", weight).Initializer("bias", bias);
    model.Node("Gemm", {"x", "w", "bias"}, {"y"}, {IntAttr("transB", trans_b)}, "fc").Output("y");
    ImportedModel imported = model.Import();
    // add(nn.dense(x, constant [4, 6]), bias): the transpose of a constant B is folded.
    const auto* add = imported.module.main()->body.as<graph::CallNode>();
    ASSERT_NE(add, nullptr);
    const auto* dense = add->args[0].as<graph::CallNode>();
    ASSERT_TRUE(dense != nullptr && dense->op->name == "nn.dense")
        << graph::ToText(imported.module);
    const auto* dense_weight = dense->args[1].as<graph::ConstantNode>();
    ASSERT_NE(dense_weight, nullptr);
    EXPECT_EQ(dense_weight->data.Shape(), (Shape{4, 6}));
    ExpectOutputs(model, {x}, {expected});
  }
}

TEST(OnnxFlatten, AxesIncludingNegativeAndZero) {
  runtime::NDArray x = RandomArray({2, 3, 4}, kF32, 26);
  for (auto [axis, shape] : std::vector<std::pair<int64_t, Shape>>{
           {1, {2, 12}}, {-1, {6, 4}}, {0, {1, 24}}, {3, {24, 1}}}) {
    ModelBuilder model;
    model.Input("x", x.Shape()).Node("Flatten", {"x"}, {"y"}, {IntAttr("axis", axis)}).Output("y");
    ExpectOutputs(model, {x}, {x.CreateView(shape, kF32)});
  }
}

TEST(OnnxActivations, Formulas) {
  ExpectUnary("Relu", {}, [](double v) { return std::max(0.0, v); });
  ExpectUnary("Sigmoid", {}, [](double v) { return 1 / (1 + std::exp(-v)); });
  ExpectUnary("LeakyRelu", {FloatAttr("alpha", 0.2f)},
              [](double v) { return v < 0 ? 0.2f * v : v; });
  ExpectUnary("LeakyRelu", {}, [](double v) { return v < 0 ? 0.01f * v : v; });
  ExpectUnary("Elu", {FloatAttr("alpha", 0.5f)},
              [](double v) { return v < 0 ? 0.5 * (std::exp(v) - 1) : v; });
  ExpectUnary("Selu", {}, [](double v) {
    return 1.05070102214813232421875 * (v < 0 ? 1.67326319217681884765625 * (std::exp(v) - 1) : v);
  });
  ExpectUnary("HardSigmoid", {FloatAttr("alpha", 0.25f)},
              [](double v) { return std::clamp(0.25 * v + 0.5, 0.0, 1.0); });
  ExpectUnary("HardSwish", {}, [](double v) { return v * std::clamp(v / 6 + 0.5, 0.0, 1.0); });
  ExpectUnary("Softplus", {}, [](double v) { return std::log1p(std::exp(v)); });
  ExpectUnary("Identity", {}, [](double v) { return v; });
  ExpectUnary(
      "Dropout", {FloatAttr("ratio", 0.3f)}, [](double v) { return v; }, 7);
  ExpectUnary("Celu", {FloatAttr("alpha", 2)},
              [](double v) { return std::max(0.0, v) + std::min(0.0, 2 * (std::exp(v / 2) - 1)); });
  ExpectUnary("ThresholdedRelu", {FloatAttr("alpha", 0.5f)},
              [](double v) { return v > 0.5 ? v : 0.0; });
  ExpectUnary("Softsign", {}, [](double v) { return v / (1 + std::abs(v)); });
}

TEST(OnnxActivations, DropoutMaskIsAllTrue) {
  runtime::NDArray x = RandomArray({2, 3}, kF32, 46);
  ModelBuilder model(13);
  model.Input("x", x.Shape()).Node("Dropout", {"x"}, {"y", "mask"}).Output("y").Output("mask");
  ExpectOutputs(model, {x}, {x, ArrayOf({2, 3}, DataType::Bool(), {1, 1, 1, 1, 1, 1})});

  ModelBuilder training(13);
  training.Input("x", x.Shape()).Input("training", {}, DataType::Bool());
  training.Node("Dropout", {"x", "", "training"}, {"y"}, {}, "drop").Output("y");
  EXPECT_EQ(ErrorOf([&] { training.Import(); }),
            "node 'drop' (Dropout): training_mode must be a constant false (Loom imports models "
            "for inference)");
}

TEST(OnnxActivations, PReluSlopeBroadcasts) {
  runtime::NDArray x = RandomArray({2, 3, 2, 2}, kF32, 27);
  runtime::NDArray slope = ArrayOf({3, 1, 1}, kF32, {0.1, -1, 2});
  ModelBuilder model;
  model.Input("x", x.Shape()).Initializer("slope", slope);
  model.Node("PRelu", {"x", "slope"}, {"y"}).Output("y");
  ExpectOutputs(model, {x}, {Generate(x.Shape(), [&](const Shape& i) {
                  double v = At(x, i);
                  return v < 0 ? v * GetFloat(slope, i[1]) : v;
                })});
}

TEST(OnnxClip, AttributesInputsAndIntegers) {
  ExpectUnary(
      "Clip", {FloatAttr("min", -1), FloatAttr("max", 0.5f)},
      [](double v) { return std::clamp(v, -1.0, 0.5); }, 6);
  ExpectUnary(
      "Clip", {FloatAttr("max", 0)}, [](double v) { return std::min(v, 0.0); }, 6);

  runtime::NDArray x = RandomArray({3, 4}, kF32, 28);
  ModelBuilder inputs(13);
  inputs.Input("x", x.Shape()).Initializer("lo", ArrayOf({}, kF32, {-0.5}));
  inputs.Node("Clip", {"x", "lo"}, {"y"}).Output("y");  // max absent: no upper bound
  ExpectOutputs(inputs, {x}, {Map(x, [](double v) { return std::max(v, -0.5); })});

  runtime::NDArray big = ArrayOf({4}, kI64, {-(int64_t{1} << 50), -3, 7, int64_t{1} << 52});
  ModelBuilder ints(13);
  ints.Input("x", {4}, kI64).Initializer("hi", ArrayOf({}, kI64, {5}));
  ints.Node("Clip", {"x", "", "hi"}, {"y"}).Output("y");
  ExpectOutputs(ints, {big}, {ArrayOf({4}, kI64, {-(int64_t{1} << 50), -3, 5, 5})});

  // min > max: every element is max.
  ModelBuilder crossed(13);
  crossed.Input("x", x.Shape()).Initializer("lo", ArrayOf({}, kF32, {2}));
  crossed.Initializer("hi", ArrayOf({}, kF32, {1}));
  crossed.Node("Clip", {"x", "lo", "hi"}, {"y"}).Output("y");
  ExpectOutputs(crossed, {x}, {Map(x, [](double) { return 1.0; })});

  // Bounds given at run time are kernel inputs, crossed ones too; a bound of another shape
  // than a scalar is an error.
  ModelBuilder runtime(13);
  runtime.Input("x", x.Shape()).Input("lo", {}).Input("hi", {1});
  runtime.Node("Clip", {"x", "lo", "hi"}, {"y"}, {}, "clip").Output("y");
  for (auto [lo, hi] : {std::pair{-0.5, 0.25}, std::pair{2.0, 1.0}}) {
    ExpectOutputs(runtime, {x, ArrayOf({}, kF32, {lo}), ArrayOf({1}, kF32, {hi})},
                  {Map(x, [&](double v) { return std::min(std::max(v, lo), hi); })});
  }
  ModelBuilder vector(13);
  vector.Input("x", x.Shape()).Input("lo", {2});
  vector.Node("Clip", {"x", "lo"}, {"y"}, {}, "clip").Output("y");
  EXPECT_EQ(ErrorOf([&] { vector.Import(); }),
            "node 'clip' (Clip): input 1 (min) must be a scalar, got shape [2]");
}

// --- padding, resizing, shuffles ---------------------------------------------------------

// 2-d x padded by pads (begin rows, begin columns, end rows, end columns).
runtime::NDArray PadRef(const runtime::NDArray& x, const Shape& pads, const std::string& mode,
                        double value) {
  Shape s = x.Shape();
  auto source = [&](int64_t i, int64_t n) -> int64_t {
    if (i >= 0 && i < n) return i;
    if (mode == "edge") return std::clamp<int64_t>(i, 0, n - 1);
    if (mode == "reflect") return i < 0 ? -i : 2 * (n - 1) - i;
    return -1;
  };
  return Generate({s[0] + pads[0] + pads[2], s[1] + pads[1] + pads[3]}, [&](const Shape& i) {
    int64_t r = source(i[0] - pads[0], s[0]), c = source(i[1] - pads[1], s[1]);
    return r < 0 || c < 0 ? value : At(x, {r, c});
  });
}

TEST(OnnxPad, ModesAndOpsetForms) {
  runtime::NDArray x = RandomArray({3, 4}, kF32, 29);
  for (const char* mode : {"constant", "reflect", "edge"}) {
    SCOPED_TRACE(mode);
    ModelBuilder old(2);
    old.Input("x", x.Shape());
    old.Node("Pad", {"x"}, {"y"},
             {IntsAttr("pads", {1, 2, 2, 0}), StringAttr("mode", mode), FloatAttr("value", 1.5f)});
    old.Output("y");
    ExpectOutputs(old, {x}, {PadRef(x, {1, 2, 2, 0}, mode, 1.5)});

    ModelBuilder inputs(13);
    inputs.Input("x", x.Shape()).Initializer("pads", ArrayOf({4}, kI64, {0, 1, 2, 3}));
    inputs.Initializer("value", ArrayOf({}, kF32, {-2}));
    inputs.Node("Pad", {"x", "pads", "value"}, {"y"}, {StringAttr("mode", mode)}).Output("y");
    ExpectOutputs(inputs, {x}, {PadRef(x, {0, 1, 2, 3}, mode, -2)});
  }
  // Opset 18: pads only for the listed axes (negative counts from the end).
  ModelBuilder axes(18);
  axes.Input("x", x.Shape()).Initializer("pads", ArrayOf({2}, kI64, {2, 1}));
  axes.Initializer("axes", ArrayOf({1}, kI64, {-1}));
  axes.Node("Pad", {"x", "pads", "", "axes"}, {"y"}).Output("y");
  ExpectOutputs(axes, {x}, {PadRef(x, {0, 2, 0, 1}, "constant", 0)});

  // Opset 19 wrap: circular, negative pads cropping first.
  ModelBuilder wrap(19);
  wrap.Input("x", x.Shape()).Initializer("pads", ArrayOf({4}, kI64, {-1, 3, 2, -1}));
  wrap.Node("Pad", {"x", "pads"}, {"y"}, {StringAttr("mode", "wrap")}, "p").Output("y");
  ExpectOutputs(wrap, {x}, {Generate({4, 6}, [&](const Shape& i) {
                  // Rows 1..2 of x, 2 wrapped after; columns 0..2, 3 wrapped before.
                  return At(x, {1 + i[0] % 2, i[1] % 3});
                })});
  wrap.proto().mutable_graph()->mutable_node(0)->mutable_attribute(0)->CopyFrom(
      StringAttr("mode", "mirror"));
  EXPECT_EQ(ErrorOf([&] { wrap.Import(); }),
            "node 'p' (Pad): mode 'mirror' is not supported; supported: constant, reflect, edge, "
            "wrap");
}

TEST(OnnxShuffles, DepthToSpaceAndSpaceToDepth) {
  runtime::NDArray x = RandomArray({1, 8, 2, 3}, kF32, 30);
  int64_t b = 2;
  for (const char* mode : {"DCR", "CRD"}) {
    SCOPED_TRACE(mode);
    ModelBuilder model;
    model.Input("x", x.Shape());
    model.Node("DepthToSpace", {"x"}, {"y"}, {IntAttr("blocksize", b), StringAttr("mode", mode)});
    model.Output("y");
    bool dcr = std::string(mode) == "DCR";
    ExpectOutputs(model, {x}, {Generate({1, 2, 4, 6}, [&](const Shape& i) {
                    int64_t bi = i[2] % b, bj = i[3] % b;
                    int64_t c = dcr ? (bi * b + bj) * 2 + i[1] : i[1] * b * b + bi * b + bj;
                    return At(x, {0, c, i[2] / b, i[3] / b});
                  })});
  }
  runtime::NDArray image = RandomArray({1, 2, 4, 6}, kF32, 31);
  ModelBuilder model;
  model.Input("x", image.Shape()).Node("SpaceToDepth", {"x"}, {"y"}, {IntAttr("blocksize", b)});
  model.Output("y");
  ExpectOutputs(model, {image}, {Generate({1, 8, 2, 3}, [&](const Shape& i) {
                  int64_t block = i[1] / 2, c = i[1] % 2;
                  return At(image, {0, c, i[2] * b + block / b, i[3] * b + block % b});
                })});
}

// Bilinear resize of NCHW x to (P, Q) with half_pixel or align_corners coordinates.
runtime::NDArray LinearRef(const runtime::NDArray& x, int64_t P, int64_t Q, bool align_corners) {
  Shape s = x.Shape();
  auto coordinate = [&](int64_t o, int64_t out, int64_t in) {
    double c = align_corners ? (out == 1 ? 0.0 : o * double(in - 1) / double(out - 1))
                             : (o + 0.5) * double(in) / double(out) - 0.5;
    return std::clamp(c, 0.0, double(in - 1));
  };
  return Generate({s[0], s[1], P, Q}, [&](const Shape& i) {
    double h = coordinate(i[2], P, s[2]), w = coordinate(i[3], Q, s[3]);
    int64_t h0 = static_cast<int64_t>(h), w0 = static_cast<int64_t>(w);
    int64_t h1 = std::min(h0 + 1, s[2] - 1), w1 = std::min(w0 + 1, s[3] - 1);
    double fh = h - h0, fw = w - w0;
    auto v = [&](int64_t r, int64_t c) { return At(x, {i[0], i[1], r, c}); };
    return (1 - fh) * ((1 - fw) * v(h0, w0) + fw * v(h0, w1)) +
           fh * ((1 - fw) * v(h1, w0) + fw * v(h1, w1));
  });
}

TEST(OnnxResize, UpsampleAndResizeForms) {
  runtime::NDArray x = RandomArray({1, 2, 3, 4}, kF32, 32);
  runtime::NDArray scales = ArrayOf({4}, kF32, {1, 1, 3, 2});
  // Nearest with whole scales repeats elements (Upsample-9 and Resize-10: asymmetric, floor).
  runtime::NDArray repeated = Generate({1, 2, 9, 8}, [&](const Shape& i) {
    return At(x, {0, i[1], i[2] / 3, i[3] / 2});
  });
  for (auto [op, opset] :
       std::vector<std::pair<const char*, int>>{{"Upsample", 9}, {"Resize", 10}}) {
    SCOPED_TRACE(op);
    ModelBuilder model(opset);
    model.Input("x", x.Shape()).Initializer("scales", scales);
    model.Node(op, {"x", "scales"}, {"y"}).Output("y");
    ExpectOutputs(model, {x}, {repeated});
  }
  ModelBuilder upsample7(7);
  upsample7.Input("x", x.Shape());
  upsample7.Node("Upsample", {"x"}, {"y"}, {FloatsAttr("scales", {1, 1, 3, 2})}).Output("y");
  ExpectOutputs(upsample7, {x}, {repeated});

  // Resize-13 linear by sizes (half_pixel) and by scales (align_corners).
  ModelBuilder sizes(13);
  sizes.Input("x", x.Shape()).Initializer("sizes", ArrayOf({4}, kI64, {1, 2, 5, 7}));
  sizes.Node("Resize", {"x", "", "", "sizes"}, {"y"}, {StringAttr("mode", "linear")}).Output("y");
  ExpectOutputs(sizes, {x}, {LinearRef(x, 5, 7, false)});

  ModelBuilder corners(13);
  corners.Input("x", x.Shape()).Initializer("scales", ArrayOf({4}, kF32, {1, 1, 2, 0.5}));
  corners.Node("Resize", {"x", "", "scales"}, {"y"},
               {StringAttr("mode", "linear"),
                StringAttr("coordinate_transformation_mode", "align_corners")});
  corners.Output("y");
  ExpectOutputs(corners, {x}, {LinearRef(x, 6, 2, true)});

  // Opset 18 axes: sizes of H and W only.
  ModelBuilder axes(18);
  axes.Input("x", x.Shape()).Initializer("sizes", ArrayOf({2}, kI64, {6, 8}));
  axes.Node("Resize", {"x", "", "", "sizes"}, {"y"},
            {IntsAttr("axes", {2, -1}), StringAttr("nearest_mode", "floor"),
             StringAttr("coordinate_transformation_mode", "asymmetric")});
  axes.Output("y");
  ExpectOutputs(axes, {x}, {Generate({1, 2, 6, 8}, [&](const Shape& i) {
                  return At(x, {0, i[1], i[2] / 2, i[3] / 2});
                })});
}

TEST(OnnxResize, UnsupportedFormsListWhatIsSupported) {
  runtime::NDArray x = RandomArray({1, 1, 4, 4}, kF32, 33);
  auto error = [&](const std::vector<double>& scale_values,
                   const std::vector<::onnx::AttributeProto>& attrs) {
    ModelBuilder model(13);
    model.Input("x", x.Shape()).Initializer("scales", ArrayOf({4}, kF32, scale_values));
    model.Node("Resize", {"x", "", "scales"}, {"y"}, attrs, "rs").Output("y");
    return ErrorOf([&] { model.Import(); });
  };
  EXPECT_EQ(
      error({1, 1, 2, 2}, {StringAttr("coordinate_transformation_mode", "tf_half_pixel_for_nn")}),
      "node 'rs' (Resize): coordinate_transformation_mode 'tf_half_pixel_for_nn' is not "
      "supported; supported: half_pixel, pytorch_half_pixel, align_corners, asymmetric, "
      "tf_crop_and_resize, half_pixel_symmetric");
  EXPECT_TRUE(Contains(error({1, 2, 2, 2}, {}),
                       "node 'rs' (Resize): only the two trailing (spatial) dimensions can be "
                       "resized, got [1, 1, 4, 4] -> [1, 2, 8, 8]"));
  EXPECT_TRUE(Contains(error({1, 1, 0, 2}, {}), "scale 0.000000 of dimension 2 must be positive"));
  ModelBuilder repeated(18);
  repeated.Input("x", x.Shape()).Initializer("sizes", ArrayOf({2}, kI64, {8, 8}));
  repeated.Node("Resize", {"x", "", "", "sizes"}, {"y"}, {IntsAttr("axes", {3, -1})}, "rs")
      .Output("y");
  EXPECT_TRUE(Contains(ErrorOf([&] { repeated.Import(); }),
                       "node 'rs' (Resize): axes [3, -1] name dimension 3 twice"));
  ModelBuilder negative(13);
  negative.Input("x", x.Shape()).Initializer("sizes", ArrayOf({4}, kI64, {1, 1, 4, -2}));
  negative.Node("Resize", {"x", "", "", "sizes"}, {"y"}, {}, "rs").Output("y");
  EXPECT_TRUE(Contains(ErrorOf([&] { negative.Import(); }),
                       "node 'rs' (Resize): size -2 of dimension 3 is negative"));
  EXPECT_TRUE(Contains(error({1, 1, 2, 2}, {StringAttr("keep_aspect_ratio_policy", "fit")}),
                       "keep_aspect_ratio_policy 'fit' is not supported; supported: stretch, "
                       "not_larger, not_smaller"));
  EXPECT_TRUE(
      Contains(error({1, 1, 2, 2}, {IntAttr("antialias", 1)}), "antialias = 1 is not supported"));
}

// Scales, sizes and roi given at run time (graph inputs) or over an input of symbolic shape
// resize as the same model with them as initializers: fractional scales map coordinates by
// themselves, sizes under an aspect policy, a tf_crop_and_resize region, Upsample-9's scales.
TEST(OnnxResize, OperandsGivenAtRunTimeMatchTheirConstantForms) {
  runtime::NDArray x = RandomArray({1, 2, 5, 6}, kF32, 34);
  struct Case {
    std::string what;
    int64_t opset;
    std::string op;
    std::vector<std::string> inputs;  // after x: "" for an absent one
    std::vector<runtime::NDArray> operands;
    std::vector<::onnx::AttributeProto> attrs;
  };
  std::vector<Case> cases = {
      {"fractional scales, cubic",
       13,
       "Resize",
       {"", "scales"},
       {ArrayOf({4}, kF32, {1, 1, 1.7, 0.6})},
       {StringAttr("mode", "cubic")}},
      {"sizes not_larger, linear",
       18,
       "Resize",
       {"", "", "sizes"},
       {ArrayOf({2}, kI64, {9, 8})},
       {StringAttr("mode", "linear"), IntsAttr("axes", {2, 3}),
        StringAttr("keep_aspect_ratio_policy", "not_larger")}},
      {"roi, tf_crop_and_resize",
       13,
       "Resize",
       {"roi", "", "sizes"},
       {ArrayOf({8}, kF32, {0, 0, 0.2, 0.1, 1, 1, 0.9, 1.3}), ArrayOf({4}, kI64, {1, 2, 4, 7})},
       {StringAttr("coordinate_transformation_mode", "tf_crop_and_resize"),
        StringAttr("mode", "linear"), FloatAttr("extrapolation_value", 2)}},
      {"Upsample-9 scales", 9, "Upsample", {"scales"}, {ArrayOf({4}, kF32, {1, 1, 2, 1.5})}, {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    auto build = [&](bool given_at_run_time, bool symbolic) {
      ModelBuilder model(c.opset);
      model.Input("x", symbolic ? std::vector<int64_t>{-1, 2, -1, -1} : x.Shape());
      std::vector<std::string> inputs = {"x"};
      size_t next = 0;
      for (const std::string& name : c.inputs) {
        inputs.push_back(name);
        if (name.empty()) continue;
        const runtime::NDArray& value = c.operands.at(next++);
        if (given_at_run_time) {
          model.Input(name, value.Shape(), value.dtype());
        } else {
          model.Initializer(name, value);
        }
      }
      model.Node(c.op, inputs, {"y"}, c.attrs).Output("y");
      return model;
    };
    std::vector<runtime::NDArray> want = RunImported(build(false, false).Import(), {x}, 3);
    std::vector<runtime::NDArray> run_time_inputs = {x};
    for (const runtime::NDArray& operand : c.operands) run_time_inputs.push_back(operand);
    ExpectOutputs(build(true, false), run_time_inputs, want, 1e-5);
    ImportOptions symbolic;
    symbolic.symbolic_dimensions = true;
    ExpectOutputs(build(false, true), {x}, want, 1e-5, symbolic);
  }
}

}  // namespace
}  // namespace loom::frontend::onnx::test
