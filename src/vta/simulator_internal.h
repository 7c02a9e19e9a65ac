// Private pieces of the VTA simulator shared by its source files: the on-chip buffers and
// the functional executor of single instructions (the scheduler lives in simulator.cc).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "loom/vta/simulator.h"

namespace loom::vta {

// On-chip SRAM. Values are kept unpacked, one int32 per lane, already wrapped to their
// type's width; micro-ops are kept as their 32-bit encodings.
struct Simulator::Buffers {
  std::vector<uint32_t> uop;
  std::vector<int32_t> inp;
  std::vector<int32_t> wgt;
  std::vector<int32_t> acc;
};

// The three modules an instruction can run in (simulator.cc dispatches).
enum Module { kLoadModule = 0, kComputeModule = 1, kStoreModule = 2, kNumModules = 3 };
const char* ModuleName(int module);

// SimOptions::check_hazards, with vector clocks. Each module counts the instructions it has
// run and knows, for every other module, how many of that module's instructions are ordered
// before its current one: a token carries what its pusher knew, and popping it merges that
// in. An access to a buffer element is ordered after another module's earlier access exactly
// when the current module knows that access's instruction. The micro-op buffer is left out:
// only the compute module touches it.
class HazardChecker {
 public:
  using Clock = std::array<uint64_t, kNumModules>;
  enum Buffer { kInp, kWgt, kAcc, kNumBuffers };

  HazardChecker(const VTAConfig& config, std::span<const Insn> program);
  // Instruction `index` starts in `module`, having popped tokens that carried `popped`.
  void Begin(uint64_t index, int module, const std::vector<Clock>& popped);
  // What a token the current instruction pushes carries.
  const Clock& clock() const { return clocks_[module_]; }
  // The current instruction accesses `element` of `buffer`; a loom::Error on a hazard.
  void Read(Buffer buffer, uint64_t element);
  void Write(Buffer buffer, uint64_t element);

 private:
  struct Access {
    uint64_t count = 0;  // the module's instruction count at the access; 0: none
    uint64_t index = 0;  // the instruction's position in the program
  };
  struct Element {
    int writer = -1;  // the module of the last write
    Access write;
    std::array<Access, kNumModules> reads;  // since the last write, per module
  };
  bool Ordered(int module, const Access& access) const {
    return access.count <= clocks_[module_][module];
  }
  [[noreturn]] void Fail(const char* verb, Buffer buffer, uint64_t element, const char* other_verb,
                         int other_module, const Access& other) const;

  std::span<const Insn> program_;
  std::array<std::vector<Element>, kNumBuffers> elements_;
  std::array<Clock, kNumModules> clocks_{};
  int module_ = kComputeModule;
  uint64_t index_ = 0;
};

// What executing one instruction costs in the timing model.
struct InsnCost {
  uint64_t cycles = 0;
  uint64_t gemm_cycles = 0;  // cycles the GEMM core multiplies (GEMM without reset)
};

// Executes instructions one at a time against the simulator's buffers and DRAM, adding to
// `counters`. Every check that names an instruction goes through Fail().
class ProgramRunner {
 public:
  // `hazards` (null: no checking) sees every buffer element access.
  ProgramRunner(Simulator* sim, SimCounters* counters, HazardChecker* hazards);

  InsnCost Execute(uint64_t index, const Insn& insn);

 private:
  // Where a memory type lives on chip and how its DRAM elements are laid out.
  struct BufferView {
    const char* name;              // "input", "weight", ...
    std::vector<int32_t>* values;  // null for the micro-op buffer
    int lanes;                     // values per element
    int bits;                      // bits per value in DRAM
    uint64_t elem_bytes;           // DRAM bytes per element
    uint64_t depth;                // elements
    uint64_t* load_counter;        // null where the type cannot be loaded
  };
  BufferView View(uint64_t index, const MemInsn& insn) const;

  InsnCost ExecLoad(uint64_t index, const MemInsn& insn);
  InsnCost ExecStore(uint64_t index, const MemInsn& insn);
  InsnCost ExecGemm(uint64_t index, const GemmInsn& insn);
  InsnCost ExecAlu(uint64_t index, const AluInsn& insn);

  // Decodes micro-ops [uop_bgn, uop_end) after checking the range.
  std::vector<Uop> ReadUops(uint64_t index, const Insn& insn, uint32_t uop_bgn,
                            uint32_t uop_end) const;
  // Checks that uop_field + i_out * factor_out + i_in * factor_in stays below `depth` over
  // the whole loop nest, for every micro-op.
  void CheckLoopIndex(uint64_t index, const Insn& insn, const std::vector<Uop>& uops,
                      uint32_t uop_bgn, uint32_t Uop::*field, const char* field_name,
                      uint64_t iter_out, uint64_t iter_in, uint64_t factor_out, uint64_t factor_in,
                      const char* factor_name, uint64_t depth, const char* buffer_name) const;
  // Host pointers to the y_size DRAM rows of x_size elements a LOAD/STORE transfers, each
  // checked to lie in one region.
  std::vector<uint8_t*> DramRows(uint64_t index, const MemInsn& insn, uint64_t elem_bytes);

  // The hazard checker's buffer for a memory type (the output is the accumulator buffer);
  // none (-1) for the micro-op buffer.
  static int HazardBufferOf(MemId memory_type);

  Simulator* sim_;
  const VTAConfig& config_;
  Simulator::Buffers& buffers_;
  SimCounters* counters_;
  HazardChecker* hazards_;
};

// "VTA instruction #3 (LOAD INP)"; used as the prefix of every error about an instruction.
std::string InsnLabel(uint64_t index, const Insn& insn);

// Two's complement wrap of the low `bits` bits of `value` (1 <= bits <= 32).
inline int32_t WrapToWidth(uint64_t value, int bits) {
  uint32_t low = static_cast<uint32_t>(value);
  if (bits < 32) {
    uint32_t sign = uint32_t{1} << (bits - 1);
    low &= (sign << 1) - 1;
    low = (low ^ sign) - sign;  // sign-extend without shifting negative values
  }
  return static_cast<int32_t>(low);
}

}  // namespace loom::vta
