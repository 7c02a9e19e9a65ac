// Operators whose shape operand is a tensor only a run knows (ONNX Reshape, Expand, Tile,
// Range, Slice, and the axes of Reduce*, Squeeze and Unsqueeze, given as such an input): a
// shape function computes the output's dimensions as a tensor (topi/shape_function.h),
// dims_of_value makes them sizes, and the *_to operator builds the output at those sizes,
// which the shape function checked. shape_of gives a tensor's dimensions as a tensor.
//
//   dims = reshape_dims(x, shape)                      int64 [r]
//   sizes = dims_of_value(dims, dims, like_dim = -2)   (s0, ..., s{r-1}, 0)
//   y = reshape_to(x, sizes)                           (s0, ..., s{r-1})
#include "loom/topi/shape_function.h"

#include "loom/graph/op_util.h"
#include "loom/topi/reduction.h"
#include "loom/topi/transform.h"

namespace loom::graph::ops {
namespace {

using Tensors = std::vector<te::Tensor>;

constexpr const char* kPadModes = "\"constant\", \"reflect\", \"edge\" or \"wrap\"";

// The call's pad_mode as topi::PadMode's number.
int PadModeOf(const CallInfo& info) {
  return ChoiceAttr(info, "pad_mode", {"constant", "reflect", "edge", "wrap"});
}

OpBuilder RegisterShapeFunction(const std::string& name, const std::string& doc,
                                std::vector<std::string> inputs, ComputeFn compute) {
  return RegisterComputedOp(name, std::move(compute))
      .Describe(doc)
      .Inputs(std::move(inputs))
      .Pattern(OpPattern::kOpaque)
      .Schedule(ScheduleAsWritten);
}

OpBuilder RegisterTo(const std::string& name, const std::string& doc,
                     std::vector<std::string> inputs, ComputeFn compute) {
  return RegisterComputedOp(name, std::move(compute))
      .Describe(doc)
      .Inputs(std::move(inputs))
      .Pattern(OpPattern::kInjective);
}

[[maybe_unused]] const bool kRegistered = [] {
  // The sizes a run binds, as a tensor for arithmetic with run-time values (the importer's
  // shape values where they meet such values). Its own kernel: it reads only x's shape.
  RegisterComputedOp("shape_of",
                     [](const CallInfo&, const Tensors& in) {
                       const Array<PrimExpr> dims = in[0].shape();
                       const DataType i64 = DataType::Int(64);
                       return Tensors{te::compute(
                           {make_const(i64, static_cast<int64_t>(dims.size()))},
                           [&](const Array<loom::Var>& i) {
                             PrimExpr value = make_zero(i64);
                             for (size_t d = dims.size(); d-- > 0;) {
                               value = select(i[0] == make_const(i64, static_cast<int64_t>(d)),
                                              cast(i64, dims[d]), value);
                             }
                             return value;
                           },
                           "shape", "injective")};
                     })
      .Describe("x's dimensions, int64 [rank]")
      .Inputs({"x"})
      .Pattern(OpPattern::kOpaque);
  RegisterShapeFunction("reshape_dims",
                        "int64 [r]: ONNX Reshape's output dimensions for shape (int64 [r]), -1 "
                        "each when shape does not fit data",
                        {"data", "shape"}, [](const CallInfo& info, const Tensors& in) {
                          return Tensors{topi::reshape_dims(
                              in[0], in[1], info.attrs.GetInt("allowzero") != 0)};
                        })
      .Attr("allowzero", AttrKind::kInt, int64_t{0}, "1: a 0 in shape is an empty dimension");
  RegisterShapeFunction("broadcast_dims",
                        "ONNX Expand's output dimensions for shape (int64 [r]), -1 where shape "
                        "does not broadcast with data",
                        {"data", "shape"}, [](const CallInfo&, const Tensors& in) {
                          return Tensors{topi::broadcast_dims(in[0], in[1])};
                        });
  RegisterShapeFunction("tile_dims",
                        "ONNX Tile's output dimensions for repeats (int64 [rank]), -1 where a "
                        "repeat is negative",
                        {"data", "repeats"}, [](const CallInfo&, const Tensors& in) {
                          return Tensors{topi::tile_dims(in[0], in[1])};
                        });
  RegisterShapeFunction("range_length",
                        "int64 [1]: ONNX Range's length for scalars start, limit and delta (-1 "
                        "for a delta of 0)",
                        {"start", "limit", "delta"}, [](const CallInfo&, const Tensors& in) {
                          return Tensors{topi::range_length(in[0], in[1], in[2])};
                        });
  RegisterShapeFunction(
      "reduce_dims",
      "ONNX Reduce*'s output dimensions for axes (int64 [k]) given at run time: "
      "with keepdims the listed ones 1 (int64 [rank]), without them dropped "
      "(int64 [rank - k]); -1 each where an axis is out of range (or, "
      "without keepdims, repeated)",
      {"data", "axes"},
      [](const CallInfo& info, const Tensors& in) {
        return Tensors{topi::reduce_dims(in[0], in[1], info.attrs.GetInt("keepdims") != 0)};
      })
      .Attr("keepdims", AttrKind::kInt, int64_t{1}, "1: the reduced dimensions stay as 1");
  RegisterShapeFunction("slice_dims",
                        "ONNX Slice's output dimensions for starts, ends, axes and steps "
                        "(integer [k] each); -1 each where an axis is out of range or repeated, "
                        "or a step is 0",
                        {"data", "starts", "ends", "axes", "steps"},
                        [](const CallInfo&, const Tensors& in) {
                          return Tensors{topi::slice_dims(in[0], in[1], in[2], in[3], in[4])};
                        });
  RegisterShapeFunction("pad_dims",
                        "ONNX Pad's output dimensions for pads (integer [2k]) along axes "
                        "(integer [k]); -1 each where they do not fit data or pad_mode",
                        {"data", "pads", "axes"},
                        [](const CallInfo& info, const Tensors& in) {
                          return Tensors{topi::pad_dims(in[0], in[1], in[2], PadModeOf(info))};
                        })
      .Attr("pad_mode", AttrKind::kString, std::string("constant"), kPadModes);
  OpBuilder resize_dims = RegisterShapeFunction(
      "resize_dims",
      "ONNX Resize's output dimensions for scales (float [k]) or sizes (int64 [k]) of axes; -1 "
      "each where a scale is not positive, a size negative, a sized dimension empty, or a "
      "dimension before the last two would change",
      {"data", "operand"}, [](const CallInfo& info, const Tensors& in) {
        return Tensors{topi::resize_dims(in[0], in[1], ResizeByOf(info))};
      });
  ResizeByFields(resize_dims);
  OpBuilder resize_to = RegisterTo(
      "image.resize_to",
      "ONNX Resize of data's two trailing dimensions by run-time scales or sizes (operand) of "
      "axes, in the region roi for tf_crop_and_resize, at the shape sizes carries "
      "(resize_dims's)",
      {"data", "operand", "roi", "sizes"}, [](const CallInfo& info, const Tensors& in) {
        return Tensors{topi::resize_to(in[0], in[1], in[2], SizesOf(info, in[3]), ResizeByOf(info),
                                       ResizeAttrsOf(info))};
      });
  ResizeByFields(ResizeAttrFields(resize_to));
  RegisterShapeFunction("split_dims",
                        "ONNX Split's piece sizes split (integer [n]) along axis, checked: -1 "
                        "each where one is negative or they do not sum to the dimension",
                        {"data", "split"},
                        [](const CallInfo& info, const Tensors& in) {
                          return Tensors{topi::split_dims(in[0], in[1], info.attrs.GetInt("axis"))};
                        })
      .Attr("axis", AttrKind::kInt, std::nullopt, "the split dimension (from 0)");
  RegisterShapeFunction("squeeze_dims",
                        "ONNX Squeeze's output dimensions for axes (int64 [k]): data's but the "
                        "listed ones; -1 each where one is out of range, repeated or not 1",
                        {"data", "axes"}, [](const CallInfo&, const Tensors& in) {
                          return Tensors{topi::squeeze_dims(in[0], in[1])};
                        });
  RegisterShapeFunction("unsqueeze_dims",
                        "ONNX Unsqueeze's output dimensions for axes (int64 [k], positions in "
                        "the output); -1 each where one is out of range or repeated",
                        {"data", "axes"}, [](const CallInfo&, const Tensors& in) {
                          return Tensors{topi::unsqueeze_dims(in[0], in[1])};
                        });
  RegisterComputedOp("reduce_to",
                     [](const CallInfo& info, const Tensors& in) {
                       return Tensors{topi::reduce_to(in[0], SizesOf(info, in[1]),
                                                      info.attrs.GetString("reducer"))};
                     })
      .Describe(
          "data reduced by reducer to the shape sizes carries (reduce_dims's with keepdims: "
          "each dimension data's or 1)")
      .Inputs({"data", "sizes"})
      .Pattern(OpPattern::kCommReduce)
      .Attr("reducer", AttrKind::kString, std::string("sum"),
            "sum, mean, max, min, prod, l1_norm, l2_norm, sum_square or logsumexp");
  RegisterTo("reshape_to", "data's elements in the shape sizes carries (checked by reshape_dims)",
             {"data", "sizes"}, [](const CallInfo& info, const Tensors& in) {
               return Tensors{topi::reshape_to(in[0], SizesOf(info, in[1]))};
             });
  RegisterTo("strided_slice_to",
             "ONNX Slice of data by starts, ends, axes and steps, at the shape sizes carries "
             "(slice_dims's)",
             {"data", "starts", "ends", "axes", "steps", "sizes"},
             [](const CallInfo& info, const Tensors& in) {
               return Tensors{topi::strided_slice_to(in[0], {in[1], in[2], in[3], in[4]},
                                                     SizesOf(info, in[5]))};
             });
  RegisterTo("pad_to",
             "ONNX Pad of data by pads along axes (value fills a constant border), at the shape "
             "sizes carries (pad_dims's)",
             {"data", "pads", "axes", "value", "sizes"},
             [](const CallInfo& info, const Tensors& in) {
               return Tensors{topi::pad_to(in[0], in[1], in[2], in[3], SizesOf(info, in[4]),
                                           static_cast<topi::PadMode>(PadModeOf(info)))};
             })
      .Attr("pad_mode", AttrKind::kString, std::string("constant"), kPadModes);
  RegisterTo(
      "split_piece_to",
      "piece index of data split along axis at the sizes sizes carries (split_dims's)",
      {"data", "sizes"},
      [](const CallInfo& info, const Tensors& in) {
        return Tensors{topi::split_piece(in[0], SizesOf(info, in[1]), info.attrs.GetInt("axis"),
                                         info.attrs.GetInt("index"))};
      })
      .Attr("axis", AttrKind::kInt, std::nullopt, "the split dimension (from 0)")
      .Attr("index", AttrKind::kInt, std::nullopt, "which piece");
  RegisterTo("expand_to", "data broadcast to the shape sizes carries (checked by broadcast_dims)",
             {"data", "sizes"}, [](const CallInfo& info, const Tensors& in) {
               return Tensors{topi::expand_to(in[0], SizesOf(info, in[1]))};
             });
  RegisterTo("tile_to", "data repeated to the shape sizes carries (checked by tile_dims)",
             {"data", "sizes"}, [](const CallInfo& info, const Tensors& in) {
               return Tensors{topi::tile_to(in[0], SizesOf(info, in[1]))};
             });
  RegisterTo("affine_grid_to",
             "ONNX AffineGrid: the affine maps theta [N, k, k + 1] applied to the normalized "
             "coordinates of a grid of the k spatial sizes sizes carries ([N, H, W, 2] or "
             "[N, D, H, W, 3])",
             {"theta", "sizes"},
             [](const CallInfo& info, const Tensors& in) {
               return Tensors{topi::affine_grid(in[0], SizesOf(info, in[1]),
                                                info.attrs.GetInt("align_corners") != 0)};
             })
      .Attr("align_corners", AttrKind::kInt, int64_t{0},
            "1: the coordinates -1 and 1 are the outer pixels' centres; 0: their outer edges");
  RegisterTo("arange_to",
             "start, start + delta, ... (scalars), as many as the one size sizes carries "
             "(range_length's)",
             {"start", "delta", "sizes"}, [](const CallInfo& info, const Tensors& in) {
               const Array<PrimExpr> length = SizesOf(info, in[2]);
               LOOM_CHECK_USER(length.size() == 1 && in[0].dtype() == in[1].dtype())
                   << info.where << ": arange_to takes one size and start and delta of one dtype";
               auto scalar = [](const te::Tensor& t) {
                 return t.ndim() == 0 ? t(Array<PrimExpr>{}) : t(make_zero(t.shape()[0].dtype()));
               };
               return Tensors{te::compute(
                   length,
                   [&](const Array<loom::Var>& i) {
                     return scalar(in[0]) + cast(in[0].dtype(), i[0]) * scalar(in[1]);
                   },
                   "arange", "injective")};
             });
  return true;
}();

}  // namespace
}  // namespace loom::graph::ops
