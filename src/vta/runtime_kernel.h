// Micro-op kernels of the VTA runtime (private to src/vta/runtime*.cc).
//
// A kernel is what one generating function records: up to two affine loops and a list of
// micro-ops that all share a mode (GEMM or ALU), a reset flag and, for ALU, one operation.
// Kernels are cached per call site and signature; the micro-op cache bookkeeping (where a
// kernel currently sits in the on-chip micro-op buffer) lives with the kernel so that a
// hit can skip the reload.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "loom/vta/isa.h"

namespace loom::vta::runtime_detail {

struct UopLoop {
  uint32_t extent = 0;
  uint32_t dst_factor = 0;
  uint32_t src_factor = 0;
  uint32_t wgt_factor = 0;
};

enum class KernelMode : uint32_t { kGemm = 0, kAlu = 1 };

class UopKernel {
 public:
  // Recording, called through VTAUopLoopBegin / VTAUopLoopEnd / VTAUopPush. Each throws
  // loom::Error naming the call and the rule it breaks.
  void LoopBegin(uint32_t extent, uint32_t dst_factor, uint32_t src_factor, uint32_t wgt_factor);
  void LoopEnd();
  void Push(uint32_t mode, uint32_t reset_out, uint32_t dst_index, uint32_t src_index,
            uint32_t wgt_index, uint32_t opcode, uint32_t use_imm, int32_t imm_val);
  // Checks that the recording is complete: loops closed, at least one micro-op.
  void FinishRecording(const char* api_name) const;
  // Checks that the kernel can run as the instruction `api_name` pushes.
  void CheckMode(KernelMode expected, const char* api_name) const;

  const std::vector<Uop>& uops() const { return uops_; }
  const std::vector<UopLoop>& loops() const { return loops_; }
  bool reset() const { return reset_.value_or(false); }
  AluOpcode alu_opcode() const { return alu_opcode_; }
  bool use_imm() const { return use_imm_; }
  int32_t imm() const { return imm_; }

  // Where the kernel sits in the micro-op buffer, if it is resident there.
  std::optional<uint32_t> sram_begin;

 private:
  std::vector<UopLoop> loops_;
  int open_loops_ = 0;
  std::vector<Uop> uops_;
  std::optional<KernelMode> mode_;
  std::optional<bool> reset_;
  AluOpcode alu_opcode_ = AluOpcode::kAdd;
  bool use_imm_ = false;
  int32_t imm_ = 0;
};

// The id of the call site whose uop_handle slot is `slot`: assigned on the slot's first use and
// kept in it (process-wide, so all threads agree). Not the slot's address: code loaded later at
// the same address starts with an empty slot, and must not find an unloaded module's kernels.
uintptr_t CallSiteId(void** slot);

// Kernels by call site (CallSiteId) and signature bytes. Kernels are never evicted from the
// cache (only from the micro-op buffer), so pointers stay valid for the cache's lifetime.
class KernelCache {
 public:
  UopKernel* Find(uintptr_t call_site, const std::string& signature) const;
  UopKernel* Insert(uintptr_t call_site, const std::string& signature,
                    std::unique_ptr<UopKernel> kernel);
  // Forgets every kernel's micro-op buffer residency (the buffer is not assumed to survive
  // a device run).
  void ForgetResidency();

 private:
  std::map<uintptr_t, std::map<std::string, std::unique_ptr<UopKernel>>> kernels_;
};

}  // namespace loom::vta::runtime_detail
