// The C API of the VTA runtime: a thin layer that finds the thread's command queue, calls
// it, and turns every exception into the thread's last error (nothing is thrown across the
// C boundary).
#include "loom/vta/runtime.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "loom/support/error.h"
#include "vta/runtime_command_queue.h"

namespace loom::vta {

namespace {

using runtime_detail::CommandQueue;
using runtime_detail::GlobalDram;
using runtime_detail::KernelMode;

thread_local std::string last_error;

// The device configuration, and how many threads hold a command queue built with it.
std::mutex config_mutex;
std::unique_ptr<VTAConfig> runtime_config;
int live_queues = 0;

// The thread's command queue, counted in live_queues while it exists.
struct ThreadQueueSlot {
  std::unique_ptr<CommandQueue> queue;
  void Reset() {
    if (queue == nullptr) return;
    queue.reset();
    std::lock_guard<std::mutex> lock(config_mutex);
    --live_queues;
  }
  ~ThreadQueueSlot() { Reset(); }
};
thread_local ThreadQueueSlot thread_queue;

// The device configuration; config_mutex held.
const VTAConfig& CurrentConfig() {
  if (runtime_config == nullptr) {
    runtime_config = std::make_unique<VTAConfig>(VTAConfig::Default());
  }
  return *runtime_config;
}

CommandQueue& ThreadQueue() {
  if (thread_queue.queue == nullptr) {
    std::lock_guard<std::mutex> lock(config_mutex);
    thread_queue.queue = std::make_unique<CommandQueue>(CurrentConfig());
    ++live_queues;
  }
  return *thread_queue.queue;
}

CommandQueue& QueueFromHandle(VTACommandHandle cmd, const char* api_name) {
  LOOM_CHECK_USER(cmd != nullptr && cmd == thread_queue.queue.get())
      << api_name << ": command handle " << cmd
      << " is not the calling thread's command queue (get it from VTATLSCommandHandle() on "
         "this thread; handles die with VTARuntimeShutdown)";
  return *thread_queue.queue;
}

// Whether a failing call was building a program (it then poisons the queue) or only
// touching memory or synchronizing.
enum class CallKind { kBuildsProgram, kOther };

void RecordError(const std::string& message, CallKind kind) {
  last_error = message;
  if (kind == CallKind::kBuildsProgram && thread_queue.queue != nullptr) {
    thread_queue.queue->MarkRecordingFailed(message);
    thread_queue.queue->Poison(message);
  }
}

// Runs `body`, recording any exception as the thread's last error. Returns 0 or -1.
template <typename Body>
int Guarded(CallKind kind, Body&& body) {
  try {
    std::forward<Body>(body)();
    return 0;
  } catch (const std::exception& error) {
    RecordError(error.what(), kind);
  } catch (...) {
    RecordError(
        "VTA runtime: a non-standard exception escaped a micro-kernel's generating "
        "function",
        kind);
  }
  return -1;
}

// The DRAM range [ptr + offset, ptr + offset + size), checked to lie inside one VTA buffer.
uint8_t* CheckedDeviceRange(const void* ptr, size_t offset, size_t size, const char* side) {
  const auto* start = static_cast<const uint8_t*>(ptr) + offset;
  LOOM_CHECK_USER(ptr != nullptr && GlobalDram().Contains(start, size))
      << "VTABufferCopy: the " << side << " range of " << size << " bytes at " << ptr << " + "
      << offset << " is not inside one VTA buffer (allocate it with VTABufferAlloc, or fix "
      << "kind_mask)";
  return const_cast<uint8_t*>(start);
}

}  // namespace

const VTAConfig& RuntimeConfig() {
  std::lock_guard<std::mutex> lock(config_mutex);
  return CurrentConfig();
}

void SetRuntimeConfig(const VTAConfig& config) {
  config.Validate();
  std::lock_guard<std::mutex> lock(config_mutex);
  LOOM_CHECK_USER(live_queues == 0)
      << "SetRuntimeConfig: " << live_queues << " thread(s) hold a VTA command queue built with "
      << "the current configuration; choose the configuration before the first "
      << "VTATLSCommandHandle, or after VTARuntimeShutdown on every thread";
  runtime_config = std::make_unique<VTAConfig>(config);
}

void ThrowIfLastError() {
  if (last_error.empty()) return;
  std::string message = std::move(last_error);
  last_error.clear();
  throw Error(message);
}

const RunRecord& LastRun(VTACommandHandle cmd) {
  return QueueFromHandle(cmd, "LastRun").last_run();
}

const RunTotals& RunTotalsOf(VTACommandHandle cmd) {
  return QueueFromHandle(cmd, "RunTotalsOf").run_totals();
}

void ResetRunTotals(VTACommandHandle cmd) { QueueFromHandle(cmd, "ResetRunTotals").ResetRunTotals(); }

const std::vector<Insn>& PendingInstructions(VTACommandHandle cmd) {
  return QueueFromHandle(cmd, "PendingInstructions").pending();
}

}  // namespace loom::vta

