// The VTA runtime's command queue (private to src/vta/runtime*.cc): one per thread, it
// turns runtime API calls into an instruction stream and runs it on its own simulator.
// Methods throw loom::Error; the C API in runtime.cc catches and records.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "loom/vta/runtime.h"
#include "loom/vta/simulator.h"
#include "vta/runtime_insn_queue.h"
#include "vta/runtime_kernel.h"

namespace loom::vta::runtime_detail {

// The DRAM every thread's device shares (buffers are process-wide, like host memory).
Dram& GlobalDram();

class CommandQueue {
 public:
  explicit CommandQueue(const VTAConfig& config);

  void LoadBuffer2D(void* src_dram_addr, uint32_t src_elem_offset, uint32_t x_size, uint32_t y_size,
                    uint32_t x_stride, uint32_t x_pad_before, uint32_t y_pad_before,
                    uint32_t x_pad_after, uint32_t y_pad_after, uint32_t dst_sram_index,
                    uint32_t dst_memory_type);
  void StoreBuffer2D(uint32_t src_sram_index, uint32_t src_memory_type, void* dst_dram_addr,
                     uint32_t dst_elem_offset, uint32_t x_size, uint32_t y_size, uint32_t x_stride);
  void PushKernelOp(KernelMode mode, void** uop_handle, int (*finit)(void*), void* signature,
                    int nbytes);
  void DepPush(int from_qid, int to_qid) { insns_.DepPush(from_qid, to_qid); }
  void DepPop(int from_qid, int to_qid) { insns_.DepPop(from_qid, to_qid); }
  // VTA_DEBUG_* flags for the next synchronizes.
  void SetDebugMode(int flags);
  void Synchronize(uint32_t wait_cycles);

  // The kernel the current generating function records into; throws when none is.
  UopKernel& RecordingKernel(const char* api_name);
  // Called by the C layer when a call made while recording failed, so that the enclosing
  // VTAPush*Op fails instead of caching a half-recorded kernel.
  void MarkRecordingFailed(const std::string& message);
  // Called by the C layer on any failed program-building call: the program is now
  // incomplete and the next Synchronize must not run it.
  void Poison(const std::string& message);

  const RunRecord& last_run() const { return last_run_; }
  const RunTotals& run_totals() const { return run_totals_; }
  void ResetRunTotals() { run_totals_ = RunTotals{}; }
  const std::vector<Insn>& pending() const { return insns_.insns(); }

 private:
  uint64_t ElemBytes(MemId memory_type) const;
  uint32_t DramElemBase(const char* api_name, void* buffer, MemId memory_type,
                        uint32_t elem_offset) const;
  // Appends `insn` after checking that it encodes (every field fits) for `api_name`.
  void Emit(const char* api_name, Insn insn, Stage stage);
  // The kernel cached for (call site, signature), recorded by finit on a miss.
  UopKernel& FindOrRecordKernel(const char* api_name, void** uop_handle, int (*finit)(void*),
                                void* signature, int nbytes);
  // Makes `kernel` resident in the micro-op buffer, queueing its LOAD if it is not.
  void MakeResident(UopKernel& kernel);
  // Pops every token the program left in a queue, so that FINISH waits for all modules
  // and the queues drain.
  void DrainLeftoverTokens();
  void ResetProgram();
  // After a discarded or failed program the micro-op buffer cannot be trusted: kernels
  // queued for loading never arrived, or a run stopped half-way.
  void ForgetUopBuffer();

  VTAConfig config_;
  Simulator simulator_;
  InsnQueue insns_;
  KernelCache kernels_;
  std::unique_ptr<UopKernel> recording_;
  std::string recording_error_;
  std::string poison_;
  int debug_flags_ = 0;

  // Micro-op buffer residency: kernels occupy [begin, begin + size) slots, placed one after
  // another and wrapping to slot 0 when the next one does not fit; a kernel loses its slots
  // when a later one overlaps them.
  uint32_t uop_next_slot_ = 0;
  std::vector<UopKernel*> resident_;
  // Micro-ops to load this run, and the LOAD instructions whose dram_base (relative to the
  // start of uop_staging_) is fixed up once the staging area has a DRAM address.
  std::vector<uint32_t> uop_staging_;
  std::vector<size_t> uop_load_insns_;

  RunRecord last_run_;
  RunTotals run_totals_;
};

}  // namespace loom::vta::runtime_detail
