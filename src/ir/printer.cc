#include "loom/ir/printer.h"

#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"

namespace loom {

namespace {

// Binding strength, higher binds tighter (Python's operator precedence).
enum Precedence : int {
  kLowest = 0,
  kOr = 1,
  kAnd = 2,
  kNot = 3,
  kCompare = 4,
  kAdditive = 5,
  kMultiplicative = 6,
  kUnary = 7,
  kAtom = 8,
};

std::string QuoteString(const std::string& s) {
  std::ostringstream os;
  os << '"';
  for (char c : s) {
    switch (c) {
      case '"': os << "\\\""; break;
      case '\\': os << "\\\\"; break;
      case '\n': os << "\\n"; break;
      case '\t': os << "\\t"; break;
      default: os << c;
    }
  }
  os << '"';
  return os.str();
}

// The shortest decimal that reads back as the same value of the constant's type, so that a
// float32 0.1 prints as 0.1 rather than as the 17 digits of the double that holds it.
std::string FormatFloat(double value, DataType t) {
  // Non-finite values print as the strings Python's float() reads: T.float32("inf").
  if (std::isnan(value)) return "\"nan\"";
  if (std::isinf(value)) return value > 0 ? "\"inf\"" : "\"-inf\"";
  bool single = t.bits() <= 32;
  std::string s;
  for (int digits = 1; digits <= 17; ++digits) {
    std::ostringstream os;
    os << std::setprecision(digits) << value;
    s = os.str();
    double parsed = std::strtod(s.c_str(), nullptr);
    if (single ? static_cast<float>(parsed) == static_cast<float>(value) : parsed == value) break;
  }
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

class ScriptPrinter : public ExprFunctor<std::string(const PrimExpr&, int*)>,
                      public StmtFunctor<void(const Stmt&)> {
 public:
  std::string Print(const ObjectRef& node) {
    if (!node.defined()) return "None";
    if (const auto* e = node.as<ExprNode>()) {
      (void)e;
      return Expr(Downcast<PrimExpr>(node));
    }
    if (node.as<StmtNode>()) {
      VisitStmt(Downcast<Stmt>(node));
      return out_.str();
    }
    if (const auto* r = node.as<RangeNode>()) {
      return Cat({"T.Range(", Expr(r->min), ", ", Expr(r->extent), ")"});
    }
    if (const auto* iv = node.as<IterVarNode>()) return PrintIterVar(*iv);
    if (const auto* b = node.as<BufferNode>()) return BufferDecl(*b);
    if (const auto* op = node.as<OpNode>()) return "T." + op->name;
    if (const auto* r = node.as<CommReducerNode>()) return PrintReducer(*r);
    if (const auto* f = node.as<PrimFuncNode>()) {
      PrintFunc(*f);
      return out_.str();
    }
    return std::string("<") + NodeKindName(node.kind()) + ">";
  }

 private:
  // ------------------------------------------------------------ names
  std::string NameOf(const Object* var, const std::string& hint) {
    auto it = names_.find(var);
    if (it != names_.end()) return it->second;
    std::string base = hint.empty() ? "v" : hint;
    std::string name = base;
    for (int i = 1; used_names_.count(name); ++i) name = base + "_" + std::to_string(i);
    used_names_.insert(name);
    names_.emplace(var, name);
    return name;
  }
  std::string VarName(const Var& v) { return NameOf(v.get(), v->name_hint); }
  std::string BufferName(const Buffer& b) { return NameOf(b.get(), b->name); }

  // ------------------------------------------------------------ expressions
  std::string Expr(const PrimExpr& e, int min_precedence = kLowest) {
    int precedence = kAtom;
    std::string text = VisitExpr(e, &precedence);
    return precedence < min_precedence ? "(" + text + ")" : text;
  }

  std::string Binary(const PrimExpr& a, const PrimExpr& b, const char* op, int precedence,
                     int* out_precedence) {
    *out_precedence = precedence;
    // Left-associative: the right operand needs parentheses at equal precedence.
    return Cat({Expr(a, precedence), " ", op, " ", Expr(b, precedence + 1)});
  }

  // Names are given on first print, so the parts of one text must be printed left to right:
  // the operands of `+` are unsequenced, the elements of a braced list are not.
  static std::string Cat(std::initializer_list<std::string> parts) {
    std::string s;
    for (const std::string& part : parts) s += part;
    return s;
  }

  std::string Call(const std::string& fn, std::initializer_list<std::string> args) {
    std::string s = fn + "(";
    bool first = true;
    for (const std::string& a : args) {
      s += (first ? "" : ", ") + a;
      first = false;
    }
    return s + ")";
  }

  std::string ExprList(const Array<PrimExpr>& list) {
    std::string s;
    for (size_t i = 0; i < list.size(); ++i) s += (i ? ", " : "") + Expr(list[i]);
    return s;
  }

  std::string VisitExpr_(const IntImmNode* op, int*) override {
    if (op->dtype.is_bool()) return op->value ? "T.bool(True)" : "T.bool(False)";
    if (op->dtype == DataType::Int(32)) return std::to_string(op->value);
    return "T." + op->dtype.str() + "(" + std::to_string(op->value) + ")";
  }
  std::string VisitExpr_(const FloatImmNode* op, int*) override {
    return "T." + op->dtype.str() + "(" + FormatFloat(op->value, op->dtype) + ")";
  }
  std::string VisitExpr_(const StringImmNode* op, int*) override { return QuoteString(op->value); }
  std::string VisitExpr_(const VarNode* op, int*) override {
    return NameOf(op, op->name_hint);
  }
  std::string VisitExpr_(const CastNode* op, int*) override {
    return Call("T.Cast", {QuoteString(op->dtype.str()), Expr(op->value)});
  }
  std::string VisitExpr_(const AddNode* op, int* p) override {
    return Binary(op->a, op->b, "+", kAdditive, p);
  }
  std::string VisitExpr_(const SubNode* op, int* p) override {
    return Binary(op->a, op->b, "-", kAdditive, p);
  }
  std::string VisitExpr_(const MulNode* op, int* p) override {
    return Binary(op->a, op->b, "*", kMultiplicative, p);
  }
  std::string VisitExpr_(const DivNode* op, int* p) override {
    if (op->dtype.is_float()) return Binary(op->a, op->b, "/", kMultiplicative, p);
    return Call("T.truncdiv", {Expr(op->a), Expr(op->b)});
  }
  std::string VisitExpr_(const ModNode* op, int*) override {
    return Call("T.truncmod", {Expr(op->a), Expr(op->b)});
  }
  std::string VisitExpr_(const FloorDivNode* op, int* p) override {
    return Binary(op->a, op->b, "//", kMultiplicative, p);
  }
  std::string VisitExpr_(const FloorModNode* op, int* p) override {
    return Binary(op->a, op->b, "%", kMultiplicative, p);
  }
  std::string VisitExpr_(const MinNode* op, int*) override {
    return Call("T.min", {Expr(op->a), Expr(op->b)});
  }
  std::string VisitExpr_(const MaxNode* op, int*) override {
    return Call("T.max", {Expr(op->a), Expr(op->b)});
  }
  // Comparisons do not chain in this printer: both operands bind tighter.
  std::string Compare(const PrimExpr& a, const PrimExpr& b, const char* op, int* p) {
    *p = kCompare;
    return Cat({Expr(a, kCompare + 1), " ", op, " ", Expr(b, kCompare + 1)});
  }
  std::string VisitExpr_(const EQNode* op, int* p) override { return Compare(op->a, op->b, "==", p); }
  std::string VisitExpr_(const NENode* op, int* p) override { return Compare(op->a, op->b, "!=", p); }
  std::string VisitExpr_(const LTNode* op, int* p) override { return Compare(op->a, op->b, "<", p); }
  std::string VisitExpr_(const LENode* op, int* p) override { return Compare(op->a, op->b, "<=", p); }
  std::string VisitExpr_(const GTNode* op, int* p) override { return Compare(op->a, op->b, ">", p); }
  std::string VisitExpr_(const GENode* op, int* p) override { return Compare(op->a, op->b, ">=", p); }
  std::string VisitExpr_(const AndNode* op, int* p) override {
    return Binary(op->a, op->b, "and", kAnd, p);
  }
  std::string VisitExpr_(const OrNode* op, int* p) override {
    return Binary(op->a, op->b, "or", kOr, p);
  }
  std::string VisitExpr_(const NotNode* op, int* p) override {
    *p = kNot;
    return "not " + Expr(op->a, kNot);
  }
  std::string VisitExpr_(const SelectNode* op, int*) override {
    return Call("T.Select", {Expr(op->condition), Expr(op->true_value), Expr(op->false_value)});
  }
  std::string VisitExpr_(const RampNode* op, int*) override {
    return Call("T.Ramp", {Expr(op->base), Expr(op->stride), std::to_string(op->lanes)});
  }
  std::string VisitExpr_(const BroadcastNode* op, int*) override {
    return Call("T.Broadcast", {Expr(op->value), std::to_string(op->lanes)});
  }
  std::string VisitExpr_(const ShuffleNode* op, int*) override {
    return Call("T.Shuffle", {"[" + ExprList(op->vectors) + "]", "[" + ExprList(op->indices) + "]"});
  }
  std::string VisitExpr_(const LetNode* op, int*) override {
    return Call("T.Let",
                {Expr(op->body), Cat({"where={", VarName(op->var), ": ", Expr(op->value), "}"})});
  }
  std::string VisitExpr_(const CallNode* op, int*) override {
    const std::string& name = op->op->name;
    if (name == "call_extern" || name == "call_pure_extern" || name == "call_llvm_pure_intrin") {
      return "T." + name + "(" + QuoteString(op->dtype.str()) + ", " + ExprList(op->args) + ")";
    }
    return "T." + name + "(" + ExprList(op->args) + ")";
  }
  std::string VisitExpr_(const BufferLoadNode* op, int*) override {
    return Cat({BufferName(op->buffer), "[", ExprList(op->indices), "]"});
  }
  std::string VisitExpr_(const ReduceNode* op, int*) override {
    std::string reducer = PrintReducer(*op->combiner.get());
    std::string sources = ExprList(op->source), inits = ExprList(op->init);
    std::string axes;
    for (size_t i = 0; i < op->axis.size(); ++i) {
      axes += (i ? ", " : "") + PrintIterVar(*op->axis[i].get());
    }
    return Cat({"T.reduce(", reducer, ", source=[", sources, "], init=[", inits, "], axis=[", axes,
                "], where=", Expr(op->condition), ", value_index=",
                std::to_string(op->value_index), ")"});
  }

  std::string PrintIterVar(const IterVarNode& iv) {
    std::string s = "T.iter_var(" + VarName(iv.var) + ", ";
    s += iv.dom.defined() ? Cat({"T.Range(", Expr(iv.dom->min), ", ", Expr(iv.dom->extent), ")"})
                          : "None";
    s += std::string(", \"") + IterVarTypeName(iv.iter_type) + "\"";
    if (!iv.thread_tag.empty()) s += ", " + QuoteString(iv.thread_tag);
    return s + ")";
  }

  std::string PrintReducer(const CommReducerNode& r) {
    std::string params, results, identities;
    for (size_t i = 0; i < r.lhs.size(); ++i) params += (i ? ", " : "") + VarName(r.lhs[i]);
    for (size_t i = 0; i < r.rhs.size(); ++i) params += ", " + VarName(r.rhs[i]);
    return Cat({"T.comm_reducer(lambda ", params, ": [", ExprList(r.result), "], [",
                ExprList(r.identity_element), "])"});
  }

  std::string BufferDecl(const BufferNode& b) {
    std::string s = "T.Buffer((" + ExprList(b.shape) + (b.shape.size() == 1 ? ",)" : ")") +
                    ", " + QuoteString(b.dtype.str());
    if (!b.strides.empty()) s += ", strides=(" + ExprList(b.strides) + ")";
    if (!is_zero_offset(b.elem_offset)) s += ", elem_offset=" + Expr(b.elem_offset);
    if (b.scope != "global") s += ", scope=" + QuoteString(b.scope);
    if (b.data_alignment != 64) s += ", align=" + std::to_string(b.data_alignment);
    if (b.offset_factor != 1) s += ", offset_factor=" + std::to_string(b.offset_factor);
    return s + ")";
  }
  static bool is_zero_offset(const PrimExpr& e) {
    int64_t v = -1;
    return IsConstInt(e, &v) && v == 0;
  }

  // ------------------------------------------------------------ statements
  void Line(const std::string& text) { out_ << std::string(indent_ * 4, ' ') << text << "\n"; }

  void Body(const Stmt& body) {
    ++indent_;
    VisitStmt(body);
    --indent_;
  }

  void VisitStmt_(const LetStmtNode* op) override {
    Line(Cat({VarName(op->var), ": T.", op->var.dtype().str(), " = ", Expr(op->value)}));
    VisitStmt(op->body);
  }
  void VisitStmt_(const AttrStmtNode* op) override {
    Line(Cat({"with T.attr(", Print(op->node), ", ", QuoteString(op->attr_key), ", ",
              Expr(op->value), "):"}));
    Body(op->body);
  }
  void VisitStmt_(const AssertStmtNode* op) override {
    Line(Cat({"assert ", Expr(op->condition), ", ", Expr(op->message)}));
    VisitStmt(op->body);
  }
  void VisitStmt_(const BufferStoreNode* op) override {
    Line(Cat({BufferName(op->buffer), "[", ExprList(op->indices), "] = ", Expr(op->value)}));
  }
  void VisitStmt_(const AllocateNode* op) override {
    std::string s = Cat({VarName(op->buffer_var), " = T.allocate([", ExprList(op->extents), "], ",
                         QuoteString(op->dtype.str()), ", ", QuoteString(op->storage_scope)});
    if (!is_const_true_expr(op->condition)) s += ", condition=" + Expr(op->condition);
    Line(s + ")");
    VisitStmt(op->body);
  }
  static bool is_const_true_expr(const PrimExpr& e) {
    int64_t v = 0;
    return IsConstInt(e, &v) && v == 1 && e.dtype().is_bool();
  }
  void VisitStmt_(const ForNode* op) override {
    std::string var = VarName(op->loop_var);
    std::string range;
    int64_t min = -1;
    bool zero_min = IsConstInt(op->min, &min) && min == 0;
    if (op->for_kind == ForKind::kSerial && zero_min && op->annotations.empty()) {
      range = "range(" + Expr(op->extent) + ")";
    } else {
      range = Cat({"T.", ForKindName(op->for_kind), "(", Expr(op->min), ", ",
                   Expr(op->min + op->extent)});
      if (op->for_kind == ForKind::kThreadBinding) {
        range += ", thread=" + QuoteString(op->thread_binding->thread_tag);
      }
      if (!op->annotations.empty()) {
        range += ", annotations={";
        bool first = true;
        for (const auto& [key, value] : op->annotations) {
          range += (first ? "" : ", ") + QuoteString(key) + ": " + Print(value);
          first = false;
        }
        range += "}";
      }
      range += ")";
    }
    Line("for " + var + " in " + range + ":");
    Body(op->body);
  }
  void VisitStmt_(const WhileNode* op) override {
    Line("while " + Expr(op->condition) + ":");
    Body(op->body);
  }
  void VisitStmt_(const IfThenElseNode* op) override {
    Line("if " + Expr(op->condition) + ":");
    Body(op->then_case);
    if (op->else_case.defined()) {
      Line("else:");
      Body(op->else_case);
    }
  }
  void VisitStmt_(const SeqStmtNode* op) override {
    for (const Stmt& s : op->seq) VisitStmt(s);
  }
  void VisitStmt_(const EvaluateNode* op) override { Line("T.evaluate(" + Expr(op->value) + ")"); }

  void PrintFunc(const PrimFuncNode& f) {
    std::unordered_map<const Object*, Buffer> buffer_of;
    for (const auto& [var, buffer] : f.buffer_map) buffer_of.emplace(var.get(), buffer);
    std::string params;
    for (size_t i = 0; i < f.params.size(); ++i) {
      const Var& p = f.params[i];
      auto it = buffer_of.find(p.get());
      params += i ? ", " : "";
      if (it != buffer_of.end()) {
        // The buffer takes the parameter's place (and its name); the handle itself, should
        // the body use it, reads as the buffer's data.
        std::string buffer = BufferName(it->second);
        names_.emplace(p.get(), buffer + ".data");
        params += buffer + ": " + BufferDecl(*it->second.get());
      } else {
        params += VarName(p) + ": T." + p.dtype().str();
      }
    }
    std::string name = "main";
    if (auto it = f.attrs.find("global_symbol"); it != f.attrs.end()) {
      if (const auto* s = it->second.as<StringImmNode>()) name = s->value;
    }
    Line("@T.prim_func");
    Line("def " + name + "(" + params + "):");
    ++indent_;
    for (const auto& [key, value] : f.attrs) {
      if (key != "global_symbol") Line("T.func_attr({" + QuoteString(key) + ": " + Print(value) + "})");
    }
    VisitStmt(f.body);
    --indent_;
  }

  std::ostringstream out_;
  int indent_ = 0;
  std::unordered_map<const Object*, std::string> names_;
  std::unordered_set<std::string> used_names_;
};

}  // namespace

std::string ToScript(const ObjectRef& node) { return ScriptPrinter().Print(node); }

std::ostream& operator<<(std::ostream& os, const ObjectRef& node) { return os << ToScript(node); }

}  // namespace loom
