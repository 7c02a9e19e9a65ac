// FoldScaleAxis: a constant per-channel scale next to a convolution or dense layer folds
// into the layer's weights. After the layer (what batch_norm's scale becomes after
// SimplifyInference and FoldConstant), per output channel:
//
//   multiply(conv2d(x, W), s)               ->  conv2d(x, W * s')
//   multiply(add(conv2d(x, W), b), s)       ->  add(conv2d(x, W * s'), b * s)
//   multiply(nn.bias_add(conv2d(x, W), b))  ->  nn.bias_add(conv2d(x, W * s'), b * s'')
//
// and before it, per input channel (groups = 1; zero padding stays zero when scaled):
//
//   conv2d(multiply(x, s), W)               ->  conv2d(x, W * s''')
//
// s is a Constant broadcasting along the channel axis only ([K, 1, 1] or [1, K, 1, 1] for
// conv2d, [N] for dense, or one value for all channels); s', s'' and s''' are s reshaped to
// scale the weight's output-channel rows, the bias's [K] and the weight's input-channel
// columns. The scaled weight and bias are graph calls FoldConstant turns into constants
// (keeping the weight's and bias's names). Scaling output channel k of a convolution is
// scaling filter k, for any groups, strides, padding or dilation. Only a layer, bias add or
// input scale that nothing else uses is rewritten: another user would see other values.
#include <optional>
#include <unordered_map>

#include "graph/transforms/map_functions.h"
#include "loom/graph/functor.h"
#include "loom/graph/transform.h"

namespace loom::graph {
namespace {

// The output channel axis of a layer whose weight holds one row per output channel
// (dimension 0) in the output's dtype, or nullopt for other calls.
std::optional<int> ChannelAxis(const CallNode* call) {
  if (call == nullptr || call->op == nullptr) return std::nullopt;
  const std::string& name = call->op->name;
  bool layer = name == "nn.conv2d" || name == "nn.conv1d" || name == "nn.dense";
  if (!layer || call->args[1].type().dtype() != call->checked_type.dtype()) return std::nullopt;
  return name == "nn.dense" ? call->checked_type.ndim() - 1 : 1;
}

// How many values `scale` holds along `axis` of `out` (its channel count, or 1 when one
// value scales every channel), when it is 1 along every other dimension and broadcasts into
// `out` without enlarging it; nullopt otherwise.
std::optional<int64_t> PerChannelLength(const Type& scale, const Type& out, int axis) {
  std::vector<int64_t> dims = scale.ConstShape().value();
  int offset = out.ndim() - static_cast<int>(dims.size());
  if (offset < 0) return std::nullopt;
  int64_t length = 1;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    int64_t channels = 0;
    if (offset + static_cast<int>(d) != axis || !IsConstInt(out.shape()[axis], &channels) ||
        channels != dims[d]) {
      return std::nullopt;
    }
    length = dims[d];
  }
  return length;
}

// A name for a scaled copy of `e`: the constant's or call's own.
std::string NameOf(const Expr& e) {
  if (const auto* constant = e.as<ConstantNode>()) return constant->name_hint;
  if (const auto* call = e.as<CallNode>()) return call->name_hint;
  return "";
}

// `scale` reshaped to `rank` dimensions: its `length` values along `axis`, 1 elsewhere.
Expr ScaleAlong(const Expr& scale, int64_t length, int rank, int axis) {
  Ints shape(rank, 1);
  shape[axis] = length;
  return MakeCall("reshape", {scale}, {{"newshape", shape}});
}

class ScaleFolder : public ExprMutator {
 public:
  explicit ScaleFolder(const Function& function) {
    ++uses_[function->body.get()];
    PostOrderVisit(function->body, [&](const Expr& e) {
      auto use = [&](const Expr& operand) { ++uses_[operand.get()]; };
      if (const auto* call = e.as<CallNode>()) {
        for (const Expr& arg : call->args) use(arg);
        if (call->callee.defined()) use(call->callee);
      } else if (const auto* tuple = e.as<TupleNode>()) {
        for (const Expr& field : tuple->fields) use(field);
      } else if (const auto* item = e.as<TupleGetItemNode>()) {
        use(item->tuple);
      }
    });
  }

  Expr VisitExpr_(const CallNode* op) override {
    if (op->op != nullptr && op->op->name == "multiply") {
      for (int side = 0; side < 2; ++side) {
        if (std::optional<Expr> folded = Fold(op->args[side], op->args[1 - side])) return *folded;
      }
    }
    if (std::optional<Expr> folded = FoldInputScale(*op)) return *folded;
    return ExprMutator::VisitExpr_(op);
  }

 private:
  bool SingleUse(const Expr& e) const { return uses_.at(e.get()) == 1; }

