#include "model_zoo.h"

#include <cmath>
#include <random>
#include <utility>

#include "loom/support/error.h"

namespace loom::bench {
namespace {

using graph::Expr;
using graph::Ints;
using graph::MakeCall;

const DataType kF32 = DataType::Float(32);

// Builds a network's layers in order, drawing every weight from one seeded generator, so
// a network's weights depend only on its seed.
class NetBuilder {
 public:
  explicit NetBuilder(unsigned seed) : rng_(seed) {}

  // A bias-free convolution `name` to `out` channels with a square `kernel` padded by
  // kernel / 2 on every side (torchvision's choice for ResNet and MobileNetV2).
  Expr Conv(const Expr& x, const std::string& name, int64_t out, int64_t kernel, int64_t stride,
            int64_t groups = 1) {
    return MakeConv(x, name, out, kernel, stride, kernel / 2, groups);
  }

  // A convolution `name` with `pad` zeros on every side and a bias (SqueezeNet's): the bias
  // uniform in +-0.1, small next to the He-scaled products.
  Expr ConvWithBias(const Expr& x, const std::string& name, int64_t out, int64_t kernel,
                    int64_t stride, int64_t pad) {
    Expr conv = MakeConv(x, name, out, kernel, stride, pad, 1);
    return MakeCall("nn.bias_add", {conv, Uniform({out}, -0.1, 0.1, name + ".bias")},
                    {{"axis", int64_t{1}}}, name + ".bias_add");
  }

  // Inference batch_norm `name` with statistics near the identity.
  Expr BatchNorm(const Expr& x, const std::string& name) {
    int64_t channels = Channels(x);
    return MakeCall("nn.batch_norm",
                    {x, Uniform({channels}, 0.9, 1.1, name + ".weight"),
                     Uniform({channels}, -0.1, 0.1, name + ".bias"),
                     Uniform({channels}, -0.1, 0.1, name + ".running_mean"),
                     Uniform({channels}, 0.9, 1.1, name + ".running_var")},
                    {}, name);
  }

  // A Linear layer: dense to `out` features, then its bias; both uniform in
  // +-1/sqrt(in) as torchvision initializes them (no ReLU follows, so no gain of 2).
  Expr Linear(const Expr& x, const std::string& name, int64_t out) {
    int64_t in = Channels(x);
    double bound = 1 / std::sqrt(static_cast<double>(in));
    Expr product =
        MakeCall("nn.dense", {x, Uniform({out, in}, -bound, bound, name + ".weight")}, {}, name);
    return MakeCall("nn.bias_add", {product, Uniform({out}, -bound, bound, name + ".bias")},
                    {{"axis", int64_t{1}}}, name + ".bias_add");
  }

  // Global average pool then flatten to [1, C].
  static Expr PoolAndFlatten(const Expr& x, const std::string& pool_name) {
    Expr pooled = MakeCall("nn.global_avg_pool2d", {x}, {}, pool_name);
    return MakeCall("flatten", {pooled}, {{"axis", int64_t{1}}}, "flatten");
  }

  static int64_t Channels(const Expr& x) { return x.type().ConstShape().value()[1]; }

 private:
  Expr MakeConv(const Expr& x, const std::string& name, int64_t out, int64_t kernel,
                int64_t stride, int64_t pad, int64_t groups) {
    int64_t in = Channels(x);
    int64_t fan_in = in / groups * kernel * kernel;
    Expr weight = HeUniform({out, in / groups, kernel, kernel}, fan_in, name + ".weight");
    return MakeCall("nn.conv2d", {x, weight},
                    {{"strides", Ints{stride, stride}},
                     {"padding", Ints{pad, pad, pad, pad}},
                     {"groups", groups}},
                    name);
  }

  // Uniform in +-sqrt(6 / fan_in): variance 2 / fan_in.
  graph::Constant HeUniform(const std::vector<int64_t>& shape, int64_t fan_in,
                            const std::string& name) {
    double bound = std::sqrt(6.0 / static_cast<double>(fan_in));
    return Uniform(shape, -bound, bound, name);
  }

  graph::Constant Uniform(const std::vector<int64_t>& shape, double low, double high,
                          const std::string& name) {
    runtime::NDArray data = runtime::NDArray::Empty(shape, kF32);
    std::uniform_real_distribution<float> dist(static_cast<float>(low), static_cast<float>(high));
    auto* values = static_cast<float*>(data.data());
    for (int64_t i = 0; i < data.NumElements(); ++i) values[i] = dist(rng_);
    return graph::MakeConstant(data, name);
  }

