// The benchmark's cases: the distinct conv2d layers of two networks, and its options.
#pragma once

#include <string>
#include <vector>

#include "loom/topi/x86/conv2d.h"

namespace loom::bench {

struct NetLayer {
  int number = 0;  // 1, 2, ... per network, in order of first appearance
  topi::x86::Conv2DWorkload workload;
  int occurrences = 0;  // how many convolutions of the network have this shape
};

struct Net {
  std::string name;  // "resnet18", "mobilenet_v2"
  std::vector<NetLayer> layers;
};

// torchvision's ResNet-18 and MobileNetV2 at batch 1 on 3x224x224, in that order.
const std::vector<Net>& BenchmarkNets();

struct Conv2DBenchOptions {
  std::vector<int> threads{1, 2};
  std::vector<std::string> nets{"resnet18", "mobilenet_v2"};
  std::vector<int64_t> layers;  // layer numbers to run; empty: all
  int repeat = 15;              // timed samples per layer and library
};

// --threads 1,2 --nets resnet18,mobilenet_v2 --layers 3,5 --repeat N. A bad option, an
// unknown network, or a layer number that no chosen network has is a loom::Error naming
// the option and what it accepts.
Conv2DBenchOptions ParseConv2DBenchOptions(int argc, char** argv);

// The program's own arguments for `options` at one thread count (argv[0] is `self`).
std::vector<std::string> Conv2DBenchArgs(const Conv2DBenchOptions& options, int threads,
                                         const std::string& self);

}  // namespace loom::bench
