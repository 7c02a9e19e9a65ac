// Loop-nest features for the cost model. A walk of the lowered function keeps the stack of loops
// around each buffer store; each store contributes its arithmetic (counted once per execution) and
// its accesses (the store and every load in its value), each access with the elements it touches
// (the product of the extents of the loops its indices use), its reuse (executions per element
// touched) and how its innermost loop walks it (not at all, contiguously, or with a stride). The
// vector aggregates: totals, the five accesses that touch the most bytes, and the loop nest of the
// most executed store, innermost first.
#include "loom/autotune/features.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "loom/arith/analyzer.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"
#include "loom/tir/analysis.h"
#include "loom/tir/stmt_functor.h"

namespace loom::autotune {

namespace {

constexpr size_t kTotals = 9;
constexpr size_t kAccesses = 5;  // the top accesses by bytes touched
constexpr size_t kAccessFields = 7;
constexpr size_t kLoops = 8;  // the innermost loops of the main store
constexpr size_t kLoopFields = 5;

float Log(double x) { return static_cast<float>(std::log2(1.0 + std::max(x, 0.0))); }

struct Loop {
  Var var;
  int64_t extent = 1;
  ForKind kind = ForKind::kSerial;
};

struct Access {
  double bytes_touched = 0;
  double reuse = 0;
  double executions = 0;
  int walk = 0;  // 0: the innermost loop does not move it; 1: contiguous; 2: strided
  bool store = false;
};

struct Store {
  double executions = 0;
  std::vector<Loop> loops;  // outermost first
};

// Counts the operations of an expression (vector lanes count each).
class ArithmeticCounter : public ExprVisitor {
 public:
  double float_ops = 0, int_ops = 0, math_calls = 0;

 private:
  void Count(const DataType& t) { (t.is_float() ? float_ops : int_ops) += t.lanes(); }
  void VisitExpr_(const AddNode* op) override { Count(op->dtype), ExprVisitor::VisitExpr_(op); }
  void VisitExpr_(const SubNode* op) override { Count(op->dtype), ExprVisitor::VisitExpr_(op); }
  void VisitExpr_(const MulNode* op) override { Count(op->dtype), ExprVisitor::VisitExpr_(op); }
  void VisitExpr_(const DivNode* op) override { Count(op->dtype), ExprVisitor::VisitExpr_(op); }
  void VisitExpr_(const MinNode* op) override { Count(op->dtype), ExprVisitor::VisitExpr_(op); }
  void VisitExpr_(const MaxNode* op) override { Count(op->dtype), ExprVisitor::VisitExpr_(op); }
  void VisitExpr_(const CallNode* op) override {
    math_calls += op->dtype.lanes();
    ExprVisitor::VisitExpr_(op);
  }
};

class NestWalker : public StmtExprVisitor {
 public:
  std::vector<Access> accesses;
  std::vector<Store> stores;
  double float_ops = 0, int_ops = 0, math_calls = 0;
  double parallel_extent = 1, vector_lanes_weighted = 0, unrolled_weighted = 0;
  int max_depth = 0;
  int loops_seen = 0;

 private:
  double Executions() const {
    double n = 1;
    for (const Loop& loop : loops_) n *= static_cast<double>(loop.extent);
    return n;
  }

  void VisitStmt_(const ForNode* op) override {
    const auto* extent = op->extent.as<IntImmNode>();
    Loop loop{op->loop_var, extent ? extent->value : 1, op->for_kind};
    if (op->for_kind == ForKind::kParallel) parallel_extent *= static_cast<double>(loop.extent);
    loops_.push_back(loop);
    ++loops_seen;
    max_depth = std::max<int>(max_depth, static_cast<int>(loops_.size()));
    StmtExprVisitor::VisitStmt_(op);
    loops_.pop_back();
  }

  void VisitStmt_(const BufferStoreNode* op) override {
    const double executions = Executions();
    ArithmeticCounter counter;
    counter.VisitExpr(op->value);
    float_ops += counter.float_ops * executions;
    int_ops += counter.int_ops * executions;
    math_calls += counter.math_calls * executions;
    // Vector lanes: a loop still marked vectorized, or one already turned into vector values.
    double lanes = op->value.dtype().lanes();
    if (!loops_.empty() && loops_.back().kind == ForKind::kVectorized) {
      lanes *= static_cast<double>(loops_.back().extent);
    }
    if (lanes > 1) vector_lanes_weighted += lanes * executions;
    if (!loops_.empty()) {
      for (const Loop& loop : loops_) {
        if (loop.kind == ForKind::kUnrolled) unrolled_weighted += executions;
      }
    }
    stores.push_back({executions, loops_});
    Record(op->buffer, op->indices, executions, /*store=*/true);
    current_executions_ = executions;
    in_store_ = true;
    VisitExpr(op->value);
    in_store_ = false;
  }

