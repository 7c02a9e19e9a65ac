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

// Lanes [begin, begin + count) of an index built from ramps, broadcasts and integer
// arithmetic; undefined for any other expression.
PrimExpr LanesOf(const PrimExpr& e, int begin, int count) {
  if (e.dtype().lanes() == 1) return e;
  if (const auto* ramp = e.as<RampNode>()) {
    return Ramp(ramp->base + make_const(ramp->base.dtype(), int64_t{begin}) * ramp->stride,
                ramp->stride, count);
  }
  if (const auto* broadcast = e.as<BroadcastNode>()) return Broadcast(broadcast->value, count);
  auto binary = [&](const auto* node, auto make) -> PrimExpr {
    PrimExpr a = LanesOf(node->a, begin, count), b = LanesOf(node->b, begin, count);
    if (!a.defined() || !b.defined()) return PrimExpr();
    return make(a, b);
  };
  if (const auto* n = e.as<AddNode>())
    return binary(n, [](auto a, auto b) { return PrimExpr(Add(a, b)); });
  if (const auto* n = e.as<SubNode>())
    return binary(n, [](auto a, auto b) { return PrimExpr(Sub(a, b)); });
  if (const auto* n = e.as<MulNode>())
    return binary(n, [](auto a, auto b) { return PrimExpr(Mul(a, b)); });
  if (const auto* n = e.as<FloorDivNode>()) {
    return binary(n, [](auto a, auto b) { return PrimExpr(FloorDiv(a, b)); });
  }
  if (const auto* n = e.as<FloorModNode>()) {
    return binary(n, [](auto a, auto b) { return PrimExpr(FloorMod(a, b)); });
  }
  if (const auto* n = e.as<MinNode>())
    return binary(n, [](auto a, auto b) { return PrimExpr(Min(a, b)); });
  if (const auto* n = e.as<MaxNode>())
    return binary(n, [](auto a, auto b) { return PrimExpr(Max(a, b)); });
  return PrimExpr();
}

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
        PrimExpr part = LanesOf(index, begin, run);
        if (!part.defined()) return e;
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
