#include "frontend/onnx/activations.h"

#include <algorithm>
#include <cctype>

#include "loom/support/error.h"

namespace loom::frontend::onnx {
namespace {

// Each function: how many of activation_alpha / activation_beta it takes, and the defaults
// (those of the ONNX operator of the same name; Affine and ScaledTanh: identity-like).
struct ActivationKind {
  const char* spelling;
  int alphas;
  int betas;
  float default_alpha;
  float default_beta;
};

constexpr ActivationKind kActivationKinds[] = {
    {"Relu", 0, 0, 0.0f, 0.0f},       {"Tanh", 0, 0, 0.0f, 0.0f},
    {"Sigmoid", 0, 0, 0.0f, 0.0f},    {"Affine", 1, 1, 1.0f, 0.0f},
    {"LeakyRelu", 1, 0, 0.01f, 0.0f}, {"ThresholdedRelu", 1, 0, 1.0f, 0.0f},
    {"ScaledTanh", 1, 1, 1.0f, 1.0f}, {"HardSigmoid", 1, 1, 0.2f, 0.5f},
    {"Elu", 1, 0, 1.0f, 0.0f},        {"Softsign", 0, 0, 0.0f, 0.0f},
    {"Softplus", 0, 0, 0.0f, 0.0f},
};

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

double Take(const std::vector<float>& values, size_t* next, int count, float fallback) {
  if (count == 0) return 0.0;
  if (*next < values.size()) return values[(*next)++];
  return fallback;
}

}  // namespace

std::string ActivationNames() {
  std::string names;
  for (const ActivationKind& kind : kActivationKinds) {
    names += (names.empty() ? "" : ", ") + std::string(kind.spelling);
  }
  return names;
}

std::optional<Activation> ParseActivation(const std::string& name, const std::vector<float>& alphas,
                                          size_t* next_alpha, const std::vector<float>& betas,
                                          size_t* next_beta) {
  std::string lower = Lower(name);
  for (const ActivationKind& kind : kActivationKinds) {
    if (Lower(kind.spelling) != lower) continue;
    Activation f{lower};
    f.alpha = Take(alphas, next_alpha, kind.alphas, kind.default_alpha);
    f.beta = Take(betas, next_beta, kind.betas, kind.default_beta);
    return f;
  }
  return std::nullopt;
}

graph::Expr Activate(NodeContext& ctx, const Activation& f, graph::Expr x) {
  DataType dtype = x.type().dtype();
  auto scalar = [&](double value) { return ctx.Scalar(value, dtype); };
  const std::string& name = f.name;
  if (name == "relu") return ctx.Call("nn.relu", {x});
  if (name == "tanh") return ctx.Call("tanh", {x});
  if (name == "sigmoid") return ctx.Call("sigmoid", {x});
  if (name == "affine") {
    return ctx.Call("add", {ctx.Call("multiply", {x, scalar(f.alpha)}), scalar(f.beta)});
  }
  if (name == "leakyrelu") return ctx.Call("nn.leaky_relu", {x}, {{"alpha", f.alpha}});
  if (name == "thresholdedrelu") {
    graph::Expr above = ctx.Call("greater", {x, scalar(f.alpha)});
    return ctx.Call("where", {above, x, scalar(0)});
  }
  if (name == "scaledtanh") {
    graph::Expr inner = ctx.Call("tanh", {ctx.Call("multiply", {x, scalar(f.beta)})});
    return ctx.Call("multiply", {inner, scalar(f.alpha)});
  }
  if (name == "hardsigmoid") {
    return ctx.Call("nn.hard_sigmoid", {x}, {{"alpha", f.alpha}, {"beta", f.beta}});
  }
  if (name == "elu") return ctx.Call("nn.elu", {x}, {{"alpha", f.alpha}});
  if (name == "softsign") {
    return ctx.Call("divide", {x, ctx.Call("add", {ctx.Call("abs", {x}), scalar(1)})});
  }
  LOOM_ICHECK(name == "softplus") << "ParseActivation made the unknown activation '" << name << "'";
  return ctx.Call("nn.softplus", {x});
}

}  // namespace loom::frontend::onnx
