// Tensors, their storage buffers, and the registry that maps a buffer back to its tensor.
#include "loom/te/tensor.h"

#include <mutex>
#include <unordered_map>

#include "loom/ir/printer.h"

namespace loom::te {
namespace {

// Buffers are owned by their operation, so an entry lives exactly as long as the operation:
// it is added when the operation creates its outputs and removed by its destructor.
struct BufferRegistry {
  std::mutex mutex;
  std::unordered_map<const Object*, std::pair<const OperationNode*, int>> owners;
};

BufferRegistry& Registry() {
  static BufferRegistry* registry = new BufferRegistry();  // never destroyed: used by dtors
  return *registry;
}

}  // namespace

OperationNode::~OperationNode() {
  BufferRegistry& registry = Registry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  // A schedule may give this operation's buffers to a replacement operation, which does not
  // register them: only the entries naming this operation are its own.
  for (const Buffer& buffer : output_buffers) {
    auto it = registry.owners.find(buffer.get());
    if (it != registry.owners.end() && it->second.first == this) registry.owners.erase(it);
  }
}

void OperationNode::MakeOutputs(const Array<Array<PrimExpr>>& shapes,
                                const Array<DataType>& dtypes) {
  LOOM_ICHECK(shapes.size() == dtypes.size());
  BufferRegistry& registry = Registry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  for (size_t i = 0; i < shapes.size(); ++i) {
    std::string buffer_name = shapes.size() == 1 ? name : name + ".v" + std::to_string(i);
    output_buffers.push_back(DeclBuffer(shapes[i], dtypes[i], buffer_name));
    registry.owners[output_buffers.back().get()] = {this, static_cast<int>(i)};
  }
}

Tensor OperationNode::output(int i) const {
  LOOM_ICHECK(i >= 0 && i < num_outputs()) << "output " << i << " of '" << name << "'";
  return Tensor(shared_from_this(), i);
}

Tensor::Tensor(Operation op, int value_index) : op_(std::move(op)), value_index_(value_index) {
  LOOM_ICHECK(op_ && value_index_ >= 0 && value_index_ < op_->num_outputs());
}

PrimExpr Tensor::operator()(const Array<PrimExpr>& indices) const {
  LOOM_CHECK_USER(static_cast<int>(indices.size()) == ndim())
      << "tensor '" << name() << "' has " << ndim() << " dimensions but is indexed with "
      << indices.size() << " indices";
  for (const PrimExpr& index : indices) {
    LOOM_CHECK_USER(index.defined() && (index.dtype().is_int() || index.dtype().is_uint()) &&
                        index.dtype().is_scalar())
        << "tensor '" << name() << "' is indexed with " << index
        << ", which is not a scalar integer";
  }
  return BufferLoad(buffer(), indices);
}

PrimExpr Tensor::operator()(const Array<Var>& indices) const {
  return (*this)(Array<PrimExpr>(indices.begin(), indices.end()));
}

std::optional<Tensor> TensorFromBuffer(const Buffer& buffer) {
  BufferRegistry& registry = Registry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  auto it = registry.owners.find(buffer.get());
  if (it == registry.owners.end()) return std::nullopt;
  // The operation is alive (it unregisters when destroyed), so it is still shared.
  return Tensor(it->second.first->shared_from_this(), it->second.second);
}

}  // namespace loom::te
