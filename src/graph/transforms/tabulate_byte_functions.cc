// TabulateByteFunctions: an elementwise function of one 8-bit tensor, costly to compute (it
// calls a transcendental function: erf, exp, tanh, ...), becomes a lookup in a table of its
// 256 values.
//
//   f(q)  ->  take(f(every value of q's type), cast(q, int32) [+ 128 for int8])
//
// f is a chain of elementwise and broadcast operators whose only non-constant input, along
// every path, is q, and whose other operands are scalar constants: a QDQ model's GELU (five
// operators, each quantized and dequantized again) or sigmoid of a quantized tensor. The
// table is f applied to a constant [256] tensor, which FoldConstant then computes with the
// target's own kernels (so the table holds what those kernels compute at run time, bit for
// bit); at run time a gather of one table entry per element replaces the chain. A chain
// without a costly operator stays: a gather costs as much as a few multiplies and adds.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "graph/transforms/map_functions.h"
#include "loom/graph/functor.h"
#include "loom/graph/transform.h"

namespace loom::graph {
namespace {

bool IsByte(DataType t) { return t == DataType::UInt(8) || t == DataType::Int(8); }

// A constant of one element, or a computation of one from constants alone (the importer's
// cast of a zero point, which FoldConstant folds later).
bool IsScalarConstant(const Expr& e) {
  std::optional<std::vector<int64_t>> shape = e.type().ConstShape();
  return e.type().is_tensor() && shape &&
         std::all_of(shape->begin(), shape->end(), [](int64_t d) { return d == 1; }) &&
         IsConstantExpr(e);
}

bool IsCostly(const CallNode& call) {
  static const std::unordered_set<std::string> kCostly = {
      "erf", "exp", "log", "tanh", "sigmoid", "sqrt", "rsqrt", "power", "sin", "cos", "nn.gelu"};
  return kCostly.count(call.op->name) > 0;
}

// Where each expression's value comes from, for the tabulation: the one 8-bit expression a
// chain of elementwise operators on scalar constants computes it from (its source), and
// whether the chain calls a costly operator.
class ChainAnalysis {
 public:
  struct Chain {
    Expr source;  // undefined: no chain
    bool costly = false;
  };

  explicit ChainAnalysis(const Expr& body) {
    PostOrderVisit(body, [&](const Expr& e) { chains_[e.get()] = Analyze(e); });
  }

  // The chain of an expression of the body (none for others: the function itself).
  Chain Of(const Expr& e) const {
    auto it = chains_.find(e.get());
    return it == chains_.end() ? Chain{} : it->second;
  }

 private:
  Chain Analyze(const Expr& e) {
    Chain chain;
    if (const auto* call = e.as<CallNode>(); call != nullptr && Elementwise(*call)) {
      for (const Expr& arg : call->args) {
        if (IsScalarConstant(arg)) continue;
        const Chain& input = chains_.at(arg.get());
        if (!input.source.defined() ||
            (chain.source.defined() && !input.source.same_as(chain.source))) {
          chain.source = Expr();
          break;
        }
        chain.source = input.source;
        chain.costly |= input.costly;
      }
      if (chain.source.defined()) {
        chain.costly |= IsCostly(*call);
        return chain;
      }
    }
    // Not a chain of its own: an 8-bit value starts one.
    if (e.type().is_tensor() && IsByte(e.type().dtype())) return {e, false};
    return {};
  }

  // An elementwise operator call whose result has the shape of each of its non-scalar inputs.
  static bool Elementwise(const CallNode& call) {
    if (call.op == nullptr || !call.op->compute ||
        call.op->pattern > OpPattern::kBroadcast || !call.checked_type.is_tensor()) {
      return false;
    }
    bool has_input = false;
    for (const Expr& arg : call.args) {
      if (IsScalarConstant(arg)) continue;
      std::optional<std::vector<int64_t>> shape = arg.type().ConstShape();
      if (!arg.type().is_tensor() || !shape || shape != call.checked_type.ConstShape()) {
        return false;
      }
      has_input = true;
    }
    return has_input;
  }

  std::unordered_map<const Object*, Chain> chains_;
};

class Tabulator : public ExprMutator {
 public:
  explicit Tabulator(const Function& function) : analysis_(function->body) {
    // The chains something outside them reads: the function's result and the operands of
    // calls that are not the same chain's.
    PostOrderVisit(function->body, [&](const Expr& e) {
      const auto* call = e.as<CallNode>();
      if (call == nullptr) return;
      const ChainAnalysis::Chain consumer = analysis_.Of(e);
      for (const Expr& arg : call->args) {
        const ChainAnalysis::Chain chain = analysis_.Of(arg);
        if (chain.source.defined() && !chain.source.same_as(consumer.source)) {
          read_.insert(arg.get());
        }
      }
    });
    read_.insert(function->body.get());
  }

  Expr VisitExpr(const Expr& e) override {
    const ChainAnalysis::Chain chain = analysis_.Of(e);
    if (!chain.source.defined() || chain.source.same_as(e) || !chain.costly ||
        !read_.count(e.get())) {
      return ExprMutator::VisitExpr(e);
    }
    auto it = tables_.find(e.get());
    if (it != tables_.end()) return it->second;
    const Expr& source = chain.source;
    // The table: the chain on every value of the source's type, in the order of the index.
    const DataType byte = source.type().dtype();
    runtime::NDArray values = runtime::NDArray::Empty({256}, byte);
    for (int v = 0; v < 256; ++v) {
      if (byte.is_uint()) static_cast<uint8_t*>(values.data())[v] = static_cast<uint8_t>(v);
      else static_cast<int8_t*>(values.data())[v] = static_cast<int8_t>(v - 128);
    }
    Expr all = MakeConstant(values, "byte_values");
    std::unordered_map<const Object*, Expr> rebuilt = {{source.get(), all}};
    Expr table = Rebuild(e, &rebuilt);
    Expr index = MakeCall("cast", {ExprMutator::VisitExpr(source)}, {{"dtype", std::string("int32")}});
    if (!byte.is_uint()) index = MakeCall("add", {index, MakeScalarConstant(128, DataType::Int(32))});
    const auto* call = e.as<CallNode>();
    Expr lookup = MakeCall("take", {table, index}, {{"axis", int64_t{0}}},
                           call != nullptr ? call->name_hint : "");
    tables_.emplace(e.get(), lookup);
    return lookup;
  }

 private:
  // The chain e with its source replaced by the constant of every value (`rebuilt` holds
  // that, and each node rebuilt once: a chain reads its source along several paths, as
  // GELU's x * erf(x)); its constants kept.
  static Expr Rebuild(const Expr& e, std::unordered_map<const Object*, Expr>* rebuilt) {
    if (auto it = rebuilt->find(e.get()); it != rebuilt->end()) return it->second;
    const auto* call = e.as<CallNode>();
    if (call == nullptr || IsScalarConstant(e)) return e;
    std::vector<Expr> args;
    for (const Expr& arg : call->args) args.push_back(Rebuild(arg, rebuilt));
    Expr result = MakeCall(call->op, std::move(args), call->attrs, call->name_hint);
    rebuilt->emplace(e.get(), result);
    return result;
  }

  ChainAnalysis analysis_;
  std::unordered_set<const Object*> read_;
  std::unordered_map<const Object*, Expr> tables_;
};

}  // namespace

Pass TabulateByteFunctions() {
  return {"TabulateByteFunctions", [](const IRModule& module) {
            return MapFunctions(module, [](const Function& function) {
              return Tabulator(function).VisitExpr(function);
            });
          }};
}

}  // namespace loom::graph
