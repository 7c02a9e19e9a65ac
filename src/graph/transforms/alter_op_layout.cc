// AlterOpLayout: each call the target's strategy has a layout rewrite for (graph/strategy.h;
// the x86 one turns nn.conv2d into the blocked NCHW[x]c kernel it picks for the workload,
// and nn.dense with a constant weight into a GEMM on packed panels) is rewritten, and the
// blocked layout flows on through operators that do not care about it (elementwise,
// per-channel broadcasts, bias_add, residual adds, pools that take a layout, channel
// concatenations of whole blocks, pads of rows and columns), so that layout transforms stand
// only where a
// layout-aware operator (flatten, dense, ...) or the function's result needs NCHW;
// transforms that meet cancel or merge into one. A target without layout rewrites keeps
// the graph as it is.
//
// Each expression of "main" is rewritten once, operands first, into a Value: the
// rewritten expression and the layout it holds the original's tensor in. A consumer asks
// for the layout it needs (Convert), which adds at most one transform per value and layout;
// the data layout transforms of the input graph are absorbed into the Values (and made
// again only where a consumer still needs them).
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "loom/graph/functor.h"
#include "loom/graph/strategy.h"
#include "loom/graph/transform.h"

namespace loom::graph {
namespace {

// Whether every tensor of `type` (a tuple's fields) has a constant shape.
bool HasConstantShapes(const Type& type) {
  if (type.is_tuple()) {
    return std::all_of(type.fields().begin(), type.fields().end(), HasConstantShapes);
  }
  return type.ConstShape().has_value();
}

bool IsOp(const CallNode* call, const char* name) { return call->op && call->op->name == name; }

// A layout_transform between two data layouts (NCHW, NCHW<k>c): the kind this pass makes,
// merges and cancels.
bool IsDataLayoutTransform(const CallNode* call) {
  return IsOp(call, "layout_transform") && DataLayoutBlock(call->attrs.GetString("src_layout")) &&
         DataLayoutBlock(call->attrs.GetString("dst_layout"));
}

// The layout consumers of `e` in the original graph expect: a data layout transform's
// destination, NCHW for other 4-d tensors, none ("") for the rest.
std::string OriginalLayout(const Expr& e) {
  if (const auto* call = e.as<CallNode>(); call && IsDataLayoutTransform(call)) {
    return call->attrs.GetString("dst_layout");
  }
  return e.type().is_tensor() && e.type().ndim() == 4 ? "NCHW" : "";
}

bool AllOnes(const Type& type) {
  std::optional<std::vector<int64_t>> shape = type.ConstShape();
  if (!shape) return false;
  for (int64_t extent : *shape) {
    if (extent != 1) return false;
  }
  return true;
}

// What the rewritten graph holds for an original expression.
struct Value {
  Expr expr;
  std::string layout;  // the layout expr holds the original's tensor in; "" for none
};

class LayoutRewriter {
 public:
  explicit LayoutRewriter(const Target& target) : target_(target) {}

  Expr Rewrite(const Function& main) {
    PostOrderVisit(main->body, [&](const Expr& e) { values_[e.get()] = Visit(e); });
    Expr body = Convert(values_.at(main->body.get()), OriginalLayout(main->body));
    if (body.same_as(main->body)) return main;
    return MakeFunction(main->params, body, main->attrs);
  }

 private:
  const Value& ValueOf(const Expr& e) const { return values_.at(e.get()); }

  // `v`'s tensor in `layout`: v's expression, or one layout transform of it, shared by every
  // consumer that asks for the same layout.
  Expr Convert(const Value& v, const std::string& layout) {
    if (layout.empty() || v.layout == layout) return v.expr;
    LOOM_ICHECK(!v.layout.empty())
        << "AlterOpLayout: converting a value without a layout to " << layout;
    auto [it, inserted] = converted_.try_emplace({v.expr.get(), layout});
    if (inserted) it->second = Transform(v.expr, v.layout, layout);
    return it->second;
  }

