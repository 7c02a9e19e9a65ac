// Winograd F(4x4, 3x3)'s transforms and operand checks, shared by the x86 (blocked NCHWc)
// and GPU (NCHW) convolutions. Private to src/topi.
//
// Every transform is written row by row with only the non-zero entries of its matrix: the
// row is chosen by a select on an axis that the schedule unrolls, so once the loop is
// unrolled the select folds and each transform point costs only its own few adds.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "loom/ir/expr_ops.h"
#include "loom/te/tensor.h"
#include "loom/topi/nn.h"

namespace loom::topi::detail::winograd {

constexpr int kTileSize = 4;   // output positions per tile side
constexpr int kInputTile = 6;  // input positions per tile side (kTileSize + 3 - 1)
constexpr int kPoints = 6;     // transform points per side

// B^T: transform point x input position (points 0, 1, -1, 2, -2, infinity).
constexpr double kDataTransform[kPoints][kInputTile] = {
    {4, 0, -5, 0, 1, 0},  {0, -4, -4, 1, 1, 0}, {0, 4, -4, -1, 1, 0},
    {0, -2, -1, 2, 1, 0}, {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1},
};
// G: transform point x kernel position.
constexpr double kWeightTransform[kPoints][3] = {
    {1.0 / 4, 0, 0},
    {-1.0 / 6, -1.0 / 6, -1.0 / 6},
    {-1.0 / 6, 1.0 / 6, -1.0 / 6},
    {1.0 / 24, 1.0 / 12, 1.0 / 6},
    {1.0 / 24, -1.0 / 12, 1.0 / 6},
    {0, 0, 1},
};
// A^T: output position x transform point.
constexpr double kOutputTransform[kTileSize][kPoints] = {
    {1, 1, 1, 1, 1, 0},
    {0, 1, -1, 2, -2, 0},
    {0, 1, 1, 4, 4, 0},
    {0, 1, -1, 8, -8, 1},
};

// sum_j matrix[row][j] * term(j) over the non-zero entries of the row selected by `row`
// (+-1 as additions and subtractions), as a select over the rows.
template <int Rows, int Columns>
PrimExpr CombineRow(const double (&matrix)[Rows][Columns], const PrimExpr& row,
                    const std::function<PrimExpr(int)>& term) {
  PrimExpr chosen;
  for (int r = Rows - 1; r >= 0; --r) {
    PrimExpr total;
    for (int j = 0; j < Columns; ++j) {
      double coefficient = matrix[r][j];
      if (coefficient == 0) continue;
      PrimExpr value = term(j);
      if (!total.defined()) {
        total = coefficient == 1 ? value : value * make_const(value.dtype(), coefficient);
      } else if (coefficient == 1) {
        total = total + value;
      } else if (coefficient == -1) {
        total = total - value;
      } else {
        total = total + value * make_const(value.dtype(), coefficient);
      }
    }
    chosen = chosen.defined() ? select(row == r, total, chosen) : total;
  }
  return chosen;
}

// matrix[row][column] for symbolic indices (the weight transform, which runs once per model
// and is not unrolled).
template <int Rows, int Columns>
PrimExpr Entry(const double (&matrix)[Rows][Columns], const PrimExpr& row, int column) {
  PrimExpr value = make_const(DataType::Float(32), matrix[Rows - 1][column]);
  for (int r = Rows - 2; r >= 0; --r) {
    value = select(row == r, make_const(DataType::Float(32), matrix[r][column]), value);
  }
  return value;
}

// (G g G^T)[row_point][column_point] of the 3x3 kernel whose tap (r, s) is `tap(r, s)`, for
// symbolic points (the weight transform, which runs once per model and is not unrolled).
inline PrimExpr WeightTransformPoint(const PrimExpr& row_point, const PrimExpr& column_point,
                                     const std::function<PrimExpr(int, int)>& tap) {
  PrimExpr total;
  for (int r = 0; r < 3; ++r) {
    for (int s = 0; s < 3; ++s) {
      PrimExpr term = Entry(kWeightTransform, row_point, r) *
                      Entry(kWeightTransform, column_point, s) * tap(r, s);
      total = total.defined() ? total + term : term;
    }
  }
  return total;
}

// The shape of `weight`, a float32 [K, C, 3, 3]; a loom::Error naming `op` otherwise.
std::vector<int64_t> CheckedWeightShape(const te::Tensor& weight, const std::string& op);
// A loom::Error naming `op` unless `attrs` have stride 1, dilation 1 and groups 1.
void CheckUnitStrideWindow(const Conv2DAttrs& attrs, const std::string& op);
// The input of stage `t` named `name` (the stages of one Winograd convolution, found from its
// output).
te::Tensor InputNamed(const te::Tensor& t, const std::string& name);

}  // namespace loom::topi::detail::winograd
