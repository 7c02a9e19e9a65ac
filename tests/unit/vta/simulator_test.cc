// Functional behaviour of the VTA simulator: GEMM, ALU, loads with padding, strided stores,
// narrowing, counters and the DRAM model, each against a plain C++ reference.
#include "loom/vta/simulator.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>

#include "simulator_test_util.h"
#include "vta_configs.h"

namespace loom::vta {
namespace {

using testing::Alu;
using testing::ComputeNoop;
using testing::Deps;
using testing::Finish;
using testing::Gemm;
using testing::Load;
using testing::LoopNest;
using testing::Pads;
using testing::RefAlu;
using testing::Store;
using testing::Wrap32;

class VtaSim : public testing::SimFixture {};

constexpr int kBlock = 16;  // default BLOCK_IN == BLOCK_OUT; BATCH == 1

TEST_F(VtaSim, SingleBlockGemmMatchesReference) {
  auto inp = Random<int8_t>(kBlock, -128, 127);
  auto wgt = Random<int8_t>(kBlock * kBlock, -128, 127);
  uint64_t inp_addr = Upload(inp), wgt_addr = Upload(wgt);
  uint64_t out_addr = dram.Alloc(kBlock);
  std::vector<Insn> program = {
      UopLoad({{0, 0, 0}}),
      Load(MemId::kInp, 0, InpBase(inp_addr), 1, 1, 1),
      Load(MemId::kWgt, 0, WgtBase(wgt_addr), 1, 1, 1, Deps(false, false, false, true)),
      Gemm(0, 1, {}, /*reset=*/true),
      Gemm(0, 1, {}, false, Deps(true, false, false, true)),
      Store(0, OutBase(out_addr), 1, 1, 1, Deps(true, false, true, false)),
      Finish(Deps(false, true, false, false)),
  };
  sim.Run(program);
  auto out = Download<int8_t>(out_addr, kBlock);
  for (int o = 0; o < kBlock; ++o) {
    int32_t sum = 0;
    for (int k = 0; k < kBlock; ++k) sum += int32_t{inp[k]} * wgt[o * kBlock + k];
    EXPECT_EQ(sim.AccValue(0, o), sum) << "output " << o;
    EXPECT_EQ(out[o], static_cast<int8_t>(sum)) << "output " << o;  // low 8 bits
  }
}

// C[i][j] = sum_k A[i][k] . B[j][k]^T over a 2 x 3 grid of blocks with K = 4 blocks, using
// every affine factor: inp = i*4 + k, wgt = j*4 + k, acc = i*3 + j.
TEST_F(VtaSim, GemmLoopFactorsAccumulateAndReset) {
  const int kM = 2, kN = 3, kK = 4;
  auto inp = Random<int8_t>(kM * kK * kBlock, -128, 127);
  auto wgt = Random<int8_t>(kN * kK * kBlock * kBlock, -128, 127);
  uint64_t inp_addr = Upload(inp), wgt_addr = Upload(wgt);
  std::vector<Uop> uops;
  for (uint32_t k = 0; k < kK; ++k) uops.push_back({0, k, k});
  LoopNest loop{.iter_out = kM,
                .dst_out = kN,
                .src_out = kK,
                .wgt_out = 0,
                .iter_in = kN,
                .dst_in = 1,
                .src_in = 0,
                .wgt_in = kK};
  std::vector<Insn> program = {
      UopLoad(uops),
      Load(MemId::kInp, 0, InpBase(inp_addr), 1, kM * kK, 0),
      Load(MemId::kWgt, 0, WgtBase(wgt_addr), 1, kN * kK, 0, Deps(false, false, false, true)),
      Gemm(0, kK, loop, /*reset=*/true, Deps(true, false, false, false)),
      Gemm(0, kK, loop),
      Gemm(0, kK, loop),  // accumulates a second time
  };
  sim.Run(program);
  for (int i = 0; i < kM; ++i) {
    for (int j = 0; j < kN; ++j) {
      for (int o = 0; o < kBlock; ++o) {
        int32_t sum = 0;
        for (int k = 0; k < kK; ++k) {
          for (int l = 0; l < kBlock; ++l) {
            sum += int32_t{inp[(i * kK + k) * kBlock + l]} *
                   wgt[((j * kK + k) * kBlock + o) * kBlock + l];
          }
        }
        EXPECT_EQ(sim.AccValue(i * kN + j, o), 2 * sum) << i << "," << j << "," << o;
      }
    }
  }
  // Reset zeroes exactly the addressed elements (acc 0..5), nothing else.
  sim.Run(std::vector<Insn>{Gemm(0, 1, {.iter_out = 2, .dst_out = 3, .iter_in = 2, .dst_in = 1},
                                 /*reset=*/true)});
  for (int idx : {0, 1, 3, 4}) EXPECT_EQ(sim.AccValue(idx, 5), 0) << idx;
  EXPECT_NE(sim.AccValue(2, 5), 0);
  EXPECT_NE(sim.AccValue(5, 5), 0);
}

TEST_F(VtaSim, GemmAccumulatorWrapsAt32Bits) {
  std::vector<int32_t> acc(kBlock, std::numeric_limits<int32_t>::max());
  std::vector<int8_t> inp(kBlock, 127), wgt(kBlock * kBlock, 127);
  uint64_t acc_addr = Upload(acc), inp_addr = Upload(inp), wgt_addr = Upload(wgt);
  std::vector<Insn> program = {
      UopLoad({{0, 0, 0}}),
      Load(MemId::kAcc, 0, AccBase(acc_addr), 1, 1, 1),
      Load(MemId::kInp, 0, InpBase(inp_addr), 1, 1, 1),
      Load(MemId::kWgt, 0, WgtBase(wgt_addr), 1, 1, 1, Deps(false, false, false, true)),
      Gemm(0, 1, {}, false, Deps(true, false, false, false)),
  };
  sim.Run(program);
  int32_t expected = Wrap32(int64_t{std::numeric_limits<int32_t>::max()} + 16 * 127 * 127);
  for (int o = 0; o < kBlock; ++o) EXPECT_EQ(sim.AccValue(0, o), expected);
}

// Every ALU op on a register operand and on immediates, against RefAlu, with values chosen
// to hit the edges: overflow, negative operands, shift amounts out of the 5-bit range.
TEST_F(VtaSim, AluOpsWithRegisterAndImmediate) {
  std::vector<int32_t> dst = {0,
                              1,
                              -1,
                              7,
                              -7,
                              1 << 20,
                              -(1 << 20),
                              123456,
                              -123456,
                              std::numeric_limits<int32_t>::max(),
                              std::numeric_limits<int32_t>::min(),
                              255,
                              -256,
                              1000,
                              3,
                              -3};
  std::vector<int32_t> src = {5, -5, 3, -2, 31, 15, 16, -16, -17, 1, -1, 33, -20, 0, 2, -1};
  std::vector<int32_t> acc = dst;
  acc.insert(acc.end(), src.begin(), src.end());
  uint64_t acc_addr = Upload(acc);
  for (AluOpcode op :
       {AluOpcode::kMin, AluOpcode::kMax, AluOpcode::kAdd, AluOpcode::kShr, AluOpcode::kMul}) {
    for (bool use_imm : {false, true}) {
      for (int32_t imm : {3, -4, 32767, -32768}) {
        if (!use_imm && imm != 3) continue;
        std::vector<Insn> program = {
            UopLoad({{0, 1, 0}}),
            Load(MemId::kAcc, 0, AccBase(acc_addr), 1, 2, 2),
            Alu(op, 0, 1, {}, use_imm, imm),
        };
        sim.Run(program);
        for (int lane = 0; lane < kBlock; ++lane) {
          int32_t operand = use_imm ? imm : src[lane];
          EXPECT_EQ(sim.AccValue(0, lane), RefAlu(op, dst[lane], operand))
              << AluOpcodeName(op) << (use_imm ? " imm " : " reg ") << operand << " lane " << lane
              << " dst " << dst[lane];
          EXPECT_EQ(sim.AccValue(1, lane), src[lane]) << "the source stays unchanged";
        }
      }
    }
  }
}

// The shift-and-clip sequence of the matrix-multiply tutorial: SHR by an immediate, then
// clip to int8 with MIN/MAX, over a loop nest of 2 x 3 accumulator elements; the STORE then
// narrows exactly.
TEST_F(VtaSim, AluShiftAndClipOverLoopNest) {
  auto acc = Random<int32_t>(6 * kBlock, -(1 << 20), 1 << 20);
  uint64_t acc_addr = Upload(acc);
  uint64_t out_addr = dram.Alloc(6 * kBlock);
  LoopNest loop{.iter_out = 2, .dst_out = 3, .iter_in = 3, .dst_in = 1};
  std::vector<Insn> program = {
      UopLoad({{0, 0, 0}}),
      Load(MemId::kAcc, 0, AccBase(acc_addr), 1, 6, 6),
      Alu(AluOpcode::kShr, 0, 1, loop, true, 6),
      Alu(AluOpcode::kMin, 0, 1, loop, true, 127),
      Alu(AluOpcode::kMax, 0, 1, loop, true, -128, Deps(false, false, false, true)),
      Store(0, OutBase(out_addr), 1, 6, 6, Deps(true, false, true, false)),
      Finish(Deps(false, true, false, false)),
  };
  sim.Run(program);
  auto out = Download<int8_t>(out_addr, 6 * kBlock);
  for (int i = 0; i < 6 * kBlock; ++i) {
    int32_t expected = std::min(127, std::max(-128, acc[i] >> 6));
    EXPECT_EQ(out[i], expected) << i;
  }
}

// ALU with a register operand addressed through src factors: acc[j] += acc[4 + j].
TEST_F(VtaSim, AluRegisterOperandFollowsSrcFactors) {
  auto acc = Random<int32_t>(8 * kBlock, -1000, 1000);
  uint64_t acc_addr = Upload(acc);
  std::vector<Insn> program = {
      UopLoad({{0, 4, 0}}),
      Load(MemId::kAcc, 0, AccBase(acc_addr), 1, 8, 8),
      Alu(AluOpcode::kAdd, 0, 1,
          {.iter_out = 2, .dst_out = 2, .src_out = 2, .iter_in = 2, .dst_in = 1, .src_in = 1},
          false, 0),
  };
  sim.Run(program);
  for (int j = 0; j < 4; ++j) {
    for (int lane = 0; lane < kBlock; ++lane) {
      EXPECT_EQ(sim.AccValue(j, lane), acc[j * kBlock + lane] + acc[(4 + j) * kBlock + lane]);
    }
  }
}

// A 2 x 3 window read with row stride 5, padded by 1 / 2 rows and 1 / 2 columns: the SRAM
// footprint is 5 x 6 elements from sram_base, zero outside the window, and nothing past the
// footprint changes.
TEST_F(VtaSim, PaddedStridedLoad) {
  auto inp = Random<int8_t>(2 * 5 * kBlock, -128, 127);
  std::vector<int8_t> ones(64 * kBlock, 1);
  uint64_t inp_addr = Upload(inp), ones_addr = Upload(ones);
  const uint32_t base = 10;
  Pads pads{.y_0 = 1, .y_1 = 2, .x_0 = 1, .x_1 = 2};
  std::vector<Insn> program = {
      Load(MemId::kInp, 0, InpBase(ones_addr), 1, 64, 64),
      Load(MemId::kInp, base, InpBase(inp_addr) + 1, 2, 3, 5, {}, pads),
  };
  sim.Run(program);
  for (int row = 0; row < 5; ++row) {
    for (int x = 0; x < 6; ++x) {
      bool data = row >= 1 && row < 3 && x >= 1 && x < 4;
      for (int lane = 0; lane < kBlock; ++lane) {
        int32_t expected = data ? inp[((row - 1) * 5 + 1 + (x - 1)) * kBlock + lane] : 0;
        EXPECT_EQ(sim.InpValue(base + row * 6 + x, lane), expected) << row << "," << x;
      }
    }
  }
  EXPECT_EQ(sim.InpValue(base - 1, 0), 1);
  EXPECT_EQ(sim.InpValue(base + 30, 0), 1);
}

TEST_F(VtaSim, PaddedWeightAndAccumulatorLoads) {
  auto wgt = Random<int8_t>(kBlock * kBlock, -128, 127);
  auto acc = Random<int32_t>(kBlock, -100000, 100000);
  uint64_t wgt_addr = Upload(wgt), acc_addr = Upload(acc);
  std::vector<Insn> program = {
      Load(MemId::kWgt, 0, WgtBase(wgt_addr), 1, 1, 1, {}, {.x_0 = 1}),
      Load(MemId::kAcc, 0, AccBase(acc_addr), 1, 1, 1, {}, {.y_1 = 1}),
  };
  sim.Run(program);
  for (int lane = 0; lane < kBlock * kBlock; ++lane) {
    EXPECT_EQ(sim.WgtValue(0, lane), 0);
    EXPECT_EQ(sim.WgtValue(1, lane), wgt[lane]);
  }
  for (int lane = 0; lane < kBlock; ++lane) {
    EXPECT_EQ(sim.AccValue(0, lane), acc[lane]);
    EXPECT_EQ(sim.AccValue(1, lane), 0);
  }
}

// STORE writes y_size rows of x_size elements at row stride x_stride, each accumulator
// value narrowed to its low 8 bits, and leaves the gaps between rows alone.
TEST_F(VtaSim, StridedStoreNarrowsToOutputWidth) {
  std::vector<int32_t> acc(6 * kBlock);
  const int32_t kSpecial[] = {0x12345680, 255, 300, -129, 128, -1, 127, -128};
  for (size_t i = 0; i < acc.size(); ++i) {
    acc[i] = i < 8 ? kSpecial[i] : Random<int32_t>(1, -(1 << 30), 1 << 30)[0];
  }
  uint64_t acc_addr = Upload(acc);
  const int kStride = 4;
  std::vector<int8_t> sentinel(3 * kStride * kBlock, 0x5A);
  uint64_t out_addr = Upload(sentinel);
  std::vector<Insn> program = {
      Load(MemId::kAcc, 0, AccBase(acc_addr), 1, 6, 6, Deps(false, false, false, true)),
      Store(0, OutBase(out_addr), 3, 2, kStride, Deps(true, false, true, false)),
      Finish(Deps(false, true, false, false)),
  };
  sim.Run(program);
  auto out = Download<int8_t>(out_addr, sentinel.size());
  EXPECT_EQ(out[0], static_cast<int8_t>(0x80));
  EXPECT_EQ(out[1], -1);
  EXPECT_EQ(out[2], 44);
  EXPECT_EQ(out[3], 127);
  for (int y = 0; y < 3; ++y) {
    for (int x = 0; x < kStride; ++x) {
      for (int lane = 0; lane < kBlock; ++lane) {
        int8_t got = out[(y * kStride + x) * kBlock + lane];
        int8_t expected = x < 2 ? static_cast<int8_t>(acc[(y * 2 + x) * kBlock + lane]) : 0x5A;
        EXPECT_EQ(got, expected) << y << "," << x << "," << lane;
      }
    }
  }
}

TEST_F(VtaSim, CountersHaveTvmMeaning) {
  uint64_t inp_addr = Upload(std::vector<int8_t>(6 * kBlock, 1));
  uint64_t wgt_addr = Upload(std::vector<int8_t>(2 * kBlock * kBlock, 1));
  uint64_t acc_addr = Upload(std::vector<int32_t>(kBlock, 1));
  uint64_t out_addr = dram.Alloc(4 * kBlock);
  std::vector<Insn> program = {
      UopLoad({{0, 0, 0}, {1, 1, 1}, {2, 2, 0}}),                        // 3 * 4 bytes
      Load(MemId::kInp, 0, InpBase(inp_addr), 2, 3, 3, {}, {.y_0 = 1}),  // 6 * 16
      Load(MemId::kWgt, 0, WgtBase(wgt_addr), 1, 2, 2, Deps(false, false, false, true)),
      Load(MemId::kAcc, 0, AccBase(acc_addr), 1, 1, 1, {}, {.x_1 = 3}),  // 1 * 64
      Gemm(0, 3, {.iter_out = 1, .iter_in = 1}, /*reset=*/true, Deps(true, false, false, false)),
      Gemm(0, 2, {.iter_out = 2, .dst_out = 2, .iter_in = 3}),  // 12 iterations
      Alu(AluOpcode::kAdd, 0, 2, {.iter_out = 1, .iter_in = 2, .dst_in = 2}, true, 1,
          Deps(false, false, false, true)),                                  // 4 iterations
      Store(0, OutBase(out_addr), 2, 2, 2, Deps(true, false, true, false)),  // 4 * 16
      Finish(Deps(false, true, false, false)),
  };
  SimCounters expected;
  expected.uop_load_nbytes = 12;
  expected.inp_load_nbytes = 96;
  expected.wgt_load_nbytes = 512;
  expected.acc_load_nbytes = 64;
  expected.out_store_nbytes = 64;
  expected.gemm_counter = 12;
  expected.alu_counter = 4;
  SimReport report = sim.Run(program);
  EXPECT_EQ(report.counters, expected);
  EXPECT_EQ(sim.counters(), expected);
  sim.Run(program);
  SimCounters doubled = expected;
  doubled += expected;
  EXPECT_EQ(sim.counters(), doubled);
  sim.ClearCounters();
  EXPECT_EQ(sim.counters(), SimCounters{});
  EXPECT_NE(report.ToJson().find("\"gemm_counter\": 12"), std::string::npos) << report.ToJson();
  EXPECT_NE(report.ToString().find("gemm utilization"), std::string::npos);
}

// ACC_8BIT fills accumulator elements from one signed byte per value (a bias stored at the
// input's width), addressed in elements of batch * block_out bytes.
TEST_F(VtaSim, Acc8BitLoadSignExtendsBytesIntoTheAccumulator) {
  auto bias = Random<int8_t>(3 * kBlock, -128, 127);
  bias[0] = -128, bias[1] = 127, bias[2] = -1;
  uint64_t addr = Upload(bias);
  MemInsn load = Load(MemId::kAcc8, 4, Elem(addr, config.acc8_elem_bytes()) + 1, 1, 2, 2);
  SimReport report = sim.Run(std::vector<Insn>{load});
  for (int e = 0; e < 2; ++e) {
    for (int lane = 0; lane < kBlock; ++lane) {
      EXPECT_EQ(sim.AccValue(4 + e, lane), bias[(1 + e) * kBlock + lane]) << e << "," << lane;
    }
  }
  EXPECT_EQ(report.counters.acc_load_nbytes, 2u * kBlock);
  // It decodes from its encoding, and the listing names it.
  EXPECT_EQ(std::get<MemInsn>(Decode(config, Encode(config, load))).memory_type, MemId::kAcc8);
  EXPECT_STREQ(MemIdName(MemId::kAcc8), "ACC_8BIT");
}

// A STORE that moves nothing only carries its flags, whatever memory type it names (the
// reference runtime's no-ops name others); one that moves data must drain OUT.
TEST_F(VtaSim, StoreNoOpsMayNameAnyMemoryType) {
  MemInsn noop = Store(0, 0, 0, 0, 0, Deps(true, false, true, false));
  noop.memory_type = MemId::kInp;
  std::vector<Insn> program = {ComputeNoop(Deps(false, false, false, true)), noop,
                               Finish(Deps(false, true, false, false))};
  sim.Run(program);
  MemInsn moving = Store(0, 0, 1, 1, 1);
  moving.memory_type = MemId::kAcc;
  EXPECT_CONTAINS(RunError({moving}), "cannot be stored (STORE drains the OUT buffer)");
}

// With tokens_must_drain off, a program that leaves tokens behind runs and the report says
// which queue kept how many, and who pushed the first.
TEST_F(VtaSim, LeftoverTokensAreReportedWhenAllowed) {
  std::vector<Insn> program = {ComputeNoop(Deps(false, false, true, false)),
                               ComputeNoop(Deps(false, false, true, false)), Finish()};
  EXPECT_CONTAINS(RunError(program), "2 unconsumed token(s) in the compute->load (g2l) queue");
  sim.set_options({.tokens_must_drain = false});
  SimReport report = sim.Run(program);
  ASSERT_EQ(report.leftover_tokens.size(), 1u);
  EXPECT_EQ(report.leftover_tokens[0],
            "2 token(s) in the compute->load (g2l) queue, the first pushed by VTA instruction #0 "
            "(LOAD UOP)");
}

// A GEMM reading an input that the load module wrote with no load->compute token between them
// is a read-after-write hazard; with the token the program passes the check.
TEST_F(VtaSim, HazardCheckFindsAnUnorderedReadAfterWrite) {
  uint64_t inp_addr = Upload(Random<int8_t>(kBlock, -128, 127));
  uint64_t wgt_addr = Upload(Random<int8_t>(kBlock * kBlock, -128, 127));
  auto program = [&](bool token) {
    return std::vector<Insn>{
        UopLoad({{0, 0, 0}}),
        Load(MemId::kInp, 0, InpBase(inp_addr), 1, 1, 1),
        Load(MemId::kWgt, 0, WgtBase(wgt_addr), 1, 1, 1, Deps(false, false, false, token)),
        Gemm(0, 1, {}, false, Deps(token, false, false, false)),
        Finish(),
    };
  };
  sim.set_options({.check_hazards = true});
  sim.Run(program(true));
  EXPECT_EQ(RunError(program(false)),
            "VTA hazard: VTA instruction #3 (GEMM) in the compute module reads input element 0, "
            "which VTA instruction #1 (LOAD INP) in the load module wrote, and no chain of "
            "dependency tokens orders #1 before #3 (the load module must push a token after #1 "
            "that the compute module pops before #3)");
}

TEST_F(VtaSim, EncodedProgramRunsLikeDecodedOne) {
  auto inp = Random<int8_t>(kBlock, -128, 127);
  auto wgt = Random<int8_t>(kBlock * kBlock, -128, 127);
  uint64_t inp_addr = Upload(inp), wgt_addr = Upload(wgt);
  std::vector<Insn> program = {
      UopLoad({{0, 0, 0}}),
      Load(MemId::kInp, 0, InpBase(inp_addr), 1, 1, 1),
      Load(MemId::kWgt, 0, WgtBase(wgt_addr), 1, 1, 1, Deps(false, false, false, true)),
      Gemm(0, 1, {}, true, Deps(true, false, false, false)),
      Gemm(0, 1, {}),
      Finish(),
  };
  SimReport decoded = sim.Run(program);
  std::vector<int32_t> first;
  for (int o = 0; o < kBlock; ++o) first.push_back(sim.AccValue(0, o));
  std::vector<InsnWord> words;
  for (const Insn& insn : program) words.push_back(Encode(config, insn));
  SimReport encoded = sim.Run(words);
  EXPECT_EQ(encoded.counters, decoded.counters);
  EXPECT_EQ(encoded.timing.total_cycles, decoded.timing.total_cycles);
  for (int o = 0; o < kBlock; ++o) EXPECT_EQ(sim.AccValue(0, o), first[o]);
}

// A non-default core: BATCH 2, BLOCK 8, 16-bit accumulators. Sums wrap at 16 bits and
// stores narrow 16 to 8 bits; lanes are row-major [batch][block].
TEST(VtaSimConfig, Batch2Block8With16BitAccumulators) {
  VTAConfig config = loom::testing::Batch2Block8Config();
  config.log_acc_buff_size = 16;
  config.Validate();
  Dram dram;
  Simulator sim(config, &dram);
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> dist(-128, 127);
  std::vector<int8_t> inp(2 * 8), wgt(8 * 8);
  for (int8_t& v : inp) v = static_cast<int8_t>(dist(rng));
  for (int8_t& v : wgt) v = static_cast<int8_t>(dist(rng));
  for (int k = 0; k < 8; ++k) inp[k] = wgt[k] = 127;  // sum 2 * 8 * 127 * 127 wraps
  uint64_t inp_addr = dram.Alloc(inp.size()), wgt_addr = dram.Alloc(wgt.size());
  uint64_t uop_addr = dram.Alloc(4), out_addr = dram.Alloc(16);
  std::memcpy(dram.Host(inp_addr, inp.size()), inp.data(), inp.size());
  std::memcpy(dram.Host(wgt_addr, wgt.size()), wgt.data(), wgt.size());
  uint32_t uop_word = EncodeUop(config, {0, 0, 0});
  std::memcpy(dram.Host(uop_addr, 4), &uop_word, 4);
  std::vector<Insn> program = {
      Load(MemId::kUop, 0, uint32_t(uop_addr / 4), 1, 1, 1),
      Load(MemId::kInp, 0, uint32_t(inp_addr / config.inp_elem_bytes()), 1, 1, 1),
      Load(MemId::kWgt, 0, uint32_t(wgt_addr / config.wgt_elem_bytes()), 1, 1, 1,
           Deps(false, false, false, true)),
      Gemm(0, 1, {}, /*reset=*/true, Deps(true, false, false, false)),
      Gemm(0, 1, {}),
      Gemm(0, 1, {}, false, Deps(false, false, false, true)),
      Store(0, uint32_t(out_addr / config.out_elem_bytes()), 1, 1, 1,
            Deps(true, false, true, false)),
      Finish(Deps(false, true, false, false)),
  };
  sim.Run(program);
  std::vector<int8_t> out(16);
  std::memcpy(out.data(), dram.Host(out_addr, 16), 16);
  bool wrapped = false;
  for (int b = 0; b < 2; ++b) {
    for (int o = 0; o < 8; ++o) {
      int64_t sum = 0;
      for (int k = 0; k < 8; ++k) sum += 2 * int64_t{inp[b * 8 + k]} * wgt[o * 8 + k];
      auto acc16 = static_cast<int16_t>(static_cast<uint16_t>(sum));
      wrapped = wrapped || acc16 != sum;
      EXPECT_EQ(sim.AccValue(0, b * 8 + o), acc16) << b << "," << o;
      EXPECT_EQ(out[b * 8 + o], static_cast<int8_t>(acc16)) << b << "," << o;
    }
  }
  EXPECT_TRUE(wrapped);
}

TEST(VtaDram, AllocationsArePageAlignedDisjointAndChecked) {
  Dram dram;
  uint64_t a = dram.Alloc(100), b = dram.Alloc(5000);
  EXPECT_NE(a, 0u);
  EXPECT_EQ(a % Dram::kPageBytes, 0u);
  EXPECT_EQ(b % Dram::kPageBytes, 0u);
  EXPECT_GE(b, a + Dram::kPageBytes);
  EXPECT_EQ(dram.RegionBytes(b), 5000u);
  uint8_t* host = dram.Host(b, 5000);
  EXPECT_EQ(host[4999], 0);  // zero-filled
  EXPECT_EQ(dram.PhysicalAddress(host + 17), b + 17);
  EXPECT_TRUE(dram.Contains(host, 5000));
  EXPECT_FALSE(dram.Contains(host, 5001));
  EXPECT_THROW(dram.Host(a + 50, 51), Error);  // runs past the 100 requested bytes
  EXPECT_THROW(dram.Host(a + 100, 1), Error);
  EXPECT_THROW(dram.Host(0, 1), Error);
  int not_dram = 0;
  EXPECT_THROW(dram.PhysicalAddress(&not_dram), Error);
  dram.Free(a);
  EXPECT_THROW(dram.Free(a), Error);
  EXPECT_THROW(dram.Host(a, 1), Error);
  EXPECT_EQ(dram.Alloc(10), a);  // the freed range is reused
  uint64_t empty = dram.Alloc(0);
  EXPECT_NE(empty, a);
  EXPECT_TRUE(dram.Contains(dram.Host(empty, 0), 0));
  EXPECT_THROW(dram.Host(empty, 1), Error);
}

}  // namespace
}  // namespace loom::vta
