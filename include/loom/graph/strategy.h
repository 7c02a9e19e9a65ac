// Operator strategies: for each graph operator and target key, the implementations that
// schedule it there, and the layout rewrites its kernels there prefer. graph/ holds the
// tables and the generic implementations (each operator's own schedule, for every target);
// what is specific to a processor registers from src/strategy/<key>/ (x86: the AVX-512
// blocked convolutions and GEMMs) and is chosen by the target's keys (Target::keys), so no
// file in graph/ names a processor.
//
//   RegisterImplementation("nn.dense", "x86",
//       {.name = "x86.dense_register_tiled", .priority = 10,
//        .applies = [](const CallInfo& c, const Tensors& outs, const Target& t) { ... },
//        .schedule = ...});
//   RegisterLayoutRewrite("nn.conv2d", "x86", RewriteConv2DToBlocked);
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "loom/graph/expr.h"
#include "loom/graph/op.h"
#include "loom/graph/transform.h"
#include "loom/target/target.h"

namespace loom::graph {

// One way to schedule an operator's group on targets with a key.
struct OpImplementation {
  std::string name;   // "x86.batch_matmul": what dumps and errors call it
  int priority = 0;   // the highest applicable wins; the generic schedule is below all
  // Whether it takes this group (the master call, the group's outputs) on this target:
  // shapes it has kernels for, a CPU feature, ...
  std::function<bool(const CallInfo& master, const std::vector<te::Tensor>& outputs,
                     const Target& target)>
      applies;
  ScheduleFn schedule;
  // How the schedule becomes loop IR: te::lower when unset. A device's implementation whose
  // code is lowered by passes of its own (VTA's) sets it. For a device target, a group that
  // an implementation under the device's keys takes runs on the device; the others run on
  // the target's host.
  std::function<PrimFunc(const te::Schedule& schedule, const Array<te::Tensor>& args,
                         const std::string& name, const Target& target)>
      lower = nullptr;
};

// A call rewritten into the layout a target's kernels prefer (AlterOpLayout): the new
// expression, and the layout its value holds the original call's tensor in ("NCHW16c"; ""
// for a tensor in the original's own layout).
struct LayoutRewrite {
  Expr expr;
  std::string layout;
};

// What a layout rewrite asks AlterOpLayout for: the call's operands, converted.
class LayoutRewriteContext {
 public:
  virtual ~LayoutRewriteContext() = default;
  // Operand `index` of the call in `layout` (one layout_transform at most, shared by every
  // consumer); "" for the layout the original graph gave it.
  virtual Expr Operand(size_t index, const std::string& layout) = 0;
  // The layout operand `index` has as its producer's rewrite left it (the original graph's,
  // "NCHW" for a 4-d tensor, where no rewrite changed it): a rewrite free to choose may take
  // it and save a conversion.
  virtual std::string OperandLayout(size_t index) = 0;
};

using LayoutRewriteFn = std::function<std::optional<LayoutRewrite>(
    const CallNode& call, LayoutRewriteContext& context, const Target& target)>;

void RegisterImplementation(const std::string& op, const std::string& target_key,
                            OpImplementation implementation);
// An implementation for every operator on targets with `target_key`, taken when none
// registered for the operator itself applies: a GPU's generic schedule (a device runs no
// schedule written for a CPU).
void RegisterFallbackImplementation(const std::string& target_key,
                                    OpImplementation implementation);

// A graph rewrite that targets with a key add to the compile, made for the target: VTA's
// graph packing, which moves the convolutions it can run into its layouts and operators.
// Compile runs them after the layouts are altered and the constants folded, before fusion.
using TargetGraphPassFn = std::function<Pass(const Target& target)>;
void RegisterTargetGraphPass(const std::string& target_key, TargetGraphPassFn make);
// The passes registered under `target`'s keys, in registration order.
std::vector<Pass> TargetGraphPasses(const Target& target);

// Where a target's graph pass placed a layer: on the device, or on the host and why. Compile
// records them in the compiled model (`loom inspect` lists them).
struct LayerPlacement {
  std::string layer;   // the layer's name
  std::string device;  // "vta", "host"
  std::string reason;  // why not on the device; empty when on it
};
// Records a placement for the compile running on this thread.
void RecordPlacement(LayerPlacement placement);
// The placements recorded on this thread since the last call (which it takes).
std::vector<LayerPlacement> TakePlacements();
// Which calls a layout rewrite is offered: those whose operand and result shapes are all
// constant (the targets' kernels are chosen and packed at constant sizes), or also those of
// symbolic sizes (a rewrite that reads the sizes it needs and declines the rest).
enum class RewriteShapes : uint8_t { kConstant, kSymbolicToo };
void RegisterLayoutRewrite(const std::string& op, const std::string& target_key,
                           LayoutRewriteFn rewrite,
                           RewriteShapes shapes = RewriteShapes::kConstant);

// The implementation that schedules a group on `target`: the highest-priority applicable one
// registered under any of its keys for the master's operator, else an applicable fallback of
// a key; none when only the generic schedule applies.
const OpImplementation* SelectImplementation(const CallInfo& master,
                                             const std::vector<te::Tensor>& outputs,
                                             const Target& target);
// The layout rewrites of `op` for `target`'s keys, most specific key first; for a call of
// symbolic sizes (`symbolic`), those registered for RewriteShapes::kSymbolicToo only.
std::vector<LayoutRewriteFn> LayoutRewrites(const std::string& op, const Target& target,
                                            bool symbolic = false);
// Whether any operator has a layout rewrite for `target` (else AlterOpLayout does nothing).
bool HasLayoutRewrites(const Target& target);

// Whether `target` multiplies operands of `half` (bfloat16, float16) natively (kernels for
// conv2d, dense and matmul with such operands and float32 sums): what a target key registers,
// as x86 does for bfloat16 on CPUs with AMX or AVX-512 BF16 and the gpu key for the types its
// target has tensor cores for. Elsewhere --precision bf16 / fp16 computes by conversion
// (ToHalfPrecisionProducts).
using TargetPredicate = std::function<bool(const Target& target)>;
void RegisterHalfPrecisionProducts(const std::string& target_key, DataType half,
                                   TargetPredicate has_kernels);
bool HasHalfPrecisionProducts(const Target& target, DataType half);

// Whether `target` has an integer kernel for `product`, an integer product FoldQuantizedProducts
// makes only where one exists: a grouped qnn.conv2d, or a qnn.matmul of two activations (the
// generic integer schedules of those lose to the float kernels). What a target key
// registers, as x86 does for depthwise convolutions (AVX-512 VNNI and VBMI) and batched
// products (VNNI).
using IntegerKernelPredicate =
    std::function<bool(const CallNode& product, const Target& target)>;
void RegisterIntegerKernel(const std::string& target_key, IntegerKernelPredicate has_kernel);
bool HasIntegerKernel(const CallNode& product, const Target& target);

// The data layout of 4-d tensors with channels in blocks of `block`: "NCHW" for 0,
// "NCHW<block>c" otherwise; and back (none for any other layout name).
std::string BlockedDataLayout(int64_t block);
std::optional<int64_t> DataLayoutBlock(const std::string& layout);

}  // namespace loom::graph
