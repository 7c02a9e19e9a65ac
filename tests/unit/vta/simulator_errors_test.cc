// Malformed VTA programs: each fails with a loom::Error naming the instruction and the field
// or queue at fault, never with undefined behaviour.
#include <gtest/gtest.h>

#include "simulator_test_util.h"

namespace loom::vta {
namespace {

using testing::Alu;
using testing::ComputeNoop;
using testing::Deps;
using testing::Finish;
using testing::Gemm;
using testing::Load;
using testing::LoopNest;
using testing::Store;

class VtaSimErrors : public testing::SimFixture {};

TEST_F(VtaSimErrors, LoadPastTheEndOfSramNamesInstructionAndField) {
  uint64_t addr = Upload(std::vector<int8_t>(4 * 16, 1));
  uint32_t depth = uint32_t(config.inp_buff_depth());
  std::string error = RunError({Finish(), Load(MemId::kInp, depth - 1, InpBase(addr), 1, 2, 2)});
  EXPECT_CONTAINS(error, "follows FINISH");
  error = RunError({Load(MemId::kInp, 0, InpBase(addr), 1, 1, 1),
                    Load(MemId::kInp, depth - 1, InpBase(addr), 1, 2, 2)});
  EXPECT_CONTAINS(error, "VTA instruction #1 (LOAD INP)");
  EXPECT_CONTAINS(error, "sram_base");
  EXPECT_CONTAINS(error, "input buffer depth 2048");
  // Padding counts towards the footprint.
  error = RunError({Load(MemId::kInp, depth - 2, InpBase(addr), 1, 2, 2, {}, {.y_1 = 1})});
  EXPECT_CONTAINS(error, "#0");
  EXPECT_CONTAINS(error, "padding included");
  error = RunError({Store(uint32_t(config.acc_buff_depth()), 0, 1, 1, 1)});
  EXPECT_CONTAINS(error, "#0 (STORE OUT)");
  EXPECT_CONTAINS(error, "sram_base");
}

TEST_F(VtaSimErrors, GemmIndexOutOfRangeNamesMicroOpAndFactor) {
  uint32_t acc_depth = uint32_t(config.acc_buff_depth());
  std::string error = RunError({
      UopLoad({{0, 0, 0}, {acc_depth - 2, 0, 0}}),
      Gemm(0, 2, {.iter_out = 2, .dst_out = 2}),
  });
  EXPECT_CONTAINS(error, "VTA instruction #1 (GEMM)");
  EXPECT_CONTAINS(error, "accumulator index 2048");
  EXPECT_CONTAINS(error, "micro-op 1");
  EXPECT_CONTAINS(error, "dst_factor_out 2");

  error = RunError({UopLoad({{0, 0, 1000}}), Gemm(0, 1, {.iter_in = 30, .wgt_in = 1})});
  EXPECT_CONTAINS(error, "#1 (GEMM)");
  EXPECT_CONTAINS(error, "weight index 1029");

  error = RunError({UopLoad({{0, 2000, 0}}), Gemm(0, 1, {.iter_out = 49, .src_out = 1})});
  EXPECT_CONTAINS(error, "input index 2048");

  error = RunError({Gemm(5, 4, {})});
  EXPECT_CONTAINS(error, "#0 (GEMM)");
  EXPECT_CONTAINS(error, "uop_bgn 5");
  error = RunError({Alu(AluOpcode::kAdd, 0, uint32_t(config.uop_buff_depth()) + 1, {}, true, 1)});
  EXPECT_CONTAINS(error, "#0 (ALU ADD)");
  EXPECT_CONTAINS(error, "uop_end");
  // A reset GEMM does not read the input or weight buffers, so only dst is checked.
  EXPECT_EQ(RunError({UopLoad({{0, 2047, 1023}}), Gemm(0, 1, {.iter_out = 9, .src_out = 9},
                                                       /*reset=*/true)}),
            "");
}

TEST_F(VtaSimErrors, AluSourceIndexOutOfRange) {
  std::string error = RunError(
      {UopLoad({{0, 2047, 0}}), Alu(AluOpcode::kMax, 0, 1, {.iter_in = 2, .src_in = 1}, false, 0)});
  EXPECT_CONTAINS(error, "#1 (ALU MAX)");
  EXPECT_CONTAINS(error, "accumulator index 2048");
  EXPECT_CONTAINS(error, "src_idx 2047");
  // With an immediate the source index is not read.
  EXPECT_EQ(RunError({UopLoad({{0, 2047, 0}}),
                      Alu(AluOpcode::kMax, 0, 1, {.iter_in = 2, .src_in = 1}, true, 0)}),
            "");
}

TEST_F(VtaSimErrors, PopOfAQueueNobodyFillsDeadlocks) {
  std::string error = RunError({Gemm(0, 0, {}, false, Deps(true, false, false, false))});
  EXPECT_CONTAINS(error, "deadlock");
  EXPECT_CONTAINS(error, "VTA instruction #0 (GEMM)");
  EXPECT_CONTAINS(error, "load->compute (l2g)");

  // Load and compute each wait for the other first.
  uint64_t addr = Upload(std::vector<int8_t>(16, 1));
  error = RunError({
      Load(MemId::kInp, 0, InpBase(addr), 1, 1, 1, Deps(false, true, false, true)),
      Gemm(0, 0, {}, false, Deps(true, false, true, false)),
  });
  EXPECT_CONTAINS(error,
                  "#0 (LOAD INP) in the load module waits on the empty "
                  "compute->load (g2l)");
  EXPECT_CONTAINS(error,
                  "#1 (GEMM) in the compute module waits on the empty "
                  "load->compute (l2g)");

  error = RunError({Store(0, 0, 0, 0, 0, Deps(true, false, false, false)), Finish()});
  EXPECT_CONTAINS(error, "#0 (STORE OUT)");
  EXPECT_CONTAINS(error, "compute->store (g2s)");
}

TEST_F(VtaSimErrors, UnconsumedTokensAreReported) {
  std::string error = RunError({ComputeNoop(Deps(false, false, false, true))});
  EXPECT_CONTAINS(error, "1 unconsumed token");
  EXPECT_CONTAINS(error, "compute->store (g2s)");
  EXPECT_CONTAINS(error, "#0 (LOAD UOP)");
}

TEST_F(VtaSimErrors, FlagsNamingAMissingNeighbour) {
  uint64_t addr = Upload(std::vector<int8_t>(16, 1));
  std::string error =
      RunError({Load(MemId::kWgt, 0, 0, 0, 0, 0),
                Load(MemId::kInp, 0, InpBase(addr), 1, 1, 1, Deps(true, false, false, false))});
  EXPECT_CONTAINS(error, "#1 (LOAD INP)");
  EXPECT_CONTAINS(error, "pop_prev");
  EXPECT_CONTAINS(error, "load module has no previous neighbour");
  error = RunError({Store(0, 0, 0, 0, 0, Deps(false, false, false, true))});
  EXPECT_CONTAINS(error, "push_next");
  EXPECT_CONTAINS(error, "store module has no next neighbour");
}

TEST_F(VtaSimErrors, UnknownOpcodeAndMemoryType) {
  std::vector<InsnWord> words = {Encode(config, Finish())};
  words.insert(words.begin(), InsnWord{7, 0});  // opcode 7 does not exist
  try {
    sim.Run(words);
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_CONTAINS(error.what(), "VTA instruction #0");
    EXPECT_CONTAINS(error.what(), "opcode");
  }

  MemInsn bogus = Load(MemId::kInp, 0, 0, 0, 0, 0);
  bogus.opcode = Opcode::kGemm;
  EXPECT_CONTAINS(RunError({Finish(Deps(false, false, false, false)), bogus}), "follows FINISH");
  EXPECT_CONTAINS(RunError({bogus}), "#0");
  EXPECT_CONTAINS(RunError({bogus}), "unknown opcode 2");

  MemInsn bad_type = Load(static_cast<MemId>(6), 0, 0, 1, 1, 1);
  EXPECT_CONTAINS(RunError({bad_type}), "unknown memory_type 6");
  AluInsn bad_alu = Alu(static_cast<AluOpcode>(7), 0, 0, {}, true, 0);
  EXPECT_CONTAINS(RunError({bad_alu}), "unknown alu_opcode 7");

  EXPECT_CONTAINS(RunError({Load(MemId::kOut, 0, 0, 1, 1, 1)}), "cannot be loaded");
  MemInsn store_acc = Store(0, 0, 1, 1, 1);
  store_acc.memory_type = MemId::kAcc;
  EXPECT_CONTAINS(RunError({store_acc}), "cannot be stored");
  MemInsn padded_store = Store(0, 0, 1, 1, 1);
  padded_store.x_pad_0 = 1;
  EXPECT_CONTAINS(RunError({padded_store}), "STORE cannot pad");
}

TEST_F(VtaSimErrors, DramOutOfRange) {
  uint64_t addr = Upload(std::vector<int8_t>(4 * 16, 1));  // four input elements
  std::string error = RunError({Load(MemId::kInp, 0, InpBase(addr), 2, 2, 3)});
  EXPECT_CONTAINS(error, "VTA instruction #0 (LOAD INP): dram_base/x_stride");
  EXPECT_CONTAINS(error, "runs past the end");
  error = RunError(
      {Load(MemId::kInp, 0, InpBase(addr), 1, 1, 1), Load(MemId::kWgt, 0, 1u << 31, 1, 1, 1)});
  EXPECT_CONTAINS(error, "#1 (LOAD WGT)");
  EXPECT_CONTAINS(error, "not inside any allocated VTA buffer");
  error = RunError({Store(0, OutBase(addr) + 4, 1, 1, 1)});
  EXPECT_CONTAINS(error, "#0 (STORE OUT)");
  // A failed load leaves the buffer untouched.
  uint64_t zeros = Upload(std::vector<int8_t>(16, 0));
  sim.Run(std::vector<Insn>{Load(MemId::kInp, 0, InpBase(zeros), 1, 1, 1)});
  RunError({Load(MemId::kInp, 0, InpBase(addr), 2, 1, 4)});
  EXPECT_EQ(sim.InpValue(0, 0), 0);
}

}  // namespace
}  // namespace loom::vta
