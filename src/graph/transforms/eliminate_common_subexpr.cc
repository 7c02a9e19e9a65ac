// EliminateCommonSubexpr: calls of one operator (or one fused function) with equal
// attributes on the same arguments become one node, as do equal projections of one tuple.
// Operands are rewritten first, so chains of duplicates merge from the inputs up.
//
// Arguments are the same when they are one node, or constants of equal dtype, shape and
// bytes (a model often holds one weight twice). Constants themselves are kept, names and
// all: only the calls reading them merge.
#include <cstring>
#include <string_view>
#include <unordered_map>

#include "graph/transforms/map_functions.h"
#include "loom/graph/functor.h"
#include "loom/graph/transform.h"

namespace loom::graph {
namespace {

size_t HashCombine(size_t seed, size_t value) {
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

std::string_view Bytes(const ConstantNode& constant) {
  const runtime::NDArray& data = constant.data;
  LOOM_ICHECK(data.device().device_type == kDLCPU && data.IsContiguous())
      << "constant '" << constant.name_hint << "' is not a compact host array";
  return {static_cast<const char*>(data.data()), data.NumBytes()};
}

class CommonSubexprEliminator : public ExprMutator {
 public:
  Expr VisitExpr_(const CallNode* op) override {
    Expr rebuilt = ExprMutator::VisitExpr_(op);
    const auto* call = rebuilt.as<CallNode>();
    size_t hash = call->op ? std::hash<const void*>()(call->op)
                           : std::hash<const void*>()(call->callee.get());
    hash = HashCombine(hash, std::hash<std::string>()(call->attrs.str()));
    for (const Expr& arg : call->args) hash = HashCombine(hash, ArgHash(arg));
    return Canonical(rebuilt, hash, [&](const Expr& seen) {
      const auto* other = seen.as<CallNode>();
      if (other == nullptr || other->op != call->op || !other->callee.same_as(call->callee) ||
          !(other->attrs == call->attrs) || other->args.size() != call->args.size()) {
        return false;
      }
      for (size_t i = 0; i < call->args.size(); ++i) {
        if (!SameArg(other->args[i], call->args[i])) return false;
      }
      return true;
    });
  }

  Expr VisitExpr_(const TupleGetItemNode* op) override {
    Expr rebuilt = ExprMutator::VisitExpr_(op);
    const auto* item = rebuilt.as<TupleGetItemNode>();
    if (item == nullptr) return rebuilt;  // the field of a rebuilt Tuple
    size_t hash = HashCombine(ArgHash(item->tuple), static_cast<size_t>(item->index));
    return Canonical(rebuilt, hash, [&](const Expr& seen) {
      const auto* other = seen.as<TupleGetItemNode>();
      return other && other->index == item->index && other->tuple.same_as(item->tuple);
    });
  }

 private:
  // The first node seen with `hash` for which `equal` holds, else `e` (remembered).
  template <typename Equal>
  Expr Canonical(const Expr& e, size_t hash, const Equal& equal) {
    std::vector<Expr>& bucket = seen_[hash];
    for (const Expr& seen : bucket) {
      if (equal(seen)) return seen;
    }
    bucket.push_back(e);
    return e;
  }

  size_t ArgHash(const Expr& arg) {
    const auto* constant = arg.as<ConstantNode>();
    if (constant == nullptr) return std::hash<const void*>()(arg.get());
    auto [it, inserted] = constant_hashes_.try_emplace(constant);
    if (inserted) {
      it->second = HashCombine(std::hash<std::string>()(constant->checked_type.str()),
                               std::hash<std::string_view>()(Bytes(*constant)));
    }
    return it->second;
  }

  bool SameArg(const Expr& a, const Expr& b) {
    if (a.same_as(b)) return true;
    const auto* x = a.as<ConstantNode>();
    const auto* y = b.as<ConstantNode>();
    return x && y && ArgHash(a) == ArgHash(b) && Equal(x->checked_type, y->checked_type) &&
           Bytes(*x) == Bytes(*y);
  }

  // Candidates by hash.
  std::unordered_map<size_t, std::vector<Expr>> seen_;
  // By node: constants belong to the function being rewritten, which outlives this pass.
  std::unordered_map<const ConstantNode*, size_t> constant_hashes_;
};

}  // namespace

Pass EliminateCommonSubexpr() { return MutatorPass<CommonSubexprEliminator>("EliminateCommonSubexpr"); }

}  // namespace loom::graph
