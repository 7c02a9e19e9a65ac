// The zero-padded input of the blocked convolutions (conv2d_nchwc.cc, conv2d_bf16.cc).
#pragma once

#include <array>

#include "loom/topi/nn.h"
#include "topi/topi_util.h"

namespace loom::topi::x86::detail {

using namespace loom::topi::detail;

// The zero-padded input of a blocked convolution, read as data(n, c, row, column, lane).
// Padded, it is a tensor [N, c, H + pads, (W + pads) * bn]: a row's columns and their
// channels are one axis, which the schedule fills 16 floats at a time whatever the block
// (a 3-channel block alone would not vectorize, and its scalar copy had cost a third of the
// 3-channel stem's time). Its bounds tests are likely(): LoopPartition peels the border rows
// and columns off the loops that fill it, and the interior is a plain vector copy.
struct PaddedInput {
  te::Tensor tensor;  // the data itself where nothing is padded
  int64_t block = 0;
  bool padded = false;
  bool columns_and_lanes_one_axis = true;  // else padded as [N, c, H', W', bn]

  PrimExpr operator()(PrimExpr n, PrimExpr c, PrimExpr row, PrimExpr column, PrimExpr lane) const {
    return tensor(
        Index(std::move(n), std::move(c), std::move(row), std::move(column), std::move(lane)));
  }
  // The indices of that element in `tensor`.
  Array<PrimExpr> Index(PrimExpr n, PrimExpr c, PrimExpr row, PrimExpr column,
                        PrimExpr lane) const {
    if (!padded || !columns_and_lanes_one_axis) return {n, c, row, column, lane};
    return {n, c, row, column * int(block) + lane};
  }
};

inline PrimExpr Likely(PrimExpr test) {
  return call_intrin(DataType::Bool(), "likely", {std::move(test)});
}

// 0 <= row < rows and 0 <= column < columns, each bound likely() on its own: LoopPartition
// peels each one off the loop whose variable it tests.
inline PrimExpr LikelyInside(const PrimExpr& row, int64_t rows, const PrimExpr& column,
                             int64_t columns) {
  return Likely(row >= 0) && Likely(row < int(rows)) && Likely(column >= 0) &&
         Likely(column < int(columns));
}

inline bool HasPadding(const Conv2DAttrs& a) {
  return a.pads != std::array<int64_t, 4>{0, 0, 0, 0};
}

// `columns_and_lanes_one_axis` false keeps the blocked layout [N, c, H', W', bn]: a kernel
// that reads whole columns of a block at once (the int8 depthwise one) binds them as a tile.
inline PaddedInput PadSpatial(const te::Tensor& data, const Conv2DAttrs& a, int64_t pad_value = 0,
                              bool columns_and_lanes_one_axis = true) {
  std::vector<int64_t> in = detail::ConstShape(data, "pad");
  const int64_t bn = in[4];
  if (!HasPadding(a)) return {data, bn, false};
  const int64_t top = a.pads[0], left = a.pads[1];
  if (!columns_and_lanes_one_axis) {
    te::Tensor padded = te::compute(
        {int(in[0]), int(in[1]), int(in[2] + top + a.pads[2]), int(in[3] + left + a.pads[3]),
         int(bn)},
        [&](const Array<Var>& i) {
          PrimExpr row = i[2] - int(top), column = i[3] - int(left);
          return te::if_then_else(LikelyInside(row, in[2], column, in[3]),
                                  data(i[0], i[1], row, column, i[4]),
                                  make_const(data.dtype(), pad_value));
        },
        "pad", detail::kInjective);
    return {padded, bn, true, false};
  }
  te::Tensor padded = te::compute(
      {int(in[0]), int(in[1]), int(in[2] + top + a.pads[2]), int((in[3] + left + a.pads[3]) * bn)},
      [&](const Array<Var>& i) {
        PrimExpr row = i[2] - int(top), position = i[3] - int(left * bn);
        PrimExpr inside = LikelyInside(row, in[2], position, in[3] * bn);
        return te::if_then_else(
            inside, data(i[0], i[1], row, floordiv(position, int(bn)), floormod(position, int(bn))),
            make_const(data.dtype(), pad_value));
      },
      "pad", detail::kInjective);
  return {padded, bn, true};
}

}  // namespace loom::topi::x86::detail
