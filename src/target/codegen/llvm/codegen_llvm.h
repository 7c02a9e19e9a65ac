// CodeGenLLVM: TIR functions in the packed calling convention (after MakePackedAPI) to one
// LLVM module for an x86-64 target. Private to src/target: LLVM types appear only here.
//
// Value representation: integers are iN (signedness lives in the TIR dtype), bool is i1
// (a byte in memory), float16 and bfloat16 are computed in float and rounded to their type
// after every operation -- exactly the interpreter's semantics -- and stored as 16 bits.
// Vectors are LLVM fixed vectors of the same element types.
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "loom/arith/analyzer.h"
#include "loom/ir/functor.h"
#include "loom/ir/module.h"
#include "loom/target/target.h"

namespace loom::codegen {

class CodeGenLLVM;
// The "codegen.llvm" attribute of a built-in operator: emits a call (codegen_llvm_call.cc).
using CallEmitterLLVM = std::function<llvm::Value*(CodeGenLLVM& codegen, const CallNode* call)>;

class CodeGenLLVM : public ExprFunctor<llvm::Value*(const PrimExpr&)>,
                    public StmtFunctor<void(const Stmt&)> {
 public:
  CodeGenLLVM(llvm::LLVMContext* context, const Target& target, llvm::TargetMachine* machine);

  // Adds `func` (packed calling convention, see tir::transform::MakePackedAPI) as the
  // exported symbol `name`.
  void AddFunction(const std::string& name, const PrimFunc& func);
  // The verified module, optimized at the target's opt level for its machine.
  std::unique_ptr<llvm::Module> Finish();

  // ---- expressions (codegen_llvm_expr.cc)
  llvm::Value* VisitExpr_(const IntImmNode* op) override;
  llvm::Value* VisitExpr_(const FloatImmNode* op) override;
  llvm::Value* VisitExpr_(const StringImmNode* op) override;
  llvm::Value* VisitExpr_(const VarNode* op) override;
  llvm::Value* VisitExpr_(const CastNode* op) override;
  llvm::Value* VisitExpr_(const AddNode* op) override;
  llvm::Value* VisitExpr_(const SubNode* op) override;
  llvm::Value* VisitExpr_(const MulNode* op) override;
  llvm::Value* VisitExpr_(const DivNode* op) override;
  llvm::Value* VisitExpr_(const ModNode* op) override;
  llvm::Value* VisitExpr_(const FloorDivNode* op) override;
  llvm::Value* VisitExpr_(const FloorModNode* op) override;
  llvm::Value* VisitExpr_(const MinNode* op) override;
  llvm::Value* VisitExpr_(const MaxNode* op) override;
  llvm::Value* VisitExpr_(const EQNode* op) override;
  llvm::Value* VisitExpr_(const NENode* op) override;
  llvm::Value* VisitExpr_(const LTNode* op) override;
  llvm::Value* VisitExpr_(const LENode* op) override;
  llvm::Value* VisitExpr_(const GTNode* op) override;
  llvm::Value* VisitExpr_(const GENode* op) override;
  llvm::Value* VisitExpr_(const AndNode* op) override;
  llvm::Value* VisitExpr_(const OrNode* op) override;
  llvm::Value* VisitExpr_(const NotNode* op) override;
  llvm::Value* VisitExpr_(const SelectNode* op) override;
  llvm::Value* VisitExpr_(const RampNode* op) override;
  llvm::Value* VisitExpr_(const BroadcastNode* op) override;
  llvm::Value* VisitExpr_(const ShuffleNode* op) override;
  llvm::Value* VisitExpr_(const LetNode* op) override;
  llvm::Value* VisitExpr_(const CallNode* op) override;  // codegen_llvm_call.cc
  llvm::Value* VisitExpr_(const BufferLoadNode* op) override;
  llvm::Value* VisitExpr_(const ReduceNode* op) override;

  // ---- statements (codegen_llvm_stmt.cc)
  void VisitStmt_(const LetStmtNode* op) override;
  void VisitStmt_(const AttrStmtNode* op) override;
  void VisitStmt_(const AssertStmtNode* op) override;
  void VisitStmt_(const BufferStoreNode* op) override;
  void VisitStmt_(const AllocateNode* op) override;
  void VisitStmt_(const ForNode* op) override;
  void VisitStmt_(const WhileNode* op) override;
  void VisitStmt_(const IfThenElseNode* op) override;
  void VisitStmt_(const SeqStmtNode* op) override;
  void VisitStmt_(const EvaluateNode* op) override;

 private:
  friend struct LLVMCallRules;

  // ---- types and values
  llvm::Type* ComputeType(DataType t);
  llvm::Type* StorageType(DataType t);
  llvm::Value* StorageToCompute(llvm::Value* stored, DataType t);
  llvm::Value* ComputeToStorage(llvm::Value* value, DataType t);
  // float16/bfloat16: the float value rounded to the type; other types unchanged.
  llvm::Value* RoundToType(llvm::Value* value, DataType t);
  llvm::Value* Int32(int64_t value);
  llvm::Value* Int64(int64_t value);
  llvm::Value* CastValue(llvm::Value* value, DataType from, DataType to);

  // ---- arithmetic helpers
  enum class Arith { kAdd, kSub, kMul, kDiv, kMod, kFloorDiv, kFloorMod, kMin, kMax };
  llvm::Value* EmitArith(Arith kind, DataType t, llvm::Value* a, llvm::Value* b);
  llvm::Value* EmitCompare(llvm::CmpInst::Predicate signed_int, llvm::CmpInst::Predicate unsigned_int,
                           llvm::CmpInst::Predicate real, const PrimExpr& a, const PrimExpr& b);
  llvm::Value* EmitIfThenElse(const PrimExpr& condition, const PrimExpr& then_value,
                              const PrimExpr& else_value, DataType t);

  // ---- memory
  // Address of element `index` (scalar) of the buffer with data variable `data`.
  llvm::Value* ElementAddress(const Buffer& buffer, llvm::Value* index);
  // The alignment, in bytes, that a contiguous vector access at `index` may assume.
  int VectorAlignment(const Buffer& buffer, const PrimExpr& index);

  // ---- calls (codegen_llvm_call.cc)
  llvm::Value* EmitMath(const std::string& name, DataType t, const std::vector<llvm::Value*>& args);
  // LowerMathIntrinsics' expression for the call, emitted without fast-math flags; null
  // for calls it keeps.
  llvm::Value* EmitMathApproximation(const std::string& name, DataType t,
                                     const std::vector<llvm::Value*>& args);
  llvm::Value* EmitExtern(const CallNode* op, size_t first_arg);
  llvm::Value* EmitLLVMIntrinsic(const CallNode* op);
  llvm::Value* EmitStructGet(const CallNode* op);
  llvm::Value* EmitCheck(const CallNode* op);
  llvm::Value* EmitCallPacked(const CallNode* op);

  // ---- control flow and the runtime's services
  llvm::Function* NewFunction(const std::string& name, llvm::FunctionType* type, bool exported);
  // Sets the last error to `message` (a C string) and returns -1 from the current function.
  void EmitFailure(llvm::Value* message);
  // Returns `code` from the current function when it is nonzero.
  void PropagateFailure(llvm::Value* code);
  // Frees the workspaces live at the insertion point, innermost first: every early return
  // does, so a failed check never leaks the memory allocated before it.
  void FreeLiveWorkspaces();
  llvm::Value* LoadService(const char* symbol);
  llvm::FunctionType* ServiceType(const char* symbol);
  // alloca in the entry block, so loops do not grow the stack.
  llvm::AllocaInst* EntryAlloca(llvm::Type* type, llvm::Value* count, int alignment);
  void EmitSerialLoop(const Var& loop_var, llvm::Value* begin, llvm::Value* end,
                      const Stmt& body);
  // Chunks a parallel loop is cut into, per task of the launch: enough that a late task's
  // share can go to the others, few enough that each chunk keeps a run of neighbouring
  // iterations (and the data they share) on one thread.
  static constexpr int64_t kChunksPerTask = 4;

  // Outlining (a parallel loop's body, the compute scope): the variables of `body` that the
  // current function has bound, which the outlined function receives.
  std::vector<const VarNode*> CapturedVars(const Stmt& body);
  // Ends the scope of a variable (loop, let, allocation): once its statement is emitted, its
  // value does not dominate what follows, so a later outlined body that binds the same
  // variable itself (the parts LoopPartition copies from one loop) must not capture it.
  void Unbind(const VarNode* var) { state_.vars.erase(var); }
  void EmitParallelFor(const ForNode* op);
  void EmitComputeScope(const AttrStmtNode* op);
  // tir::builtin::kCoprocUopScope: the body outlined into a generating function, called
  // through the named runtime function with a static slot and the body's free variables.
  void EmitCoprocUopScope(const AttrStmtNode* op);

  // The state of the function being generated; saved and restored around outlining.
  struct FunctionState {
    llvm::Function* function = nullptr;
    llvm::BasicBlock* entry = nullptr;
    std::unordered_map<const VarNode*, llvm::Value*> vars;
    // Where failed loom_checks format their message; one per function, made on first use.
    llvm::Value* message_buffer = nullptr;
    // Workspaces allocated by the Allocates enclosing the insertion point, outermost first.
    std::vector<llvm::Value*> live_workspaces;
    // Where the function's allocations live: the host, or the device of a function whose
    // kernels run on one that the host cannot address (kWorkspaceDevice; a GPU's).
    int workspace_device_type = kDLCPU;
  };

  llvm::LLVMContext& context_;
  Target target_;
  llvm::TargetMachine* machine_;
  std::unique_ptr<llvm::Module> module_;
  std::unique_ptr<llvm::IRBuilder<>> builder_;
  FunctionState state_;
  std::string function_name_;
  int outlined_count_ = 0;
  // Alignment in bytes of the storage allocations hold (parameters: their buffer's
  // data_alignment, which the packed API checks).
  std::unordered_map<const VarNode*, int> pointer_alignment_;
  arith::Analyzer analyzer_;
};

}  // namespace loom::codegen
