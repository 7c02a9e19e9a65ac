#include "loom/vta/isa.h"

#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "loom/support/error.h"

namespace loom::vta {
namespace {

// Field positions used by the goldens below, for the default configuration (micro-op buffer
// depth 2^13, input/accumulator depth 2^11, weight depth 2^10). A field that would straddle
// bit 64 starts at bit 64.
//   common : opcode 0-2, pop_prev 3, pop_next 4, push_prev 5, push_next 6
//   memory : memory_type 7-9, sram_base 10-25, dram_base 26-57, (58-63 unused),
//            y_size 64-79, x_size 80-95, x_stride 96-111,
//            y_pad_0 112-115, y_pad_1 116-119, x_pad_0 120-123, x_pad_1 124-127
//   GEMM   : reset 7, uop_bgn 8-20, uop_end 21-34, iter_out 35-48, iter_in 49-62,
//            (63 unused), dst_factor_out 64-74, dst_factor_in 75-85,
//            src_factor_out 86-96, src_factor_in 97-107,
//            wgt_factor_out 108-117, wgt_factor_in 118-127
//   ALU    : as GEMM up to src_factor_in, then alu_opcode 108-110, use_imm 111, imm 112-127
//   uop    : dst_idx 0-10, src_idx 11-21, wgt_idx 22-31

TEST(VtaIsa, LoadGolden) {
  MemInsn load;
  load.opcode = Opcode::kLoad;
  load.deps.pop_next = true;
  load.deps.push_next = true;
  load.memory_type = MemId::kInp;
  load.sram_base = 5;
  load.dram_base = 0x100;
  load.y_size = 2;
  load.x_size = 16;
  load.x_stride = 32;
  load.y_pad_0 = 1;
  load.y_pad_1 = 2;
  load.x_pad_0 = 3;
  load.x_pad_1 = 4;
  // word 0: pop_next 1<<4 = 0x10, push_next 1<<6 = 0x40, INP 2<<7 = 0x100,
  //         sram 5<<10 = 0x1400, dram 0x100<<26 = 1<<34 = 0x4'0000'0000.
  // word 1: y 2, x 16<<16 = 0x10'0000, stride 32<<32, pads 1,2,3,4 in nibbles 12..15.
  InsnWord expected = {0x0000000400001550ull, 0x4321002000100002ull};
  VTAConfig config = VTAConfig::Default();
  EXPECT_EQ(Encode(config, load), expected);
  EXPECT_EQ(std::get<MemInsn>(Decode(config, expected)), load);
}

TEST(VtaIsa, StoreGolden) {
  MemInsn store;
  store.opcode = Opcode::kStore;
  store.deps.pop_prev = true;
  store.memory_type = MemId::kOut;
  store.dram_base = 0xFFFFFFFF;
  store.y_size = 1;
  // word 0: STORE 1, pop_prev 1<<3 = 0x8, OUT 4<<7 = 0x200, dram all ones in bits 26-57.
  // word 1: y_size 1.
  InsnWord expected = {0x03FFFFFFFC000209ull, 0x1ull};
  EXPECT_EQ(Encode(VTAConfig::Default(), store), expected);
}

TEST(VtaIsa, GemmGolden) {
  GemmInsn gemm;
  gemm.deps.pop_prev = true;
  gemm.deps.push_prev = true;
  gemm.uop_bgn = 1;
  gemm.uop_end = 3;
  gemm.iter_out = 4;
  gemm.iter_in = 5;
  gemm.dst_factor_out = 6;
  gemm.dst_factor_in = 7;
  gemm.src_factor_out = 8;
  gemm.src_factor_in = 9;
  gemm.wgt_factor_out = 10;
  gemm.wgt_factor_in = 11;
  // word 0: GEMM 2 | 1<<3 | 1<<5 = 0x2A, uop_bgn 1<<8 = 0x100, uop_end 3<<21 = 0x60'0000,
  //         iter_out 4<<35 = 0x20'0000'0000, iter_in 5<<49 = 0xA'0000'0000'0000.
  // word 1: 6 | 7<<11 (0x3800) | 8<<22 (0x200'0000) | 9<<33 (0x12'0000'0000)
  //         | 10<<44 (0xA000'0000'0000) | 11<<54 (0x2C0'0000'0000'0000).
  InsnWord expected = {0x000A00200060012Aull, 0x02C0A01202003806ull};
  VTAConfig config = VTAConfig::Default();
  EXPECT_EQ(Encode(config, gemm), expected);
  EXPECT_EQ(std::get<GemmInsn>(Decode(config, expected)), gemm);

  GemmInsn reset;
  reset.reset = true;
  EXPECT_EQ(Encode(config, reset), (InsnWord{0x82, 0}));  // GEMM 2 | reset 1<<7
}

TEST(VtaIsa, AluGoldenWithNegativeImmediate) {
  AluInsn alu;
  alu.deps.push_next = true;
  alu.uop_bgn = 0;
  alu.uop_end = 1;
  alu.iter_out = 1;
  alu.iter_in = 16;
  alu.dst_factor_in = 1;
  alu.src_factor_in = 1;
  alu.alu_opcode = AluOpcode::kShr;
  alu.use_imm = true;
  alu.imm = -3;
  // word 0: ALU 4 | push_next 0x40, uop_end 1<<21 = 0x20'0000, iter_out 1<<35,
  //         iter_in 16<<49 = 1<<53.
  // word 1: dst_in 1<<11 = 0x800, src_in 1<<33, SHR 3<<44, use_imm 1<<47,
  //         imm -3 = 0xFFFD << 48.
  InsnWord expected = {0x0020000800200044ull, 0xFFFDB00200000800ull};
  VTAConfig config = VTAConfig::Default();
  EXPECT_EQ(Encode(config, alu), expected);
  EXPECT_EQ(std::get<AluInsn>(Decode(config, expected)), alu);
}

TEST(VtaIsa, FinishGolden) {
  FinishInsn finish;
  finish.deps.pop_next = true;
  InsnWord expected = {0x13, 0};  // FINISH 3 | pop_next 1<<4
  EXPECT_EQ(Encode(VTAConfig::Default(), finish), expected);
  EXPECT_EQ(Decode(VTAConfig::Default(), expected), Insn(finish));
}

TEST(VtaIsa, UopGolden) {
  VTAConfig config = VTAConfig::Default();
  // 5 | 0x7FF<<11 (0x3F'F800) | 0x3FF<<22 (0xFFC0'0000)
  EXPECT_EQ(EncodeUop(config, {5, 0x7FF, 0x3FF}), 0xFFFFF805u);
  EXPECT_EQ(DecodeUop(config, 0xFFFFF805u), (Uop{5, 0x7FF, 0x3FF}));
  // wgt_idx 1<<22, src_idx 2<<11, dst_idx 3.
  EXPECT_EQ(EncodeUop(config, {3, 2, 1}), 0x00401003u);
}

TEST(VtaIsa, LayoutFollowsTheConfig) {
  // A 2^12-deep micro-op buffer narrows uop_bgn to 12 bits, so uop_end starts at bit 20.
  VTAConfig config = VTAConfig::Default();
  config.log_uop_buff_size = 14;
  config.Validate();
  GemmInsn gemm;
  gemm.uop_bgn = 1;
  gemm.uop_end = 2;
  EXPECT_EQ(Encode(config, gemm), (InsnWord{2 | 1 << 8 | 2 << 20, 0}));
  // 2^9-deep weight buffer: wgt_idx is 9 bits at 22-30.
  config = VTAConfig::Default();
  config.log_wgt_buff_size = 17;
  config.Validate();
  EXPECT_EQ(EncodeUop(config, {0, 0, 0x1FF}), 0x1FFu << 22);
  EXPECT_THROW(EncodeUop(config, {0, 0, 0x200}), Error);
}

TEST(VtaIsa, BytesAreLittleEndianWordZeroFirst) {
  InsnWord word = {0x0706050403020100ull, 0x0F0E0D0C0B0A0908ull};
  std::array<uint8_t, kInsnBytes> bytes = InsnToBytes(word);
  for (int i = 0; i < kInsnBytes; ++i) EXPECT_EQ(bytes[i], i);
  EXPECT_EQ(InsnFromBytes(bytes.data()), word);
}

// ---- Overflow and decode errors.

std::string ErrorOf(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& error) {
    return error.what();
  }
  return "<no error>";
}

TEST(VtaIsa, FieldOverflowNamesFieldAndValue) {
  VTAConfig config = VTAConfig::Default();
  GemmInsn gemm;
  gemm.iter_out = 1 << 14;
  std::string message = ErrorOf([&] { Encode(config, gemm); });
  EXPECT_NE(message.find("'iter_out'"), std::string::npos) << message;
  EXPECT_NE(message.find("16384"), std::string::npos) << message;
  EXPECT_NE(message.find("14 bits"), std::string::npos) << message;

  gemm.iter_out = (1 << 14) - 1;
  EXPECT_NO_THROW(Encode(config, gemm));
  gemm.uop_end = (1 << 14) - 1;  // uop_end is one bit wider than uop_bgn
  EXPECT_NO_THROW(Encode(config, gemm));
  gemm.uop_bgn = 1 << 13;
  EXPECT_NE(ErrorOf([&] { Encode(config, gemm); }).find("'uop_bgn'"), std::string::npos);

  MemInsn mem;
  mem.x_pad_1 = 16;
  EXPECT_NE(ErrorOf([&] { Encode(config, mem); }).find("'x_pad_1' = 16"), std::string::npos);
  mem = MemInsn{};
  mem.sram_base = 1 << 16;
  EXPECT_NE(ErrorOf([&] { Encode(config, mem); }).find("'sram_base'"), std::string::npos);
  mem = MemInsn{};
  mem.opcode = Opcode::kGemm;
  EXPECT_NE(ErrorOf([&] { Encode(config, mem); }).find("LOAD or STORE"), std::string::npos);

  AluInsn alu;
  alu.imm = 32767;
  EXPECT_NO_THROW(Encode(config, alu));
  alu.imm = -32768;
  EXPECT_NO_THROW(Encode(config, alu));
  alu.imm = 32768;
  message = ErrorOf([&] { Encode(config, alu); });
  EXPECT_NE(message.find("'imm' = 32768"), std::string::npos) << message;
  alu.imm = -32769;
  EXPECT_NE(ErrorOf([&] { Encode(config, alu); }).find("-32769"), std::string::npos);
  alu.imm = 0;
  alu.src_factor_in = 1 << 11;
  EXPECT_NE(ErrorOf([&] { Encode(config, alu); }).find("'src_factor_in'"),
            std::string::npos);

  message = ErrorOf([&] { EncodeUop(config, {1 << 11, 0, 0}); });
  EXPECT_NE(message.find("'dst_idx' = 2048"), std::string::npos) << message;
}

TEST(VtaIsa, DecodeRejectsUnknownCodes) {
  VTAConfig config = VTAConfig::Default();
  for (uint64_t opcode : {5, 6, 7}) {
    std::string message = ErrorOf([&] { Decode(config, {opcode, 0}); });
    EXPECT_NE(message.find("unknown VTA opcode " + std::to_string(opcode)), std::string::npos)
        << message;
  }
  // LOAD with memory types 6 and 7 (bits 7-9); 5 is ACC_8BIT.
  for (uint64_t memory_type : {6, 7}) {
    std::string message = ErrorOf([&] { Decode(config, {memory_type << 7, 0}); });
    EXPECT_NE(message.find("memory type " + std::to_string(memory_type)), std::string::npos)
        << message;
  }
  EXPECT_EQ(std::get<MemInsn>(Decode(config, {5 << 7, 0})).memory_type, MemId::kAcc8);
  // ALU with alu_opcode 7 (bits 108-110 = word 1 bits 44-46).
  EXPECT_NE(ErrorOf([&] { Decode(config, {4, uint64_t{7} << 44}); }).find("ALU opcode 7"),
            std::string::npos);
}

TEST(VtaIsa, DecodeIgnoresUnusedBits) {
  VTAConfig config = VTAConfig::Default();
  // Bits 58-63 of a memory instruction and bit 63 of GEMM belong to no field.
  MemInsn load_uop;
  load_uop.memory_type = MemId::kUop;
  EXPECT_EQ(Decode(config, {0xFC00000000000000ull, 0}), Insn(load_uop));
  EXPECT_EQ(Decode(config, {0x8000000000000002ull, 0}), Insn(GemmInsn{}));
}

TEST(VtaIsa, AccessorsAndNames) {
  Insn insn = AluInsn{};
  EXPECT_EQ(GetOpcode(insn), Opcode::kAlu);
  GetDeps(insn).push_prev = true;
  EXPECT_TRUE(std::get<AluInsn>(insn).deps.push_prev);
  MemInsn store;
  store.opcode = Opcode::kStore;
  EXPECT_EQ(GetOpcode(Insn(store)), Opcode::kStore);
  EXPECT_EQ(GetOpcode(Insn(GemmInsn{})), Opcode::kGemm);
  EXPECT_EQ(GetOpcode(Insn(FinishInsn{})), Opcode::kFinish);
  EXPECT_STREQ(OpcodeName(Opcode::kFinish), "FINISH");
  EXPECT_STREQ(MemIdName(MemId::kWgt), "WGT");
  EXPECT_STREQ(AluOpcodeName(AluOpcode::kMul), "MUL");
  // Spec values.
  EXPECT_EQ(static_cast<int>(Opcode::kAlu), 4);
  EXPECT_EQ(static_cast<int>(MemId::kOut), 4);
  EXPECT_EQ(static_cast<int>(AluOpcode::kShr), 3);
}

// ---- Round trips over random field values, for several configurations.

class RandomFields {
 public:
  explicit RandomFields(uint32_t seed) : rng_(seed) {}
  uint32_t Bits(int width) {
    return static_cast<uint32_t>(rng_() & ((uint64_t{1} << width) - 1));
  }
  int32_t Signed(int width) { return static_cast<int32_t>(Bits(width)) - (1 << (width - 1)); }
  bool Flag() { return Bits(1) != 0; }
  DepFlags Deps() { return {Flag(), Flag(), Flag(), Flag()}; }

