// The VTA JIT runtime: the C API that compiled code calls to drive a VTA device.
//
// Names, argument orders and types are those of TVM's VTA runtime (vta/runtime/runtime.h),
// so code lowered for VTA calls these functions unchanged. Behind the API the runtime
//   * records micro-op kernels on the fly (VTAPushGEMMOp / VTAPushALUOp call the kernel's
//     generating function once, while it replays VTAUopLoopBegin / VTAUopPush /
//     VTAUopLoopEnd) and caches them per call site (an id kept in its uop_handle slot) and
//     signature bytes, loading a kernel into the micro-op buffer only when it is not resident;
//   * appends LOAD / GEMM / ALU / STORE instructions to a per-thread queue, turning
//     VTADepPush / VTADepPop into the dependency flags of neighbouring instructions (or into
//     no-op instructions carrying them when no instruction can);
//   * on VTASynchronize, ends the stream with a FINISH that waits for the last load and
//     store, runs it on the simulator (loom/vta/simulator.h) and records the run's
//     counters and cycle report.
//
// Device memory: VTABufferAlloc returns a pointer into the simulator's DRAM that the host
// may read and write directly (VTABufferCPUPtr returns it unchanged); LOAD/STORE
// instructions address it by the buffer's physical address.
//
// Errors: the C functions never throw. A misuse (unknown queue id, a micro-op pushed
// outside a kernel, a field that does not fit its instruction field, a buffer that is not
// VTA memory) or a malformed program found by the simulator (out-of-range buffer index,
// deadlocked dependency pop; the message names the instruction index) is recorded as the
// thread's last error, readable with VTAGetLastError(); functions returning int return -1.
// The first error after a synchronize also poisons the command queue: the next
// VTASynchronize discards the half-built program instead of running it, records an error
// saying so, and leaves the queue empty for the next program. C++ callers that prefer
// exceptions call loom::vta::ThrowIfLastError().
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// VTABufferCopy kind_mask bits: which side of the copy is VTA memory.
#define VTA_MEMCPY_H2D 1
#define VTA_MEMCPY_D2H 2
#define VTA_MEMCPY_D2D 3

typedef void* VTACommandHandle;

// Allocates `size` bytes of device DRAM, zero-filled, at a page-aligned physical address
// (a zero-byte request gets one byte); nullptr on error.
void* VTABufferAlloc(size_t size);
void VTABufferFree(void* buffer);
// Copies `size` bytes from from+from_offset to to+to_offset; kind_mask says which of the
// pointers are VTA buffers (bit 0: `to`, bit 1: `from`). The VTA side must lie inside one
// buffer.
void VTABufferCopy(const void* from, size_t from_offset, void* to, size_t to_offset, size_t size,
                   int kind_mask);

// The calling thread's command queue (created on first use).
VTACommandHandle VTATLSCommandHandle(void);
// Destroys the calling thread's command queue, its kernel cache and its pending program.
void VTARuntimeShutdown(void);

// The host-accessible address of a VTA buffer (the buffer itself: DRAM is host memory).
void* VTABufferCPUPtr(VTACommandHandle cmd, void* buffer);
// Barriers between host and device accesses. The simulator's DRAM is coherent, so they
// only check that [start, start + extent) elements of elem_bits lie inside `buffer`.
void VTAWriteBarrier(VTACommandHandle cmd, void* buffer, uint32_t elem_bits, uint32_t start,
                     uint32_t extent);
void VTAReadBarrier(VTACommandHandle cmd, void* buffer, uint32_t elem_bits, uint32_t start,
                    uint32_t extent);

// 2-D loads and stores; sizes, strides and offsets count elements of the memory type
// (1 = WGT, 2 = INP, 3 = ACC, 5 = ACC_8BIT, 0 = UOP for loads; 4 = OUT for stores).
void VTALoadBuffer2D(VTACommandHandle cmd, void* src_dram_addr, uint32_t src_elem_offset,
                     uint32_t x_size, uint32_t y_size, uint32_t x_stride, uint32_t x_pad_before,
                     uint32_t y_pad_before, uint32_t x_pad_after, uint32_t y_pad_after,
                     uint32_t dst_sram_index, uint32_t dst_memory_type);
void VTAStoreBuffer2D(VTACommandHandle cmd, uint32_t src_sram_index, uint32_t src_memory_type,
                      void* dst_dram_addr, uint32_t dst_elem_offset, uint32_t x_size,
                      uint32_t y_size, uint32_t x_stride);

// Micro-kernel recording; only valid inside the generating function that VTAPushGEMMOp /
// VTAPushALUOp calls. mode 0 = GEMM, 1 = ALU; all micro-ops of a kernel share mode,
// reset_out and (ALU) opcode, use_imm and imm_val. At most two loops, opened before the
// first micro-op.
void VTAUopPush(uint32_t mode, uint32_t reset_out, uint32_t dst_index, uint32_t src_index,
                uint32_t wgt_index, uint32_t opcode, uint32_t use_imm, int32_t imm_val);
