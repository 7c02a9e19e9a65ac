// bfloat16 and int8 conv2d and dense on AMX tiles (amx.h).
//
// Each operator's register-block stage is tensorized whole onto AmxTiles: the
// intrinsic's compute is built by the same function as the operator's, over placeholders
// shaped like one block's inputs, so tensorize matches them term by term. The block's
// accumulators stay in tiles over the whole reduction (a tile register is not something
// LLVM can keep across loop iterations for us, so the intrinsic runs the reduction's loops
// itself) and are stored once into a "local" tile, which the output stage copies out
// through the epilogue in vectors.
#include "loom/topi/x86/amx.h"

#include <algorithm>
#include <string>
#include <vector>

#include "loom/topi/x86/tensor_intrinsics.h"
#include "topi/topi_util.h"
#include "topi/x86/padded_input.h"

namespace loom::topi::x86 {
namespace {

using detail::ConstShape;

const char* const kConvTag = "conv2d_nchwc_bf16";
const char* const kInt8ConvTag = "conv2d_nchwc_amx_int8";
const char* const kDenseTag = "dense_bf16";
const char* const kInt8DenseTag = "dense_amx_int8";
const char* const kUnfoldTag = "unfold_columns_nchwc";
const char* const kUnfoldRowsTag = "unfold_columns_rows";
constexpr int kDepth = kAmxDepth;         // elements of a channel block, one step deep
constexpr int kBlock = kAmxBlockColumns;  // output columns of a register block
constexpr int kLanes = detail::kAvx512Lanes;

// The type a product sums in.
DataType SumType(AmxProduct product) {
  return product == AmxProduct::kBf16 ? DataType::Float(32) : DataType::Int(32);
}

// The elements a dense layer's step reduces: 64 bytes, a tile's full depth.
int DenseDepth(AmxProduct product) {
  return product == AmxProduct::kBf16 ? kDepth : kAmxInt8DenseDepth;
}

void CheckType(const te::Tensor& x, DataType dtype, const std::string& op,
               const std::string& role) {
  LOOM_CHECK_USER(x.dtype() == dtype) << op << ": " << role << " '" << x.name() << "' must be "
                                      << dtype.str() << ", got " << x.dtype().str();
}

// The conv2d's sum over (input channel blocks, kernel rows, kernel columns, the 32 channels of
// a block) for output (n, weight block, row, column, channel), reading the padded input and
// the packed weight. Shared by the operator and its intrinsic.
struct ConvSum {
  detail::PaddedInput input;
  te::Tensor weight;
  Conv2DAttrs attrs;
  AmxProduct product;
  IterVar rco, rr, rs, rci;

