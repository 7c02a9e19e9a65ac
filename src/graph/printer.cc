// The text form of graph expressions: one numbered binding per operator call, tuple and
// projection, in dataflow order, like Relay's text format.
//
//   fn (%x: Tensor[(1, 16), float32]) -> Tensor[(1, 16), float32] {
//     %0 = nn.dense(%x, meta[Constant 'fc.weight' Tensor[(16, 16), float32]], units=16) /* fc */;
//     %1 = nn.relu(%0);
//     %1
//   }
#include <algorithm>
#include <ostream>
#include <sstream>
#include <unordered_map>

#include "loom/graph/functor.h"

namespace loom::graph {

namespace {

class Printer {
 public:
  std::string Print(const Expr& root) {
    const auto* function = root.as<FunctionNode>();
    Expr body = function ? function->body : root;
    // Operands before users, not descending into called functions (printed after).
    PostOrderVisitDataflow(body, [&](const Expr& e) { Bind(e); });
    std::ostringstream out;
    if (function) {
      out << "fn (";
      for (size_t i = 0; i < function->params.size(); ++i) {
        const Var& param = function->params[i];
        out << (i ? ", " : "") << "%" << param->name_hint << ": " << param.type().str();
      }
      out << ") -> " << function->checked_type.str() << " {\n";
    }
    const std::string indent = function ? "  " : "";
    out << lines_.str();
    out << indent << Ref(body) << "\n";
    if (function) out << "}\n";
    for (const auto& [name, callee] : callees_) out << name << " = " << Printer().Print(callee);
    return out.str();
  }

 private:
  std::string Ref(const Expr& e) {
    if (const auto* var = e.as<VarNode>()) return "%" + var->name_hint;
    if (const auto* constant = e.as<ConstantNode>()) {
      return "meta[Constant" +
             (constant->name_hint.empty() ? "" : " '" + constant->name_hint + "'") + " " +
             constant->checked_type.str() + "]";
    }
    auto it = names_.find(e.get());
    LOOM_ICHECK(it != names_.end()) << "printing an expression before its operands";
    return it->second;
  }

  void Bind(const Expr& e) {
    if (e.as<VarNode>() || e.as<ConstantNode>()) return;
    std::string value;
    std::string comment;
    if (const auto* call = e.as<CallNode>()) {
      value = (call->op ? call->op->name : CalleeName(call->callee)) + "(";
      for (size_t i = 0; i < call->args.size(); ++i) value += (i ? ", " : "") + Ref(call->args[i]);
      std::string attrs = call->attrs.str();
      if (!attrs.empty()) value += (call->args.empty() ? "" : ", ") + attrs;
      value += ")";
      if (!call->name_hint.empty()) comment = " /* " + call->name_hint + " */";
    } else if (const auto* tuple = e.as<TupleNode>()) {
      value = "(";
      for (size_t i = 0; i < tuple->fields.size(); ++i) {
        value += (i ? ", " : "") + Ref(tuple->fields[i]);
      }
      value += tuple->fields.size() == 1 ? ",)" : ")";
    } else if (const auto* item = e.as<TupleGetItemNode>()) {
      value = Ref(item->tuple) + "." + std::to_string(item->index);
    } else {
      LOOM_ICHECK(false) << "a nested " << ExprKindName(e->expr_kind) << " in a graph body";
    }
    std::string name = "%" + std::to_string(names_.size());
    names_[e.get()] = name;
    lines_ << "  " << name << " = " << value << comment << ";\n";
  }

  // "@name" of a called function ("@fused_N" when it has no "name" attribute), numbered
  // apart when two distinct functions share a name.
  std::string CalleeName(const Expr& callee) {
    for (const auto& [name, known] : callees_) {
      if (known.same_as(callee)) return name;
    }
    const auto* function = callee.as<FunctionNode>();
    std::string base = function->attrs.Has("name") ? function->attrs.GetString("name") : "fused";
    std::string name = "@" + base;
    for (int copy = 1; std::any_of(callees_.begin(), callees_.end(),
                                   [&](const auto& known) { return known.first == name; });
         ++copy) {
      name = "@" + base + "_" + std::to_string(copy);
    }
    callees_.emplace_back(name, callee);
    return name;
  }

  std::unordered_map<const Object*, std::string> names_;
  std::vector<std::pair<std::string, Expr>> callees_;
  std::ostringstream lines_;
};

}  // namespace

std::string ToText(const Expr& expr) { return Printer().Print(expr); }

std::ostream& operator<<(std::ostream& os, const Expr& expr) { return os << ToText(expr); }

}  // namespace loom::graph
