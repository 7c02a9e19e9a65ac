// Real networks built through the graph API, for the graph compiler's benchmark and tests:
// torchvision's ResNet-18, ResNet-50, MobileNetV2 and SqueezeNet 1.1 at batch 1, float32,
// NCHW, with random weights.
//
//   graph::Function resnet = ResNet18();        // 1x3x224x224 "image" -> 1x1000 logits
//   graph::CompiledModel model = graph::Compile(graph::IRModule::FromFunction(resnet), {});
//
// The topologies are torchvision's (0.14; ResNet-18's and MobileNetV2's convolutions are
// bench/conv2d/conv2d_layers.cc's tables, which model_zoo_test checks them against). Every
// call is named by torchvision's module path ("layer1.0.conv1", "features.3.conv.1.0") and
// every weight by its state_dict key ("layer1.0.bn1.running_var"), so messages, kernel
// profiles and dumps point at the layer.
// Weights are random but deterministic (a fixed seed per network): convolutions He-uniform
// (variance 2 / fan_in, which keeps activations in range through ReLUs), dense layers as
// torchvision initializes them (uniform in +-1/sqrt(fan_in)), batch_norm near the identity
// (gamma ~1, beta ~0, mean ~0, var ~1, each with +-0.1 noise), convolution biases
// (SqueezeNet's) uniform in +-0.1. The largest |logit| on a uniform [-1, 1) image is then
// tens to hundreds (each residual sum adds to the activations: ResNet-50's reach a few
// hundred), neither vanished nor overflowing, so the compiled code's numerics run on real
// magnitudes.
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

// ResNet-50: ResNet-18's stem and head around 4 stages of 3, 4, 6 and 3 Bottleneck blocks
// (1x1, 3x3, 1x1 to 4x the width, each with batch_norm; torchvision 0.14 strides the 3x3,
// ResNet v1.5; the first block of every stage downsamples its shortcut). The head's dense
// layer reads 2048 features. 25,557,032 parameters (plus 53,120 running statistics).
graph::Function ResNet50(int64_t image_size = 224);

// MobileNetV2 (width 1.0): 3x3/2 stem, 17 inverted residual blocks (1x1 expansion but in
// the first, 3x3 depthwise conv, linear 1x1 projection; a residual add where the block
// keeps stride 1 and its channels), a 1x1 conv to 1280 channels, global average pool,
// flatten, dropout (the identity at inference) and dense to 1000 classes plus bias; ReLU6
// is clip(0, 6). 3,504,872 parameters (plus 34,112 running statistics).
graph::Function MobileNetV2(int64_t image_size = 224);

// SqueezeNet 1.1: an unpadded 3x3/2 conv to 64 channels, ReLU, then 8 Fire modules (a 1x1
// squeeze conv, and 1x1 and 3x3 expand convs concatenated along the channels, every conv
// with a bias and a ReLU) with 3x3/2 max pools (ceil_mode) after the stem and the 2nd and
// 4th Fire; dropout (the identity at inference), a 1x1 conv to 1000 classes with bias and
// ReLU, global average pool and flatten. 1,235,496 parameters, no batch_norm. The image
// must be at least 3 pixels wide (the stem's kernel).
graph::Function SqueezeNet11(int64_t image_size = 224);

struct ZooModel {
  std::string name;  // "resnet18", "resnet50", "mobilenet_v2", "squeezenet"
  graph::Function (*build)(int64_t image_size);
};

// Every model above, in that order.
const std::vector<ZooModel>& ModelZoo();

}  // namespace loom::bench
