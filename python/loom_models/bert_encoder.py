"""A BERT-base-shaped transformer encoder built with onnx.helper (opset 17).

Shape of BERT-base: 12 post-norm layers, hidden 768, 12 heads of 64, FFN 3072, here at
batch 1 and sequence 128. Each layer is written as exporters write it: MatMul by a constant
[in, out] weight plus an Add of the bias; Reshape/Transpose to split and merge heads; MatMul
for Q·K^T and for attention·V; Softmax; LayerNormalization; and GELU in its exact form
x * 0.5 * (1 + Erf(x / sqrt 2)). With the attention mask (int64 [1, 128], 1 = attend), the
masked positions are chosen away with Where over the mask expanded to the scores' shape.

Weights come from numpy under a fixed seed, scaled by 1/sqrt(fan_in) so each projection
keeps unit variance and the activations stay O(1) through every layer.
"""

import math

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
MASK_FILL = -10000.0  # the score of a masked position before Softmax (BERT's constant)


class Config:
    def __init__(self, layers=12, hidden=768, heads=12, ffn=3072, sequence=128,
                 attention_mask=True, dynamic=False):
        if layers < 1:
            raise ValueError(f"the encoder needs at least one layer, got {layers}")
        if hidden % heads:
            raise ValueError(f"hidden size {hidden} is not a multiple of the {heads} heads")
        self.layers = layers
        self.hidden = hidden
        self.heads = heads
        self.head_size = hidden // heads
        self.ffn = ffn
        self.sequence = sequence
        self.attention_mask = attention_mask
        # The sequence length symbolic ("sequence"), for models compiled once for every length.
        self.dynamic = dynamic


class _GraphBuilder:
    """Collects nodes and initializers. Names are the callers' hints, which spell out the
    place in the network ("layer3.ffn.up.weight"): unique by construction, and checked."""

    def __init__(self, rng):
        self.rng = rng
        self.nodes = []
        self.initializers = []
        self._names = set()

    def _claim(self, hint):
        if hint in self._names:
            raise AssertionError(f"bert_encoder names the value '{hint}' twice")
        self._names.add(hint)
        return hint

    def constant(self, hint, array):
        name = self._claim(hint)
        self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def op(self, op_type, inputs, hint, **attributes):
        output = self._claim(hint)
        self.nodes.append(helper.make_node(op_type, inputs, [output], name=output,
                                           **attributes))
        return output

    def linear(self, x, fan_in, fan_out, hint):
        """x @ W + b with W ~ N(0, 1/fan_in), b ~ N(0, 0.02^2)."""
        weight = self.rng.standard_normal((fan_in, fan_out), dtype=np.float32)
        weight /= np.float32(math.sqrt(fan_in))
        bias = self.rng.normal(0.0, 0.02, fan_out).astype(np.float32)
        product = self.op("MatMul", [x, self.constant(f"{hint}.weight", weight)],
                          f"{hint}.matmul")
        return self.op("Add", [product, self.constant(f"{hint}.bias", bias)], hint)

    def layer_norm(self, x, size, hint):
        scale = self.rng.uniform(0.8, 1.2, size).astype(np.float32)
        shift = self.rng.normal(0.0, 0.05, size).astype(np.float32)
        return self.op("LayerNormalization",
                       [x, self.constant(f"{hint}.scale", scale),
                        self.constant(f"{hint}.bias", shift)],
                       hint, axis=-1, epsilon=1e-12)

    def gelu(self, x, hint):
        scaled = self.op("Div", [x, self.constant(f"{hint}.sqrt2", np.float32(math.sqrt(2)))],
                         f"{hint}.div")
        erf = self.op("Erf", [scaled], f"{hint}.erf")
        one_plus = self.op("Add", [erf, self.constant(f"{hint}.one", np.float32(1))],
                           f"{hint}.add")
        product = self.op("Mul", [x, one_plus], f"{hint}.mul")
        return self.op("Mul", [product, self.constant(f"{hint}.half", np.float32(0.5))], hint)


