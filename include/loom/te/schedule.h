// Schedules: the "how" of a tensor expression, recorded as data on one Stage per operation
// and interpreted by lowering (bound inference, then loop-nest construction).
//
//   Schedule s = create_schedule({C.op()});
//   auto [io, ii] = s[C].split(s[C]->leaf_iter_vars[0], 8);
//   s[C].vectorize(ii);
//   s[B].compute_at(s[C], io);
//
// A stage starts with its operation's axes (then its reduction axes) as leaf iteration
// variables; split and fuse replace leaves by new ones and record a relation, reorder
// permutes leaves, and the other primitives annotate leaves or move the stage. An invalid
// request is a loom::Error naming the stage, the primitive and the reason.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <variant>

#include "loom/te/operation.h"
#include "loom/te/tensor_intrin.h"

namespace loom::te {

// parent = outer * factor + inner (+ parent's start). Exactly one of factor / nparts was given.
struct SplitRelation {
  IterVar parent, outer, inner;
  PrimExpr factor, nparts;
};
// fused = outer * extent(inner) + inner.
struct FuseRelation {
  IterVar outer, inner, fused;
};
using IterVarRelation = std::variant<SplitRelation, FuseRelation>;

enum class AttachType : uint8_t {
  kRoot,    // loops at the top level of the function
  kInline,  // no loops: the body is substituted into its consumers
  kScope,   // loops inside the loop attach_ivar of attach_stage
};

// How a leaf loop is emitted.
struct IterVarAttr {
  ForKind for_kind = ForKind::kSerial;
  IterVar bind_thread;  // set when for_kind is kThreadBinding
  Array<std::pair<std::string, PrimExpr>> pragmas;
  // Set by tensorize: this loop and those inside it become the intrinsic's statements.
  TensorIntrin tensor_intrin;
};

struct StageNode;
class Stage {
 public:
  Stage() = default;
  explicit Stage(std::shared_ptr<StageNode> node) : node_(std::move(node)) {}
  StageNode* operator->() const { return node_.get(); }
  StageNode& operator*() const { return *node_; }
  bool defined() const { return node_ != nullptr; }
  bool same_as(const Stage& other) const { return node_ == other.node_; }

  std::pair<IterVar, IterVar> split(const IterVar& parent, PrimExpr factor);
  std::pair<IterVar, IterVar> split_by_nparts(const IterVar& parent, PrimExpr nparts);
  // Splits x and y and orders the loops x.outer, y.outer, x.inner, y.inner (returned so).
  std::array<IterVar, 4> tile(IterVar x, IterVar y, PrimExpr x_factor, PrimExpr y_factor);
  // Fuses two adjacent leaves, outer directly before inner.
  IterVar fuse(const IterVar& outer, const IterVar& inner);
  // Puts the given leaves in this order, in the positions they occupied.
  void reorder(const Array<IterVar>& order);
  void compute_at(const Stage& parent, const IterVar& scope);
  void compute_inline();
  void compute_root();
  void vectorize(const IterVar& var);
  void unroll(const IterVar& var);
  void parallel(const IterVar& var);
  void pragma(const IterVar& var, const std::string& key, PrimExpr value = PrimExpr(1));
  // Maps a leaf onto a thread axis made by thread_axis().
  void bind(const IterVar& var, const IterVar& thread);
  // Allocates the stage's buffer in storage scope `scope` ("global", "shared", "local",
  // "local.acc_buffer", ...); the Allocate of the lowered function carries it.
  void set_scope(const std::string& scope);
  // Pads the stride of `axis`'s dimension (an axis of the stage's operation) of the stage's
  // buffer to the next value equal to offset modulo factor when buffers are flattened, e.g.
  // to keep rows of a cache off the same memory bank. Needs 0 <= offset < factor.
  void storage_align(const IterVar& axis, int64_t factor, int64_t offset);
  // Allocates the stage's buffer twice so that the loop it is attached in (compute_at)
  // fills the next iteration's copy while this iteration's is read (software pipelining).
  void double_buffer();
  // Replaces the loop `var` and every loop inside it by `intrin`'s statements, bound to the
  // tile of the stage's tensors those loops cover (src/te/tensorize.cc). Checked at lower():
  // the loops must compute exactly the intrinsic's compute.
  void tensorize(const IterVar& var, TensorIntrin intrin);

