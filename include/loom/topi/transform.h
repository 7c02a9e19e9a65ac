// Data-movement operators with ONNX semantics: reshaping, transposing, broadcasting,
// concatenating, splitting, slicing, gathering, tiling, padding and layout changes. Each
// returns compute tensors tagged "injective", to be scheduled with schedule_injective
// (loom/topi/schedule.h) or inlined into a consumer.
//
//   te::Tensor y = topi::transpose(topi::reshape(x, {0, 4, -1}), {0, 2, 1});
//
// Axes may be negative and then count from the end of the rank they refer to. Out-of-range
// axes, shapes that do not fit the operator and other misuse are a loom::Error naming the
// operator, the tensor and what was expected. Operators whose output shape depends on the
// input's dimension sizes (reshape, split, strided_slice, ...) need those sizes constant.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "loom/te/operation.h"

namespace loom::topi {

// ---- shape changes

// ONNX Reshape (allowzero = 0): one entry may be -1 (inferred from the element count) and
// an entry 0 copies the input's dimension at that position; the element count must match.
te::Tensor reshape(const te::Tensor& x, const std::vector<int64_t>& shape);
// reshape where the dimensions at some positions are given as sizes (`given[d]` defined, an
// exporter's x.view(y.size(0), y.size(1), -1) over symbolic sizes): shape[d] is ignored
// there; the element count must be shown to match at compile time.
te::Tensor reshape(const te::Tensor& x, const std::vector<int64_t>& shape,
                   const std::vector<PrimExpr>& given);
// ONNX Flatten: a 2-d tensor of (product of dims before axis, product from axis on);
// axis in [-rank, rank].
te::Tensor flatten(const te::Tensor& x, int64_t axis = 1);
// ONNX Squeeze: removes the listed dimensions, which must have size 1; no axes removes
// every dimension of constant size 1.
te::Tensor squeeze(const te::Tensor& x, const std::vector<int64_t>& axes = {});
// ONNX Unsqueeze: inserts size-1 dimensions at `axes`, positions in the output's rank.
te::Tensor unsqueeze(const te::Tensor& x, const std::vector<int64_t>& axes);
// ONNX Transpose: output dimension d is input dimension perm[d]; no perm reverses them.
te::Tensor transpose(const te::Tensor& x, const std::vector<int64_t>& perm = {});
// x with its elements along `axis` in reverse order (NumPy flip; the extent may be symbolic).
te::Tensor reverse(const te::Tensor& x, int64_t axis);
// ONNX Expand: x broadcast with `shape` in both directions (NumPy rules), so a 1 in
// `shape` keeps x's dimension.
te::Tensor expand(const te::Tensor& x, const Array<PrimExpr>& shape);
// NumPy broadcast_to: x broadcast to exactly `shape` (x's dimensions must be 1 or match).
te::Tensor broadcast_to(const te::Tensor& x, const Array<PrimExpr>& shape);

// ---- to shapes a run computes (sizes a shape function checked: loom/topi/shape_function.h)

// x's elements in row-major order in `shape`, whose element count must be x's.
te::Tensor reshape_to(const te::Tensor& x, const Array<PrimExpr>& shape);
// x broadcast to `shape` (of at least x's rank): a dimension of x that is not the constant 1
// must equal the output's.
te::Tensor expand_to(const te::Tensor& x, const Array<PrimExpr>& shape);
// x repeated to `shape` (x's rank), each output dimension a multiple of x's.
te::Tensor tile_to(const te::Tensor& x, const Array<PrimExpr>& shape);

// ---- joining, splitting, slicing

// ONNX Concat: tensors of one dtype and rank, equal in every dimension but `axis`.
te::Tensor concat(const Array<te::Tensor>& tensors, int64_t axis);
// ONNX Split: consecutive pieces of x along `axis`, of the given sizes (which must sum to
// the dimension).
Array<te::Tensor> split(const te::Tensor& x, int64_t axis, const std::vector<int64_t>& sizes);
// Piece `index` of x split along `axis` into pieces of `sizes` (sizes a run gives, which
// topi::split_dims checked): from the sum of the sizes before it, sizes[index] long.
te::Tensor split_piece(const te::Tensor& x, const Array<PrimExpr>& sizes, int64_t axis,
                       int64_t index);
// ONNX Split without sizes (opset 18 num_outputs): num_outputs pieces of
// ceil(dimension / num_outputs), the last one smaller when it does not divide evenly (a
// loom::Error when not even the last piece is left, such as 5 in 4 parts of 2). A name of
// its own: split(x, axis, {4}) must keep meaning one piece of size 4.
Array<te::Tensor> split_by_count(const te::Tensor& x, int64_t axis, int64_t num_outputs);
// ONNX Slice: along each of `axes` (default 0, 1, ...), elements start, start + step, ...
// before end (steps default to 1, may be negative, not 0). Negative starts and ends count
// from the end of the dimension; both are then clamped into range, so INT64_MAX means "to
// the end" (and INT64_MIN, with a negative step, "to the beginning").
// x[begins[k] : ends[k]] along axes[k] (step 1), the ends sizes (symbolic: a sequence
// length); each end must lie within its axis, which is checked where constant.
te::Tensor slice_to(const te::Tensor& x, const std::vector<int64_t>& axes,
                    const std::vector<int64_t>& begins, const Array<PrimExpr>& ends);
// strided_slice by starts, ends, axes and steps (`operands`, 1-d integer tensors of one length)
// only a run knows, to `shape` (the counts topi::slice_dims computed and checked).
te::Tensor strided_slice_to(const te::Tensor& x, const Array<te::Tensor>& operands,
                            const Array<PrimExpr>& shape);
te::Tensor strided_slice(const te::Tensor& x, const std::vector<int64_t>& starts,
                         const std::vector<int64_t>& ends, const std::vector<int64_t>& axes = {},
                         const std::vector<int64_t>& steps = {});
// ONNX Tile: dimension d repeated repeats[d] (>= 0) times; a repeat of 0 empties it.
te::Tensor tile(const te::Tensor& x, const std::vector<int64_t>& repeats);

// ---- gathering. Index tensors are int32 or int64; a negative index counts from the end of
// the dimension. Out-of-range indices, undefined in ONNX, read the nearest element in range
// rather than outside the tensor.

// ONNX Gather: output shape data[:axis] + indices.shape + data[axis + 1:].
te::Tensor gather(const te::Tensor& data, const te::Tensor& indices, int64_t axis = 0);
// ONNX GatherElements: indices has data's rank; output[i] = data[i with i[axis] replaced by
// indices[i]], so the output has indices' shape.
te::Tensor gather_elements(const te::Tensor& data, const te::Tensor& indices, int64_t axis = 0);
// NumPy take without an axis: elements of the flattened data, in indices' shape.
te::Tensor take(const te::Tensor& data, const te::Tensor& indices);

// ---- padding and layouts

// How pad fills the border: with a constant, mirrored without repeating the edge
// (reflect: 3 2 | 1 2 3 | 2 1), repeating the edge (edge: 1 1 | 1 2 3 | 3 3), or circularly
// (wrap: 2 3 | 1 2 3 | 1 2).
enum class PadMode { kConstant, kReflect, kEdge, kWrap };
// ONNX Pad: pads_begin[d] and pads_end[d] elements added before and after dimension d; a
// negative pad removes elements instead (crops), and the positive pads then extend the
// cropped tensor. kConstant fills with `value` converted to x's dtype; kReflect needs pads
// below the (cropped) dimension's size; kEdge and kWrap need a non-empty (cropped)
// dimension.
te::Tensor pad(const te::Tensor& x, const std::vector<int64_t>& pads_begin,
               const std::vector<int64_t>& pads_end, PadMode mode = PadMode::kConstant,
               double value = 0);
// ONNX Pad by pads (integer [2k]: the k axes' begins, then their ends) along axes (integer
// [k], negative from the end) only a run knows, to `shape` (the dimensions topi::pad_dims
// computed and checked); `value` (a scalar of x's dtype) fills a constant border.
te::Tensor pad_to(const te::Tensor& x, const te::Tensor& pads, const te::Tensor& axes,
                  const te::Tensor& value, const Array<PrimExpr>& shape, PadMode mode);
// ONNX DepthToSpace orders: channel blocks depth-column-row (DCR, the default) or
// column-row-depth (CRD).
enum class DepthToSpaceMode { kDCR, kCRD };
// ONNX DepthToSpace on NCHW: (N, C, H, W) to (N, C / b^2, H * b, W * b).
te::Tensor depth_to_space(const te::Tensor& x, int64_t blocksize,
                          DepthToSpaceMode mode = DepthToSpaceMode::kDCR);
// ONNX SpaceToDepth on NCHW: (N, C, H, W) to (N, C * b^2, H / b, W / b), the inverse of
// DCR depth_to_space; H and W must be multiples of b.
te::Tensor space_to_depth(const te::Tensor& x, int64_t blocksize);
// Between "NCHW" and a blocked "NCHW<k>c" (e.g. "NCHW16c": (N, C / k, H, W, k), channel
// c at [c / k, ..., c % k]); C must be a multiple of k.
te::Tensor layout_transform(const te::Tensor& x, const std::string& src_layout,
                            const std::string& dst_layout);
// The channel block k of layout "NCHW<k>c" (such as "NCHW16c": [N, C / k, H, W, k]), 0 for
// "NCHW", or a loom::Error naming `op` for any other layout.
int64_t ChannelBlock(const std::string& layout, const std::string& op);
// KCRS weights [K, C, R, S] in the blocked layout OIHW[ic_bn]i[oc_bn]o,
// [K / oc_bn, C / ic_bn, R, S, ic_bn, oc_bn] (a depthwise weight [C, 1, R, S] takes
// ic_bn = 1). Blocks that do not divide the channels are a loom::Error naming `where`.
te::Tensor pack_conv2d_weight(const te::Tensor& weight, int64_t ic_bn, int64_t oc_bn,
                              const std::string& where = "pack_conv2d_weight");

// ---- resize

// ONNX Resize on the two trailing (spatial) dimensions of NCHW, to `out_h` x `out_w`.
// Linear and cubic blend the 2 or 4 nearest input pixels along each axis, reading the edge
// pixel for taps outside the image.
enum class ResizeMethod { kNearest, kLinear, kCubic };
// How an output coordinate maps to an input one (ONNX coordinate_transformation_mode).
// kTfCropAndResize maps the output onto the region `roi` of the input and gives
// `extrapolation_value` where the coordinate falls outside the input.
enum class ResizeCoordinates {
  kHalfPixel,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfCropAndResize,
  kHalfPixelSymmetric
};
// How nearest rounds the input coordinate (ONNX nearest_mode).
enum class ResizeRounding { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };
struct ResizeAttrs {
  ResizeMethod method = ResizeMethod::kNearest;
  ResizeCoordinates coordinates = ResizeCoordinates::kHalfPixel;
  ResizeRounding rounding = ResizeRounding::kRoundPreferFloor;
  // ONNX cubic_coeff_a: the Keys kernel's parameter.
  double cubic_coeff_a = -0.75;
  // ONNX exclude_outside (cubic): taps outside the image get weight 0 and the others are
  // renormalized to sum to 1.
  bool exclude_outside = false;
  // kTfCropAndResize: the region, in coordinates normalized to [0, 1] over the input (ONNX
  // roi of the two spatial axes): {h_start, w_start, h_end, w_end}.
  std::array<double, 4> roi{0, 0, 1, 1};
  double extrapolation_value = 0;
  // The scales of H and W the model gave (0: none, the sizes' ratio out / in). A given scale
  // maps coordinates by itself, as ONNX does (not by the ratio of the whole output size), in
  // float64 as ONNX's reference: a float32 quotient can round onto the next pixel.
  std::array<double, 2> scales{0, 0};
};
te::Tensor resize2d(const te::Tensor& x, int64_t out_h, int64_t out_w, const ResizeAttrs& attrs);
te::Tensor resize2d(const te::Tensor& x, int64_t out_h, int64_t out_w,
                    ResizeMethod method = ResizeMethod::kNearest,
                    ResizeCoordinates coordinates = ResizeCoordinates::kHalfPixel,
                    ResizeRounding rounding = ResizeRounding::kRoundPreferFloor);

// ONNX Resize whose scales or sizes (and roi) only a run knows: what the operand holds, the
// dimensions it lists (ONNX axes, each in [0, rank), in its order) and, for sizes, the
// keep_aspect_ratio_policy (not_larger and not_smaller resize every listed axis by the
// smallest or largest of their ratios size / input).
enum class ResizeOperand { kScales, kSizes };
enum class AspectPolicy { kStretch, kNotLarger, kNotSmaller };
struct ResizeBy {
  ResizeOperand operand = ResizeOperand::kScales;
  std::vector<int64_t> axes;
  AspectPolicy policy = AspectPolicy::kStretch;
};
// x resized in its two trailing dimensions by `operand` (float [k] scales or int64 [k]
// sizes, k = by.axes.size()) to `shape` (the dimensions topi::resize_dims checked; the
// others stay), with the region `roi` (float [2k], starts then ends) for kTfCropAndResize.
// Coordinates are float64 (ONNX's reference); attrs.roi and attrs.scales are not read.
te::Tensor resize_to(const te::Tensor& x, const te::Tensor& operand, const te::Tensor& roi,
                     const Array<PrimExpr>& shape, const ResizeBy& by, const ResizeAttrs& attrs);

// ONNX AffineGrid: for affine matrices theta [N, k, k + 1] (k = 2 or 3 spatial dimensions)
// and the output's spatial sizes `spatial` (H, W or D, H, W), the sampling grid
// [N, (D,) H, W, k]: theta applied to each position's normalized coordinates (x along W, y
// along H, z along D, then 1), which span [-1, 1] by the pixels' centres, or with
// `align_corners` by the outer pixels themselves (-1 alone for a size of 1).
te::Tensor affine_grid(const te::Tensor& theta, const Array<PrimExpr>& spatial, bool align_corners);

}  // namespace loom::topi
