// LoopPartition: splits a loop's iteration space where the boundary checks of non-divisible
// splits are decided. For a loop over v, the candidates are the conjuncts of if conditions
// in its body of the form likely(a < b) (also <=, >, >=) whose value depends on v, reads no
// memory, and mentions besides v only variables defined outside the loop and variables of
// inner loops whose bounds do not depend on v. Each candidate is linear in v with a constant
// coefficient c (else it is skipped): written f = c * v + g >= 0, it holds for every inner
// iteration exactly when c * v + min(g) >= 0, min(g) taken over the inner loops' ranges, so
// it holds on a half-line of v. The intersection [lo, hi) of the candidates' half-lines,
// clipped to the loop, is the main part, where the candidates are replaced by true; before
// and after it, each part keeps its candidates simplified for its own range (without the
// likely tag: there they are not likely), decided ones replaced by their value. A part of
// extent 1 substitutes v (in buffer shapes and strides too); empty parts and parts whose
// body becomes a no-op are dropped; each part's body is then partitioned in turn (inner
// loops). Serial and parallel loops are partitioned; loops without candidates are left as
// they are. The allocations in the body stay where they are in every part (inside a
// parallel loop they are per iteration); each part but the main one binds them to fresh
// data variables, so that no two Allocates of the function bind the same variable.
//
// Conditions of if_then_else(c, a, b) expressions count like if conditions (the form a
// compute with a boundary, such as zero padding, lowers to): where a part decides c, the
// call becomes a or b, so the main part of a padded copy is a plain load that vectorizes.
//
// With the PassContext config "tir.LoopPartition.partition_const_loop" set, conditions
// without the likely tag are candidates too. Like the arithmetic layer, the derivation
// assumes index arithmetic does not wrap.
#include <memory>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "loom/arith/analyzer.h"
#include "loom/ir/expr_ops.h"
#include "loom/tir/analysis.h"
#include "loom/tir/stmt_functor.h"
#include "loom/tir/transform.h"

namespace loom::tir::transform {

namespace {

using arith::VarIntSetMap;

void Conjuncts(const PrimExpr& condition, std::vector<PrimExpr>* out) {
  if (const auto* both = condition.as<AndNode>()) {
    Conjuncts(both->a, out);
    Conjuncts(both->b, out);
  } else {
    out->push_back(condition);
  }
}

bool IsLikely(const PrimExpr& e) {
  const auto* call = e.as<CallNode>();
  return call && call->op->name == "likely";
}

// The comparison inside a candidate conjunct (likely's argument), if it has a usable form.
std::optional<PrimExpr> Comparison(const PrimExpr& conjunct, bool partition_unlikely) {
  PrimExpr comparison = conjunct;
  if (IsLikely(conjunct)) {
    comparison = conjunct.as<CallNode>()->args[0];
  } else if (!partition_unlikely) {
    return std::nullopt;
  }
  bool ordered = comparison.as<LTNode>() || comparison.as<LENode>() || comparison.as<GTNode>() ||
                 comparison.as<GENode>();
  if (!ordered || !comparison.dtype().is_scalar()) return std::nullopt;
  return comparison;
}

// The comparison as f >= 0 over the integers.
PrimExpr NonNegativeForm(const PrimExpr& comparison) {
  if (const auto* lt = comparison.as<LTNode>()) return lt->b - lt->a - 1;
  if (const auto* le = comparison.as<LENode>()) return le->b - le->a;
  if (const auto* gt = comparison.as<GTNode>()) return gt->a - gt->b - 1;
  const auto* ge = comparison.as<GENode>();
  return ge->a - ge->b;
}

// The condition of an if_then_else call, or null for any other node.
const PrimExpr* IfThenElseCondition(const ObjectRef& node) {
  const auto* call = node.as<CallNode>();
  if (!call || call->op->name != "if_then_else") return nullptr;
  return &call->args[0];
}

struct Candidate {
  PrimExpr conjunct;    // what the if condition holds (likely(...) or the comparison)
  PrimExpr comparison;  // the comparison it tests
  VarIntSetMap inner_domain;
};

// The candidates for partitioning the loop over `loop_var` found in its body.
class CandidateCollector : public StmtExprVisitor {
 public:
  CandidateCollector(const Var& loop_var, bool partition_unlikely)
      : loop_var_(loop_var), partition_unlikely_(partition_unlikely) {}

