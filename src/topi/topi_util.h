// Helpers shared by the operator library's sources (axes, shapes, index arithmetic).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "loom/te/operation.h"

namespace loom::topi::detail {

// The tag schedule_injective inlines and schedules.
inline constexpr const char* kInjective = "injective";

// `axis` in [-rank, rank) as an index in [0, rank), or a loom::Error naming `op` and `x`.
int NormalizeAxis(int64_t axis, int64_t rank, const std::string& op, const te::Tensor& x);

// x's dimension sizes, which must be constant for `op` (loom::Error otherwise).
std::vector<int64_t> ConstShape(const te::Tensor& x, const std::string& op);

// The integer type of x's shape, in which new dimensions and index arithmetic are built
// (so that the axis variables of x's consumers share one type).
DataType IndexType(const te::Tensor& x);

// The index in `shape` of row-major flat position `flat` (in flat's type).
Array<PrimExpr> Unravel(PrimExpr flat, const Array<PrimExpr>& shape);

// `index` clamped into [0, extent - 1]. Both operands of a select are evaluated (vector
// code reads both), so the index read by a branch not taken must stay inside its tensor.
PrimExpr ClampIndex(const PrimExpr& index, const PrimExpr& extent);

// "(2, 3, n)".
std::string ShapeText(const Array<PrimExpr>& shape);
std::string ShapeText(const std::vector<int64_t>& shape);

}  // namespace loom::topi::detail
