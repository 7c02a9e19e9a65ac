// CodeGenLLVM: calls -- math intrinsics, bitwise operations, if_then_else, external
// functions, LLVM intrinsics by name (call_llvm_pure_intrin), and the packed-API builtins (loom_struct_get, loom_handle_is_null, loom_check).
#include <dlpack/dlpack.h>

#include <cstddef>
#include <unordered_map>

#include "loom/ir/op_attr.h"
#include "loom/runtime/c_backend_api.h"
#include "loom/tir/transform.h"
#include <llvm/Config/llvm-config.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/Support/raw_ostream.h>

#include "target/codegen/codegen_util.h"
#include "target/codegen/llvm/codegen_llvm.h"

namespace loom::codegen {

namespace {

// The byte offsets codegen reads DLTensor fields at.
static_assert(offsetof(DLTensor, data) == 0 && offsetof(DLTensor, device) == 8 &&
              offsetof(DLTensor, ndim) == 16 && offsetof(DLTensor, dtype) == 20 &&
              offsetof(DLTensor, shape) == 24 && offsetof(DLTensor, strides) == 32 &&
              offsetof(DLTensor, byte_offset) == 40 && sizeof(DLTensor) == 48,
              "DLTensor layout differs from what codegen assumes");
static_assert(sizeof(LoomValue) == 8, "LoomValue must be 8 bytes");

// Math functions with an LLVM intrinsic; the others call libm.
llvm::Intrinsic::ID MathIntrinsic(const std::string& name) {
  static const std::unordered_map<std::string, llvm::Intrinsic::ID> kIntrinsics = {
      {"exp", llvm::Intrinsic::exp},     {"exp2", llvm::Intrinsic::exp2},
      {"log", llvm::Intrinsic::log},     {"log2", llvm::Intrinsic::log2},
      {"log10", llvm::Intrinsic::log10}, {"sqrt", llvm::Intrinsic::sqrt},
      {"fabs", llvm::Intrinsic::fabs},   {"floor", llvm::Intrinsic::floor},
      {"ceil", llvm::Intrinsic::ceil},   {"round", llvm::Intrinsic::roundeven},
      {"trunc", llvm::Intrinsic::trunc}, {"sin", llvm::Intrinsic::sin},
      {"cos", llvm::Intrinsic::cos},     {"pow", llvm::Intrinsic::pow},
      // llvm.fma always fuses (llvm.fmuladd may not): compiled code rounds where the TIR does.
      {"fma", llvm::Intrinsic::fma},
  };
  auto it = kIntrinsics.find(name);
  return it == kIntrinsics.end() ? llvm::Intrinsic::not_intrinsic : it->second;
}

}  // namespace

llvm::Value* CodeGenLLVM::EmitMath(const std::string& name, DataType t,
                                   const std::vector<llvm::Value*>& args) {
  if (llvm::Value* approximation = EmitMathApproximation(name, t, args)) return approximation;
  llvm::Value* x = args[0];
  llvm::Type* type = x->getType();
  llvm::Value* result = nullptr;
  if (llvm::Intrinsic::ID id = MathIntrinsic(name); id != llvm::Intrinsic::not_intrinsic) {
    result = builder_->CreateIntrinsic(id, {type}, args);
  } else if (name == "rsqrt") {
    result = builder_->CreateFDiv(llvm::ConstantFP::get(type, 1.0),
                                  builder_->CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x));
  } else if (name == "sigmoid") {
    llvm::Value* one = llvm::ConstantFP::get(type, 1.0);
    llvm::Value* e = builder_->CreateUnaryIntrinsic(llvm::Intrinsic::exp, builder_->CreateFNeg(x));
    result = builder_->CreateFDiv(one, builder_->CreateFAdd(one, e));
  } else {
    // tanh and erf: libm, lane by lane (the same functions the interpreter calls).
    LOOM_ICHECK(name == "tanh" || name == "erf") << "no lowering for math function " << name;
    bool single = t.bits() != 64;
    llvm::Type* scalar = single ? builder_->getFloatTy() : builder_->getDoubleTy();
    llvm::FunctionCallee callee = module_->getOrInsertFunction(
        name + (single ? "f" : ""), llvm::FunctionType::get(scalar, {scalar}, false));
    if (t.lanes() == 1) {
      result = builder_->CreateCall(callee, {x});
    } else {
      result = llvm::PoisonValue::get(type);
      for (int lane = 0; lane < t.lanes(); ++lane) {
        llvm::Value* value = builder_->CreateCall(callee, {builder_->CreateExtractElement(x, Int32(lane))});
        result = builder_->CreateInsertElement(result, value, Int32(lane));
      }
    }
  }
  return RoundToType(result, t);
}