  static Expr Transform(const Expr& e, const std::string& src, const std::string& dst) {
    return MakeCall("layout_transform", {e}, {{"src_layout", src}, {"dst_layout", dst}});
  }

  Value Visit(const Expr& e) {
    const auto* call = e.as<CallNode>();
    if (call == nullptr || call->op == nullptr) return Generic(e);
    if (IsDataLayoutTransform(call)) {
      // Absorbed: its consumers convert to its destination from the layout its operand is
      // in, so transforms that meet cancel or become one.
      const std::string& src = call->attrs.GetString("src_layout");
      const Value& operand = ValueOf(call->args[0]);
      Value absorbed{operand.expr, operand.layout.empty() ? src : operand.layout};
      if (absorbed.expr.same_as(call->args[0]) && absorbed.layout == src) {
        // Its operand unchanged, the conversion it stands for is this very call.
        converted_[{absorbed.expr.get(), call->attrs.GetString("dst_layout")}] = e;
      }
      return absorbed;
    }
    // The targets' kernels of other layouts are chosen for, and packed at, constant sizes: a
    // call over symbolic sizes is offered only to the rewrites declared to take them.
    const bool constant_shapes =
        std::all_of(call->args.begin(), call->args.end(),
                    [](const Expr& arg) { return HasConstantShapes(arg.type()); }) &&
        HasConstantShapes(call->checked_type);
    for (const LayoutRewriteFn& rewrite :
         LayoutRewrites(call->op->name, target_, /*symbolic=*/!constant_shapes)) {
      OperandConverter operands(*this, *call);
      if (std::optional<LayoutRewrite> rewritten = rewrite(*call, operands, target_)) {
        const std::string& layout = rewritten->layout;
        return Value{rewritten->expr, layout.empty() ? OriginalLayout(e) : layout};
      }
    }
    if (call->op->pattern == OpPattern::kElemWise || call->op->pattern == OpPattern::kBroadcast) {
      if (std::optional<Value> blocked = PropagateBroadcast(call)) return *blocked;
    }
    if (IsOp(call, "nn.bias_add")) {
      if (std::optional<Value> blocked = PropagateBiasAdd(call)) return *blocked;
    }
    if (call->op->FindAttr("layout") &&
        (IsOp(call, "nn.max_pool2d") || IsOp(call, "nn.avg_pool2d") ||
         IsOp(call, "nn.global_avg_pool2d") || IsOp(call, "nn.global_max_pool2d"))) {
      if (std::optional<Value> blocked = PropagatePool(call)) return *blocked;
    }
    if (IsOp(call, "concatenate")) {
      if (std::optional<Value> blocked = PropagateChannelConcat(call)) return *blocked;
    }
    if (IsOp(call, "nn.pad")) {
      if (std::optional<Value> blocked = PropagateSpatialPad(call)) return *blocked;
    }
    return Generic(e);
  }

  // Operands in the layouts the original expected; the same node when none changed.
  Value Generic(const Expr& e) {
    auto converted = [&](const std::vector<Expr>& operands, std::vector<Expr>* out) {
      bool changed = false;
      for (const Expr& operand : operands) {
        out->push_back(Convert(ValueOf(operand), OriginalLayout(operand)));
        changed |= !out->back().same_as(operand);
      }
      return changed;
    };
    std::vector<Expr> operands;
    Expr result = e;
    if (const auto* call = e.as<CallNode>()) {
      if (converted(call->args, &operands)) {
        result = call->op
                     ? Expr(MakeCall(call->op, operands, call->attrs, call->name_hint))
                     : Expr(MakeCall(Downcast<Function>(call->callee), operands, call->name_hint));
      }
    } else if (const auto* tuple = e.as<TupleNode>()) {
      if (converted(tuple->fields, &operands)) result = MakeTuple(operands);
    } else if (const auto* item = e.as<TupleGetItemNode>()) {
      if (converted({item->tuple}, &operands)) result = MakeTupleGetItem(operands[0], item->index);
    }
    return {result, OriginalLayout(e)};
  }

