// Writing a kernel's loop nest directly in TIR (the body of a te::extern_op): int64 loops,
// statement sequences, conditions and int64 variables on the stack. For the operators whose
// work is not an elementwise compute: selections (select.cc) and shape functions
// (shape_function.cc).
#pragma once

#include <string>

#include "loom/ir/expr_ops.h"
#include "loom/ir/node.h"

namespace loom::topi::detail {

inline const DataType kI64 = DataType::Int(64);

inline PrimExpr I64(int64_t value) { return make_const(kI64, value); }

// for (var = 0; var < extent; ++var) body
inline Stmt Loop(const Var& var, const PrimExpr& extent, Stmt body, ForKind kind = ForKind::kSerial) {
  return For(var, I64(0), cast(kI64, extent), kind, std::move(body), IterVar(), {});
}

inline Stmt Seq(Array<Stmt> stmts) { return SeqStmt(std::move(stmts)); }

inline Stmt If(const PrimExpr& condition, Stmt then_case) {
  return IfThenElse(condition, std::move(then_case), Stmt());
}

// An int64 variable of the loop nest: a one-element buffer on the stack.
class Counter {
 public:
  explicit Counter(const std::string& name) : buffer_(DeclBuffer({I64(1)}, kI64, name, "local")) {}
  PrimExpr value() const { return BufferLoad(buffer_, {I64(0)}); }
  Stmt Set(const PrimExpr& value) const { return BufferStore(buffer_, cast(kI64, value), {I64(0)}); }
  Stmt Add(const PrimExpr& delta) const { return Set(value() + delta); }
  // `body` with the variable allocated around it.
  Stmt Scope(Stmt body) const {
    return Allocate(buffer_->data, kI64, {I64(1)}, const_true(), std::move(body), "local");
  }

 private:
  Buffer buffer_;
};

}  // namespace loom::topi::detail
