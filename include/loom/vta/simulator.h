// The VTA simulator: a functional and cycle-approximate model of the VTA accelerator.
//
// Structure (as in the hardware): a fetch module reads the instruction stream in order and
// dispatches every instruction to one of three in-order modules:
//   load    : LOAD of INP or WGT
//   compute : LOAD of UOP or ACC, GEMM, ALU, FINISH
//   store   : STORE
// The modules synchronize only through four dependency-token queues:
//   l2g (load -> compute)    g2l (compute -> load)
//   g2s (compute -> store)   s2g (store -> compute)
// An instruction's pop_prev / pop_next flag consumes one token sent by its module's previous
// / next neighbour in the pipeline load -> compute -> store, before it executes; push_prev /
// push_next sends one after it has executed. Load has no previous and store no next
// neighbour: those flags on their instructions are malformed.
//
// Functional semantics are bit-exact with the VTA hardware specification and TVM's VTA
// simulator (sim_driver.cc), with these precisions where the two are silent or differ:
//   * Values wrap to their bit width (two's complement); nothing is undefined behaviour.
//   * GEMM with reset set zeroes the addressed accumulator elements (no product is added)
//     and does not count towards gemm_counter.
//   * ALU ignores reset (as the hardware does). SHR shifts by the low log2(ACC_WIDTH) bits
//     of the operand read as a signed number (the hardware's shift-argument width): a
//     non-negative amount shifts right arithmetically, a negative one shifts left. MUL is
//     the product wrapped to the accumulator width (as TVM's simulator computes it).
//   * The output buffer is the accumulator buffer narrowed to the output width: a STORE
//     writes the low OUT_WIDTH bits of each accumulator value. STOREs cannot pad.
//   * A memory instruction with x_size == 0 moves nothing (a no-op carrying its flags).
//   * On-chip buffer contents persist across Run calls (micro-op kernels stay resident).
// Malformed programs throw loom::Error naming the instruction index, e.g.
//   "VTA instruction #4 (GEMM): input index 2048 out of range (input buffer depth 2048) ..."
// Errors: unknown opcode / memory type / ALU opcode, a memory type a module cannot access,
// buffer indices outside the buffers (sram_base + footprint, uop_bgn/uop_end, every
// micro-op index plus its loop factors), DRAM ranges outside any allocated region, a flag
// naming a neighbour the module lacks, an instruction after FINISH, a deadlock (every
// unfinished module waits on an empty token queue), tokens left in a queue at the end
// (the hardware requires the queues to drain; SimOptions can report them instead) and, when
// SimOptions::check_hazards is on, a buffer access no token orders (a hazard). Buffer and DRAM changes made before the error
// stay; the failed run's counters are dropped.
//
// Timing model. Each module has its own clock. Instruction k is dispatched by fetch at cycle
// k + 1 (kFetchCyclesPerInsn per instruction); it starts at the latest of its module's
// clock, its dispatch cycle and the push time of every token it pops, takes cost(insn)
// cycles, and tokens it pushes become available when it finishes. Token and instruction
// queues are unbounded (the hardware's finite queue depths never stall the model), and the
// modules do not contend for DRAM bandwidth. Costs:
//   LOAD / STORE  kDramLatencyCycles + ceil(dram_bytes / bus_bytes) + padding_elements
//                 (bus_bytes = config.bus_bytes(), padding written one element per cycle)
//   GEMM / ALU    kComputePipelineCycles + iter_out * iter_in * (uop_end - uop_bgn)
//                 (one micro-op iteration per cycle)
//   FINISH, and memory instructions with x_size == 0: kNoopCycles
// total_cycles is when the last module finishes. GEMM utilization is the fraction of
// total_cycles in which the GEMM core computes: the summed iterations of GEMMs without reset
// divided by total_cycles.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <new>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "loom/vta/config.h"
#include "loom/vta/isa.h"

namespace loom::vta {

// The accelerator's DRAM, backed by host memory. Memory is handed out in regions at
// "physical addresses" (what instructions use: dram_base * element bytes of the memory
// type). Addresses are page aligned and never 0; every access the simulator makes must lie
// inside one live region, anything else is a loom::Error. Thread-safe.
class Dram {
 public:
  static constexpr uint64_t kPageBytes = 4096;

  Dram() = default;
  Dram(const Dram&) = delete;
  Dram& operator=(const Dram&) = delete;

  // A zero-filled region of `bytes` bytes (at least one page is reserved); returns its
  // physical address. Freed address ranges are reused.
  uint64_t Alloc(size_t bytes);
  // Frees the region starting at `phys_addr`; throws if no live region starts there.
  void Free(uint64_t phys_addr);
  // Host pointer to [phys_addr, phys_addr + bytes), which must lie in one live region.
  // `what` names the access in the error message.
  uint8_t* Host(uint64_t phys_addr, uint64_t bytes, const std::string& what = "access");
  // Physical address of a host pointer into a live region; throws if it points elsewhere.
  uint64_t PhysicalAddress(const void* host) const;
  // Whether [host, host + bytes) lies in one live region.
  bool Contains(const void* host, size_t bytes) const;
  // Requested size of the live region starting at phys_addr; throws if there is none.
  size_t RegionBytes(uint64_t phys_addr) const;

