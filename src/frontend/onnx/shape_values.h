// Shape arithmetic at import time over symbolic sizes. An exporter writes `x.view(b, n, 4,
// 16)` as Shape -> Gather -> Unsqueeze -> Concat -> Reshape; with the batch and sequence
// symbolic (ImportOptions::symbolic_dimensions) those values are size expressions, not
// constants. The importer evaluates such nodes here, keeps their results as ShapeValues
// (a result whose elements are all constant becomes an ordinary constant), and Reshape takes
// them as its shape.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "frontend/onnx/converter.h"

namespace loom::frontend::onnx {

// The outputs of `ctx`'s node evaluated over shape values, when it is shape arithmetic
// (Shape, Size, Gather, Unsqueeze, Squeeze, Concat, Slice, Cast, Identity, Add, Sub, Mul,
// Div, Min, Max, Equal, Where) whose inputs are all shape values (or constants of rank 0 or
// 1); nullopt otherwise, and the node's converter then sees its inputs as graph values.
std::optional<std::vector<ShapeValue>> EvaluateShapeArithmetic(const NodeContext& ctx);

// The dimension of `*like` that element k of `value` is, or -1. When `*like` is undefined,
// it becomes the tensor element k came from (its origin), if known.
int64_t DimensionOfOrigin(const ShapeValue& value, size_t k, graph::Expr* like);

// "[batch, seq * 64]"
std::string ShapeValueText(const ShapeValue& value);

// Where a run finds a size variable: a tensor that has it as dimension `dim`.
struct SizeSource {
  graph::Expr tensor;
  int64_t dim = -1;
};
using FindSizeSource = std::function<std::optional<SizeSource>(const loom::VarNode* var)>;

// `value` as a tensor a run computes (where a shape value meets a tensor of the model's
// data, which needs a graph value): each size variable read from the shape of a tensor
// `find` gives (graph operator shape_of), the size arithmetic done by graph operators, the
// elements concatenated and cast to value's dtype. Calls are named `name`.k. A loom::Error
// when a variable has no source or the arithmetic has no graph operator.
graph::Expr ShapeValueTensor(const ShapeValue& value, const FindSizeSource& find,
                             const std::string& name);

}  // namespace loom::frontend::onnx
