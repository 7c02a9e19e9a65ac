// CodeGenLLVM: module and function setup, value types, the runtime's services, outlining
// and optimization. Expressions, statements and calls are in the sibling files.
#include "target/codegen/llvm/codegen_llvm.h"

#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/raw_ostream.h>

#include "loom/ir/printer.h"
#include "loom/runtime/c_backend_api.h"
#include "loom/target/codegen.h"
#include "loom/tir/transform.h"

namespace loom::codegen {

CodeGenLLVM::CodeGenLLVM(llvm::LLVMContext* context, const Target& target,
                         llvm::TargetMachine* machine)
    : context_(*context),
      target_(target),
      machine_(machine),
      module_(std::make_unique<llvm::Module>("loom", *context)),
      builder_(std::make_unique<llvm::IRBuilder<>>(*context)) {
  module_->setTargetTriple(machine->getTargetTriple().str());
  module_->setDataLayout(machine->createDataLayout());
  if (target.fast_math()) {
    llvm::FastMathFlags flags;
    flags.setFast();
    builder_->setFastMathFlags(flags);
  }
}

// ---------------------------------------------------------------- functions

llvm::Function* CodeGenLLVM::NewFunction(const std::string& name, llvm::FunctionType* type,
                                         bool exported) {
  LOOM_CHECK_USER(module_->getFunction(name) == nullptr)
      << "codegen: two functions are named '" << name << "'; give each a unique name";
  llvm::Function* function = llvm::Function::Create(
      type, exported ? llvm::Function::ExternalLinkage : llvm::Function::InternalLinkage, name,
      module_.get());
  function->addFnAttr(llvm::Attribute::NoUnwind);
  function->addFnAttr("target-cpu", target_.cpu());
  std::string features;
  for (const std::string& f : target_.features()) features += (features.empty() ? "" : ",") + f;
  if (!features.empty()) function->addFnAttr("target-features", features);
  return function;
}

void CodeGenLLVM::AddFunction(const std::string& name, const PrimFunc& func) {
  auto conv = func->attrs.find(tir::builtin::kCallingConv);
  LOOM_CHECK_USER(conv != func->attrs.end() && func->params.size() == 6)
      << "codegen of '" << name << "': the function is not in the packed calling convention; "
      << "run tir::transform::MakePackedAPI first (loom::build does)";
  llvm::Type* ptr = llvm::PointerType::getUnqual(context_);
  llvm::Type* i32 = builder_->getInt32Ty();
  auto* type = llvm::FunctionType::get(i32, {ptr, ptr, i32, ptr, ptr, ptr}, false);
  function_name_ = name;
  state_ = FunctionState();
  if (auto device = func->attrs.find(tir::builtin::kWorkspaceDevice); device != func->attrs.end()) {
    state_.workspace_device_type = static_cast<int>(device->second.as<IntImmNode>()->value);
  }
  state_.function = NewFunction(name, type, /*exported=*/true);
  state_.entry = llvm::BasicBlock::Create(context_, "entry", state_.function);
  builder_->SetInsertPoint(state_.entry);
  for (size_t i = 0; i < func->params.size(); ++i) {
    llvm::Argument* arg = state_.function->getArg(static_cast<unsigned>(i));
    arg->setName(func->params[i].name());
    state_.vars[func->params[i].get()] = arg;
  }
  VisitStmt(func->body);
  builder_->CreateRet(Int32(0));
}

std::unique_ptr<llvm::Module> CodeGenLLVM::Finish() {
  std::string errors;
  llvm::raw_string_ostream stream(errors);
  LOOM_ICHECK(!llvm::verifyModule(*module_, &stream))
      << "codegen produced invalid LLVM IR: " << stream.str();

  static constexpr llvm::OptimizationLevel const* kLevels[] = {
      &llvm::OptimizationLevel::O0, &llvm::OptimizationLevel::O1, &llvm::OptimizationLevel::O2,
      &llvm::OptimizationLevel::O3};
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager cgscc;
  llvm::ModuleAnalysisManager modules;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = target_.opt_level() >= 2;
  tuning.SLPVectorization = target_.opt_level() >= 2;
  llvm::PassBuilder passes(machine_, tuning);
  passes.registerModuleAnalyses(modules);
  passes.registerCGSCCAnalyses(cgscc);
  passes.registerFunctionAnalyses(functions);
  passes.registerLoopAnalyses(loops);
  passes.crossRegisterProxies(loops, functions, cgscc, modules);
  const llvm::OptimizationLevel& level = *kLevels[target_.opt_level()];
  llvm::ModulePassManager pipeline = level == llvm::OptimizationLevel::O0
                                         ? passes.buildO0DefaultPipeline(level)
                                         : passes.buildPerModuleDefaultPipeline(level);
  pipeline.run(*module_, modules);
  return std::move(module_);
}

// ---------------------------------------------------------------- types

llvm::Type* CodeGenLLVM::ComputeType(DataType t) {
  llvm::Type* element = nullptr;
  if (t.is_handle()) {
    element = llvm::PointerType::getUnqual(context_);
  } else if (t.is_bool()) {
    element = builder_->getInt1Ty();
  } else if (t.is_float()) {
    element = t.bits() == 64 ? builder_->getDoubleTy() : builder_->getFloatTy();
  } else {
    LOOM_ICHECK(t.is_int() || t.is_uint()) << "no LLVM type for " << t;
    element = builder_->getIntNTy(t.bits());
  }
  return t.lanes() == 1 ? element : llvm::FixedVectorType::get(element, t.lanes());
}

llvm::Type* CodeGenLLVM::StorageType(DataType t) {
  llvm::Type* element = nullptr;
  if (t.is_bool()) {
    element = builder_->getInt8Ty();
  } else if (t.is_float() && t.bits() == 16) {
    element = t.is_bfloat16() ? builder_->getInt16Ty() : builder_->getHalfTy();
  } else {
    return ComputeType(t);
  }
  return t.lanes() == 1 ? element : llvm::FixedVectorType::get(element, t.lanes());
}

llvm::Value* CodeGenLLVM::StorageToCompute(llvm::Value* stored, DataType t) {
  if (t.is_bool()) {
    return builder_->CreateICmpNE(stored, llvm::Constant::getNullValue(stored->getType()));
  }
  if (t.is_bfloat16()) {
    llvm::Type* i32 = builder_->getInt32Ty();
    llvm::Type* wide = t.lanes() == 1 ? i32 : llvm::FixedVectorType::get(i32, t.lanes());
    llvm::Value* bits = builder_->CreateShl(builder_->CreateZExt(stored, wide),
                                            llvm::ConstantInt::get(wide, 16));
    return builder_->CreateBitCast(bits, ComputeType(t));
  }
  if (t.is_float() && t.bits() == 16) return builder_->CreateFPExt(stored, ComputeType(t));
  return stored;
}

llvm::Value* CodeGenLLVM::ComputeToStorage(llvm::Value* value, DataType t) {
  if (t.is_bool()) return builder_->CreateZExt(value, StorageType(t));
  if (t.is_bfloat16()) {
    // The value is already a bfloat16 (rounded): its high half is exact.
    llvm::Type* i32 = builder_->getInt32Ty();
    llvm::Type* wide = t.lanes() == 1 ? i32 : llvm::FixedVectorType::get(i32, t.lanes());
    llvm::Value* bits = builder_->CreateLShr(builder_->CreateBitCast(value, wide),
                                             llvm::ConstantInt::get(wide, 16));
    return builder_->CreateTrunc(bits, StorageType(t));
  }
  if (t.is_float() && t.bits() == 16) return builder_->CreateFPTrunc(value, StorageType(t));
  return value;
}

llvm::Value* CodeGenLLVM::RoundToType(llvm::Value* value, DataType t) {
  if (!t.is_float() || t.bits() != 16) return value;
  if (!t.is_bfloat16()) {
    return builder_->CreateFPExt(builder_->CreateFPTrunc(value, StorageType(t)), ComputeType(t));
  }
  // Round to nearest even on the bits (as loom::FloatToBFloat16Bits); NaN stays a quiet NaN.
  llvm::Type* i32 = builder_->getInt32Ty();
  llvm::Type* wide = t.lanes() == 1 ? i32 : llvm::FixedVectorType::get(i32, t.lanes());
  auto constant = [&](uint32_t v) { return llvm::ConstantInt::get(wide, v); };
  llvm::Value* bits = builder_->CreateBitCast(value, wide);
  llvm::Value* lsb = builder_->CreateAnd(builder_->CreateLShr(bits, constant(16)), constant(1));
  llvm::Value* rounded = builder_->CreateAdd(builder_->CreateAdd(bits, constant(0x7fff)), lsb);
  llvm::Value* nan = builder_->CreateOr(bits, constant(0x400000));
  llvm::Value* is_nan = builder_->CreateFCmpUNO(value, value);
  llvm::Value* chosen = builder_->CreateSelect(is_nan, nan, rounded);
  return builder_->CreateBitCast(builder_->CreateAnd(chosen, constant(0xffff0000u)),
                                 ComputeType(t));
}

llvm::Value* CodeGenLLVM::Int32(int64_t value) { return builder_->getInt32(static_cast<uint32_t>(value)); }
llvm::Value* CodeGenLLVM::Int64(int64_t value) { return builder_->getInt64(static_cast<uint64_t>(value)); }

// ---------------------------------------------------------------- runtime services

llvm::FunctionType* CodeGenLLVM::ServiceType(const char* symbol) {
  llvm::Type* ptr = llvm::PointerType::getUnqual(context_);
  llvm::Type* i32 = builder_->getInt32Ty();
  std::string name = symbol;
  if (name == LOOM_BACKEND_PARALLEL_LAUNCH_SYMBOL ||
      name == LOOM_BACKEND_PARALLEL_LAUNCH_SHARED_SYMBOL) {
    return llvm::FunctionType::get(i32, {ptr, ptr, i32}, false);
  }
  if (name == LOOM_BACKEND_ALLOC_WORKSPACE_SYMBOL) {
    return llvm::FunctionType::get(ptr, {i32, i32, builder_->getInt64Ty(), i32, i32}, false);
  }
  if (name == LOOM_BACKEND_FREE_WORKSPACE_SYMBOL) {
    return llvm::FunctionType::get(i32, {i32, i32, ptr}, false);
  }
  if (name == LOOM_BACKEND_CALL_PACKED_SYMBOL) {
    return llvm::FunctionType::get(i32, {ptr, ptr, ptr, ptr, i32}, false);
  }
  LOOM_ICHECK(name == LOOM_API_SET_LAST_ERROR_SYMBOL) << "unknown service " << name;
  return llvm::FunctionType::get(builder_->getVoidTy(), {ptr}, false);
}

llvm::Value* CodeGenLLVM::LoadService(const char* symbol) {
  llvm::Type* ptr = llvm::PointerType::getUnqual(context_);
  llvm::GlobalVariable* global = module_->getGlobalVariable(symbol);
  if (global == nullptr) {
    // Defined zero here; the loader points it at the runtime (c_backend_api.h).
    global = new llvm::GlobalVariable(*module_, ptr, /*isConstant=*/false,
                                      llvm::GlobalValue::ExternalLinkage,
                                      llvm::ConstantPointerNull::get(
                                          llvm::PointerType::getUnqual(context_)),
                                      symbol);
    global->setAlignment(llvm::Align(8));
  }
  return builder_->CreateLoad(ptr, global, std::string(symbol) + ".fn");
}

void CodeGenLLVM::EmitFailure(llvm::Value* message) {
  llvm::FunctionType* type = ServiceType(LOOM_API_SET_LAST_ERROR_SYMBOL);
  llvm::Value* setter = LoadService(LOOM_API_SET_LAST_ERROR_SYMBOL);
  // Without a loader the setter is null: fail without a message rather than crash.
  llvm::BasicBlock* call = llvm::BasicBlock::Create(context_, "set_error", state_.function);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(context_, "fail", state_.function);
  builder_->CreateCondBr(builder_->CreateIsNull(setter), done, call);
  builder_->SetInsertPoint(call);
  builder_->CreateCall(type, setter, {message});
  builder_->CreateBr(done);
  builder_->SetInsertPoint(done);
  // After the message is recorded: freeing succeeds silently, so the message survives.
  FreeLiveWorkspaces();
  builder_->CreateRet(Int32(-1));
}

void CodeGenLLVM::PropagateFailure(llvm::Value* code) {
  llvm::BasicBlock* fail = llvm::BasicBlock::Create(context_, "propagate", state_.function);
  llvm::BasicBlock* ok = llvm::BasicBlock::Create(context_, "ok", state_.function);
  builder_->CreateCondBr(builder_->CreateICmpNE(code, Int32(0)), fail, ok,
                         llvm::MDBuilder(context_).createUnlikelyBranchWeights());
  builder_->SetInsertPoint(fail);
  FreeLiveWorkspaces();
  builder_->CreateRet(code);
  builder_->SetInsertPoint(ok);
}

void CodeGenLLVM::FreeLiveWorkspaces() {
  const std::vector<llvm::Value*>& live = state_.live_workspaces;
  if (live.empty()) return;
  llvm::FunctionType* free_type = ServiceType(LOOM_BACKEND_FREE_WORKSPACE_SYMBOL);
  llvm::Value* free_workspace = LoadService(LOOM_BACKEND_FREE_WORKSPACE_SYMBOL);
  for (auto it = live.rbegin(); it != live.rend(); ++it) {
    builder_->CreateCall(free_type, free_workspace,
                         {Int32(state_.workspace_device_type), Int32(0), *it});
  }
}

llvm::AllocaInst* CodeGenLLVM::EntryAlloca(llvm::Type* type, llvm::Value* count, int alignment) {
  llvm::IRBuilder<> entry(state_.entry, state_.entry->getFirstInsertionPt());
  llvm::AllocaInst* alloca = entry.CreateAlloca(type, count);
  alloca->setAlignment(llvm::Align(alignment));
  return alloca;
}

// ---------------------------------------------------------------- outlining

std::vector<const VarNode*> CodeGenLLVM::CapturedVars(const Stmt& body) {
  std::vector<const VarNode*> captured;
  std::unordered_set<const VarNode*> seen;
  auto note = [&](const ObjectRef& node) {
    const auto* var = node.as<VarNode>();
    if (var != nullptr && state_.vars.count(var) && seen.insert(var).second) {
      captured.push_back(var);
    }
  };
  PostOrderVisit(body, [&](const ObjectRef& node) {
    note(node);
    Buffer buffer;
    if (const auto* load = node.as<BufferLoadNode>()) buffer = load->buffer;
    if (const auto* store = node.as<BufferStoreNode>()) buffer = store->buffer;
    if (!buffer.defined()) return;
    note(buffer->data);
    PostOrderVisit(buffer->elem_offset, note);
    for (const PrimExpr& e : buffer->shape) PostOrderVisit(e, note);
    for (const PrimExpr& e : buffer->strides) PostOrderVisit(e, note);
  });
  return captured;
}

void CodeGenLLVM::EmitComputeScope(const AttrStmtNode* op) {
  // The body becomes its own function taking the buffer pointers as noalias arguments:
  // distinct TIR buffers do not overlap, and telling LLVM lets it vectorize and reorder.
  std::vector<const VarNode*> captured = CapturedVars(op->body);
  std::unordered_set<const VarNode*> buffer_data;
  PostOrderVisit(op->body, [&](const ObjectRef& node) {
    if (const auto* load = node.as<BufferLoadNode>()) buffer_data.insert(load->buffer->data.get());
    if (const auto* store = node.as<BufferStoreNode>()) {
      buffer_data.insert(store->buffer->data.get());
    }
  });
  std::vector<llvm::Type*> types;
  std::vector<llvm::Value*> values;
  for (const VarNode* var : captured) {
    values.push_back(state_.vars.at(var));
    types.push_back(values.back()->getType());
  }
  auto* type = llvm::FunctionType::get(builder_->getInt32Ty(), types, false);
  FunctionState saved = std::move(state_);
  llvm::BasicBlock* resume = builder_->GetInsertBlock();
  state_ = FunctionState();
  // Outlined code allocates where its function does.
  state_.workspace_device_type = saved.workspace_device_type;
  state_.function = NewFunction(function_name_ + "_compute_", type, /*exported=*/false);
  state_.entry = llvm::BasicBlock::Create(context_, "entry", state_.function);
  builder_->SetInsertPoint(state_.entry);
  for (size_t i = 0; i < captured.size(); ++i) {
    llvm::Argument* arg = state_.function->getArg(static_cast<unsigned>(i));
    arg->setName(captured[i]->name_hint);
    if (arg->getType()->isPointerTy() && buffer_data.count(captured[i])) {
      arg->addAttr(llvm::Attribute::NoAlias);
    }
    state_.vars[captured[i]] = arg;
  }
  VisitStmt(op->body);
  builder_->CreateRet(Int32(0));
  llvm::Function* compute = state_.function;
  state_ = std::move(saved);
  builder_->SetInsertPoint(resume);
  PropagateFailure(builder_->CreateCall(compute, values));
}

void CodeGenLLVM::EmitCoprocUopScope(const AttrStmtNode* op) {
  const auto* service = op->value.as<StringImmNode>();
  LOOM_CHECK_USER(service != nullptr && IsCIdentifier(service->value))
      << "a \"" << tir::builtin::kCoprocUopScope << "\" attribute names the runtime function "
      << "that caches its body; got " << ToScript(op->value);
  // The runtime keeps what the body generates by the values of its free variables: a body that
  // read memory would be cached by the address, not the contents.
  bool reads_memory = false;
  PostOrderVisit(op->body, [&](const ObjectRef& node) {
    reads_memory |= node.as<BufferLoadNode>() != nullptr;
  });
  LOOM_CHECK_USER(!reads_memory)
      << "the body of a \"" << tir::builtin::kCoprocUopScope << "\" attribute ("
      << service->value << ") reads memory; what it generates is cached by the values of its "
      << "variables only, so it may compute from variables but not load: " << ToScript(op->body);
  // The signature: the values of the body's free variables, packed without padding, so that
  // equal values are equal bytes (the runtime's cache key).
  std::vector<const VarNode*> captured = CapturedVars(op->body);
  std::vector<llvm::Type*> fields;
  for (const VarNode* var : captured) fields.push_back(state_.vars.at(var)->getType());
  llvm::StructType* signature_type = llvm::StructType::get(context_, fields, /*isPacked=*/true);
  llvm::Value* signature = EntryAlloca(signature_type, nullptr, 8);
  for (size_t i = 0; i < captured.size(); ++i) {
    builder_->CreateStore(state_.vars.at(captured[i]),
                          builder_->CreateStructGEP(signature_type, signature,
                                                    static_cast<unsigned>(i)));
  }
  const auto nbytes = module_->getDataLayout().getTypeAllocSize(signature_type).getFixedValue();

  // int init(void* signature): the body, its free variables read back from the signature.
  llvm::Type* ptr = builder_->getPtrTy();
  auto* init_type = llvm::FunctionType::get(builder_->getInt32Ty(), {ptr}, false);
  FunctionState saved = std::move(state_);
  llvm::BasicBlock* resume = builder_->GetInsertBlock();
  state_ = FunctionState();
  // Outlined code allocates where its function does.
  state_.workspace_device_type = saved.workspace_device_type;
  state_.function = NewFunction(function_name_ + "_uop_kernel" + std::to_string(outlined_count_++),
                                init_type, /*exported=*/false);
  state_.entry = llvm::BasicBlock::Create(context_, "entry", state_.function);
  builder_->SetInsertPoint(state_.entry);
  llvm::Value* packed = state_.function->getArg(0);
  for (size_t i = 0; i < captured.size(); ++i) {
    state_.vars[captured[i]] = builder_->CreateLoad(
        fields[i], builder_->CreateStructGEP(signature_type, packed, static_cast<unsigned>(i)),
        captured[i]->name_hint);
  }
  VisitStmt(op->body);
  builder_->CreateRet(Int32(0));
  llvm::Function* init = state_.function;
  state_ = std::move(saved);
  builder_->SetInsertPoint(resume);

  // The call site's slot, where the runtime keeps what it cached for it.
  auto* handle = new llvm::GlobalVariable(*module_, ptr, /*isConstant=*/false,
                                          llvm::GlobalValue::InternalLinkage,
                                          llvm::ConstantPointerNull::get(builder_->getPtrTy()),
                                          init->getName() + "_handle");
  llvm::FunctionCallee push = module_->getOrInsertFunction(
      service->value,
      llvm::FunctionType::get(builder_->getInt32Ty(), {ptr, ptr, ptr, builder_->getInt32Ty()},
                              false));
  builder_->CreateCall(push, {handle, init, signature, Int32(static_cast<int64_t>(nbytes))});
}

void CodeGenLLVM::EmitParallelFor(const ForNode* op) {
  // for v in [min, min + extent) parallel: body  becomes a lambda run by num_task tasks of
  // the thread pool. The iterations are cut into kChunksPerTask * num_task contiguous
  // chunks, and each task claims the next chunk from a counter in the closure until none is
  // left: a task that starts late (its core busy with another process, its thread still
  // waking up) then costs only its share of the remaining chunks, where a fixed split would
  // keep the others waiting for its whole part.
  std::vector<const VarNode*> captured = CapturedVars(op->body);
  llvm::Value* min = VisitExpr(op->min);
  llvm::Value* extent = VisitExpr(op->extent);
  llvm::Type* index_type = min->getType();
  std::vector<llvm::Type*> field_types{index_type, extent->getType(), index_type};
  std::vector<llvm::Value*> values{min, extent, llvm::ConstantInt::get(index_type, 0)};
  for (const VarNode* var : captured) {
    values.push_back(state_.vars.at(var));
    field_types.push_back(values.back()->getType());
  }
  llvm::StructType* closure = llvm::StructType::get(context_, field_types);
  llvm::AllocaInst* cdata = EntryAlloca(closure, nullptr, 8);
  for (size_t i = 0; i < values.size(); ++i) {
    builder_->CreateStore(values[i], builder_->CreateStructGEP(closure, cdata, i));
  }

  llvm::Type* ptr = llvm::PointerType::getUnqual(context_);
  llvm::Type* i32 = builder_->getInt32Ty();
  auto* lambda_type = llvm::FunctionType::get(i32, {i32, ptr, ptr}, false);
  FunctionState saved = std::move(state_);
  llvm::BasicBlock* resume = builder_->GetInsertBlock();
  state_ = FunctionState();
  // Outlined code allocates where its function does.
  state_.workspace_device_type = saved.workspace_device_type;
  state_.function = NewFunction(
      function_name_ + "_parallel_" + std::to_string(outlined_count_++), lambda_type, false);
  state_.entry = llvm::BasicBlock::Create(context_, "entry", state_.function);
  builder_->SetInsertPoint(state_.entry);
  llvm::Value* penv = state_.function->getArg(1);
  llvm::Value* closure_ptr = state_.function->getArg(2);
  auto field = [&](size_t i) {
    return builder_->CreateLoad(field_types[i], builder_->CreateStructGEP(closure, closure_ptr, i));
  };
  llvm::Value* begin_all = field(0);
  llvm::Value* extent_all = field(1);
  llvm::Value* next_chunk = builder_->CreateStructGEP(closure, closure_ptr, 2);
  for (size_t i = 0; i < captured.size(); ++i) state_.vars[captured[i]] = field(i + 3);
  llvm::Value* num_task = builder_->CreateLoad(
      i32, builder_->CreateStructGEP(
               llvm::StructType::get(context_, {ptr, i32}), penv, 1));
  llvm::Value* chunks_wanted = builder_->CreateMul(builder_->CreateSExt(num_task, index_type),
                                                   llvm::ConstantInt::get(index_type, kChunksPerTask));
  llvm::Value* one = llvm::ConstantInt::get(index_type, 1);
  // ceil(extent / chunks) without forming extent + chunks, which could overflow; an empty
  // loop gets chunks of 1 and runs none of them.
  llvm::Value* chunk = builder_->CreateAdd(
      builder_->CreateSDiv(builder_->CreateSub(extent_all, one), chunks_wanted), one);

  llvm::BasicBlock* claim = llvm::BasicBlock::Create(context_, "claim_chunk", state_.function);
  llvm::BasicBlock* check = llvm::BasicBlock::Create(context_, "check_chunk", state_.function);
  llvm::BasicBlock* run = llvm::BasicBlock::Create(context_, "run_chunk", state_.function);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(context_, "chunks_done", state_.function);
  builder_->CreateBr(claim);
  builder_->SetInsertPoint(claim);
  // Monotonic: the chunks only need distinct indices; the launch's completion orders the
  // tasks' writes before the caller reads them.
  llvm::Value* index = builder_->CreateAtomicRMW(llvm::AtomicRMWInst::Add, next_chunk, one,
                                                 llvm::MaybeAlign(), llvm::AtomicOrdering::Monotonic);
  // Every task ends with one claim past the last chunk: the index is bounded first, so the
  // offset (at most about the extent) cannot overflow the index type.
  builder_->CreateCondBr(builder_->CreateICmpSLT(index, chunks_wanted), check, done);
  builder_->SetInsertPoint(check);
  llvm::Value* offset = builder_->CreateMul(index, chunk);
  llvm::Value* left = builder_->CreateSub(extent_all, offset);
  builder_->CreateCondBr(builder_->CreateICmpSGT(left, llvm::ConstantInt::get(index_type, 0)),
                         run, done);
  builder_->SetInsertPoint(run);
  llvm::Value* first = builder_->CreateAdd(begin_all, offset);
  llvm::Value* size = builder_->CreateSelect(builder_->CreateICmpSLT(chunk, left), chunk, left);
  EmitSerialLoop(op->loop_var, first, builder_->CreateAdd(first, size), op->body);
  builder_->CreateBr(claim);
  builder_->SetInsertPoint(done);
  builder_->CreateRet(Int32(0));
  llvm::Function* lambda = state_.function;
  state_ = std::move(saved);
  builder_->SetInsertPoint(resume);

  // Any task may run every chunk: the shared launch need not wait for a late worker.
  llvm::FunctionType* launch_type = ServiceType(LOOM_BACKEND_PARALLEL_LAUNCH_SHARED_SYMBOL);
  llvm::Value* launch = LoadService(LOOM_BACKEND_PARALLEL_LAUNCH_SHARED_SYMBOL);
  PropagateFailure(builder_->CreateCall(launch_type, launch, {lambda, cdata, Int32(0)}));
}

}  // namespace loom::codegen
