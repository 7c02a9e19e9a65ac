// The transformer zoo: BERT-base has BERT's operators and parameter count (checked without
// compiling it), and a small encoder of the same structure compiles at -O0 (one kernel per
// operator) and -O3 (packed dense weights, fused epilogues, the row schedules of softmax and
// layer_norm) to the same outputs in the graph executor.
#include "transformer_zoo.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <string>

#include "loom/graph/compile.h"
#include "loom/graph/functor.h"
#include "loom/support/error.h"

namespace loom::bench {
namespace {

using graph::CallNode;
using graph::ConstantNode;
using graph::Expr;

TEST(TransformerZoo, BertBaseHasBertsOperatorsAndParameters) {
  graph::Function bert = BertEncoder({});
  std::map<std::string, int> calls;
  std::set<std::string> call_names;
  int64_t parameters = 0;
  graph::PostOrderVisit(bert, [&](const Expr& e) {
    if (const auto* call = e.as<CallNode>()) {
      ++calls[call->op->name];
      EXPECT_TRUE(call_names.insert(call->name_hint).second) << call->name_hint;
    } else if (const auto* constant = e.as<ConstantNode>()) {
      if (constant->data.NumElements() > 1) parameters += constant->data.NumElements();
    }
  });
  EXPECT_EQ(parameters, 85054464);  // BERT-base's 12 layers (no embeddings, no pooler)
  EXPECT_EQ(calls["nn.dense"], 12 * 6);
  EXPECT_EQ(calls["nn.matmul"], 12 * 2);
  EXPECT_EQ(calls["nn.softmax"], 12);
  EXPECT_EQ(calls["nn.layer_norm"], 12 * 2);
  EXPECT_EQ(calls["erf"], 12);
  EXPECT_EQ(calls["transpose"], 12 * 4);
  EXPECT_TRUE(call_names.count("layer11.attention.key.heads")) << "calls are named by place";
  ASSERT_EQ(bert->params.size(), 1u);
  EXPECT_EQ(bert->params[0].type().ConstShape().value(), (std::vector<int64_t>{1, 128, 768}));
  EXPECT_EQ(bert->body.type().ConstShape().value(), (std::vector<int64_t>{1, 128, 768}));
}

TEST(TransformerZoo, BadConfigsAreUserErrors) {
  auto message = [](const BertConfig& config) {
    try {
      BertEncoder(config);
    } catch (const Error& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({.layers = 1, .hidden = 100, .heads = 12})
                .find("12 heads must divide the hidden size 100"),
            std::string::npos);
  EXPECT_NE(message({.layers = 0}).find("layers, sequence, hidden, heads and ffn must be positive"),
            std::string::npos);
}

runtime::NDArray RunCompiled(const graph::Function& model, int opt_level,
                             const runtime::NDArray& input, size_t* kernels) {
  graph::CompiledModel compiled =
      graph::Compile(graph::IRModule::FromFunction(model), {.opt_level = opt_level});
  *kernels = compiled.kernel_names.size();
  runtime::GraphExecutor executor(graph::MakeGraphModel(compiled));
  executor.SetInput("hidden_states", input);
  executor.Run();
  runtime::NDArray output = executor.GetOutput(0);
  runtime::NDArray copy = runtime::NDArray::Empty(output.Shape(), output.dtype());
  copy.CopyFrom(output);
  return copy;
}

// Sizes that exercise every fast path BERT-base takes (rows of 32 and 64 features, heads
// of 16, a sequence of 32: multiples of 16) at a fraction of its cost.
TEST(TransformerZoo, SmallEncoderCompilesToTheSameOutputsAtO0AndO3) {
  BertConfig config{.layers = 2, .sequence = 32, .hidden = 64, .heads = 4, .ffn = 128};
  graph::Function model = BertEncoder(config);
  runtime::NDArray input = runtime::NDArray::Empty({1, 32, 64}, DataType::Float(32));
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  auto* values = static_cast<float*>(input.data());
  for (int64_t i = 0; i < input.NumElements(); ++i) values[i] = dist(rng);

  size_t kernels_o0 = 0, kernels_o3 = 0;
  runtime::NDArray want = RunCompiled(model, 0, input, &kernels_o0);
  runtime::NDArray got = RunCompiled(model, 3, input, &kernels_o3);
  ASSERT_EQ(got.Shape(), want.Shape());
  // Per layer: bias (and GELU, and the residual) fused into the dense kernels.
  EXPECT_LE(kernels_o3, config.layers * 15) << "-O3 fuses";
  EXPECT_GE(kernels_o0, config.layers * 30) << "-O0 runs every operator alone";
  const auto* w = static_cast<const float*>(want.data());
  const auto* g = static_cast<const float*>(got.data());
  double worst = 0, largest = 0;
  for (int64_t i = 0; i < want.NumElements(); ++i) {
    ASSERT_TRUE(std::isfinite(w[i]) && std::isfinite(g[i])) << "element " << i;
    largest = std::max(largest, std::abs(static_cast<double>(w[i])));
    worst = std::max(worst, std::abs(static_cast<double>(g[i]) - w[i]));
  }
  // layer_norm's output: of order 1.
  EXPECT_GT(largest, 0.5);
  EXPECT_LT(largest, 20.0);
  EXPECT_LE(worst, 1e-4 * largest) << "largest |output| " << largest;
}

}  // namespace
}  // namespace loom::bench
