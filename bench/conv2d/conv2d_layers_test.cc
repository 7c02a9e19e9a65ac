// The benchmark's layer tables against facts about the two networks that do not depend on
// how the table was written down, and its option errors by their messages.
#include "conv2d_layers.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "loom/support/error.h"

namespace loom::bench {
namespace {

const Net& NetNamed(const std::string& name) {
  for (const Net& net : BenchmarkNets())
    if (net.name == name) return net;
  ADD_FAILURE() << "no network " << name;
  return BenchmarkNets().front();
}

int TotalConvolutions(const Net& net) {
  int total = 0;
  for (const NetLayer& layer : net.layers) total += layer.occurrences;
  return total;
}

// Multiply-adds of the whole network's convolutions, each layer times its occurrences.
int64_t MultiplyAdds(const Net& net) {
  int64_t total = 0;
  for (const NetLayer& layer : net.layers) {
    const auto& l = layer.workload;
    int64_t p = (l.h + 2 * l.attrs.pads[0] - l.r) / l.attrs.strides[0] + 1;
    int64_t q = (l.w + 2 * l.attrs.pads[1] - l.s) / l.attrs.strides[1] + 1;
    total += layer.occurrences * l.n * l.k * p * q * (l.c / l.attrs.groups) * l.r * l.s;
  }
  return total;
}

TEST(BenchConv2DLayers, ResNet18HasItsTwentyConvolutionsInElevenShapes) {
  const Net& net = NetNamed("resnet18");
  EXPECT_EQ(net.layers.size(), 11u);
  EXPECT_EQ(TotalConvolutions(net), 20);
  // torchvision's documented 1.81 GFLOPS (multiply-adds), all but 0.5 M of them convolutions.
  EXPECT_EQ(MultiplyAdds(net), 1813561344);
  const auto& stem = net.layers.front().workload;
  EXPECT_EQ(
      std::make_tuple(stem.c, stem.h, stem.k, stem.r, stem.attrs.strides[0], stem.attrs.pads[0]),
      std::make_tuple(int64_t{3}, int64_t{224}, int64_t{64}, int64_t{7}, int64_t{2}, int64_t{3}));
}

TEST(BenchConv2DLayers, MobileNetV2HasItsFiftyTwoConvolutionsInThirtyShapes) {
  const Net& net = NetNamed("mobilenet_v2");
  EXPECT_EQ(net.layers.size(), 30u);
  EXPECT_EQ(TotalConvolutions(net), 52);
  EXPECT_EQ(MultiplyAdds(net), 299494272);  // torchvision's documented 0.30 GFLOPS
  int depthwise = 0, depthwise_layers = 0, pointwise = 0;
  for (const NetLayer& layer : net.layers) {
    const auto& l = layer.workload;
    if (l.attrs.groups > 1) {
      EXPECT_TRUE(l.attrs.groups == l.c && l.k == l.c && l.r == 3) << "layer " << layer.number;
      depthwise += layer.occurrences;
      ++depthwise_layers;
    }
    if (l.r == 1) pointwise += layer.occurrences;
  }
  EXPECT_EQ(depthwise, 17);  // one per inverted residual block
  EXPECT_EQ(depthwise_layers, 10);
  EXPECT_EQ(pointwise, 34);  // 16 expansions, 17 projections, the last 1x1
}

TEST(BenchConv2DLayers, LayersAreNumberedInOrderAndDistinct) {
  for (const Net& net : BenchmarkNets()) {
    std::set<std::string> shapes;
    for (size_t x = 0; x < net.layers.size(); ++x) {
      const NetLayer& layer = net.layers[x];
      EXPECT_EQ(layer.number, static_cast<int>(x) + 1) << net.name;
      EXPECT_GE(layer.occurrences, 1) << net.name << " layer " << layer.number;
      const auto& l = layer.workload;
      EXPECT_EQ(l.n, 1);
      EXPECT_EQ(l.h, l.w);
      EXPECT_EQ(l.c % l.attrs.groups, 0);
      std::vector<int64_t> key{
          l.c, l.h, l.w, l.k, l.r, l.s, l.attrs.strides[0], l.attrs.pads[0], l.attrs.groups};
      std::string text;
      for (int64_t v : key) text += std::to_string(v) + " ";
      EXPECT_TRUE(shapes.insert(text).second)
          << net.name << " layer " << layer.number << " repeats";
    }
  }
}

Conv2DBenchOptions Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "loom-bench-conv2d");
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  return ParseConv2DBenchOptions(static_cast<int>(argv.size()), argv.data());
}

std::string ParseError(const std::vector<std::string>& args) {
  try {
    Parse(args);
  } catch (const Error& error) {
    return error.what();
  }
  return "no error";
}

TEST(BenchConv2DOptions, ParsesEveryOptionAndPassesThemToTheChildren) {
  Conv2DBenchOptions defaults = Parse({});
  EXPECT_EQ(defaults.threads, std::vector<int>({1, 2}));
  EXPECT_EQ(defaults.nets, std::vector<std::string>({"resnet18", "mobilenet_v2"}));
  EXPECT_TRUE(defaults.layers.empty());
  EXPECT_GE(defaults.repeat, 15);
  Conv2DBenchOptions options =
      Parse({"--threads", "2,4", "--nets", "mobilenet_v2", "--layers", "3,30", "--repeat", "7"});
  EXPECT_EQ(options.threads, std::vector<int>({2, 4}));
  EXPECT_EQ(options.nets, std::vector<std::string>({"mobilenet_v2"}));
  EXPECT_EQ(options.layers, std::vector<int64_t>({3, 30}));
  EXPECT_EQ(options.repeat, 7);
  EXPECT_EQ(Conv2DBenchArgs(options, 4, "self"),
            std::vector<std::string>({"self", "--threads", "4", "--nets", "mobilenet_v2",
                                      "--repeat", "7", "--layers", "3,30"}));
}

TEST(BenchConv2DOptions, BadOptionsAreErrorsThatSayWhatIsAccepted) {
  EXPECT_EQ(ParseError({"--thread", "1"}),
            "loom-bench-conv2d: unknown option '--thread' (accepted: "
            "--threads|--nets|--layers|--repeat)");
  EXPECT_NE(ParseError({"--repeat"}).find("option '--repeat' needs a value"), std::string::npos);
  EXPECT_EQ(ParseError({"--threads", "1,0"}),
            "loom-bench-conv2d: --threads takes positive integers, got '0'");
  EXPECT_EQ(ParseError({"--repeat", "5x"}),
            "loom-bench-conv2d: --repeat takes positive integers, got '5x'");
  EXPECT_EQ(ParseError({"--threads", "4294967297"}),
            "loom-bench-conv2d: --threads takes positive integers up to 2147483647, got "
            "'4294967297'");
  EXPECT_EQ(ParseError({"--repeat", "2147483648"}),
            "loom-bench-conv2d: --repeat takes positive integers up to 2147483647, got "
            "'2147483648'");
  EXPECT_EQ(ParseError({"--layers", ""}),
            "loom-bench-conv2d: --layers takes comma-separated positive integers, got nothing");
  EXPECT_EQ(ParseError({"--nets", "resnet50"}),
            "loom-bench-conv2d: --nets takes some of resnet18,mobilenet_v2, got 'resnet50'");
  EXPECT_EQ(ParseError({"--nets", "resnet18", "--layers", "12"}),
            "loom-bench-conv2d: --layers 12 is past the last layer of --nets resnet18 (11 "
            "layers at most)");
  EXPECT_EQ(ParseError({"--layers", "30"}), "no error");
}

}  // namespace
}  // namespace loom::bench
