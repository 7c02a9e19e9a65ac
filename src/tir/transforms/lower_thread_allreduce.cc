// LowerThreadAllreduce: each reduction across a block's threads (a thread_allreduce attribute
// around loom_thread_allreduce, as te lowering emits for a reduction loop bound to threadIdx)
// becomes code the threads run together, in one of two forms.
//
// Shared memory, on every GPU. The threads are numbered r (the reduction's thread variables,
// linearized) within groups g (every other threadIdx axis of the kernel: the threads that
// reduce other outputs at the same time). Each thread stores its values at buf[g*R + r]; when
// R is not a power of two, the threads below R - P (P the largest power of two under R) first
// fold in the values P above them; then, for s = P/2, ..., 1, the threads below s fold in the
// values s above them; every thread reads the result at buf[g*R]. ThreadSync puts the barriers
// between the steps: each step is a statement of its own, outside any branch on a thread
// index, so that every thread reaches them.
//
// Warp shuffles, where the target's warps exchange registers and the reduction runs over
// threadIdx.x alone: with R up to a warp, the lanes of each group of R fold in the values of
// the lanes R/2, R/4, ..., 1 above them and read lane 0's; with R a multiple of a warp (at most
// a warp of warps), each warp reduces so, its lane 0 stores the warp's result in shared
// memory, and every warp then reduces those R/warp values (lanes past them contribute the
// identity) and reads its lane 0's. Shuffled values are bound to variables before they are
// combined: a combiner may select between its operands, and every lane must execute a
// shuffle.
#include <algorithm>
#include <map>
#include <vector>

#include "loom/arith/analyzer.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"
#include "loom/tir/stmt_functor.h"
#include "loom/tir/transform.h"

namespace loom::tir::transform {

namespace {

struct ThreadLoop {
  Var var;
  std::string tag;
  int64_t extent;
};

bool IsThreadIndex(const std::string& tag) { return tag.rfind("threadIdx.", 0) == 0; }

// A value of the reduction: one element of a thread's own buffer.
struct Slot {
  Buffer buffer;
  Array<PrimExpr> indices;

