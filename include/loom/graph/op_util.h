// Helpers for registering graph operators, for graph/ops and for the operators a target's
// strategy adds (src/strategy/<key>/): common type relations, a type relation read off the
// operator's own topi compute, and attribute readers and checks whose errors name the call
// (CallInfo::where).
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "loom/graph/op.h"
#include "loom/topi/nn.h"
#include "loom/topi/transform.h"

namespace loom::graph {
struct CallNode;
}  // namespace loom::graph

namespace loom::graph::ops {

// NumPy broadcasting of every input's shape; all inputs share one dtype, the output's.
TypeRelationFn BroadcastInputs();

// Input i's name: the operator's, or "input<i>" for a variadic operator.
std::string InputName(const CallInfo& info, size_t i);

// Input `index` is a tensor of float type; a loom::Error naming the call otherwise.
void RequireFloatTensor(const CallInfo& info, int index);
// Input `index`'s rank is `rank`.
void RequireRank(const CallInfo& info, int index, int rank);
// Input `index`'s shape, which must be constant.
std::vector<int64_t> ConstInputShape(const CallInfo& info, int index);


// The TE shape of a tensor type: constant dimensions as int32 (TE's convention for constant
// shapes, which topi's reduction axes assume: Range(0, extent) is int32), symbolic ones as
// they are.
Array<PrimExpr> PlaceholderShape(const Type& type);

// Placeholders of the call's input types (PlaceholderShape), named after the operator's
// inputs ("input<i>" for a variadic operator), so that topi's messages name the graph inputs.
std::vector<te::Tensor> InputPlaceholders(const CallInfo& info);

// The output type of `compute` applied to placeholders of the inputs: a tuple type when
// `tuple_output` (split, even into one piece), else the one tensor's type. Constant
// dimensions become int64, as in types built from integers. The shape and dtype rules then
// live once, in the topi compute; a loom::Error it throws is rethrown naming the call and
// the input types (as is when it names the call already).
TypeRelationFn TypeFromCompute(ComputeFn compute, bool tuple_output = false);

// Registers `name` with its compute and the type relation derived from it.
OpBuilder RegisterComputedOp(const std::string& name, ComputeFn compute, bool tuple_output = false);

// The size variable named `name`, one object per name: a size the model computes at run
// time (dims_of_value's "size" attribute; the importer names each uniquely).
loom::Var DataDependentSize(const std::string& name);

// What a call of dims_of_value reads at run time: per element of its value, the size variable
// it becomes (its output's dimension at that position), and the bound each must not exceed
// (from its like input's type; undefined: none, a size is only at least 0).
struct ValueSizes {
  std::vector<loom::Var> vars;
  PrimExpr upper;
};
// nullopt for a call of any other operator.
std::optional<ValueSizes> ValueSizesOf(const CallNode& call);

// What a call of `loop` (an ONNX Loop run at run time, graph/ops/control.cc) runs: its
// arguments are the trip count, the condition, the `num_carried` carried values and the
// values the body captures; its results the carried values' last values, then the scan
// outputs, each [iterations, slice...].
struct LoopAttrs {
  std::string body;  // the body's function in the module
  int64_t num_carried = 0;
  int64_t max_iterations = 0;  // a run that would exceed it stops with an error
  loom::Var iterations;        // the iteration count, known when the loop ends
  std::vector<DataType> scan_dtypes;
  // Each scan output's slice; -1 for a dimension only a run knows (the first iteration's
  // slice gives it, the others must agree).
  std::vector<std::vector<int64_t>> scan_shapes;

  // Scan output j's shape: [iterations, slice...], a size variable of its own for each
  // dimension only a run knows.
  std::vector<PrimExpr> ScanShape(size_t j) const;
};
LoopAttrs LoopAttrsOf(const Attrs& attrs);
// The attributes of a loop call that runs `loop`.
Attrs LoopCallAttrs(const LoopAttrs& loop);
// nullopt for a call of any other operator.
std::optional<LoopAttrs> LoopOf(const CallNode& call);

// The schedule of a group of loop nests written as TIR (te::extern_op: topi/select.h,
// topi/shape_function.h): as written, no loops to transform.
te::Schedule ScheduleAsWritten(const CallInfo& info, const std::vector<te::Tensor>& outputs,
                               const Target& target);

// Attribute `attr` holding exactly N integers; a loom::Error naming the call otherwise.
template <size_t N>
std::array<int64_t, N> FixedInts(const CallInfo& info, const std::string& attr);
extern template std::array<int64_t, 1> FixedInts<1>(const CallInfo&, const std::string&);
extern template std::array<int64_t, 2> FixedInts<2>(const CallInfo&, const std::string&);
extern template std::array<int64_t, 4> FixedInts<4>(const CallInfo&, const std::string&);

// Integer attribute `attr` as an int (axes), a loom::Error naming the call when it does not
// fit.
int IntAttr(const CallInfo& info, const std::string& attr);
// Integer list attribute `attr` as ints (reduction axes).
std::vector<int> IntsAttr(const CallInfo& info, const std::string& attr);

// A 2-d convolution's strides, padding and dilation attributes (nn.conv2d and the blocked
// convolutions), with `groups`.
topi::Conv2DAttrs Conv2DAttrsOf(const CallInfo& info, int64_t groups);

// The attributes "strides", "padding" and "dilation" of the convolutions a target's layout
// rewrite makes (strides and dilation of 2, padding of 4), with their defaults.
OpBuilder& ConvAttrFields(OpBuilder& op);
// A convolution call's strides, padding and dilation, as those convolutions take them.
Attrs WindowAttrs(const CallNode& call);
// ONNX Resize's attributes of the resize operators (image.resize2d, image.resize_to): mode,
// coordinate_transformation_mode, nearest_mode, cubic_coeff_a, exclude_outside,
// extrapolation_value; the fields, with their defaults.
topi::ResizeAttrs ResizeAttrsOf(const CallInfo& info);
OpBuilder& ResizeAttrFields(OpBuilder& op);
// The operand, axes and keep_aspect_ratio_policy of a resize by run-time scales or sizes
// (resize_dims, image.resize_to); the fields.
topi::ResizeBy ResizeByOf(const CallInfo& info);
OpBuilder& ResizeByFields(OpBuilder& op);

// The sizes a dims_of_value output carries: its dimensions but the last (the empty one).
Array<PrimExpr> SizesOf(const CallInfo& info, const te::Tensor& sizes);

// String attribute `attr`, which must be one of `choices`; its index there.
size_t ChoiceAttr(const CallInfo& info, const std::string& attr,
                  const std::vector<std::string>& choices);

}  // namespace loom::graph::ops
