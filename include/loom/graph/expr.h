// The graph IR: a typed dataflow graph over tensors (the Relay subset a model needs).
//
//   Var x = Var("x", TensorType({1, 16}, f32));
//   Expr y = Call("nn.relu", {Call("add", {x, Constant(bias)})}, {}, "relu_1");
//   Function f = Function({x}, y);
//   std::cout << f;   // fn (%x: Tensor[(1, 16), float32]) { %0 = add(%x, meta[0]); ... }
//
// Nodes are immutable, shared by reference (a DAG: an expression used twice is one node),
// and typed when built: Call runs its operator's type relation, so a shape error surfaces
// where the call is made, naming the call, the operator and the shapes. Variables compare
// by identity; names are for printing and messages.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "loom/graph/attrs.h"
#include "loom/graph/op.h"
#include "loom/graph/type.h"
#include "loom/ir/object.h"
#include "loom/runtime/ndarray.h"

namespace loom::graph {

enum class ExprKind : uint8_t {
#define LOOM_GRAPH_EXPR(Name) k##Name,
#include "loom/graph/expr_table.def"
};
const char* ExprKindName(ExprKind kind);

struct ExprNode : Object {
  ExprNode(ExprKind expr_kind, Type type)
      : Object(NodeKind::kOther), expr_kind(expr_kind), checked_type(std::move(type)) {}
  const ExprKind expr_kind;
  // The expression's type: a tensor or tuple type (a Function's is its result's).
  const Type checked_type;
  static constexpr const char* kName = "graph::Expr";
  static bool IsInstance(const Object* o) { return dynamic_cast<const ExprNode*>(o); }
};

class Expr : public ObjectRef {
 public:
  using ContainerType = ExprNode;
  Expr() = default;
  explicit Expr(const Object* ptr) : ObjectRef(ptr) {}
  const ExprNode* operator->() const { return static_cast<const ExprNode*>(ptr_); }
  const Type& type() const { return operator->()->checked_type; }
  static Expr FromObject(const Object* ptr) { return Expr(ptr); }
};

#define LOOM_GRAPH_NODE_HEAD(Name)                                                        \
  static constexpr ExprKind kKind = ExprKind::k##Name;                                    \
  static constexpr const char* kName = "graph::" #Name;                                   \
  static bool IsInstance(const Object* o) {                                               \
    const auto* e = dynamic_cast<const ExprNode*>(o);                                     \
    return e && e->expr_kind == kKind;                                                    \
  }
#define LOOM_GRAPH_HANDLE(Name)                                                           \
  class Name : public Expr {                                                              \
   public:                                                                                \
    using ContainerType = Name##Node;                                                     \
    Name() = default;                                                                     \
    explicit Name(const Name##Node* ptr) : Expr(ptr) {}                                   \
    const Name##Node* operator->() const { return static_cast<const Name##Node*>(ptr_); } \
    const Name##Node* get() const { return operator->(); }                                \
    static Name FromObject(const Object* ptr) {                                           \
      return Name(static_cast<const Name##Node*>(ptr));                                   \
    }                                                                                     \
  };

// A named input of a function (a model input or parameter).
struct VarNode : ExprNode {
  LOOM_GRAPH_NODE_HEAD(Var)
  VarNode(std::string name_hint, Type type)
      : ExprNode(kKind, std::move(type)), name_hint(std::move(name_hint)) {}
  const std::string name_hint;
};
LOOM_GRAPH_HANDLE(Var)

// A constant tensor (weights); name_hint names it in messages and in the artifact.
struct ConstantNode : ExprNode {
  LOOM_GRAPH_NODE_HEAD(Constant)
  ConstantNode(runtime::NDArray data, std::string name_hint, Type type)
      : ExprNode(kKind, std::move(type)), data(std::move(data)), name_hint(std::move(name_hint)) {}
  const runtime::NDArray data;
  const std::string name_hint;
};
LOOM_GRAPH_HANDLE(Constant)

// An operator applied to arguments; attrs are checked against the operator's schema.
// name_hint is the model node's name ("" when it has none), for messages and debugging.
// After FuseOps a call may instead apply a primitive Function (a fused group): then op is
// null and `callee` is that function.
struct CallNode : ExprNode {
  LOOM_GRAPH_NODE_HEAD(Call)
  CallNode(const OpDef* op, Expr callee, std::vector<Expr> args, Attrs attrs,
           std::string name_hint, Type type)
      : ExprNode(kKind, std::move(type)),
        op(op),
        callee(std::move(callee)),
        args(std::move(args)),
        attrs(std::move(attrs)),
        name_hint(std::move(name_hint)) {}
  const OpDef* const op;
  const Expr callee;
  const std::vector<Expr> args;
  const Attrs attrs;
  const std::string name_hint;
  // What messages call it: "nn.conv2d 'conv_3'" or "nn.conv2d call".
  std::string Where() const;
  // The CallInfo its operator's functions receive.
  CallInfo Info() const;
};
LOOM_GRAPH_HANDLE(Call)

struct TupleNode : ExprNode {
  LOOM_GRAPH_NODE_HEAD(Tuple)
  TupleNode(std::vector<Expr> fields, Type type)
      : ExprNode(kKind, std::move(type)), fields(std::move(fields)) {}
  const std::vector<Expr> fields;
};
LOOM_GRAPH_HANDLE(Tuple)

struct TupleGetItemNode : ExprNode {
  LOOM_GRAPH_NODE_HEAD(TupleGetItem)
  TupleGetItemNode(Expr tuple, int index, Type type)
      : ExprNode(kKind, std::move(type)), tuple(std::move(tuple)), index(index) {}
  const Expr tuple;
  const int index;
};
LOOM_GRAPH_HANDLE(TupleGetItem)

// A function of typed parameters; its type is its body's. attrs: "Primitive" = 1 marks a
// fused group (FuseOps), which lowering compiles into one kernel named by "name".
struct FunctionNode : ExprNode {
  LOOM_GRAPH_NODE_HEAD(Function)
  FunctionNode(std::vector<Var> params, Expr body, Attrs attrs, Type type)
      : ExprNode(kKind, std::move(type)),
        params(std::move(params)),
        body(std::move(body)),
        attrs(std::move(attrs)) {}
  const std::vector<Var> params;
  const Expr body;
  const Attrs attrs;
  bool primitive() const { return attrs.Has("Primitive") && attrs.GetInt("Primitive") != 0; }
};
LOOM_GRAPH_HANDLE(Function)

#undef LOOM_GRAPH_NODE_HEAD
#undef LOOM_GRAPH_HANDLE

// Factories: each checks its node and infers its type (a loom::Error when it is invalid).
Var MakeVar(std::string name_hint, Type type);
Constant MakeConstant(runtime::NDArray data, std::string name_hint = "");
// A 0-d constant holding `value` as `dtype` (a float type, rounded to it, or an integer type,
// which must hold the value exactly).
Constant MakeScalarConstant(double value, DataType dtype, std::string name_hint = "");
// Whether `e` is a constant, or a call of operators on constants only (what FoldConstant
// turns into one constant: a weight transposed, a dequantized bias).
bool IsConstantExpr(const Expr& e);
// The value of a one-element constant of float32 or an 8-bit integer type, or of a cast of
// one (as the ONNX importer writes a zero point); none for anything else.
std::optional<double> ScalarConstantValue(const Expr& e);
// Runs the operator's type relation on the arguments' types. Attributes the schema does not
// know, a missing required one, one of the wrong kind or a wrong argument count are
// errors naming the call.
Call MakeCall(const std::string& op, std::vector<Expr> args, Attrs attrs = {},
              std::string name_hint = "");
Call MakeCall(const OpDef* op, std::vector<Expr> args, Attrs attrs = {},
              std::string name_hint = "");
// cast(value) to `dtype`.
Call MakeCast(Expr value, DataType dtype);
// The integer form of `product` (an nn.conv2d or nn.dense call): qnn.conv2d / qnn.dense of 8-bit
// `data` and `weight` with these zero points and the product's other attributes but out_dtype
// (its result is int32), named as the product.
Call MakeIntegerProduct(const CallNode& product, Expr data, Expr weight, int64_t data_zero_point,
                        int64_t weight_zero_point);
// Applies a primitive function (a fused group) to arguments of its parameters' types.
Call MakeCall(Function callee, std::vector<Expr> args, std::string name_hint = "");
Tuple MakeTuple(std::vector<Expr> fields);
TupleGetItem MakeTupleGetItem(Expr tuple, int index);
// Every free variable of body must be a parameter (a function called in the body binds
// its own parameters).
Function MakeFunction(std::vector<Var> params, Expr body, Attrs attrs = {});

// The readable text form (printer.cc).
std::string ToText(const Expr& expr);
std::ostream& operator<<(std::ostream& os, const Expr& expr);

}  // namespace loom::graph