llvm::Value* CodeGenLLVM::EmitMathApproximation(const std::string& name, DataType t,
                                                const std::vector<llvm::Value*>& args) {
  // loom::build lowers these calls in TIR, except under -fast-math: there they arrive here,
  // and the same expressions are emitted without the fast-math flags, under which LLVM
  // would reassociate away their rounding tricks and delete their special-value selects.
  Array<PrimExpr> params;
  for (llvm::Value* arg : args) {
    Var param("x", t);
    state_.vars[param.get()] = arg;
    params.push_back(param);
  }
  PrimExpr call = Call(t, Op::Get(name), params);
  PrimExpr lowered = tir::transform::LowerMathIntrinsicsInExpr(call);
  llvm::Value* result = nullptr;
  if (!lowered.same_as(call)) {
    llvm::IRBuilderBase::FastMathFlagGuard guard(*builder_);
    builder_->clearFastMathFlags();
    result = VisitExpr(lowered);
  }
  // The expression dies here: no variable of it may stay bound (its address could be reused).
  PostOrderVisit(lowered, [&](const ObjectRef& node) {
    if (const auto* var = node.as<VarNode>()) state_.vars.erase(var);
  });
  return result;
}

llvm::Value* CodeGenLLVM::EmitExtern(const CallNode* op, size_t first_arg) {
  const std::string& name = op->args[0].as<StringImmNode>()->value;
  std::vector<llvm::Value*> args;
  std::vector<llvm::Type*> types;
  for (size_t i = first_arg; i < op->args.size(); ++i) {
    args.push_back(VisitExpr(op->args[i]));
    types.push_back(args.back()->getType());
  }
  llvm::Type* ret = op->dtype.is_void() ? builder_->getVoidTy() : ComputeType(op->dtype);
  llvm::FunctionCallee callee =
      module_->getOrInsertFunction(name, llvm::FunctionType::get(ret, types, false));
  llvm::Value* result = builder_->CreateCall(callee, args);
  // A void call still needs a value for its Evaluate: a dummy int32 zero.
  return op->dtype.is_void() ? Int32(0) : result;
}

