// Generated handle constructors and the hand-written per-node Validate() rules.
#include "loom/ir/node.h"

#include <memory>

#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"
#include "loom/runtime/float_codec.h"

namespace loom {

// ---------------------------------------------------------------- generated parts

const char* NodeKindName(NodeKind kind) {
  switch (kind) {
#define LOOM_IR_NAME(Name, ...) \
  case NodeKind::Name:          \
    return #Name;
#define LOOM_EXPR LOOM_IR_NAME
#define LOOM_STMT LOOM_IR_NAME
#define LOOM_NODE LOOM_IR_NAME
#include "loom/ir/node_table.def"
#undef LOOM_EXPR
#undef LOOM_STMT
#undef LOOM_NODE
#undef LOOM_IR_NAME
    case NodeKind::kOther:
      return "Object";
  }
  return "?";
}

#define LOOM_IR_ASSIGN(Role, Type, name) created->name = std::move(name);
#define LOOM_DTYPE_ASSIGN_Typed created->dtype = dtype;
#define LOOM_DTYPE_ASSIGN_Derived
#define LOOM_DTYPE_ASSIGN_None
#define LOOM_CTOR_Custom(Name, DtypeMode, ...)
#define LOOM_CTOR_Gen(Name, DtypeMode, ...)                                        \
  Name::Name(LOOM_DTYPE_PARAM_##DtypeMode                                           \
                 LOOM_PP_TAIL(~ LOOM_PP_FOR_EACH(LOOM_IR_PARAM, __VA_ARGS__))) {    \
    auto created = std::make_unique<Name##Node>();                                  \
    LOOM_DTYPE_ASSIGN_##DtypeMode LOOM_PP_FOR_EACH(LOOM_IR_ASSIGN, __VA_ARGS__)     \
        created->Validate();                                                        \
    *this = Name(created.release());                                                \
  }
#define LOOM_EXPR(Name, DtypeMode, HandleMode, ...) \
  LOOM_CTOR_##HandleMode(Name, DtypeMode, __VA_ARGS__)
#define LOOM_STMT(Name, HandleMode, ...) LOOM_CTOR_##HandleMode(Name, None, __VA_ARGS__)
#define LOOM_NODE(Name, HandleMode, ...) LOOM_CTOR_##HandleMode(Name, None, __VA_ARGS__)
#include "loom/ir/node_table.def"
#undef LOOM_EXPR
#undef LOOM_STMT
#undef LOOM_NODE

// ---------------------------------------------------------------- enum names

const char* ForKindName(ForKind kind) {
  switch (kind) {
    case ForKind::kSerial: return "serial";
    case ForKind::kParallel: return "parallel";
    case ForKind::kVectorized: return "vectorized";
    case ForKind::kUnrolled: return "unroll";
    case ForKind::kThreadBinding: return "thread_binding";
  }
  return "?";
}

const char* IterVarTypeName(IterVarType type) {
  switch (type) {
    case IterVarType::kDataPar: return "DataPar";
    case IterVarType::kThreadIndex: return "ThreadIndex";
    case IterVarType::kCommReduce: return "CommReduce";
    case IterVarType::kOrdered: return "Ordered";
    case IterVarType::kOpaque: return "Opaque";
    case IterVarType::kVirtualThread: return "VirtualThread";
  }
  return "?";
}

const char* CallEffectName(CallEffect effect) {
  switch (effect) {
    case CallEffect::kPure: return "pure";
    case CallEffect::kReadState: return "read_state";
    case CallEffect::kUpdateState: return "update_state";
    case CallEffect::kOpaque: return "opaque";
  }
  return "?";
}

// ---------------------------------------------------------------- handles written by hand

PrimExpr::PrimExpr(int value) : PrimExpr(IntImm(DataType::Int(32), value)) {}
PrimExpr::PrimExpr(float value) : PrimExpr(FloatImm(DataType::Float(32), value)) {}

Var::Var(std::string name_hint, DataType dtype) {
  auto node = std::make_unique<VarNode>();
  node->dtype = dtype;
  node->name_hint = std::move(name_hint);
  node->Validate();
  *this = Var(node.release());
}

const std::string& Var::name() const { return get()->name_hint; }

Var SizeVar(std::string name_hint, DataType dtype) {
  auto node = std::make_unique<VarNode>();
  node->dtype = dtype;
  node->name_hint = std::move(name_hint);
  node->is_size_var = true;
  node->Validate();
  return Var(node.release());
}

Range RangeFromBeginEnd(PrimExpr begin, PrimExpr end) {
  PrimExpr extent = end - begin;
  return Range(std::move(begin), std::move(extent));
}

Buffer DeclBuffer(Array<PrimExpr> shape, DataType dtype, std::string name, std::string scope) {
  Var data(name, DataType::Handle());
  return Buffer(data, dtype, std::move(shape), {}, IntImm(DataType::Int(32), 0), std::move(name),
                std::move(scope), 64, 1);
}

// ---------------------------------------------------------------- validation rules

namespace {

void CheckDefined(const ObjectRef& field, const char* node, const char* field_name) {
  LOOM_CHECK_USER(field.defined())
      << "cannot build " << node << ": field '" << field_name << "' is undefined";
}

// Shared by the binary arithmetic nodes: both operands of one type, the result of that type.
void ValidateArith(ExprNode& node, const PrimExpr& a, const PrimExpr& b, const char* name) {
  CheckDefined(a, name, "a");
  CheckDefined(b, name, "b");
  LOOM_CHECK_USER(a.dtype() == b.dtype())
      << "cannot build " << name << "(" << a << ", " << b << "): operand types differ ("
      << a.dtype() << " vs " << b.dtype()
      << "); cast one operand, or use the operators of expr_ops.h, which match types";
  LOOM_CHECK_USER(!a.dtype().is_handle() && !a.dtype().is_void())
      << "cannot build " << name << " on operands of type " << a.dtype();
  node.dtype = a.dtype();
}

void ValidateCompare(ExprNode& node, const PrimExpr& a, const PrimExpr& b, const char* name) {
  ValidateArith(node, a, b, name);
  node.dtype = DataType::Bool(a.dtype().lanes());
}

void ValidateLogical(ExprNode& node, const PrimExpr& a, const PrimExpr& b, const char* name) {
  ValidateArith(node, a, b, name);
  LOOM_CHECK_USER(a.dtype().is_bool())
      << "cannot build " << name << "(" << a << ", " << b << "): operands must be bool, got "
      << a.dtype();
}

void CheckIndexType(const PrimExpr& index, const char* node) {
  LOOM_CHECK_USER(index.defined() && index.dtype().is_int())
      << "cannot build " << node << ": index " << index << " must be a signed integer, got "
      << (index.defined() ? index.dtype().str() : "undefined");
}

// Lanes of an access: a vector index (Ramp) loads or stores that many elements.
DataType AccessType(const Buffer& buffer, const Array<PrimExpr>& indices, const char* node) {
  CheckDefined(buffer, node, "buffer");
  LOOM_CHECK_USER(indices.size() == buffer->shape.size())
      << "cannot build " << node << " of buffer '" << buffer->name << "': it has "
      << buffer->shape.size() << " dimension(s) but " << indices.size()
      << " index(es) were given";
  int lanes = 1;
  for (const PrimExpr& index : indices) {
    CheckIndexType(index, node);
    lanes = std::max(lanes, index.dtype().lanes());
  }
  return buffer->dtype.with_lanes(buffer->dtype.lanes() * lanes);
}

}  // namespace

void IntImmNode::Validate() {
  LOOM_CHECK_USER(dtype.is_integer_like())
      << "cannot build IntImm of type " << dtype << ": use an int, uint or bool type";
  LOOM_CHECK_USER(dtype.is_scalar()) << "cannot build IntImm of vector type " << dtype
                                     << ": broadcast a scalar constant instead";
  LOOM_CHECK_USER(dtype.is_representable(value))
      << "integer constant " << value << " does not fit in " << dtype << " (range ["
      << dtype.min_int_value() << ", " << dtype.max_int_value() << "])";
}

void FloatImmNode::Validate() {
  LOOM_CHECK_USER(dtype.is_float() && dtype.is_scalar())
      << "cannot build FloatImm of type " << dtype << ": use a scalar float type";
  // A constant holds exactly what its type can: folding then computes what hardware does.
  value = RoundToFloatType(value, dtype);
}

void StringImmNode::Validate() { dtype = DataType::Handle(); }

void VarNode::Validate() {
  LOOM_CHECK_USER(!dtype.is_void()) << "variable '" << name_hint << "' cannot have type void";
  LOOM_CHECK_USER(!is_size_var || dtype.is_int())
      << "size variable '" << name_hint << "' must have a signed integer type, got " << dtype;
}

void CastNode::Validate() {
  CheckDefined(value, "Cast", "value");
  LOOM_CHECK_USER(dtype.lanes() == value.dtype().lanes())
      << "cannot cast " << value << " of type " << value.dtype() << " to " << dtype
      << ": the number of lanes must stay the same";
}

void AddNode::Validate() { ValidateArith(*this, a, b, "Add"); }
void SubNode::Validate() { ValidateArith(*this, a, b, "Sub"); }
void MulNode::Validate() { ValidateArith(*this, a, b, "Mul"); }
void DivNode::Validate() { ValidateArith(*this, a, b, "Div"); }
void ModNode::Validate() { ValidateArith(*this, a, b, "Mod"); }
void FloorDivNode::Validate() { ValidateArith(*this, a, b, "FloorDiv"); }
void FloorModNode::Validate() { ValidateArith(*this, a, b, "FloorMod"); }
void MinNode::Validate() { ValidateArith(*this, a, b, "Min"); }
void MaxNode::Validate() { ValidateArith(*this, a, b, "Max"); }
void EQNode::Validate() { ValidateCompare(*this, a, b, "EQ"); }
void NENode::Validate() { ValidateCompare(*this, a, b, "NE"); }
void LTNode::Validate() { ValidateCompare(*this, a, b, "LT"); }
void LENode::Validate() { ValidateCompare(*this, a, b, "LE"); }
void GTNode::Validate() { ValidateCompare(*this, a, b, "GT"); }
void GENode::Validate() { ValidateCompare(*this, a, b, "GE"); }
void AndNode::Validate() { ValidateLogical(*this, a, b, "And"); }
void OrNode::Validate() { ValidateLogical(*this, a, b, "Or"); }

void NotNode::Validate() {
  CheckDefined(a, "Not", "a");
  LOOM_CHECK_USER(a.dtype().is_bool())
      << "cannot build Not(" << a << "): operand must be bool, got " << a.dtype();
  dtype = a.dtype();
}

void SelectNode::Validate() {
  CheckDefined(condition, "Select", "condition");
  CheckDefined(true_value, "Select", "true_value");
  CheckDefined(false_value, "Select", "false_value");
  LOOM_CHECK_USER(condition.dtype().is_bool())
      << "cannot build Select: condition " << condition << " must be bool, got "
      << condition.dtype();
  LOOM_CHECK_USER(true_value.dtype() == false_value.dtype())
      << "cannot build Select: branch types differ (" << true_value.dtype() << " vs "
      << false_value.dtype() << ")";
  LOOM_CHECK_USER(condition.dtype().lanes() == 1 ||
                  condition.dtype().lanes() == true_value.dtype().lanes())
      << "cannot build Select: condition has " << condition.dtype().lanes()
      << " lanes but the values have " << true_value.dtype().lanes();
  dtype = true_value.dtype();
}

void RampNode::Validate() {
  CheckDefined(base, "Ramp", "base");
  CheckDefined(stride, "Ramp", "stride");
  LOOM_CHECK_USER(base.dtype().is_scalar() && base.dtype() == stride.dtype())
      << "cannot build Ramp(" << base << ", " << stride
      << "): base and stride must be scalars of one type";
  LOOM_CHECK_USER(lanes > 1) << "cannot build Ramp with " << lanes << " lanes: need at least 2";
  dtype = base.dtype().with_lanes(lanes);
}

void BroadcastNode::Validate() {
  CheckDefined(value, "Broadcast", "value");
  LOOM_CHECK_USER(value.dtype().is_scalar())
      << "cannot broadcast " << value << ": value must be a scalar, got " << value.dtype();
  LOOM_CHECK_USER(lanes > 1) << "cannot build Broadcast with " << lanes
                             << " lanes: need at least 2";
  dtype = value.dtype().with_lanes(lanes);
}

void ShuffleNode::Validate() {
  LOOM_CHECK_USER(!vectors.empty() && !indices.empty())
      << "cannot build Shuffle: vectors and indices must be non-empty";
  int total_lanes = 0;
  for (const PrimExpr& v : vectors) {
    CheckDefined(v, "Shuffle", "vectors");
    LOOM_CHECK_USER(v.dtype().element_of() == vectors[0].dtype().element_of())
        << "cannot build Shuffle: vectors of different element types ("
        << vectors[0].dtype() << " vs " << v.dtype() << ")";
    total_lanes += v.dtype().lanes();
  }
  for (const PrimExpr& index : indices) {
    int64_t lane = -1;
    LOOM_CHECK_USER(IsConstInt(index, &lane) && lane >= 0 && lane < total_lanes)
        << "cannot build Shuffle: index " << index << " is not a constant lane in [0, "
        << total_lanes << ")";
  }
  dtype = vectors[0].dtype().with_lanes(static_cast<int>(indices.size()));
}

void LetNode::Validate() {
  CheckDefined(var, "Let", "var");
  CheckDefined(value, "Let", "value");
  CheckDefined(body, "Let", "body");
  LOOM_CHECK_USER(var.dtype() == value.dtype())
      << "cannot build Let " << var << " = " << value << ": variable has type " << var.dtype()
      << " but the value has type " << value.dtype();
  dtype = body.dtype();
}

void CallNode::Validate() {
  CheckDefined(op, "Call", "op");
  for (const PrimExpr& arg : args) CheckDefined(arg, "Call", "args");
  LOOM_CHECK_USER(op->num_inputs < 0 || static_cast<int>(args.size()) == op->num_inputs)
      << "cannot call '" << op->name << "': it takes " << op->num_inputs << " argument(s), got "
      << args.size();
  if (op->name == "call_extern" || op->name == "call_pure_extern" ||
      op->name == "call_llvm_pure_intrin" || op->name == "call_llvm_intrin") {
    LOOM_CHECK_USER(!args.empty() && args[0].as<StringImmNode>())
        << "cannot build " << op->name << ": the first argument must be the function name";
  }
}

void BufferLoadNode::Validate() { dtype = AccessType(buffer, indices, "BufferLoad"); }

void ReduceNode::Validate() {
  CheckDefined(combiner, "Reduce", "combiner");
  LOOM_CHECK_USER(!source.empty() && source.size() == combiner->result.size())
      << "cannot build Reduce: the combiner yields " << combiner->result.size()
      << " value(s) but " << source.size() << " source(s) were given";
  LOOM_CHECK_USER(value_index >= 0 && value_index < static_cast<int>(source.size()))
      << "cannot build Reduce: value_index " << value_index << " out of range";
  LOOM_CHECK_USER(init.empty() || init.size() == source.size())
      << "cannot build Reduce: init must be empty or give one value per source";
  for (const IterVar& iv : axis) CheckDefined(iv, "Reduce", "axis");
  if (!condition.defined()) condition = IntImm(DataType::Bool(), 1);
  dtype = source[value_index].dtype();
}

void LetStmtNode::Validate() {
  CheckDefined(var, "LetStmt", "var");
  CheckDefined(value, "LetStmt", "value");
  CheckDefined(body, "LetStmt", "body");
  LOOM_CHECK_USER(var.dtype() == value.dtype())
      << "cannot build LetStmt " << var << " = " << value << ": variable has type "
      << var.dtype() << " but the value has type " << value.dtype();
}

void AttrStmtNode::Validate() {
  LOOM_CHECK_USER(!attr_key.empty()) << "cannot build AttrStmt: attr_key is empty";
  CheckDefined(body, "AttrStmt", "body");
}

void AssertStmtNode::Validate() {
  CheckDefined(condition, "AssertStmt", "condition");
  CheckDefined(body, "AssertStmt", "body");
  LOOM_CHECK_USER(condition.dtype().is_bool())
      << "cannot build AssertStmt: condition " << condition << " must be bool";
  LOOM_CHECK_USER(message.as<StringImmNode>())
      << "cannot build AssertStmt: the message must be a StringImm";
}

void BufferStoreNode::Validate() {
  DataType access = AccessType(buffer, indices, "BufferStore");
  CheckDefined(value, "BufferStore", "value");
  LOOM_CHECK_USER(value.dtype() == access)
      << "cannot store " << value << " (" << value.dtype() << ") into buffer '" << buffer->name
      << "': the access has type " << access;
}

void AllocateNode::Validate() {
  CheckDefined(buffer_var, "Allocate", "buffer_var");
  CheckDefined(body, "Allocate", "body");
  LOOM_CHECK_USER(!extents.empty()) << "cannot allocate '" << buffer_var.name()
                                    << "': extents must be non-empty";
  for (const PrimExpr& e : extents) CheckIndexType(e, "Allocate");
  if (!condition.defined()) condition = IntImm(DataType::Bool(), 1);
  if (storage_scope.empty()) storage_scope = "global";
}

void ForNode::Validate() {
  CheckDefined(loop_var, "For", "loop_var");
  CheckDefined(min, "For", "min");
  CheckDefined(extent, "For", "extent");
  CheckDefined(body, "For", "body");
  LOOM_CHECK_USER(loop_var.dtype().is_int() && loop_var.dtype().is_scalar())
      << "cannot build loop over '" << loop_var.name() << "': its variable must be a scalar "
      << "signed integer, got " << loop_var.dtype();
  LOOM_CHECK_USER(min.dtype() == loop_var.dtype() && extent.dtype() == loop_var.dtype())
      << "cannot build loop over '" << loop_var.name() << "': min (" << min.dtype()
      << ") and extent (" << extent.dtype() << ") must have the loop variable's type ("
      << loop_var.dtype() << ")";
  LOOM_CHECK_USER((for_kind == ForKind::kThreadBinding) == thread_binding.defined())
      << "cannot build loop over '" << loop_var.name()
      << "': a thread_binding is required exactly when the kind is thread_binding";
}

void WhileNode::Validate() {
  CheckDefined(condition, "While", "condition");
  CheckDefined(body, "While", "body");
  LOOM_CHECK_USER(condition.dtype() == DataType::Bool())
      << "cannot build While: condition " << condition << " must be a scalar bool";
}

void IfThenElseNode::Validate() {
  CheckDefined(condition, "IfThenElse", "condition");
  CheckDefined(then_case, "IfThenElse", "then_case");
  LOOM_CHECK_USER(condition.dtype() == DataType::Bool())
      << "cannot build IfThenElse: condition " << condition << " must be a scalar bool, got "
      << condition.dtype();
}

void SeqStmtNode::Validate() {
  LOOM_CHECK_USER(!seq.empty()) << "cannot build an empty SeqStmt";
  for (const Stmt& s : seq) CheckDefined(s, "SeqStmt", "seq");
}

void EvaluateNode::Validate() { CheckDefined(value, "Evaluate", "value"); }

void OpNode::Validate() { LOOM_ICHECK(!name.empty()) << "operator without a name"; }

void RangeNode::Validate() {
  CheckDefined(min, "Range", "min");
  CheckDefined(extent, "Range", "extent");
  LOOM_CHECK_USER(min.dtype().is_integer_like() && extent.dtype().is_integer_like())
      << "cannot build Range(" << min << ", " << extent << "): bounds must be integers";
}

void IterVarNode::Validate() {
  CheckDefined(var, "IterVar", "var");
  if (dom.defined()) {
    LOOM_CHECK_USER(dom->min.dtype() == var.dtype() && dom->extent.dtype() == var.dtype())
        << "cannot build IterVar '" << var.name() << "': its domain must have the variable's "
        << "type " << var.dtype();
  }
}

void CommReducerNode::Validate() {
  LOOM_CHECK_USER(!result.empty() && lhs.size() == result.size() &&
                  rhs.size() == result.size() && identity_element.size() == result.size())
      << "cannot build CommReducer: lhs, rhs, result and identity_element must have one "
         "entry per reduced value";
  for (size_t i = 0; i < result.size(); ++i) {
    LOOM_CHECK_USER(result[i].dtype() == identity_element[i].dtype())
        << "cannot build CommReducer: result " << i << " has type " << result[i].dtype()
        << " but its identity element has type " << identity_element[i].dtype();
  }
}

void BufferNode::Validate() {
  CheckDefined(data, "Buffer", "data");
  LOOM_CHECK_USER(data.dtype().is_handle())
      << "cannot build buffer '" << name << "': its data variable must be a handle";
  LOOM_CHECK_USER(!dtype.is_void()) << "cannot build buffer '" << name << "' of type void";
  for (const PrimExpr& extent : shape) CheckIndexType(extent, "Buffer");
  LOOM_CHECK_USER(strides.empty() || strides.size() == shape.size())
      << "cannot build buffer '" << name << "': " << strides.size() << " strides for "
      << shape.size() << " dimensions";
  if (!elem_offset.defined()) elem_offset = IntImm(DataType::Int(32), 0);
  if (scope.empty()) scope = "global";
  LOOM_CHECK_USER(data_alignment > 0 && (data_alignment & (data_alignment - 1)) == 0)
      << "cannot build buffer '" << name << "': alignment " << data_alignment
      << " is not a positive power of two";
  LOOM_CHECK_USER(offset_factor >= 1)
      << "cannot build buffer '" << name << "': offset_factor must be at least 1";
}

void PrimFuncNode::Validate() {
  CheckDefined(body, "PrimFunc", "body");
  for (const auto& [var, buffer] : buffer_map) {
    bool is_param = false;
    for (const Var& p : params) is_param |= p.same_as(var);
    LOOM_CHECK_USER(is_param) << "cannot build PrimFunc: buffer '" << buffer->name
                              << "' is bound to " << var << ", which is not a parameter";
  }
}

}  // namespace loom
