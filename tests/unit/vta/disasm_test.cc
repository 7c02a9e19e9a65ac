#include "loom/vta/disasm.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "loom/support/error.h"

namespace loom::vta {
namespace {

MemInsn Load(MemId memory_type, uint32_t sram, uint32_t dram, uint32_t y, uint32_t x) {
  MemInsn load;
  load.memory_type = memory_type;
  load.sram_base = sram;
  load.dram_base = dram;
  load.y_size = y;
  load.x_size = x;
  load.x_stride = x;
  return load;
}

// A single-tile GEMM with shift, as the runtime would emit it.
std::vector<Insn> SmallProgram() {
  MemInsn load_uop = Load(MemId::kUop, 0, 0x40, 1, 2);
  MemInsn load_inp = Load(MemId::kInp, 0, 0x100, 1, 16);
  load_inp.deps.pop_prev = true;
  load_inp.deps.push_next = true;
  load_inp.y_pad_0 = 1;
  load_inp.x_pad_1 = 15;
  GemmInsn gemm;
  gemm.deps.pop_prev = true;
  gemm.reset = true;
  gemm.uop_end = 1;
  gemm.iter_out = 1;
  gemm.iter_in = 16;
  gemm.dst_factor_in = 1;
  AluInsn shr;
  shr.alu_opcode = AluOpcode::kShr;
  shr.use_imm = true;
  shr.imm = -8;
  shr.uop_bgn = 1;
  shr.uop_end = 2;
  shr.iter_out = 2;
  shr.iter_in = 3;
  shr.dst_factor_out = 4;
  shr.dst_factor_in = 5;
  shr.src_factor_out = 6;
  shr.src_factor_in = 7;
  shr.deps.push_next = true;
  AluInsn max;
  max.alu_opcode = AluOpcode::kMax;
  max.deps = {true, true, true, true};
  MemInsn store = Load(MemId::kOut, 0x7FF, 0xDEADBEEF, 1, 16);
  store.opcode = Opcode::kStore;
  store.deps.pop_prev = true;
  FinishInsn finish;
  return {load_uop, load_inp, gemm, shr, max, store, finish};
}

TEST(VtaDisasm, FormatsEveryInstructionKind) {
  VTAConfig config = VTAConfig::Default();
  std::vector<InsnWord> words;
  for (const Insn& insn : SmallProgram()) words.push_back(Encode(config, insn));
  EXPECT_EQ(Disassemble(config, words),
            "  0: LOAD UOP sram=0x0000 dram=0x00000040 y=1 x=2 stride=2 pad=(0,0,0,0)\n"
            "  1: LOAD INP sram=0x0000 dram=0x00000100 y=1 x=16 stride=16 pad=(1,0,0,15)"
            "  [pop prev, push next]\n"
            "  2: GEMM reset uop=[0,1) iter_out=1 iter_in=16 dst=(0,1) src=(0,0) wgt=(0,0)"
            "  [pop prev]\n"
            "  3: ALU SHR imm=-8 uop=[1,2) iter_out=2 iter_in=3 dst=(4,5) src=(6,7)"
            "  [push next]\n"
            "  4: ALU MAX uop=[0,0) iter_out=0 iter_in=0 dst=(0,0) src=(0,0)"
            "  [pop prev, pop next, push prev, push next]\n"
            "  5: STORE OUT sram=0x07ff dram=0xdeadbeef y=1 x=16 stride=16 pad=(0,0,0,0)"
            "  [pop prev]\n"
            "  6: FINISH\n");
}

TEST(VtaDisasm, BytesMatchWords) {
  VTAConfig config = VTAConfig::Default();
  std::vector<InsnWord> words;
  std::vector<uint8_t> bytes;
  for (const Insn& insn : SmallProgram()) {
    words.push_back(Encode(config, insn));
    auto image = InsnToBytes(words.back());
    bytes.insert(bytes.end(), image.begin(), image.end());
  }
  EXPECT_EQ(DisassembleBytes(config, bytes), Disassemble(config, words));
  EXPECT_EQ(DisassembleBytes(config, {}), "");
}

TEST(VtaDisasm, IndexColumnWidensForLongStreams) {
  VTAConfig config = VTAConfig::Default();
  std::vector<InsnWord> words(1001, Encode(config, FinishInsn{}));
  std::string text = Disassemble(config, words);
  EXPECT_EQ(text.substr(0, 13), "   0: FINISH\n");
  EXPECT_NE(text.find("\n1000: FINISH\n"), std::string::npos);
}

TEST(VtaDisasm, ErrorsNameTheInstruction) {
  VTAConfig config = VTAConfig::Default();
  std::vector<InsnWord> words = {Encode(config, FinishInsn{}), Encode(config, FinishInsn{}),
                                 InsnWord{6, 0}};
  try {
    Disassemble(config, words);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()).rfind("instruction 2: unknown VTA opcode 6", 0), 0u)
        << error.what();
  }
  std::vector<uint8_t> ragged(20, 0);
  try {
    DisassembleBytes(config, ragged);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("size 20 is not a multiple of 16"),
              std::string::npos)
        << error.what();
  }
}

TEST(VtaDisasm, MicroOps) {
  VTAConfig config = VTAConfig::Default();
  std::vector<uint32_t> uops = {EncodeUop(config, {0, 0, 0}), EncodeUop(config, {1, 16, 3})};
  EXPECT_EQ(DisassembleUops(config, uops),
            "  0: dst=0 src=0 wgt=0\n"
            "  1: dst=1 src=16 wgt=3\n");
  EXPECT_EQ(FormatUop({7, 8, 9}), "dst=7 src=8 wgt=9");
}

}  // namespace
}  // namespace loom::vta
