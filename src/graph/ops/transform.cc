// Data-movement operators (ONNX semantics): reshaping, transposing, joining, splitting,
// slicing, gathering, tiling, padding, depth/space and resize. Injective: each output
// element reads input elements only, so they fuse into their consumers and otherwise take
// the generic injective schedule.
#include "loom/topi/transform.h"

#include <limits>

#include "loom/arith/analyzer.h"
#include "loom/graph/op_util.h"

namespace loom::graph::ops {
namespace {

using Tensors = std::vector<te::Tensor>;
// String attributes naming a topi enumerator are read with ChoiceAttr, whose choices list
// the enumerators in their declaration order (an index is the enumerator's value).

OpBuilder RegisterInjective(const std::string& name, const std::string& doc,
                            std::vector<std::string> inputs, ComputeFn compute,
                            bool tuple_output = false) {
  OpBuilder op = RegisterComputedOp(name, std::move(compute), tuple_output);
  op.Describe(doc).Inputs(std::move(inputs)).Pattern(OpPattern::kInjective);
  return op;
}

// The sizes of attribute `sizes_attr`, each a constant or, where the "like_dims" attribute
// names a dimension of `like`, that dimension (the *_like operators: sizes computed from
// symbolic ones at import).
Array<PrimExpr> LikeSizes(const CallInfo& info, const te::Tensor& like,
                          const std::string& sizes_attr) {
  const Ints& sizes = info.attrs.GetInts(sizes_attr);
  const Ints& dims = info.attrs.GetInts("like_dims");
  LOOM_CHECK_USER(dims.size() == sizes.size())
      << info.where << ": like_dims " << AttrValueText(dims) << " must have one entry per "
      << sizes_attr << " entry " << AttrValueText(sizes);
  Array<PrimExpr> result;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (dims[d] < 0) {
      result.push_back(IntImm(DataType::Int(32), sizes[d]));
      continue;
    }
    LOOM_CHECK_USER(dims[d] < like.ndim())
        << info.where << ": like_dims " << AttrValueText(dims) << " names dimension " << dims[d]
        << " of like, which has " << like.ndim();
    result.push_back(like.shape()[static_cast<size_t>(dims[d])]);
  }
  return result;
}

// expand_dims's new dimensions: num_newaxis of them from `axis` (in [-ndim - 1, ndim], a
// negative one counting from the end of the output) on, as positions in the output.
std::vector<int64_t> NewAxes(const CallInfo& info) {
  int64_t ndim = info.input_types[0].ndim();
  int64_t axis = info.attrs.GetInt("axis");
  int64_t count = info.attrs.GetInt("num_newaxis");
  LOOM_CHECK_USER(axis >= -ndim - 1 && axis <= ndim)
      << info.where << ": axis " << axis << " must be in [" << -ndim - 1 << ", " << ndim
      << "] for data " << info.input_types[0].str();
  LOOM_CHECK_USER(count >= 1) << info.where << ": num_newaxis must be at least 1, got " << count;
  if (axis < 0) axis += ndim + 1;
  std::vector<int64_t> axes;
  for (int64_t i = 0; i < count; ++i) axes.push_back(axis + i);
  return axes;
}

// The "shape" attribute as TE dimensions (int32 constants, as PlaceholderShape makes them).
Array<PrimExpr> ShapeAttr(const CallInfo& info) {
  Array<PrimExpr> shape;
  for (int64_t d : info.attrs.GetInts("shape")) {
    LOOM_CHECK_USER(d >= 0 && d <= std::numeric_limits<int32_t>::max())
        << info.where << ": attribute 'shape' holds an invalid dimension " << d << " in "
        << AttrValueText(info.attrs.GetInts("shape"));
    shape.push_back(IntImm(DataType::Int(32), d));
  }
  return shape;
}

void RegisterShapeChanges() {
  RegisterInjective("reshape", "the same elements in another shape (ONNX Reshape)", {"data"},
                    [](const CallInfo& info, const Tensors& in) {
                      return Tensors{topi::reshape(in[0], info.attrs.GetInts("newshape"))};
                    })
      .Attr("newshape", AttrKind::kInts, std::nullopt,
            "the shape; 0 copies the input's dimension, one -1 is inferred");
  RegisterInjective("reshape_like",
                    "reshape whose dimensions at some positions are like's dimensions (an "
                    "export's x.view(y.size(0), y.size(1), -1) over symbolic sizes)",
                    {"data", "like"},
                    [](const CallInfo& info, const Tensors& in) {
                      const Ints& shape = info.attrs.GetInts("newshape");
                      Array<PrimExpr> given = LikeSizes(info, in[1], "newshape");
                      for (size_t d = 0; d < shape.size(); ++d) {
                        if (info.attrs.GetInts("like_dims")[d] < 0) given[d] = PrimExpr();
                      }
                      return Tensors{topi::reshape(in[0], shape, given)};
                    })
      .Attr("newshape", AttrKind::kInts, std::nullopt,
            "the shape where like_dims is -1; 0 copies data's dimension, one -1 is inferred")
      .Attr("like_dims", AttrKind::kInts, std::nullopt,
            "per output dimension: the dimension of like it is, or -1");
  RegisterInjective("expand_like",
                    "expand whose target sizes at some positions are like's dimensions (an "
                    "export's x.expand(batch, seq) over symbolic sizes)",
                    {"data", "like"},
                    [](const CallInfo& info, const Tensors& in) {
                      return Tensors{topi::expand(in[0], LikeSizes(info, in[1], "shape"))};
                    })
      .Attr("shape", AttrKind::kInts, std::nullopt, "the target where like_dims is -1")
      .Attr("like_dims", AttrKind::kInts, std::nullopt,
            "per target dimension: the dimension of like it is, or -1");
  RegisterInjective(
      "slice_like",
      "data[begin : end] along axes, an end being like's dimension where "
      "like_dims names one (an export's position_ids[:, :seq])",
      {"data", "like"},
      [](const CallInfo& info, const Tensors& in) {
        return Tensors{topi::slice_to(in[0], info.attrs.GetInts("axes"),
                                      info.attrs.GetInts("begin"), LikeSizes(info, in[1], "end"))};
      })
      .Attr("begin", AttrKind::kInts, std::nullopt, "the first index per sliced axis")
      .Attr("end", AttrKind::kInts, std::nullopt, "the end per sliced axis where like_dims is -1")
      .Attr("axes", AttrKind::kInts, std::nullopt, "the sliced axes")
      .Attr("like_dims", AttrKind::kInts, std::nullopt,
            "per sliced axis: the dimension of like its end is, or -1");
  RegisterInjective(
      "arange_like",
      "start, start + delta, ... below like's dimension like_dim (an export's "
      "torch.arange(seq) over a symbolic size)",
      {"like"},
      [](const CallInfo& info, const Tensors& in) {
        const int64_t start = info.attrs.GetInt("start");
        const int64_t delta = info.attrs.GetInt("delta");
        const int64_t dim = info.attrs.GetInt("like_dim");
        LOOM_CHECK_USER(start >= 0 && delta >= 1 && dim >= 0 && dim < in[0].ndim())
            << info.where << ": start " << start << " and delta " << delta
            << " must be at least 0 and 1, and like_dim " << dim << " a dimension of like "
            << info.input_types[0].str();
        const PrimExpr limit = in[0].shape()[static_cast<size_t>(dim)];
        const DataType t = limit.dtype();
        arith::Analyzer analyzer;
        PrimExpr extent = analyzer.Simplify(max(
            floordiv(limit - make_const(t, start) + make_const(t, delta - 1), make_const(t, delta)),
            make_zero(t)));
        DataType dtype = DataType::Parse(info.attrs.GetString("dtype"));
        return Tensors{te::compute(
            {extent},
            [&](const Array<Var>& i) {
              PrimExpr value =
                  make_const(i[0].dtype(), start) + i[0] * make_const(i[0].dtype(), delta);
              return value.dtype() == dtype ? value : cast(dtype, value);
            },
            "arange", "injective")};
      })
      .Attr("start", AttrKind::kInt, std::nullopt, "the first value")
      .Attr("delta", AttrKind::kInt, std::nullopt, "the step (at least 1)")
      .Attr("like_dim", AttrKind::kInt, std::nullopt, "the dimension of like that is the limit")
      .Attr("dtype", AttrKind::kString, std::string("int64"), "the values' type");
  RegisterInjective(
      "full_like",
      "a tensor filled with value, of shape with like's dimensions where "
      "like_dims names them (an export's torch.ones(batch, seq))",
      {"like"},
      [](const CallInfo& info, const Tensors& in) {
        DataType dtype = DataType::Parse(info.attrs.GetString("dtype"));
        const double value = info.attrs.GetFloat("value");
        return Tensors{te::compute(
            LikeSizes(info, in[0], "shape"),
            [&](const Array<Var>&) { return make_const(dtype, value); }, "full", "injective")};
      })
      .Attr("shape", AttrKind::kInts, std::nullopt, "the shape where like_dims is -1")
      .Attr("like_dims", AttrKind::kInts, std::nullopt,
            "per dimension: the dimension of like it is, or -1")
      .Attr("value", AttrKind::kFloat, std::nullopt, "the fill value")
      .Attr("dtype", AttrKind::kString, std::nullopt, "the tensor's type");
  RegisterInjective("flatten", "2-d: dimensions before axis, and from axis on (ONNX Flatten)",
                    {"data"},
                    [](const CallInfo& info, const Tensors& in) {
                      return Tensors{topi::flatten(in[0], info.attrs.GetInt("axis"))};
                    })
      .Attr("axis", AttrKind::kInt, int64_t{1}, "first dimension of the second output dimension");
  RegisterInjective("squeeze", "removes dimensions of size 1 (ONNX Squeeze)", {"data"},
                    [](const CallInfo& info, const Tensors& in) {
                      return Tensors{topi::squeeze(in[0], info.attrs.GetInts("axes"))};
                    })
      .Attr("axes", AttrKind::kInts, Ints{}, "the removed dimensions (none: every 1)");
  RegisterInjective("expand_dims", "inserts num_newaxis dimensions of size 1 at axis", {"data"},
                    [](const CallInfo& info, const Tensors& in) {
                      return Tensors{topi::unsqueeze(in[0], NewAxes(info))};
                    })
      .Attr("axis", AttrKind::kInt, std::nullopt, "position of the first new dimension")
      .Attr("num_newaxis", AttrKind::kInt, int64_t{1}, "how many dimensions are inserted");
  RegisterInjective("transpose", "permuted dimensions (ONNX Transpose)", {"data"},
                    [](const CallInfo& info, const Tensors& in) {
                      return Tensors{topi::transpose(in[0], info.attrs.GetInts("axes"))};
                    })
      .Attr("axes", AttrKind::kInts, Ints{},
            "output dimension d is input dimension axes[d] "
            "(none: reversed)");
  RegisterInjective("reverse", "data with its elements along axis in reverse order", {"data"},
                    [](const CallInfo& info, const Tensors& in) {
                      return Tensors{topi::reverse(in[0], info.attrs.GetInt("axis"))};
                    })
      .Attr("axis", AttrKind::kInt, std::nullopt, "the reversed dimension");
  RegisterInjective("broadcast_to", "data broadcast to exactly shape", {"data"},
                    [](const CallInfo& info, const Tensors& in) {
                      return Tensors{topi::broadcast_to(in[0], ShapeAttr(info))};
                    })
      .Attr("shape", AttrKind::kInts, std::nullopt, "the output shape");
  RegisterInjective("expand", "data and shape broadcast together (ONNX Expand)", {"data"},
                    [](const CallInfo& info, const Tensors& in) {
                      return Tensors{topi::expand(in[0], ShapeAttr(info))};
                    })
      .Attr("shape", AttrKind::kInts, std::nullopt, "the shape broadcast with data's");
}

void RegisterJoinsAndSlices() {
  RegisterInjective("concatenate", "inputs joined along axis (ONNX Concat)", {"..."},
                    [](const CallInfo& info, const Tensors& in) {
                      return Tensors{topi::concat(Array<te::Tensor>(in.begin(), in.end()),
                                                  info.attrs.GetInt("axis"))};
                    })
      .Attr("axis", AttrKind::kInt, int64_t{0}, "the joined dimension");
  RegisterInjective(
      "split", "consecutive pieces along axis, as a tuple (ONNX Split)", {"data"},
      [](const CallInfo& info, const Tensors& in) {
        const Ints& parts = info.attrs.GetInts("indices_or_sections");
        LOOM_CHECK_USER(!parts.empty())
            << info.where << ": indices_or_sections must hold a piece count or the pieces' sizes";
        int64_t axis = info.attrs.GetInt("axis");
        Array<te::Tensor> pieces = parts.size() == 1 ? topi::split_by_count(in[0], axis, parts[0])
                                                     : topi::split(in[0], axis, parts);
        return Tensors(pieces.begin(), pieces.end());
      },
      /*tuple_output=*/true)
      .Attr("indices_or_sections", AttrKind::kInts, std::nullopt,
            "one entry n: n equal pieces (the last smaller when n does not divide); more: the "
            "pieces' sizes")
      .Attr("axis", AttrKind::kInt, int64_t{0}, "the split dimension");
  RegisterInjective("strided_slice", "elements begin, begin + stride, ... before end (ONNX Slice)",
                    {"data"},
                    [](const CallInfo& info, const Tensors& in) {
                      return Tensors{topi::strided_slice(
                          in[0], info.attrs.GetInts("begin"), info.attrs.GetInts("end"),
                          info.attrs.GetInts("axes"), info.attrs.GetInts("strides"))};
                    })
      .Attr("begin", AttrKind::kInts, std::nullopt, "first element per sliced dimension")
      .Attr("end", AttrKind::kInts, std::nullopt, "end (exclusive) per sliced dimension")
      .Attr("strides", AttrKind::kInts, Ints{}, "step per sliced dimension (none: 1)")
      .Attr("axes", AttrKind::kInts, Ints{}, "the sliced dimensions (none: 0, 1, ...)");
  RegisterInjective("tile", "data repeated reps[d] times along dimension d (ONNX Tile)", {"data"},
                    [](const CallInfo& info, const Tensors& in) {
                      return Tensors{topi::tile(in[0], info.attrs.GetInts("reps"))};
                    })
      .Attr("reps", AttrKind::kInts, std::nullopt, "repeats per dimension");
}

void RegisterGathers() {
  RegisterInjective("take", "slices of data along axis at indices (ONNX Gather)",
                    {"data", "indices"},
                    [](const CallInfo& info, const Tensors& in) {
                      return Tensors{topi::gather(in[0], in[1], info.attrs.GetInt("axis"))};
                    })
      .Attr("axis", AttrKind::kInt, int64_t{0}, "the indexed dimension");
  RegisterInjective(
      "gather_elements", "data at indices along axis (ONNX GatherElements)", {"data", "indices"},
      [](const CallInfo& info, const Tensors& in) {
        return Tensors{topi::gather_elements(in[0], in[1], info.attrs.GetInt("axis"))};
      })
      .Attr("axis", AttrKind::kInt, int64_t{0}, "the indexed dimension");
}

void RegisterPadding() {
  RegisterInjective(
      "nn.pad", "border added around data (ONNX Pad; negative pads crop)", {"data"},
      [](const CallInfo& info, const Tensors& in) {
        const Ints& widths = info.attrs.GetInts("pad_width");
        size_t ndim = static_cast<size_t>(in[0].ndim());
        LOOM_CHECK_USER(widths.size() == 2 * ndim)
            << info.where << ": pad_width must hold " << 2 * ndim << " integers (every "
            << "dimension's begin, then every end) for data " << info.input_types[0].str()
            << ", got " << AttrValueText(widths);
        auto mode = static_cast<topi::PadMode>(
            ChoiceAttr(info, "pad_mode", {"constant", "reflect", "edge", "wrap"}));
        std::vector<int64_t> begins(widths.begin(), widths.begin() + ndim);
        std::vector<int64_t> ends(widths.begin() + ndim, widths.end());
        return Tensors{topi::pad(in[0], begins, ends, mode, info.attrs.GetFloat("pad_value"))};
      })
      .Attr("pad_width", AttrKind::kInts, std::nullopt,
            "every dimension's begin pad, then every end pad (ONNX pads)")
      .Attr("pad_value", AttrKind::kFloat, 0.0, "the constant border value")
      .Attr("pad_mode", AttrKind::kString, std::string("constant"),
            "\"constant\", \"reflect\", \"edge\" or \"wrap\"");
}

void RegisterSpatial() {
  RegisterInjective(
      "depth_to_space", "channel blocks moved into space (ONNX DepthToSpace)", {"data"},
      [](const CallInfo& info, const Tensors& in) {
        auto mode = static_cast<topi::DepthToSpaceMode>(ChoiceAttr(info, "mode", {"DCR", "CRD"}));
        return Tensors{topi::depth_to_space(in[0], info.attrs.GetInt("blocksize"), mode)};
      })
      .Attr("blocksize", AttrKind::kInt, std::nullopt, "the spatial block size")
      .Attr("mode", AttrKind::kString, std::string("DCR"), "\"DCR\" or \"CRD\"");
  RegisterInjective("space_to_depth", "spatial blocks moved into channels (ONNX SpaceToDepth)",
                    {"data"},
                    [](const CallInfo& info, const Tensors& in) {
                      ChoiceAttr(info, "mode", {"DCR"});
                      return Tensors{topi::space_to_depth(in[0], info.attrs.GetInt("blocksize"))};
                    })
      .Attr("blocksize", AttrKind::kInt, std::nullopt, "the spatial block size")
      .Attr("mode", AttrKind::kString, std::string("DCR"), "\"DCR\" (the only order)");

  OpBuilder resize = RegisterInjective(
      "image.resize2d", "NCHW resized in H and W to size (ONNX Resize)", {"data"},
      [](const CallInfo& info, const Tensors& in) {
        std::array<int64_t, 2> size = FixedInts<2>(info, "size");
        topi::ResizeAttrs attrs = ResizeAttrsOf(info);
        const Floats& roi = info.attrs.GetFloats("roi");
        LOOM_CHECK_USER(roi.size() == 4)
            << info.where << ": roi must hold 4 floats (h_start, w_start, h_end, w_end), got "
            << AttrValueText(roi);
        std::copy(roi.begin(), roi.end(), attrs.roi.begin());
        const Floats& scales = info.attrs.GetFloats("scales");
        LOOM_CHECK_USER(scales.empty() || (scales.size() == 2 && scales[0] > 0 && scales[1] > 0))
            << info.where << ": scales must be empty or two positive floats (h, w), got "
            << AttrValueText(scales);
        if (!scales.empty()) attrs.scales = {scales[0], scales[1]};
        return Tensors{topi::resize2d(in[0], size[0], size[1], attrs)};
      });
  ResizeAttrFields(resize)
      .Attr("size", AttrKind::kInts, std::nullopt, "output (h, w)")
      .Attr("roi", AttrKind::kFloats, Floats{0, 0, 1, 1},
            "tf_crop_and_resize region, normalized (h_start, w_start, h_end, w_end)")
      .Attr("scales", AttrKind::kFloats, Floats{},
            "the scales (h, w) the model gave, which map coordinates (empty: size / input)");
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterShapeChanges();
  RegisterJoinsAndSlices();
  RegisterGathers();
  RegisterPadding();
  RegisterSpatial();
  return true;
}();

}  // namespace
}  // namespace loom::graph::ops