llvm::Value* CodeGenLLVM::EmitLLVMIntrinsic(const CallNode* op) {
  const std::string& name = op->args[0].as<StringImmNode>()->value;
  std::string what = "codegen of '" + function_name_ + "': " + op->op->name + " of '" + name + "'";
  llvm::Intrinsic::ID id = llvm::Function::lookupIntrinsicID(name);
  LOOM_CHECK_USER(id != llvm::Intrinsic::not_intrinsic)
      << what << ": LLVM " << LLVM_VERSION_STRING << " has no intrinsic of that name";
  std::vector<llvm::Value*> args;
  std::vector<llvm::Type*> types;
  std::string given;
  for (size_t i = 1; i < op->args.size(); ++i) {
    args.push_back(VisitExpr(op->args[i]));
    types.push_back(args.back()->getType());
    given += (i > 1 ? ", " : "") + op->args[i].dtype().str();
  }
  // bfloat lanes, which Loom has no LLVM value of (it computes bfloat16 as float and stores
  // it as i16), are passed as integer lanes of the same bits and bitcast here to what a
  // non-overloaded intrinsic declares (vdpbf16ps: <32 x bfloat>). Other mismatches stay
  // errors.
  if (!llvm::Intrinsic::isOverloaded(id)) {
    llvm::FunctionType* declared = llvm::Intrinsic::getType(context_, id);
    for (size_t i = 0; i < args.size() && i < declared->getNumParams(); ++i) {
      llvm::Type* want = declared->getParamType(i);
      if (types[i] != want && types[i]->isIntOrIntVectorTy() &&
          want->getScalarType()->isBFloatTy() &&
          types[i]->getPrimitiveSizeInBits() == want->getPrimitiveSizeInBits()) {
        args[i] = builder_->CreateBitCast(args[i], want);
        types[i] = want;
      }
    }
  }
  // Matching the call's signature against LLVM's table both checks the types (a mismatch
  // would otherwise be an LLVM assertion or a miscompile) and infers the overloaded types.
  llvm::Type* ret = op->dtype.is_void() ? builder_->getVoidTy() : ComputeType(op->dtype);
  llvm::FunctionType* call_type = llvm::FunctionType::get(ret, types, false);
  llvm::SmallVector<llvm::Intrinsic::IITDescriptor, 8> table;
  llvm::Intrinsic::getIntrinsicInfoTableEntries(id, table);
  llvm::ArrayRef<llvm::Intrinsic::IITDescriptor> descriptors = table;
  llvm::SmallVector<llvm::Type*, 4> overloads;
  bool matches = llvm::Intrinsic::matchIntrinsicSignature(call_type, descriptors, overloads) ==
                     llvm::Intrinsic::MatchIntrinsicTypes_Match &&
                 !llvm::Intrinsic::matchIntrinsicVarArg(false, descriptors);
  llvm::Function* callee = nullptr;
  if (matches) {
    callee = llvm::Intrinsic::getDeclaration(module_.get(), id, overloads);
    // An overloaded intrinsic's name carries its types: "llvm.fshl.i32" called on i64 matches
    // the table but is another function.
    matches = callee->getName() == name;
  }
  if (!matches) {
    std::string hint;
    llvm::raw_string_ostream os(hint);
    if (callee != nullptr) {
      os << "; called with these types its name is '" << callee->getName() << "'";
    } else if (!llvm::Intrinsic::isOverloaded(id)) {
      os << "; it takes ";
      llvm::Intrinsic::getType(context_, id)->print(os);
      os << " (LLVM types: <lanes x type> is a vector)";
    } else {
      os << "; the suffix of an overloaded intrinsic's name spells the types it takes";
    }
    LOOM_THROW << what << ": the call's types (" << op->dtype << " from " << given
               << ") do not match the intrinsic" << hint;
  }
  return builder_->CreateCall(callee, args);
}

llvm::Value* CodeGenLLVM::EmitStructGet(const CallNode* op) {
  using tir::builtin::StructField;
  llvm::Value* base = VisitExpr(op->args[0]);
  int64_t index = 0, field = 0;
  LOOM_ICHECK(IsConstInt(op->args[1], &index) && IsConstInt(op->args[2], &field))
      << "loom_struct_get takes constant index and field";
  llvm::Type* type = ComputeType(op->dtype);
  int64_t offset = StructFieldOffset(static_cast<StructField>(field), index);
  llvm::Value* address = builder_->CreateInBoundsGEP(builder_->getInt8Ty(), base, Int64(offset));
  return builder_->CreateLoad(type, address);
}

llvm::Value* CodeGenLLVM::EmitCheck(const CallNode* op) {
  // loom_check(cond, format, values...): on failure, format the message into a stack buffer
  // with snprintf (libc, present wherever the code runs) and fail the function.
  llvm::BasicBlock* fail = llvm::BasicBlock::Create(context_, "check_fail", state_.function);
  llvm::BasicBlock* pass = llvm::BasicBlock::Create(context_, "check_ok", state_.function);
  builder_->CreateCondBr(VisitExpr(op->args[0]), pass, fail,
                         llvm::MDBuilder(context_).createLikelyBranchWeights());
  builder_->SetInsertPoint(fail);
  constexpr int kMessageBytes = 512;
  if (state_.message_buffer == nullptr) {
    state_.message_buffer = EntryAlloca(builder_->getInt8Ty(), Int32(kMessageBytes), 8);
  }
  llvm::Value* buffer = state_.message_buffer;
  std::vector<llvm::Value*> args{buffer, Int64(kMessageBytes), VisitExpr(op->args[1])};
  for (size_t i = 2; i < op->args.size(); ++i) args.push_back(VisitExpr(op->args[i]));
  llvm::Type* ptr = llvm::PointerType::getUnqual(context_);
  llvm::FunctionCallee snprintf = module_->getOrInsertFunction(
      "snprintf", llvm::FunctionType::get(builder_->getInt32Ty(),
                                          {ptr, builder_->getInt64Ty(), ptr}, true));
  builder_->CreateCall(snprintf, args);
  EmitFailure(buffer);
  builder_->SetInsertPoint(pass);
  return Int32(0);
}

