// The text form of graph expressions: one numbered binding per operator call, tuple and
// projection, in dataflow order, like Relay's text format.
//
//   fn (%x: Tensor[(1, 16), float32]) -> Tensor[(1, 16), float32] {
//     %0 = nn.dense(%x, meta[Constant 'fc.weight' Tensor[(16, 16), float32]], units=16) /* fc */;
//     %1 = nn.relu(%0);
//     %1
//   }
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
    PostOrderVisit(body, [&](const Expr& e) { Bind(e); });
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
      value = call->op->name + "(";
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

  std::unordered_map<const Object*, std::string> names_;
  std::ostringstream lines_;
};

}  // namespace

std::string ToText(const Expr& expr) { return Printer().Print(expr); }

std::ostream& operator<<(std::ostream& os, const Expr& expr) { return os << ToText(expr); }

}  // namespace loom::graph
