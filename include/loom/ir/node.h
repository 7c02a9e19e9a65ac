// All IR node types and their handles, generated from node_table.def.
//
//   PrimExpr e = Add(x, 1);            // a handle; construction validates (Validate())
//   if (const AddNode* add = e.as<AddNode>()) use(add->a);
//
// Nodes are immutable once built: passes build new nodes (see functor.h's mutators, which
// return the very same node when nothing changed).
#pragma once

#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "loom/ir/object.h"
#include "loom/runtime/data_type.h"
#include "loom/support/preprocessor.h"

namespace loom {

template <typename T>
using Array = std::vector<T>;

enum class ForKind : uint8_t { kSerial, kParallel, kVectorized, kUnrolled, kThreadBinding };
const char* ForKindName(ForKind kind);

// What an IterVar iterates over (TVM's names).
enum class IterVarType : uint8_t {
  kDataPar,        // a data-parallel axis of the output
  kThreadIndex,    // bound to a GPU/accelerator thread index
  kCommReduce,     // a commutative reduction axis
  kOrdered,        // a sequential axis (scan)
  kOpaque,         // none of the above: no assumption
  kVirtualThread,  // a virtual thread (vthread), interleaved by InjectVirtualThread
};
const char* IterVarTypeName(IterVarType type);

// What a Call may do besides returning a value; passes may drop or reorder pure calls.
enum class CallEffect : uint8_t { kPure, kReadState, kUpdateState, kOpaque };
const char* CallEffectName(CallEffect effect);

// How structural equality treats a field (see node_table.def).
enum class FieldRole : uint8_t { kUse, kDef, kName };

#define LOOM_IR_FWD(Name, ...) \
  struct Name##Node;           \
  class Name;
#define LOOM_EXPR LOOM_IR_FWD
#define LOOM_STMT LOOM_IR_FWD
#define LOOM_NODE LOOM_IR_FWD
#include "loom/ir/node_table.def"
#undef LOOM_EXPR
#undef LOOM_STMT
#undef LOOM_NODE
#undef LOOM_IR_FWD
struct ExprNode;
struct StmtNode;

// ---------------------------------------------------------------- handle base classes

class PrimExpr : public ObjectRef {
 public:
  using ContainerType = ExprNode;
  PrimExpr() = default;
  explicit PrimExpr(const Object* ptr) : ObjectRef(ptr) {}
  // Literals convert implicitly, as in TVM: an int is an int32 IntImm, a float a float32
  // FloatImm. (Operators in expr_ops.h give literals the type of the other operand.)
  PrimExpr(int value);    // NOLINT(google-explicit-constructor)
  PrimExpr(float value);  // NOLINT(google-explicit-constructor)
  DataType dtype() const;
  const ExprNode* operator->() const;
  static PrimExpr FromObject(const Object* ptr) { return PrimExpr(ptr); }
};

class Stmt : public ObjectRef {
 public:
  using ContainerType = StmtNode;
  Stmt() = default;
  explicit Stmt(const Object* ptr) : ObjectRef(ptr) {}
  const StmtNode* operator->() const;
  static Stmt FromObject(const Object* ptr) { return Stmt(ptr); }
};

// Handle boilerplate shared by generated and hand-written handles. The adopting constructor
// takes only real pointers: with a plain `const Object*` parameter, `Evaluate(0)` would pick
// it (0 is a null pointer constant) over Evaluate(PrimExpr(0)) and yield a null handle.
#define LOOM_HANDLE_BODY(Name, Base)                                                  \
 public:                                                                              \
  using ContainerType = Name##Node;                                                   \
  Name() = default;                                                                   \
  template <typename PtrT,                                                            \
            typename = std::enable_if_t<std::is_convertible_v<PtrT*, const Object*>>> \
  explicit Name(PtrT* ptr) : Base(ptr) {}                                             \
  const Name##Node* operator->() const;                                               \
  const Name##Node* get() const;                                                      \
  static Name FromObject(const Object* ptr) { return Name(ptr); }

class Var : public PrimExpr {
  LOOM_HANDLE_BODY(Var, PrimExpr)
  // A fresh variable: equal only to itself (names are for printing).
  explicit Var(std::string name_hint, DataType dtype = DataType::Int(32));
  Var(const char* name_hint, DataType dtype = DataType::Int(32))  // NOLINT
      : Var(std::string(name_hint), dtype) {}
  const std::string& name() const;
};

// A variable known to be non-negative (a symbolic tensor dimension).
Var SizeVar(std::string name_hint, DataType dtype = DataType::Int(32));

class Op : public ObjectRef {
  LOOM_HANDLE_BODY(Op, ObjectRef)
  // The registered operator with this name; loom::Error listing close names if unknown.
  static Op Get(const std::string& name);
  const std::string& name() const;
};

using BufferMap = std::vector<std::pair<Var, Buffer>>;
using Annotations = std::map<std::string, ObjectRef>;

// ---------------------------------------------------------------- generated handles

#define LOOM_IR_PARAM(Role, Type, name) , Type name
#define LOOM_DTYPE_PARAM_Typed DataType dtype,
#define LOOM_DTYPE_PARAM_Derived
#define LOOM_DTYPE_PARAM_None
#define LOOM_HANDLE_Custom(Name, Base, DtypeMode, ...)
#define LOOM_HANDLE_Gen(Name, Base, DtypeMode, ...)                                 \
  class Name : public Base {                                                        \
    LOOM_HANDLE_BODY(Name, Base)                                                    \
    Name(LOOM_DTYPE_PARAM_##DtypeMode                                               \
             LOOM_PP_TAIL(~ LOOM_PP_FOR_EACH(LOOM_IR_PARAM, __VA_ARGS__)));         \
  };
#define LOOM_EXPR(Name, DtypeMode, HandleMode, ...) \
  LOOM_HANDLE_##HandleMode(Name, PrimExpr, DtypeMode, __VA_ARGS__)
#define LOOM_STMT(Name, HandleMode, ...) LOOM_HANDLE_##HandleMode(Name, Stmt, None, __VA_ARGS__)
// Range..PrimFunc come in dependency order in the table, so one pass declares them all.
#define LOOM_NODE(Name, HandleMode, ...) \
  LOOM_HANDLE_##HandleMode(Name, ObjectRef, None, __VA_ARGS__)
#include "loom/ir/node_table.def"
#undef LOOM_EXPR
#undef LOOM_STMT
#undef LOOM_NODE

// ---------------------------------------------------------------- node structs

struct ExprNode : Object {
  static constexpr const char* kName = "PrimExpr";
  explicit ExprNode(NodeKind kind) : Object(kind) {}
  DataType dtype;
  static bool IsInstance(const Object* o) { return static_cast<int>(o->kind()) < kNumExprKinds; }
};

struct StmtNode : Object {
  static constexpr const char* kName = "Stmt";
  explicit StmtNode(NodeKind kind) : Object(kind) {}
  static bool IsInstance(const Object* o) {
    int k = static_cast<int>(o->kind());
    return k >= kNumExprKinds && k < kNumExprKinds + kNumStmtKinds;
  }
};

#define LOOM_IR_MEMBER(Role, Type, name) Type name{};
#define LOOM_IR_VISIT_FIELD(Role, Type, name) f(#name, node.name, FieldRole::k##Role);
#define LOOM_IR_VISIT_FIELD_PAIR(Role, Type, name) \
  f(#name, lhs.name, rhs.name, FieldRole::k##Role);
#define LOOM_IR_STRUCT(Name, Base, ...)                                          \
  struct Name##Node final : Base {                                               \
    static constexpr NodeKind kKind = NodeKind::Name;                            \
    static constexpr const char* kName = #Name;                                  \
    static bool IsInstance(const Object* o) { return o->kind() == kKind; }       \
    Name##Node() : Base(kKind) {}                                                \
    LOOM_PP_FOR_EACH(LOOM_IR_MEMBER, __VA_ARGS__)                                \
    /* Checks the fields and sets derived ones (dtype); loom::Error if invalid. */ \
    void Validate();                                                             \
  };                                                                             \
  /* Field reflection: f(name, field, role) for each field in table order. */    \
  template <typename Fn>                                                         \
  void ForEachField(const Name##Node& node, Fn&& f) {                            \
    LOOM_PP_FOR_EACH(LOOM_IR_VISIT_FIELD, __VA_ARGS__)                           \
  }                                                                              \
  template <typename Fn>                                                         \
  void ForEachField(Name##Node& node, Fn&& f) {                                  \
    LOOM_PP_FOR_EACH(LOOM_IR_VISIT_FIELD, __VA_ARGS__)                           \
  }                                                                              \
  /* f(name, lhs_field, rhs_field, role): two nodes of one kind side by side. */ \
  template <typename Fn>                                                         \
  void ForEachFieldPair(const Name##Node& lhs, const Name##Node& rhs, Fn&& f) {  \
    LOOM_PP_FOR_EACH(LOOM_IR_VISIT_FIELD_PAIR, __VA_ARGS__)                      \
  }
#define LOOM_EXPR(Name, DtypeMode, HandleMode, ...) LOOM_IR_STRUCT(Name, ExprNode, __VA_ARGS__)
#define LOOM_STMT(Name, HandleMode, ...) LOOM_IR_STRUCT(Name, StmtNode, __VA_ARGS__)
#define LOOM_NODE(Name, HandleMode, ...) LOOM_IR_STRUCT(Name, Object, __VA_ARGS__)
#include "loom/ir/node_table.def"
#undef LOOM_EXPR
#undef LOOM_STMT
#undef LOOM_NODE
#undef LOOM_IR_STRUCT
#undef LOOM_IR_MEMBER
#undef LOOM_IR_VISIT_FIELD
#undef LOOM_IR_VISIT_FIELD_PAIR

// Handle accessors, now that the node types are complete.
#define LOOM_IR_ACCESSORS(Name, ...)                                             \
  inline const Name##Node* Name::get() const {                                   \
    return static_cast<const Name##Node*>(ObjectRef::get());                     \
  }                                                                              \
  inline const Name##Node* Name::operator->() const { return get(); }
