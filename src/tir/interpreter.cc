// Statement execution, buffer addressing, and binding a PrimFunc's parameters.
#include <sstream>

#include "loom/ir/printer.h"
#include "tir/interpreter_internal.h"

namespace loom::tir {

namespace detail {

namespace {

std::string FormatList(const std::vector<int64_t>& values) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < values.size(); ++i) os << (i ? ", " : "") << values[i];
  os << "]";
  return os.str();
}

}  // namespace

Machine::Access Machine::Locate(const Buffer& buffer, const Array<PrimExpr>& indices) {
  std::vector<Value> index_values;
  int lanes = 1;
  for (const PrimExpr& index : indices) {
    index_values.push_back(VisitExpr(index));
    lanes = std::max(lanes, index_values.back().lanes());
  }
  std::vector<int64_t> shape;
  for (const PrimExpr& extent : buffer->shape) shape.push_back(EvalInt(extent));
  std::vector<int64_t> strides(shape.size());
  if (buffer->strides.empty()) {
    int64_t stride = 1;
    for (size_t k = shape.size(); k-- > 0;) {
      strides[k] = stride;
      stride *= shape[k];
    }
  } else {
    for (size_t k = 0; k < shape.size(); ++k) strides[k] = EvalInt(buffer->strides[k]);
  }
  int64_t elem_offset = EvalInt(buffer->elem_offset);

  auto it = env_.find(buffer->data.get());
  LOOM_ICHECK(it != env_.end()) << "the interpreter accessed buffer '" << buffer->name
                                << "', whose data variable '" << buffer->data.name()
                                << "' is bound to no memory";
  LOOM_CHECK_USER(it->second.memory != nullptr)
      << "buffer '" << buffer->name << "': its data variable holds no memory";

  int64_t element_bytes = int64_t{buffer->dtype.bytes()} * buffer->dtype.lanes();
  Access access{it->second.memory, {}};
  std::vector<int64_t> lane_indices(shape.size());
  for (int lane = 0; lane < lanes; ++lane) {
    int64_t flat = elem_offset;
    for (size_t k = 0; k < shape.size(); ++k) {
      const Value& v = index_values[k];
      lane_indices[k] = v.ints[v.lanes() == 1 ? 0 : lane];
    }
    for (size_t k = 0; k < shape.size(); ++k) {
      LOOM_CHECK_USER(lane_indices[k] >= 0 && lane_indices[k] < shape[k])
          << "out-of-bounds access to buffer '" << buffer->name << "': index "
          << FormatList(lane_indices) << " is outside its shape " << FormatList(shape);
      flat += lane_indices[k] * strides[k];
    }
    int64_t byte_offset = flat * element_bytes;
    LOOM_CHECK_USER(flat >= 0 && byte_offset + element_bytes <= access.memory->nbytes())
        << "out-of-bounds access to buffer '" << buffer->name << "': index "
        << FormatList(lane_indices) << " (element " << flat << " with strides "
        << FormatList(strides) << " and offset " << elem_offset << ") lies outside memory '"
        << access.memory->name() << "' of " << access.memory->nbytes() / element_bytes
        << " elements";
    access.byte_offsets.push_back(byte_offset);
  }
  return access;
}

void Machine::VisitStmt_(const LetStmtNode* op) {
  Binding binding(this, op->var, VisitExpr(op->value));
  VisitStmt(op->body);
}

void Machine::VisitStmt_(const AttrStmtNode* op) { VisitStmt(op->body); }

void Machine::VisitStmt_(const AssertStmtNode* op) {
  Value condition = VisitExpr(op->condition);
  LOOM_CHECK_USER(condition.ints[0]) << op->message.as<StringImmNode>()->value;
  VisitStmt(op->body);
}

void Machine::VisitStmt_(const BufferStoreNode* op) {
  Value value = VisitExpr(op->value);
  Access access = Locate(op->buffer, op->indices);
  DataType element = op->buffer->dtype.element_of();
  int per_index = op->buffer->dtype.lanes();
  int lane = 0;
  for (int64_t offset : access.byte_offsets) {
    for (int i = 0; i < per_index; ++i, ++lane) {
      std::byte* at = access.memory->data() + offset + int64_t{i} * element.bytes();
      StoreLane(at, element, value, lane);
    }
  }
}

void Machine::VisitStmt_(const AllocateNode* op) {
  int64_t elements = 1;
  for (const PrimExpr& extent : op->extents) {
    int64_t n = EvalInt(extent);
    LOOM_CHECK_USER(n >= 0) << "cannot allocate '" << op->buffer_var.name() << "': extent "
                            << ToScript(extent) << " is " << n;
    elements *= n;
  }
  if (!EvalInt(op->condition)) elements = 0;
  int64_t nbytes = elements * op->dtype.bytes() * op->dtype.lanes();
  auto memory = std::make_shared<HostMemory>(op->buffer_var.name(), nbytes);
  Binding binding(this, op->buffer_var, Value::Handle(std::move(memory)));
  VisitStmt(op->body);
}

