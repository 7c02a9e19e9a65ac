// What LiftUopScope and FoldUopLoop share about micro-op kernels: recognising one, and the
// factors by which a loop moves its micro-ops' indices. Private to src/vta/compiler.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "loom/arith/analyzer.h"
#include "loom/ir/node.h"
#include "loom/vta/config.h"

namespace loom::vta::detail {

// A micro-op kernel: AttrStmt coproc_scope around AttrStmt coproc_uop_scope around the body
// that pushes the micro-ops.
struct Kernel {
  const AttrStmtNode* coproc = nullptr;
  const AttrStmtNode* uop_scope = nullptr;
  explicit operator bool() const { return uop_scope != nullptr; }
  // The same kernel around another body.
  Stmt WithBody(const Stmt& body) const;
};
Kernel AsKernel(const Stmt& stmt);

// The call_extern `name` that `stmt` evaluates, or null.
const CallNode* KernelCall(const Stmt& stmt, const char* name);

// How one iteration of `loop_var` moves the dst, src and wgt index of every micro-op in
// `body` (VTAUopPush arguments 3, 4, 5): the same constant, non-negative factors for all, the
// indices linear in the variable, which appears nowhere else. Nothing when the loop cannot be
// a hardware loop (or `body` pushes no micro-op).
std::optional<std::array<int64_t, 3>> LoopFactors(const Var& loop_var, const Stmt& body,
                                                  arith::Analyzer* analyzer);

// The most iterations a hardware loop counts (the instruction's iteration fields).
inline constexpr int64_t kMaxHardwareLoopExtent = (int64_t{1} << kLoopIterBits) - 1;

// A serial loop from 0 with a constant extent a hardware loop can count (what a hardware loop
// or a lifted loop can be); its extent, or nothing.
std::optional<int64_t> SimpleLoopExtent(const ForNode* loop);

}  // namespace loom::vta::detail
