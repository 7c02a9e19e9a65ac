// Shape arithmetic at import time over symbolic sizes. An exporter writes `x.view(b, n, 4,
// 16)` as Shape -> Gather -> Unsqueeze -> Concat -> Reshape; with the batch and sequence
// symbolic (ImportOptions::symbolic_dimensions) those values are size expressions, not
// constants. The importer evaluates such nodes here, keeps their results as ShapeValues
// (a result whose elements are all constant becomes an ordinary constant), and Reshape takes
// them as its shape.
#pragma once

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

}  // namespace loom::frontend::onnx
