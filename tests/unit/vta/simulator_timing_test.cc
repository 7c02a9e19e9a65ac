// The VTA simulator's timing model: documented per-instruction costs, token waits, and the
// decoupled access-execute property (double buffering beats serialized execution).
#include <gtest/gtest.h>

#include "simulator_test_util.h"

namespace loom::vta {
namespace {

using testing::ComputeNoop;
using testing::Deps;
using testing::Finish;
using testing::Gemm;
using testing::Load;
using testing::LoopNest;
using testing::Store;

class VtaSimTiming : public testing::SimFixture {};

constexpr int kBlock = 16;

TEST_F(VtaSimTiming, CostsFollowTheDocumentedModel) {
  uint64_t inp_addr = Upload(std::vector<int8_t>(3 * kBlock, 1));
  // Instruction 0 is dispatched at cycle 1; 3 input elements = 48 bytes over an 8-byte bus,
  // plus 2 padding elements.
  std::vector<Insn> program = {
      Load(MemId::kInp, 0, InpBase(inp_addr), 1, 3, 3, Deps(false, false, false, true), {.x_1 = 2}),
      UopLoad({{0, 0, 0}}),
      Gemm(0, 1, {.iter_out = 5, .iter_in = 7}, false, Deps(true, false, false, false)),
      Finish(),
  };
  SimReport report = sim.Run(program);
  uint64_t load_cost = kDramLatencyCycles + 48 / 8 + 2;
  uint64_t uop_cost = kDramLatencyCycles + 1;  // 4 bytes: one bus beat
  uint64_t gemm_cost = kComputePipelineCycles + 35;
  EXPECT_EQ(report.timing.load_busy_cycles, load_cost);
  EXPECT_EQ(report.timing.compute_busy_cycles, uop_cost + gemm_cost + kNoopCycles);
  EXPECT_EQ(report.timing.store_busy_cycles, 0u);
  EXPECT_EQ(report.timing.gemm_busy_cycles, 35u);
  // The GEMM waits for the load's token (1 + load_cost), which lands after the micro-op
  // load (2 + uop_cost) is done.
  uint64_t gemm_start = std::max<uint64_t>(1 + load_cost, 2 + uop_cost);
  EXPECT_EQ(report.timing.total_cycles, gemm_start + gemm_cost + kNoopCycles);
  EXPECT_DOUBLE_EQ(report.timing.gemm_utilization(), 35.0 / report.timing.total_cycles);
}

TEST_F(VtaSimTiming, EmptyProgramTakesNoTime) {
  SimReport report = sim.Run(std::vector<Insn>{});
  EXPECT_EQ(report.timing.total_cycles, 0u);
  EXPECT_EQ(report.timing.gemm_utilization(), 0.0);
}

// N tiles of C_t = A_t . B_t^T (A_t: 16 x 16 inputs, B_t: 64 x 16 weights), each loaded,
// multiplied and stored. Serialized: a tile's load waits until the previous tile is stored.
// Double-buffered: tiles alternate between two halves of every buffer, so the load of tile
// t+1 overlaps the GEMM of tile t, synchronized by tokens.
class DoubleBuffering : public VtaSimTiming {
 protected:
  static constexpr int kTiles = 6;
  static constexpr uint32_t kInpElems = 16, kWgtElems = 4, kAccElems = kInpElems * kWgtElems;

  void SetUp() override {
    for (int t = 0; t < kTiles; ++t) {
      inputs.push_back(Random<int8_t>(kInpElems * kBlock, -128, 127));
      weights.push_back(Random<int8_t>(kWgtElems * kBlock * kBlock, -128, 127));
      inp_addr.push_back(Upload(inputs.back()));
      wgt_addr.push_back(Upload(weights.back()));
      out_addr.push_back(dram.Alloc(kAccElems * kBlock));
    }
  }