llvm::Value* CodeGenLLVM::EmitCallPacked(const CallNode* op) {
  // loom_call_packed("name", args...): the arguments as (LoomValue, type code) arrays on the
  // stack, then the call-packed service with this module's context; a failure returns the
  // callee's code, its message already set.
  const auto* name = op->args[0].as<StringImmNode>();
  LOOM_ICHECK(name != nullptr) << "loom_call_packed takes the function's name first";
  int num_args = static_cast<int>(op->args.size()) - 1;
  llvm::Type* i64 = builder_->getInt64Ty();
  llvm::Type* i32 = builder_->getInt32Ty();
  llvm::AllocaInst* values = EntryAlloca(i64, Int32(std::max(num_args, 1)), 8);
  llvm::AllocaInst* codes = EntryAlloca(i32, Int32(std::max(num_args, 1)), 4);
  for (int i = 0; i < num_args; ++i) {
    const PrimExpr& arg = op->args[i + 1];
    DataType t = arg.dtype();
    LOOM_CHECK_USER(t.lanes() == 1)
        << "codegen of '" << function_name_ << "': loom_call_packed of '" << name->value
        << "' passes a vector (" << t << "); pass scalars and handles";
    llvm::Value* value = VisitExpr(arg);
    int code = kLoomArgInt;
    if (t.is_handle()) {
      value = builder_->CreatePtrToInt(value, i64);
      code = kLoomOpaqueHandle;
    } else if (t.is_float()) {
      value = builder_->CreateBitCast(builder_->CreateFPExt(value, builder_->getDoubleTy()), i64);
      code = kLoomArgFloat;
    } else {
      value = t.is_int() ? builder_->CreateSExt(value, i64) : builder_->CreateZExt(value, i64);
    }
    builder_->CreateStore(value, builder_->CreateInBoundsGEP(i64, values, Int32(i)));
    builder_->CreateStore(Int32(code), builder_->CreateInBoundsGEP(i32, codes, Int32(i)));
  }
  llvm::Value* service = LoadService(LOOM_BACKEND_CALL_PACKED_SYMBOL);
  // Code no runtime loaded has no service to call.
  llvm::BasicBlock* missing = llvm::BasicBlock::Create(context_, "no_runtime", state_.function);
  llvm::BasicBlock* call = llvm::BasicBlock::Create(context_, "call_packed", state_.function);
  builder_->CreateCondBr(builder_->CreateIsNull(service), missing, call,
                         llvm::MDBuilder(context_).createUnlikelyBranchWeights());
  builder_->SetInsertPoint(missing);
  EmitFailure(builder_->CreateGlobalStringPtr(function_name_ + ": launching '" + name->value +
                                              "' needs the Loom runtime, which did not load "
                                              "this code"));
  builder_->SetInsertPoint(call);
  llvm::Value* context = LoadService(LOOM_MODULE_CONTEXT_SYMBOL);
  llvm::Value* result = builder_->CreateCall(
      ServiceType(LOOM_BACKEND_CALL_PACKED_SYMBOL), service,
      {context, builder_->CreateGlobalStringPtr(name->value), values, codes, Int32(num_args)});
  PropagateFailure(result);
  return Int32(0);
}

llvm::Value* CodeGenLLVM::EmitIfThenElse(const PrimExpr& condition, const PrimExpr& then_value,
                                         const PrimExpr& else_value, DataType t) {
  if (condition.dtype().lanes() > 1) {
    // Per-lane choice: both sides are computed, as for Select.
    return builder_->CreateSelect(VisitExpr(condition), VisitExpr(then_value),
                                  VisitExpr(else_value));
  }
  llvm::BasicBlock* then_block = llvm::BasicBlock::Create(context_, "ite_then", state_.function);
  llvm::BasicBlock* else_block = llvm::BasicBlock::Create(context_, "ite_else", state_.function);
  llvm::BasicBlock* end = llvm::BasicBlock::Create(context_, "ite_end", state_.function);
  builder_->CreateCondBr(VisitExpr(condition), then_block, else_block);
  builder_->SetInsertPoint(then_block);
  llvm::Value* then_result = VisitExpr(then_value);
  llvm::BasicBlock* then_end = builder_->GetInsertBlock();
  builder_->CreateBr(end);
  builder_->SetInsertPoint(else_block);
  llvm::Value* else_result = VisitExpr(else_value);
  llvm::BasicBlock* else_end = builder_->GetInsertBlock();
  builder_->CreateBr(end);
  builder_->SetInsertPoint(end);
  llvm::PHINode* phi = builder_->CreatePHI(ComputeType(t), 2);
  phi->addIncoming(then_result, then_end);
  phi->addIncoming(else_result, else_end);
  return phi;
}

