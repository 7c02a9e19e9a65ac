// Readable listings of VTA instruction streams and micro-op kernels.
//
// One line per instruction: index, mnemonic, fields, then the dependency flags that are set:
//     3: LOAD INP sram=0x0000 dram=0x00000100 y=1 x=16 stride=16 pad=(0,0,0,0)  [pop prev, push next]
//     4: GEMM reset uop=[0,1) iter_out=1 iter_in=16 dst=(0,1) src=(0,0) wgt=(0,0)
//     5: ALU SHR imm=8 uop=[0,1) iter_out=1 iter_in=16 dst=(0,1) src=(0,1)
//     6: STORE OUT sram=0x0000 dram=0x00000000 y=1 x=16 stride=16 pad=(0,0,0,0)  [pop prev]
//     7: FINISH
// Index factors print as (outer, inner); pad as (y_pad_0, y_pad_1, x_pad_0, x_pad_1); `reset`
// appears only when set; an ALU shows imm=<value> when it uses the immediate.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "loom/vta/isa.h"

namespace loom::vta {

// The line for one instruction, without index or newline.
std::string FormatInsn(const Insn& insn);
// "dst=0 src=16 wgt=3".
std::string FormatUop(const Uop& uop);

// One line per instruction, each ending in '\n'. Throws loom::Error prefixed with
// "instruction <index>: " when a word does not decode.
std::string Disassemble(const VTAConfig& config, std::span<const InsnWord> words);
// The same for a memory image of 16-byte little-endian instructions; throws loom::Error
// when its size is not a multiple of 16.
std::string DisassembleBytes(const VTAConfig& config, std::span<const uint8_t> bytes);
// One line per micro-op: "  0: dst=0 src=16 wgt=3".
std::string DisassembleUops(const VTAConfig& config, std::span<const uint32_t> words);

}  // namespace loom::vta