 private:
  // Host memory of a region, page-aligned like its physical address: an offset aligned in
  // DRAM is as aligned on the host (compiled code checks tensors' alignment on the host side).
  struct PageDelete {
    void operator()(uint8_t* data) const {
      ::operator delete[](data, std::align_val_t(kPageBytes));
    }
  };
  struct Region {
    uint64_t reserved_bytes;  // whole pages
    size_t bytes;             // as requested
    std::unique_ptr<uint8_t[], PageDelete> data;
  };
  const Region* FindRegion(uint64_t phys_addr, uint64_t* region_start) const;
  // The physical start of the live region holding host address `address`, or 0.
  uint64_t RegionOfHost(uintptr_t address) const;

  mutable std::mutex mutex_;
  std::map<uint64_t, Region> regions_;             // by physical start address
  std::map<uintptr_t, uint64_t> host_regions_;     // host start address -> physical start
  std::multimap<uint64_t, uint64_t> free_ranges_;  // reserved bytes -> physical start
  uint64_t next_phys_addr_ = kPageBytes;
};

// Statistics with the meaning of TVM's VTA simulator profiler: bytes moved between DRAM and
// each buffer, and micro-op iterations executed (iter_out * iter_in * (uop_end - uop_bgn)
// per GEMM without reset / per ALU).
struct SimCounters {
  uint64_t inp_load_nbytes = 0;
  uint64_t wgt_load_nbytes = 0;
  uint64_t acc_load_nbytes = 0;
  uint64_t uop_load_nbytes = 0;
  uint64_t out_store_nbytes = 0;
  uint64_t gemm_counter = 0;
  uint64_t alu_counter = 0;
  bool operator==(const SimCounters&) const = default;
  SimCounters& operator+=(const SimCounters& other);
};

// Cycle report of one Run (see the timing model above).
struct SimTiming {
  uint64_t total_cycles = 0;
  uint64_t load_busy_cycles = 0;
  uint64_t compute_busy_cycles = 0;
  uint64_t store_busy_cycles = 0;
  uint64_t gemm_busy_cycles = 0;  // cycles the GEMM core multiplies
  // gemm_busy_cycles / total_cycles (0 for an empty program).
  double gemm_utilization() const;
  // The cycles of runs one after another.
  SimTiming& operator+=(const SimTiming& other);
};

struct SimReport {
  SimCounters counters;
  SimTiming timing;
  // With SimOptions::tokens_must_drain off: one line per token queue the program left
  // non-empty ("2 token(s) in the compute->load (g2l) queue, the first pushed by VTA
  // instruction #7 (GEMM)"); empty otherwise.
  std::vector<std::string> leftover_tokens;
  // {"inp_load_nbytes": ..., ..., "total_cycles": ..., "gemm_utilization": ...}
  std::string ToJson() const;
  // A short human-readable table of counters and cycles.
  std::string ToString() const;
};

// The lines the VTA tools print for a run (or a model's runs summed): one per counter,
// "counter inp_load_nbytes=...", then "cycles total=... gemm_utilization=...".
std::string CounterLines(const SimCounters& counters, const SimTiming& timing);

// Timing constants (cycles).
inline constexpr uint64_t kFetchCyclesPerInsn = 1;
inline constexpr uint64_t kDramLatencyCycles = 64;
inline constexpr uint64_t kComputePipelineCycles = 4;
inline constexpr uint64_t kNoopCycles = 1;

// How a Run checks and times a program.
struct SimOptions {
  // Tokens left in a queue at the end are an error (the hardware requires the queues to
  // drain). Off: the run succeeds and SimReport::leftover_tokens lists them.
  bool tokens_must_drain = true;
  // Check that dependency tokens order every access to a buffer element that another module
  // made before: reading an element another module wrote, or writing one another module read
  // or wrote, with no chain of tokens from that instruction to this one, is a loom::Error
  // naming both (such a program computes the right result only by the timing's luck; on the
  // hardware, or with other latencies, it does not). Each element access is recorded: slower,
  // for tests and debugging.
  bool check_hazards = false;
  // One instruction at a time: each starts when the one executed before it has finished (the
  // timing of a VTA without overlap between its modules).
  bool serialize = false;
};

// One VTA device. Not thread-safe: one Run at a time (the DRAM it shares is thread-safe).
class Simulator {
 public:
  // `config` must be valid (it is validated again); `dram` must outlive the simulator.
  Simulator(const VTAConfig& config, Dram* dram);
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  // Executes a program to the end; returns this run's counters and timing. Throws
  // loom::Error for a malformed program (see above).
  SimReport Run(std::span<const Insn> program);
  // The same on encoded instructions; an undecodable word is an error naming its index.
  SimReport Run(std::span<const InsnWord> program);

  // Counters summed over all runs since construction or the last ClearCounters().
  const SimCounters& counters() const { return total_counters_; }
  void ClearCounters() { total_counters_ = SimCounters{}; }

  const VTAConfig& config() const { return config_; }
  Dram& dram() { return *dram_; }

  const SimOptions& options() const { return options_; }
  void set_options(const SimOptions& options) { options_ = options; }

  // Buffer contents, for tests and debugging: lane `lane` of element `index` (lanes are
  // row-major: input [batch][block_in], weight [block_out][block_in], accumulator
  // [batch][block_out]). Throws loom::Error when out of range.
  int32_t InpValue(uint64_t index, int lane) const;
  int32_t WgtValue(uint64_t index, int lane) const;
  int32_t AccValue(uint64_t index, int lane) const;
  uint32_t UopWord(uint64_t index) const;

 private:
  struct Buffers;
  friend class ProgramRunner;

  VTAConfig config_;
  Dram* dram_;
  std::unique_ptr<Buffers> buffers_;
  SimCounters total_counters_;
  SimOptions options_;
};

}  // namespace loom::vta
