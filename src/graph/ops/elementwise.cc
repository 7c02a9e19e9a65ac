// Elementwise and broadcasting operators: each one topi computation, fused freely.
#include "loom/graph/op_util.h"
#include "loom/topi/elementwise.h"

namespace loom::graph::ops {
namespace {

using UnaryFn = te::Tensor (*)(const te::Tensor&);
using BinaryFn = te::Tensor (*)(const te::Tensor&, const te::Tensor&);

// The type is read off the compute, so an input type the operator does not take (exp of an
// integer tensor) is an error naming the call when the call is built.
void RegisterUnary(const std::string& name, UnaryFn fn, const std::string& doc) {
  RegisterComputedOp(name,
                     [fn](const CallInfo&, const std::vector<te::Tensor>& in) {
                       return std::vector<te::Tensor>{fn(in[0])};
                     })
      .Describe(doc)
      .Inputs({"x"})
      .Pattern(OpPattern::kElemWise);
}

void RegisterBinary(const std::string& name, BinaryFn fn, const std::string& doc) {
  OpBuilder(OpRegistry::Register(name))
      .Describe(doc)
      .Inputs({"a", "b"})
      .Pattern(OpPattern::kBroadcast)
      .TypeRelation(BroadcastInputs())
      .Compute([fn](const CallInfo&, const std::vector<te::Tensor>& in) {
        return std::vector<te::Tensor>{fn(in[0], in[1])};
      });
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterUnary("negative", topi::negative, "-x");
  RegisterUnary("abs", topi::abs, "|x|");
  RegisterUnary("exp", topi::exp, "e^x");
  RegisterUnary("log", topi::log, "natural logarithm");
  RegisterUnary("sqrt", topi::sqrt, "square root");
  RegisterUnary("rsqrt", topi::rsqrt, "1 / sqrt(x)");
  RegisterUnary("reciprocal", topi::reciprocal, "1 / x");
  RegisterUnary("sigmoid", topi::sigmoid, "1 / (1 + e^-x)");
  RegisterUnary("tanh", topi::tanh, "hyperbolic tangent");
  RegisterUnary("erf", topi::erf, "the error function");
  RegisterUnary("nn.gelu", topi::gelu, "x * Phi(x) (exact, erf-based)");
  RegisterUnary("nn.relu", topi::relu, "max(x, 0)");
  RegisterUnary("floor", topi::floor, "round down");
  RegisterUnary("ceil", topi::ceil, "round up");
  RegisterUnary("round", topi::round, "round half to even");
  RegisterUnary("sign", topi::sign, "-1, 0 or 1");
  RegisterUnary("sin", topi::sin, "sine");
  RegisterUnary("cos", topi::cos, "cosine");
  RegisterBinary("add", topi::add, "a + b, broadcasting");
  RegisterBinary("subtract", topi::subtract, "a - b, broadcasting");
  RegisterBinary("multiply", topi::multiply, "a * b, broadcasting");
  RegisterBinary("divide", topi::divide, "a / b, broadcasting");
  RegisterBinary("power", topi::power, "a ^ b, broadcasting");
  RegisterBinary("maximum", topi::maximum, "max(a, b), broadcasting");
  RegisterBinary("minimum", topi::minimum, "min(a, b), broadcasting");
  RegisterBinary("left_shift", topi::left_shift, "a << b of integers, broadcasting");
  RegisterBinary("right_shift", topi::right_shift,
                 "a >> b of integers (arithmetic if signed), broadcasting");
  return true;
}();

}  // namespace
}  // namespace loom::graph::ops
