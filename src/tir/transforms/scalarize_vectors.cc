// ScalarizeVectors: vector code back to scalar code, for back ends without vector types
// (portable C). A store of an n-lane value becomes a loop over its lanes, each iteration
// storing that lane of the value (a C compiler may vectorize the loop again); where a lane
// must be known to compute (a Shuffle picks lanes by number) the store is unrolled into n
// scalar stores instead. A LetStmt of an n-lane variable becomes n scalar LetStmts. Lane k
// of an expression: a Ramp's base + k * stride, a Broadcast's value, the operation (cast,
// select, load, pure call) on lane k of its operands, a Let of lane k of its value, a
// Shuffle's picked lane.
//
// The vector statement computes every lane before storing any; here lane k is stored before
// lane k + 1 is computed. The two agree because VectorizeLoop vectorizes a store only when no
// lane reads what another lane writes.
//
// With a vector access size (a GPU's 8- or 16-byte loads and stores), a store's contiguous,
// aligned loads and its contiguous, aligned destination stay vector accesses of 32-bit
// elements, in chunks of that size: each chunk loaded into a vector variable before the
// store (LetStmt), its lanes read by one-lane Shuffles, the store unrolled lane by lane into
// chunks whose value is the vector variable (a copy) or a Shuffle of its scalar lanes.
// Aligned: the index of the chunk's first element a proven multiple of its lanes, in a buffer
// aligned to at least the chunk's size (the back end aligns its allocations to that size).
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "loom/arith/analyzer.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"
#include "loom/tir/stmt_functor.h"
#include "loom/tir/transform.h"

namespace loom::tir::transform {

namespace {

// Thrown inside Lane when a lane given as a variable must be a number (a Shuffle).
struct NeedsConstantLane {};

class Scalarizer : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;
  using StmtExprMutator::VisitStmt_;

  explicit Scalarizer(int vector_access_bytes) : vector_access_bytes_(vector_access_bytes) {}

  // Scalar expressions: only those reading a lane of a vector (a Shuffle picking one)
  // change.
  PrimExpr VisitExpr(const PrimExpr& e) override {
    LOOM_ICHECK(e.dtype().lanes() == 1) << "ScalarizeVectors: a vector outside a store: " << e;
    return Lane(e, make_const(DataType::Int(32), int64_t{0}));
  }

  Stmt VisitStmt_(const BufferStoreNode* op) override {
    int lanes = op->value.dtype().lanes();
    for (const PrimExpr& index : op->indices) lanes = std::max(lanes, index.dtype().lanes());
    if (lanes == 1) return StmtExprMutator::VisitStmt_(op);
    if (std::optional<Stmt> vector = WithVectorAccesses(op, lanes)) return *vector;
    try {
      Var lane("lane", DataType::Int(32));
      return For(lane, make_const(DataType::Int(32), int64_t{0}),
                 make_const(DataType::Int(32), int64_t{lanes}), ForKind::kSerial,
                 StoreLane(op, lane), IterVar(), {});
    } catch (const NeedsConstantLane&) {
      std::vector<Stmt> stores;
      for (int k = 0; k < lanes; ++k) {
        stores.push_back(StoreLane(op, make_const(DataType::Int(32), int64_t{k})));
      }
      return SeqStmt(Array<Stmt>(stores.begin(), stores.end()));
    }
  }

  Stmt VisitStmt_(const LetStmtNode* op) override {
    int lanes = op->var.dtype().lanes();
    if (lanes == 1) return StmtExprMutator::VisitStmt_(op);
    // Every lane bound once, to a scalar named by its number: the stores after it read them.
    std::vector<PrimExpr> values;
    std::vector<Var> vars;
    VectorVar& bound = lanes_of_[op->var.get()];
    bound.value = op->value;
    for (int k = 0; k < lanes; ++k) {
      values.push_back(Lane(op->value, make_const(DataType::Int(32), int64_t{k})));
      vars.emplace_back(op->var->name_hint + "_" + std::to_string(k), op->var.dtype().element_of());
      bound.lanes[LaneKey(make_const(DataType::Int(32), int64_t{k}))] = vars.back();
    }
    Stmt body = VisitStmt(op->body);
    EndScope(op->var);
    for (size_t k = vars.size(); k-- > 0;) body = LetStmt(vars[k], values[k], body);
    return body;
  }

