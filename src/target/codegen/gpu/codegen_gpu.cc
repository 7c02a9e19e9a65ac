// CodeGenGPU (codegen_gpu.h).
#include "target/codegen/gpu/codegen_gpu.h"

#include <algorithm>
#include <string>

#include "loom/ir/functor.h"
#include "loom/support/error.h"
#include "loom/target/codegen.h"
#include "loom/tir/transform.h"
#include "target/codegen/codegen_util.h"
#include "target/codegen/gpu/gpu_kernels.h"

namespace loom::codegen {

namespace {

// Words of 16 bytes (uint4, a vector type of both dialects): storage any element type, and
// any vector access, may use.
std::string StorageArray(const std::string& name, const AllocateNode& op, int64_t count) {
  const int64_t words = std::max<int64_t>(
      (count * op.dtype.bytes() + kVectorAccessBytes - 1) / kVectorAccessBytes, 1);
  return "uint4 " + name + "[" + std::to_string(words) + "]";
}

// The vector type of `t` (32-bit lanes: ScalarizeVectors keeps no other vector accesses).
std::string VectorType(const std::string& function, DataType t) {
  LOOM_ICHECK(t.bits() == 32 && t.lanes() >= 2 && t.lanes() <= 4 &&
              (t.is_float() || t.is_int() || t.is_uint()))
      << "codegen of '" << function << "': no vector type for " << t;
  return std::string(t.is_float() ? "float"
                     : t.is_int() ? "int"
                                  : "uint") +
         std::to_string(t.lanes());
}

}  // namespace

void CodeGenGPU::AddKernel(const std::string& name, const PrimFunc& func) {
  LOOM_CHECK_USER(IsCIdentifier(name))
      << "a GPU target: kernel name '" << name << "' is not a C identifier";
  function_name_ = name;
  names_.clear();
  global_buffers_.clear();
  shared_buffers_.clear();
  next_temp_ = 0;
  next_name_ = 0;
  std::string signature = KernelHead(ThreadsPerBlock(func)) + " " + name + "(";
  for (size_t i = 0; i < func->params.size(); ++i) {
    const Var& param = func->params[i];
    const DataType t = param.dtype();
    std::string type;
    if (t.is_handle()) {
      type = GlobalSpace() + "void*";
      global_buffers_.insert(param.get());
    } else {
      type = ComputeType(t);
    }
    signature += std::string(i ? ", " : "") + type + " " + Bind(param);
  }
  OpenBlock(signature + ")");
  // Shared memory is the block's: declared once, at the kernel's top (OpenCL allows __local
  // variables nowhere else), for every allocation of it in the kernel.
  PostOrderVisit(func->body, [&](const ObjectRef& node) {
    const auto* op = node.as<AllocateNode>();
    if (op == nullptr || op->storage_scope != "shared") return;
    auto [elements, constant, count] = SizeOf(*op);
    LOOM_CHECK_USER(constant)
        << "codegen of '" << function_name_ << "': the shared allocation of '"
        << op->buffer_var->name_hint << "' has a size known only at run time; shared memory "
        << "is sized when the kernel is compiled (make the schedule's tile sizes constant)";
    const std::string pointer = Bind(op->buffer_var);
    Line(SharedSpace() + StorageArray(pointer + "_storage", *op, count) + ";");
    Line(SharedPointerSpace() + "void* " + pointer + " = " + pointer + "_storage;");
    shared_buffers_.insert(op->buffer_var.get());
  });
  VisitStmt(func->body);
  CloseBlock();
  Line("");
}

std::string CodeGenGPU::Finish() const {
  return Preamble() + ScalarHelpersSource() + "\n" + body_.str();
}

std::string CodeGenGPU::PointerType(const Buffer& buffer) {
  const std::string element = CStorageType(buffer->dtype) + "*";
  if (global_buffers_.count(buffer->data.get())) return GlobalSpace() + element;
  if (shared_buffers_.count(buffer->data.get())) return SharedPointerSpace() + element;
  return element;
}

std::string CodeGenGPU::VisitExpr_(const CallNode* op) {
  const std::string& name = op->op.name();
  if (name == tir::builtin::kThreadSync) {
    Line(Barrier());
    return "0";
  }
  if (name == tir::builtin::kWarpShuffleDown || name == tir::builtin::kWarpShuffle) {
    return WarpShuffle(name == tir::builtin::kWarpShuffleDown, VisitExpr(op->args[0]),
                       VisitExpr(op->args[1]), VisitExpr(op->args[2]));
  }
  return CodeGenC::VisitExpr_(op);
}

std::string CodeGenGPU::WarpShuffle(bool, const std::string&, const std::string&,
                                    const std::string&) const {
  LOOM_ICHECK(false) << "codegen of '" << function_name_ << "': a warp shuffle for a target "
                     << "without them (LowerThreadAllreduce emits them only where "
                     << "-thread-warp-size is above 1)";
  return "";
}

void CodeGenGPU::VisitStmt_(const ForNode* op) {
  if (op->for_kind != ForKind::kThreadBinding) return CodeGenC::VisitStmt_(op);
  const std::string index =
      ThreadIndex(runtime::ThreadAxisOf(function_name_, op->thread_binding->thread_tag));
  OpenBlock("");
  const DataType t = op->loop_var.dtype();
  std::string begin = VisitExpr(op->min);
  Line(ComputeType(t) + " " + Bind(op->loop_var) + " = " + begin + " + (" + ComputeType(t) + ")" +
       index + ";");
  VisitStmt(op->body);
  CloseBlock();
}

void CodeGenGPU::VisitStmt_(const AllocateNode* op) {
  // Declared at the kernel's top (AddKernel).
  if (shared_buffers_.count(op->buffer_var.get())) return VisitStmt(op->body);
  auto [elements, constant, count] = SizeOf(*op);
  LOOM_CHECK_USER(constant)
      << "codegen of '" << function_name_ << "': the allocation of '" << op->buffer_var->name_hint
      << "' has a size known only at run time; a kernel's "
      << "allocations must have constant sizes (make the schedule's tile sizes constant)";
  LOOM_CHECK_USER(op->storage_scope == "local" || op->storage_scope == "global")
      << "codegen of '" << function_name_ << "': the allocation of '" << op->buffer_var->name_hint
      << "' is in scope '" << op->storage_scope
      << "'; a kernel allocates per thread ('local') or per block ('shared')";
  OpenBlock("");
  std::string array = Bind(op->buffer_var) + "_storage";
  Line(StorageArray(array, *op, count) + ";");
  Line("void* " + Name(op->buffer_var.get()) + " = " + array + ";");
  VisitStmt(op->body);
  CloseBlock();
}

void CodeGenGPU::VisitStmt_(const LetStmtNode* op) {
  if (op->var.dtype().lanes() == 1) return CodeGenC::VisitStmt_(op);
  // A chunk of a vector access (ScalarizeVectors keeps no other vector variable).
  const auto* load = op->value.as<BufferLoadNode>();
  const auto* ramp = load ? load->indices[0].as<RampNode>() : nullptr;
  LOOM_ICHECK(ramp != nullptr) << "codegen of '" << function_name_ << "': vector variable "
                               << op->var->name_hint << " is not a vector load";
  const std::string type = VectorType(function_name_, op->var.dtype());
  const std::string value =
      VectorLoad(type, ElementAddress(load->buffer, FlatIndex(load->buffer, {ramp->base})));
  Line(type + " " + Bind(op->var) + " = " + value + ";");
  VisitStmt(op->body);
}

void CodeGenGPU::VisitStmt_(const BufferStoreNode* op) {
  const DataType t = op->value.dtype();
  if (t.lanes() == 1) return CodeGenC::VisitStmt_(op);
  const auto* ramp = op->indices[0].as<RampNode>();
  LOOM_ICHECK(ramp != nullptr) << "codegen of '" << function_name_
                               << "': a vector store that is no vector access";
  const std::string type = VectorType(function_name_, t);
  std::string value;
  if (op->value.as<VarNode>()) {
    value = VisitExpr(op->value);
  } else {
    // A Shuffle of scalars, in lane order.
    const auto* lanes = op->value.as<ShuffleNode>();
    LOOM_ICHECK(lanes != nullptr && lanes->vectors.size() == static_cast<size_t>(t.lanes()))
        << "codegen of '" << function_name_ << "': a vector store of neither a vector "
        << "variable nor scalars";
    std::string list;
    for (const PrimExpr& lane : lanes->vectors)
      list += (list.empty() ? "" : ", ") + VisitExpr(lane);
    value = VectorOf(type, list);
  }
  Line(VectorStore(type, ElementAddress(op->buffer, FlatIndex(op->buffer, {ramp->base})), value) +
       ";");
}

std::string CodeGenGPU::VisitExpr_(const ShuffleNode* op) {
  // A lane of a vector variable (the only Shuffle outside a vector store's value).
  int64_t lane = -1;
  LOOM_ICHECK(op->dtype.lanes() == 1 && op->vectors.size() == 1 &&
              op->vectors[0].as<VarNode>() != nullptr && IsConstInt(op->indices[0], &lane) &&
              lane >= 0 && lane < 4)
      << "codegen of '" << function_name_ << "': a Shuffle that reads no lane of a vector "
      << "variable";
  return VisitExpr(op->vectors[0]) + "." + "xyzw"[lane];
}

void CodeGenGPU::VisitStmt_(const AssertStmtNode*) {
  LOOM_THROW << "codegen of '" << function_name_ << "': a kernel cannot check at run time ("
             << "an assertion inside a thread-bound loop); check on the host, before the launch";
}

}  // namespace loom::codegen