llvm::Value* CodeGenLLVM::VisitExpr_(const CallNode* op) {
  const CallEmitterLLVM* emit = OpAttr<CallEmitterLLVM>::Find("codegen.llvm", op->op);
  LOOM_CHECK_USER(emit != nullptr)
      << "codegen of '" << function_name_ << "': " << op->op.name()
      << " has no lowering for the llvm target"
      << (op->op.name() == "tvm_tuple" ? " (it is an attribute payload and cannot be evaluated)"
                                       : "");
  return (*emit)(*this, op);
}

// The llvm target's lowering of each built-in operator, registered as the operator's
// "codegen.llvm" attribute (loom/ir/op_attr.h).
struct LLVMCallRules {
  static std::vector<llvm::Value*> Args(CodeGenLLVM& cg, const CallNode* op) {
    std::vector<llvm::Value*> args;
    for (const PrimExpr& arg : op->args) args.push_back(cg.VisitExpr(arg));
    return args;
  }
  static DataType ArgType(const CallNode* op) {
    return op->args.empty() ? op->dtype : op->args[0].dtype();
  }
  static llvm::Value* Math(CodeGenLLVM& cg, const CallNode* op) {
    return cg.EmitMath(op->op.name(), op->dtype, Args(cg, op));
  }
  static llvm::Value* Extern(CodeGenLLVM& cg, const CallNode* op) { return cg.EmitExtern(op, 1); }
  static llvm::Value* LLVMIntrinsic(CodeGenLLVM& cg, const CallNode* op) {
    return cg.EmitLLVMIntrinsic(op);
  }
  static llvm::Value* StructGet(CodeGenLLVM& cg, const CallNode* op) {
    return cg.EmitStructGet(op);
  }
  static llvm::Value* Check(CodeGenLLVM& cg, const CallNode* op) { return cg.EmitCheck(op); }
  static llvm::Value* CallPacked(CodeGenLLVM& cg, const CallNode* op) {
    return cg.EmitCallPacked(op);
  }
  static llvm::Value* HandleIsNull(CodeGenLLVM& cg, const CallNode* op) {
    return cg.builder_->CreateIsNull(cg.VisitExpr(op->args[0]));
  }
  static llvm::Value* IfThenElse(CodeGenLLVM& cg, const CallNode* op) {
    return cg.EmitIfThenElse(op->args[0], op->args[1], op->args[2], op->dtype);
  }
  static llvm::Value* Likely(CodeGenLLVM& cg, const CallNode* op) {
    return cg.VisitExpr(op->args[0]);
  }
  static llvm::Value* AddressOf(CodeGenLLVM& cg, const CallNode* op) {
    const auto* load = op->args[0].as<BufferLoadNode>();
    LOOM_ICHECK(load != nullptr) << "address_of takes a BufferLoad";
    return cg.ElementAddress(load->buffer, cg.VisitExpr(FlatIndex(load->buffer, load->indices)));
  }
  static llvm::Value* IsNan(CodeGenLLVM& cg, const CallNode* op) {
    llvm::Value* x = cg.VisitExpr(op->args[0]);
    return cg.builder_->CreateFCmpUNO(x, x);
  }
  static llvm::Value* Popcount(CodeGenLLVM& cg, const CallNode* op) {
    return cg.builder_->CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, cg.VisitExpr(op->args[0]));
  }
  static llvm::Value* ShiftRight(CodeGenLLVM& cg, const CallNode* op) {
    std::vector<llvm::Value*> a = Args(cg, op);
    return ArgType(op).is_int() ? cg.builder_->CreateAShr(a[0], a[1])
                                : cg.builder_->CreateLShr(a[0], a[1]);
  }
  // One of IRBuilder's binary instructions on the two operands.
  template <llvm::Instruction::BinaryOps kOp>
  static llvm::Value* Binary(CodeGenLLVM& cg, const CallNode* op) {
    std::vector<llvm::Value*> a = Args(cg, op);
    return cg.builder_->CreateBinOp(kOp, a[0], a[1]);
  }
  static llvm::Value* BitwiseNot(CodeGenLLVM& cg, const CallNode* op) {
    return cg.builder_->CreateNot(cg.VisitExpr(op->args[0]));
  }
  static llvm::Value* Reinterpret(CodeGenLLVM& cg, const CallNode* op) {
    DataType t = op->dtype, from = ArgType(op);
    llvm::Value* x = cg.VisitExpr(op->args[0]);
    auto& ir = *cg.builder_;
    if (from.is_handle()) return ir.CreatePtrToInt(x, cg.ComputeType(t));
    if (t.is_handle()) return ir.CreateIntToPtr(x, cg.ComputeType(t));
    llvm::Value* stored = cg.ComputeToStorage(x, from);
    return cg.StorageToCompute(ir.CreateBitCast(stored, cg.StorageType(t)), t);
  }
};

