// Transformer encoders built through the graph API, for the graph compiler's benchmark and
// tests: a BERT-shaped encoder at batch 1, float32, with random weights.
//
//   graph::Function bert = BertEncoder({});   // 1x128x768 "hidden_states" -> 1x128x768
//   graph::CompiledModel model = graph::Compile(graph::IRModule::FromFunction(bert), {});
//
// Each layer is written as ONNX exporters (and python/loom_models/bert_encoder.py) write
// it, in the operators the ONNX importer makes of that: every projection nn.dense by a
// constant [out, in] weight plus an add of the bias; reshape + transpose to split the heads
// ([1, S, H] -> [1, heads, S, d], keys to [1, heads, d, S]); nn.matmul for Q.K^T and for
// probabilities.V; a multiply by 1/sqrt(d); nn.softmax over the keys; transpose + reshape
// to merge the heads; residual add then nn.layer_norm (post-norm, epsilon 1e-12); GELU in
// its exact form x * 0.5 * (1 + erf(x / sqrt 2)). No attention mask: every position
// attends. Calls are named by their place ("layer3.attention.query", "layer3.ffn.gelu").
// Weights are random but deterministic (one seed): projections uniform in
// +-sqrt(3 / fan_in) (unit variance out for unit variance in), biases small, layer_norm's
// scale near 1 and shift near 0, so activations stay of order 1 through every layer.
#pragma once

#include <cstdint>
#include <vector>

#include "loom/graph/expr.h"
#include "model_zoo.h"

namespace loom::bench {

struct BertConfig {
  int64_t layers = 12;
  int64_t sequence = 128;
  int64_t hidden = 768;
  int64_t heads = 12;  // must divide hidden
  int64_t ffn = 3072;  // the feed-forward block's inner width
};

// The encoder: input "hidden_states" [1, sequence, hidden] float32, one output of that
// shape. Sizes must be positive and heads must divide hidden (else a loom::Error).
// BERT-base (the default config) has 85,054,464 parameters in its 12 layers.
graph::Function BertEncoder(const BertConfig& config);

// "bert_base": BertEncoder({}) (the model zoo's image size does not apply and is ignored).
const std::vector<ZooModel>& TransformerZoo();

}  // namespace loom::bench