  std::vector<Candidate> candidates;

  using StmtExprVisitor::VisitStmt_;

  // Expressions contribute the conditions of their if_then_else calls.
  void VisitExpr(const PrimExpr& e) override {
    PostOrderVisit(e, [&](const ObjectRef& node) {
      if (const PrimExpr* condition = IfThenElseCondition(node)) CollectConjuncts(*condition);
    });
  }

  void VisitStmt_(const ForNode* op) override {
    bool fixed = !DependsOnLoop(op->min) && !DependsOnLoop(op->extent);
    if (fixed) {
      domain_[op->loop_var] = arith::IntSet::FromRange(Range(op->min, op->extent));
    } else {
      defined_inside_.insert(op->loop_var.get());
    }
    VisitStmt(op->body);
    domain_.erase(op->loop_var);
  }

  void VisitStmt_(const LetStmtNode* op) override {
    defined_inside_.insert(op->var.get());
    VisitStmt(op->body);
  }

  void VisitStmt_(const IfThenElseNode* op) override {
    CollectConjuncts(op->condition);
    StmtExprVisitor::VisitStmt_(op);
  }

 private:
  void CollectConjuncts(const PrimExpr& condition) {
    std::vector<PrimExpr> conjuncts;
    Conjuncts(condition, &conjuncts);
    for (const PrimExpr& conjunct : conjuncts) {
      std::optional<PrimExpr> comparison = Comparison(conjunct, partition_unlikely_);
      if (comparison && IsMemoryIndependent(*comparison) && UsesVar(*comparison, loop_var_) &&
          !DependsOnLoop(*comparison, /*allow_loop_var=*/true)) {
        candidates.push_back({conjunct, *comparison, domain_});
      }
    }
  }

  // Whether `e` uses the loop variable (unless allowed) or a variable defined inside the
  // loop that is not an inner loop variable with a fixed range.
  bool DependsOnLoop(const PrimExpr& e, bool allow_loop_var = false) const {
    bool depends = false;
    PostOrderVisit(e, [&](const ObjectRef& node) {
      const auto* var = node.as<VarNode>();
      if (!var) return;
      if (var == loop_var_.get()) {
        depends |= !allow_loop_var;
      } else {
        depends |= defined_inside_.count(var) > 0 && !domain_.count(Var(var));
      }
    });
    return depends;
  }

