// CodeGenLLVM: statements -- loops (serial, and parallel through the thread pool), branches,
// stores, allocations (stack or workspace), asserts and the compute scope.
#include "loom/ir/expr_ops.h"
#include "loom/runtime/c_backend_api.h"
#include "loom/tir/transform.h"
#include "target/codegen/codegen_util.h"
#include "target/codegen/llvm/codegen_llvm.h"

namespace loom::codegen {

namespace {
// Constant-sized allocations up to this many bytes live on the stack (thread-pool workers'
// stacks included); larger or symbolic ones come from the workspace service.
constexpr int64_t kMaxStackAllocationBytes = 16 * 1024;
}  // namespace

void CodeGenLLVM::VisitStmt_(const LetStmtNode* op) {
  llvm::Value* value = VisitExpr(op->value);
  value->setName(op->var.name());
  state_.vars[op->var.get()] = value;
  VisitStmt(op->body);
  Unbind(op->var.get());
}

void CodeGenLLVM::VisitStmt_(const AttrStmtNode* op) {
  if (op->attr_key == tir::builtin::kComputeScope) {
    EmitComputeScope(op);
    return;
  }
  if (op->attr_key == tir::builtin::kCoprocUopScope) {
    EmitCoprocUopScope(op);
    return;
  }
  // Other attributes (pragmas, storage hints) carry nothing the CPU code needs.
  VisitStmt(op->body);
}

void CodeGenLLVM::VisitStmt_(const AssertStmtNode* op) {
  llvm::BasicBlock* fail = llvm::BasicBlock::Create(context_, "assert_fail", state_.function);
  llvm::BasicBlock* pass = llvm::BasicBlock::Create(context_, "assert_ok", state_.function);
  builder_->CreateCondBr(VisitExpr(op->condition), pass, fail);
  builder_->SetInsertPoint(fail);
  const auto* message = op->message.as<StringImmNode>();
  EmitFailure(builder_->CreateGlobalString(function_name_ + ": " + message->value, ".assert"));
  builder_->SetInsertPoint(pass);
  VisitStmt(op->body);
}

void CodeGenLLVM::VisitStmt_(const BufferStoreNode* op) {
  const Buffer& buffer = op->buffer;
  PrimExpr index = FlatIndex(buffer, op->indices);
  DataType t = op->value.dtype();
  llvm::Value* value = VisitExpr(op->value);
  int element_bytes = buffer->dtype.bytes() * buffer->dtype.lanes();
  if (index.dtype().lanes() == 1) {
    builder_->CreateAlignedStore(ComputeToStorage(value, t), ElementAddress(buffer, VisitExpr(index)),
                                 llvm::Align(element_bytes));
    return;
  }
  const auto* ramp = index.as<RampNode>();
  int64_t stride = 0;
  if (ramp != nullptr && IsConstInt(ramp->stride, &stride) && stride == 1) {
    builder_->CreateAlignedStore(ComputeToStorage(value, t),
                                 ElementAddress(buffer, VisitExpr(ramp->base)),
                                 llvm::Align(VectorAlignment(buffer, ramp->base)));
    return;
  }
  // A scatter: lanes are stored in order, so a later lane wins when two collide.
  llvm::Value* lanes = VisitExpr(index);
  DataType element = t.element_of();
  for (int lane = 0; lane < index.dtype().lanes(); ++lane) {
    llvm::Value* lane_value = builder_->CreateExtractElement(value, Int32(lane));
    llvm::Value* address = ElementAddress(buffer, builder_->CreateExtractElement(lanes, Int32(lane)));
    builder_->CreateAlignedStore(ComputeToStorage(lane_value, element), address,
                                 llvm::Align(element_bytes));
  }
}

void CodeGenLLVM::VisitStmt_(const AllocateNode* op) {
  // The condition only says whether the storage is needed; allocating anyway is correct.
  DataType t = op->dtype;
  int64_t element_bytes = t.bytes() * t.lanes();
  auto [elements, constant, count] = SizeOf(*op);
  pointer_alignment_[op->buffer_var.get()] = 64;
  // A device's buffer (what the function's kernels read and write) is the device's workspace.
  const int device_type = state_.workspace_device_type;
  if (device_type == kDLCPU && constant && count * element_bytes <= kMaxStackAllocationBytes) {
    llvm::Value* storage =
        EntryAlloca(StorageType(t), Int32(std::max<int64_t>(count, 1)), 64);
    state_.vars[op->buffer_var.get()] = storage;
    VisitStmt(op->body);
    Unbind(op->buffer_var.get());
    return;
  }
  llvm::Type* i32 = builder_->getInt32Ty();
  llvm::Value* nbytes = builder_->CreateMul(VisitExpr(elements), Int64(element_bytes));
  llvm::FunctionType* alloc_type = ServiceType(LOOM_BACKEND_ALLOC_WORKSPACE_SYMBOL);
  llvm::Value* storage = builder_->CreateCall(
      alloc_type, LoadService(LOOM_BACKEND_ALLOC_WORKSPACE_SYMBOL),
      {Int32(device_type), Int32(0), nbytes, llvm::ConstantInt::get(i32, static_cast<int>(t.code())),
       Int32(t.bits())});
  llvm::BasicBlock* fail = llvm::BasicBlock::Create(context_, "alloc_fail", state_.function);
  llvm::BasicBlock* ok = llvm::BasicBlock::Create(context_, "alloc_ok", state_.function);
  builder_->CreateCondBr(builder_->CreateIsNull(storage), fail, ok);
  builder_->SetInsertPoint(fail);
  EmitFailure(builder_->CreateGlobalString(
      function_name_ + ": could not allocate the workspace of '" + op->buffer_var.name() + "'",
      ".alloc"));
  builder_->SetInsertPoint(ok);
  state_.vars[op->buffer_var.get()] = storage;
  state_.live_workspaces.push_back(storage);
  VisitStmt(op->body);
  Unbind(op->buffer_var.get());
  state_.live_workspaces.pop_back();
  llvm::FunctionType* free_type = ServiceType(LOOM_BACKEND_FREE_WORKSPACE_SYMBOL);
  builder_->CreateCall(free_type, LoadService(LOOM_BACKEND_FREE_WORKSPACE_SYMBOL),
                       {Int32(device_type), Int32(0), storage});
}

void CodeGenLLVM::EmitSerialLoop(const Var& loop_var, llvm::Value* begin, llvm::Value* end,
                                 const Stmt& body) {
  llvm::BasicBlock* preheader = builder_->GetInsertBlock();
  llvm::BasicBlock* header = llvm::BasicBlock::Create(context_, "for_header", state_.function);
  llvm::BasicBlock* loop_body = llvm::BasicBlock::Create(context_, "for_body", state_.function);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(context_, "for_end", state_.function);
  builder_->CreateBr(header);
  builder_->SetInsertPoint(header);
  llvm::PHINode* index = builder_->CreatePHI(begin->getType(), 2, loop_var.name());
  index->addIncoming(begin, preheader);
  builder_->CreateCondBr(builder_->CreateICmpSLT(index, end), loop_body, exit);
  builder_->SetInsertPoint(loop_body);
  state_.vars[loop_var.get()] = index;
  VisitStmt(body);
  Unbind(loop_var.get());
  llvm::Value* next = builder_->CreateAdd(index, llvm::ConstantInt::get(begin->getType(), 1),
                                          "", /*HasNUW=*/false, /*HasNSW=*/true);
  index->addIncoming(next, builder_->GetInsertBlock());
  builder_->CreateBr(header);
  builder_->SetInsertPoint(exit);
}

void CodeGenLLVM::VisitStmt_(const ForNode* op) {
  LOOM_CHECK_USER(op->for_kind != ForKind::kThreadBinding)
      << "codegen of '" << function_name_ << "': loop '" << op->loop_var.name()
      << "' is bound to a GPU thread axis, which the llvm (CPU) target cannot run; "
      << "remove the bind() from the schedule";
  if (op->for_kind == ForKind::kParallel) {
    EmitParallelFor(op);
    return;
  }
  // Vectorized loops VectorizeLoop left as loops and unrolled ones UnrollLoop left are
  // serial here; LLVM's own vectorizer and unroller may still transform them.
  llvm::Value* begin = VisitExpr(op->min);
  llvm::Value* end = builder_->CreateAdd(begin, VisitExpr(op->extent));
  EmitSerialLoop(op->loop_var, begin, end, op->body);
}

void CodeGenLLVM::VisitStmt_(const WhileNode* op) {
  llvm::BasicBlock* header = llvm::BasicBlock::Create(context_, "while_header", state_.function);
  llvm::BasicBlock* body = llvm::BasicBlock::Create(context_, "while_body", state_.function);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(context_, "while_end", state_.function);
  builder_->CreateBr(header);
  builder_->SetInsertPoint(header);
  builder_->CreateCondBr(VisitExpr(op->condition), body, exit);
  builder_->SetInsertPoint(body);
  VisitStmt(op->body);
  builder_->CreateBr(header);
  builder_->SetInsertPoint(exit);
}

void CodeGenLLVM::VisitStmt_(const IfThenElseNode* op) {
  llvm::Value* condition = VisitExpr(op->condition);
  llvm::BasicBlock* then_block = llvm::BasicBlock::Create(context_, "if_then", state_.function);
  llvm::BasicBlock* end = llvm::BasicBlock::Create(context_, "if_end", state_.function);
  llvm::BasicBlock* else_block =
      op->else_case.defined() ? llvm::BasicBlock::Create(context_, "if_else", state_.function)
                              : end;
  builder_->CreateCondBr(condition, then_block, else_block);
  builder_->SetInsertPoint(then_block);
  VisitStmt(op->then_case);
  builder_->CreateBr(end);
  if (op->else_case.defined()) {
    builder_->SetInsertPoint(else_block);
    VisitStmt(op->else_case);
    builder_->CreateBr(end);
  }
  builder_->SetInsertPoint(end);
}

void CodeGenLLVM::VisitStmt_(const SeqStmtNode* op) {
  for (const Stmt& stmt : op->seq) VisitStmt(stmt);
}

void CodeGenLLVM::VisitStmt_(const EvaluateNode* op) { VisitExpr(op->value); }

}  // namespace loom::codegen