  void VisitExpr_(const BufferLoadNode* op) override {
    if (in_store_) Record(op->buffer, op->indices, current_executions_, /*store=*/false);
    ExprVisitor::VisitExpr_(op);
  }

  void Record(const Buffer& buffer, const Array<PrimExpr>& indices, double executions, bool store) {
    Access a;
    a.executions = executions;
    a.store = store;
    double touched = 1;
    for (const Loop& loop : loops_) {
      bool used = false;
      for (const PrimExpr& index : indices) used = used || tir::UsesVar(index, loop.var);
      if (used) touched *= static_cast<double>(loop.extent);
    }
    a.bytes_touched = touched * buffer->dtype.bytes();
    a.reuse = executions / touched;
    if (!loops_.empty() && !indices.empty()) {
      const Var& inner = loops_.back().var;
      for (size_t d = 0; d < indices.size(); ++d) {
        if (!tir::UsesVar(indices[d], inner)) continue;
        a.walk = 2;
        if (d + 1 == indices.size()) {
          tir::VarMap next{{inner, inner + 1}};
          PrimExpr step = analyzer_.Simplify(tir::Substitute(indices[d], next) - indices[d]);
          const auto* constant = step.as<IntImmNode>();
          if (constant && constant->value == 1) a.walk = 1;
        }
      }
    }
    accesses.push_back(a);
  }

  std::vector<Loop> loops_;
  arith::Analyzer analyzer_;
  double current_executions_ = 0;
  bool in_store_ = false;
};

}  // namespace

size_t FeatureCount() { return kTotals + kAccesses * kAccessFields + kLoops * kLoopFields; }

std::vector<float> LoopNestFeatures(const PrimFunc& func) {
  NestWalker walker;
  walker.VisitStmt(func->body);
  std::vector<float> f;
  f.reserve(FeatureCount());
  double bytes = 0;
  for (const Access& a : walker.accesses) bytes += a.bytes_touched;
  f.insert(f.end(), {Log(walker.float_ops), Log(walker.int_ops), Log(walker.math_calls),
                     Log(walker.parallel_extent), Log(walker.vector_lanes_weighted),
                     Log(walker.unrolled_weighted), static_cast<float>(walker.max_depth),
                     static_cast<float>(walker.loops_seen), Log(bytes)});
  std::vector<Access> top = walker.accesses;
  std::sort(top.begin(), top.end(),
            [](const Access& a, const Access& b) { return a.bytes_touched > b.bytes_touched; });
  for (size_t i = 0; i < kAccesses; ++i) {
    if (i < top.size()) {
      const Access& a = top[i];
      f.insert(f.end(),
               {Log(a.bytes_touched), Log(a.reuse), Log(a.executions), a.walk == 0 ? 1.f : 0.f,
                a.walk == 1 ? 1.f : 0.f, a.walk == 2 ? 1.f : 0.f, a.store ? 1.f : 0.f});
    } else {
      f.insert(f.end(), kAccessFields, 0.f);
    }
  }
  const Store* main = nullptr;
  for (const Store& s : walker.stores) {
    if (!main || s.executions > main->executions) main = &s;
  }
  for (size_t i = 0; i < kLoops; ++i) {
    if (main && i < main->loops.size()) {
      const Loop& loop = main->loops[main->loops.size() - 1 - i];
      f.insert(
          f.end(),
          {Log(static_cast<double>(loop.extent)), loop.kind == ForKind::kParallel ? 1.f : 0.f,
           loop.kind == ForKind::kVectorized ? 1.f : 0.f,
           loop.kind == ForKind::kUnrolled ? 1.f : 0.f, loop.kind == ForKind::kSerial ? 1.f : 0.f});
    } else {
      f.insert(f.end(), kLoopFields, 0.f);
    }
  }
  return f;
}

}  // namespace loom::autotune