void Machine::VisitStmt_(const ForNode* op) {
  int64_t begin = EvalInt(op->min);
  int64_t extent = EvalInt(op->extent);
  DataType t = op->loop_var.dtype();
  for (int64_t i = 0; i < extent; ++i) {
    Binding binding(this, op->loop_var, Value::Int(t, begin + i));
    VisitStmt(op->body);
  }
}

void Machine::VisitStmt_(const WhileNode* op) {
  while (EvalInt(op->condition)) VisitStmt(op->body);
}

void Machine::VisitStmt_(const IfThenElseNode* op) {
  if (EvalInt(op->condition)) {
    VisitStmt(op->then_case);
  } else if (op->else_case.defined()) {
    VisitStmt(op->else_case);
  }
}

void Machine::VisitStmt_(const SeqStmtNode* op) {
  for (const Stmt& s : op->seq) VisitStmt(s);
}

void Machine::VisitStmt_(const EvaluateNode* op) { VisitExpr(op->value); }

}  // namespace detail

namespace {

// Binds one buffer parameter: its data to the array's memory, its shape variables (and
// symbolic strides or offset) to the array's; checks what is already determined.
void BindBuffer(detail::Machine* machine, const Var& param, const Buffer& buffer,
                const HostArray& array) {
  LOOM_CHECK_USER(array.dtype() == buffer->dtype)
      << "argument for buffer '" << buffer->name << "' has type " << array.dtype()
      << ", expected " << buffer->dtype;
  LOOM_CHECK_USER(array.shape().size() == buffer->shape.size())
      << "argument for buffer '" << buffer->name << "' has " << array.shape().size()
      << " dimension(s), expected " << buffer->shape.size();
  Value handle = Value::Handle(array.memory());
  machine->BindForever(param, handle);
  machine->BindForever(buffer->data, handle);
  auto bind_or_check = [&](const PrimExpr& expr, int64_t actual, const std::string& what) {
    if (const auto* var = expr.as<VarNode>(); var && !machine->IsBound(Var(var))) {
      machine->BindForever(Var(var), Value::Int(var->dtype, actual));
      return;
    }
    int64_t expected = machine->EvalInt(expr);
    LOOM_CHECK_USER(expected == actual)
        << "argument for buffer '" << buffer->name << "': " << what << " is " << actual
        << ", expected " << ToScript(expr) << " = " << expected;
  };
  int64_t stride = 1;
  for (size_t k = buffer->shape.size(); k-- > 0;) {
    bind_or_check(buffer->shape[k], array.shape()[k], "extent in dimension " + std::to_string(k));
    if (!buffer->strides.empty()) {
      bind_or_check(buffer->strides[k], stride, "stride in dimension " + std::to_string(k));
    }
    stride *= array.shape()[k];
  }
  bind_or_check(buffer->elem_offset, 0, "element offset");
}

}  // namespace

void Interpreter::RegisterExtern(const std::string& name, ExternFunction function) {
  externs_[name] = std::move(function);
}

void Interpreter::Run(const PrimFunc& func, const std::vector<Argument>& args) const {
  LOOM_CHECK_USER(args.size() == func->params.size())
      << "the function takes " << func->params.size() << " argument(s), got " << args.size();
  detail::Machine machine(externs_);
  auto buffer_of = [&](const Var& param) -> const Buffer* {
    for (const auto& [var, buffer] : func->buffer_map) {
      if (var.same_as(param)) return &buffer;
    }
    return nullptr;
  };
  // Scalars first: buffer shapes may be expressed in scalar parameters.
  for (size_t i = 0; i < args.size(); ++i) {
    const Var& param = func->params[i];
    const Value* scalar = std::get_if<Value>(&args[i]);
    if (!scalar) continue;
    const Buffer* buffer = buffer_of(param);
    LOOM_CHECK_USER(!buffer) << "argument " << i << " ('" << param.name()
                             << "') must be a HostArray for buffer '" << (*buffer)->name << "'";
    LOOM_CHECK_USER(scalar->dtype == param.dtype())
        << "argument " << i << " ('" << param.name() << "') has type " << scalar->dtype
        << ", expected " << param.dtype();
    machine.BindForever(param, *scalar);
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const Var& param = func->params[i];
    const HostArray* array = std::get_if<HostArray>(&args[i]);
    if (!array) continue;
    if (const Buffer* buffer = buffer_of(param)) {
      BindBuffer(&machine, param, *buffer, *array);
    } else {
      LOOM_CHECK_USER(param.dtype().is_handle())
          << "argument " << i << " ('" << param.name() << "') is an array but the parameter "
          << "has type " << param.dtype();
      machine.BindForever(param, Value::Handle(array->memory()));
    }
  }
  machine.VisitStmt(func->body);
}

Value Interpreter::Evaluate(const PrimExpr& expr,
                            const std::vector<std::pair<Var, Value>>& bindings) const {
  detail::Machine machine(externs_);
  for (const auto& [var, value] : bindings) machine.BindForever(var, value);
  return machine.VisitExpr(expr);
}

}  // namespace loom::tir
