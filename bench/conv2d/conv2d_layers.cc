#include "conv2d_layers.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "bench_common.h"
#include "loom/support/error.h"

namespace loom::bench {
namespace {

constexpr const char* kProgram = "loom-bench-conv2d";

// One distinct convolution: input channels, rows, columns; filters, kernel rows, kernel
// columns; stride and pad (the same along both axes, pads the same on every side); groups;
// and how many times the network applies it.
struct LayerRow {
  int64_t c, h, w, k, r, s, stride, pad, groups;
  int occurrences;
};

// Derived from the model definitions (torchvision 0.14, the Debian package
// python3-torchvision): a forward hook on every torch.nn.Conv2d of
// torchvision.models.resnet18() / mobilenet_v2() recorded the input's shape and the
// module's out_channels, kernel_size, stride, padding and groups for one 1x3x224x224 input;
// rows with the same (c, h, w, k, r, s, stride, pad, groups) were merged in order of first
// appearance, counting them. ResNet-18 has 20 convolutions (the stem, 16 in the basic
// blocks, 3 downsampling 1x1), MobileNetV2 52 (the stem, 17 inverted residual blocks with
// an expansion 1x1 in all but the first, a depthwise 3x3 and a projection 1x1, and the last
// 1x1 to 1280 channels). The number after each row is its layer= number.
const LayerRow kResNet18[] = {
    {3, 224, 224, 64, 7, 7, 2, 3, 1, 1},   // 1
    {64, 56, 56, 64, 3, 3, 1, 1, 1, 4},    // 2
    {64, 56, 56, 128, 3, 3, 2, 1, 1, 1},   // 3
    {128, 28, 28, 128, 3, 3, 1, 1, 1, 3},  // 4
    {64, 56, 56, 128, 1, 1, 2, 0, 1, 1},   // 5
    {128, 28, 28, 256, 3, 3, 2, 1, 1, 1},  // 6
    {256, 14, 14, 256, 3, 3, 1, 1, 1, 3},  // 7
    {128, 28, 28, 256, 1, 1, 2, 0, 1, 1},  // 8
    {256, 14, 14, 512, 3, 3, 2, 1, 1, 1},  // 9
    {512, 7, 7, 512, 3, 3, 1, 1, 1, 3},    // 10
    {256, 14, 14, 512, 1, 1, 2, 0, 1, 1},  // 11
};

const LayerRow kMobileNetV2[] = {
    {3, 224, 224, 32, 3, 3, 2, 1, 1, 1},     // 1
    {32, 112, 112, 32, 3, 3, 1, 1, 32, 1},   // 2
    {32, 112, 112, 16, 1, 1, 1, 0, 1, 1},    // 3
    {16, 112, 112, 96, 1, 1, 1, 0, 1, 1},    // 4
    {96, 112, 112, 96, 3, 3, 2, 1, 96, 1},   // 5
    {96, 56, 56, 24, 1, 1, 1, 0, 1, 1},      // 6
    {24, 56, 56, 144, 1, 1, 1, 0, 1, 2},     // 7
    {144, 56, 56, 144, 3, 3, 1, 1, 144, 1},  // 8
    {144, 56, 56, 24, 1, 1, 1, 0, 1, 1},     // 9
    {144, 56, 56, 144, 3, 3, 2, 1, 144, 1},  // 10
    {144, 28, 28, 32, 1, 1, 1, 0, 1, 1},     // 11
    {32, 28, 28, 192, 1, 1, 1, 0, 1, 3},     // 12
    {192, 28, 28, 192, 3, 3, 1, 1, 192, 2},  // 13
    {192, 28, 28, 32, 1, 1, 1, 0, 1, 2},     // 14
    {192, 28, 28, 192, 3, 3, 2, 1, 192, 1},  // 15
    {192, 14, 14, 64, 1, 1, 1, 0, 1, 1},     // 16
    {64, 14, 14, 384, 1, 1, 1, 0, 1, 4},     // 17
    {384, 14, 14, 384, 3, 3, 1, 1, 384, 4},  // 18
    {384, 14, 14, 64, 1, 1, 1, 0, 1, 3},     // 19
    {384, 14, 14, 96, 1, 1, 1, 0, 1, 1},     // 20
    {96, 14, 14, 576, 1, 1, 1, 0, 1, 3},     // 21
    {576, 14, 14, 576, 3, 3, 1, 1, 576, 2},  // 22
    {576, 14, 14, 96, 1, 1, 1, 0, 1, 2},     // 23
    {576, 14, 14, 576, 3, 3, 2, 1, 576, 1},  // 24
    {576, 7, 7, 160, 1, 1, 1, 0, 1, 1},      // 25
    {160, 7, 7, 960, 1, 1, 1, 0, 1, 3},      // 26
    {960, 7, 7, 960, 3, 3, 1, 1, 960, 3},    // 27
    {960, 7, 7, 160, 1, 1, 1, 0, 1, 2},      // 28
    {960, 7, 7, 320, 1, 1, 1, 0, 1, 1},      // 29
    {320, 7, 7, 1280, 1, 1, 1, 0, 1, 1},     // 30
};

template <size_t kCount>
Net MakeNet(const std::string& name, const LayerRow (&rows)[kCount]) {
  Net net{name, {}};
  for (const LayerRow& row : rows) {
    NetLayer layer;
    layer.number = static_cast<int>(net.layers.size()) + 1;
    layer.workload.n = 1;
    layer.workload.c = row.c;
    layer.workload.h = row.h;
    layer.workload.w = row.w;
    layer.workload.k = row.k;
    layer.workload.r = row.r;
    layer.workload.s = row.s;
    layer.workload.attrs.strides = {row.stride, row.stride};
    layer.workload.attrs.pads = {row.pad, row.pad, row.pad, row.pad};
    layer.workload.attrs.groups = row.groups;
    layer.occurrences = row.occurrences;
    net.layers.push_back(layer);
  }
  return net;
}

std::string NetNames() {
  std::vector<std::string> names;
  for (const Net& net : BenchmarkNets()) names.push_back(net.name);
  return JoinCommas(names);
}

}  // namespace

const std::vector<Net>& BenchmarkNets() {
  static const std::vector<Net> nets{MakeNet("resnet18", kResNet18),
                                     MakeNet("mobilenet_v2", kMobileNetV2)};
  return nets;
}

Conv2DBenchOptions ParseConv2DBenchOptions(int argc, char** argv) {
  Conv2DBenchOptions options;
  ParseFlags(argc, argv, kProgram,
             {ThreadCountsFlag(kProgram, &options.threads),
              {"--nets",
               [&](const std::string& value) {
                 options.nets = SplitCommas(value);
                 LOOM_CHECK_USER(!options.nets.empty())
                     << kProgram << ": --nets takes some of " << NetNames() << ", got nothing";
                 for (const std::string& name : options.nets) {
                   bool known = std::any_of(BenchmarkNets().begin(), BenchmarkNets().end(),
                                            [&](const Net& net) { return net.name == name; });
                   LOOM_CHECK_USER(known) << kProgram << ": --nets takes some of " << NetNames()
                                          << ", got '" << name << "'";
                 }
               }},
              {"--layers",
               [&](const std::string& value) {
                 options.layers = ParsePositiveList(value, kProgram, "--layers");
               }},
              {"--repeat", [&](const std::string& value) {
                 options.repeat = static_cast<int>(
                     ParsePositive(value, kProgram, "--repeat", std::numeric_limits<int>::max()));
               }}});
  size_t most_layers = 0;
  for (const Net& net : BenchmarkNets()) {
    if (std::find(options.nets.begin(), options.nets.end(), net.name) != options.nets.end())
      most_layers = std::max(most_layers, net.layers.size());
  }
  for (int64_t number : options.layers) {
    LOOM_CHECK_USER(static_cast<size_t>(number) <= most_layers)
        << kProgram << ": --layers " << number << " is past the last layer of --nets "
        << JoinCommas(options.nets) << " (" << most_layers << " layers at most)";
  }
  return options;
}

std::vector<std::string> Conv2DBenchArgs(const Conv2DBenchOptions& options, int threads,
                                         const std::string& self) {
  std::vector<std::string> args{self,
                                "--threads",
                                std::to_string(threads),
                                "--nets",
                                JoinCommas(options.nets),
                                "--repeat",
                                std::to_string(options.repeat)};
  if (!options.layers.empty()) {
    args.push_back("--layers");
    args.push_back(JoinCommas(options.layers));
  }
  return args;
}

}  // namespace loom::bench
