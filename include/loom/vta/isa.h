// The VTA instruction set: decoded instructions and micro-ops, and their bit-exact encoding.
//
// Encodings follow the published VTA hardware specification (TVM's vta hw_spec.h): a
// 128-bit instruction is a sequence of fields packed from bit 0 upwards in the order listed
// below; a field that would straddle the boundary between the two 64-bit words starts at
// bit 64 instead (the bits it skipped are zero), exactly as the hardware's C structs of
// uint64_t bit-fields lay them out. Field widths come from the VTAConfig (see config.h).
//
//   every format : opcode(3) pop_prev(1) pop_next(1) push_prev(1) push_next(1)
//   LOAD / STORE : memory_type(3) sram_base(16) dram_base(32) y_size(16) x_size(16)
//                  x_stride(16) y_pad_0(4) y_pad_1(4) x_pad_0(4) x_pad_1(4)
//   GEMM         : reset(1) uop_bgn(U) uop_end(U+1) iter_out(14) iter_in(14)
//                  dst_factor_out(A) dst_factor_in(A) src_factor_out(I) src_factor_in(I)
//                  wgt_factor_out(W) wgt_factor_in(W)
//   ALU          : reset(1) uop_bgn(U) uop_end(U+1) iter_out(14) iter_in(14)
//                  dst_factor_out(A) dst_factor_in(A) src_factor_out(A) src_factor_in(A)
//                  alu_opcode(3) use_imm(1) imm(16, two's complement)
//   FINISH       : the common fields only
//   micro-op     : dst_idx(A) src_idx(A) wgt_idx(W), packed into 32 bits from bit 0
// with U = log2 micro-op buffer depth, A/I/W = log2 accumulator/input/weight buffer depth.
// For the default configuration (U=13, A=11, I=11, W=10) the 64-bit word boundary falls
// before y_size (memory), before dst_factor_out (GEMM and ALU).
//
// In memory an instruction is 16 bytes, little-endian: word 0 (bits 0..63) first.
//
// Dependency flags. The load, compute and store modules form a pipeline; "prev" and "next"
// are a module's neighbours in it (load has no prev, store no next; compute's prev is load,
// its next is store). pop_* waits for and consumes a token sent by that neighbour;
// push_* sends one to it once this instruction has finished.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <variant>

#include "loom/vta/config.h"