  Var loop_var_;
  bool partition_unlikely_;
  VarIntSetMap domain_;
  std::unordered_set<const Object*> defined_inside_;
};

// The half-line of v where `candidate` holds for every inner iteration: [lower, +inf) or
// (-inf, upper). Neither when the comparison is not linear in v or g has no lower bound.
struct HalfLine {
  PrimExpr lower, upper;
};

std::optional<HalfLine> TrueHalfLine(const Candidate& candidate, const Var& v) {
  // A fresh analyzer: the pass's own may hold facts about inner variables from elsewhere.
  arith::Analyzer local;
  PrimExpr f = local.Simplify(NonNegativeForm(candidate.comparison));
  PrimExpr zero = make_zero(v.dtype());
  PrimExpr g = local.Simplify(Substitute(f, VarMap{{v, zero}}));
  PrimExpr at_one = local.Simplify(Substitute(f, VarMap{{v, make_const(v.dtype(), int64_t{1})}}));
  int64_t c = 0;
  if (!IsConstInt(local.Simplify(at_one - g), &c) || c == 0) return std::nullopt;
  PrimExpr coefficient = make_const(v.dtype(), c);
  if (!local.CanProveEqual(f, coefficient * v + g)) return std::nullopt;
  arith::IntSet range = arith::EvalSet(g, candidate.inner_domain);
  if (range.is_nothing() || !range.has_lower_bound()) return std::nullopt;
  PrimExpr g_min = range.min();
  if (c > 0) return HalfLine{floordiv(coefficient - 1 - g_min, coefficient), PrimExpr()};
  PrimExpr magnitude = make_const(v.dtype(), -c);
  return HalfLine{PrimExpr(), floordiv(g_min, magnitude) + 1};
}

Stmt NoOp() { return Evaluate(0); }

// The ranges of the loops around a point of the program, outermost first. Analyzers are
// made fresh from it for each question: an Analyzer cannot forget a binding, and loop
// variables are bound again with other ranges in the parts of a partitioned loop.
using LoopScope = std::vector<std::pair<Var, Range>>;

std::unique_ptr<arith::Analyzer> AnalyzerFor(const LoopScope& scope) {
  auto analyzer = std::make_unique<arith::Analyzer>();
  for (const auto& [var, range] : scope) analyzer->Bind(var, range, /*allow_override=*/true);
  return analyzer;
}

// Replaces the candidates in the if conditions of one part: by true in the main part,
// otherwise by their value where the part decides them, else by the simplified comparison.
class ConditionRewriter : public StmtExprMutator {
 public:
  // `point` maps the loop variable to its value when the part has a single iteration.
  ConditionRewriter(LoopScope scope, const std::unordered_set<const Object*>& targets,
                    bool main_part, VarMap point)
      : scope_(std::move(scope)), targets_(targets), main_part_(main_part),
        point_(std::move(point)) {}

  using StmtExprMutator::VisitStmt_;

  Stmt VisitStmt_(const ForNode* op) override {
    scope_.emplace_back(op->loop_var, Range(op->min, op->extent));
    Stmt result = StmtExprMutator::VisitStmt_(op);
    scope_.pop_back();
    return result;
  }

  PrimExpr VisitExpr_(const CallNode* op) override {
    PrimExpr visited = StmtExprMutator::VisitExpr_(op);
    const auto* call = visited.as<CallNode>();
    if (!IfThenElseCondition(visited)) return visited;
    PrimExpr condition = Rewrite(call->args[0]);
    if (is_const_true(condition)) return call->args[1];
    if (is_const_false(condition)) return call->args[2];
    if (condition.same_as(call->args[0])) return visited;
    return Call(call->dtype, call->op, {condition, call->args[1], call->args[2]});
  }

  Stmt VisitStmt_(const IfThenElseNode* op) override {
    PrimExpr condition = Rewrite(op->condition);
    if (is_const_true(condition)) return VisitStmt(op->then_case);
    if (is_const_false(condition)) {
      return op->else_case.defined() ? VisitStmt(op->else_case) : NoOp();
    }
    Stmt then_case = VisitStmt(op->then_case);
    Stmt else_case = op->else_case.defined() ? VisitStmt(op->else_case) : Stmt();
    if (condition.same_as(op->condition) && then_case.same_as(op->then_case) &&
        else_case.same_as(op->else_case)) {
      return Stmt(op);
    }
    return IfThenElse(condition, then_case, else_case);
  }

 private:
  PrimExpr Rewrite(const PrimExpr& condition) {
    if (const auto* both = condition.as<AndNode>()) {
      PrimExpr a = Rewrite(both->a), b = Rewrite(both->b);
      if (a.same_as(both->a) && b.same_as(both->b)) return condition;
      return a && b;  // folds the constants decided here
    }
    if (!targets_.count(condition.get())) return condition;
    if (main_part_) return const_true();
    PrimExpr comparison = IsLikely(condition) ? condition.as<CallNode>()->args[0] : condition;
    comparison = Substitute(comparison, point_);
    std::unique_ptr<arith::Analyzer> analyzer = AnalyzerFor(scope_);
    if (analyzer->CanProve(comparison)) return const_true();
    if (analyzer->CanProve(!comparison)) return const_false();
    return analyzer->Simplify(comparison);
  }

