// The model zoo: the 224x224 networks have torchvision's layers, operators and parameter
// counts (checked without compiling them), and the networks at small sizes compile at -O0
// (one kernel per operator) and -O3 (batch_norm folded, blocked layouts, fusion) to the
// same outputs in the graph executor.
#include "model_zoo.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "conv2d_layers.h"
#include "loom/graph/compile.h"
#include "loom/graph/functor.h"
#include "loom/support/error.h"

namespace loom::bench {
namespace {

using graph::CallNode;
using graph::ConstantNode;
using graph::Expr;

struct GraphCensus {
  std::map<std::string, int> calls;  // per operator
  int64_t parameters = 0;            // constant elements but batch_norm's running statistics
  int64_t running_statistics = 0;
  std::vector<std::string> call_names;
  std::vector<std::string> constant_names;
};

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

GraphCensus Census(const graph::Function& model) {
  GraphCensus census;
  graph::PostOrderVisit(model, [&](const Expr& e) {
    if (const auto* call = e.as<CallNode>()) {
      ++census.calls[call->op->name];
      census.call_names.push_back(call->name_hint);
    } else if (const auto* constant = e.as<ConstantNode>()) {
      bool statistic = EndsWith(constant->name_hint, ".running_mean") ||
                       EndsWith(constant->name_hint, ".running_var");
      (statistic ? census.running_statistics : census.parameters) += constant->data.NumElements();
      census.constant_names.push_back(constant->name_hint);
    }
  });
  return census;
}

// Names given to more than one node.
std::vector<std::string> Duplicates(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  std::vector<std::string> repeated;
  for (size_t i = 1; i < names.size(); ++i) {
    if (names[i] == names[i - 1] && (repeated.empty() || repeated.back() != names[i]))
      repeated.push_back(names[i]);
  }
  return repeated;
}

bool Contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

TEST(ModelZoo, ResNet18HasTorchvisionsLayersAndParameters) {
  graph::Function model = ResNet18();
  EXPECT_EQ(model->checked_type.str(), "Tensor[(1, 1000), float32]");
  GraphCensus census = Census(model);
  EXPECT_EQ(census.parameters, 11689512);  // torchvision's count
  EXPECT_EQ(census.running_statistics, 2 * 4800);
  EXPECT_EQ(census.calls, (std::map<std::string, int>{{"add", 8},
                                                      {"flatten", 1},
                                                      {"nn.batch_norm", 20},
                                                      {"nn.bias_add", 1},
                                                      {"nn.conv2d", 20},
                                                      {"nn.dense", 1},
                                                      {"nn.global_avg_pool2d", 1},
                                                      {"nn.max_pool2d", 1},
                                                      {"nn.relu", 17}}));
  EXPECT_TRUE(Duplicates(census.call_names).empty()) << Duplicates(census.call_names)[0];
  EXPECT_TRUE(Duplicates(census.constant_names).empty());
  for (const char* name : {"conv1", "maxpool", "layer1.0.relu_1", "layer2.0.downsample.0",
                           "layer4.1.bn2", "avgpool", "fc"}) {
    EXPECT_TRUE(Contains(census.call_names, name)) << name;
  }
  EXPECT_TRUE(Contains(census.constant_names, "layer3.0.downsample.1.running_var"));
  EXPECT_FALSE(Contains(census.call_names, "layer1.0.downsample.0"));  // same shape, identity
}

TEST(ModelZoo, MobileNetV2HasTorchvisionsLayersAndParameters) {
  graph::Function model = MobileNetV2();
  EXPECT_EQ(model->checked_type.str(), "Tensor[(1, 1000), float32]");
  GraphCensus census = Census(model);
  EXPECT_EQ(census.parameters, 3504872);  // torchvision's count
  EXPECT_EQ(census.running_statistics, 2 * 17056);
  EXPECT_EQ(census.calls, (std::map<std::string, int>{{"add", 10},
                                                      {"clip", 35},
                                                      {"flatten", 1},
                                                      {"nn.batch_norm", 52},
                                                      {"nn.bias_add", 1},
                                                      {"nn.conv2d", 52},
                                                      {"nn.dense", 1},
                                                      {"nn.dropout", 1},
                                                      {"nn.global_avg_pool2d", 1}}));
  EXPECT_TRUE(Duplicates(census.call_names).empty()) << Duplicates(census.call_names)[0];
  EXPECT_TRUE(Duplicates(census.constant_names).empty());
  // Block 1 has no expansion: its depthwise conv is conv.0, its projection conv.1.
  for (const char* name :
       {"features.0.0", "features.1.conv.0.0", "features.1.conv.1", "features.2.conv.1.2",
        "features.3.add", "features.17.conv.3", "features.18.2", "classifier.0", "classifier.1"}) {
    EXPECT_TRUE(Contains(census.call_names, name)) << name;
  }
  EXPECT_FALSE(Contains(census.call_names, "features.2.add"));  // 16 -> 24 channels, stride 2
}

TEST(ModelZoo, ResNet50HasTorchvisionsLayersAndParameters) {
  graph::Function model = ResNet50();
  EXPECT_EQ(model->checked_type.str(), "Tensor[(1, 1000), float32]");
  GraphCensus census = Census(model);
  EXPECT_EQ(census.parameters, 25557032);  // torchvision's count
  EXPECT_EQ(census.running_statistics, 2 * 26560);
  // 16 Bottlenecks of 3 convs, 4 downsampling shortcuts, the stem.
  EXPECT_EQ(census.calls, (std::map<std::string, int>{{"add", 16},
                                                      {"flatten", 1},
                                                      {"nn.batch_norm", 53},
                                                      {"nn.bias_add", 1},
                                                      {"nn.conv2d", 53},
                                                      {"nn.dense", 1},
                                                      {"nn.global_avg_pool2d", 1},
                                                      {"nn.max_pool2d", 1},
                                                      {"nn.relu", 49}}));
  EXPECT_TRUE(Duplicates(census.call_names).empty()) << Duplicates(census.call_names)[0];
  EXPECT_TRUE(Duplicates(census.constant_names).empty());
  for (const char* name : {"conv1", "layer1.0.downsample.0", "layer1.2.relu_2", "layer3.5.conv3",
                           "layer4.0.downsample.1", "fc"}) {
    EXPECT_TRUE(Contains(census.call_names, name)) << name;
  }
  EXPECT_FALSE(Contains(census.call_names, "layer1.1.downsample.0"));
  EXPECT_FALSE(Contains(census.call_names, "layer3.6.conv1"));  // 6 blocks in stage 3
}

TEST(ModelZoo, ResNet50StridesTheBottlenecks3x3) {
  // torchvision 0.14 (ResNet v1.5) strides conv2, so conv1 of layer2.0 keeps 56x56.
  std::map<std::string, std::string> data_shapes;
  graph::PostOrderVisit(ResNet50(), [&](const Expr& e) {
    if (const auto* call = e.as<CallNode>()) {
      data_shapes[call->name_hint] = call->args[0].type().str();
    }
  });
  EXPECT_EQ(data_shapes["layer2.0.conv1"], "Tensor[(1, 256, 56, 56), float32]");
  EXPECT_EQ(data_shapes["layer2.0.conv2"], "Tensor[(1, 128, 56, 56), float32]");
  EXPECT_EQ(data_shapes["layer2.0.conv3"], "Tensor[(1, 128, 28, 28), float32]");
  EXPECT_EQ(data_shapes["fc"], "Tensor[(1, 2048), float32]");
}

TEST(ModelZoo, SqueezeNet11HasTorchvisionsLayersAndParameters) {
  graph::Function model = SqueezeNet11();
  EXPECT_EQ(model->checked_type.str(), "Tensor[(1, 1000), float32]");
  GraphCensus census = Census(model);
  EXPECT_EQ(census.parameters, 1235496);  // torchvision's count
  EXPECT_EQ(census.running_statistics, 0);
  EXPECT_EQ(census.calls, (std::map<std::string, int>{{"concatenate", 8},
                                                      {"flatten", 1},
                                                      {"nn.bias_add", 26},
                                                      {"nn.conv2d", 26},
                                                      {"nn.dropout", 1},
                                                      {"nn.global_avg_pool2d", 1},
                                                      {"nn.max_pool2d", 3},
                                                      {"nn.relu", 26}}));
  EXPECT_TRUE(Duplicates(census.call_names).empty()) << Duplicates(census.call_names)[0];
  EXPECT_TRUE(Duplicates(census.constant_names).empty());
  std::map<std::string, std::string> output_shapes;
  graph::PostOrderVisit(model, [&](const Expr& e) {
    if (const auto* call = e.as<CallNode>()) {
      output_shapes[call->name_hint] = call->checked_type.str();
    }
  });
  // The unpadded stem gives 111x111; the ceil_mode pools 55, 27 and 13.
  EXPECT_EQ(output_shapes["features.0"], "Tensor[(1, 64, 111, 111), float32]");
  EXPECT_EQ(output_shapes["features.2"], "Tensor[(1, 64, 55, 55), float32]");
  EXPECT_EQ(output_shapes["features.5"], "Tensor[(1, 128, 27, 27), float32]");
  EXPECT_EQ(output_shapes["features.8"], "Tensor[(1, 256, 13, 13), float32]");
  EXPECT_EQ(output_shapes["features.12.cat"], "Tensor[(1, 512, 13, 13), float32]");
  EXPECT_EQ(output_shapes["classifier.2"], "Tensor[(1, 1000, 13, 13), float32]");
  EXPECT_TRUE(Contains(census.constant_names, "features.9.expand3x3.bias"));
}

// The distinct convolutions in order of first appearance, with their counts, as the conv2d
// benchmark's tables list them.
std::vector<std::pair<std::string, int>> DistinctConvolutions(const graph::Function& model) {
  std::vector<std::pair<std::string, int>> layers;
  graph::PostOrderVisit(model, [&](const Expr& e) {
    const auto* call = e.as<CallNode>();
    if (!call || call->op->name != "nn.conv2d") return;
    std::vector<int64_t> data = call->args[0].type().ConstShape().value();
    std::vector<int64_t> weight = call->args[1].type().ConstShape().value();
    topi::x86::Conv2DWorkload workload;
    workload.n = data[0];
    workload.c = data[1];
    workload.h = data[2];
    workload.w = data[3];
    workload.k = weight[0];
    workload.r = weight[2];
    workload.s = weight[3];
    const graph::Ints& strides = call->attrs.GetInts("strides");
    const graph::Ints& padding = call->attrs.GetInts("padding");
    workload.attrs.strides = {strides[0], strides[1]};
    workload.attrs.pads = {padding[0], padding[1], padding[2], padding[3]};
    workload.attrs.groups = call->attrs.GetInt("groups");
    std::string text = workload.str();
    auto same = [&](const auto& layer) { return layer.first == text; };
    auto found = std::find_if(layers.begin(), layers.end(), same);
    if (found == layers.end()) {
      layers.emplace_back(text, 1);
    } else {
      ++found->second;
    }
  });
  return layers;
}

TEST(ModelZoo, ConvolutionsAreTheConv2dBenchmarksLayers) {
  for (const Net& net : BenchmarkNets()) {
    const auto& zoo = ModelZoo();
    auto model = std::find_if(zoo.begin(), zoo.end(), [&](const ZooModel& candidate) {
      return candidate.name == net.name;
    });
    ASSERT_NE(model, zoo.end()) << net.name;
    std::vector<std::pair<std::string, int>> want;
    for (const NetLayer& layer : net.layers) {
      want.emplace_back(layer.workload.str(), layer.occurrences);
    }
    EXPECT_EQ(DistinctConvolutions(model->build(224)), want) << net.name;
  }
}

TEST(ModelZoo, WeightsAreDeterministic) {
  auto first_weight = [](const graph::Function& model) {
    std::vector<float> values;
    graph::PostOrderVisit(model, [&](const Expr& e) {
      const auto* constant = e.as<ConstantNode>();
      if (!constant || !values.empty()) return;
      const auto* data = static_cast<const float*>(constant->data.data());
      values.assign(data, data + constant->data.NumElements());
    });
    return values;
  };
  EXPECT_EQ(first_weight(ResNet18(32)), first_weight(ResNet18(64)));
  EXPECT_NE(first_weight(ResNet18(32)), first_weight(MobileNetV2(32)));
}

TEST(ModelZoo, ImageSizeMustBePositive) {
  for (const ZooModel& zoo : ModelZoo()) {
    std::string message = "no error";
    try {
      zoo.build(0);
    } catch (const Error& error) {
      message = error.what();
    }
    EXPECT_NE(message.find("image_size must be a positive number of pixels, got 0"),
              std::string::npos)
        << message;
  }
}

runtime::NDArray RunCompiled(const graph::Function& model, int opt_level,
                             const runtime::NDArray& image, size_t* kernels) {
  graph::CompiledModel compiled =
      graph::Compile(graph::IRModule::FromFunction(model), {.opt_level = opt_level});
  *kernels = compiled.kernel_names.size();
  runtime::GraphExecutor executor(graph::MakeGraphModel(compiled));
  executor.SetInput("image", image);
  executor.Run();
  runtime::NDArray output = executor.GetOutput(0);
  runtime::NDArray copy = runtime::NDArray::Empty(output.Shape(), output.dtype());
  copy.CopyFrom(output);
  return copy;
}

// -O0 runs every operator as written (batch_norm included) in a kernel of its own; -O3 the
// rewritten, re-laid-out, fused model. Both come from Loom, so they must agree closely.
void ExpectO3MatchesO0(const graph::Function& model, const std::string& label) {
  std::vector<int64_t> shape = model->params[0].type().ConstShape().value();
  runtime::NDArray image = runtime::NDArray::Empty(shape, DataType::Float(32));
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  auto* pixels = static_cast<float*>(image.data());
  for (int64_t i = 0; i < image.NumElements(); ++i) pixels[i] = dist(rng);

  size_t kernels_o0 = 0, kernels_o3 = 0;
  runtime::NDArray want = RunCompiled(model, 0, image, &kernels_o0);
  runtime::NDArray got = RunCompiled(model, 3, image, &kernels_o3);
  ASSERT_EQ(got.Shape(), want.Shape()) << label;
  EXPECT_LT(kernels_o3, kernels_o0 / 2) << label << ": -O3 fuses";
  const auto* w = static_cast<const float*>(want.data());
  const auto* g = static_cast<const float*>(got.data());
  double largest = 0, worst = 0;
  int64_t worst_at = 0;
  for (int64_t i = 0; i < want.NumElements(); ++i) {
    ASSERT_TRUE(std::isfinite(w[i]) && std::isfinite(g[i])) << label << " element " << i;
    largest = std::max(largest, std::abs(static_cast<double>(w[i])));
    double diff = std::abs(static_cast<double>(g[i]) - w[i]);
    if (diff > worst) {
      worst = diff;
      worst_at = i;
    }
  }
  // The weights keep activations moderate: logits neither vanished nor blown up (each
  // residual sum adds to them: ResNet-50's 16 blocks reach a few hundred).
  EXPECT_GT(largest, 0.05) << label;
  EXPECT_LT(largest, 1000.0) << label;
  EXPECT_LE(worst, 1e-3 * largest)
      << label << ": logit " << worst_at << " is " << g[worst_at] << " at -O3, " << w[worst_at]
      << " at -O0 (largest |logit| " << largest << ")";
}

TEST(ModelZoo, ResNet18At32CompilesToTheSameLogitsAtO0AndO3) {
  ExpectO3MatchesO0(ResNet18(32), "resnet18 32x32");
}

TEST(ModelZoo, MobileNetV2At32CompilesToTheSameLogitsAtO0AndO3) {
  ExpectO3MatchesO0(MobileNetV2(32), "mobilenet_v2 32x32");
}

TEST(ModelZoo, ResNet50At32CompilesToTheSameLogitsAtO0AndO3) {
  ExpectO3MatchesO0(ResNet50(32), "resnet50 32x32");
}

// 66x66: the stem leaves 32 pixels and the three ceil_mode pools 16, 8 and 4 (one more than
// rounding down), so every pool has a partial window at its edge (at 224 none does).
TEST(ModelZoo, SqueezeNet11At66CompilesToTheSameLogitsAtO0AndO3) {
  ExpectO3MatchesO0(SqueezeNet11(66), "squeezenet 66x66");
}

}  // namespace
}  // namespace loom::bench
