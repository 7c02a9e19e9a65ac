#include "transformer_zoo.h"

#include <cmath>
#include <random>
#include <string>

#include "loom/support/error.h"

namespace loom::bench {
namespace {

using graph::Expr;
using graph::Ints;
using graph::MakeCall;

const DataType kF32 = DataType::Float(32);

// Builds the encoder's layers in order, drawing every weight from one seeded generator.
class EncoderBuilder {
 public:
  explicit EncoderBuilder(const BertConfig& config) : config_(config), rng_(12) {}

  // x [1, S, in] -> x W^T + b [1, S, out]: nn.dense by weight [out, in], then add bias [out].
  Expr Linear(const Expr& x, int64_t in, int64_t out, const std::string& name) {
    double bound = std::sqrt(3.0 / static_cast<double>(in));
    Expr product =
        MakeCall("nn.dense", {x, Uniform({out, in}, -bound, bound, name + ".weight")}, {}, name);
    return MakeCall("add", {product, Uniform({out}, -0.02, 0.02, name + ".bias")}, {},
                    name + ".bias_add");
  }

  Expr LayerNorm(const Expr& x, const std::string& name) {
    int64_t h = config_.hidden;
    return MakeCall("nn.layer_norm",
                    {x, Uniform({h}, 0.9, 1.1, name + ".scale"),
                     Uniform({h}, -0.05, 0.05, name + ".bias")},
                    {{"axis", int64_t{-1}}, {"epsilon", 1e-12}}, name);
  }

  // x * 0.5 * (1 + erf(x / sqrt 2)), as exporters write it.
  static Expr Gelu(const Expr& x, const std::string& name) {
    Expr scaled = MakeCall("divide", {x, Scalar(std::sqrt(2.0f), name + ".sqrt2")}, {},
                           name + ".div");
    Expr erf = MakeCall("erf", {scaled}, {}, name + ".erf");
    Expr one_plus = MakeCall("add", {erf, Scalar(1.0f, name + ".one")}, {}, name + ".add");
    Expr product = MakeCall("multiply", {x, one_plus}, {}, name + ".mul");
    return MakeCall("multiply", {product, Scalar(0.5f, name + ".half")}, {}, name);
  }

  // Multi-head self-attention over x [1, S, H], before the residual.
  Expr Attention(const Expr& x, const std::string& name) {
    const int64_t s = config_.sequence, h = config_.hidden, heads = config_.heads;
    const int64_t d = h / heads;
    auto split_heads = [&](const std::string& part, const Ints& axes) {
      Expr projection = Linear(x, h, h, name + "." + part);
      Expr reshaped = MakeCall("reshape", {projection}, {{"newshape", Ints{1, s, heads, d}}},
                               name + "." + part + ".reshape");
      return MakeCall("transpose", {reshaped}, {{"axes", axes}}, name + "." + part + ".heads");
    };
    Expr query = split_heads("query", {0, 2, 1, 3});  // [1, heads, S, d]
    Expr key_t = split_heads("key", {0, 2, 3, 1});    // [1, heads, d, S]
    Expr value = split_heads("value", {0, 2, 1, 3});  // [1, heads, S, d]
    Expr scores = MakeCall("nn.matmul", {query, key_t}, {}, name + ".scores");
    float scale = 1.0f / std::sqrt(static_cast<float>(d));
    scores = MakeCall("multiply", {scores, Scalar(scale, name + ".scale")}, {},
                      name + ".scaled_scores");
    Expr probs = MakeCall("nn.softmax", {scores}, {{"axis", int64_t{-1}}}, name + ".probs");
    Expr context = MakeCall("nn.matmul", {probs, value}, {}, name + ".context");
    Expr merged = MakeCall("transpose", {context}, {{"axes", Ints{0, 2, 1, 3}}},
                           name + ".context.merge");
    merged = MakeCall("reshape", {merged}, {{"newshape", Ints{1, s, h}}}, name + ".context.flat");
    return Linear(merged, h, h, name + ".output");
  }

  // One post-norm encoder layer.
  Expr Layer(const Expr& x, const std::string& name) {
    Expr attended = MakeCall("add", {x, Attention(x, name + ".attention")}, {},
                             name + ".attention.residual");
    Expr h = LayerNorm(attended, name + ".attention.norm");
    Expr up = Gelu(Linear(h, config_.hidden, config_.ffn, name + ".ffn.up"), name + ".ffn.gelu");
    Expr down = Linear(up, config_.ffn, config_.hidden, name + ".ffn.down");
    return LayerNorm(MakeCall("add", {h, down}, {}, name + ".ffn.residual"), name + ".ffn.norm");
  }

 private:
  static graph::Constant Scalar(float value, const std::string& name) {
    runtime::NDArray data = runtime::NDArray::Empty({}, kF32);
    *static_cast<float*>(data.data()) = value;
    return graph::MakeConstant(data, name);
  }

  graph::Constant Uniform(const std::vector<int64_t>& shape, double low, double high,
                          const std::string& name) {
    runtime::NDArray data = runtime::NDArray::Empty(shape, kF32);
    std::uniform_real_distribution<float> dist(static_cast<float>(low), static_cast<float>(high));
    auto* values = static_cast<float*>(data.data());
    for (int64_t i = 0; i < data.NumElements(); ++i) values[i] = dist(rng_);
    return graph::MakeConstant(data, name);
  }

  BertConfig config_;
  std::mt19937 rng_;
};

}  // namespace

graph::Function BertEncoder(const BertConfig& config) {
  LOOM_CHECK_USER(config.layers > 0 && config.sequence > 0 && config.hidden > 0 &&
                  config.heads > 0 && config.ffn > 0)
      << "BertEncoder: layers, sequence, hidden, heads and ffn must be positive, got "
      << config.layers << ", " << config.sequence << ", " << config.hidden << ", "
      << config.heads << " and " << config.ffn;
  LOOM_CHECK_USER(config.hidden % config.heads == 0)
      << "BertEncoder: " << config.heads << " heads must divide the hidden size "
      << config.hidden << " (each head takes hidden / heads features)";
  EncoderBuilder net(config);
  graph::Var input = graph::MakeVar(
      "hidden_states", graph::TensorType({1, config.sequence, config.hidden}, kF32));
  Expr h = input;
  for (int64_t layer = 0; layer < config.layers; ++layer) {
    h = net.Layer(h, "layer" + std::to_string(layer));
  }
  return graph::MakeFunction({input}, h);
}

const std::vector<ZooModel>& TransformerZoo() {
  static const std::vector<ZooModel> models{
      {"bert_base", [](int64_t) { return BertEncoder({}); }}};
  return models;
}

}  // namespace loom::bench