  LoopScope scope_;
  const std::unordered_set<const Object*>& targets_;
  bool main_part_;
  VarMap point_;
};

// One part's copy of the loop body: the loop variable replaced by the part's value where
// the part has a single iteration, in the fields of buffers too (shapes and strides that
// lowering derived from the loop's bounds), which Substitute leaves alone; and, in every
// part but the main one, each allocation bound to a fresh data variable. Later passes key
// allocations by their variable: StorageRewrite plans storage per variable over the whole
// function, so when a parallel loop and its peeled copy outside it bound the same variables,
// the outer plan (one temporary moved into another's storage, grown to fit) was applied to
// the accesses inside the loop too, where that storage had its own, smaller size.
class PartBodyCopier : public StorageRenamer {
 public:
  PartBodyCopier(VarMap point, bool fresh_allocations)
      : point_(std::move(point)), fresh_allocations_(fresh_allocations) {}

  using StorageRenamer::VisitExpr_;
  using StorageRenamer::VisitStmt_;

  Stmt VisitStmt_(const AllocateNode* op) override {
    if (!fresh_allocations_) return StmtExprMutator::VisitStmt_(op);
    Var fresh(op->buffer_var.name(), op->buffer_var.dtype());
    fresh_data_.emplace(op->buffer_var.get(), fresh);
    Stmt visited = StmtExprMutator::VisitStmt_(op);
    const auto* alloc = visited.as<AllocateNode>();
    return Allocate(fresh, alloc->dtype, alloc->extents, alloc->condition, alloc->body,
                    alloc->storage_scope);
  }

 private:
  PrimExpr RewriteVar(const VarNode* op) override {
    if (auto it = fresh_data_.find(op); it != fresh_data_.end()) return it->second;
    if (auto it = point_.find(Var(op)); it != point_.end()) return it->second;
    return PrimExpr(op);
  }

  // The buffer in this part: one Buffer per original, shared by its accesses.
  Buffer RewriteBuffer(const Buffer& buffer) override {
    if (auto it = copies_.find(buffer.get()); it != copies_.end()) return it->second;
    bool changed = false;
    auto visit = [&](const PrimExpr& e) {
      if (!e.defined()) return e;
      PrimExpr visited = VisitExpr(e);
      changed |= !visited.same_as(e);
      return visited;
    };
    PrimExpr data = visit(buffer->data);
    Array<PrimExpr> shape, strides;
    for (const PrimExpr& extent : buffer->shape) shape.push_back(visit(extent));
    for (const PrimExpr& stride : buffer->strides) strides.push_back(visit(stride));
    PrimExpr elem_offset = visit(buffer->elem_offset);
    Buffer copy = buffer;
    if (changed) {
      copy = Buffer(Downcast<Var>(data), buffer->dtype, shape, strides, elem_offset, buffer->name,
                    buffer->scope, buffer->data_alignment, buffer->offset_factor);
    }
    copies_.emplace(buffer.get(), copy);
    return copy;
  }

  VarMap point_;
  bool fresh_allocations_;
  std::unordered_map<const Object*, Var> fresh_data_;
  std::unordered_map<const BufferNode*, Buffer> copies_;
};

class LoopPartitioner : public StmtExprMutator {
 public:
  explicit LoopPartitioner(bool partition_unlikely) : partition_unlikely_(partition_unlikely) {}

  using StmtExprMutator::VisitStmt_;

  PrimExpr VisitExpr(const PrimExpr& e) override { return e; }

  Stmt VisitStmt_(const ForNode* op) override {
    if (std::optional<Stmt> parts = TryPartition(op)) return *parts;
    scope_.emplace_back(op->loop_var, Range(op->min, op->extent));
    Stmt result = StmtExprMutator::VisitStmt_(op);
    scope_.pop_back();
    return result;
  }

