// Real networks built through the graph API, for the graph compiler's benchmark and tests:
// torchvision's ResNet-18 and MobileNetV2 at batch 1, float32, NCHW, with random weights.
//
//   graph::Function resnet = ResNet18();        // 1x3x224x224 "image" -> 1x1000 logits
//   graph::CompiledModel model = graph::Compile(graph::IRModule::FromFunction(resnet), {});
//
// The topologies are torchvision's (0.14, as bench/conv2d/conv2d_layers.cc's tables, which
// model_zoo_test checks them against). Every call is named by torchvision's module path
// ("layer1.0.conv1", "features.3.conv.1.0") and every weight by its state_dict key
// ("layer1.0.bn1.running_var"), so messages, kernel profiles and dumps point at the layer.
// Weights are random but deterministic (a fixed seed per network): convolutions He-uniform
// (variance 2 / fan_in, which keeps activations in range through ReLUs), dense layers as
// torchvision initializes them (uniform in +-1/sqrt(fan_in)), batch_norm near the identity
// (gamma ~1, beta ~0, mean ~0, var ~1, each with +-0.1 noise). The largest |logit| on a
// uniform [-1, 1) image is then tens (the residual sums grow the activations), neither
// vanished nor overflowing, so the compiled code's numerics run on real magnitudes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "loom/graph/expr.h"

namespace loom::bench {

// ResNet-18: 7x7/2 stem, batch_norm, ReLU, 3x3/2 max pool, 4 stages of 2 BasicBlocks (the
// first block of stages 2-4 strides 2 and downsamples its shortcut with a 1x1 conv and
// batch_norm), global average pool, flatten, dense to 1000 classes plus bias.
// 11,689,512 parameters (plus 9,600 batch_norm running statistics). `image_size` (the
// side of the square input) must be positive; 224 is ImageNet's.
graph::Function ResNet18(int64_t image_size = 224);

// MobileNetV2 (width 1.0): 3x3/2 stem, 17 inverted residual blocks (1x1 expansion but in
// the first, 3x3 depthwise conv, linear 1x1 projection; a residual add where the block
// keeps stride 1 and its channels), a 1x1 conv to 1280 channels, global average pool,
// flatten, dropout (the identity at inference) and dense to 1000 classes plus bias; ReLU6
// is clip(0, 6). 3,504,872 parameters (plus 34,112 running statistics).
graph::Function MobileNetV2(int64_t image_size = 224);

struct ZooModel {
  std::string name;  // "resnet18", "mobilenet_v2"
  graph::Function (*build)(int64_t image_size);
};

// Every model above, in that order.
const std::vector<ZooModel>& ModelZoo();

}  // namespace loom::bench