  PrimExpr Load() const { return BufferLoad(buffer, indices); }
  Stmt Store(PrimExpr value) const { return BufferStore(buffer, std::move(value), indices); }
};

PrimExpr Int(int64_t value) { return IntImm(DataType::Int(32), value); }

// The stores of the combiner's results for operands `lhs` and `rhs` into `targets`. The right
// operands are bound to variables first, then the results, so that each operand is evaluated
// once and every store reads the values from before the first.
Stmt CombineInto(const CommReducer& combiner, const std::vector<Slot>& targets,
                 const Array<PrimExpr>& lhs, const Array<PrimExpr>& rhs) {
  std::vector<std::pair<Var, PrimExpr>> lets;
  Array<PrimExpr> rights;
  for (size_t k = 0; k < targets.size(); ++k) {
    Var right("rhs" + std::to_string(k), rhs[k].dtype());
    lets.emplace_back(right, rhs[k]);
    rights.push_back(right);
  }
  const Array<PrimExpr> combined = ApplyCombiner(combiner, lhs, rights);
  Array<Stmt> stores;
  for (size_t k = 0; k < targets.size(); ++k) {
    Var result("combined" + std::to_string(k), combined[k].dtype());
    lets.emplace_back(result, combined[k]);
    stores.push_back(targets[k].Store(result));
  }
  Stmt body = stores.size() == 1 ? stores[0] : SeqStmt(stores);
  for (auto it = lets.rbegin(); it != lets.rend(); ++it)
    body = LetStmt(it->first, it->second, body);
  return body;
}

int64_t FloorPowerOfTwo(int64_t n) {
  int64_t p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

bool IsPowerOfTwo(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

// What one thread_allreduce reduces, over which threads.
struct Allreduce {
  CommReducer combiner;
  std::vector<Slot> values;
  PrimExpr reduce_index, group_index;  // r and g, int32
  std::vector<std::string> reduce_tags;
  int64_t reduce_extent = 1, group_extent = 1;
};

class AllreduceLowerer : public StmtExprMutator {
 public:
  AllreduceLowerer(std::string kernel, std::vector<std::string> kernel_tags, int warp_size)
      : kernel_(std::move(kernel)), kernel_tags_(std::move(kernel_tags)), warp_size_(warp_size) {}

  using StmtExprMutator::VisitStmt_;

  Stmt VisitStmt_(const ForNode* op) override {
    const bool thread =
        op->for_kind == ForKind::kThreadBinding && IsThreadIndex(op->thread_binding->thread_tag);
    if (thread) {
      const auto* extent = op->extent.as<IntImmNode>();
      // A launch has constant block extents (checked again, for every kernel, at codegen).
      LOOM_CHECK_USER(extent != nullptr)
          << "kernel '" << kernel_ << "': loop '" << op->loop_var.name() << "' is bound to "
          << op->thread_binding->thread_tag << " with an extent that is not a constant";
      loops_.push_back({op->loop_var, op->thread_binding->thread_tag, extent->value});
    }
    Stmt visited = StmtExprMutator::VisitStmt_(op);
    if (thread) loops_.pop_back();
    return visited;
  }

  Stmt VisitStmt_(const AttrStmtNode* op) override {
    if (op->attr_key != attr::kThreadAllreduce) return StmtExprMutator::VisitStmt_(op);
    Allreduce reduction = Describe(*op);
    // One thread holds the whole result already.
    if (reduction.reduce_extent == 1) return Evaluate(0);
    return CanShuffle(reduction) ? LowerWithShuffles(reduction) : LowerWithSharedMemory(reduction);
  }

 private:
  Allreduce Describe(const AttrStmtNode& op) const {
    const auto* eval = op.body.as<EvaluateNode>();
    const auto* call = eval == nullptr ? nullptr : eval->value.as<CallNode>();
    LOOM_ICHECK(call != nullptr && call->op.name() == builtin::kThreadAllreduce)
        << "a thread_allreduce attribute around something other than its call";
    Allreduce reduction;
    reduction.combiner = Downcast<CommReducer>(op.node);
    const int64_t count = call->args[0].as<IntImmNode>()->value;
    for (int64_t k = 1; k <= count; ++k) {
      const auto* load = call->args[k].as<BufferLoadNode>();
      LOOM_ICHECK(load != nullptr) << "a thread_allreduce value is not a buffer element";
      reduction.values.push_back({load->buffer, load->indices});
    }
    // The innermost loop of each thread axis (a stage computed inside another's thread loops
    // binds the same axes again, and indexes the same threads).
    std::map<std::string, const ThreadLoop*> by_tag;
    for (const ThreadLoop& loop : loops_) by_tag[loop.tag] = &loop;
    for (size_t i = count + 1; i < call->args.size(); ++i) {
      // A thread variable of extent 1 may have been simplified to its only value: it adds
      // no threads.
      if (call->args[i].as<IntImmNode>() != nullptr) continue;
      const auto* var = call->args[i].as<VarNode>();
      auto it = std::find_if(loops_.begin(), loops_.end(),
                             [&](const ThreadLoop& loop) { return loop.var.get() == var; });
      LOOM_ICHECK(it != loops_.end())
          << "a thread_allreduce outside the loop of its thread variable";
      reduction.reduce_tags.push_back(it->tag);
    }
    for (const std::string& tag : kernel_tags_) {
      LOOM_CHECK_USER(!IsThreadIndex(tag) || by_tag.count(tag))
          << "kernel '" << kernel_ << "': a cross-thread reduction runs outside the loop bound "
          << "to " << tag << ", so the threads that differ in " << tag << " would reduce "
          << "into the same shared memory; bind " << tag << " in the reducing stage too, or "
          << "compute it in a kernel of its own";
    }
    for (const auto& [tag, loop] : by_tag) {
      const bool reduced =
          std::count(reduction.reduce_tags.begin(), reduction.reduce_tags.end(), tag);
      PrimExpr& index = reduced ? reduction.reduce_index : reduction.group_index;
      int64_t& extent = reduced ? reduction.reduce_extent : reduction.group_extent;
      PrimExpr thread = cast(DataType::Int(32), loop->var);
      index = index.defined() ? index * Int(loop->extent) + thread : thread;
      extent *= loop->extent;
    }
    if (!reduction.group_index.defined()) reduction.group_index = Int(0);
    return reduction;
  }

  bool CanShuffle(const Allreduce& reduction) const {
    const int64_t w = warp_size_, extent = reduction.reduce_extent;
    if (w <= 1 || reduction.reduce_tags != std::vector<std::string>{"threadIdx.x"}) return false;
    const bool fits = (IsPowerOfTwo(extent) && extent <= w) || (extent % w == 0 && extent <= w * w);
    const bool whole_warps = extent * reduction.group_extent % w == 0;
    const bool scalars =
        std::all_of(reduction.values.begin(), reduction.values.end(), [](const Slot& v) {
          const DataType t = v.buffer->dtype;
          return t.lanes() == 1 && (t.bits() == 32 || t.bits() == 64) &&
                 (t.is_float() || t.is_int() || t.is_uint());
        });
    return fits && whole_warps && scalars;
  }

  // Allocations of one shared buffer per value, of `elements` each, around `body`.
  static Stmt WithSharedBuffers(const std::vector<Slot>& shared, Stmt body) {
    for (auto it = shared.rbegin(); it != shared.rend(); ++it) {
      body = Allocate(it->buffer->data, it->buffer->dtype, it->buffer->shape, const_true(), body,
                      "shared");
    }
    return body;
  }

  // A block-shared buffer per value, of `elements` each, addressed at `index`.
  std::vector<Slot> SharedSlots(const Allreduce& reduction, int64_t elements, PrimExpr index) {
    std::vector<Slot> slots;
    for (size_t k = 0; k < reduction.values.size(); ++k) {
      const std::string name = "red_buf" + std::to_string(next_buffer_++);
      const DataType t = reduction.values[k].buffer->dtype;
      slots.push_back({Buffer(Var(name, DataType::Handle()), t, {Int(elements)}, {}, Int(0), name,
                              "shared", 64, 1),
                       {analyzer_.Simplify(index)}});
    }
    return slots;
  }

  // The slots at `index` of the same buffers.
  std::vector<Slot> At(const std::vector<Slot>& slots, const PrimExpr& index) {
    std::vector<Slot> moved = slots;
    for (Slot& slot : moved) slot.indices = {analyzer_.Simplify(index)};
    return moved;
  }

  static Array<PrimExpr> Loads(const std::vector<Slot>& slots) {
    Array<PrimExpr> loads;
    for (const Slot& slot : slots) loads.push_back(slot.Load());
    return loads;
  }

  static Stmt Copy(const std::vector<Slot>& to, const std::vector<Slot>& from) {
    Array<Stmt> stores;
    for (size_t k = 0; k < to.size(); ++k) stores.push_back(to[k].Store(from[k].Load()));
    return stores.size() == 1 ? stores[0] : SeqStmt(stores);
  }

  Stmt LowerWithSharedMemory(const Allreduce& reduction) {
    const int64_t extent = reduction.reduce_extent;
    const PrimExpr base = reduction.group_index * Int(extent);
    const std::vector<Slot> mine =
        SharedSlots(reduction, extent * reduction.group_extent, base + reduction.reduce_index);
    const PrimExpr& r = reduction.reduce_index;
    Array<Stmt> steps{Copy(mine, reduction.values)};
    // Threads r and r + s combine into r, for the threads below `active`.
    auto step = [&](int64_t active, int64_t s) {
      steps.push_back(IfThenElse(r < Int(active),
                                 CombineInto(reduction.combiner, mine, Loads(mine),
                                             Loads(At(mine, mine[0].indices[0] + Int(s)))),
                                 Stmt()));
    };
    const int64_t p = FloorPowerOfTwo(extent);
    if (p < extent) step(extent - p, p);
    for (int64_t s = p / 2; s >= 1; s /= 2) step(s, s);
    steps.push_back(Copy(reduction.values, At(mine, base)));
    return WithSharedBuffers(mine, SeqStmt(steps));
  }

  // The values combined with those of the lanes offset/2, ..., 1 above (from `offset` down).
  Array<Stmt> ShuffleSteps(const Allreduce& reduction, int64_t offset, int64_t width) const {
    Array<Stmt> steps;
    for (int64_t s = offset / 2; s >= 1; s /= 2) {
      Array<PrimExpr> shuffled;
      for (const Slot& v : reduction.values) {
        shuffled.push_back(call_intrin(v.buffer->dtype, builtin::kWarpShuffleDown,
                                       {v.Load(), Int(s), Int(width)}));
      }
      steps.push_back(
          CombineInto(reduction.combiner, reduction.values, Loads(reduction.values), shuffled));
    }
    return steps;
  }

  // Every lane's values become those of lane 0 of its group of `width`.
  static Stmt Broadcast(const Allreduce& reduction, int64_t width) {
    Array<Stmt> stores;
    for (const Slot& v : reduction.values) {
      stores.push_back(v.Store(
          call_intrin(v.buffer->dtype, builtin::kWarpShuffle, {v.Load(), Int(0), Int(width)})));
    }
    return stores.size() == 1 ? stores[0] : SeqStmt(stores);
  }

  Stmt LowerWithShuffles(const Allreduce& reduction) {
    const int64_t extent = reduction.reduce_extent, w = warp_size_;
    const int64_t width = std::min(extent, w);
    Array<Stmt> steps = ShuffleSteps(reduction, width, width);
    if (extent <= w) {
      steps.push_back(Broadcast(reduction, width));
      return SeqStmt(steps);
    }
    const int64_t warps = extent / w;
    const PrimExpr& r = reduction.reduce_index;
    const PrimExpr lane = floormod(r, Int(w));
    const PrimExpr base = reduction.group_index * Int(warps);
    const std::vector<Slot> warp_results =
        SharedSlots(reduction, warps * reduction.group_extent, base + floordiv(r, Int(w)));
    steps.push_back(IfThenElse(lane == Int(0), Copy(warp_results, reduction.values), Stmt()));
    const std::vector<Slot> lane_result = At(warp_results, base + lane);
    Array<Stmt> identity;
    for (size_t k = 0; k < reduction.values.size(); ++k) {
      identity.push_back(reduction.values[k].Store(reduction.combiner->identity_element[k]));
    }
    steps.push_back(SeqStmt(identity));
    steps.push_back(IfThenElse(lane < Int(warps), Copy(reduction.values, lane_result), Stmt()));
    int64_t span = 1;
    while (span < warps) span *= 2;
    Array<Stmt> across = ShuffleSteps(reduction, span, w);
    steps.insert(steps.end(), across.begin(), across.end());
    steps.push_back(Broadcast(reduction, w));
    return WithSharedBuffers(warp_results, SeqStmt(steps));
  }

  std::string kernel_;
  std::vector<std::string> kernel_tags_;
  int warp_size_;
  std::vector<ThreadLoop> loops_;
  int next_buffer_ = 0;
  arith::Analyzer analyzer_;
};

}  // namespace

Pass LowerThreadAllreduce(int warp_size) {
  LOOM_CHECK_USER(warp_size == 1 || IsPowerOfTwo(warp_size))
      << "LowerThreadAllreduce: a warp of " << warp_size << " threads (the target's "
      << "-thread-warp-size) is not a power of two";
  return CreatePrimFuncPass(
      [warp_size](const PrimFunc& func, const IRModule&, const PassContext&) {
        if (!IsDeviceKernel(func)) return func;
        auto symbol = func->attrs.find("global_symbol");
        const auto* name =
            symbol == func->attrs.end() ? nullptr : symbol->second.as<StringImmNode>();
        AllreduceLowerer lowerer(name != nullptr ? name->value : "kernel", KernelThreadTags(func),
                                 warp_size);
        Stmt body = lowerer.VisitStmt(func->body);
        return body.same_as(func->body) ? func : WithBody(func, body);
      },
      0, "LowerThreadAllreduce");
}

}  // namespace loom::tir::transform