  // acc[i * 4 + j] = inp[i] . wgt[j]^T within a half: uops over j, outer loop over i.
  GemmInsn TileGemm(uint32_t half, DepFlags deps) {
    LoopNest loop{.iter_out = kInpElems, .dst_out = kWgtElems, .src_out = 1, .wgt_out = 0};
    GemmInsn gemm = Gemm(0, kWgtElems, loop, false, deps);
    gemm.uop_bgn = half * kWgtElems;
    gemm.uop_end = gemm.uop_bgn + kWgtElems;
    return gemm;
  }
  // One kernel per buffer half (the micro-ops carry the half's base indices).
  MemInsn Kernels() {
    std::vector<Uop> uops;
    for (uint32_t half = 0; half < 2; ++half) {
      for (uint32_t j = 0; j < kWgtElems; ++j) {
        uops.push_back({half * kAccElems + j, half * kInpElems, half * kWgtElems + j});
      }
    }
    return UopLoad(uops);
  }
  std::vector<Insn> TileLoads(int t, uint32_t half, bool pop_next) {
    return {Load(MemId::kInp, half * kInpElems, InpBase(inp_addr[t]), 1, kInpElems, kInpElems,
                 Deps(false, pop_next, false, false)),
            Load(MemId::kWgt, half * kWgtElems, WgtBase(wgt_addr[t]), 1, kWgtElems, kWgtElems,
                 Deps(false, false, false, true))};
  }
  MemInsn TileStore(int t, uint32_t half, bool push_prev) {
    return Store(half * kAccElems, OutBase(out_addr[t]), 1, kAccElems, kAccElems,
                 Deps(true, false, push_prev, false));
  }

  std::vector<Insn> Serialized() {
    std::vector<Insn> program = {Kernels()};
    for (int t = 0; t < kTiles; ++t) {
      for (const Insn& load : TileLoads(t, 0, t > 0)) program.push_back(load);
      GemmInsn reset = TileGemm(0, Deps(true, false, false, false));
      reset.reset = true;
      program.push_back(reset);
      program.push_back(TileGemm(0, Deps(false, false, false, true)));
      program.push_back(TileStore(t, 0, true));
      // Compute forwards "tile stored" to the load module before the next tile.
      if (t + 1 < kTiles) {
        program.push_back(ComputeNoop(Deps(false, true, true, false)));
      } else {
        program.push_back(Finish(Deps(false, true, false, false)));
      }
    }
    return program;
  }

  std::vector<Insn> DoubleBuffered() {
    std::vector<Insn> program = {Kernels()};
    for (int t = 0; t < kTiles; ++t) {
      uint32_t half = t % 2;
      // Tile t reuses the halves of tile t-2: its load waits for that GEMM, its reset for
      // that store.
      for (const Insn& load : TileLoads(t, half, t >= 2)) program.push_back(load);
      GemmInsn reset = TileGemm(half, Deps(true, t >= 2, false, false));
      reset.reset = true;
      program.push_back(reset);
      program.push_back(TileGemm(half, Deps(false, false, t + 2 < kTiles, true)));
      program.push_back(TileStore(t, half, true));
    }
    // The last two stores' tokens: one popped by a no-op, one by FINISH.
    program.push_back(ComputeNoop(Deps(false, true, false, false)));
    program.push_back(Finish(Deps(false, true, false, false)));
    return program;
  }

  void ExpectReferenceOutputs() {
    for (int t = 0; t < kTiles; ++t) {
      auto out = Download<int8_t>(out_addr[t], kAccElems * kBlock);
      for (uint32_t i = 0; i < kInpElems; ++i) {
        for (uint32_t n = 0; n < kWgtElems * kBlock; ++n) {
          int32_t sum = 0;
          for (int k = 0; k < kBlock; ++k) {
            sum += int32_t{inputs[t][i * kBlock + k]} * weights[t][n * kBlock + k];
          }
          ASSERT_EQ(out[i * kWgtElems * kBlock + n], static_cast<int8_t>(sum))
              << "tile " << t << " row " << i << " column " << n;
        }
      }
    }
  }
  void ClearOutputs() {
    for (uint64_t addr : out_addr) {
      std::fill_n(dram.Host(addr, kAccElems * kBlock), kAccElems * kBlock, uint8_t{0});
    }
  }

