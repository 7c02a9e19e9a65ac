// SplitGathers: a vector load whose index is no stride-1 ramp is a gather, one scalar load per
// lane. Where the index, cut into runs of lanes (halves, then quarters, down to 4 lanes), is a
// stride-1 ramp in every run, the load becomes one contiguous load per run, joined by a
// Shuffle. A layout transform between channel blocks of 16 and 8 reads that way: 16 lanes
// of NCHW16c output take lanes 0-7 from one 8-channel block and 8-15 from the next.
#include "loom/arith/analyzer.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"
#include "loom/tir/transform.h"

namespace loom::tir::transform {

namespace {

// The narrowest run worth a load of its own (an SSE vector of 32-bit lanes).
constexpr int kMinRunLanes = 4;

// Thrown by LaneSlicer at a vector expression it cannot slice (a load, a select, a call):
// its parent could not be rebuilt on an unsliced operand.
struct NotSliceable {};

// Lanes [begin, begin + count) of an index built from ramps, broadcasts and integer
// arithmetic (whose nodes take their type from their operands, so rebuilding them on sliced
// operands is the slice); NotSliceable for any other vector expression.
class LaneSlicer : public ExprMutator {
 public:
  LaneSlicer(int begin, int count) : begin_(begin), count_(count) {}

  PrimExpr VisitExpr(const PrimExpr& e) override {
    if (e.dtype().lanes() == 1) return e;
    switch (e.kind()) {
      case NodeKind::Ramp: {
        const auto* ramp = e.as<RampNode>();
        return Ramp(ramp->base + make_const(ramp->base.dtype(), int64_t{begin_}) * ramp->stride,
                    ramp->stride, count_);
      }
      case NodeKind::Broadcast:
        return Broadcast(e.as<BroadcastNode>()->value, count_);
      case NodeKind::Add:
      case NodeKind::Sub:
      case NodeKind::Mul:
      case NodeKind::FloorDiv:
      case NodeKind::FloorMod:
      case NodeKind::Min:
      case NodeKind::Max:
        try {
          return ExprMutator::VisitExpr(e);
        } catch (const Error&) {
          // Operands sliced to types that no longer match (a ramp of int32 lanes under an
          // int64 sum, where a symbolic size widened the index): left a gather.
          throw NotSliceable{};
        }
      default:
        throw NotSliceable{};
    }
  }

 private:
  int begin_, count_;
};

bool IsContiguous(const PrimExpr& index) {
  const auto* ramp = index.as<RampNode>();
  int64_t stride = 0;
  return ramp != nullptr && IsConstInt(ramp->stride, &stride) && stride == 1;
}

class GatherSplitter : public StmtExprMutator {
 public:
  using StmtExprMutator::VisitExpr_;

  PrimExpr VisitExpr_(const BufferLoadNode* op) override {
    PrimExpr e = StmtExprMutator::VisitExpr_(op);
    const auto* load = e.as<BufferLoadNode>();
    // A buffer of vector elements reads lanes x its element's lanes: left alone.
    if (load == nullptr || load->indices.size() != 1 || load->buffer->dtype.lanes() != 1) {
      return e;
    }
    const PrimExpr& index = load->indices[0];
    const int lanes = index.dtype().lanes();
    if (lanes < 2 * kMinRunLanes || IsContiguous(index) || index.as<BroadcastNode>()) return e;
    for (int run = lanes / 2; run >= kMinRunLanes; run /= 2) {
      if (lanes % run != 0) continue;
      Array<PrimExpr> parts;
      for (int begin = 0; begin < lanes; begin += run) {
        PrimExpr part;
        try {
          part = LaneSlicer(begin, run).VisitExpr(index);
        } catch (const NotSliceable&) {
          return e;
        }
        part = analyzer_.Simplify(part);
        if (!IsContiguous(part)) break;
        parts.push_back(BufferLoad(load->buffer, {part}));
      }
      if (static_cast<int>(parts.size()) * run != lanes) continue;
      Array<PrimExpr> order;
      for (int lane = 0; lane < lanes; ++lane)
        order.push_back(make_const(DataType::Int(32), int64_t{lane}));
      return Shuffle(parts, order);
    }
    return e;
  }

 private:
  arith::Analyzer analyzer_;
};

}  // namespace

Pass SplitGathers() {
  auto rewrite = [](const PrimFunc& func, const IRModule&, const PassContext&) {
    return WithBody(func, GatherSplitter().VisitStmt(func->body));
  };
  return CreatePrimFuncPass(rewrite, 1, "SplitGathers");
}

}  // namespace loom::tir::transform
