#include "vta/runtime_command_queue.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <utility>

#include "loom/support/error.h"
#include "loom/vta/disasm.h"

namespace loom::vta::runtime_detail {

namespace {

// Frees a DRAM region when the scope ends, whichever way it ends.
class ScopedDramRegion {
 public:
  ScopedDramRegion(Dram& dram, uint64_t phys_addr) : dram_(dram), phys_addr_(phys_addr) {}
  ScopedDramRegion(const ScopedDramRegion&) = delete;
  ScopedDramRegion& operator=(const ScopedDramRegion&) = delete;
  ~ScopedDramRegion() {
    if (phys_addr_ != 0) dram_.Free(phys_addr_);
  }

 private:
  Dram& dram_;
  uint64_t phys_addr_;
};

// Token balance of the four dependency queues over a stream: pushes minus pops.
struct TokenBalance {
  int64_t load_to_compute = 0;
  int64_t compute_to_load = 0;
  int64_t compute_to_store = 0;
  int64_t store_to_compute = 0;
};

TokenBalance CountTokens(const std::vector<Insn>& insns) {
  TokenBalance balance;
  for (const Insn& insn : insns) {
    const DepFlags& deps = GetDeps(insn);
    switch (StageOf(insn)) {
      case Stage::kLoad:
        balance.load_to_compute += deps.push_next;
        balance.compute_to_load -= deps.pop_next;
        break;
      case Stage::kCompute:
        balance.compute_to_load += deps.push_prev;
        balance.compute_to_store += deps.push_next;
        balance.load_to_compute -= deps.pop_prev;
        balance.store_to_compute -= deps.pop_next;
        break;
      case Stage::kStore:
        balance.store_to_compute += deps.push_prev;
        balance.compute_to_store -= deps.pop_prev;
        break;
    }
  }
  return balance;
}

// Restores `slot` to null however the generating function returns.
class RecordingScope {
 public:
  explicit RecordingScope(std::unique_ptr<UopKernel>& slot) : slot_(slot) {
    slot_ = std::make_unique<UopKernel>();
  }
  RecordingScope(const RecordingScope&) = delete;
  RecordingScope& operator=(const RecordingScope&) = delete;
  ~RecordingScope() { slot_.reset(); }
  std::unique_ptr<UopKernel> Take() { return std::move(slot_); }