 private:
  // The lanes of each chunk of a contiguous access of `lanes` 32-bit lanes (an index
  // Ramp(base, 1, lanes)) to `buffer` that can be a vector access, or 0.
  int AccessWidth(const Buffer& buffer, const Array<PrimExpr>& indices, int lanes) {
    if (vector_access_bytes_ == 0 || indices.size() != 1) return 0;
    const auto* ramp = indices[0].as<RampNode>();
    const DataType t = buffer->dtype;
    int64_t stride = 0;
    if (ramp == nullptr || ramp->lanes != lanes || !IsConstInt(ramp->stride, &stride) ||
        stride != 1 || t.bits() != 32 || t.lanes() != 1 ||
        !(t.is_float() || t.is_int() || t.is_uint())) {
      return 0;
    }
    int64_t offset = 0;
    const bool no_offset = IsConstInt(buffer->elem_offset, &offset) && offset == 0;
    const arith::ModularSet first = analyzer_.modular_set(
        no_offset ? ramp->base : ramp->base + cast(ramp->base.dtype(), buffer->elem_offset));
    for (int width = vector_access_bytes_ / 4; width >= 2; width /= 2) {
      if (lanes % width == 0 && first.coeff % width == 0 && first.base % width == 0 &&
          buffer->data_alignment >= width * 4) {
        return width;
      }
    }
    return 0;
  }

  // `op` (of `lanes` lanes) with its vector accesses kept (see the file's comment), or none
  // when it has none.
  std::optional<Stmt> WithVectorAccesses(const BufferStoreNode* op, int lanes) {
    // Loads under a Let of the value may read its variable, and those in a branch of an
    // if_then_else may be valid only when it is taken (a guarded read of padding): they stay
    // where they are.
    std::unordered_set<const VarNode*> let_vars;
    std::unordered_set<const Object*> guarded;
    PostOrderVisit(op->value, [&](const ObjectRef& node) {
      if (const auto* let = node.as<LetNode>()) let_vars.insert(let->var.get());
      const auto* call = node.as<CallNode>();
      if (call == nullptr || call->op->name != "if_then_else") return;
      for (size_t branch = 1; branch < call->args.size(); ++branch) {
        PostOrderVisit(call->args[branch], [&](const ObjectRef& inner) {
          if (inner.as<BufferLoadNode>()) guarded.insert(inner.get());
        });
      }
    });
    std::vector<std::pair<Var, PrimExpr>> chunks;
    PostOrderVisit(op->value, [&](const ObjectRef& node) {
      const auto* load = node.as<BufferLoadNode>();
      if (load == nullptr || kept_lanes_.count({load, 0}) || guarded.count(load)) return;
      const int width = AccessWidth(load->buffer, load->indices, lanes);
      bool reads_let = false;
      PostOrderVisit(load->indices[0], [&](const ObjectRef& inner) {
        const auto* var = inner.as<VarNode>();
        reads_let |= var != nullptr && let_vars.count(var) > 0;
      });
      if (width == 0 || reads_let) return;
      const PrimExpr base = load->indices[0].as<RampNode>()->base;
      for (int first = 0; first < lanes; first += width) {
        Var chunk(load->buffer->name + "_vec", load->dtype.with_lanes(width));
        chunks.emplace_back(chunk, BufferLoad(load->buffer, {Ramp(base + first, 1, width)}));
        for (int k = 0; k < width; ++k) {
          kept_lanes_[{load, first + k}] =
              Shuffle(Array<PrimExpr>{chunk}, {make_const(DataType::Int(32), int64_t{k})});
        }
      }
    });
    const int store_width = AccessWidth(op->buffer, op->indices, lanes);
    if (chunks.empty() && store_width == 0) return std::nullopt;
    std::vector<PrimExpr> values;
    for (int k = 0; k < lanes; ++k) {
      values.push_back(Lane(op->value, make_const(DataType::Int(32), int64_t{k})));
    }
    std::vector<Stmt> stores;
    if (store_width == 0) {
      for (int k = 0; k < lanes; ++k) {
        stores.push_back(StoreLane(op, make_const(DataType::Int(32), int64_t{k})));
      }
    } else {
      const PrimExpr base = op->indices[0].as<RampNode>()->base;
      for (int first = 0; first < lanes; first += store_width) {
        Array<PrimExpr> scalars, picks;
        for (int k = 0; k < store_width; ++k) {
          scalars.push_back(values[static_cast<size_t>(first + k)]);
          picks.push_back(make_const(DataType::Int(32), int64_t{k}));
        }
        stores.push_back(BufferStore(op->buffer, WholeChunkOrShuffle(scalars, picks),
                                     {Ramp(base + first, 1, store_width)}));
      }
    }
    kept_lanes_.clear();
    lane_cache_.clear();
    Stmt body = stores.size() == 1 ? stores[0] : SeqStmt(Array<Stmt>(stores.begin(), stores.end()));
    for (size_t c = chunks.size(); c-- > 0;)
      body = LetStmt(chunks[c].first, chunks[c].second, body);
    return body;
  }

