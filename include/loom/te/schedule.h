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

 private:
  std::shared_ptr<StageNode> node_;
};

struct StageNode {
  Operation op;
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

  const std::string& name() const { return op->name; }
  bool IsLeaf(const IterVar& iv) const;
  // Where iv sits in leaf_iter_vars, or -1.
  int LeafIndex(const IterVar& iv) const;
  const IterVarAttr* Attr(const IterVar& iv) const;
};

class Schedule {
 public:
  Schedule() = default;
  // Stages in post-order of the operation graph (producers before consumers).
  const Array<Stage>& stages() const { return stages_; }
  const Array<Operation>& outputs() const { return outputs_; }
  // The stage of an operation of the schedule; loom::Error when it is not one.
  Stage operator[](const Operation& op) const;
  Stage operator[](const Tensor& tensor) const { return (*this)[tensor.op()]; }

 private:
  friend Schedule create_schedule(const Array<Operation>& outputs);
  Array<Operation> outputs_;
  Array<Stage> stages_;
};

// One stage per operation reachable from `outputs`.
Schedule create_schedule(const Array<Operation>& outputs);

// A thread axis to bind loops to: "blockIdx.x", "threadIdx.y", "vthread", ...
IterVar thread_axis(const std::string& tag);

}  // namespace loom::te
