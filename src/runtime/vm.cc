// VirtualMachine: binds the size variables from the inputs, then runs the program: weights
// loaded as views of the parameters blob, tensors allocated at the shapes their expressions
// give and taken from a pool of freed buffers, kernels invoked on registers, tensors
// released after their last use.
#include "loom/runtime/vm.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "loom/runtime/thread_pool.h"
#include "loom/support/error.h"

namespace loom::runtime {

namespace {

// The pool's buffer size for `bytes`: the next of 1, 1.25, 1.5 or 1.75 times a power of two
// (at least 64 bytes), so that tensors of nearby sizes (another sequence length) share
// buffers, at most a quarter of their size unused.
size_t SizeClass(size_t bytes) {
  size_t power = 64;
  while (power < bytes && power <= (SIZE_MAX >> 2)) power <<= 1;
  if (power <= 64) return 64;
  size_t half = power >> 1;
  for (size_t step = 1; step <= 4; ++step) {
    size_t size = half + half / 4 * step;
    if (size >= bytes) return size;
  }
  return power;
}

const char* OperationText(ShapeExpr::Kind kind) {
  switch (kind) {
    case ShapeExpr::Kind::kAdd:
      return " + ";
    case ShapeExpr::Kind::kSub:
      return " - ";
    case ShapeExpr::Kind::kMul:
      return " * ";
    case ShapeExpr::Kind::kFloorDiv:
      return " // ";
    case ShapeExpr::Kind::kFloorMod:
      return " % ";
    case ShapeExpr::Kind::kEq:
      return " == ";
    case ShapeExpr::Kind::kLt:
      return " < ";
    default:
      return nullptr;
  }
}

// Where `array`'s elements start.
uint8_t* Bytes(const NDArray& array) {
  return static_cast<uint8_t*>(array.data()) + array->byte_offset;
}

// Integer (or bool) element `index` of `value` (a load_size's source), or an error naming
// `what`.
int64_t IntegerValue(const NDArray& value, int64_t index, const std::string& what) {
  const DataType t = value.dtype();
  const bool readable =
      t.lanes() == 1 &&
      (t.is_bool() || ((t.is_int() || t.is_uint()) &&
                       (t.bits() == 8 || t.bits() == 16 || t.bits() == 32 || t.bits() == 64)));
  LOOM_CHECK_USER(readable && index < value.NumElements())
      << "VirtualMachine: '" << what << "' must be integers or bools, at least " << index + 1
      << ", got " << t << ShapeString(value.Shape());
  const void* data = Bytes(value) + index * t.bytes();
  if (t.is_bool()) return *static_cast<const uint8_t*>(data) != 0 ? 1 : 0;
  switch (t.bits() * (t.is_int() ? 1 : -1)) {
    case 8:
      return *static_cast<const int8_t*>(data);
    case 16:
      return *static_cast<const int16_t*>(data);
    case 32:
      return *static_cast<const int32_t*>(data);
    case 64:
      return *static_cast<const int64_t*>(data);
    case -8:
      return *static_cast<const uint8_t*>(data);
    case -16:
      return *static_cast<const uint16_t*>(data);
    case -32:
      return *static_cast<const uint32_t*>(data);
    default: {
      const uint64_t u = *static_cast<const uint64_t*>(data);
      return u > static_cast<uint64_t>(INT64_MAX) ? -1 : static_cast<int64_t>(u);
    }
  }
}

// "float32[2, 3]", for messages.
std::string TensorText(const NDArray& array) {
  return array.dtype().str() + ShapeString(array.Shape());
}

// write_size: `value` into the one integer or bool element of `dst`.
void WriteSize(const NDArray& dst, int64_t value, const std::string& where) {
  const DataType t = dst.dtype();
  const bool integer =
      t.lanes() == 1 &&
      (t.is_bool() || ((t.is_int() || t.is_uint()) &&
                       (t.bits() == 8 || t.bits() == 16 || t.bits() == 32 || t.bits() == 64)));
  LOOM_CHECK_USER(integer && dst.NumElements() == 1)
      << "VirtualMachine: " << where << " (write_size) writes a size into " << TensorText(dst)
      << ", which must be one integer or bool element";
  void* data = Bytes(dst);
  if (t.is_bool()) {
    *static_cast<uint8_t*>(data) = value != 0 ? 1 : 0;
    return;
  }
  LOOM_CHECK_USER(t.is_representable(value))
      << "VirtualMachine: " << where << " (write_size) writes the size " << value << " into "
      << TensorText(dst) << ", whose dtype cannot hold it";
  switch (t.bits()) {
    case 8:
      *static_cast<uint8_t*>(data) = static_cast<uint8_t>(value);
      break;
    case 16:
      *static_cast<uint16_t*>(data) = static_cast<uint16_t>(value);
      break;
    case 32:
      *static_cast<uint32_t*>(data) = static_cast<uint32_t>(value);
      break;
    default:
      *static_cast<uint64_t*>(data) = static_cast<uint64_t>(value);
      break;
  }
}

// copy: src's elements into dst.
void CopyElements(const NDArray& dst, const NDArray& src, const std::string& where) {
  LOOM_CHECK_USER(dst.dtype() == src.dtype() && dst.NumElements() == src.NumElements())
      << "VirtualMachine: " << where << " (copy) copies " << TensorText(src) << " into "
      << TensorText(dst) << ": the dtype and the element count must be the same";
  if (dst.NumBytes() > 0) std::memcpy(Bytes(dst), Bytes(src), dst.NumBytes());
}

// store_row: src's elements into row `row` of dst (along its first axis).
void StoreRow(const NDArray& dst, const NDArray& src, int64_t row, const std::string& where) {
  const std::vector<int64_t> shape = dst.Shape();
  const int64_t rows = shape.empty() ? 0 : shape[0];
  const auto stores = [&] {
    return "VirtualMachine: " + where + " (store_row) stores " + TensorText(src) + " as row " +
           std::to_string(row) + " of " + TensorText(dst);
  };
  LOOM_CHECK_USER(!shape.empty() && row >= 0 && row < rows)
      << stores() << ", which has " << rows << (rows == 1 ? " row" : " rows");
  LOOM_CHECK_USER(src.dtype() == dst.dtype() && src.NumElements() * rows == dst.NumElements())
      << stores() << ": a row must have its dtype and " << dst.NumElements() / rows << " elements";
  const size_t bytes = src.NumBytes();
  if (bytes > 0) std::memcpy(Bytes(dst) + static_cast<size_t>(row) * bytes, Bytes(src), bytes);
}

}  // namespace

int64_t ShapeExpr::Evaluate(const std::vector<int64_t>& vars, const std::string& where) const {
  if (kind == Kind::kConst) return value;
  if (kind == Kind::kVar) return vars.at(static_cast<size_t>(value));
  int64_t a = operands[0].Evaluate(vars, where), b = operands[1].Evaluate(vars, where);
  int64_t result = 0;
  bool overflow = false;
  switch (kind) {
    case Kind::kAdd:
      overflow = __builtin_add_overflow(a, b, &result);
      break;
    case Kind::kSub:
      overflow = __builtin_sub_overflow(a, b, &result);
      break;
    case Kind::kMul:
      overflow = __builtin_mul_overflow(a, b, &result);
      break;
    case Kind::kFloorDiv:
    case Kind::kFloorMod: {
      LOOM_CHECK_USER(b != 0) << where << ": a size divides by zero";
      int64_t q = a / b, r = a % b;
      if (r != 0 && ((r < 0) != (b < 0))) {
        --q;
        r += b;
      }
      result = kind == Kind::kFloorDiv ? q : r;
      break;
    }
    case Kind::kMin:
      result = std::min(a, b);
      break;
    case Kind::kMax:
      result = std::max(a, b);
      break;
    case Kind::kEq:
      result = a == b ? 1 : 0;
      break;
    case Kind::kLt:
      result = a < b ? 1 : 0;
      break;
    default:
      break;
  }
  LOOM_CHECK_USER(!overflow) << where << ": a size overflows 64 bits";
  return result;
}

std::string ShapeExpr::str(const std::vector<std::string>& var_names) const {
  if (kind == Kind::kConst) return std::to_string(value);
  if (kind == Kind::kVar) return var_names.at(static_cast<size_t>(value));
  std::string a = operands[0].str(var_names), b = operands[1].str(var_names);
  if (const char* op = OperationText(kind)) return "(" + a + op + b + ")";
  return std::string(kind == Kind::kMin ? "min(" : "max(") + a + ", " + b + ")";
}

VirtualMachine::VirtualMachine(std::shared_ptr<const VmModel> model) : model_(std::move(model)) {
  LOOM_CHECK_USER(model_ != nullptr) << "VirtualMachine: the model is null";
  LOOM_CHECK_USER(model_->module().defined())
      << "VirtualMachine: the model was described from its file, not loaded; load it to run it";
  inputs_.resize(model_->inputs().size());
  registers_.resize(static_cast<size_t>(model_->num_registers()));
  buffers_.resize(registers_.size());
  in_storage_.resize(registers_.size(), false);
  // The memory plan's storages, the machine's for its lifetime.
  for (int64_t bytes : model_->storages()) {
    storages_.push_back(NDArray::Empty({bytes}, DataType::UInt(8)));
    planned_bytes_ += static_cast<size_t>(bytes);
  }
  // Each weight's view, made once: a view of the blob in place, whose deleter frees only its
  // own shape (the model owns the blob).
  params_.resize(model_->instructions().size());
  // Each instruction's name in messages, made once, not on every run.
  for (size_t n = 0; n < model_->instructions().size(); ++n) {
    instruction_names_.push_back("instruction " + std::to_string(n));
  }
  for (size_t n = 0; n < model_->instructions().size(); ++n) {
    const VmInstruction& insn = model_->instructions()[n];
    if (insn.op != VmInstruction::Op::kLoadParam) continue;
    auto* dims = new std::vector<int64_t>;
    for (const ShapeExpr& e : insn.shape) dims->push_back(e.value);
    auto* managed = new DLManagedTensor{};
    managed->dl_tensor.data = const_cast<void*>(model_->ParamData(insn.param));
    managed->dl_tensor.device = kHostDevice;
    managed->dl_tensor.ndim = static_cast<int32_t>(dims->size());
    managed->dl_tensor.dtype = insn.dtype.to_dlpack();
    managed->dl_tensor.shape = dims->data();
    managed->manager_ctx = dims;
    managed->deleter = [](DLManagedTensor* self) {
      delete static_cast<std::vector<int64_t>*>(self->manager_ctx);
      delete self;
    };
    params_[n] = NDArray::FromDLPack(managed);
  }
}

int VirtualMachine::CheckIndex(const char* what, int index, size_t count) const {
  LOOM_CHECK_USER(index >= 0 && static_cast<size_t>(index) < count)
      << "VirtualMachine: " << what << " index " << index << " is out of range; the model has "
      << count << " " << what << "s";
  return index;
}

int VirtualMachine::NumInputs() const { return static_cast<int>(model_->inputs().size()); }
int VirtualMachine::NumOutputs() const { return static_cast<int>(model_->outputs().size()); }

const std::string& VirtualMachine::InputName(int i) const {
  return model_->inputs()[CheckIndex("input", i, model_->inputs().size())].name;
}

const std::string& VirtualMachine::OutputName(int i) const {
  return model_->outputs()[CheckIndex("output", i, model_->outputs().size())].name;
}

DataType VirtualMachine::InputDtype(int i) const {
  return model_->inputs()[CheckIndex("input", i, model_->inputs().size())].dtype;
}

std::vector<int64_t> VirtualMachine::InputShape(int i) const {
  std::vector<int64_t> shape;
  for (const ShapeExpr& e :
       model_->inputs()[CheckIndex("input", i, model_->inputs().size())].shape) {
    shape.push_back(e.kind == ShapeExpr::Kind::kConst ? e.value : -1);
  }
  return shape;
}

std::string VirtualMachine::InputSignature(int i) const {
  const VmIO& input = model_->inputs()[CheckIndex("input", i, model_->inputs().size())];
  std::string text = "(";
  for (size_t d = 0; d < input.shape.size(); ++d) {
    text += (d ? ", " : "") + input.shape[d].str(model_->size_vars());
  }
  return text + (input.shape.size() == 1 ? ",)" : ")");
}

void VirtualMachine::SetInput(const std::string& name, const NDArray& value) {
  for (size_t i = 0; i < model_->inputs().size(); ++i) {
    if (model_->inputs()[i].name == name) return SetInput(static_cast<int>(i), value);
  }
  std::string names;
  for (const VmIO& input : model_->inputs())
    names += (names.empty() ? "'" : ", '") + input.name + "'";
  LOOM_THROW << "VirtualMachine: the model has no input '" << name << "'; its inputs are " << names;
}

void VirtualMachine::SetInput(int index, const NDArray& value) {
  const VmIO& input = model_->inputs()[CheckIndex("input", index, model_->inputs().size())];
  LOOM_CHECK_USER(value.defined()) << "VirtualMachine: input '" << input.name << "' is undefined";
  std::vector<int64_t> shape = value.Shape();
  bool fits = value.dtype() == input.dtype && shape.size() == input.shape.size();
  for (size_t d = 0; fits && d < shape.size(); ++d) {
    fits = input.shape[d].kind != ShapeExpr::Kind::kConst || input.shape[d].value == shape[d];
  }
  LOOM_CHECK_USER(fits) << "VirtualMachine: input '" << input.name << "' must be " << input.dtype
                        << InputSignature(index) << ", got " << value.dtype() << ShapeString(shape);
  NDArray copy = NDArray::Empty(shape, value.dtype());
  copy.CopyFrom(value.device().device_type == kDLCPU ? value : value.CopyTo(kHostDevice));
  inputs_[static_cast<size_t>(index)] = copy;
}

void VirtualMachine::BindSizes() {
  const std::vector<std::string>& names = model_->size_vars();
  std::vector<int64_t> sizes(names.size(), -1);
  std::vector<std::string> bound_by(names.size());
  for (size_t i = 0; i < model_->inputs().size(); ++i) {
    const VmIO& input = model_->inputs()[i];
    LOOM_CHECK_USER(inputs_[i].defined())
        << "VirtualMachine: input '" << input.name << "' is not set; set every input before Run";
    std::vector<int64_t> shape = inputs_[i].Shape();
    for (size_t d = 0; d < shape.size(); ++d) {
      const ShapeExpr& e = input.shape[d];
      if (e.kind != ShapeExpr::Kind::kVar) continue;
      const size_t v = static_cast<size_t>(e.value);
      std::string here = "dimension " + std::to_string(d) + " of input '" + input.name + "'";
      LOOM_CHECK_USER(shape[d] >= 1) << "VirtualMachine: " << here << " is " << names[v] << " = "
                                     << shape[d] << "; a size variable is at least 1";
      LOOM_CHECK_USER(sizes[v] < 0 || sizes[v] == shape[d])
          << "VirtualMachine: " << here << " gives " << names[v] << " = " << shape[d] << ", but "
          << bound_by[v] << " gave " << names[v] << " = " << sizes[v]
          << "; inputs sharing a size variable must agree";
      sizes[v] = shape[d];
      bound_by[v] = here;
    }
  }
  for (const VmConstraint& constraint : model_->constraints()) {
    const size_t v = static_cast<size_t>(constraint.var);
    LOOM_CHECK_USER(constraint.cond.Evaluate(sizes, constraint.text) != 0)
        << "VirtualMachine: " << bound_by[v] << " is " << names[v] << " = " << sizes[v]
        << ", but the model was compiled for " << constraint.text << " only";
  }
  // Dimensions computed from the variables (2 * n) must hold what they say.
  for (size_t i = 0; i < model_->inputs().size(); ++i) {
    const VmIO& input = model_->inputs()[i];
    std::vector<int64_t> shape = inputs_[i].Shape();
    for (size_t d = 0; d < shape.size(); ++d) {
      if (input.shape[d].kind == ShapeExpr::Kind::kConst ||
          input.shape[d].kind == ShapeExpr::Kind::kVar) {
        continue;
      }
      int64_t want = input.shape[d].Evaluate(sizes, "input '" + input.name + "'");
      LOOM_CHECK_USER(want == shape[d])
          << "VirtualMachine: dimension " << d << " of input '" << input.name << "' is " << shape[d]
          << ", but the signature " << InputSignature(static_cast<int>(i)) << " makes it " << want;
    }
  }
  sizes_ = std::move(sizes);
}

uint64_t VirtualMachine::AllocationBytes(const std::vector<int64_t>& shape, DataType dtype,
                                         const std::string& instruction) const {
  const auto what = [&] { return instruction + "'s tensor"; };  // for messages only
  uint64_t bytes = ElementBytes(dtype);
  for (int64_t extent : shape) {
    LOOM_CHECK_USER(extent >= 0)
        << "VirtualMachine: " << what() << " has the shape " << ShapeString(shape)
        << " at these input sizes: a negative dimension (the inputs are too small for the "
        << "model)";
    LOOM_CHECK_USER(extent == 0 || bytes <= UINT64_MAX / static_cast<uint64_t>(extent))
        << "VirtualMachine: " << what() << " has the shape " << ShapeString(shape)
        << ", whose size in bytes overflows 64 bits";
    bytes *= static_cast<uint64_t>(extent);
  }
  const int64_t limit = model_->max_allocation_bytes();
  LOOM_CHECK_USER(limit <= 0 || bytes <= static_cast<uint64_t>(limit))
      << "VirtualMachine: " << what() << " " << dtype << ShapeString(shape) << " needs " << bytes
      << " bytes, more than the " << limit << " one allocation may take (the compile's "
      << "memory limit); run smaller inputs, or compile with a larger --memory-limit";
  return bytes;
}

NDArray VirtualMachine::Acquire(const std::vector<int64_t>& shape, DataType dtype,
                                const std::string& instruction, NDArray* buffer_out) {
  const size_t size = SizeClass(static_cast<size_t>(AllocationBytes(shape, dtype, instruction)));
  NDArray buffer;
  auto it = free_.find(size);
  if (it != free_.end()) {
    buffer = it->second.buffer;
    free_.erase(it);
  } else {
    buffer = NDArray::Empty({static_cast<int64_t>(size)}, DataType::UInt(8));
    pool_bytes_ += size;
  }
  *buffer_out = buffer;
  return buffer.CreateView(shape, dtype);
}

NDArray VirtualMachine::InStorage(const std::vector<int64_t>& shape, DataType dtype,
                                  const VmInstruction& insn, size_t n) const {
  const std::string& where = instruction_names_[n];
  const uint64_t bytes = AllocationBytes(shape, dtype, where);
  const NDArray& storage = storages_[static_cast<size_t>(insn.storage)];
  LOOM_CHECK_USER(bytes <= storage.NumBytes())
      << "VirtualMachine: " << where << " (alloc) places " << dtype << ShapeString(shape) << " ("
      << bytes << " bytes) in storage " << insn.storage << " of the memory plan, which holds "
      << storage.NumBytes() << ": the plan is made at the bounds the model's sizes were "
      << "compiled with, and these sizes exceed them";
  return storage.CreateView(shape, dtype);
}

NDArray VirtualMachine::Writable(const VmInstruction& insn, size_t n, const char* op) const {
  const size_t dst = static_cast<size_t>(insn.dst);
  // A weight's view is the model's (shared by every machine), an input's the caller's for
  // the whole run: only a tensor the program allocated may be written.
  LOOM_CHECK_USER(buffers_[dst].defined() || in_storage_[dst])
      << "VirtualMachine: " << instruction_names_[n] << " (" << op << ") writes into register "
      << insn.dst << ", which holds a weight or an input, not a tensor allocated by the program";
  return registers_[dst];
}

NDArray VirtualMachine::View(const NDArray& src, const VmInstruction& insn, size_t n) const {
  const std::string& where = instruction_names_[n];
  std::vector<int64_t> shape;
  uint64_t bytes = ElementBytes(src.dtype());
  bool fits = true;
  for (const ShapeExpr& e : insn.shape) {
    const int64_t extent = e.Evaluate(sizes_, where);
    shape.push_back(extent);
    fits = fits && extent >= 0 &&
           !__builtin_mul_overflow(bytes, static_cast<uint64_t>(extent), &bytes);
  }
  LOOM_CHECK_USER(fits && bytes <= src.NumBytes())
      << "VirtualMachine: " << where << " (move) views " << TensorText(src) << " at the shape "
      << ShapeString(shape) << ", which needs more bytes than its " << src.NumBytes();
  return src.CreateView(shape, src.dtype());
}

void VirtualMachine::Release(NDArray buffer) {
  if (!buffer.defined()) return;
  const size_t size = buffer.NumBytes();
  free_.emplace(size, FreeBuffer{std::move(buffer), runs_});
}

void VirtualMachine::TrimPool() {
  for (auto it = free_.begin(); it != free_.end();) {
    if (runs_ - it->second.last_run > kPoolIdleRuns) {
      pool_bytes_ -= it->first;
      it = free_.erase(it);
    } else {
      ++it;
    }
  }
}

void VirtualMachine::Execute(std::vector<double>* kernel_ms) {
  BindSizes();
  ++runs_;
  // The last run's outputs go back to the pool now (they were valid until this run).
  for (NDArray& buffer : output_buffers_) Release(std::move(buffer));
  outputs_.clear();
  output_buffers_.clear();
  for (size_t i = 0; i < model_->inputs().size(); ++i) {
    registers_[static_cast<size_t>(model_->inputs()[i].reg)] = inputs_[i];
  }
  ScopedTaskLimit threads(num_threads_);
  const std::vector<VmInstruction>& code = model_->instructions();
  for (size_t n = 0; n < code.size(); ++n) {
    const VmInstruction& insn = code[n];
    switch (insn.op) {
      case VmInstruction::Op::kIf:
        if (insn.cond.Evaluate(sizes_, instruction_names_[n]) == 0) {
          n = static_cast<size_t>(insn.target) - 1;  // wraps to the first at ++n for target 0
        }
        break;
      case VmInstruction::Op::kGoto:
        n = static_cast<size_t>(insn.target) - 1;
        break;
      case VmInstruction::Op::kMove: {
        const size_t dst = static_cast<size_t>(insn.dst), src = static_cast<size_t>(insn.src);
        Release(std::move(buffers_[dst]));  // what dst held, if anything, goes back
        if (insn.reshape) {
          registers_[dst] = View(registers_[src], insn, n);
        } else {
          registers_[dst] = registers_[src];
        }
        buffers_[dst] = std::move(buffers_[src]);
        buffers_[src] = NDArray();
        in_storage_[dst] = in_storage_[src];
        in_storage_[src] = false;
        if (!model_->IsInputRegister(insn.src)) registers_[src] = NDArray();
        break;
      }
      case VmInstruction::Op::kLoadParam: {
        const size_t dst = static_cast<size_t>(insn.dst);
        Release(std::move(buffers_[dst]));  // a tensor dst held in a loop's last iteration
        buffers_[dst] = NDArray();
        in_storage_[dst] = false;
        registers_[dst] = params_[n];
        break;
      }
      case VmInstruction::Op::kLoadSize: {
        const std::string& name = model_->size_vars()[static_cast<size_t>(insn.var)];
        const int64_t value =
            IntegerValue(registers_[static_cast<size_t>(insn.src)], insn.index, insn.name);
        LOOM_CHECK_USER(value >= 0)
            << "VirtualMachine: the size " << name << " read at run time is " << value
            << ", not a size: the inputs do not fit the model's shape computation (or give a "
            << "negative size)";
        if (insn.bounded) {
          const int64_t upper = insn.upper.Evaluate(sizes_, insn.name);
          LOOM_CHECK_USER(value <= upper)
              << "VirtualMachine: the size " << name << " read at run time is " << value
              << ", but it must lie in [0, " << upper << "] ("
              << insn.upper.str(model_->size_vars()) << " at these inputs)";
        }
        sizes_[static_cast<size_t>(insn.var)] = value;
        break;
      }
      case VmInstruction::Op::kSetSize:
        sizes_[static_cast<size_t>(insn.var)] = insn.value.Evaluate(sizes_, instruction_names_[n]);
        break;
      case VmInstruction::Op::kWriteSize:
        WriteSize(Writable(insn, n, "write_size"),
                  insn.value.Evaluate(sizes_, instruction_names_[n]), instruction_names_[n]);
        break;
      case VmInstruction::Op::kCopy:
        CopyElements(Writable(insn, n, "copy"), registers_[static_cast<size_t>(insn.src)],
                     instruction_names_[n]);
        break;
      case VmInstruction::Op::kStoreRow:
        StoreRow(Writable(insn, n, "store_row"), registers_[static_cast<size_t>(insn.src)],
                 insn.value.Evaluate(sizes_, instruction_names_[n]), instruction_names_[n]);
        break;
      case VmInstruction::Op::kCheck:
        LOOM_CHECK_USER(insn.cond.Evaluate(sizes_, instruction_names_[n]) != 0)
            << "VirtualMachine: " << insn.message;
        break;
      case VmInstruction::Op::kAlloc: {
        std::vector<int64_t> shape;
        const std::string& where = instruction_names_[n];
        for (const ShapeExpr& e : insn.shape) shape.push_back(e.Evaluate(sizes_, where));
        const size_t dst = static_cast<size_t>(insn.dst);
        // A loop allocates into the register again: its last buffer goes back first.
        Release(std::move(buffers_[dst]));
        buffers_[dst] = NDArray();
        in_storage_[dst] = insn.storage >= 0;
        registers_[dst] = in_storage_[dst] ? InStorage(shape, insn.dtype, insn, n)
                                           : Acquire(shape, insn.dtype, where, &buffers_[dst]);
        break;
      }
      case VmInstruction::Op::kInvoke: {
        const VmKernel& kernel = model_->kernels()[static_cast<size_t>(insn.kernel)];
        std::vector<NDArray> args;
        args.reserve(insn.args.size());
        for (int reg : insn.args) args.push_back(registers_[static_cast<size_t>(reg)]);
        auto start = std::chrono::steady_clock::now();
        try {
          kernel.packed.CallWithArrays(args);
        } catch (const Error& error) {
          LOOM_THROW << "VirtualMachine: kernel '" << kernel.name << "' (function '" << kernel.func
                     << "') failed: " << error.what();
        }
        if (kernel_ms != nullptr) {
          // A kernel in a loop: the time of every iteration (branches not taken stay < 0).
          double& ms = (*kernel_ms)[n];
          ms = std::max(ms, 0.0) +
               std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                   .count();
        }
        break;
      }
      case VmInstruction::Op::kRelease:
        // A weight's view, or a tensor in a storage of the plan (no pool buffer), is only let
        // go.
        registers_[static_cast<size_t>(insn.dst)] = NDArray();
        in_storage_[static_cast<size_t>(insn.dst)] = false;
        Release(std::move(buffers_[static_cast<size_t>(insn.dst)]));
        buffers_[static_cast<size_t>(insn.dst)] = NDArray();
        break;
    }
  }
  for (const VmIO& output : model_->outputs()) {
    outputs_.push_back(registers_[static_cast<size_t>(output.reg)]);
    // Taken once: two outputs of one register must not return its buffer twice.
    output_buffers_.push_back(std::move(buffers_[static_cast<size_t>(output.reg)]));
    buffers_[static_cast<size_t>(output.reg)] = NDArray();
  }
  for (NDArray& reg : registers_) reg = NDArray();
  in_storage_.assign(in_storage_.size(), false);
  // A buffer the program did not release (none, from the compiler) goes back to the pool.
  for (NDArray& buffer : buffers_) {
    Release(std::move(buffer));
    buffer = NDArray();
  }
  TrimPool();
}

void VirtualMachine::Run() { Execute(nullptr); }

void VirtualMachine::SetNumThreads(int num_threads) {
  int pool = ThreadPool::Global().num_threads();
  LOOM_CHECK_USER(num_threads >= 0 && num_threads <= pool)
      << "SetNumThreads(" << num_threads << "): a machine runs on 1 to " << pool
      << " threads (the runtime's pool), or 0 for all of them";
  num_threads_ = num_threads;
}

NDArray VirtualMachine::GetOutput(int index) const {
  CheckIndex("output", index, model_->outputs().size());
  LOOM_CHECK_USER(static_cast<size_t>(index) < outputs_.size())
      << "VirtualMachine: GetOutput(" << index << ") before any Run";
  return outputs_[static_cast<size_t>(index)];
}

std::vector<Executor::KernelTime> VirtualMachine::ProfileKernels(int repeat) {
  LOOM_CHECK_USER(repeat >= 1) << "ProfileKernels: repeat must be at least 1, got " << repeat;
  const std::vector<VmInstruction>& code = model_->instructions();
  std::vector<std::vector<double>> samples(code.size());
  std::vector<double> times(code.size());
  for (int r = 0; r < repeat; ++r) {
    std::fill(times.begin(), times.end(), -1.0);  // kernels of branches not taken stay < 0
    Execute(&times);
    for (size_t n = 0; n < code.size(); ++n) samples[n].push_back(times[n]);
  }
  std::vector<KernelTime> result;
  for (size_t n = 0; n < code.size(); ++n) {
    std::vector<double>& s = samples[n];
    if (code[n].op != VmInstruction::Op::kInvoke || s.front() < 0) continue;
    std::nth_element(s.begin(), s.begin() + s.size() / 2, s.end());
    const VmKernel& kernel = model_->kernels()[static_cast<size_t>(code[n].kernel)];
    result.push_back({kernel.func, kernel.name, s[s.size() / 2]});
  }
  return result;
}

std::map<std::string, int64_t> VirtualMachine::SizeValues() const {
  std::map<std::string, int64_t> values;
  for (size_t v = 0; v < sizes_.size(); ++v) values[model_->size_vars()[v]] = sizes_[v];
  return values;
}

size_t VirtualMachine::PoolBytes() const { return pool_bytes_; }

size_t VirtualMachine::PlannedBytes() const { return planned_bytes_; }

}  // namespace loom::runtime
