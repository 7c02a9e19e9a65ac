// CodeGenLLVM: expressions. Integer division, modulo, min/max and comparisons follow the
// TIR interpreter exactly (truncating Div/Mod, flooring FloorDiv/FloorMod, NaN-aware float
// min/max), so generated code and the oracle agree bit for bit.
#include <numeric>

#include <llvm/Analysis/VectorUtils.h>

#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"
#include "loom/runtime/float_codec.h"
#include "target/codegen/codegen_util.h"
#include "target/codegen/llvm/codegen_llvm.h"

namespace loom::codegen {

llvm::Value* CodeGenLLVM::VisitExpr_(const IntImmNode* op) {
  llvm::Type* type = ComputeType(op->dtype);
  return llvm::ConstantInt::get(type, static_cast<uint64_t>(op->value), op->dtype.is_int());
}

llvm::Value* CodeGenLLVM::VisitExpr_(const FloatImmNode* op) {
  // A float16/bfloat16 constant is the float nearest to its rounded value.
  return llvm::ConstantFP::get(ComputeType(op->dtype), RoundToFloatType(op->value, op->dtype));
}

llvm::Value* CodeGenLLVM::VisitExpr_(const StringImmNode* op) {
  return builder_->CreateGlobalString(op->value, ".str");
}

llvm::Value* CodeGenLLVM::VisitExpr_(const VarNode* op) {
  auto it = state_.vars.find(op);
  LOOM_CHECK_USER(it != state_.vars.end())
      << "codegen of '" << function_name_ << "': variable '" << op->name_hint
      << "' is used but never defined (not a parameter, loop variable, let or allocation)";
  return it->second;
}

llvm::Value* CodeGenLLVM::CastValue(llvm::Value* value, DataType from, DataType to) {
  if (from == to) return value;
  llvm::Type* type = ComputeType(to);
  if (to.is_bool()) {
    if (from.is_float()) return builder_->CreateFCmpUNE(value, llvm::Constant::getNullValue(value->getType()));
    return builder_->CreateICmpNE(value, llvm::Constant::getNullValue(value->getType()));
  }
  if (from.is_handle() || to.is_handle()) {
    if (from.is_handle() && to.is_handle()) return value;
    return from.is_handle() ? builder_->CreatePtrToInt(value, type)
                            : builder_->CreateIntToPtr(value, type);
  }
  bool from_signed = from.is_int();
  if (from.is_float() && to.is_float()) {
    llvm::Value* converted = builder_->CreateFPCast(value, type);
    return RoundToType(converted, to);
  }
  if (from.is_float()) {
    return to.is_int() ? builder_->CreateFPToSI(value, type) : builder_->CreateFPToUI(value, type);
  }
  if (to.is_float()) {
    llvm::Value* converted = from_signed ? builder_->CreateSIToFP(value, type)
                                         : builder_->CreateUIToFP(value, type);
    return RoundToType(converted, to);
  }
  return builder_->CreateIntCast(value, type, from_signed);
}

llvm::Value* CodeGenLLVM::VisitExpr_(const CastNode* op) {
  return CastValue(VisitExpr(op->value), op->value.dtype(), op->dtype);
}

llvm::Value* CodeGenLLVM::EmitArith(Arith kind, DataType t, llvm::Value* a, llvm::Value* b) {
  auto& ir = *builder_;
  if (t.is_float()) {
    llvm::Value* result = nullptr;
    switch (kind) {
      case Arith::kAdd: result = ir.CreateFAdd(a, b); break;
      case Arith::kSub: result = ir.CreateFSub(a, b); break;
      case Arith::kMul: result = ir.CreateFMul(a, b); break;
      case Arith::kDiv: result = ir.CreateFDiv(a, b); break;
      case Arith::kMod: result = ir.CreateFRem(a, b); break;
      case Arith::kFloorDiv:
        result = ir.CreateUnaryIntrinsic(llvm::Intrinsic::floor, ir.CreateFDiv(a, b));
        break;
      case Arith::kFloorMod: {
        llvm::Value* q = ir.CreateUnaryIntrinsic(llvm::Intrinsic::floor, ir.CreateFDiv(a, b));
        result = ir.CreateFSub(a, ir.CreateFMul(q, b));
        break;
      }
      // As the interpreter: min = b < a ? b : a, max = a < b ? b : a (NaN picks a side).
      case Arith::kMin: result = ir.CreateSelect(ir.CreateFCmpOLT(b, a), b, a); break;
      case Arith::kMax: result = ir.CreateSelect(ir.CreateFCmpOLT(a, b), b, a); break;
    }
    return RoundToType(result, t);
  }
  bool is_signed = t.is_int();
  switch (kind) {
    case Arith::kAdd: return ir.CreateAdd(a, b);
    case Arith::kSub: return ir.CreateSub(a, b);
    case Arith::kMul: return ir.CreateMul(a, b);
    case Arith::kDiv: return is_signed ? ir.CreateSDiv(a, b) : ir.CreateUDiv(a, b);
    case Arith::kMod: return is_signed ? ir.CreateSRem(a, b) : ir.CreateURem(a, b);
    case Arith::kFloorDiv:
    case Arith::kFloorMod: {
      if (!is_signed) return kind == Arith::kFloorDiv ? ir.CreateUDiv(a, b) : ir.CreateURem(a, b);
      // Truncating division, corrected by one where the remainder is nonzero and its sign
      // differs from the divisor's.
      llvm::Value* zero = llvm::Constant::getNullValue(a->getType());
      llvm::Value* r = ir.CreateSRem(a, b);
      llvm::Value* adjust = ir.CreateAnd(ir.CreateICmpNE(r, zero),
                                         ir.CreateICmpSLT(ir.CreateXor(r, b), zero));
      if (kind == Arith::kFloorMod) return ir.CreateSelect(adjust, ir.CreateAdd(r, b), r);
      llvm::Value* q = ir.CreateSDiv(a, b);
      return ir.CreateSub(q, ir.CreateZExt(adjust, a->getType()));
    }
    case Arith::kMin:
      return ir.CreateSelect(is_signed ? ir.CreateICmpSLT(b, a) : ir.CreateICmpULT(b, a), b, a);
    case Arith::kMax:
      return ir.CreateSelect(is_signed ? ir.CreateICmpSLT(a, b) : ir.CreateICmpULT(a, b), b, a);
  }
  LOOM_ICHECK(false) << "unhandled arithmetic kind";
  throw;
}

#define LOOM_CODEGEN_ARITH(Name, Kind)                                                  \
  llvm::Value* CodeGenLLVM::VisitExpr_(const Name##Node* op) {                          \
    return EmitArith(Arith::Kind, op->dtype, VisitExpr(op->a), VisitExpr(op->b));       \
  }
LOOM_CODEGEN_ARITH(Add, kAdd)
LOOM_CODEGEN_ARITH(Sub, kSub)
LOOM_CODEGEN_ARITH(Mul, kMul)
LOOM_CODEGEN_ARITH(Div, kDiv)
LOOM_CODEGEN_ARITH(Mod, kMod)
LOOM_CODEGEN_ARITH(FloorDiv, kFloorDiv)
LOOM_CODEGEN_ARITH(FloorMod, kFloorMod)
LOOM_CODEGEN_ARITH(Min, kMin)
LOOM_CODEGEN_ARITH(Max, kMax)
#undef LOOM_CODEGEN_ARITH

llvm::Value* CodeGenLLVM::EmitCompare(llvm::CmpInst::Predicate signed_int,
                                      llvm::CmpInst::Predicate unsigned_int,
                                      llvm::CmpInst::Predicate real, const PrimExpr& a,
                                      const PrimExpr& b) {
  llvm::Value* lhs = VisitExpr(a);
  llvm::Value* rhs = VisitExpr(b);
  DataType t = a.dtype();
  if (t.is_float()) return builder_->CreateFCmp(real, lhs, rhs);
  if (t.is_handle()) {
    lhs = builder_->CreatePtrToInt(lhs, builder_->getInt64Ty());
    rhs = builder_->CreatePtrToInt(rhs, builder_->getInt64Ty());
  }
  return builder_->CreateICmp(t.is_int() ? signed_int : unsigned_int, lhs, rhs);
}

using Pred = llvm::CmpInst::Predicate;
llvm::Value* CodeGenLLVM::VisitExpr_(const EQNode* op) {
  return EmitCompare(Pred::ICMP_EQ, Pred::ICMP_EQ, Pred::FCMP_OEQ, op->a, op->b);
}
llvm::Value* CodeGenLLVM::VisitExpr_(const NENode* op) {
  // Unordered: NaN != x holds, as in C.
  return EmitCompare(Pred::ICMP_NE, Pred::ICMP_NE, Pred::FCMP_UNE, op->a, op->b);
}
llvm::Value* CodeGenLLVM::VisitExpr_(const LTNode* op) {
  return EmitCompare(Pred::ICMP_SLT, Pred::ICMP_ULT, Pred::FCMP_OLT, op->a, op->b);
}
llvm::Value* CodeGenLLVM::VisitExpr_(const LENode* op) {
  return EmitCompare(Pred::ICMP_SLE, Pred::ICMP_ULE, Pred::FCMP_OLE, op->a, op->b);
}
llvm::Value* CodeGenLLVM::VisitExpr_(const GTNode* op) {
  return EmitCompare(Pred::ICMP_SGT, Pred::ICMP_UGT, Pred::FCMP_OGT, op->a, op->b);
}
llvm::Value* CodeGenLLVM::VisitExpr_(const GENode* op) {
  return EmitCompare(Pred::ICMP_SGE, Pred::ICMP_UGE, Pred::FCMP_OGE, op->a, op->b);
}

llvm::Value* CodeGenLLVM::VisitExpr_(const AndNode* op) {
  return builder_->CreateAnd(VisitExpr(op->a), VisitExpr(op->b));
}
llvm::Value* CodeGenLLVM::VisitExpr_(const OrNode* op) {
  return builder_->CreateOr(VisitExpr(op->a), VisitExpr(op->b));
}
llvm::Value* CodeGenLLVM::VisitExpr_(const NotNode* op) {
  return builder_->CreateNot(VisitExpr(op->a));
}

llvm::Value* CodeGenLLVM::VisitExpr_(const SelectNode* op) {
  llvm::Value* condition = VisitExpr(op->condition);
  return builder_->CreateSelect(condition, VisitExpr(op->true_value), VisitExpr(op->false_value));
}

llvm::Value* CodeGenLLVM::VisitExpr_(const RampNode* op) {
  DataType element = op->base.dtype();
  llvm::Value* base = builder_->CreateVectorSplat(op->lanes, VisitExpr(op->base));
  llvm::Value* stride = builder_->CreateVectorSplat(op->lanes, VisitExpr(op->stride));
  std::vector<llvm::Constant*> lane_ids;
  for (int lane = 0; lane < op->lanes; ++lane) {
    lane_ids.push_back(element.is_float()
                           ? llvm::ConstantFP::get(ComputeType(element), lane)
                           : llvm::ConstantInt::get(ComputeType(element), lane));
  }
  llvm::Value* lanes = llvm::ConstantVector::get(lane_ids);
  return EmitArith(Arith::kAdd, op->dtype, base,
                   EmitArith(Arith::kMul, op->dtype, stride, lanes));
}

llvm::Value* CodeGenLLVM::VisitExpr_(const BroadcastNode* op) {
  return builder_->CreateVectorSplat(op->lanes, VisitExpr(op->value));
}

llvm::Value* CodeGenLLVM::VisitExpr_(const ShuffleNode* op) {
  std::vector<llvm::Value*> parts;
  bool same_vectors = true;
  for (const PrimExpr& vector : op->vectors) {
    parts.push_back(VisitExpr(vector));
    same_vectors &= vector.dtype().lanes() > 1 && vector.dtype() == op->vectors[0].dtype();
  }
  const int64_t lanes = op->vectors[0].dtype().lanes();
  std::vector<int> mask;
  for (const PrimExpr& index : op->indices) {
    int64_t lane = 0;
    LOOM_ICHECK(IsConstInt(index, &lane) && lane >= 0 &&
                (!same_vectors || lane < lanes * static_cast<int64_t>(parts.size())))
        << "Shuffle index " << index << " is not a constant lane";
    mask.push_back(static_cast<int>(lane));
  }
  if (same_vectors && mask.size() > 1) {
    // One shufflevector of the vectors joined: a constant permutation LLVM lowers to the
    // target's permutes (one vpermb for 64 bytes on AVX-512 VBMI).
    llvm::Value* joined = parts.size() == 1 ? parts[0] : llvm::concatenateVectors(*builder_, parts);
    return builder_->CreateShuffleVector(joined, mask);
  }
  std::vector<llvm::Value*> lanes_of_all;
  for (size_t v = 0; v < parts.size(); ++v) {
    const int count = op->vectors[v].dtype().lanes();
    if (count == 1) {
      lanes_of_all.push_back(parts[v]);
      continue;
    }
    for (int lane = 0; lane < count; ++lane) {
      lanes_of_all.push_back(builder_->CreateExtractElement(parts[v], Int32(lane)));
    }
  }
  std::vector<llvm::Value*> picked;
  for (int lane : mask) {
    LOOM_ICHECK(lane < static_cast<int>(lanes_of_all.size()))
        << "Shuffle index " << lane << " is not a constant lane";
    picked.push_back(lanes_of_all[static_cast<size_t>(lane)]);
  }
  if (picked.size() == 1) return picked[0];
  llvm::Value* result = llvm::PoisonValue::get(ComputeType(op->dtype));
  for (size_t i = 0; i < picked.size(); ++i) {
    result = builder_->CreateInsertElement(result, picked[i], Int32(static_cast<int64_t>(i)));
  }
  return result;
}

llvm::Value* CodeGenLLVM::VisitExpr_(const LetNode* op) {
  state_.vars[op->var.get()] = VisitExpr(op->value);
  llvm::Value* value = VisitExpr(op->body);
  Unbind(op->var.get());
  return value;
}

llvm::Value* CodeGenLLVM::VisitExpr_(const ReduceNode*) {
  LOOM_THROW << "codegen of '" << function_name_ << "': the function still contains a Reduce; "
             << "generate code from te::lower's output, which turns reductions into loops";
}

// ---------------------------------------------------------------- memory

llvm::Value* CodeGenLLVM::ElementAddress(const Buffer& buffer, llvm::Value* index) {
  llvm::Value* base = VisitExpr(buffer->data);
  return builder_->CreateInBoundsGEP(StorageType(buffer->dtype), base, index);
}

int CodeGenLLVM::VectorAlignment(const Buffer& buffer, const PrimExpr& index) {
  int element = buffer->dtype.bytes() * buffer->dtype.lanes();
  auto known = pointer_alignment_.find(buffer->data.get());
  // Allocations record their alignment; other buffers are parameters, whose alignment
  // MakePackedAPI checked on entry.
  int64_t base_alignment =
      known != pointer_alignment_.end() ? known->second : buffer->data_alignment;
  arith::ModularSet m = analyzer_.modular_set(index);
  // Every offset is coeff * k + base elements: the byte offset is a multiple of
  // gcd(coeff, base) * element.
  int64_t common = std::gcd(m.coeff, m.base) * element;
  if (common == 0) return static_cast<int>(base_alignment);
  int64_t offset_alignment = common & -common;
  return static_cast<int>(std::max<int64_t>(element, std::min(base_alignment, offset_alignment)));
}

llvm::Value* CodeGenLLVM::VisitExpr_(const BufferLoadNode* op) {
  const Buffer& buffer = op->buffer;
  PrimExpr index = FlatIndex(buffer, op->indices);
  llvm::Type* storage = StorageType(op->dtype);
  int element_bytes = buffer->dtype.bytes() * buffer->dtype.lanes();
  if (index.dtype().lanes() == 1) {
    llvm::Value* address = ElementAddress(buffer, VisitExpr(index));
    return StorageToCompute(
        builder_->CreateAlignedLoad(storage, address, llvm::Align(element_bytes)), op->dtype);
  }
  const auto* ramp = index.as<RampNode>();
  int64_t stride = 0;
  if (ramp != nullptr && IsConstInt(ramp->stride, &stride) && stride == 1) {
    llvm::Value* address = ElementAddress(buffer, VisitExpr(ramp->base));
    int alignment = VectorAlignment(buffer, ramp->base);
    return StorageToCompute(builder_->CreateAlignedLoad(storage, address, llvm::Align(alignment)),
                            op->dtype);
  }
  // A gather: one scalar load per lane.
  llvm::Value* lanes = VisitExpr(index);
  DataType element = op->dtype.element_of();
  llvm::Value* result = llvm::PoisonValue::get(ComputeType(op->dtype));
  for (int lane = 0; lane < index.dtype().lanes(); ++lane) {
    llvm::Value* address = ElementAddress(buffer, builder_->CreateExtractElement(lanes, Int32(lane)));
    llvm::Value* value = builder_->CreateAlignedLoad(StorageType(element), address,
                                                     llvm::Align(element_bytes));
    result = builder_->CreateInsertElement(result, StorageToCompute(value, element), Int32(lane));
  }
  return result;
}

}  // namespace loom::codegen
