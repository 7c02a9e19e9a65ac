// The interpreter's machinery, shared by its source files: lane arithmetic with exact dtype
// semantics (interpreter_value.cc), expression evaluation (interpreter_expr.cc) and
// statement execution (interpreter.cc).
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "loom/ir/functor.h"
#include "loom/runtime/float_codec.h"
#include "loom/tir/interpreter.h"

namespace loom::tir::detail {

// Integer arithmetic results wrapped to t (two's complement; bool keeps its low bit).
int64_t WrapArith(int64_t value, DataType t);
// One scalar of type t (an element type) read from or written to raw bytes.
void StoreLane(std::byte* at, DataType t, const Value& value, int lane);
void LoadLane(const std::byte* at, DataType t, Value* into);
// A Value of type t with no lanes filled in yet.
Value EmptyValue(DataType t);
// Appends a lane to a Value built by EmptyValue.
void PushInt(Value* v, int64_t value);
void PushFloat(Value* v, double value);

// Evaluates expressions and executes statements over one variable environment.
class Machine : public ExprFunctor<Value(const PrimExpr&)>,
                public StmtFunctor<void(const Stmt&)> {
 public:
  explicit Machine(const std::unordered_map<std::string, ExternFunction>& externs)
      : externs_(externs) {}

  using ExprFunctor::VisitExpr;
  using StmtFunctor::VisitStmt;

  // Binds var to value until the returned token is destroyed (then the old value returns).
  class Binding {
   public:
    Binding(Machine* machine, const Var& var, Value value);
    ~Binding();
    Binding(const Binding&) = delete;
    Binding& operator=(const Binding&) = delete;

   private:
    Machine* machine_;
    const Object* var_;
    std::optional<Value> saved_;
  };
  void BindForever(const Var& var, Value value) { env_[var.get()] = std::move(value); }
  bool IsBound(const Var& var) const { return env_.count(var.get()) != 0; }
  int64_t EvalInt(const PrimExpr& e);

  // ---- expressions (interpreter_expr.cc)
  Value VisitExpr_(const IntImmNode* op) override;
  Value VisitExpr_(const FloatImmNode* op) override;
  Value VisitExpr_(const StringImmNode* op) override;
  Value VisitExpr_(const VarNode* op) override;
  Value VisitExpr_(const CastNode* op) override;
  Value VisitExpr_(const AddNode* op) override;
  Value VisitExpr_(const SubNode* op) override;
  Value VisitExpr_(const MulNode* op) override;
  Value VisitExpr_(const DivNode* op) override;
  Value VisitExpr_(const ModNode* op) override;
  Value VisitExpr_(const FloorDivNode* op) override;
  Value VisitExpr_(const FloorModNode* op) override;
  Value VisitExpr_(const MinNode* op) override;
  Value VisitExpr_(const MaxNode* op) override;
  Value VisitExpr_(const EQNode* op) override;
  Value VisitExpr_(const NENode* op) override;
  Value VisitExpr_(const LTNode* op) override;
  Value VisitExpr_(const LENode* op) override;
  Value VisitExpr_(const GTNode* op) override;
  Value VisitExpr_(const GENode* op) override;
  Value VisitExpr_(const AndNode* op) override;
  Value VisitExpr_(const OrNode* op) override;
  Value VisitExpr_(const NotNode* op) override;
  Value VisitExpr_(const SelectNode* op) override;
  Value VisitExpr_(const RampNode* op) override;
  Value VisitExpr_(const BroadcastNode* op) override;
  Value VisitExpr_(const ShuffleNode* op) override;
  Value VisitExpr_(const LetNode* op) override;
  Value VisitExpr_(const CallNode* op) override;
  Value VisitExpr_(const BufferLoadNode* op) override;
  Value VisitExpr_(const ReduceNode* op) override;

  // ---- statements (interpreter.cc)
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
  friend struct InterpreterRules;  // interpreter_intrin.cc

  // Where each lane of an access to `buffer` at `indices` lives: the memory and the byte
  // offset of each lane's element (of buffer->dtype). Bounds are checked here.
  struct Access {
    std::shared_ptr<HostMemory> memory;
    std::vector<int64_t> byte_offsets;
  };
  Access Locate(const Buffer& buffer, const Array<PrimExpr>& indices);
  Value CallIntrinsic(const CallNode* op);
  Value CallExtern(const CallNode* op);

  const std::unordered_map<std::string, ExternFunction>& externs_;
  std::unordered_map<const Object*, Value> env_;
};

}  // namespace loom::tir::detail
