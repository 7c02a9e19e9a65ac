// Declaring tensor intrinsics, and the address_of builtin their statements pass pointers
// with.
#include "loom/te/tensor_intrin.h"

#include <unordered_map>

#include "loom/ir/expr_ops.h"
#include "loom/ir/functor.h"
#include "loom/ir/printer.h"
#include "loom/tir/transform.h"

namespace loom::te {
namespace {

// A buffer shaped like `tensor` whose strides and element offset are variables, so that
// tensorize can bind it to a tile anywhere inside a larger buffer.
Buffer SymbolicBuffer(const Tensor& tensor, const TensorIntrinBuffer& spec) {
  const std::string& name = tensor.name();
  Array<PrimExpr> strides;
  for (int d = 0; d < tensor.ndim(); ++d) {
    strides.push_back(Var(name + "_stride" + std::to_string(d), DataType::Int(32)));
  }
  return Buffer(Var(name + "_data", DataType::Handle()), tensor.dtype(), tensor.shape(), strides,
                Var(name + "_elem_offset", DataType::Int(32)), name, spec.scope, 1,
                spec.offset_factor);
}

// reduce_init runs before the loops that choose the input tiles, so it has no inputs.
void CheckInitWritesOnly(const TensorIntrinNode& intrin, const std::string& what) {
  std::unordered_map<const Object*, std::string> input_parts;
  for (const Buffer& b : intrin.input_buffers) {
    input_parts[b.get()] = b->name;
    input_parts[b->data.get()] = b->name;
    input_parts[b->elem_offset.get()] = b->name;
    for (const PrimExpr& stride : b->strides) input_parts[stride.get()] = b->name;
  }
  PostOrderVisit(intrin.stmts.reduce_init, [&](const ObjectRef& node) {
    const Object* key = node.get();
    if (const auto* load = node.as<BufferLoadNode>()) key = load->buffer.get();
    auto it = input_parts.find(key);
    LOOM_CHECK_USER(it == input_parts.end())
        << what << ": reduce_init uses input '" << it->second
        << "'; it runs before any input tile is chosen, so it may only set the outputs";
  });
}

}  // namespace

TensorIntrin decl_tensor_intrin(const Operation& op, const TensorIntrinBuilder& builder,
                                std::string name,
                                const std::map<std::string, TensorIntrinBuffer>& buffers) {
  std::string what = "decl_tensor_intrin '" + name + "'";
  const auto* compute = dynamic_cast<const ComputeOpNode*>(op.get());
  LOOM_CHECK_USER(compute != nullptr)
      << what << ": the operation '" << (op ? op->name : "(null)")
      << "' is not a compute; declare the computation the intrinsic performs with compute()";
  LOOM_CHECK_USER(builder != nullptr) << what << ": the statement builder is empty";
  auto intrin = std::make_shared<TensorIntrinNode>();
  intrin->name = std::move(name);
  intrin->op = op;
  intrin->inputs = op->InputTensors();
  for (const Tensor& input : intrin->inputs) {
    LOOM_CHECK_USER(dynamic_cast<const PlaceholderOpNode*>(input.op().get()))
        << what << ": input '" << input.name() << "' of '" << op->name
        << "' is not a placeholder; an intrinsic's compute reads placeholders only";
  }
  std::map<std::string, TensorIntrinBuffer> unused = buffers;
  auto spec_of = [&](const Tensor& tensor) {
    auto it = buffers.find(tensor.name());
    if (it == buffers.end()) return TensorIntrinBuffer{};
    LOOM_CHECK_USER(it->second.offset_factor >= 1)
        << what << ": the offset_factor of '" << tensor.name() << "' must be at least 1, got "
        << it->second.offset_factor;
    unused.erase(tensor.name());
    return it->second;
  };
  for (const Tensor& input : intrin->inputs) {
    intrin->input_buffers.push_back(SymbolicBuffer(input, spec_of(input)));
  }
  for (int i = 0; i < op->num_outputs(); ++i) {
    intrin->output_buffers.push_back(SymbolicBuffer(op->output(i), spec_of(op->output(i))));
  }
  LOOM_CHECK_USER(unused.empty())
      << what << ": buffers names '" << unused.begin()->first
      << "', which is neither an input nor an output of '" << op->name << "'";
  intrin->stmts = builder(intrin->input_buffers, intrin->output_buffers);
  LOOM_CHECK_USER(intrin->stmts.body.defined())
      << what << ": the builder returned no body; return at least the statement computing "
      << "the outputs from scratch";
  if (intrin->stmts.reduce_init.defined()) CheckInitWritesOnly(*intrin, what);
  return intrin;
}

PrimExpr address_of(const PrimExpr& load, int access) {
  LOOM_CHECK_USER(load.defined() && load.as<BufferLoadNode>())
      << "address_of: the argument must be a buffer element (BufferLoad), got "
      << (load.defined() ? ToScript(load) : "(undefined)");
  const int both = tir::builtin::kAccessRead | tir::builtin::kAccessWrite;
  LOOM_CHECK_USER(access >= 0 && access <= both)
      << "address_of: access " << access << " is none of kAccessRead (1), kAccessWrite (2), "
      << "both (3), or 0 (unknown)";
  if (access == 0) return call_intrin(DataType::Handle(), "address_of", {load});
  return call_intrin(DataType::Handle(), "address_of", {load, IntImm(DataType::Int(32), access)});
}

PrimExpr access_ptr(const Buffer& buffer, int access) {
  LOOM_CHECK_USER(buffer.defined()) << "access_ptr: the buffer is undefined";
  Array<PrimExpr> origin;
  for (const PrimExpr& extent : buffer->shape) origin.push_back(make_zero(extent.dtype()));
  return address_of(BufferLoad(buffer, origin), access);
}

}  // namespace loom::te