  // The vector of `scalars` lanes: a chunk's vector variable when they are its lanes in
  // order (a copy), else a Shuffle of them.
  static PrimExpr WholeChunkOrShuffle(const Array<PrimExpr>& scalars,
                                      const Array<PrimExpr>& picks) {
    const auto* first = scalars[0].as<ShuffleNode>();
    const bool whole =
        first != nullptr && first->vectors[0].dtype().lanes() == static_cast<int>(scalars.size());
    for (size_t k = 0; whole && k < scalars.size(); ++k) {
      const auto* lane = scalars[k].as<ShuffleNode>();
      int64_t pick = -1;
      if (lane == nullptr || !lane->vectors[0].same_as(first->vectors[0]) ||
          !IsConstInt(lane->indices[0], &pick) || pick != static_cast<int64_t>(k)) {
        return Shuffle(scalars, picks);
      }
    }
    return whole ? first->vectors[0] : Shuffle(scalars, picks);
  }

  // A lane: its number, or the loop variable that runs over the lanes.
  struct Key {
    const Object* node;
    const Object* lane_var;
    int64_t lane;
    bool operator<(const Key& o) const {
      return std::tie(node, lane_var, lane) < std::tie(o.node, o.lane_var, o.lane);
    }
  };
  static std::pair<const Object*, int64_t> LaneKey(const PrimExpr& lane) {
    int64_t number = 0;
    if (IsConstInt(lane, &number)) return {nullptr, number};
    return {lane.get(), 0};
  }

  Stmt StoreLane(const BufferStoreNode* op, const PrimExpr& lane) {
    Array<PrimExpr> indices;
    for (const PrimExpr& index : op->indices) indices.push_back(Lane(index, lane));
    return BufferStore(op->buffer, Lane(op->value, lane), indices);
  }

  // Lane `lane` of `e` as a scalar expression; a subexpression shared in the DAG is
  // rewritten once per lane.
  PrimExpr Lane(const PrimExpr& e, const PrimExpr& lane) {
    if (!ContainsVector(e)) return e;
    auto [lane_var, number] = LaneKey(lane);
    if (lane_var == nullptr) {
      auto kept = kept_lanes_.find({e.get(), number});
      if (kept != kept_lanes_.end()) return kept->second;
    }
    Key key{e.get(), lane_var, number};
    auto cached = lane_cache_.find(key);
    if (cached != lane_cache_.end()) return cached->second;
    PrimExpr scalar = ComputeLane(e, lane);
    lane_cache_[key] = scalar;
    return scalar;
  }