 private:
  std::optional<Stmt> TryPartition(const ForNode* op) {
    bool partitionable = op->for_kind == ForKind::kSerial || op->for_kind == ForKind::kParallel;
    if (!partitionable || !IsMemoryIndependent(op->min) || !IsMemoryIndependent(op->extent)) {
      return std::nullopt;
    }
    CandidateCollector collector(op->loop_var, partition_unlikely_);
    collector.VisitStmt(op->body);
    std::unordered_set<const Object*> targets;
    PrimExpr lo, hi;
    for (const Candidate& candidate : collector.candidates) {
      std::optional<HalfLine> half = TrueHalfLine(candidate, op->loop_var);
      if (!half) continue;
      targets.insert(candidate.conjunct.get());
      if (half->lower.defined()) lo = lo.defined() ? max(lo, half->lower) : half->lower;
      if (half->upper.defined()) hi = hi.defined() ? min(hi, half->upper) : half->upper;
    }
    if (targets.empty()) return std::nullopt;
    std::unique_ptr<arith::Analyzer> analyzer = AnalyzerFor(scope_);
    PrimExpr begin = analyzer->Simplify(op->min);
    PrimExpr end = analyzer->Simplify(op->min + op->extent);
    PrimExpr main_begin = lo.defined() ? Clamp(analyzer.get(), lo, begin, end) : begin;
    PrimExpr main_end = hi.defined() ? Clamp(analyzer.get(), hi, main_begin, end) : end;
    if (analyzer->CanProve(main_end - main_begin <= 0)) return std::nullopt;
    Array<Stmt> parts;
    for (const auto& [first, last, main] : {std::tuple{begin, main_begin, false},
                                            std::tuple{main_begin, main_end, true},
                                            std::tuple{main_end, end, false}}) {
      Stmt part = Part(analyzer.get(), op, first, last, main, targets);
      if (part.defined()) parts.push_back(part);
    }
    if (parts.empty()) return NoOp();
    return parts.size() == 1 ? parts[0] : SeqStmt(parts);
  }

  // x limited to [low, high], in its simplest provable form.
  static PrimExpr Clamp(arith::Analyzer* analyzer, const PrimExpr& x, const PrimExpr& low,
                        const PrimExpr& high) {
    PrimExpr value = analyzer->Simplify(x);
    if (!analyzer->CanProve(value <= high)) value = analyzer->Simplify(min(value, high));
    if (!analyzer->CanProve(value >= low)) value = analyzer->Simplify(max(value, low));
    return value;
  }

  // The loop restricted to [first, last), its conditions rewritten and its inner loops
  // partitioned; undefined when the part is empty or does nothing.
  Stmt Part(arith::Analyzer* analyzer, const ForNode* op, const PrimExpr& first,
            const PrimExpr& last, bool main, const std::unordered_set<const Object*>& targets) {
    PrimExpr extent = analyzer->Simplify(last - first);
    if (analyzer->CanProve(extent <= 0)) return Stmt();
    bool single = analyzer->CanProve(extent == 1);
    VarMap point;
    if (single) point[op->loop_var] = first;
    scope_.emplace_back(op->loop_var, Range(first, extent));
    Stmt body = ConditionRewriter(scope_, targets, main, point).VisitStmt(op->body);
    if (single || !main) body = PartBodyCopier(point, !main).VisitStmt(body);
    body = VisitStmt(body);
    scope_.pop_back();
    if (IsNoOp(body)) return Stmt();
    if (single) return body;
    return For(op->loop_var, first, extent, op->for_kind, body, op->thread_binding,
               op->annotations);
  }

  bool partition_unlikely_;
  LoopScope scope_;
};

}  // namespace

Pass LoopPartition() {
  auto rewrite = [](const PrimFunc& func, const IRModule&, const PassContext& context) {
    bool partition_unlikely =
        context.GetConfig<bool>("tir.LoopPartition.partition_const_loop", false);
    Stmt body = LoopPartitioner(partition_unlikely).VisitStmt(func->body);
    return WithBody(func, body);
  };
  return CreatePrimFuncPass(rewrite, 1, "LoopPartition");
}

}  // namespace loom::tir::transform