  // `producer * scale` with the scale folded into the layer producing `producer` (directly
  // or through a bias add), or nullopt when the pattern does not apply.
  std::optional<Expr> Fold(const Expr& producer, const Expr& scale) {
    const auto* s = scale.as<ConstantNode>();
    const auto* call = producer.as<CallNode>();
    if (s == nullptr || call == nullptr || call->op == nullptr || !SingleUse(producer)) {
      return std::nullopt;
    }
    if (std::optional<int> axis = ChannelAxis(call)) {
      std::optional<int64_t> length = PerChannelLength(scale.type(), producer.type(), *axis);
      if (!length) return std::nullopt;
      return ScaledLayer(producer, scale, *length);
    }
    const std::string& name = call->op->name;
    if (name == "add") {
      for (int side = 0; side < 2; ++side) {
        const Expr& layer = call->args[side];
        const Expr& bias = call->args[1 - side];
        // The bias must not enlarge the layer's output (then it is what the scale fits).
        const auto* layer_call = layer.as<CallNode>();
        std::optional<int> axis = ChannelAxis(layer_call);
        if (!axis || !SingleUse(layer) || !Equal(layer.type(), call->checked_type)) continue;
        std::optional<int64_t> length = PerChannelLength(scale.type(), layer.type(), *axis);
        if (!length) continue;
        std::vector<Expr> args(2);
        args[side] = ScaledLayer(layer, scale, *length);
        args[1 - side] = MakeCall("multiply", {VisitExpr(bias), scale}, {}, NameOf(bias));
        return MakeCall("add", std::move(args), {}, call->name_hint);
      }
    } else if (name == "nn.bias_add") {
      const auto* layer = call->args[0].as<CallNode>();
      std::optional<int> axis = ChannelAxis(layer);
      int64_t bias_axis = call->attrs.GetInt("axis");
      if (bias_axis < 0) bias_axis += call->checked_type.ndim();
      if (!axis || *axis != bias_axis || !SingleUse(call->args[0])) return std::nullopt;
      std::optional<int64_t> length = PerChannelLength(scale.type(), layer->checked_type, *axis);
      if (!length) return std::nullopt;
      const Expr& bias = call->args[1];
      Expr scaled_bias = MakeCall("multiply", {VisitExpr(bias), ScaleAlong(scale, *length, 1, 0)},
                                  {}, NameOf(bias));
      return MakeCall(call->op, {ScaledLayer(call->args[0], scale, *length), scaled_bias},
                      call->attrs, call->name_hint);
    }
    return std::nullopt;
  }

  // `layer(multiply(x, scale), W)` as `layer(x, W * scale)` when the scale is per input
  // channel, or nullopt.
  std::optional<Expr> FoldInputScale(const CallNode& layer) {
    if (!ChannelAxis(&layer) || (layer.attrs.Has("groups") && layer.attrs.GetInt("groups") != 1)) {
      return std::nullopt;
    }
    const Expr& data = layer.args[0];
    const auto* product = data.as<CallNode>();
    if (product == nullptr || product->op == nullptr || product->op->name != "multiply" ||
        !SingleUse(data)) {
      return std::nullopt;
    }
    // The input channels: dense's last data dimension, a convolution's dimension 1.
    int axis = layer.op->name == "nn.dense" ? data.type().ndim() - 1 : 1;
    for (int side = 0; side < 2; ++side) {
      const Expr& x = product->args[side];
      const Expr& scale = product->args[1 - side];
      const Expr& weight = layer.args[1];
      if (!scale.as<ConstantNode>() || !Equal(x.type(), data.type()) ||
          scale.type().dtype() != weight.type().dtype()) {
        continue;
      }
      std::optional<int64_t> length = PerChannelLength(scale.type(), data.type(), axis);
      if (!length) continue;
      Expr column_scale = ScaleAlong(scale, *length, weight.type().ndim(), 1);
      Expr scaled_weight =
          MakeCall("multiply", {VisitExpr(weight), column_scale}, {}, NameOf(weight));
      return MakeCall(layer.op, {VisitExpr(x), scaled_weight}, layer.attrs, layer.name_hint);
    }
    return std::nullopt;
  }

  // `layer` (rewritten, so an input scale folds too) with its weight's output-channel rows
  // scaled by the `length` values of scale.
  Expr ScaledLayer(const Expr& layer, const Expr& scale, int64_t length) {
    Expr rewritten_layer = VisitExpr(layer);
    const auto* rewritten = rewritten_layer.as<CallNode>();
    LOOM_ICHECK(rewritten && rewritten->op == layer.as<CallNode>()->op)
        << "FoldScaleAxis rewrote a layer into another operator";
    const Expr& weight = rewritten->args[1];
    Expr row_scale = ScaleAlong(scale, length, weight.type().ndim(), 0);
    Expr scaled_weight = MakeCall("multiply", {weight, row_scale}, {}, NameOf(weight));
    return MakeCall(rewritten->op, {rewritten->args[0], scaled_weight}, rewritten->attrs,
                    rewritten->name_hint);
  }

  // How many references each node of the original function has (its body counts one).
  std::unordered_map<const Object*, int> uses_;
};

}  // namespace

Pass FoldScaleAxis() {
  return {"FoldScaleAxis", [](const IRModule& module) {
            return MapFunctions(module, [](const Function& function) {
              return ScaleFolder(function).VisitExpr(function);
            });
          }};
}

}  // namespace loom::graph