  // An elementwise or broadcasting call (a cast too) whose output has the shape of a blocked
  // operand:
  // the call on blocked operands. Operands of the output's shape are converted to that
  // block, per-channel ones ([C, 1, 1], [1, C, 1, 1]) transformed to [1, C / b, 1, 1, b];
  // all-ones operands broadcast as they are. Anything else: none.
  std::optional<Value> PropagateBroadcast(const CallNode* call) {
    const Type& out = call->checked_type;
    if (!out.is_tensor() || out.ndim() != 4) return std::nullopt;
    std::string layout;
    for (const Expr& arg : call->args) {
      const Value& v = ValueOf(arg);
      if (v.layout != "NCHW" && DataLayoutBlock(v.layout) && SameShape(arg.type(), out)) {
        layout = v.layout;
        break;
      }
    }
    if (layout.empty()) return std::nullopt;
    std::vector<Expr> args;
    for (const Expr& arg : call->args) {
      const Type& type = arg.type();
      if (SameShape(type, out)) {
        args.push_back(Convert(ValueOf(arg), layout));
      } else if (AllOnes(type) && type.ndim() <= 4) {
        args.push_back(Convert(ValueOf(arg), OriginalLayout(arg)));
      } else if (std::optional<std::string> src = PerChannelLayout(type, out)) {
        Expr channels = Convert(ValueOf(arg), OriginalLayout(arg));
        args.push_back(Transform(channels, *src, layout));
      } else {
        return std::nullopt;
      }
    }
    return Value{MakeCall(call->op, args, call->attrs, call->name_hint), layout};
  }

  // Whether tensor type `a` has `out`'s shape (its dtype may differ: a cast's operand).
  static bool SameShape(const Type& a, const Type& out) {
    return a.is_tensor() && Equal(TensorType(a.shape(), out.dtype()), out);
  }

  // The layout ("CHW" or "NCHW") of a per-channel operand of a 4-d `out`: [C, 1, 1] or
  // [1, C, 1, 1] with out's C channels.
  static std::optional<std::string> PerChannelLayout(const Type& type, const Type& out) {
    std::optional<std::vector<int64_t>> s = type.ConstShape(), o = out.ConstShape();
    if (!s || !o) return std::nullopt;
    const int64_t c = (*o)[1];
    if (*s == std::vector<int64_t>{c, 1, 1}) return "CHW";
    if (*s == std::vector<int64_t>{1, c, 1, 1}) return "NCHW";
    return std::nullopt;
  }

  // bias_add over the channels of a blocked value: an add of the bias as [1, C / b, 1, 1, b].
  std::optional<Value> PropagateBiasAdd(const CallNode* call) {
    const Value& data = ValueOf(call->args[0]);
    if (data.layout == "NCHW" || !DataLayoutBlock(data.layout)) return std::nullopt;
    const int64_t axis = call->attrs.GetInt("axis");
    if (axis != 1 && axis != -3) return std::nullopt;
    Expr bias = Convert(ValueOf(call->args[1]), OriginalLayout(call->args[1]));
    Expr blocked_bias = Transform(bias, "C", data.layout);
    return Value{MakeCall("add", {data.expr, blocked_bias}, {}, call->name_hint), data.layout};
  }

  // A pool whose operator takes a layout attribute, on a blocked value: the same pool in
  // that layout.
  std::optional<Value> PropagatePool(const CallNode* call) {
    const Value& data = ValueOf(call->args[0]);
    if (data.layout == "NCHW" || !DataLayoutBlock(data.layout) ||
        call->attrs.GetString("layout") != "NCHW") {
      return std::nullopt;
    }
    Attrs attrs = call->attrs.With("layout", data.layout);
    return Value{MakeCall(call->op, {data.expr}, attrs, call->name_hint), data.layout};
  }