#define LOOM_EXPR LOOM_IR_ACCESSORS
#define LOOM_STMT LOOM_IR_ACCESSORS
#define LOOM_NODE LOOM_IR_ACCESSORS
#include "loom/ir/node_table.def"
#undef LOOM_EXPR
#undef LOOM_STMT
#undef LOOM_NODE
#undef LOOM_IR_ACCESSORS

inline DataType PrimExpr::dtype() const { return static_cast<const ExprNode*>(ptr_)->dtype; }
inline const ExprNode* PrimExpr::operator->() const {
  return static_cast<const ExprNode*>(ptr_);
}
inline const StmtNode* Stmt::operator->() const { return static_cast<const StmtNode*>(ptr_); }

// Calls fn(const XNode&) with the node's concrete type (one switch generated from the table).
template <typename Fn>
decltype(auto) DispatchNode(const Object& object, Fn&& fn) {
  switch (object.kind()) {
#define LOOM_IR_CASE(Name, ...) \
  case NodeKind::Name:          \
    return fn(static_cast<const Name##Node&>(object));
#define LOOM_EXPR LOOM_IR_CASE
#define LOOM_STMT LOOM_IR_CASE
#define LOOM_NODE LOOM_IR_CASE
#include "loom/ir/node_table.def"
#undef LOOM_EXPR
#undef LOOM_STMT
#undef LOOM_NODE
#undef LOOM_IR_CASE
    case NodeKind::kOther:
      break;
  }
  LOOM_ICHECK(false) << "DispatchNode on an object outside the node table";
  throw;  // unreachable: LOOM_ICHECK(false) always throws
}

// ---------------------------------------------------------------- small helpers

inline bool IsConstInt(const PrimExpr& e, int64_t* value = nullptr) {
  if (const auto* imm = e.as<IntImmNode>()) {
    if (value) *value = imm->value;
    return true;
  }
  return false;
}

// A Range from [begin, end) rather than (min, extent).
Range RangeFromBeginEnd(PrimExpr begin, PrimExpr end);

// A buffer with compact row-major layout (strides empty, offset 0) over a fresh data Var.
Buffer DeclBuffer(Array<PrimExpr> shape, DataType dtype, std::string name,
                  std::string scope = "global");

}  // namespace loom
