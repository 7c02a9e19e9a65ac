// Graph passes: each a named module-to-module function in its own file under
// src/graph/transforms/, run in sequence by RunPasses under the current PassContext, the one
// TIR passes run under too (loom/ir/pass_context.h): a pass above its opt_level or named in
// disabled_passes is skipped, its instruments see every pass, LOOM_DUMP_IR and
// LOOM_TIME_PASSES show each step.
// The pipeline per optimization level reads top to bottom in src/graph/compile.cc.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "loom/graph/module.h"
#include "loom/target/target.h"

namespace loom::graph {

struct Pass {
  std::string name;
  std::function<IRModule(const IRModule&)> run;
  int opt_level = 0;  // the context's opt_level it needs
};

// `pass`, run only when the context's opt_level is at least `opt_level`.
Pass AtLevel(int opt_level, Pass pass);

IRModule RunPasses(const IRModule& module, const std::vector<Pass>& passes);

// float16 and bfloat16 operands are widened to float32 and 16-bit results rounded back, so a
// model stored in 16-bit floats computes in float32 (cast and tuple-result operators stay as
// they are).
Pass WidenFloat16();
// batch_norm (inference) becomes a per-channel scale and shift; dropout and identity-like
// operators disappear.
Pass SimplifyInference();
// Max pooling of a dequantized tensor pools its integers and dequantizes after.
Pass CommuteDequantize();
// An elementwise function of one 8-bit tensor that calls a transcendental operator (a QDQ
// model's GELU) becomes a lookup in a table of its 256 values, which FoldConstant computes.
Pass TabulateByteFunctions();
// A conv2d or dense layer of dequantized 8-bit operands (QDQ models) becomes the integer
// product (qnn.conv2d, qnn.dense) times one float scale per output channel. A grouped
// convolution, and a matmul of two dequantized activations (attention; qnn.matmul), do
// where `has_kernel` holds for the integer call (the target has an integer kernel for it:
// HasIntegerKernel); with none, they stay float.
using IntegerKernelOf = std::function<bool(const CallNode& product)>;
Pass FoldQuantizedProducts(IntegerKernelOf has_kernel = nullptr);
// --precision bf16 / fp16: conv2d (groups 1) and dense layers with constant weights, and
// matmuls of two activations, multiply operands of `half` (bfloat16 or float16) and sum in
// float32 (out_dtype), but for those reaching a model output through elementwise operators
// only (the logits). Without `units` (the target's kernels for such products) the operands
// are rounded to `half` and back and the products stay float32.
Pass ToHalfPrecisionProducts(DataType half, bool units);
// Calls whose inputs are all constants become constants, computed by compiling and running
// them with Loom itself on `target`'s CPU.
Pass FoldConstant(const Target& target);
// A per-channel multiply after (or before) conv2d / dense folds into its weights.
Pass FoldScaleAxis();
// Calls of one operator with equal attributes on the same arguments become one.
Pass EliminateCommonSubexpr();
// Removes what the outputs do not depend on (unused tuple fields included).
Pass DeadCodeElimination();
// conv2d and its neighbours to the blocked NCHW[x]c layouts chosen per layer, with layout
// transforms only at the boundaries (pairs that meet cancel).
Pass AlterOpLayout(const Target& target);
// main with the named size variables of its inputs fixed (seq = 128) and every type after
// them recomputed: how the compiler specializes a model for a bucket. A name that is no
// symbolic dimension of an input, or a value below 1, is a loom::Error.
Pass BindSizeVars(std::map<std::string, int64_t> sizes);
// Groups operators into primitive functions by the TVM paper's rules (post-dominator
// analysis), at most `max_group_size` operators per group.
Pass FuseOps(int max_group_size = 256);

}  // namespace loom::graph