using loom::vta::CallKind;
using loom::vta::Guarded;
using loom::vta::runtime_detail::GlobalDram;

extern "C" {

void* VTABufferAlloc(size_t size) {
  void* buffer = nullptr;
  Guarded(CallKind::kOther, [&] {
    // A zero-byte request still gets a distinct, freeable buffer.
    size_t bytes = std::max<size_t>(size, 1);
    uint64_t phys_addr = GlobalDram().Alloc(bytes);
    buffer = GlobalDram().Host(phys_addr, bytes, "VTABufferAlloc");
  });
  return buffer;
}

void VTABufferFree(void* buffer) {
  Guarded(CallKind::kOther, [&] {
    LOOM_CHECK_USER(buffer != nullptr && GlobalDram().Contains(buffer, 1))
        << "VTABufferFree: " << buffer << " is not a VTA buffer";
    GlobalDram().Free(GlobalDram().PhysicalAddress(buffer));
  });
}

void VTABufferCopy(const void* from, size_t from_offset, void* to, size_t to_offset, size_t size,
                   int kind_mask) {
  Guarded(CallKind::kOther, [&] {
    LOOM_CHECK_USER(kind_mask >= VTA_MEMCPY_H2D && kind_mask <= VTA_MEMCPY_D2D)
        << "VTABufferCopy: kind_mask " << kind_mask
        << " is not 1 (host to device), 2 (device to host) or 3 (device to device)";
    if (size == 0) return;
    const uint8_t* source = (kind_mask & VTA_MEMCPY_D2H)
                                ? loom::vta::CheckedDeviceRange(from, from_offset, size, "source")
                                : static_cast<const uint8_t*>(from) + from_offset;
    uint8_t* target = (kind_mask & VTA_MEMCPY_H2D)
                          ? loom::vta::CheckedDeviceRange(to, to_offset, size, "destination")
                          : static_cast<uint8_t*>(to) + to_offset;
    std::memmove(target, source, size);
  });
}

VTACommandHandle VTATLSCommandHandle(void) {
  VTACommandHandle handle = nullptr;
  Guarded(CallKind::kOther, [&] { handle = &loom::vta::ThreadQueue(); });
  return handle;
}

void VTARuntimeShutdown(void) { loom::vta::thread_queue.Reset(); }

void* VTABufferCPUPtr(VTACommandHandle cmd, void* buffer) {
  void* host = nullptr;
  Guarded(CallKind::kOther, [&] {
    loom::vta::QueueFromHandle(cmd, "VTABufferCPUPtr");
    LOOM_CHECK_USER(buffer != nullptr && GlobalDram().Contains(buffer, 1))
        << "VTABufferCPUPtr: " << buffer << " is not a VTA buffer";
    host = buffer;
  });
  return host;
}

namespace {

void CheckBarrierRange(const char* api_name, VTACommandHandle cmd, void* buffer, uint32_t elem_bits,
                       uint32_t start, uint32_t extent) {
  loom::vta::QueueFromHandle(cmd, api_name);
  uint64_t elem_bytes = (uint64_t{elem_bits} + 7) / 8;
  auto* begin = static_cast<uint8_t*>(buffer) + elem_bytes * start;
  LOOM_CHECK_USER(buffer != nullptr && GlobalDram().Contains(begin, elem_bytes * extent))
      << api_name << ": elements [" << start << ", " << uint64_t{start} + extent << ") of "
      << elem_bits << " bits are not inside the VTA buffer " << buffer;
}

}  // namespace

void VTAWriteBarrier(VTACommandHandle cmd, void* buffer, uint32_t elem_bits, uint32_t start,
                     uint32_t extent) {
  Guarded(CallKind::kOther,
          [&] { CheckBarrierRange("VTAWriteBarrier", cmd, buffer, elem_bits, start, extent); });
}

void VTAReadBarrier(VTACommandHandle cmd, void* buffer, uint32_t elem_bits, uint32_t start,
                    uint32_t extent) {
  Guarded(CallKind::kOther,
          [&] { CheckBarrierRange("VTAReadBarrier", cmd, buffer, elem_bits, start, extent); });
}

void VTALoadBuffer2D(VTACommandHandle cmd, void* src_dram_addr, uint32_t src_elem_offset,
                     uint32_t x_size, uint32_t y_size, uint32_t x_stride, uint32_t x_pad_before,
                     uint32_t y_pad_before, uint32_t x_pad_after, uint32_t y_pad_after,
                     uint32_t dst_sram_index, uint32_t dst_memory_type) {
  Guarded(CallKind::kBuildsProgram, [&] {
    loom::vta::QueueFromHandle(cmd, "VTALoadBuffer2D")
        .LoadBuffer2D(src_dram_addr, src_elem_offset, x_size, y_size, x_stride, x_pad_before,
                      y_pad_before, x_pad_after, y_pad_after, dst_sram_index, dst_memory_type);
  });
}

void VTAStoreBuffer2D(VTACommandHandle cmd, uint32_t src_sram_index, uint32_t src_memory_type,
                      void* dst_dram_addr, uint32_t dst_elem_offset, uint32_t x_size,
                      uint32_t y_size, uint32_t x_stride) {
  Guarded(CallKind::kBuildsProgram, [&] {
    loom::vta::QueueFromHandle(cmd, "VTAStoreBuffer2D")
        .StoreBuffer2D(src_sram_index, src_memory_type, dst_dram_addr, dst_elem_offset, x_size,
                       y_size, x_stride);
  });
}

void VTAUopPush(uint32_t mode, uint32_t reset_out, uint32_t dst_index, uint32_t src_index,
                uint32_t wgt_index, uint32_t opcode, uint32_t use_imm, int32_t imm_val) {
  Guarded(CallKind::kBuildsProgram, [&] {
    loom::vta::ThreadQueue()
        .RecordingKernel("VTAUopPush")
        .Push(mode, reset_out, dst_index, src_index, wgt_index, opcode, use_imm, imm_val);
  });
}

void VTAUopLoopBegin(uint32_t extent, uint32_t dst_factor, uint32_t src_factor,
                     uint32_t wgt_factor) {
  Guarded(CallKind::kBuildsProgram, [&] {
    loom::vta::ThreadQueue()
        .RecordingKernel("VTAUopLoopBegin")
        .LoopBegin(extent, dst_factor, src_factor, wgt_factor);
  });
}

void VTAUopLoopEnd(void) {
  Guarded(CallKind::kBuildsProgram,
          [&] { loom::vta::ThreadQueue().RecordingKernel("VTAUopLoopEnd").LoopEnd(); });
}

int VTAPushGEMMOp(void** uop_handle, int (*finit)(void*), void* signature, int nbytes) {
  return Guarded(CallKind::kBuildsProgram, [&] {
    loom::vta::ThreadQueue().PushKernelOp(loom::vta::KernelMode::kGemm, uop_handle, finit,
                                          signature, nbytes);
  });
}

int VTAPushALUOp(void** uop_handle, int (*finit)(void*), void* signature, int nbytes) {
  return Guarded(CallKind::kBuildsProgram, [&] {
    loom::vta::ThreadQueue().PushKernelOp(loom::vta::KernelMode::kAlu, uop_handle, finit, signature,
                                          nbytes);
  });
}

int VTADepPush(VTACommandHandle cmd, int from_qid, int to_qid) {
  return Guarded(CallKind::kBuildsProgram,
                 [&] { loom::vta::QueueFromHandle(cmd, "VTADepPush").DepPush(from_qid, to_qid); });
}

int VTADepPop(VTACommandHandle cmd, int from_qid, int to_qid) {
  return Guarded(CallKind::kBuildsProgram,
                 [&] { loom::vta::QueueFromHandle(cmd, "VTADepPop").DepPop(from_qid, to_qid); });
}

void VTASetDebugMode(VTACommandHandle cmd, int debug_flag) {
  Guarded(CallKind::kOther,
          [&] { loom::vta::QueueFromHandle(cmd, "VTASetDebugMode").SetDebugMode(debug_flag); });
}

void VTASynchronize(VTACommandHandle cmd, uint32_t wait_cycles) {
  Guarded(CallKind::kOther,
          [&] { loom::vta::QueueFromHandle(cmd, "VTASynchronize").Synchronize(wait_cycles); });
}

const char* VTAGetLastError(void) { return loom::vta::last_error.c_str(); }

void VTAClearLastError(void) { loom::vta::last_error.clear(); }

const char* VTATakeLastError(void) {
  thread_local std::string taken;
  if (loom::vta::last_error.empty()) return nullptr;
  taken = std::move(loom::vta::last_error);
  loom::vta::last_error.clear();
  return taken.c_str();
}

}  // extern "C"
