// AlterOpLayout: each nn.conv2d of "main" becomes the x86 kernel MakeConv2DKernel would
// compile for its workload (direct, depthwise or Winograd) on blocked NCHW[x]c tensors, and
// the blocked layout flows on through operators that do not care about it (elementwise,
// per-channel broadcasts, bias_add, residual adds, pools that take a layout, channel
// concatenations of whole blocks), so that layout transforms stand only where a
// layout-aware operator (flatten, dense, ...) or the function's result needs NCHW;
// transforms that meet cancel or merge into one. Output channels that no block of 16
// divides are padded with zero filters to whole vectors where that takes fewer of them
// (SqueezeNet's 1000 classes), and sliced back in NCHW.
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
#include "loom/graph/transform.h"
#include "loom/topi/x86/conv2d.h"
#include "loom/topi/x86/conv2d_winograd.h"
#include "loom/topi/x86/dense.h"
#include "topi/topi_util.h"

namespace loom::graph {
namespace {

using topi::x86::Conv2DNCHWcConfig;
using topi::x86::Conv2DWorkload;
using topi::x86::WinogradConfig;

// The blocked kernels are AVX-512 code: other targets keep NCHW.
bool TargetWantsBlockedLayouts(const Target& target) {
  return target.kind() == "llvm" && target.triple().rfind("x86_64", 0) == 0 &&
         target.HasFeature("avx512f");
}

std::string DataLayoutName(int64_t block) {
  return block == 0 ? "NCHW" : "NCHW" + std::to_string(block) + "c";
}

// The channel block of a layout name layout_transform accepts: 0 for NCHW, k for
// NCHW<k>c, none for the others (C, CHW, weight layouts).
std::optional<int64_t> DataLayoutBlock(const std::string& layout) {
  if (layout.rfind("NCHW", 0) != 0) return std::nullopt;
  return topi::detail::ChannelBlock(layout, "AlterOpLayout");
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
    if (IsOp(call, "nn.conv2d")) {
      if (std::optional<Value> blocked = RewriteConv2D(call)) return *blocked;
    }
    if (IsOp(call, "nn.dense")) {
      if (std::optional<Value> packed = RewriteDense(call)) return *packed;
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

  // nn.dense(x, W) with a constant float32 weight W [N, K] -> the packed-panel GEMM on W
  // packed once (a call on the constant, which FoldConstant folds), with topi's default
  // tiling for the shape.
  std::optional<Value> RewriteDense(const CallNode* call) {
    const Type& data = call->args[0].type();
    const Type& weight = call->args[1].type();
    const DataType f32 = DataType::Float(32);
    std::optional<std::vector<int64_t>> x = data.ConstShape(), w = weight.ConstShape();
    if (!x || !w || x->size() < 2 || data.dtype() != f32 || weight.dtype() != f32 ||
        !IsConstantExpr(call->args[1])) {
      return std::nullopt;
    }
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < x->size(); ++d) rows *= (*x)[d];
    const int64_t n = (*w)[0], k = (*w)[1];
    if (rows <= 0 || n <= 0 || k <= 0) return std::nullopt;
    topi::x86::DenseConfig config = topi::x86::DefaultDenseConfig(rows, n, k);
    Expr packed = MakeCall("nn.contrib_dense_pack", {call->args[1]},
                           {{"tile_columns", config.tile_columns}});
    Expr x_value = Convert(ValueOf(call->args[0]), OriginalLayout(call->args[0]));
    Expr product = MakeCall("nn.contrib_dense_packed", {x_value, packed},
                            {{"units", n},
                             {"tile_rows", config.tile_rows},
                             {"block_columns", config.block_columns},
                             {"block_bytes", config.block_bytes},
                             {"k_unroll", config.k_unroll}},
                            call->name_hint);
    return Value{product, OriginalLayout(Expr(call))};
  }

  // Constants and calls of constants only (what FoldConstant turns into one constant).
  static bool IsConstantExpr(const Expr& e) {
    if (e.as<ConstantNode>()) return true;
    const auto* call = e.as<CallNode>();
    return call != nullptr && call->op != nullptr &&
           std::all_of(call->args.begin(), call->args.end(), IsConstantExpr);
  }

  std::optional<Value> RewriteConv2D(const CallNode* call) {
    const Type& data = call->args[0].type();
    const Type& weight = call->args[1].type();
    const DataType f32 = DataType::Float(32);
    std::optional<std::vector<int64_t>> x = data.ConstShape(), w = weight.ConstShape();
    if (!x || !w || data.dtype() != f32 || weight.dtype() != f32) return std::nullopt;
    // An empty convolution (a batch of none) is valid; the blocked kernels take positive
    // sizes only, and there is nothing to speed up.
    for (const std::vector<int64_t>* shape : {&*x, &*w}) {
      if (std::any_of(shape->begin(), shape->end(), [](int64_t d) { return d <= 0; })) {
        return std::nullopt;
      }
    }
    Conv2DWorkload wl;
    wl.n = (*x)[0], wl.c = (*x)[1], wl.h = (*x)[2], wl.w = (*x)[3];
    wl.k = (*w)[0], wl.r = (*w)[2], wl.s = (*w)[3];
    const Ints& strides = call->attrs.GetInts("strides");
    const Ints& padding = call->attrs.GetInts("padding");
    const Ints& dilation = call->attrs.GetInts("dilation");
    wl.attrs.strides = {strides[0], strides[1]};
    wl.attrs.pads = {padding[0], padding[1], padding[2], padding[3]};
    wl.attrs.dilations = {dilation[0], dilation[1]};
    wl.attrs.groups = call->attrs.GetInt("groups");
    if (wl.attrs.groups != 1 && !wl.depthwise()) return std::nullopt;
    const int64_t out_channels = wl.k;
    if (!wl.depthwise()) wl.k = WholeVectorChannels(out_channels);
    const topi::x86::Conv2DChoice choice = topi::x86::ChooseConv2DKernel(wl);
    const Conv2DNCHWcConfig& cfg = choice.config;

    Expr blocked_data = Convert(ValueOf(call->args[0]), DataLayoutName(cfg.ic_bn));
    Expr kernel = Convert(ValueOf(call->args[1]), OriginalLayout(call->args[1]));
    if (wl.k != out_channels) {
      // Zero filters for the added channels (folded into the weight when it is constant).
      const Ints pad_width = {0, 0, 0, 0, wl.k - out_channels, 0, 0, 0};
      kernel = MakeCall("nn.pad", {kernel}, {{"pad_width", pad_width}});
    }
    Attrs attrs = {{"strides", strides}, {"padding", padding}, {"dilation", dilation}};
    Call conv;
    if (choice.algorithm == "winograd") {
      const WinogradConfig& wg = choice.winograd;
      attrs = attrs.With("oc_bn", cfg.oc_bn)
                  .With("fuse_tile_rows", int64_t{wg.fuse_tile_rows})
                  .With("gemm_rows", wg.gemm_rows)
                  .With("gemm_columns", wg.gemm_columns)
                  .With("gemm_unroll", wg.gemm_unroll);
      Expr transformed = MakeCall("nn.contrib_conv2d_winograd_weight_transform", {kernel});
      conv = MakeCall("nn.contrib_conv2d_winograd_nchwc", {blocked_data, transformed}, attrs,
                      call->name_hint);
    } else {
      const bool depthwise = choice.algorithm == "depthwise";
      attrs = attrs.With("oc_tile", cfg.oc_tile)
                  .With("reg_h", cfg.reg_h)
                  .With("reg_w", cfg.reg_w)
                  .With("unroll_kw", int64_t{cfg.unroll_kw})
                  .With("row_tiles_per_task", cfg.row_tiles_per_task);
      // A depthwise weight [C, 1, R, S] is OIHW with input blocks of one channel.
      std::string weight_layout = "OIHW" + std::to_string(depthwise ? 1 : cfg.ic_bn) + "i" +
                                  std::to_string(cfg.oc_bn) + "o";
      Expr blocked_weight =
          MakeCall("layout_transform", {kernel},
                   {{"src_layout", std::string("OIHW")}, {"dst_layout", weight_layout}});
      conv = MakeCall(depthwise ? "nn.contrib_depthwise_conv2d_nchwc" : "nn.contrib_conv2d_nchwc",
                      {blocked_data, blocked_weight}, attrs, call->name_hint);
    }
    if (wl.k == out_channels) return Value{conv, DataLayoutName(cfg.oc_bn)};
    // The added channels end where NCHW begins: a partial block has no blocked layout.
    Expr nchw = Transform(conv, DataLayoutName(cfg.oc_bn), "NCHW");
    Expr sliced = MakeCall("strided_slice", {nchw},
                           {{"begin", Ints{0}}, {"end", Ints{out_channels}}, {"axes", Ints{1}}});
    return Value{sliced, "NCHW"};
  }

  // The output channels a conv computes for `channels`: those, or the next multiple of the
  // vector width when that takes fewer vectors than the largest block dividing `channels`
  // does (1000 classes: 63 vectors of 16, not 100 of 10 lanes).
  static int64_t WholeVectorChannels(int64_t channels) {
    const int64_t lanes = topi::detail::kVectorLanes;
    const int64_t padded_vectors = topi::detail::CeilDiv(channels, lanes);
    const int64_t block_vectors = channels / topi::detail::LargestDivisorUpTo(channels, lanes);
    return padded_vectors < block_vectors ? padded_vectors * lanes : channels;
  }

  // An elementwise or broadcasting call whose output has the shape of a blocked operand:
  // the call on blocked operands. Operands of the output's shape are converted to that
  // block, per-channel ones ([C, 1, 1], [1, C, 1, 1]) transformed to [1, C / b, 1, 1, b];
  // all-ones operands broadcast as they are. Anything else: none.
  std::optional<Value> PropagateBroadcast(const CallNode* call) {
    const Type& out = call->checked_type;
    if (!out.is_tensor() || out.ndim() != 4) return std::nullopt;
    std::string layout;
    for (const Expr& arg : call->args) {
      const Value& v = ValueOf(arg);
      if (v.layout != "NCHW" && DataLayoutBlock(v.layout) && Equal(arg.type(), out)) {
        layout = v.layout;
        break;
      }
    }
    if (layout.empty()) return std::nullopt;
    std::vector<Expr> args;
    for (const Expr& arg : call->args) {
      const Type& type = arg.type();
      if (Equal(type, out)) {
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

  // A concatenation along the channels of values all in one blocked layout NCHW<b>c: the
  // concatenation of the blocked tensors along their channel-block axis (1). A value holds
  // whole blocks only (layout_transform takes no partial block), so the result's blocks
  // are the original's channels in order. Values in different layouts are left to Generic
  // (NCHW operands).
  std::optional<Value> PropagateChannelConcat(const CallNode* call) {
    const Type& out = call->checked_type;
    const int64_t axis = call->attrs.GetInt("axis");
    if (!out.is_tensor() || out.ndim() != 4 || (axis != 1 && axis != -3)) return std::nullopt;
    const std::string& layout = ValueOf(call->args.at(0)).layout;
    if (layout == "NCHW" || !DataLayoutBlock(layout)) return std::nullopt;
    std::vector<Expr> args;
    for (const Expr& arg : call->args) {
      const Value& v = ValueOf(arg);
      if (v.layout != layout) return std::nullopt;
      args.push_back(v.expr);
    }
    Attrs attrs = call->attrs.With("axis", int64_t{1});
    return Value{MakeCall(call->op, args, attrs, call->name_hint), layout};
  }

  std::unordered_map<const Object*, Value> values_;
  std::map<std::pair<const Object*, std::string>, Expr> converted_;
};

}  // namespace

Pass AlterOpLayout(const Target& target) {
  const bool enabled = TargetWantsBlockedLayouts(target);
  return {"AlterOpLayout", [enabled](const IRModule& module) {
            if (!enabled) return module;
            const Function& main = module.main();
            Expr rewritten = LayoutRewriter().Rewrite(main);
            if (rewritten.same_as(main)) return module;
            IRModule result = module;
            result.Add("main", Downcast<Function>(rewritten), /*replace=*/true);
            return result;
          }};
}

}  // namespace loom::graph