using Rules = LLVMCallRules;
#define LOOM_LLVM_RULE(op, rule) LOOM_REGISTER_OP_ATTR("codegen.llvm", op, CallEmitterLLVM(rule))
LOOM_LLVM_RULE("call_extern", Rules::Extern);
LOOM_LLVM_RULE("call_pure_extern", Rules::Extern);
LOOM_LLVM_RULE("call_llvm_pure_intrin", Rules::LLVMIntrinsic);
LOOM_LLVM_RULE("call_llvm_intrin", Rules::LLVMIntrinsic);
LOOM_LLVM_RULE("loom_struct_get", Rules::StructGet);
LOOM_LLVM_RULE("loom_check", Rules::Check);
LOOM_LLVM_RULE("loom_call_packed", Rules::CallPacked);
LOOM_LLVM_RULE("loom_handle_is_null", Rules::HandleIsNull);
LOOM_LLVM_RULE("if_then_else", Rules::IfThenElse);
LOOM_LLVM_RULE("likely", Rules::Likely);
LOOM_LLVM_RULE("address_of", Rules::AddressOf);
LOOM_LLVM_RULE("isnan", Rules::IsNan);
LOOM_LLVM_RULE("popcount", Rules::Popcount);
LOOM_LLVM_RULE("shift_left", Rules::Binary<llvm::Instruction::Shl>);
LOOM_LLVM_RULE("shift_right", Rules::ShiftRight);
LOOM_LLVM_RULE("bitwise_and", Rules::Binary<llvm::Instruction::And>);
LOOM_LLVM_RULE("bitwise_or", Rules::Binary<llvm::Instruction::Or>);
LOOM_LLVM_RULE("bitwise_xor", Rules::Binary<llvm::Instruction::Xor>);
LOOM_LLVM_RULE("bitwise_not", Rules::BitwiseNot);
LOOM_LLVM_RULE("reinterpret", Rules::Reinterpret);
// Math functions: LLVM intrinsics, polynomials (-fast-math), or libm (see EmitMath).
LOOM_LLVM_RULE("exp", Rules::Math);
LOOM_LLVM_RULE("exp2", Rules::Math);
LOOM_LLVM_RULE("log", Rules::Math);
LOOM_LLVM_RULE("log2", Rules::Math);
LOOM_LLVM_RULE("log10", Rules::Math);
LOOM_LLVM_RULE("sqrt", Rules::Math);
LOOM_LLVM_RULE("rsqrt", Rules::Math);
LOOM_LLVM_RULE("tanh", Rules::Math);
LOOM_LLVM_RULE("sigmoid", Rules::Math);
LOOM_LLVM_RULE("erf", Rules::Math);
LOOM_LLVM_RULE("pow", Rules::Math);
LOOM_LLVM_RULE("fabs", Rules::Math);
LOOM_LLVM_RULE("floor", Rules::Math);
LOOM_LLVM_RULE("ceil", Rules::Math);
LOOM_LLVM_RULE("round", Rules::Math);
LOOM_LLVM_RULE("trunc", Rules::Math);
LOOM_LLVM_RULE("sin", Rules::Math);
LOOM_LLVM_RULE("cos", Rules::Math);
LOOM_LLVM_RULE("fma", Rules::Math);
#undef LOOM_LLVM_RULE

}  // namespace loom::codegen
