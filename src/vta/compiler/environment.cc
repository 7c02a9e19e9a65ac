// The VTA environment: memory of the on-chip scopes from the configuration, and the GEMM
// intrinsic (see loom/vta/compiler/environment.h).
#include "loom/vta/compiler/environment.h"

#include <sstream>

#include "loom/ir/expr_ops.h"
#include "loom/support/error.h"

namespace loom::vta {
namespace {

// One micro-op kernel of the GEMM: a single micro-op on the tiles' first elements, reset
// (zero the accumulator tile) or accumulate. The tiles are passed by address: the accesses
// keep naming their buffers, so that a virtual thread's copy of a buffer is the one used, and
// ResolveSramAddresses makes them buffer indices once the buffers are placed.
Stmt GemmKernel(const Buffer& out, const Buffer& inp, const Buffer& wgt, bool reset) {
  const DataType i32 = DataType::Int(32);
  PrimExpr zero = make_const(i32, int64_t{0});
  PrimExpr dst = te::access_ptr(out);
  PrimExpr src = reset ? zero : te::access_ptr(inp);
  PrimExpr weight = reset ? zero : te::access_ptr(wgt);
  Stmt push = Evaluate(call_extern(
      i32, "VTAUopPush",
      {zero, make_const(i32, int64_t{reset ? 1 : 0}), dst, src, weight, zero, zero, zero}));
  Stmt kernel =
      AttrStmt(StringImm("vta"), Environment::kCoprocUopScope, StringImm("VTAPushGEMMOp"), push);
  return AttrStmt(StringImm("vta"), Environment::kCoprocScope,
                  make_const(i32, int64_t{Environment::kComputeQueue}), kernel);
}

te::TensorIntrin DeclareGemm(const Environment& env) {
  te::Tensor inp = te::placeholder({env.batch(), env.block_in()}, env.inp_dtype(), "inp");
  te::Tensor wgt = te::placeholder({env.block_out(), env.block_in()}, env.wgt_dtype(), "wgt");
  IterVar k = te::reduce_axis(Range(0, env.block_in()), "k");
  te::Tensor out = te::compute(
      {env.batch(), env.block_out()},
      [&](Var i, Var j) {
        return te::sum(
            cast(env.acc_dtype(), inp(i, k->var)) * cast(env.acc_dtype(), wgt(j, k->var)), {k});
      },
      "out");
  auto lanes = [&](const char* scope) { return static_cast<int>(env.Memory(scope).lanes); };
  std::map<std::string, te::TensorIntrinBuffer> buffers = {
      {"inp", {Environment::kInpScope, lanes(Environment::kInpScope)}},
      {"wgt", {Environment::kWgtScope, lanes(Environment::kWgtScope)}},
      {"out", {Environment::kAccScope, lanes(Environment::kAccScope)}},
  };
  return te::decl_tensor_intrin(
      out.op(),
      [](const Array<Buffer>& in, const Array<Buffer>& outs) {
        Stmt reset = GemmKernel(outs[0], in[0], in[1], /*reset=*/true);
        Stmt update = GemmKernel(outs[0], in[0], in[1], /*reset=*/false);
        return te::TensorIntrinStmts{SeqStmt({reset, update}), reset, update};
      },
      "vta_gemm", buffers);
}

}  // namespace

Environment::Environment(const VTAConfig& config) : config_(config) {
  config_.Validate();
  const VTAConfig& c = config_;
  memories_ = {
      {kInpScope, inp_dtype(), int64_t{c.batch()} * c.block_in(), c.inp_elem_bytes() * 8,
       c.inp_buff_depth()},
      {kWgtScope, wgt_dtype(), int64_t{c.block_out()} * c.block_in(), c.wgt_elem_bytes() * 8,
       c.wgt_buff_depth()},
      {kAccScope, acc_dtype(), int64_t{c.batch()} * c.block_out(), c.acc_elem_bytes() * 8,
       c.acc_buff_depth()},
      {kUopScope, DataType::UInt(32), 1, c.uop_elem_bytes() * 8, c.uop_buff_depth()},
  };
  gemm_ = DeclareGemm(*this);
}

int Environment::CopyQueue(const std::string& sram_scope, bool to_chip) {
  if (!to_chip) return kStoreQueue;
  return sram_scope == kAccScope ? kComputeQueue : kLoadQueue;
}

const MemoryInfo& Environment::Memory(const std::string& scope) const {
  for (const MemoryInfo& memory : memories_) {
    if (memory.scope == scope) return memory;
  }
  std::ostringstream scopes;
  for (const MemoryInfo& memory : memories_) scopes << " " << memory.scope;
  LOOM_THROW << "VTA has no on-chip buffer of scope '" << scope << "' (its scopes:" << scopes.str()
             << ")";
}

bool Environment::AluImmediateFits(AluOpcode opcode, int64_t imm) const {
  if (imm < -(int64_t{1} << 15) || imm >= (int64_t{1} << 15)) return false;
  if (opcode != AluOpcode::kShr) return true;
  const int64_t half = int64_t{1} << (config_.log_acc_width - 1);
  return imm >= -half && imm < half;
}

}  // namespace loom::vta
