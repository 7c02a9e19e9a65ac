// Elementwise operators with attributes (activations, clip, cast, dropout), comparisons and
// logical operators, mod and where: each one topi computation, fused freely.
#include "loom/graph/op_util.h"
#include "loom/te/operation.h"
#include "loom/topi/elementwise.h"

namespace loom::graph::ops {
namespace {

using Tensors = std::vector<te::Tensor>;
using BinaryFn = te::Tensor (*)(const te::Tensor&, const te::Tensor&);

OpBuilder RegisterUnaryWith(const std::string& name, const std::string& doc,
                            std::function<te::Tensor(const CallInfo&, const te::Tensor&)> fn,
                            const std::string& input = "x") {
  OpBuilder op = RegisterComputedOp(
      name, [fn](const CallInfo& info, const Tensors& in) { return Tensors{fn(info, in[0])}; });
  op.Describe(doc).Inputs({input}).Pattern(OpPattern::kElemWise);
  return op;
}

void RegisterBinary(const std::string& name, BinaryFn fn, const std::string& doc,
                    std::vector<std::string> inputs = {"a", "b"}) {
  RegisterComputedOp(name,
                     [fn](const CallInfo&, const Tensors& in) { return Tensors{fn(in[0], in[1])}; })
      .Describe(doc)
      .Inputs(std::move(inputs))
      .Pattern(OpPattern::kBroadcast);
}

// x's elements in a tensor of their own.
te::Tensor Copy(const CallInfo&, const te::Tensor& x) {
  return te::compute(x.shape(), [&](const Array<Var>& i) { return x(i); }, "copy", "elemwise");
}

te::Tensor NotEqual(const te::Tensor& a, const te::Tensor& b) {
  return topi::logical_not(topi::equal(a, b));
}

void RegisterActivations() {
  RegisterUnaryWith("nn.leaky_relu", "x where x >= 0, alpha * x below",
                    [](const CallInfo& info, const te::Tensor& x) {
                      return topi::leaky_relu(x, info.attrs.GetFloat("alpha"));
                    })
      .Attr("alpha", AttrKind::kFloat, 0.01, "slope below 0");
  RegisterUnaryWith("nn.elu", "x where x >= 0, alpha * (e^x - 1) below",
                    [](const CallInfo& info, const te::Tensor& x) {
                      return topi::elu(x, info.attrs.GetFloat("alpha"));
                    })
      .Attr("alpha", AttrKind::kFloat, 1.0, "scale below 0");
  RegisterUnaryWith("nn.selu", "gamma * elu(x, alpha)",
                    [](const CallInfo& info, const te::Tensor& x) {
                      return topi::selu(x, info.attrs.GetFloat("alpha"),
                                        info.attrs.GetFloat("gamma"));
                    })
      .Attr("alpha", AttrKind::kFloat, 1.67326319217681884765625, "scale below 0")
      .Attr("gamma", AttrKind::kFloat, 1.05070102214813232421875, "scale of the output");
  RegisterUnaryWith("nn.softplus", "log(1 + e^x)",
                    [](const CallInfo&, const te::Tensor& x) { return topi::softplus(x); });
  RegisterUnaryWith("nn.hard_sigmoid", "max(0, min(1, alpha * x + beta))",
                    [](const CallInfo& info, const te::Tensor& x) {
                      return topi::hard_sigmoid(x, info.attrs.GetFloat("alpha"),
                                                info.attrs.GetFloat("beta"));
                    })
      .Attr("alpha", AttrKind::kFloat, 0.2, "slope")
      .Attr("beta", AttrKind::kFloat, 0.5, "offset");
  RegisterUnaryWith("nn.hard_swish", "x * hard_sigmoid(x, 1/6, 1/2)",
                    [](const CallInfo&, const te::Tensor& x) { return topi::hard_swish(x); });
  RegisterUnaryWith("clip", "min(max(x, a_min), a_max)",
                    [](const CallInfo& info, const te::Tensor& x) {
                      return topi::clip(x, info.attrs.GetFloat("a_min"),
                                        info.attrs.GetFloat("a_max"));
                    })
      .Attr("a_min", AttrKind::kFloat, std::nullopt, "lower bound")
      .Attr("a_max", AttrKind::kFloat, std::nullopt, "upper bound");
  // Inference keeps every element (SimplifyInference removes the call); the copy is a
  // compute of its own so that a group made of it alone still has an output to write.
  RegisterUnaryWith("nn.dropout", "x (inference: identity)", Copy, "data")
      .Attr("rate", AttrKind::kFloat, 0.5, "the training drop probability (unused)");
  // What Compile puts between a constant and a model output: the executor hands outputs
  // out of storage slots, never out of the parameters blob.
  RegisterUnaryWith("copy", "x, as a tensor of its own", Copy, "data");
  RegisterUnaryWith(
      "cast", "conversion to dtype",
      [](const CallInfo& info, const te::Tensor& x) {
        DataType dtype = DataType::Parse(info.attrs.GetString("dtype"));
        return topi::cast(x, dtype);
      },
      "data")
      .Attr("dtype", AttrKind::kString, std::nullopt, "the target type (\"float32\", \"int64\")");
  RegisterUnaryWith("logical_not", "not x (bool)",
                    [](const CallInfo&, const te::Tensor& x) { return topi::logical_not(x); });
  RegisterBinary("nn.prelu", topi::prelu, "x * slope where x < 0 (slope broadcasts to x)",
                 {"x", "slope"});
}

void RegisterComparisons() {
  RegisterBinary("equal", topi::equal, "a == b (bool), broadcasting");
  RegisterBinary("not_equal", NotEqual, "a != b (bool), broadcasting");
  RegisterBinary("less", topi::less, "a < b (bool), broadcasting");
  RegisterBinary("less_equal", topi::less_equal, "a <= b (bool), broadcasting");
  RegisterBinary("greater", topi::greater, "a > b (bool), broadcasting");
  RegisterBinary("greater_equal", topi::greater_equal, "a >= b (bool), broadcasting");
  RegisterBinary("logical_and", topi::logical_and, "a and b (bool), broadcasting");
  RegisterBinary("logical_or", topi::logical_or, "a or b (bool), broadcasting");
  RegisterBinary("logical_xor", topi::logical_xor, "a xor b (bool), broadcasting");

  RegisterComputedOp("mod",
                     [](const CallInfo& info, const Tensors& in) {
                       return Tensors{topi::mod(in[0], in[1], info.attrs.GetInt("fmod") != 0)};
                     })
      .Describe("remainder (ONNX Mod), broadcasting")
      .Inputs({"a", "b"})
      .Pattern(OpPattern::kBroadcast)
      .Attr("fmod", AttrKind::kInt, int64_t{0},
            "0: sign of the divisor (integers); 1: sign of the dividend (C fmod)");

  RegisterComputedOp(
      "where",
      [](const CallInfo&, const Tensors& in) { return Tensors{topi::where(in[0], in[1], in[2])}; })
      .Describe("condition ? a : b, the three broadcasting")
      .Inputs({"cond", "a", "b"})
      .Pattern(OpPattern::kBroadcast);
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterActivations();
  RegisterComparisons();
  return true;
}();

}  // namespace
}  // namespace loom::graph::ops