def _attention(b, x, mask_is_off, config, hint):
    """Multi-head self-attention over x [1, S, H], before the residual."""
    # A dynamic encoder (config.dynamic) keeps the sequence length symbolic: its reshapes
    # copy the batch and sequence dimensions (0) instead of naming them.
    sequence = 0 if config.dynamic else config.sequence
    heads_shape = b.constant(f"{hint}.heads_shape",
                             np.array([0 if config.dynamic else 1, sequence, config.heads,
                                       config.head_size], dtype=np.int64))

    def split_heads(projection, perm, name):
        reshaped = b.op("Reshape", [projection, heads_shape], f"{hint}.{name}.reshape")
        return b.op("Transpose", [reshaped], f"{hint}.{name}.heads", perm=perm)

    query = split_heads(b.linear(x, config.hidden, config.hidden, f"{hint}.query"),
                        [0, 2, 1, 3], "query")               # [1, h, S, d]
    key_t = split_heads(b.linear(x, config.hidden, config.hidden, f"{hint}.key"),
                        [0, 2, 3, 1], "key")                 # [1, h, d, S]
    value = split_heads(b.linear(x, config.hidden, config.hidden, f"{hint}.value"),
                        [0, 2, 1, 3], "value")               # [1, h, S, d]
    scores = b.op("MatMul", [query, key_t], f"{hint}.scores")
    scale = b.constant(f"{hint}.scale", np.float32(1.0 / math.sqrt(config.head_size)))
    scores = b.op("Mul", [scores, scale], f"{hint}.scaled_scores")
    if mask_is_off is not None:
        fill = b.constant(f"{hint}.mask_fill", np.float32(MASK_FILL))
        scores = b.op("Where", [mask_is_off, fill, scores], f"{hint}.masked_scores")
    probs = b.op("Softmax", [scores], f"{hint}.probs", axis=-1)
    context = b.op("MatMul", [probs, value], f"{hint}.context")      # [1, h, S, d]
    merged = b.op("Transpose", [context], f"{hint}.context.merge", perm=[0, 2, 1, 3])
    merged = b.op("Reshape",
                  [merged, b.constant(f"{hint}.hidden_shape",
                                      np.array([0 if config.dynamic else 1, sequence,
                                                config.hidden], dtype=np.int64))],
                  f"{hint}.context.flat")
    return b.linear(merged, config.hidden, config.hidden, f"{hint}.output")


def _mask_is_off(b, config):
    """The bool [1, heads, S, S] tensor that is true where the mask says not to attend."""
    is_off = b.op("Equal", ["attention_mask", b.constant("mask.zero", np.int64(0))],
                  "mask.is_off")
    per_key = b.op("Reshape",
                   [is_off, b.constant("mask.key_shape",
                                       np.array([1, 1, 1, -1], dtype=np.int64))],
                   "mask.per_key")
    if config.dynamic:
        return per_key  # Where broadcasts it over the heads and queries
    scores_shape = np.array([1, config.heads, config.sequence, config.sequence], dtype=np.int64)
    return b.op("Expand", [per_key, b.constant("mask.scores_shape", scores_shape)],
                "mask.expanded")


def build(config=None, seed=0):
    """The encoder as an onnx.ModelProto, checked by onnx.checker."""
    config = config or Config()
    b = _GraphBuilder(np.random.default_rng(seed))
    sequence = "sequence" if config.dynamic else config.sequence
    inputs = [helper.make_tensor_value_info("hidden_states", TensorProto.FLOAT,
                                            [1, sequence, config.hidden])]
    mask_is_off = None
    if config.attention_mask:
        inputs.append(helper.make_tensor_value_info("attention_mask", TensorProto.INT64,
                                                    [1, sequence]))
        mask_is_off = _mask_is_off(b, config)
    x = "hidden_states"
    for layer in range(config.layers):
        hint = f"layer{layer}"
        attended = _attention(b, x, mask_is_off, config, f"{hint}.attention")
        x = b.layer_norm(b.op("Add", [x, attended], f"{hint}.attention.residual"),
                         config.hidden, f"{hint}.attention.norm")
        hidden = b.gelu(b.linear(x, config.hidden, config.ffn, f"{hint}.ffn.up"),
                        f"{hint}.ffn.gelu")
        down = b.linear(hidden, config.ffn, config.hidden, f"{hint}.ffn.down")
        x = b.layer_norm(b.op("Add", [x, down], f"{hint}.ffn.residual"),
                         config.hidden, f"{hint}.ffn.norm")
    # The last LayerNormalization writes the model's output directly.
    b.nodes[-1].output[0] = "last_hidden_state"
    graph = helper.make_graph(
        b.nodes, "bert_encoder", inputs,
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT,
                                       [1, sequence, config.hidden])],
        initializer=b.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="loom_models.bert_encoder")
    onnx.checker.check_model(model)
    return model


def export(path, layers=12, attention_mask=True, seed=0, dynamic=False):
    onnx.save(build(Config(layers=layers, attention_mask=attention_mask, dynamic=dynamic), seed),
              path)


def attention_mask(sequence=128, attended=100):
    """A padded batch's mask: the first `attended` positions are real tokens."""
    mask = np.zeros((1, sequence), dtype=np.int64)
    mask[0, :attended] = 1
    return mask