  PrimExpr operator()(PrimExpr n, PrimExpr weight_block, PrimExpr row, PrimExpr column,
                      PrimExpr channel) const {
    const int group = AmxGroup(product);
    PrimExpr in_row = row * int(attrs.strides[0]) + rr->var * int(attrs.dilations[0]);
    PrimExpr in_column = column * int(attrs.strides[1]) + rs->var * int(attrs.dilations[1]);
    PrimExpr x = input(std::move(n), rco->var, in_row, in_column, rci->var);
    PrimExpr w = weight(weight_block, rco->var, rr->var, rs->var, floordiv(rci->var, group),
                        std::move(channel), floormod(rci->var, group));
    const DataType sum_type = SumType(product);
    return te::sum(cast(sum_type, x) * cast(sum_type, w), {rco, rr, rs, rci});
  }
};

ConvSum MakeConvSum(detail::PaddedInput input, te::Tensor weight, const Conv2DAttrs& attrs,
                    AmxProduct product, int64_t in_blocks, int64_t r, int64_t s) {
  return ConvSum{std::move(input),
                 std::move(weight),
                 attrs,
                 product,
                 te::reduce_axis(Range(0, int(in_blocks)), "rco"),
                 te::reduce_axis(Range(0, int(r)), "rr"),
                 te::reduce_axis(Range(0, int(s)), "rs"),
                 te::reduce_axis(Range(0, kDepth), "rci")};
}

// The dense product's sum over k for the data's row at `row` (its indices but the last) and
// `column` of the packed weight, in `product`'s sum type.
PrimExpr DenseSum(const te::Tensor& data, const te::Tensor& packed, const IterVar& k,
                  Array<PrimExpr> row, const PrimExpr& column, AmxProduct product) {
  const int group = AmxGroup(product), depth = DenseDepth(product);
  PrimExpr w = packed(floordiv(column, kBlock), floordiv(k->var, depth),
                      floordiv(floormod(k->var, depth), group), floormod(column, kBlock),
                      floormod(k->var, group));
  const DataType sum_type = SumType(product);
  row.push_back(k->var);
  return te::sum(cast(sum_type, data(row)) * cast(sum_type, w), {k});
}

// The output stage's 32 channels of a block as two unrolled 16-lane vectors.
void VectorizeBlockColumns(te::Stage& o, const IterVar& columns) {
  auto [vector, lane] = o.split(columns, kLanes);
  o.unroll(vector);
  o.vectorize(lane);
}

}  // namespace

AmxRowTiling ChooseAmxRowTiling(int64_t extent) {
  AmxRowTiling best;
  for (int64_t tiles = 1; tiles <= 2; ++tiles) {
    for (int64_t rows = 1; rows <= kAmxMaxRows; ++rows) {
      if (extent % (rows * tiles) == 0 && rows * tiles > best.block()) best = {rows, tiles};
    }
  }
  return best;
}

namespace {

// A KCRS or [N, K] weight as `product`'s B tiles: [K/32, C/d, (R, S,) d/group, 32, group],
// d the depth of a step (a convolution's channel block; a dense layer's DenseDepth).
te::Tensor PackWeight(const te::Tensor& weight, AmxProduct product, const std::string& op) {
  std::vector<int64_t> w = ConstShape(weight, op);
  const bool bf16 = product == AmxProduct::kBf16;
  const int64_t depth = w.size() == 2 ? DenseDepth(product) : kDepth;
  LOOM_CHECK_USER((bf16 ? weight.dtype().is_float() : weight.dtype() == DataType::Int(8)) &&
                  (w.size() == 4 || w.size() == 2) && w[0] % kBlock == 0 && w[1] % depth == 0)
      << op << ": the weight '" << weight.name() << "' " << weight.dtype().str() << " "
      << detail::ShapeText(w) << " must be " << (bf16 ? "float" : "int8")
      << " KCRS or [N, K], its first dimension a multiple of " << kBlock << " and its second of "
      << depth;
  const int group = AmxGroup(product);
  const size_t rank = w.size();
  Array<PrimExpr> shape{int(w[0] / kBlock), int(w[1] / depth)};
  for (size_t d = 2; d < rank; ++d) shape.push_back(int(w[d]));
  for (int extent : {int(depth) / group, kBlock, group}) shape.push_back(extent);
  const DataType packed_type = bf16 ? DataType::BFloat16() : DataType::Int(8);
  return te::compute(
      shape,
      [&](const Array<Var>& i) {
        const size_t row = rank, filter = rank + 1, lane = rank + 2;
        Array<PrimExpr> index{i[0] * kBlock + i[filter],
                              i[1] * int(depth) + i[row] * group + i[lane]};
        for (size_t d = 2; d < rank; ++d) index.push_back(i[d]);
        return cast(packed_type, weight(index));
      },
      "packed_weight", detail::kInjective);
}

// The conv2d of NCHW32c data and a packed weight in `product`'s types, padded with
// `pad_value`, tagged `tag`.
te::Tensor AmxConv2D(const te::Tensor& data, const te::Tensor& packed_weight,
                     const Conv2DAttrs& a, AmxProduct product, int64_t pad_value,
                     const std::string& tag) {
  const std::string op = tag;
  const bool bf16 = product == AmxProduct::kBf16;
  CheckType(data, bf16 ? DataType::BFloat16() : DataType::UInt(8), op, "data");
  CheckType(packed_weight, bf16 ? DataType::BFloat16() : DataType::Int(8), op, "weight");
  const int group = AmxGroup(product);
  std::vector<int64_t> in = ConstShape(data, op), w = ConstShape(packed_weight, op);
  LOOM_CHECK_USER(in.size() == 5 && in[4] == kDepth && w.size() == 7 && w[1] == in[1] &&
                  w[4] == kDepth / group && w[5] == kBlock && w[6] == group && a.groups == 1)
      << op << ": data '" << data.name() << "' " << detail::ShapeText(in)
      << " must be NCHW32c and weight '" << packed_weight.name() << "' " << detail::ShapeText(w)
      << " [K/32, C/32, R, S, " << kDepth / group << ", 32, " << group
      << "] with the data's C/32, groups 1 (got " << a.groups << ")";
  detail::Conv2DOutputSize out = detail::CheckedConv2DOutputSize(op, in[2], in[3], w[2], w[3], a);
  ConvSum sum = MakeConvSum(detail::PadSpatial(data, a, pad_value), packed_weight, a, product,
                            in[1], w[2], w[3]);
  return te::compute(
      {int(in[0]), int(w[0]), int(out.p), int(out.q), kBlock},
      [&](const Array<Var>& i) { return sum(i[0], i[1], i[2], i[3], i[4]); }, op, tag);
}

}  // namespace

te::Tensor pack_weight_bf16(const te::Tensor& weight) {
  return PackWeight(weight, AmxProduct::kBf16, "pack_weight_bf16");
}

te::Tensor pack_weight_amx_int8(const te::Tensor& weight) {
  return PackWeight(weight, AmxProduct::kInt8, "pack_weight_amx_int8");
}

te::Tensor conv2d_nchwc_amx_int8(const te::Tensor& data, const te::Tensor& packed_weight,
                                 const Conv2DAttrs& attrs, int64_t pad_value) {
  return AmxConv2D(data, packed_weight, attrs, AmxProduct::kInt8, pad_value, kInt8ConvTag);
}

te::Tensor conv2d_nchwc_bf16(const te::Tensor& data, const te::Tensor& packed_weight,
                             const Conv2DAttrs& attrs) {
  return AmxConv2D(data, packed_weight, attrs, AmxProduct::kBf16, 0, kConvTag);
}

te::Tensor unfold_columns_nchwc(const te::Tensor& data, const Conv2DAttrs& a,
                                int64_t kernel_columns) {
  const std::string op = "unfold_columns_nchwc";
  std::vector<int64_t> in = ConstShape(data, op);
  LOOM_CHECK_USER(in.size() == 4 && kernel_columns >= 1 && in[1] * kernel_columns <= kDepth &&
                  a.dilations[1] == 1)
      << op << ": data '" << data.name() << "' " << detail::ShapeText(in)
      << " must be NCHW with channels x kernel columns (" << kernel_columns << ") at most "
      << kDepth << ", and the column dilation 1 (got " << a.dilations[1] << ")";
  const int64_t channels = in[1];
  detail::Conv2DOutputSize out =
      detail::CheckedConv2DOutputSize(op, in[2], in[3], 1, kernel_columns, a);
  const int64_t rows = in[2] + a.pads[0] + a.pads[2];
  // The padded rows channels last, [N, rows, columns * C]: a window's S columns of C
  // channels are then C * S consecutive values. Wide enough that every window's 32 lanes
  // lie inside (the lanes past C * S are read and dropped), so the copy below is whole
  // vectors.
  const int64_t row_values = std::max((in[3] + a.pads[1] + a.pads[3]) * channels,
                                      (out.q - 1) * a.strides[1] * channels + kDepth);
  te::Tensor padded_rows = te::compute(
      {int(in[0]), int(rows), int(row_values)},
      [&](Var n, Var h, Var j) {
        PrimExpr row = h - int(a.pads[0]);
        PrimExpr column = floordiv(j, int(channels)) - int(a.pads[1]);
        PrimExpr inside = row >= 0 && row < int(in[2]) && column >= 0 && column < int(in[3]);
        return te::if_then_else(inside, data(n, floormod(j, int(channels)), row, column),
                                make_zero(data.dtype()));
      },
      "padded_rows", kUnfoldRowsTag);
  return te::compute(
      {int(in[0]), 1, int(rows), int(out.q), kDepth},
      [&](const Array<Var>& i) {
        PrimExpr value = padded_rows(i[0], i[2], i[3] * int(a.strides[1] * channels) + i[4]);
        return Select(i[4] < int(channels * kernel_columns), value, make_zero(data.dtype()));
      },
      "unfolded", kUnfoldTag);
}

te::Schedule schedule_unfold_columns(const te::Tensor& out) {
  LOOM_CHECK_USER(out.op()->tag == kUnfoldTag)
      << "schedule_unfold_columns: '" << out.name() << "' is not an unfold_columns_nchwc output";
  te::Schedule s = te::create_schedule({out.op()});
  te::Tensor padded_rows = out.op()->InputTensors()[0];
  // Both in parallel rows; the padded rows 16 values per vector, the windows one 32-lane copy.
  te::Stage rows = s[padded_rows];
  Array<IterVar> row_axes = rows->leaf_iter_vars;  // n, h, j
  rows.parallel(rows.fuse(row_axes[0], row_axes[1]));
  auto [row_vector, row_lane] = rows.split(row_axes[2], kLanes);
  rows.vectorize(row_lane);
  te::Stage o = s[out];
  Array<IterVar> axes = o->leaf_iter_vars;  // n, 1, h, q, 32
  o.parallel(o.fuse(o.fuse(axes[0], axes[1]), axes[2]));
  o.vectorize(axes[4]);
  return s;
}

te::Schedule schedule_conv2d_nchwc_amx(const te::Tensor& out, const Conv2DAttrs& attrs) {
  const std::string name = "schedule_conv2d_nchwc_amx";
  te::Operation conv = detail::FindAnchor(
      out, [](const te::Operation& op) { return op->tag == kConvTag || op->tag == kInt8ConvTag; },
      name, "a conv2d_nchwc_bf16 or conv2d_nchwc_amx_int8 output");
  const AmxProduct product = conv->tag == kConvTag ? AmxProduct::kBf16 : AmxProduct::kInt8;
  const int group = AmxGroup(product);
  detail::CheckEpilogueKeepsShape(out, conv, name);
  std::vector<int64_t> shape = ConstShape(te::Tensor(conv, 0), name);  // N, K/32, P, Q, 32
  Array<te::Tensor> inputs = conv->InputTensors();  // the (padded) data, the packed weight
  te::Tensor conv_data = inputs[0];
  std::vector<int64_t> w = ConstShape(inputs[1], name);  // K/32, C/32, R, S, 32/g, 32, g
  const AmxRowTiling tiling = ChooseAmxRowTiling(shape[3]);

  // The intrinsic: one register block (tiling.block() columns of one output row, 32
  // channels) over placeholders holding what the block reads: every input channel block,
  // the kernel's rows, and the columns of its windows.
  const bool padded = conv_data.ndim() == 4;
  const int64_t rows = (w[2] - 1) * attrs.dilations[0] + 1;
  const int64_t columns =
      (tiling.block() - 1) * attrs.strides[1] + (w[3] - 1) * attrs.dilations[1] + 1;
  Array<PrimExpr> a_shape{1, int(w[1]), int(rows)};
  if (padded)
    a_shape.push_back(int(columns * kDepth));
  else
    a_shape.push_back(int(columns)), a_shape.push_back(kDepth);
  te::Tensor a = te::placeholder(a_shape, conv_data.dtype(), "a");
  te::Tensor b = te::placeholder(
      {1, int(w[1]), int(w[2]), int(w[3]), kDepth / group, kBlock, group}, inputs[1].dtype(), "b");
  detail::PaddedInput a_input{a, kDepth, padded};
  ConvSum sum = MakeConvSum(a_input, b, attrs, product, w[1], w[2], w[3]);
  te::Tensor c = te::compute(
      {int(tiling.block()), kBlock}, [&](Var q, Var k) { return sum(0, 0, 0, q, k); }, "c");
  AmxBlock block;
  block.product = product;
  block.rows = tiling.rows;
  block.row_tiles = tiling.row_tiles;
  block.steps = {w[1], w[2], w[3]};
  block.a_index = [a_input, attrs](const Array<PrimExpr>& step, const PrimExpr& row) {
    return a_input.Index(0, step[0], step[1] * int(attrs.dilations[0]),
                         row * int(attrs.strides[1]) + step[2] * int(attrs.dilations[1]), 0);
  };
  block.b_index = [](const Array<PrimExpr>& step, const PrimExpr& group_row,
                     const PrimExpr& column) {
    return Array<PrimExpr>{0, step[0], step[1], step[2], group_row, column, 0};
  };
  block.c_index = [](const PrimExpr& row, const PrimExpr& column) {
    return Array<PrimExpr>{row, column};
  };
  te::TensorIntrin intrin = AmxTiles(c.op(), block);

  te::Schedule s = te::create_schedule({out.op()});
  detail::InlineInjective(s, {out.op(), conv_data.op()});
  te::Operation acc = detail::RegisterTile(s, out, conv).op();
  te::Stage o = s[out];
  Array<IterVar> axes = o->leaf_iter_vars;  // n, k, p, q, 32
  auto [column_block, block_column] = o.split(axes[3], int(tiling.block()));
  o.parallel(o.fuse(o.fuse(axes[0], axes[1]), axes[2]));
  VectorizeBlockColumns(o, axes[4]);
  te::Stage t = s[acc];
  t.compute_at(o, column_block);
  t.tensorize(t->leaf_iter_vars[3], intrin);
  if (padded) {
    // The padded copy in parallel rows, 32 values (one tile row) per vector.
    te::Stage pad = s[conv_data.op()];
    Array<IterVar> pad_axes = pad->leaf_iter_vars;  // n, c, h, w * 32
    pad.parallel(pad.fuse(pad.fuse(pad_axes[0], pad_axes[1]), pad_axes[2]));
    auto [pad_vector, pad_lane] = pad.split(pad_axes[3], kDepth);
    pad.vectorize(pad_lane);
  }
  return s;
}

namespace {

// data [..., M, K] times the packed weight in `product`'s types, tagged `tag`.
te::Tensor AmxDense(const te::Tensor& data, const te::Tensor& packed_weight, AmxProduct product,
                    const std::string& tag) {
  const std::string op = tag;
  const bool bf16 = product == AmxProduct::kBf16;
  const int group = AmxGroup(product);
  CheckType(data, bf16 ? DataType::BFloat16() : DataType::UInt(8), op, "data");
  CheckType(packed_weight, bf16 ? DataType::BFloat16() : DataType::Int(8), op, "weight");
  std::vector<int64_t> in = ConstShape(data, op), w = ConstShape(packed_weight, op);
  const int depth = DenseDepth(product);
  LOOM_CHECK_USER(in.size() >= 2 && w.size() == 5 && w[1] * depth == in.back() &&
                  w[2] == depth / group && w[3] == kBlock && w[4] == group)
      << op << ": data '" << data.name() << "' " << detail::ShapeText(in)
      << " must be [..., M, K] (K a multiple of " << depth << ") and the packed weight '"
      << packed_weight.name() << "' " << detail::ShapeText(w) << " [N/32, K/" << depth << ", "
      << depth / group << ", 32, " << group << "]";
  IterVar k = te::reduce_axis(Range(0, int(in.back())), "k");
  Array<PrimExpr> shape;
  for (size_t d = 0; d + 1 < in.size(); ++d) shape.push_back(int(in[d]));
  shape.push_back(int(w[0] * kBlock));
  return te::compute(
      shape,
      [&](const Array<Var>& i) {
        Array<PrimExpr> row(i.begin(), i.end() - 1);
        return DenseSum(data, packed_weight, k, row, i.back(), product);
      },
      op, tag);
}

}  // namespace

te::Tensor dense_bf16(const te::Tensor& data, const te::Tensor& packed_weight) {
  return AmxDense(data, packed_weight, AmxProduct::kBf16, kDenseTag);
}

te::Tensor dense_amx_int8(const te::Tensor& data, const te::Tensor& packed_weight) {
  return AmxDense(data, packed_weight, AmxProduct::kInt8, kInt8DenseTag);
}

te::Schedule schedule_dense_amx(const te::Tensor& out) {
  const std::string name = "schedule_dense_amx";
  te::Operation dense = detail::FindAnchor(
      out,
      [](const te::Operation& op) { return op->tag == kDenseTag || op->tag == kInt8DenseTag; },
      name, "a dense_bf16 or dense_amx_int8 output");
  const AmxProduct product = dense->tag == kDenseTag ? AmxProduct::kBf16 : AmxProduct::kInt8;
  const int group = AmxGroup(product);
  detail::CheckEpilogueKeepsShape(out, dense, name);
  std::vector<int64_t> shape = ConstShape(te::Tensor(dense, 0), name);  // ..., M, N
  const size_t leading = shape.size() - 2;                               // the "..."
  Array<te::Tensor> inputs = dense->InputTensors();  // data, packed weight
  std::vector<int64_t> packed = ConstShape(inputs[1], name);
  const int depth = DenseDepth(product);
  const int64_t K = packed[1] * depth;
  const AmxRowTiling tiling = ChooseAmxRowTiling(shape[leading]);

  // The intrinsic: one block of rows x 32 columns over the whole of K, of one index of the
  // leading dimensions.
  Array<PrimExpr> a_shape(leading, 1), zeros(leading, 0);
  a_shape.push_back(int(tiling.block()));
  a_shape.push_back(int(K));
  te::Tensor a = te::placeholder(a_shape, inputs[0].dtype(), "a");
  te::Tensor b = te::placeholder({1, int(K / depth), depth / group, kBlock, group},
                                 inputs[1].dtype(), "b");
  IterVar k = te::reduce_axis(Range(0, int(K)), "k");
  te::Tensor c = te::compute(
      {int(tiling.block()), kBlock},
      [&](Var i, Var j) {
        Array<PrimExpr> row = zeros;
        row.push_back(i);
        return DenseSum(a, b, k, row, j, product);
      },
      "c");
  AmxBlock block;
  block.product = product;
  block.rows = tiling.rows;
  block.row_tiles = tiling.row_tiles;
  block.depth = depth;
  block.steps = {K / depth};
  block.a_index = [zeros, depth](const Array<PrimExpr>& step, const PrimExpr& row) {
    Array<PrimExpr> index = zeros;
    index.push_back(row);
    index.push_back(step[0] * depth);
    return index;
  };
  block.b_index = [](const Array<PrimExpr>& step, const PrimExpr& group_row,
                     const PrimExpr& column) {
    return Array<PrimExpr>{0, step[0], group_row, column, 0};
  };
  block.c_index = [](const PrimExpr& row, const PrimExpr& column) {
    return Array<PrimExpr>{row, column};
  };
  te::TensorIntrin intrin = AmxTiles(c.op(), block);

  te::Schedule s = te::create_schedule({out.op()});
  detail::InlineInjective(s, {out.op()});
  te::Operation acc = detail::RegisterTile(s, out, dense).op();
  te::Stage o = s[out];
  Array<IterVar> axes = o->leaf_iter_vars;  // ..., i, j
  auto [row_block, block_row] = o.split(axes[leading], int(tiling.block()));
  auto [column_block, block_column] = o.split(axes[leading + 1], kBlock);
  Array<IterVar> order(axes.begin(), axes.begin() + static_cast<std::ptrdiff_t>(leading));
  for (const IterVar& axis : {column_block, row_block, block_row, block_column}) {
    order.push_back(axis);
  }
  o.reorder(order);
  IterVar task = column_block;
  for (size_t d = leading; d-- > 0;) task = o.fuse(axes[d], task);
  task = o.fuse(task, row_block);
  o.parallel(task);
  VectorizeBlockColumns(o, block_column);
  te::Stage t = s[acc];
  t.compute_at(o, task);
  t.tensorize(t->leaf_iter_vars[leading], intrin);
  return s;
}

}  // namespace loom::topi::x86