 private:
  std::mt19937_64 rng_;
};

std::vector<VTAConfig> RoundTripConfigs() {
  std::vector<VTAConfig> configs = {VTAConfig::Default()};
  VTAConfig small = VTAConfig::Default();
  small.log_uop_buff_size = 10;
  small.log_inp_buff_size = 10;
  small.log_wgt_buff_size = 12;
  small.log_acc_buff_size = 11;
  configs.push_back(small);
  VTAConfig batched = VTAConfig::Default();
  batched.log_batch = 1;
  batched.log_block = 3;
  batched.log_wgt_buff_size = 16;
  configs.push_back(batched);
  for (const VTAConfig& config : configs) config.Validate();
  return configs;
}

TEST(VtaIsa, RandomRoundTrips) {
  RandomFields random(20240611);
  for (const VTAConfig& config : RoundTripConfigs()) {
    for (int trial = 0; trial < 2000; ++trial) {
      MemInsn mem;
      mem.opcode = random.Flag() ? Opcode::kLoad : Opcode::kStore;
      mem.deps = random.Deps();
      mem.memory_type = static_cast<MemId>(random.Bits(8) % 5);
      mem.sram_base = random.Bits(kSramAddrBits);
      mem.dram_base = random.Bits(kDramAddrBits);
      mem.y_size = random.Bits(kMemSizeBits);
      mem.x_size = random.Bits(kMemSizeBits);
      mem.x_stride = random.Bits(kMemStrideBits);
      mem.y_pad_0 = random.Bits(kMemPadBits);
      mem.y_pad_1 = random.Bits(kMemPadBits);
      mem.x_pad_0 = random.Bits(kMemPadBits);
      mem.x_pad_1 = random.Bits(kMemPadBits);

      GemmInsn gemm;
      gemm.deps = random.Deps();
      gemm.reset = random.Flag();
      gemm.uop_bgn = random.Bits(config.uop_bgn_bits());
      gemm.uop_end = random.Bits(config.uop_end_bits());
      gemm.iter_out = random.Bits(kLoopIterBits);
      gemm.iter_in = random.Bits(kLoopIterBits);
      gemm.dst_factor_out = random.Bits(config.acc_idx_bits());
      gemm.dst_factor_in = random.Bits(config.acc_idx_bits());
      gemm.src_factor_out = random.Bits(config.inp_idx_bits());
      gemm.src_factor_in = random.Bits(config.inp_idx_bits());
      gemm.wgt_factor_out = random.Bits(config.wgt_idx_bits());
      gemm.wgt_factor_in = random.Bits(config.wgt_idx_bits());

      AluInsn alu;
      alu.deps = random.Deps();
      alu.reset = random.Flag();
      alu.uop_bgn = random.Bits(config.uop_bgn_bits());
      alu.uop_end = random.Bits(config.uop_end_bits());
      alu.iter_out = random.Bits(kLoopIterBits);
      alu.iter_in = random.Bits(kLoopIterBits);
      alu.dst_factor_out = random.Bits(config.acc_idx_bits());
      alu.dst_factor_in = random.Bits(config.acc_idx_bits());
      alu.src_factor_out = random.Bits(config.acc_idx_bits());
      alu.src_factor_in = random.Bits(config.acc_idx_bits());
      alu.alu_opcode = static_cast<AluOpcode>(random.Bits(8) % 5);
      alu.use_imm = random.Flag();
      alu.imm = random.Signed(kAluImmBits);

      FinishInsn finish{random.Deps()};

      for (const Insn& insn : {Insn(mem), Insn(gemm), Insn(alu), Insn(finish)}) {
        InsnWord word = Encode(config, insn);
        ASSERT_EQ(Decode(config, word), insn) << "trial " << trial;
        ASSERT_EQ(InsnFromBytes(InsnToBytes(word).data()), word);
      }

      Uop uop{random.Bits(config.uop_dst_bits()), random.Bits(config.uop_src_bits()),
              random.Bits(config.uop_wgt_bits())};
      ASSERT_EQ(DecodeUop(config, EncodeUop(config, uop)), uop);
    }
  }
}

TEST(VtaIsa, RandomWordsDecodeThenEncodeBack) {
  // Every decodable word re-encodes to itself once the bits no field owns are cleared.
  VTAConfig config = VTAConfig::Default();
  RandomFields random(7);
  int decoded = 0;
  for (int trial = 0; trial < 5000; ++trial) {
    InsnWord word = {uint64_t{random.Bits(32)} << 32 | random.Bits(32),
                     uint64_t{random.Bits(32)} << 32 | random.Bits(32)};
    Insn insn;
    try {
      insn = Decode(config, word);
    } catch (const Error&) {
      continue;
    }
    ++decoded;
    InsnWord again = Encode(config, insn);
    ASSERT_EQ(Decode(config, again), insn);
    switch (GetOpcode(insn)) {
      case Opcode::kLoad:
      case Opcode::kStore:
        word[0] &= (uint64_t{1} << 58) - 1;
        break;
      case Opcode::kGemm:
      case Opcode::kAlu:
        word[0] &= (uint64_t{1} << 63) - 1;
        break;
      case Opcode::kFinish:
        word = {word[0] & 0x7F, 0};
        break;
    }
    ASSERT_EQ(again, word) << "trial " << trial;
  }
  EXPECT_GT(decoded, 1000);
}

}  // namespace
}  // namespace loom::vta