 private:
  std::unique_ptr<UopKernel>& slot_;
};

}  // namespace

Dram& GlobalDram() {
  static Dram dram;
  return dram;
}

CommandQueue::CommandQueue(const VTAConfig& config)
    : config_(config), simulator_(config, &GlobalDram()) {}

uint64_t CommandQueue::ElemBytes(MemId memory_type) const {
  switch (memory_type) {
    case MemId::kUop:
      return static_cast<uint64_t>(config_.uop_elem_bytes());
    case MemId::kWgt:
      return static_cast<uint64_t>(config_.wgt_elem_bytes());
    case MemId::kInp:
      return static_cast<uint64_t>(config_.inp_elem_bytes());
    case MemId::kAcc:
      return static_cast<uint64_t>(config_.acc_elem_bytes());
    case MemId::kOut:
      return static_cast<uint64_t>(config_.out_elem_bytes());
    case MemId::kAcc8:
      return static_cast<uint64_t>(config_.acc8_elem_bytes());
  }
  LOOM_ICHECK(false) << "memory type " << static_cast<int>(memory_type) << " escaped validation";
  return 0;
}

uint32_t CommandQueue::DramElemBase(const char* api_name, void* buffer, MemId memory_type,
                                    uint32_t elem_offset) const {
  Dram& dram = GlobalDram();
  LOOM_CHECK_USER(buffer != nullptr && dram.Contains(buffer, 1))
      << api_name << ": DRAM address " << buffer
      << " is not VTA memory; allocate device buffers with VTABufferAlloc";
  uint64_t phys_addr = dram.PhysicalAddress(buffer);
  uint64_t elem_bytes = ElemBytes(memory_type);
  LOOM_CHECK_USER(phys_addr % elem_bytes == 0)
      << api_name << ": DRAM address " << buffer << " is not aligned to the " << elem_bytes
      << "-byte elements of " << MemIdName(memory_type)
      << "; pass the buffer returned by VTABufferAlloc and an element offset";
  uint64_t dram_base = phys_addr / elem_bytes + elem_offset;
  LOOM_CHECK_USER(dram_base <= std::numeric_limits<uint32_t>::max())
      << api_name << ": DRAM element " << dram_base << " of " << MemIdName(memory_type)
      << " does not fit the instruction's 32-bit dram_base field";
  return static_cast<uint32_t>(dram_base);
}

void CommandQueue::Emit(const char* api_name, Insn insn, Stage stage) {
  try {
    Encode(config_, insn);
  } catch (const Error& error) {
    LOOM_THROW << api_name << ": " << error.what();
  }
  insns_.Append(std::move(insn), stage);
}

void CommandQueue::LoadBuffer2D(void* src_dram_addr, uint32_t src_elem_offset, uint32_t x_size,
                                uint32_t y_size, uint32_t x_stride, uint32_t x_pad_before,
                                uint32_t y_pad_before, uint32_t x_pad_after, uint32_t y_pad_after,
                                uint32_t dst_sram_index, uint32_t dst_memory_type) {
  LOOM_CHECK_USER(dst_memory_type <= static_cast<uint32_t>(MemId::kAcc) ||
                  dst_memory_type == static_cast<uint32_t>(MemId::kAcc8))
      << "VTALoadBuffer2D: destination memory type " << dst_memory_type
      << " cannot be loaded (0 UOP, 1 WGT, 2 INP, 3 ACC, 5 ACC_8BIT)";
  MemInsn insn;
  insn.opcode = Opcode::kLoad;
  insn.memory_type = static_cast<MemId>(dst_memory_type);
  insn.sram_base = dst_sram_index;
  insn.dram_base =
      DramElemBase("VTALoadBuffer2D", src_dram_addr, insn.memory_type, src_elem_offset);
  insn.y_size = y_size;
  insn.x_size = x_size;
  insn.x_stride = x_stride;
  insn.y_pad_0 = y_pad_before;
  insn.y_pad_1 = y_pad_after;
  insn.x_pad_0 = x_pad_before;
  insn.x_pad_1 = x_pad_after;
  Stage stage = StageOf(insn);
  Emit("VTALoadBuffer2D", insn, stage);
}

void CommandQueue::StoreBuffer2D(uint32_t src_sram_index, uint32_t src_memory_type,
                                 void* dst_dram_addr, uint32_t dst_elem_offset, uint32_t x_size,
                                 uint32_t y_size, uint32_t x_stride) {
  LOOM_CHECK_USER(src_memory_type == static_cast<uint32_t>(MemId::kOut))
      << "VTAStoreBuffer2D: source memory type " << src_memory_type
      << " cannot be stored; stores read the output buffer (4 OUT)";
  MemInsn insn;
  insn.opcode = Opcode::kStore;
  insn.memory_type = MemId::kOut;
  insn.sram_base = src_sram_index;
  insn.dram_base = DramElemBase("VTAStoreBuffer2D", dst_dram_addr, MemId::kOut, dst_elem_offset);
  insn.y_size = y_size;
  insn.x_size = x_size;
  insn.x_stride = x_stride;
  Emit("VTAStoreBuffer2D", insn, Stage::kStore);
}

UopKernel& CommandQueue::RecordingKernel(const char* api_name) {
  LOOM_CHECK_USER(recording_ != nullptr)
      << api_name << " was called outside a micro-kernel's generating function; only the "
      << "function passed to VTAPushGEMMOp / VTAPushALUOp may record micro-ops";
  return *recording_;
}

void CommandQueue::MarkRecordingFailed(const std::string& message) {
  if (recording_ != nullptr && recording_error_.empty()) recording_error_ = message;
}

void CommandQueue::Poison(const std::string& message) {
  if (poison_.empty()) poison_ = message;
}

UopKernel& CommandQueue::FindOrRecordKernel(const char* api_name, void** uop_handle,
                                            int (*finit)(void*), void* signature, int nbytes) {
  LOOM_CHECK_USER(uop_handle != nullptr && finit != nullptr)
      << api_name << ": the uop_handle slot and the generating function must not be null";
  LOOM_CHECK_USER(nbytes >= 0 && (nbytes == 0 || signature != nullptr))
      << api_name << ": signature of " << nbytes << " bytes at " << signature
      << " is not a valid closure";
  LOOM_CHECK_USER(recording_ == nullptr)
      << api_name << " was called from inside another micro-kernel's generating function";
  std::string key(static_cast<const char*>(signature), static_cast<size_t>(nbytes));
  const uintptr_t call_site = CallSiteId(uop_handle);
  if (UopKernel* cached = kernels_.Find(call_site, key)) return *cached;

  std::unique_ptr<UopKernel> recorded;
  recording_error_.clear();
  {
    RecordingScope scope(recording_);
    int status = finit(signature);
    LOOM_CHECK_USER(recording_error_.empty())
        << api_name << ": recording the micro-kernel failed: " << recording_error_;
    LOOM_CHECK_USER(status == 0) << api_name << ": the micro-kernel's generating function returned "
                                 << status;
    recorded = scope.Take();
  }
  recorded->FinishRecording(api_name);
  LOOM_CHECK_USER(recorded->uops().size() <= static_cast<size_t>(config_.uop_buff_depth()))
      << api_name << ": the micro-kernel has " << recorded->uops().size()
      << " micro-ops, more than the micro-op buffer holds (" << config_.uop_buff_depth() << ")";
  for (size_t i = 0; i < recorded->uops().size(); ++i) {
    try {
      EncodeUop(config_, recorded->uops()[i]);
    } catch (const Error& error) {
      LOOM_THROW << api_name << ": micro-op " << i << ": " << error.what();
    }
  }
  return *kernels_.Insert(call_site, key, std::move(recorded));
}

void CommandQueue::PushKernelOp(KernelMode mode, void** uop_handle, int (*finit)(void*),
                                void* signature, int nbytes) {
  const char* api_name = mode == KernelMode::kGemm ? "VTAPushGEMMOp" : "VTAPushALUOp";
  UopKernel& kernel = FindOrRecordKernel(api_name, uop_handle, finit, signature, nbytes);
  kernel.CheckMode(mode, api_name);
  MakeResident(kernel);

  // Both formats share the loop fields. A single loop is the outer loop of a GEMM but the
  // inner loop of an ALU op, the placement TVM's runtime uses.
  const std::vector<UopLoop>& loops = kernel.loops();
  UopLoop outer{1, 0, 0, 0};
  UopLoop inner{1, 0, 0, 0};
  if (loops.size() == 2) {
    outer = loops[0];
    inner = loops[1];
  } else if (loops.size() == 1) {
    (mode == KernelMode::kGemm ? outer : inner) = loops[0];
  }
  auto fill_loop = [&](auto& insn) {
    insn.reset = kernel.reset();
    insn.uop_bgn = *kernel.sram_begin;
    insn.uop_end = insn.uop_bgn + static_cast<uint32_t>(kernel.uops().size());
    insn.iter_out = outer.extent;
    insn.iter_in = inner.extent;
    insn.dst_factor_out = outer.dst_factor;
    insn.dst_factor_in = inner.dst_factor;
    insn.src_factor_out = outer.src_factor;
    insn.src_factor_in = inner.src_factor;
  };
  if (mode == KernelMode::kGemm) {
    GemmInsn insn;
    fill_loop(insn);
    insn.wgt_factor_out = outer.wgt_factor;
    insn.wgt_factor_in = inner.wgt_factor;
    Emit(api_name, insn, Stage::kCompute);
  } else {
    AluInsn insn;
    fill_loop(insn);
    insn.alu_opcode = kernel.alu_opcode();
    insn.use_imm = kernel.use_imm();
    insn.imm = kernel.imm();
    Emit(api_name, insn, Stage::kCompute);
  }
}

void CommandQueue::MakeResident(UopKernel& kernel) {
  if (kernel.sram_begin.has_value()) return;
  auto size = static_cast<uint32_t>(kernel.uops().size());
  auto depth = static_cast<uint32_t>(config_.uop_buff_depth());
  if (uop_next_slot_ + size > depth) uop_next_slot_ = 0;
  uint32_t begin = uop_next_slot_;
  uint32_t end = begin + size;
  std::erase_if(resident_, [&](UopKernel* other) {
    uint32_t other_begin = *other->sram_begin;
    auto other_end = other_begin + static_cast<uint32_t>(other->uops().size());
    if (other_begin >= end || begin >= other_end) return false;
    other->sram_begin.reset();
    return true;
  });
  kernel.sram_begin = begin;
  resident_.push_back(&kernel);
  uop_next_slot_ = end;

  MemInsn load;
  load.opcode = Opcode::kLoad;
  load.memory_type = MemId::kUop;
  load.sram_base = begin;
  // Relative to the staging area for now; Synchronize adds the area's DRAM element.
  load.dram_base = static_cast<uint32_t>(uop_staging_.size());
  load.y_size = 1;
  load.x_size = size;
  load.x_stride = size;
  for (const Uop& uop : kernel.uops()) uop_staging_.push_back(EncodeUop(config_, uop));
  Emit("micro-kernel load", load, Stage::kCompute);
  uop_load_insns_.push_back(insns_.insns().size() - 1);
}

void CommandQueue::DrainLeftoverTokens() {
  TokenBalance balance = CountTokens(insns_.insns());
  for (int64_t i = 0; i < balance.load_to_compute; ++i) insns_.DepPop(1, 2);
  for (int64_t i = 0; i < balance.compute_to_load; ++i) insns_.DepPop(2, 1);
  for (int64_t i = 0; i < balance.compute_to_store; ++i) insns_.DepPop(2, 3);
  for (int64_t i = 0; i < balance.store_to_compute; ++i) insns_.DepPop(3, 2);
}

void CommandQueue::ResetProgram() {
  insns_.Clear();
  uop_staging_.clear();
  uop_load_insns_.clear();
  poison_.clear();
}

void CommandQueue::ForgetUopBuffer() {
  kernels_.ForgetResidency();
  resident_.clear();
  uop_next_slot_ = 0;
}

void CommandQueue::SetDebugMode(int flags) {
  constexpr int kKnown = VTA_DEBUG_DUMP_INSN | VTA_DEBUG_DUMP_UOP | VTA_DEBUG_SKIP_READ_BARRIER |
                         VTA_DEBUG_SKIP_WRITE_BARRIER | VTA_DEBUG_FORCE_SERIAL |
                         VTA_DEBUG_CHECK_HAZARDS;
  LOOM_CHECK_USER((flags & ~kKnown) == 0)
      << "VTASetDebugMode: unknown flag bits 0x" << std::hex << (flags & ~kKnown)
      << " (known: DUMP_INSN 0x2, DUMP_UOP 0x4, SKIP_READ_BARRIER 0x8, SKIP_WRITE_BARRIER 0x10, "
         "FORCE_SERIAL 0x20, CHECK_HAZARDS 0x40)";
  debug_flags_ = flags;
  SimOptions options = simulator_.options();
  options.serialize = (flags & VTA_DEBUG_FORCE_SERIAL) != 0;
  options.check_hazards = (flags & VTA_DEBUG_CHECK_HAZARDS) != 0;
  simulator_.set_options(options);
}

void CommandQueue::Synchronize(uint32_t wait_cycles) {
  if (!poison_.empty()) {
    std::string reason = poison_;
    ResetProgram();
    ForgetUopBuffer();
    LOOM_THROW << "VTASynchronize: the program was discarded, not run, because a call "
                  "building it failed: "
               << reason;
  }
  // Nothing queued: nothing to wait for (a FINISH alone would count as a run of the device,
  // and its cycles in the run totals).
  if (insns_.insns().empty() && !insns_.HasPendingPop() && uop_staging_.empty()) return;
  // Commit pops first so that the token count sees them on instructions.
  for (Stage stage : {Stage::kLoad, Stage::kCompute, Stage::kStore}) {
    insns_.CommitPendingPop(stage);
  }
  DrainLeftoverTokens();
  // FINISH runs on compute once the last store and the last load have signalled it.
  insns_.DepPush(3, 2);
  insns_.DepPush(1, 2);
  insns_.DepPop(3, 2);
  insns_.DepPop(1, 2);
  insns_.CommitPendingPop(Stage::kCompute);
  Emit("VTASynchronize", FinishInsn{}, Stage::kCompute);
  LOOM_ICHECK(!insns_.HasPendingPop()) << "dependency pops left pending after FINISH";

  Dram& dram = GlobalDram();
  uint64_t staging_addr = 0;
  if (!uop_staging_.empty()) {
    size_t bytes = uop_staging_.size() * sizeof(uint32_t);
    staging_addr = dram.Alloc(bytes);
    std::memcpy(dram.Host(staging_addr, bytes, "micro-op staging"), uop_staging_.data(), bytes);
  }
  ScopedDramRegion staging(dram, staging_addr);
  auto staging_elem = static_cast<uint32_t>(staging_addr / config_.uop_elem_bytes());
  for (size_t index : uop_load_insns_) {
    std::get<MemInsn>(insns_.insns()[index]).dram_base += staging_elem;
  }

  std::vector<InsnWord> words;
  words.reserve(insns_.insns().size());
  for (const Insn& insn : insns_.insns()) words.push_back(Encode(config_, insn));
  if ((debug_flags_ & VTA_DEBUG_DUMP_UOP) != 0 && !uop_staging_.empty()) {
    std::fprintf(stderr, "VTA micro-ops loaded by this program (%zu):\n%s", uop_staging_.size(),
                 DisassembleUops(config_, uop_staging_).c_str());
  }
  if ((debug_flags_ & VTA_DEBUG_DUMP_INSN) != 0) {
    std::fprintf(stderr, "VTA program (%zu instructions):\n%s", words.size(),
                 Disassemble(config_, words).c_str());
  }
  SimReport report;
  try {
    report = simulator_.Run(words);
  } catch (const Error& error) {
    // The buffers may hold anything now: nothing is resident any more.
    ResetProgram();
    ForgetUopBuffer();
    LOOM_THROW << "VTASynchronize: " << error.what();
  }
  last_run_.program = std::move(insns_.insns());
  last_run_.report = report;
  ++run_totals_.runs;
  run_totals_.counters += report.counters;
  run_totals_.timing += report.timing;
  ResetProgram();
  LOOM_CHECK_USER(report.timing.total_cycles <= wait_cycles)
      << "VTASynchronize: the program ran " << report.timing.total_cycles
      << " simulated cycles, more than wait_cycles = " << wait_cycles
      << " (the device timed out; its writes to DRAM have happened)";
}

}  // namespace loom::vta::runtime_detail
