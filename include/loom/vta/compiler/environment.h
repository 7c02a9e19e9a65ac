// What the compiler knows of a VTA configuration (libloom_vta_compiler): the on-chip buffers
// as storage scopes with their memory, the data types, the pragma keys schedules use, and the
// GEMM tensor intrinsic.
//
//   Environment env(VTAConfig::Default());
//   s[A_buf].set_scope(Environment::kInpScope);
//   s[A_buf].pragma(axis, Environment::kDmaCopy);
//   s[C_buf].tensorize(bi, env.gemm());
//
// The GEMM intrinsic computes out[batch][block_out] += inp[batch][block_in] . wgt[block_out]
// [block_in] on tiles in the input, weight and accumulator scopes. Its statements are micro-op
// kernels: each is an AttrStmt kCoprocScope (the compute queue) around an AttrStmt
// kCoprocUopScope (the runtime call that pushes the kernel, "VTAPushGEMMOp") around the
// kernel's micro-ops, call_extern("VTAUopPush", mode, reset, dst, src, wgt, opcode, use_imm,
// imm) with the tiles passed by address (address_of their first element), which
// ResolveSramAddresses turns into buffer indices in whole elements. Later passes
// turn the loops around them into micro-op loops and the scopes into runtime calls.
#pragma once

#include <string>
#include <vector>

#include "loom/target/target.h"
#include "loom/te/tensor_intrin.h"
#include "loom/tir/transform.h"
#include "loom/vta/config.h"
#include "loom/vta/isa.h"

namespace loom::vta {

// One on-chip buffer seen as a storage scope.
struct MemoryInfo {
  std::string scope;      // "local.inp_buffer"
  DataType dtype;         // of one value
  int64_t lanes = 0;      // values in one element (the unit a buffer index counts)
  int64_t unit_bits = 0;  // bits of one element
  int64_t depth = 0;      // elements the buffer holds
  int64_t bits() const { return unit_bits * depth; }
};

// The configuration a vta target compiles for: its -config file, else the default.
VTAConfig ConfigOf(const Target& target);

class Environment {
 public:
  // Storage scopes of the on-chip buffers.
  static constexpr const char* kInpScope = "local.inp_buffer";
  static constexpr const char* kWgtScope = "local.wgt_buffer";
  static constexpr const char* kAccScope = "local.acc_buffer";
  static constexpr const char* kUopScope = "local.uop_buffer";
  // Pragma keys (Stage::pragma): a copy between DRAM and an on-chip buffer becomes a LOAD or
  // STORE; an element-wise update of the accumulator becomes ALU micro-ops.
  static constexpr const char* kDmaCopy = "dma_copy";
  static constexpr const char* kAlu = "alu";
  // AttrStmt keys of the intrinsic's statements (see above); a co-processor scope is also what
  // InjectCoprocSync wraps each group of one queue's instructions in.
  static constexpr const char* kCoprocScope = tir::transform::attr::kCoprocScope;
  static constexpr const char* kCoprocUopScope = tir::builtin::kCoprocUopScope;
  // The runtime's queue ids (VTADepPush / VTADepPop), the values of kCoprocScope.
  static constexpr int kLoadQueue = 1;
  static constexpr int kComputeQueue = 2;
  static constexpr int kStoreQueue = 3;
  // The queue that runs a copy between DRAM and the on-chip buffer of `sram_scope`: LOADs into
  // the input and weight buffers on the load queue, into the accumulator on the compute queue,
  // STOREs on the store queue.
  static int CopyQueue(const std::string& sram_scope, bool to_chip);

  // The configuration is validated (loom::Error naming the parameter otherwise).
  explicit Environment(const VTAConfig& config);

  const VTAConfig& config() const { return config_; }
  int batch() const { return config_.batch(); }
  int block_in() const { return config_.block_in(); }
  int block_out() const { return config_.block_out(); }
  DataType inp_dtype() const { return DataType::Int(config_.inp_width()); }
  DataType wgt_dtype() const { return DataType::Int(config_.wgt_width()); }
  DataType acc_dtype() const { return DataType::Int(config_.acc_width()); }
  DataType out_dtype() const { return DataType::Int(config_.out_width()); }

  // The input, weight, accumulator and micro-op buffers, in that order.
  const std::vector<MemoryInfo>& memories() const { return memories_; }
  // The buffer of `scope`; a loom::Error listing the scopes when it is none of them.
  const MemoryInfo& Memory(const std::string& scope) const;

  // The GEMM intrinsic (see above), named "vta_gemm".
  const te::TensorIntrin& gemm() const { return gemm_; }

  // Whether the ALU takes `imm` as the immediate of `opcode`: a signed 16-bit value, and for
  // a shift a signed log2(accumulator width)-bit amount (-16 to 15 at int32: the hardware
  // reads no more bits). A negative shift right shifts left.
  bool AluImmediateFits(AluOpcode opcode, int64_t imm) const;

 private:
  VTAConfig config_;
  std::vector<MemoryInfo> memories_;
  te::TensorIntrin gemm_;
};

}  // namespace loom::vta
