// EmulateMatrixOperations: warp matrix operations (tir::builtin::kMmaLoad, ...) as loops, for
// a device whose target has no instructions for them. Every thread keeps its own copy of
// each fragment, a row-major 16x16 tile of float32 (the fragment allocation becomes a "local"
// float32 array of the same number of elements), and runs each operation whole:
//
//   loom_mma_load(a, 1, address_of(S[base]), 40)
//     ->  for r, c < 16:  a[256 + 16 r + c] = float32(S[base + 40 r + c])
//   loom_mma_sync(d, i, a, j, b, k, c, l)
//     ->  for r, c < 16:  d[256 i + 16 r + c] = c[256 l + 16 r + c];
//                         for t < 16:  d[...] += a[256 j + 16 r + t] * b[256 k + 16 t + c]
//
// What a warp computes together, each of its threads computes alone, so the results are the
// instructions' (up to the order of the float32 sums; products of 16-bit floats are exact in
// float32), and a store writes the same values from every thread of the warp. Slow, but any
// device runs the tensor-core schedules with it: the tests run them through PoCL.
#include <functional>
#include <unordered_map>
#include <utility>

#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"
#include "loom/support/error.h"
#include "loom/tir/transform.h"

namespace loom::tir::transform {

namespace {

constexpr int64_t kTile = builtin::kMatrixTile;
constexpr int64_t kTileElements = kTile * kTile;
const DataType kFragmentType = DataType::Float(32);

bool IsFragmentScope(const std::string& scope) {
  return scope == builtin::kMatrixA || scope == builtin::kMatrixB || scope == builtin::kAccumulator;
}

PrimExpr Int(int64_t value) { return make_const(DataType::Int(32), value); }

class Emulator : public StmtExprMutator {
 public:
  explicit Emulator(std::function<bool(DataType)> native) : native_(std::move(native)) {}

  // Whether the kernel has a fragment of a type the target has no instructions for.
  bool NeedsEmulation(const Stmt& body) const {
    bool needed = false;
    PostOrderVisit(body, [&](const ObjectRef& node) {
      const auto* op = node.as<AllocateNode>();
      // The operand fragments' types decide (the accumulators are float32 for both).
      if (op != nullptr &&
          (op->storage_scope == builtin::kMatrixA || op->storage_scope == builtin::kMatrixB) &&
          !native_(op->dtype)) {
        needed = true;
      }
    });
    return needed;
  }

  using StmtExprMutator::VisitStmt_;

  Stmt VisitStmt_(const AllocateNode* op) override {
    if (!IsFragmentScope(op->storage_scope)) return StmtExprMutator::VisitStmt_(op);
    Buffer fragment(op->buffer_var, kFragmentType, op->extents, {}, Int(0),
                    op->buffer_var->name_hint, "local", 64, 1);
    fragments_.emplace(op->buffer_var.get(), fragment);
    return Allocate(op->buffer_var, kFragmentType, op->extents, op->condition, VisitStmt(op->body),
                    "local");
  }

  Stmt VisitStmt_(const EvaluateNode* op) override {
    const auto* call = op->value.as<CallNode>();
    if (call == nullptr) return StmtExprMutator::VisitStmt_(op);
    const std::string& name = call->op.name();
    const Array<PrimExpr>& args = call->args;
    if (name == builtin::kMmaFill) {
      Var e("e", DataType::Int(32));
      return Loop(e, kTileElements,
                  BufferStore(Fragment(args[0]), cast(kFragmentType, args[2]),
                              {args[1] * Int(kTileElements) + e}));
    }
    if (name == builtin::kMmaLoad) {
      return OverTile([&](const PrimExpr& r, const PrimExpr& c) {
        auto [memory, base] = Memory(args[2]);
        return BufferStore(Fragment(args[0]),
                           cast(kFragmentType, BufferLoad(memory, {base + r * args[3] + c})),
                           {Element(args[1], r, c)});
      });
    }
    if (name == builtin::kMmaStore) {
      return OverTile([&](const PrimExpr& r, const PrimExpr& c) {
        auto [memory, base] = Memory(args[0]);
        return BufferStore(
            memory, cast(memory->dtype, BufferLoad(Fragment(args[1]), {Element(args[2], r, c)})),
            {base + r * args[3] + c});
      });
    }
    if (name == builtin::kMmaSync) {
      const Buffer d = Fragment(args[0]), a = Fragment(args[2]), b = Fragment(args[4]),
                   c = Fragment(args[6]);
      return OverTile([&](const PrimExpr& row, const PrimExpr& column) {
        const PrimExpr at = Element(args[1], row, column);
        Var t("t", DataType::Int(32));
        Stmt accumulate =
            BufferStore(d,
                        BufferLoad(d, {at}) + BufferLoad(a, {Element(args[3], row, t)}) *
                                                  BufferLoad(b, {Element(args[5], t, column)}),
                        {at});
        return SeqStmt({BufferStore(d, BufferLoad(c, {Element(args[7], row, column)}), {at}),
                        Loop(t, kTile, accumulate)});
      });
    }
    return StmtExprMutator::VisitStmt_(op);
  }

 private:
  static Stmt Loop(const Var& var, int64_t extent, Stmt body) {
    return For(var, Int(0), Int(extent), ForKind::kSerial, std::move(body), IterVar(), {});
  }

  // `body(r, c)` for every element (r, c) of a tile.
  template <typename Body>
  static Stmt OverTile(Body body) {
    Var r("r", DataType::Int(32)), c("c", DataType::Int(32));
    return Loop(r, kTile, Loop(c, kTile, body(r, c)));
  }

  // The element (r, c) of fragment `index`.
  static PrimExpr Element(const PrimExpr& index, const PrimExpr& r, const PrimExpr& c) {
    return index * Int(kTileElements) + r * Int(kTile) + c;
  }

  const Buffer& Fragment(const PrimExpr& var) const {
    const auto* node = var.as<VarNode>();
    auto it = node == nullptr ? fragments_.end() : fragments_.find(node);
    LOOM_ICHECK(it != fragments_.end())
        << "EmulateMatrixOperations: a matrix operation's fragment is no fragment allocation";
    return it->second;
  }

  // The (flat) buffer and index of the first element an address_of names.
  static std::pair<Buffer, PrimExpr> Memory(const PrimExpr& address) {
    const auto* call = address.as<CallNode>();
    const auto* load = call != nullptr && call->op.name() == "address_of"
                           ? call->args[0].as<BufferLoadNode>()
                           : nullptr;
    LOOM_ICHECK(load != nullptr && load->indices.size() == 1)
        << "EmulateMatrixOperations: a matrix operation's memory is no address_of of a flat "
        << "buffer's element";
    return {load->buffer, load->indices[0]};
  }

  std::function<bool(DataType)> native_;
  std::unordered_map<const VarNode*, Buffer> fragments_;
};

}  // namespace

Pass EmulateMatrixOperations(std::function<bool(DataType operand)> native) {
  return CreatePrimFuncPass(
      [native](const PrimFunc& func, const IRModule&, const PassContext&) {
        if (!IsDeviceKernel(func)) return func;
        Emulator emulator(native);
        if (!emulator.NeedsEmulation(func->body)) return func;
        return WithBody(func, emulator.VisitStmt(func->body));
      },
      0, "EmulateMatrixOperations");
}

}  // namespace loom::tir::transform