  PrimExpr ComputeLane(const PrimExpr& e, const PrimExpr& lane) {
    const PrimExpr zero = make_const(DataType::Int(32), int64_t{0});
    DataType scalar = e.dtype().element_of();
    if (const auto* ramp = e.as<RampNode>()) {
      return Lane(ramp->base, zero) + Lane(ramp->stride, zero) * cast(ramp->base.dtype(), lane);
    }
    if (const auto* broadcast = e.as<BroadcastNode>()) return Lane(broadcast->value, zero);
    if (const auto* var = e.as<VarNode>()) {
      auto it = lanes_of_.find(var);
      LOOM_ICHECK(it != lanes_of_.end()) << "ScalarizeVectors: vector variable " << var->name_hint
                                         << " has no scalar lanes";
      auto bound = it->second.lanes.find(LaneKey(lane));
      // A lane not bound (read through a Shuffle) is computed where it is read: it is pure.
      if (bound == it->second.lanes.end()) return Lane(it->second.value, lane);
      return bound->second;
    }
    if (const auto* shuffle = e.as<ShuffleNode>()) {
      int64_t number = 0;
      if (e.dtype().lanes() > 1 && !IsConstInt(lane, &number)) throw NeedsConstantLane{};
      int64_t pick = 0;
      LOOM_ICHECK(IsConstInt(shuffle->indices[static_cast<size_t>(number)], &pick));
      for (const PrimExpr& vector : shuffle->vectors) {
        int lanes = vector.dtype().lanes();
        if (pick < lanes) return Lane(vector, make_const(DataType::Int(32), pick));
        pick -= lanes;
      }
      LOOM_ICHECK(false) << "ScalarizeVectors: shuffle index out of range in " << e;
    }
    if (const auto* cast_node = e.as<CastNode>()) return Cast(scalar, Lane(cast_node->value, lane));
    if (const auto* select = e.as<SelectNode>()) {
      return Select(Lane(select->condition, lane), Lane(select->true_value, lane),
                    Lane(select->false_value, lane));
    }
    if (const auto* load = e.as<BufferLoadNode>()) {
      Array<PrimExpr> indices;
      for (const PrimExpr& index : load->indices) indices.push_back(Lane(index, lane));
      return BufferLoad(load->buffer, indices);
    }
    if (const auto* let = e.as<LetNode>()) {
      if (let->var.dtype().lanes() == 1) {
        return Let(let->var, Lane(let->value, zero), Lane(let->body, lane));
      }
      // The body's lane reads that lane of the variable: it alone is bound, as a scalar
      // (binding every lane would copy the value once per lane at each level of nested
      // lets). Another lane, read through a Shuffle, is computed where it is read.
      PrimExpr value = Lane(let->value, lane);
      Var scalar_var(let->var->name_hint + "_lane", let->var.dtype().element_of());
      VectorVar& bound = lanes_of_[let->var.get()];
      bound.value = let->value;
      bound.lanes[LaneKey(lane)] = scalar_var;
      PrimExpr body = Lane(let->body, lane);
      EndScope(let->var);
      return Let(scalar_var, value, body);
    }
    if (const auto* call = e.as<CallNode>()) {
      const std::string& name = call->op->name;
      // A reinterpret that keeps the lane count is one per lane; one that regroups lanes
      // (int8x64 as int32x16) and LLVM intrinsics have no lane-by-lane form.
      bool same_lanes = name == "reinterpret" && call->args[0].dtype().lanes() == e.dtype().lanes();
      LOOM_CHECK_USER(name != "call_llvm_pure_intrin" && name != "call_llvm_intrin" &&
                      (name != "reinterpret" || same_lanes))
          << "ScalarizeVectors: " << name << " on vectors (" << e
          << ") has no lane-by-lane form; build this function for the llvm target";
      Array<PrimExpr> args;
      for (const PrimExpr& arg : call->args) args.push_back(Lane(arg, lane));
      return Call(scalar, call->op, args);
    }
#define LOOM_SCALARIZE_BINARY(Node, Make) \
  if (const auto* op = e.as<Node>()) return Make(Lane(op->a, lane), Lane(op->b, lane));
    LOOM_SCALARIZE_BINARY(AddNode, Add)
    LOOM_SCALARIZE_BINARY(SubNode, Sub)
    LOOM_SCALARIZE_BINARY(MulNode, Mul)
    LOOM_SCALARIZE_BINARY(DivNode, Div)
    LOOM_SCALARIZE_BINARY(ModNode, Mod)
    LOOM_SCALARIZE_BINARY(FloorDivNode, FloorDiv)
    LOOM_SCALARIZE_BINARY(FloorModNode, FloorMod)
    LOOM_SCALARIZE_BINARY(MinNode, Min)
    LOOM_SCALARIZE_BINARY(MaxNode, Max)
    LOOM_SCALARIZE_BINARY(EQNode, EQ)
    LOOM_SCALARIZE_BINARY(NENode, NE)
    LOOM_SCALARIZE_BINARY(LTNode, LT)
    LOOM_SCALARIZE_BINARY(LENode, LE)
    LOOM_SCALARIZE_BINARY(GTNode, GT)
    LOOM_SCALARIZE_BINARY(GENode, GE)
    LOOM_SCALARIZE_BINARY(AndNode, And)
    LOOM_SCALARIZE_BINARY(OrNode, Or)
#undef LOOM_SCALARIZE_BINARY
    if (const auto* op = e.as<NotNode>()) return Not(Lane(op->a, lane));
    LOOM_ICHECK(false) << "ScalarizeVectors: no lane form for " << e;
    return e;
  }