 private:
  std::shared_ptr<StageNode> node_;
};

struct StageNode {
  // What the stage computes. cache_read, cache_write and rfactor may replace it by an
  // operation writing the same buffers (so every tensor keeps its storage and its readers).
  Operation op;
  // The operation the stage was created for, which user code still holds: schedule[] finds
  // the stage by either, and it keeps the buffers registered as tensors.
  Operation origin_op;
  // The axes and reduction axes of op; never changes.
  Array<IterVar> root_iter_vars;
  // Every iteration variable of the stage, roots and those made by relations.
  Array<IterVar> all_iter_vars;
  // The loops, outermost first.
  Array<IterVar> leaf_iter_vars;
  Array<IterVarRelation> relations;
  AttachType attach_type = AttachType::kRoot;
  IterVar attach_ivar;
  Stage attach_stage;
  // Keyed by the IterVar's node.
  std::map<const Object*, IterVarAttr> iter_var_attrs;
  bool is_output = false;
  // Where an intermediate result is allocated; outputs and arguments live in their buffers.
  std::string scope = "global";
  // storage_align requests, one per dimension of the stage's buffer at most.
  struct StorageAlignment {
    int dim;
    int64_t factor, offset;
  };
  Array<StorageAlignment> storage_alignments;
  bool double_buffered = false;

  const std::string& name() const { return op->name; }
  bool IsLeaf(const IterVar& iv) const;
  // Where iv sits in leaf_iter_vars, or -1.
  int LeafIndex(const IterVar& iv) const;
  const IterVarAttr* Attr(const IterVar& iv) const;
};

class Schedule {
 public:
  Schedule();
  // Stages in post-order of the operation graph (producers before consumers).
  const Array<Stage>& stages() const { return state_->stages; }
  const Array<Operation>& outputs() const { return state_->outputs; }
  // The stage of an operation of the schedule (or of an operation the schedule replaced,
  // found by the buffers they share); loom::Error when it is not one.
  Stage operator[](const Operation& op) const;
  Stage operator[](const Tensor& tensor) const { return (*this)[tensor.op()]; }

  // A new stage copying `tensor` into a buffer of storage scope `scope` (named
  // "<tensor>.<scope>"); each of `readers` (operations of the schedule that read `tensor`)
  // reads the copy instead. Returns the copy.
  Tensor cache_read(const Tensor& tensor, const std::string& scope,
                    const Array<Operation>& readers);
  // A new stage computing `tensor`'s operation (all its outputs) into buffers of scope
  // `scope`; the original stage becomes a copy from it, so a reduction moves into the cache.
  // Call it before scheduling the stage's loops. Returns the cache of `tensor`.
  Tensor cache_write(const Tensor& tensor, const std::string& scope);
  // Splits a reduction into partial reductions: the reduction leaf `axis` of `tensor`'s stage
  // becomes a data-parallel axis (at position factor_axis) of a new tensor holding the
  // partial results over the stage's other reduction loops, and the stage then reduces that
  // tensor over `axis`. The stage's loops start over from its root axes. Returns the new
  // tensor (of `tensor`'s output for a tuple reduction).
  Tensor rfactor(const Tensor& tensor, const IterVar& axis, int factor_axis = 0);

 private:
  friend Schedule create_schedule(const Array<Operation>& outputs);
  // Shared by copies, like the stages, so that a primitive adding stages is seen by all.
  struct State {
    Array<Operation> outputs;
    Array<Stage> stages;
  };
  std::shared_ptr<State> state_;
};

// One stage per operation reachable from `outputs`.
Schedule create_schedule(const Array<Operation>& outputs);

// A thread axis to bind loops to: "blockIdx.x", "threadIdx.y", "vthread", ...
IterVar thread_axis(const std::string& tag);

}  // namespace loom::te