  std::mt19937 rng_;
};

graph::Var ImageInput(int64_t image_size, const char* model) {
  LOOM_CHECK_USER(image_size >= 1)
      << model << ": image_size must be a positive number of pixels, got " << image_size;
  return graph::MakeVar("image", graph::TensorType({1, 3, image_size, image_size}, kF32));
}

// torchvision's BasicBlock `name` ("layer2.0"): two 3x3 convolutions with batch_norm, the
// shortcut downsampled (1x1 conv + batch_norm) when the block changes stride or channels.
Expr BasicBlock(NetBuilder& net, const Expr& x, const std::string& name, int64_t out,
                int64_t stride) {
  Expr h = net.Conv(x, name + ".conv1", out, 3, stride);
  h = MakeCall("nn.relu", {net.BatchNorm(h, name + ".bn1")}, {}, name + ".relu");
  h = net.BatchNorm(net.Conv(h, name + ".conv2", out, 3, 1), name + ".bn2");
  Expr shortcut = x;
  if (stride != 1 || NetBuilder::Channels(x) != out) {
    shortcut = net.Conv(x, name + ".downsample.0", out, 1, stride);
    shortcut = net.BatchNorm(shortcut, name + ".downsample.1");
  }
  // The block's ReLU module runs twice; the second call is FX's "relu_1".
  Expr sum = MakeCall("add", {h, shortcut}, {}, name + ".add");
  return MakeCall("nn.relu", {sum}, {}, name + ".relu_1");
}

// torchvision's Bottleneck `name` ("layer3.2"): 1x1 down to `width` channels, 3x3 (strided
// in the first block of a stage, as torchvision 0.14's ResNet v1.5), 1x1 up to 4 x width,
// each with batch_norm; the shortcut downsampled (1x1 conv + batch_norm) when the block
// changes stride or channels.
Expr Bottleneck(NetBuilder& net, const Expr& x, const std::string& name, int64_t width,
                int64_t stride) {
  const int64_t out = 4 * width;
  Expr h = net.BatchNorm(net.Conv(x, name + ".conv1", width, 1, 1), name + ".bn1");
  h = MakeCall("nn.relu", {h}, {}, name + ".relu");
  h = net.BatchNorm(net.Conv(h, name + ".conv2", width, 3, stride), name + ".bn2");
  h = MakeCall("nn.relu", {h}, {}, name + ".relu_1");
  h = net.BatchNorm(net.Conv(h, name + ".conv3", out, 1, 1), name + ".bn3");
  Expr shortcut = x;
  if (stride != 1 || NetBuilder::Channels(x) != out) {
    shortcut = net.Conv(x, name + ".downsample.0", out, 1, stride);
    shortcut = net.BatchNorm(shortcut, name + ".downsample.1");
  }
  // The block's ReLU module runs three times: FX's "relu", "relu_1", "relu_2".
  Expr sum = MakeCall("add", {h, shortcut}, {}, name + ".add");
  return MakeCall("nn.relu", {sum}, {}, name + ".relu_2");
}

// torchvision's Conv2dNormActivation `name` with ReLU6: conv (name.0), batch_norm (name.1),
// clip to [0, 6] (name.2).
Expr ConvBnRelu6(NetBuilder& net, const Expr& x, const std::string& name, int64_t out,
                 int64_t kernel, int64_t stride, int64_t groups = 1) {
  Expr h = net.BatchNorm(net.Conv(x, name + ".0", out, kernel, stride, groups), name + ".1");
  return MakeCall("clip", {h}, {{"a_min", 0.0}, {"a_max", 6.0}}, name + ".2");
}

// torchvision's InvertedResidual `name` ("features.3") expanding by `expand_ratio`.
Expr InvertedResidual(NetBuilder& net, const Expr& x, const std::string& name, int64_t out,
                      int64_t stride, int64_t expand_ratio) {
  int64_t in = NetBuilder::Channels(x);
  int64_t hidden = in * expand_ratio;
  std::string conv = name + ".conv";
  int layer = 0;  // index inside the block's `conv` Sequential
  Expr h = x;
  if (expand_ratio != 1) {
    h = ConvBnRelu6(net, h, conv + "." + std::to_string(layer++), hidden, 1, 1);
  }
  h = ConvBnRelu6(net, h, conv + "." + std::to_string(layer++), hidden, 3, stride, hidden);
  h = net.Conv(h, conv + "." + std::to_string(layer), out, 1, 1);
  h = net.BatchNorm(h, conv + "." + std::to_string(layer + 1));
  if (stride == 1 && in == out) h = MakeCall("add", {x, h}, {}, name + ".add");
  return h;
}

// SqueezeNet's Fire module `name` ("features.3"): a 1x1 squeeze conv with ReLU, then 1x1
// and 3x3 expand convs with ReLU each, their outputs joined along the channels.
Expr Fire(NetBuilder& net, const Expr& x, const std::string& name, int64_t squeeze,
          int64_t expand) {
  auto conv_relu = [&](const Expr& in, const std::string& conv, int64_t out, int64_t kernel) {
    Expr h = net.ConvWithBias(in, name + "." + conv, out, kernel, 1, kernel / 2);
    return MakeCall("nn.relu", {h}, {}, name + "." + conv + "_activation");
  };
  Expr s = conv_relu(x, "squeeze", squeeze, 1);
  return MakeCall("concatenate", {conv_relu(s, "expand1x1", expand, 1),
                                  conv_relu(s, "expand3x3", expand, 3)},
                  {{"axis", int64_t{1}}}, name + ".cat");
}

// SqueezeNet 1.1's 3x3/2 max pools, output sizes rounded up.
Expr CeilMaxPool(const Expr& x, const std::string& name) {
  return MakeCall("nn.max_pool2d", {x},
                  {{"pool_size", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"ceil_mode", int64_t{1}}},
                  name);
}

}  // namespace

graph::Function ResNet18(int64_t image_size) {
  NetBuilder net(18);
  graph::Var image = ImageInput(image_size, "ResNet18");
  Expr h = net.BatchNorm(net.Conv(image, "conv1", 64, 7, 2), "bn1");
  h = MakeCall("nn.relu", {h}, {}, "relu");
  h = MakeCall("nn.max_pool2d", {h},
               {{"pool_size", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"padding", Ints{1, 1, 1, 1}}},
               "maxpool");
  const int64_t kStageChannels[] = {64, 128, 256, 512};
  for (int stage = 0; stage < 4; ++stage) {
    std::string layer = "layer" + std::to_string(stage + 1);
    h = BasicBlock(net, h, layer + ".0", kStageChannels[stage], stage == 0 ? 1 : 2);
    h = BasicBlock(net, h, layer + ".1", kStageChannels[stage], 1);
  }
  Expr logits = net.Linear(NetBuilder::PoolAndFlatten(h, "avgpool"), "fc", 1000);
  return graph::MakeFunction({image}, logits);
}

graph::Function ResNet50(int64_t image_size) {
  NetBuilder net(50);
  graph::Var image = ImageInput(image_size, "ResNet50");
  Expr h = net.BatchNorm(net.Conv(image, "conv1", 64, 7, 2), "bn1");
  h = MakeCall("nn.relu", {h}, {}, "relu");
  h = MakeCall("nn.max_pool2d", {h},
               {{"pool_size", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"padding", Ints{1, 1, 1, 1}}},
               "maxpool");
  const int64_t kStageWidths[] = {64, 128, 256, 512};
  const int kStageBlocks[] = {3, 4, 6, 3};
  for (int stage = 0; stage < 4; ++stage) {
    std::string layer = "layer" + std::to_string(stage + 1);
    for (int block = 0; block < kStageBlocks[stage]; ++block) {
      h = Bottleneck(net, h, layer + "." + std::to_string(block), kStageWidths[stage],
                     block == 0 && stage > 0 ? 2 : 1);
    }
  }
  Expr logits = net.Linear(NetBuilder::PoolAndFlatten(h, "avgpool"), "fc", 1000);
  return graph::MakeFunction({image}, logits);
}

graph::Function MobileNetV2(int64_t image_size) {
  // (expansion t, output channels c, repeats n, first stride s), torchvision's table.
  struct Stage {
    int64_t t, c, n, s;
  };
  const Stage kStages[] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                           {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  NetBuilder net(2);
  graph::Var image = ImageInput(image_size, "MobileNetV2");
  Expr h = ConvBnRelu6(net, image, "features.0", 32, 3, 2);
  int feature = 1;
  for (const Stage& stage : kStages) {
    for (int64_t i = 0; i < stage.n; ++i) {
      h = InvertedResidual(net, h, "features." + std::to_string(feature++), stage.c,
                           i == 0 ? stage.s : 1, stage.t);
    }
  }
  h = ConvBnRelu6(net, h, "features." + std::to_string(feature), 1280, 1, 1);
  h = NetBuilder::PoolAndFlatten(h, "adaptive_avg_pool2d");
  h = MakeCall("nn.dropout", {h}, {{"rate", 0.2}}, "classifier.0");
  return graph::MakeFunction({image}, net.Linear(h, "classifier.1", 1000));
}

graph::Function SqueezeNet11(int64_t image_size) {
  NetBuilder net(11);
  graph::Var image = ImageInput(image_size, "SqueezeNet11");
  Expr h = net.ConvWithBias(image, "features.0", 64, 3, 2, 0);
  h = CeilMaxPool(MakeCall("nn.relu", {h}, {}, "features.1"), "features.2");
  h = Fire(net, h, "features.3", 16, 64);
  h = Fire(net, h, "features.4", 16, 64);
  h = CeilMaxPool(h, "features.5");
  h = Fire(net, h, "features.6", 32, 128);
  h = Fire(net, h, "features.7", 32, 128);
  h = CeilMaxPool(h, "features.8");
  h = Fire(net, h, "features.9", 48, 192);
  h = Fire(net, h, "features.10", 48, 192);
  h = Fire(net, h, "features.11", 64, 256);
  h = Fire(net, h, "features.12", 64, 256);
  h = MakeCall("nn.dropout", {h}, {{"rate", 0.5}}, "classifier.0");
  h = net.ConvWithBias(h, "classifier.1", 1000, 1, 1, 0);
  h = MakeCall("nn.relu", {h}, {}, "classifier.2");
  return graph::MakeFunction({image}, NetBuilder::PoolAndFlatten(h, "classifier.3"));
}

const std::vector<ZooModel>& ModelZoo() {
  static const std::vector<ZooModel> models{{"resnet18", ResNet18},
                                            {"resnet50", ResNet50},
                                            {"mobilenet_v2", MobileNetV2},
                                            {"squeezenet", SqueezeNet11}};
  return models;
}

}  // namespace loom::bench