  std::vector<std::vector<int8_t>> inputs, weights;
  std::vector<uint64_t> inp_addr, wgt_addr, out_addr;
};

TEST_F(DoubleBuffering, OverlapsLoadsWithComputeAndComputesTheSameResults) {
  SimReport serial = sim.Run(Serialized());
  ExpectReferenceOutputs();
  ClearOutputs();
  SimReport overlapped = sim.Run(DoubleBuffered());
  ExpectReferenceOutputs();

  EXPECT_EQ(serial.counters, overlapped.counters);
  EXPECT_EQ(serial.timing.gemm_busy_cycles, overlapped.timing.gemm_busy_cycles);
  EXPECT_EQ(serial.timing.gemm_busy_cycles, uint64_t{kTiles} * kAccElems);
  EXPECT_LT(overlapped.timing.total_cycles, serial.timing.total_cycles)
      << "serialized:\n"
      << serial.ToString() << "double-buffered:\n"
      << overlapped.ToString();
  EXPECT_GT(overlapped.timing.gemm_utilization(), serial.timing.gemm_utilization());
  // Serialized, only the initial micro-op load (8 micro-ops, 32 bytes) overlaps other work:
  // the total is the sum of the modules' busy cycles minus that load.
  uint64_t serial_work = serial.timing.load_busy_cycles + serial.timing.compute_busy_cycles +
                         serial.timing.store_busy_cycles;
  EXPECT_GE(serial.timing.total_cycles + kDramLatencyCycles + 32 / 8, serial_work);
  // Double-buffered, the loads dominate: total approaches the load module's busy time.
  EXPECT_LT(overlapped.timing.total_cycles, serial_work);
}

// Both programs order every cross-module access with tokens.
TEST_F(DoubleBuffering, BothProgramsPassTheHazardCheck) {
  sim.set_options({.check_hazards = true});
  sim.Run(Serialized());
  ExpectReferenceOutputs();
  ClearOutputs();
  sim.Run(DoubleBuffered());
  ExpectReferenceOutputs();
}

// Without the compute->load token, tile t+2's input load may overwrite the half that tile t's
// GEMM still reads. The model's latencies happen to finish that GEMM first, so the results are
// right, and only the hazard check says that the program is wrong.
TEST_F(DoubleBuffering, AMissingComputeToLoadTokenIsAHazard) {
  std::vector<Insn> program = DoubleBuffered();
  for (Insn& insn : program) {
    if (auto* gemm = std::get_if<GemmInsn>(&insn)) gemm->deps.push_prev = false;
    if (auto* load = std::get_if<MemInsn>(&insn); load && load->memory_type == MemId::kInp) {
      load->deps.pop_next = false;
    }
  }
  sim.Run(program);
  ExpectReferenceOutputs();
  sim.set_options({.check_hazards = true});
  try {
    sim.Run(program);
    FAIL() << "the hazard check passed a program without the compute->load token";
  } catch (const Error& error) {
    std::string message = error.what();
    EXPECT_CONTAINS(message, "VTA hazard: VTA instruction #");
    EXPECT_CONTAINS(message, "(LOAD INP) in the load module overwrites input element");
    EXPECT_CONTAINS(message, "(GEMM) in the compute module reads");
    EXPECT_CONTAINS(message, "the compute module must push a token after #");
  }
}

// Serialized, the modules never overlap: the run takes at least the sum of their busy cycles.
TEST_F(DoubleBuffering, ForcedSerializationRemovesTheOverlap) {
  SimReport overlapped = sim.Run(DoubleBuffered());
  sim.set_options({.serialize = true});
  SimReport serialized = sim.Run(DoubleBuffered());
  ExpectReferenceOutputs();
  EXPECT_EQ(overlapped.counters, serialized.counters);
  uint64_t work = serialized.timing.load_busy_cycles + serialized.timing.compute_busy_cycles +
                  serialized.timing.store_busy_cycles;
  EXPECT_GE(serialized.timing.total_cycles, work);
  EXPECT_LT(overlapped.timing.total_cycles, work);
}

}  // namespace
}  // namespace loom::vta
