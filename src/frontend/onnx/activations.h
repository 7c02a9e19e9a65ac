// ONNX's activation functions by name, as graph expressions. The recurrent layers (RNN, GRU,
// LSTM) name theirs in their `activations` attribute, with parameters from
// `activation_alpha` / `activation_beta`; the activation operators of the same names
// (ThresholdedRelu, Softsign) convert through the same expressions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "frontend/onnx/converter.h"

namespace loom::frontend::onnx {

struct Activation {
  std::string name;  // lower case, as ONNX's names compare: "sigmoid", "scaledtanh", ...
  double alpha = 0;
  double beta = 0;
};

// The functions' names as ONNX spells them ("Relu, Tanh, ..."), for error messages.
std::string ActivationNames();

// The activation called `name` (any case), its parameters taken in order from `alphas` and
// `betas` starting at *next_alpha / *next_beta (advanced past what it takes) or ONNX's
// defaults when those run out, as onnxruntime consumes the lists; nullopt for an unknown
// name.
std::optional<Activation> ParseActivation(const std::string& name, const std::vector<float>& alphas,
                                          size_t* next_alpha, const std::vector<float>& betas,
                                          size_t* next_beta);

// f(x), x of a floating dtype.
graph::Expr Activate(NodeContext& ctx, const Activation& f, graph::Expr x);

}  // namespace loom::frontend::onnx