namespace loom::vta {

enum class Opcode : uint8_t { kLoad = 0, kStore = 1, kGemm = 2, kFinish = 3, kAlu = 4 };

// Which on-chip buffer a LOAD fills or a STORE drains. LOAD of kUop goes to the micro-op
// buffer; kAcc8 fills the accumulator buffer from 8-bit DRAM values (sign-extended), as a
// bias stored at the input's width is; STORE only ever reads kOut.
enum class MemId : uint8_t { kUop = 0, kWgt = 1, kInp = 2, kAcc = 3, kOut = 4, kAcc8 = 5 };

// Tensor ALU operations, element-wise on accumulator elements: dst = op(dst, src or imm).
// kShr shifts right arithmetically (a negative amount shifts left); kMul multiplies.
enum class AluOpcode : uint8_t { kMin = 0, kMax = 1, kAdd = 2, kShr = 3, kMul = 4 };

// Mnemonics: "LOAD", "STORE", "GEMM", "FINISH", "ALU"; "UOP", "WGT", "INP", "ACC", "OUT",
// "ACC_8BIT";
// "MIN", "MAX", "ADD", "SHR", "MUL".
const char* OpcodeName(Opcode opcode);
const char* MemIdName(MemId memory_type);
const char* AluOpcodeName(AluOpcode alu_opcode);

// The four dependency-token flags every instruction carries.
struct DepFlags {
  bool pop_prev = false;
  bool pop_next = false;
  bool push_prev = false;
  bool push_next = false;
  bool operator==(const DepFlags&) const = default;
};

// LOAD / STORE: a 2-D strided transfer between DRAM and an on-chip buffer. All addresses
// and sizes count elements of memory_type (see config.h): the transfer reads y_size rows of
// x_size elements, row r starting at DRAM element dram_base + r * x_stride, and writes them
// contiguously from SRAM element sram_base. LOADs of INP/WGT/ACC may pad on the fly: y_pad_0
// / y_pad_1 zero rows before / after, x_pad_0 / x_pad_1 zero elements before / after each
// row, so the SRAM footprint is (y_pad_0 + y_size + y_pad_1) x (x_pad_0 + x_size + x_pad_1).
struct MemInsn {
  Opcode opcode = Opcode::kLoad;  // kLoad or kStore
  DepFlags deps;
  MemId memory_type = MemId::kInp;
  uint32_t sram_base = 0;
  uint32_t dram_base = 0;
  uint32_t y_size = 0;
  uint32_t x_size = 0;
  uint32_t x_stride = 0;
  uint32_t y_pad_0 = 0;
  uint32_t y_pad_1 = 0;
  uint32_t x_pad_0 = 0;
  uint32_t x_pad_1 = 0;
  bool operator==(const MemInsn&) const = default;
};

// GEMM: runs micro-ops uop_bgn .. uop_end-1 inside a two-level loop
//   for i < iter_out, j < iter_in, each micro-op u:
//     acc[u.dst_idx + i*dst_factor_out + j*dst_factor_in] +=
//         inp[u.src_idx + i*src_factor_out + j*src_factor_in] .
//         wgt[u.wgt_idx + i*wgt_factor_out + j*wgt_factor_in]^T
// With reset set, the addressed accumulator elements are set to zero instead.
struct GemmInsn {
  DepFlags deps;
  bool reset = false;
  uint32_t uop_bgn = 0;
  uint32_t uop_end = 0;
  uint32_t iter_out = 0;
  uint32_t iter_in = 0;
  uint32_t dst_factor_out = 0;
  uint32_t dst_factor_in = 0;
  uint32_t src_factor_out = 0;
  uint32_t src_factor_in = 0;
  uint32_t wgt_factor_out = 0;
  uint32_t wgt_factor_in = 0;
  bool operator==(const GemmInsn&) const = default;
};

// ALU: the same loop as GEMM over micro-ops (wgt_idx unused), with source and destination
// both in the accumulator buffer:
//   acc[dst] = alu_opcode(acc[dst], use_imm ? imm : acc[src])   element-wise.
// reset belongs to the loop part of the format shared with GEMM; ALU programs leave it clear.
struct AluInsn {
  DepFlags deps;
  bool reset = false;
  uint32_t uop_bgn = 0;
  uint32_t uop_end = 0;
  uint32_t iter_out = 0;
  uint32_t iter_in = 0;
  uint32_t dst_factor_out = 0;
  uint32_t dst_factor_in = 0;
  uint32_t src_factor_out = 0;
  uint32_t src_factor_in = 0;
  AluOpcode alu_opcode = AluOpcode::kAdd;
  bool use_imm = false;
  int32_t imm = 0;  // -32768 .. 32767
  bool operator==(const AluInsn&) const = default;
};

// FINISH: tells the host the program is done (once its dependencies allow).
struct FinishInsn {
  DepFlags deps;
  bool operator==(const FinishInsn&) const = default;
};

using Insn = std::variant<MemInsn, GemmInsn, AluInsn, FinishInsn>;

Opcode GetOpcode(const Insn& insn);
const DepFlags& GetDeps(const Insn& insn);
DepFlags& GetDeps(Insn& insn);

// One 128-bit instruction: word[0] holds bits 0..63, word[1] bits 64..127.
using InsnWord = std::array<uint64_t, 2>;

// Bit-exact encoding for `config` (which must be valid). Throws loom::Error naming the
// field and the value when a value does not fit its field (or a MemInsn's opcode is not
// LOAD/STORE).
InsnWord Encode(const VTAConfig& config, const Insn& insn);
// Inverse of Encode. Bits no field occupies are ignored. Throws loom::Error naming the value
// for an unknown opcode, memory type or ALU opcode.
Insn Decode(const VTAConfig& config, const InsnWord& word);

// The 16-byte little-endian memory image of an instruction and back.
std::array<uint8_t, kInsnBytes> InsnToBytes(const InsnWord& word);
InsnWord InsnFromBytes(const uint8_t* bytes);

// A micro-op: indices into the accumulator (dst), input or accumulator (src: input for GEMM,
// accumulator for ALU) and weight (wgt; unused by ALU) buffers, in elements.
struct Uop {
  uint32_t dst_idx = 0;
  uint32_t src_idx = 0;
  uint32_t wgt_idx = 0;
  bool operator==(const Uop&) const = default;
};

// Bit-exact 32-bit micro-op encoding; throws loom::Error naming a field that overflows.
uint32_t EncodeUop(const VTAConfig& config, const Uop& uop);
Uop DecodeUop(const VTAConfig& config, uint32_t word);

}  // namespace loom::vta