void VTAUopLoopBegin(uint32_t extent, uint32_t dst_factor, uint32_t src_factor,
                     uint32_t wgt_factor);
void VTAUopLoopEnd(void);

// Pushes a GEMM / ALU instruction running the kernel cached under (call site, signature
// bytes), generating it with finit(signature) on first use (finit returns 0 on success). The
// call site is its uop_handle slot, a static of compiled code that starts null: on first use
// the runtime stores the call site's id in it (so code loaded later at the same address, with a
// null slot of its own, never finds another module's kernels). Returns 0, or -1 on error.
int VTAPushGEMMOp(void** uop_handle, int (*finit)(void*), void* signature, int nbytes);
int VTAPushALUOp(void** uop_handle, int (*finit)(void*), void* signature, int nbytes);

// Dependency tokens between pipeline stages: from_qid sends, to_qid receives (1 = load,
// 2 = compute, 3 = store; load and store are not neighbours). Returns 0, or -1 on error.
int VTADepPush(VTACommandHandle cmd, int from_qid, int to_qid);
int VTADepPop(VTACommandHandle cmd, int from_qid, int to_qid);

// VTASetDebugMode flags. DUMP_INSN writes each program VTASynchronize runs to stderr as a
// listing (loom/vta/disasm.h), DUMP_UOP each micro-op kernel it loads; FORCE_SERIAL runs one
// instruction at a time (SimOptions::serialize). The barrier flags are accepted and change
// nothing: the simulator's DRAM is coherent, so the barriers only check their ranges.
// CHECK_HAZARDS (Loom's) makes the simulator fail a program whose dependency tokens leave a
// buffer access unordered (SimOptions::check_hazards).
#define VTA_DEBUG_DUMP_INSN (1 << 1)
#define VTA_DEBUG_DUMP_UOP (1 << 2)
#define VTA_DEBUG_SKIP_READ_BARRIER (1 << 3)
#define VTA_DEBUG_SKIP_WRITE_BARRIER (1 << 4)
#define VTA_DEBUG_FORCE_SERIAL (1 << 5)
#define VTA_DEBUG_CHECK_HAZARDS (1 << 6)

// Sets the debug flags of `cmd`'s later synchronizes (0 clears them); an unknown bit is an
// error.
void VTASetDebugMode(VTACommandHandle cmd, int debug_flag);

// Runs everything queued since the last synchronize and waits for it. If the program takes
// more than wait_cycles simulated cycles, an error says it timed out (its results are still
// in DRAM, as the simulator ran it to the end). With nothing queued it returns at once (no
// run: LastRun and the run totals stay as they were).
void VTASynchronize(VTACommandHandle cmd, uint32_t wait_cycles);

// The calling thread's last error message, "" when none; VTAClearLastError resets it.
const char* VTAGetLastError(void);
void VTAClearLastError(void);
// Loom's: the calling thread's last error, or NULL when there is none, and clears it (the text
// stays valid until the thread's next VTATakeLastError). Compiled code calls it after
// VTASynchronize, to fail with the message.
const char* VTATakeLastError(void);

#ifdef __cplusplus
}  // extern "C"

#include <vector>

#include "loom/vta/config.h"
#include "loom/vta/isa.h"
#include "loom/vta/simulator.h"

namespace loom::vta {

// The configuration of the runtime's device: the one SetRuntimeConfig chose, else the default
// configuration.
const VTAConfig& RuntimeConfig();
// Chooses the device configuration (validated). The command queues are built with it, so it
// can change only while no thread has one: before the first VTATLSCommandHandle, or after
// every thread's VTARuntimeShutdown; otherwise a loom::Error.
void SetRuntimeConfig(const VTAConfig& config);

// Throws loom::Error with the thread's last VTA error (and clears it), if there is one.
void ThrowIfLastError();

// What the last successful VTASynchronize on `cmd` ran: the instruction stream (FINISH
// included) and the simulator's counters and cycle report.
struct RunRecord {
  std::vector<Insn> program;
  SimReport report;
};
const RunRecord& LastRun(VTACommandHandle cmd);

// The counters and cycles of every successful VTASynchronize on `cmd` since the queue was made
// or ResetRunTotals (a whole model's VTA kernels, one run after another), summed.
struct RunTotals {
  uint64_t runs = 0;
  SimCounters counters;
  SimTiming timing;
};
const RunTotals& RunTotalsOf(VTACommandHandle cmd);
void ResetRunTotals(VTACommandHandle cmd);

// The instructions queued on `cmd` since its last synchronize (no FINISH yet): lets tests
// inspect the dependency flags the runtime produced.
const std::vector<Insn>& PendingInstructions(VTACommandHandle cmd);

}  // namespace loom::vta
#endif
