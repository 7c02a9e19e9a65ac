// Padding and layout changes of image-like tensors: pad, depth_to_space, space_to_depth and
// layout_transform between NCHW and blocked NCHW<k>c.
#include <algorithm>
#include <string>

#include "loom/ir/printer.h"
#include "loom/topi/shape_function.h"
#include "loom/topi/transform.h"
#include "topi/topi_util.h"

namespace loom::topi {

namespace {

using detail::ClampIndex;
using detail::ConstShape;
using detail::IndexType;
using detail::kInjective;
using detail::ShapeText;

const char* PadModeName(PadMode mode) {
  switch (mode) {
    case PadMode::kConstant: return "constant";
    case PadMode::kReflect: return "reflect";
    case PadMode::kEdge: return "edge";
    case PadMode::kWrap:
      return "wrap";
  }
  return "?";
}

// The source position of a padded index `at` (already shifted by the begin pad) in a
// dimension of `extent`, mirrored about the first and last elements.
PrimExpr Reflect(const PrimExpr& at, const PrimExpr& extent) {
  PrimExpr folded = select(at < make_zero(at.dtype()), make_zero(at.dtype()) - at, at);
  return select(folded >= extent, (extent - 1) * 2 - folded, folded);
}

// Where position i of a dimension padded by `before` and `after` reads x's dimension of
// `extent`: negative pads crop first (as ONNX's reference does), the positive ones then pad
// the cropped view, which reflect mirrors, edge repeats and wrap reads circularly; `inside`
// is false where kConstant fills instead.
struct PadRead {
  PrimExpr source, inside;
};
PadRead PadAlong(const PrimExpr& i, const PrimExpr& before, const PrimExpr& after,
                 const PrimExpr& extent, PadMode mode) {
  const DataType t = i.dtype();
  const PrimExpr zero = make_zero(t);
  auto typed = [&](const PrimExpr& e) { return e.dtype() == t ? e : cast(t, e); };
  const PrimExpr b = typed(before), a = typed(after);
  const PrimExpr cropped = typed(extent) + min(b, zero) + min(a, zero);
  const PrimExpr at = i - max(b, zero);
  PadRead read{ClampIndex(at, cropped), const_true()};
  switch (mode) {
    case PadMode::kConstant:
      read.inside = at >= zero && at < cropped;
      break;
    case PadMode::kReflect:
      read.source = Reflect(at, cropped);
      break;
    case PadMode::kEdge:
      break;
    case PadMode::kWrap:
      read.source = floormod(at, max(cropped, make_const(t, int64_t{1})));
      break;
  }
  read.source = read.source + max(zero - b, zero);
  return read;
}

// (N, C, H, W) of a 4-d tensor, constant, for `op`.
std::vector<int64_t> ImageShape(const te::Tensor& x, const std::string& op) {
  LOOM_CHECK_USER(x.ndim() == 4) << op << " of '" << x.name() << "': shape "
                                 << ShapeText(x.shape()) << " is not 4-d NCHW";
  return ConstShape(x, op);
}

void CheckBlocksize(const te::Tensor& x, int64_t blocksize, const std::string& op) {
  LOOM_CHECK_USER(blocksize >= 1) << op << " of '" << x.name() << "': blocksize " << blocksize
                                  << " must be at least 1";
}

}  // namespace

te::Tensor pad(const te::Tensor& x, const std::vector<int64_t>& pads_begin,
               const std::vector<int64_t>& pads_end, PadMode mode, double value) {
  std::string op = std::string("pad (") + PadModeName(mode) + ") of '" + x.name() + "'";
  LOOM_CHECK_USER(static_cast<int>(pads_begin.size()) == x.ndim() &&
                  static_cast<int>(pads_end.size()) == x.ndim())
      << op << ": pads " << ShapeText(pads_begin) << " and " << ShapeText(pads_end)
      << " need one entry per dimension of " << ShapeText(x.shape());
  // Negative pads crop first (as ONNX's reference does); the positive ones then pad the
  // cropped view, which reflect and edge mirror or repeat.
  Array<PrimExpr> shape, cropped;
  bool nothing_kept = false;
  for (int d = 0; d < x.ndim(); ++d) {
    DataType t = x.shape()[d].dtype();
    int64_t crop = std::min<int64_t>(pads_begin[d], 0) + std::min<int64_t>(pads_end[d], 0);
    cropped.push_back(crop == 0 ? x.shape()[d] : x.shape()[d] + make_const(t, crop));
    int64_t extent = 0;
    bool known = IsConstInt(cropped.back(), &extent);
    LOOM_CHECK_USER(!known || extent >= 0)
        << op << ": pads " << ShapeText(pads_begin) << " and " << ShapeText(pads_end)
        << " crop " << -crop << " elements from dimension " << d << " of "
        << ShapeText(x.shape()) << ", more than it has";
    int64_t begin = std::max<int64_t>(pads_begin[d], 0), end = std::max<int64_t>(pads_end[d], 0);
    bool padded = begin > 0 || end > 0;
    LOOM_CHECK_USER(!padded || mode != PadMode::kReflect || !known || std::max(begin, end) < extent)
        << op << ": pads of dimension " << d << " (" << pads_begin[d] << ", " << pads_end[d]
        << ") must be smaller than its size " << extent << " to reflect";
    LOOM_CHECK_USER(!padded || (mode != PadMode::kEdge && mode != PadMode::kWrap) || !known ||
                    extent > 0)
        << op << ": dimension " << d << " is empty, with no edge to repeat";
    shape.push_back(begin + end == 0 ? cropped.back() : cropped.back() + make_const(t, begin + end));
    nothing_kept = nothing_kept || (known && extent == 0);
  }
  return te::compute(
      shape,
      [&](const Array<Var>& i) {
        // Every element is padding: x, perhaps empty, is not read (not even by a select).
        if (nothing_kept) return make_const(x.dtype(), value);
        Array<PrimExpr> index;
        PrimExpr inside = const_true();
        for (int d = 0; d < x.ndim(); ++d) {
          DataType t = i[d].dtype();
          PrimExpr crop_offset = make_const(t, std::max<int64_t>(-pads_begin[d], 0));
          if (pads_begin[d] <= 0 && pads_end[d] <= 0) {
            index.push_back(pads_begin[d] == 0 ? PrimExpr(i[d]) : i[d] + crop_offset);
            continue;
          }
          PadRead read = PadAlong(i[d], make_const(t, pads_begin[d]), make_const(t, pads_end[d]),
                                  x.shape()[d], mode);
          index.push_back(read.source);
          if (mode == PadMode::kConstant) inside = inside && read.inside;
        }
        PrimExpr read = x(index);
        return mode == PadMode::kConstant ? select(inside, read, make_const(x.dtype(), value))
                                          : read;
      },
      "pad", kInjective);
}

te::Tensor pad_to(const te::Tensor& x, const te::Tensor& pads, const te::Tensor& axes,
                  const te::Tensor& value, const Array<PrimExpr>& shape, PadMode mode) {
  int64_t k = 0;
  LOOM_CHECK_USER(axes.ndim() == 1 && IsConstInt(axes.shape()[0], &k) && pads.ndim() == 1 &&
                  detail::IsConst(pads.shape()[0], 2 * k) && value.dtype() == x.dtype() &&
                  static_cast<int>(shape.size()) == x.ndim())
      << "pad_to of '" << x.name() << "': pads must hold 2k values for k axes, value must be "
      << "of " << x.dtype() << " and the shape of rank " << x.ndim();
  const DataType i64 = DataType::Int(64);
  auto c = [&](int64_t v) { return make_const(i64, v); };
  // Each dimension's begin and end pad, computed once (not per element).
  te::Tensor plan = pad_plan(x.shape(), pads, axes);
  return te::compute(
      shape,
      [&](const Array<Var>& i) {
        Array<PrimExpr> index;
        PrimExpr inside = const_true();
        for (int d = 0; d < x.ndim(); ++d) {
          PadRead read =
              PadAlong(cast(i64, i[d]), plan(c(2 * d)), plan(c(2 * d + 1)), x.shape()[d], mode);
          index.push_back(read.source);
          inside = inside && read.inside;
        }
        const PrimExpr fill = value.ndim() == 0 ? value(Array<PrimExpr>{}) : value(c(0));
        // A constant border never reads x there (x may even be empty).
        return mode == PadMode::kConstant ? te::if_then_else(inside, x(index), fill) : x(index);
      },
      "pad", kInjective);
}

te::Tensor depth_to_space(const te::Tensor& x, int64_t blocksize, DepthToSpaceMode mode) {
  const std::string op = "depth_to_space";
  std::vector<int64_t> in = ImageShape(x, op);
  CheckBlocksize(x, blocksize, op);
  int64_t block_area = blocksize * blocksize;
  LOOM_CHECK_USER(in[1] % block_area == 0)
      << op << " of '" << x.name() << "': " << in[1] << " channels are not a multiple of "
      << "blocksize^2 = " << block_area;
  DataType t = IndexType(x);
  int64_t channels = in[1] / block_area;
  Array<PrimExpr> shape = {x.shape()[0], make_const(t, channels), make_const(t, in[2] * blocksize),
                           make_const(t, in[3] * blocksize)};
  return te::compute(
      shape,
      [&](const Array<Var>& i) {
        PrimExpr b = make_const(t, blocksize);
        // Position within the b x b block of output pixels: which input channel group.
        PrimExpr within = floormod(i[2], b) * b + floormod(i[3], b);
        PrimExpr channel = mode == DepthToSpaceMode::kDCR
                               ? within * make_const(t, channels) + i[1]
                               : i[1] * make_const(t, block_area) + within;
        return x(i[0], channel, floordiv(i[2], b), floordiv(i[3], b));
      },
      op, kInjective);
}

te::Tensor space_to_depth(const te::Tensor& x, int64_t blocksize) {
  const std::string op = "space_to_depth";
  std::vector<int64_t> in = ImageShape(x, op);
  CheckBlocksize(x, blocksize, op);
  LOOM_CHECK_USER(in[2] % blocksize == 0 && in[3] % blocksize == 0)
      << op << " of '" << x.name() << "': height " << in[2] << " and width " << in[3]
      << " must be multiples of blocksize " << blocksize;
  DataType t = IndexType(x);
  Array<PrimExpr> shape = {x.shape()[0], make_const(t, in[1] * blocksize * blocksize),
                           make_const(t, in[2] / blocksize), make_const(t, in[3] / blocksize)};
  return te::compute(
      shape,
      [&](const Array<Var>& i) {
        PrimExpr b = make_const(t, blocksize), channels = make_const(t, in[1]);
        // Output channel (row-in-block * b + column-in-block) * C + c.
        PrimExpr within = floordiv(i[1], channels);
        return x(i[0], floormod(i[1], channels), i[2] * b + floordiv(within, b),
                 i[3] * b + floormod(within, b));
      },
      op, kInjective);
}

te::Tensor layout_transform(const te::Tensor& x, const std::string& src_layout,
                            const std::string& dst_layout) {
  const std::string parsing = "layout_transform of '" + x.name() + "'";
  int64_t src_block = ChannelBlock(src_layout, parsing);
  int64_t dst_block = ChannelBlock(dst_layout, parsing);
  std::string op =
      "layout_transform of '" + x.name() + "' from " + src_layout + " to " + dst_layout;
  LOOM_CHECK_USER(x.ndim() == (src_block ? 5 : 4))
      << op << ": shape " << ShapeText(x.shape()) << " does not have the rank of " << src_layout;
  LOOM_CHECK_USER((src_block == 0) != (dst_block == 0))
      << op << ": only NCHW <-> NCHW<k>c are supported";
  DataType t = IndexType(x);
  if (dst_block) {
    int64_t channels = 0;
    LOOM_CHECK_USER(IsConstInt(x.shape()[1], &channels) && channels % dst_block == 0)
        << op << ": channels " << x.shape()[1] << " must be a constant multiple of " << dst_block;
    PrimExpr k = make_const(t, dst_block);
    Array<PrimExpr> shape = {x.shape()[0], make_const(t, channels / dst_block), x.shape()[2],
                             x.shape()[3], k};
    return te::compute(
        shape,
        [&](const Array<Var>& i) { return x(i[0], i[1] * k + i[4], i[2], i[3]); },
        "layout_transform", kInjective);
  }
  int64_t block = 0;
  LOOM_CHECK_USER(IsConstInt(x.shape()[4], &block) && block == src_block)
      << op << ": the last dimension of " << ShapeText(x.shape()) << " must be " << src_block;
  PrimExpr k = make_const(t, src_block);
  Array<PrimExpr> shape = {x.shape()[0], x.shape()[1] * k, x.shape()[2], x.shape()[3]};
  return te::compute(
      shape,
      [&](const Array<Var>& i) {
        return x(i[0], floordiv(i[1], k), i[2], i[3], floormod(i[1], k));
      },
      "layout_transform", kInjective);
}

int64_t ChannelBlock(const std::string& layout, const std::string& op) {
  const std::string base = "NCHW";
  std::string rest = layout.substr(0, base.size()) == base ? layout.substr(base.size()) : "?";
  if (rest.empty()) return 0;
  bool blocked = rest.size() >= 2 && rest.back() == 'c' &&
                 rest.find_first_not_of("0123456789") == rest.size() - 1 && rest[0] != '0';
  LOOM_CHECK_USER(blocked) << op << ": layout '" << layout
                           << "' is not supported; expected NCHW or NCHW<k>c such as NCHW16c";
  return std::stoll(rest.substr(0, rest.size() - 1));
}

te::Tensor pack_conv2d_weight(const te::Tensor& weight, int64_t ic_bn, int64_t oc_bn,
                              const std::string& where) {
  std::vector<int64_t> w = detail::ConstShape(weight, where);
  LOOM_CHECK_USER(w.size() == 4 && ic_bn > 0 && oc_bn > 0 && w[0] % oc_bn == 0 &&
                  w[1] % ic_bn == 0)
      << where << ": the weight " << detail::ShapeText(w) << " (KCRS) does not split into "
      << "blocks of " << oc_bn << " output and " << ic_bn << " input channels";
  const int ib = int(ic_bn), ob = int(oc_bn);
  return te::compute(
      {int(w[0] / ob), int(w[1] / ib), int(w[2]), int(w[3]), ib, ob},
      [&](const Array<Var>& i) { return weight(i[0] * ob + i[5], i[1] * ib + i[4], i[2], i[3]); },
      "packed_weight", detail::kInjective);
}

}  // namespace loom::topi
