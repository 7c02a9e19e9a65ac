// CodeGenC: TIR functions in the packed calling convention (after MakePackedAPI and
// ScalarizeVectors: no vectors) to one portable C source file that needs only the C
// standard library's <math.h>, <stdint.h>, <stdio.h> (snprintf for error messages) and
// <string.h>. Private to src/target.
//
// Every subexpression is computed into a temporary at statement level, in the order the
// interpreter evaluates it; if_then_else becomes an if statement, so a branch not taken
// is never evaluated (a guarded load stays guarded). Values follow the interpreter exactly:
// integer arithmetic wraps (computed unsigned), Div/Mod truncate, FloorDiv/FloorMod floor,
// float min/max pick as `b < a ? b : a`, float16/bfloat16 are stored as 16 bits and
// computed in float, rounded after every operation. The source must be compiled with
// -ffp-contract=off (the C module does): contraction is decided in TIR.
//
// Parallel loops run serially: the C target is for portable and bare-metal code, whose
// micro runtime has no threads. Intrinsic calls go through the "codegen.c" attribute of
// each operator (codegen_c_call.cc).
#pragma once

#include <functional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "loom/ir/functor.h"
#include "loom/ir/module.h"

namespace loom::codegen {

class CodeGenC : public ExprFunctor<std::string(const PrimExpr&)>,
                 public StmtFunctor<void(const Stmt&)> {
 public:
  // Adds one packed function, exported under `name`.
  void AddFunction(const std::string& name, const PrimFunc& func);
  // The whole source: the preamble, then every function added.
  std::string Finish() const;
  // What one call of the hungriest function asks of the workspace service at most, in the
  // micro runtime's accounting (each block 64-byte aligned behind a 64-byte header, see
  // src/crt/loom_crt.c); `unbounded_function` names a function whose need has no constant
  // bound (an allocation of symbolic size), if any.
  struct ScratchNeed {
    int64_t bytes = 0;
    std::string unbounded_function;
  };
  const ScratchNeed& scratch_need() const { return scratch_need_; }

  // ---- for the intrinsic emitters (codegen_c_call.cc)
  // A fresh temporary of `t` holding `value`; its name.
  std::string Temp(DataType t, const std::string& value);
  // A statement line at the current indentation; a block `header {` ... `}`.
  void Line(const std::string& text);
  void OpenBlock(const std::string& header);
  void CloseBlock();
  // `text` as a C string literal.
  static std::string StringLiteral(const std::string& text);
  // The C type computations of `t` use (float for float16/bfloat16, uint8_t... for ints).
  static std::string ComputeType(DataType t);
  // `value` (of compute type) rounded to `t` when `t` is float16 or bfloat16.
  std::string RoundToType(const std::string& value, DataType t);
  // Fails the function with `message_expr` (a C expression of type const char*; empty:
  // keep the message a failed callee set).
  void EmitFailure(const std::string& message_expr);
  // Declares the call-packed service and the module context (c_backend_api.h) in the file.
  void UseCallPacked() { uses_call_packed_ = true; }
  // The address of element `index` of `buffer`.
  std::string ElementAddress(const Buffer& buffer, const PrimExpr& index);
  // The float16/bfloat16 conversions and popcount every dialect's preamble ends with, over the
  // bit casts (loom_bits_f32, loom_f32_bits, loom_bits_f64, loom_f64_bits) and the helpers'
  // linkage (LOOM_INLINE) it defines.
  static const char* ScalarHelpersSource();
  const std::string& function_name() const { return function_name_; }

  std::string VisitExpr(const PrimExpr& e) override;
  void VisitStmt(const Stmt& s) override;

 protected:
  // What a dialect of C (OpenCL C: codegen/opencl/) changes, besides the visitors it
  // overrides: the pointer type `buffer`'s elements are addressed through.
  virtual std::string PointerType(const Buffer& buffer);

#define LOOM_EXPR(Name, ...) std::string VisitExpr_(const Name##Node* op) override;
#include "loom/ir/node_table.def"
#undef LOOM_EXPR
#define LOOM_STMT(Name, ...) void VisitStmt_(const Name##Node* op) override;
#include "loom/ir/node_table.def"
#undef LOOM_STMT

  std::string Name(const VarNode* var);
  std::string Bind(const Var& var);
  std::string Arith(const char* op, DataType t, const PrimExpr& a, const PrimExpr& b);
  std::string Compare(const char* op, const PrimExpr& a, const PrimExpr& b);
  std::string Load(const Buffer& buffer, const PrimExpr& index, DataType t);

  std::ostringstream body_;      // functions so far
  std::string function_name_;
  int indent_ = 0;
  int next_temp_ = 0;
  int next_name_ = 0;  // every binding gets a name of its own, so none shadows another
  std::unordered_map<const VarNode*, std::string> names_;
  std::vector<std::string> live_workspaces_;  // freed on every failure return
  int64_t function_scratch_bytes_ = 0;         // the sum over the current function's blocks
  // Where the current function's workspaces come from (tir::builtin::kWorkspaceDevice; the
  // host, kDLCPU = 1, unless its kernels run on a device the host cannot address).
  int workspace_device_type_ = 1;
  ScratchNeed scratch_need_;
  bool uses_call_packed_ = false;
  // The C value of each expression node computed in the current statement, per open block.
  std::vector<std::unordered_map<const Object*, std::string>> memo_{1};
};

// The "codegen.c" attribute of a built-in operator: emits a call's value as a C expression.
using CallEmitterC = std::function<std::string(CodeGenC& codegen, const CallNode* call)>;

}  // namespace loom::codegen
