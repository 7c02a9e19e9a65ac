#include "vta/runtime_kernel.h"

#include <atomic>
#include <limits>

#include "loom/support/error.h"

namespace loom::vta::runtime_detail {

namespace {

// The hardware has two loop counters around the micro-op sequence.
constexpr size_t kMaxLoops = 2;
constexpr uint32_t kNumAluOpcodes = 5;

const char* ModeName(KernelMode mode) { return mode == KernelMode::kGemm ? "GEMM" : "ALU"; }

}  // namespace

void UopKernel::LoopBegin(uint32_t extent, uint32_t dst_factor, uint32_t src_factor,
                          uint32_t wgt_factor) {
  LOOM_CHECK_USER(uops_.empty())
      << "VTAUopLoopBegin(" << extent << ", ...): loops must be opened before the kernel's "
      << "first VTAUopPush (the hardware loops wrap the whole micro-op sequence)";
  LOOM_CHECK_USER(loops_.size() < kMaxLoops)
      << "VTAUopLoopBegin(" << extent << ", ...): a micro-kernel has at most " << kMaxLoops
      << " loops; this is loop " << loops_.size() + 1;
  loops_.push_back(UopLoop{extent, dst_factor, src_factor, wgt_factor});
  ++open_loops_;
}

void UopKernel::LoopEnd() {
  LOOM_CHECK_USER(open_loops_ > 0) << "VTAUopLoopEnd: no micro-op loop is open";
  --open_loops_;
}

void UopKernel::Push(uint32_t mode, uint32_t reset_out, uint32_t dst_index, uint32_t src_index,
                     uint32_t wgt_index, uint32_t opcode, uint32_t use_imm, int32_t imm_val) {
  LOOM_CHECK_USER(mode <= 1) << "VTAUopPush: mode " << mode << " is neither 0 (GEMM) nor 1 (ALU)";
  LOOM_CHECK_USER(reset_out <= 1) << "VTAUopPush: reset_out must be 0 or 1, got " << reset_out;
  auto kernel_mode = static_cast<KernelMode>(mode);
  if (mode_.has_value()) {
    LOOM_CHECK_USER(*mode_ == kernel_mode)
        << "VTAUopPush: micro-op " << uops_.size() << " is " << ModeName(kernel_mode)
        << " but the kernel's earlier micro-ops are " << ModeName(*mode_)
        << "; one kernel runs as one instruction of one kind";
    LOOM_CHECK_USER(*reset_ == (reset_out != 0))
        << "VTAUopPush: micro-op " << uops_.size() << " has reset_out " << reset_out
        << " but the kernel's earlier micro-ops have " << (*reset_ ? 1 : 0)
        << "; reset is a property of the whole instruction";
  }
  if (kernel_mode == KernelMode::kAlu) {
    LOOM_CHECK_USER(opcode < kNumAluOpcodes)
        << "VTAUopPush: ALU opcode " << opcode << " is unknown (0 MIN, 1 MAX, 2 ADD, 3 SHR, 4 MUL)";
    LOOM_CHECK_USER(use_imm <= 1) << "VTAUopPush: use_imm must be 0 or 1, got " << use_imm;
    LOOM_CHECK_USER(imm_val >= std::numeric_limits<int16_t>::min() &&
                    imm_val <= std::numeric_limits<int16_t>::max())
        << "VTAUopPush: immediate " << imm_val
        << " does not fit the ALU instruction's 16-bit signed immediate";
    auto alu_opcode = static_cast<AluOpcode>(opcode);
    if (mode_.has_value()) {
      LOOM_CHECK_USER(alu_opcode == alu_opcode_ && (use_imm != 0) == use_imm_ && imm_val == imm_)
          << "VTAUopPush: micro-op " << uops_.size() << " asks for " << AluOpcodeName(alu_opcode)
          << (use_imm ? " with immediate " : "")
          << (use_imm ? std::to_string(imm_val) : std::string()) << " but the kernel is "
          << AluOpcodeName(alu_opcode_) << (use_imm_ ? " with immediate " : "")
          << (use_imm_ ? std::to_string(imm_) : std::string())
          << "; every micro-op of an ALU kernel shares the operation";
    }
    alu_opcode_ = alu_opcode;
    use_imm_ = use_imm != 0;
    imm_ = imm_val;
  }
  mode_ = kernel_mode;
  reset_ = reset_out != 0;
  uops_.push_back(Uop{dst_index, src_index, wgt_index});
}

void UopKernel::FinishRecording(const char* api_name) const {
  LOOM_CHECK_USER(open_loops_ == 0) << api_name << ": the generating function left " << open_loops_
                                    << " micro-op loop(s) open (missing VTAUopLoopEnd)";
  LOOM_CHECK_USER(!uops_.empty()) << api_name
                                  << ": the generating function pushed no micro-op (VTAUopPush)";
}

void UopKernel::CheckMode(KernelMode expected, const char* api_name) const {
  LOOM_ICHECK(mode_.has_value()) << "mode checked before the kernel was recorded";
  LOOM_CHECK_USER(*mode_ == expected)
      << api_name << ": the call site's micro-ops make a " << ModeName(*mode_)
      << " micro-kernel; use " << (*mode_ == KernelMode::kGemm ? "VTAPushGEMMOp" : "VTAPushALUOp");
}

uintptr_t CallSiteId(void** slot) {
  static std::atomic<uintptr_t> next_id{1};
  void* id = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
  if (id != nullptr) return reinterpret_cast<uintptr_t>(id);
  void* fresh = reinterpret_cast<void*>(next_id.fetch_add(1));
  // Two threads may reach a new call site at once: the first id stored wins.
  if (__atomic_compare_exchange_n(slot, &id, fresh, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    id = fresh;
  }
  return reinterpret_cast<uintptr_t>(id);
}

UopKernel* KernelCache::Find(uintptr_t call_site, const std::string& signature) const {
  auto site = kernels_.find(call_site);
  if (site == kernels_.end()) return nullptr;
  auto kernel = site->second.find(signature);
  return kernel == site->second.end() ? nullptr : kernel->second.get();
}

UopKernel* KernelCache::Insert(uintptr_t call_site, const std::string& signature,
                               std::unique_ptr<UopKernel> kernel) {
  auto& slot = kernels_[call_site][signature];
  LOOM_ICHECK(slot == nullptr) << "kernel inserted twice for one call site and signature";
  slot = std::move(kernel);
  return slot.get();
}

void KernelCache::ForgetResidency() {
  for (auto& [site, by_signature] : kernels_) {
    for (auto& [signature, kernel] : by_signature) kernel->sram_begin.reset();
  }
}

}  // namespace loom::vta::runtime_detail