  // A concatenation along the channels with a value in a blocked layout NCHW<b>c: the
  // concatenation of the blocked tensors along their channel-block axis (1), the values in
  // other layouts converted to that block. A value holds whole blocks only
  // (layout_transform takes no partial block), so the result's blocks are the original's
  // channels in order; when some value's channels are no whole number of blocks, Generic
  // gives every operand NCHW back. (A DenseNet block concatenates the block's input with
  // every layer's output: kept blocked, no layer pays a transform of the whole stack.)
  std::optional<Value> PropagateChannelConcat(const CallNode* call) {
    const Type& out = call->checked_type;
    const int64_t axis = call->attrs.GetInt("axis");
    if (!out.is_tensor() || out.ndim() != 4 || (axis != 1 && axis != -3)) return std::nullopt;
    std::string layout;
    for (const Expr& arg : call->args) {
      const std::string& candidate = ValueOf(arg).layout;
      if (candidate != "NCHW" && DataLayoutBlock(candidate)) {
        layout = candidate;
        break;
      }
    }
    if (layout.empty()) return std::nullopt;
    const int64_t block = *DataLayoutBlock(layout);
    std::vector<Expr> args;
    for (const Expr& arg : call->args) {
      std::optional<std::vector<int64_t>> shape = arg.type().ConstShape();
      if (!shape || shape->size() != 4 || (*shape)[1] % block != 0) return std::nullopt;
      args.push_back(Convert(ValueOf(arg), layout));
    }
    Attrs attrs = call->attrs.With("axis", int64_t{1});
    return Value{MakeCall(call->op, args, attrs, call->name_hint), layout};
  }

  // nn.pad of a blocked value that pads the rows and columns only: the same pad on the
  // blocked tensor [N, C / b, H, W, b] (any mode: rows and columns are axes of their own in
  // both layouts).
  std::optional<Value> PropagateSpatialPad(const CallNode* call) {
    const Value& data = ValueOf(call->args[0]);
    if (data.layout == "NCHW" || !DataLayoutBlock(data.layout) ||
        call->args[0].type().ndim() != 4) {
      return std::nullopt;
    }
    const Ints& widths = call->attrs.GetInts("pad_width");  // begins, then ends
    if (widths.size() != 8 || widths[0] != 0 || widths[1] != 0 || widths[4] != 0 ||
        widths[5] != 0) {
      return std::nullopt;
    }
    Ints blocked = {0, 0, widths[2], widths[3], 0, 0, 0, widths[6], widths[7], 0};
    return Value{MakeCall(call->op, {data.expr}, call->attrs.With("pad_width", blocked),
                          call->name_hint),
                 data.layout};
  }

  // A layout rewrite's view of its call's operands.
  class OperandConverter final : public LayoutRewriteContext {
   public:
    OperandConverter(LayoutRewriter& rewriter, const CallNode& call)
        : rewriter_(rewriter), call_(call) {}
    Expr Operand(size_t index, const std::string& layout) override {
      const Expr& operand = call_.args.at(index);
      return rewriter_.Convert(rewriter_.ValueOf(operand),
                               layout.empty() ? OriginalLayout(operand) : layout);
    }
    std::string OperandLayout(size_t index) override {
      return rewriter_.ValueOf(call_.args.at(index)).layout;
    }

   private:
    LayoutRewriter& rewriter_;
    const CallNode& call_;
  };

  const Target& target_;
  std::unordered_map<const Object*, Value> values_;
  std::map<std::pair<const Object*, std::string>, Expr> converted_;
};

}  // namespace

Pass AlterOpLayout(const Target& target) {
  const bool enabled = HasLayoutRewrites(target);
  return {"AlterOpLayout", [enabled, target](const IRModule& module) {
            if (!enabled) return module;
            const Function& main = module.main();
            Expr rewritten = LayoutRewriter(target).Rewrite(main);
            if (rewritten.same_as(main)) return module;
            IRModule result = module;
            result.Add("main", Downcast<Function>(rewritten), /*replace=*/true);
            return result;
          }};
}

}  // namespace loom::graph