  static bool ContainsVector(const PrimExpr& e) {
    if (e.dtype().lanes() > 1) return true;
    bool vector = false;
    PostOrderVisit(e, [&](const ObjectRef& node) {
      if (const auto* expr = node.as<ExprNode>()) vector |= expr->dtype.lanes() > 1;
    });
    return vector;
  }

  // Leaves the scope of a vector variable: lanes rewritten inside it may name the scalars
  // bound to its lanes, so none is reused outside.
  void EndScope(const Var& var) {
    lanes_of_.erase(var.get());
    lane_cache_.clear();
  }

  // A vector variable in scope: its value, and the scalar variables bound to its lanes.
  struct VectorVar {
    PrimExpr value;
    std::map<std::pair<const Object*, int64_t>, PrimExpr> lanes;
  };
  std::unordered_map<const VarNode*, VectorVar> lanes_of_;
  std::map<Key, PrimExpr> lane_cache_;
  // The store being rewritten's loads kept as vector accesses: lane k of each, a lane of one
  // of its chunks.
  std::map<std::pair<const Object*, int64_t>, PrimExpr> kept_lanes_;
  const int vector_access_bytes_;
  arith::Analyzer analyzer_;
};

}  // namespace

Pass ScalarizeVectors(int vector_access_bytes) {
  LOOM_ICHECK(vector_access_bytes == 0 || vector_access_bytes == 8 || vector_access_bytes == 16)
      << "ScalarizeVectors: vector accesses of " << vector_access_bytes << " bytes";
  return CreatePrimFuncPass(
      [vector_access_bytes](const PrimFunc& func, const IRModule&, const PassContext&) {
        return WithBody(func, Scalarizer(vector_access_bytes).VisitStmt(func->body));
      },
      0, "ScalarizeVectors");
}

}  // namespace loom::tir::transform
