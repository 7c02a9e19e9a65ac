// Helpers shared by the operator library's sources (axes, shapes, index arithmetic).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "loom/te/operation.h"
#include "loom/te/schedule.h"
#include "loom/topi/nn.h"
#include "loom/topi/transform.h"

namespace loom::topi::detail {

// The tag schedule_injective inlines and schedules.
inline constexpr const char* kInjective = "injective";

// `axis` in [-rank, rank) as an index in [0, rank), or a loom::Error naming `op` and `x`.
int NormalizeAxis(int64_t axis, int64_t rank, const std::string& op, const te::Tensor& x);

// Whether `extent` is the constant `expected`.
inline bool IsConst(const PrimExpr& extent, int64_t expected) {
  int64_t value = 0;
  return IsConstInt(extent, &value) && value == expected;
}

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

// float32 lanes of an AVX-512 register: the vector of the x86 kernels (topi/x86), which are
// AVX-512 code. The generic schedules take the target's width instead (schedule.h).
inline constexpr int kAvx512Lanes = 16;

// Whether a dimension is the constant 1.
bool IsUnitExtent(const PrimExpr& extent);
// Whether two dimensions are equal: equal constants, or the same expression.
bool SameExtent(const PrimExpr& a, const PrimExpr& b);
// The index of an operand of `shape` broadcast to the output dimensions indexed by `out`:
// right-aligned, a dimension of extent 1 reading element 0.
Array<PrimExpr> BroadcastIndex(const Array<PrimExpr>& shape, const Array<PrimExpr>& out);

// Where ONNX Slice reads along one dimension of `extent` (int64): from `first`, every
// `step`, `count` elements; `bad` holds where the slice is not one (a step of 0).
struct SliceBounds {
  PrimExpr first, step, count, bad;
};
// The bounds along dimension d of a tensor of rank `rank` from the k sliced axes' starts,
// ends, axes and steps as int64 values (`value(operand, j)`, operand 0 to 3, j < k): a
// dimension no axis names is taken whole. Negative starts and ends count from the end, then
// clamp to [0, extent] going forward or [-1, extent - 1] going backward.
SliceBounds SliceAlong(int64_t d, int64_t rank, const PrimExpr& extent, int64_t k,
                       const std::function<PrimExpr(int operand, int64_t j)>& value);

// ONNX Resize's scale of each of the `rank` dimensions (float64; 1 where by.axes does not
// list one) from the operand's float64 values `value(j)` (j < by.axes.size()) and the input's
// extents `extent(d)`: a listed scale as given, or a size's ratio to the extent (under an
// aspect policy, the smallest or largest ratio for every listed axis).
Array<PrimExpr> ResizeScales(int64_t rank, const ResizeBy& by,
                             const std::function<PrimExpr(int64_t j)>& value,
                             const std::function<PrimExpr(int64_t d)>& extent);

// A loom::Error naming `op` unless x has a float type.
void CheckFloat(const te::Tensor& x, const std::string& op);

// A compute the generic schedules inline into its consumers (tags "elemwise", "broadcast",
// "injective").
bool IsInjective(const te::Operation& op);
// Inlines every injective stage of `s` that is not one of `outputs`, nor one `keep` accepts.
void InlineInjective(const te::Schedule& s, const Array<te::Operation>& outputs,
                     const std::function<bool(const te::Operation&)>& keep = {});

// The anchor operation (a convolution, a matrix product) that `out` is, or that `out` is
// computed from through injective stages only, found depth first: `out` itself must be the
// anchor or injective. A loom::Error naming `schedule` and `anchor_description` ("the
// output of dense_packed") otherwise, or when no injective path reaches an anchor.
te::Operation FindAnchor(const te::Tensor& out,
                         const std::function<bool(const te::Operation&)>& is_anchor,
                         const std::string& schedule, const std::string& anchor_description);
// A loom::Error naming `schedule` unless the epilogue `out` has the shape of `anchor`'s
// output (what a schedule computing the epilogue on the anchor's tiles needs).
void CheckEpilogueKeepsShape(const te::Tensor& out, const te::Operation& anchor,
                             const std::string& schedule);
// The register tile of a schedule computing `anchor` under the elementwise epilogue `out`:
// a local cache of `out` when it is the anchor, else the anchor itself in local scope (the
// epilogue then runs on each tile as it is stored).
te::Tensor RegisterTile(te::Schedule& s, const te::Tensor& out, const te::Operation& anchor);

// zmm registers a GEMM register tile's accumulators may take: the weight vectors of one k
// step and the broadcast of the other operand need the rest of the 32.
inline constexpr int64_t kMaxTileRegisters = 28;
// A loom::Error naming `op` and the config text unless a tile of rows x columns
// accumulators (columns a multiple of kAvx512Lanes) fits in kMaxTileRegisters.
void CheckRegisterTile(int64_t rows, int64_t columns, const std::string& op,
                       const std::string& config);

// ceil(a / b) for a >= 0 and b > 0.
int64_t CeilDiv(int64_t a, int64_t b);
// The largest divisor of `n` that is at most `limit` (1 at least).
int64_t LargestDivisorUpTo(int64_t n, int64_t limit);

// The output rows and columns of a 2-d convolution of an h x w input with an r x s kernel
// (ONNX Conv's arithmetic), after checking for `op` that strides and dilations are positive,
// pads non-negative and the dilated kernel fits the padded input (loom::Error otherwise).
struct Conv2DOutputSize {
  int64_t p, q;
};
Conv2DOutputSize CheckedConv2DOutputSize(const std::string& op, int64_t h, int64_t w, int64_t r,
                                         int64_t s, const Conv2DAttrs& attrs);

// "(2, 3, n)".
std::string ShapeText(const Array<PrimExpr>& shape);
std::string ShapeText(const std::vector<int64_t>& shape);

}  // namespace loom::topi::detail
