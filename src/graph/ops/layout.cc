// layout_transform: the same tensor in another layout, between NCHW and the blocked
// NCHW[x]c data layouts, and from OIHW to the blocked OIHW[x]i[y]o weight layouts. A target's
// layout rewrites (AlterOpLayout, graph/strategy.h) put their kernels' layouts in place with
// it. Its type is read off the topi compute (TypeFromCompute).
#include <functional>
#include <regex>
#include <string>

#include "loom/graph/op_util.h"
#include "loom/topi/transform.h"

namespace loom::graph::ops {

namespace {

using Tensors = std::vector<te::Tensor>;

// ---- layout_transform

// A layout name parsed: data layouts C, CHW (a per-channel operand such as a bias), NCHW
// and NCHW<block>c; weight layouts OIHW and OIHW<block>i<o_block>o.
struct Layout {
  bool weight = false;
  int rank = 0;
  int64_t block = 0;    // channels (data) or input channels (weight) per block; 0: none
  int64_t o_block = 0;  // output channels per block (weight)
  bool blocked() const { return block != 0; }
};

Layout ParseLayout(const std::string& name, const std::string& where) {
  if (name == "C" || name == "CHW") return {false, int(name.size()), 0, 0};
  if (name.rfind("NCHW", 0) == 0) {
    const int64_t block = topi::ChannelBlock(name, where);
    return {false, block ? 5 : 4, block, 0};
  }
  static const std::regex weight("OIHW(?:([1-9][0-9]{0,5})i([1-9][0-9]{0,5})o)?");
  std::smatch match;
  LOOM_CHECK_USER(std::regex_match(name, match, weight))
      << where << ": layout '" << name << "' is not supported; expected C, CHW, NCHW, "
      << "NCHW<k>c (such as NCHW16c), OIHW or OIHW<a>i<b>o (such as OIHW16i16o)";
  if (!match[1].matched) return {true, 4, 0, 0};
  return {true, 6, std::stoll(match[1]), std::stoll(match[2])};
}

// `x` (in the data layout `src`) as NCHW: unit dimensions added to C / CHW (a bias), a
// channel block undone by topi.
te::Tensor ToNCHW(const te::Tensor& x, const std::string& src_name, const Layout& src) {
  if (src.rank == 5) return topi::layout_transform(x, src_name, "NCHW");
  if (src.rank == 4) return x;
  const bool spatial = src.rank == 3;
  // x is C or CHW: its first extent carries the index type of its shape.
  PrimExpr one = make_const(x.shape()[0].dtype(), int64_t{1});
  Array<PrimExpr> shape = {one, x.shape()[0], spatial ? x.shape()[1] : one,
                           spatial ? x.shape()[2] : one};
  return te::compute(
      shape, [&](const Array<Var>& i) { return spatial ? x(i[1], i[2], i[3]) : x(i[1]); },
      "expand_to_nchw", "injective");
}

Tensors LayoutTransformCompute(const CallInfo& info, const Tensors& in) {
  const std::string& src_name = info.attrs.GetString("src_layout");
  const std::string& dst_name = info.attrs.GetString("dst_layout");
  Layout src = ParseLayout(src_name, info.where), dst = ParseLayout(dst_name, info.where);
  LOOM_CHECK_USER(src_name != dst_name && src.weight == dst.weight && dst.rank >= 4 &&
                  (!src.weight || (!src.blocked() && dst.blocked())))
      << info.where << ": cannot transform " << src_name << " to " << dst_name
      << " (supported: C, CHW, NCHW or NCHW<a>c to NCHW or NCHW<b>c; OIHW to OIHW<a>i<b>o)";
  LOOM_CHECK_USER(in[0].ndim() == src.rank)
      << info.where << ": the input " << info.input_types[0].str() << " does not have the rank "
      << src.rank << " of " << src_name;
  if (dst.weight) {
    return {topi::pack_conv2d_weight(in[0], dst.block, dst.o_block, info.where)};
  }
  te::Tensor nchw = ToNCHW(in[0], src_name, src);
  if (!dst.blocked()) return {nchw};
  return {topi::layout_transform(nchw, "NCHW", dst_name)};
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterComputedOp("layout_transform", LayoutTransformCompute)
      .Describe(
          "the same tensor in another layout: C, CHW, NCHW or NCHW<a>c to NCHW or "
          "NCHW<b>c; OIHW to OIHW<a>i<b>o")
      .Inputs({"data"})
      .Attr("src_layout", AttrKind::kString, std::nullopt, "the input's layout")
      .Attr("dst_layout", AttrKind::kString, std::nullopt, "the output's layout")
      .Pattern(OpPattern::kInjective);

  return true;
}();

}  // namespace
}  // namespace loom::graph::ops
