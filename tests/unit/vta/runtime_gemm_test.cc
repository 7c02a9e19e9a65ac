// End-to-end matrix multiplies driven through the VTA runtime API alone, each checked
// bit-exactly against a plain C++ reference: one 16x16 block, the call sequence of the
// blocked-GEMM tutorial's lowered code, and a blocked 256x256x256 multiply with shift and
// clip run double-buffered (two virtual threads) and serialized.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "runtime_test_util.h"

namespace loom::vta::testing {
namespace {

constexpr uint32_t kInp = 2;
constexpr uint32_t kWgt = 1;
constexpr uint32_t kOut = 4;
constexpr int kBlock = 16;

int32_t ShiftAndClip(int32_t value) { return std::clamp(value >> 8, 0, 127); }

class RuntimeGemm : public ::testing::Test {
 protected:
  void SetUp() override {
    VTAClearLastError();
    cmd_ = VTATLSCommandHandle();
    ASSERT_NE(cmd_, nullptr);
    // These programs are written as lowered code is: their tokens must order every buffer
    // access, not only give the right result under the simulator's latencies.
    VTASetDebugMode(cmd_, VTA_DEBUG_CHECK_HAZARDS);
  }
  void TearDown() override { VTARuntimeShutdown(); }

  VTACommandHandle cmd_ = nullptr;
};

// C[16][16] = A[16][16] . B[16][16]^T, as the matrix-multiply tutorial lowers it: one
// weight tile, sixteen input rows, a reset GEMM and an accumulating GEMM looping over rows.
TEST_F(RuntimeGemm, SingleBlock) {
  const VTAConfig& config = RuntimeConfig();
  ASSERT_EQ(config.batch(), 1);
  ASSERT_EQ(config.block_in(), kBlock);
  std::vector<int8_t> a = RandomInt8(kBlock * kBlock, 1);
  std::vector<int8_t> b = RandomInt8(kBlock * kBlock, 2);
  DeviceBuffer<int8_t> a_dev(a.size());
  DeviceBuffer<int8_t> b_dev(b.size());
  DeviceBuffer<int8_t> c_dev(kBlock * kBlock);
  a_dev.CopyFrom(a);
  b_dev.CopyFrom(b);

  static void* reset_site = nullptr;
  static void* gemm_site = nullptr;
  VTALoadBuffer2D(cmd_, a_dev.data(), 0, kBlock, 1, kBlock, 0, 0, 0, 0, 0, kInp);
  VTALoadBuffer2D(cmd_, b_dev.data(), 0, 1, 1, 1, 0, 0, 0, 0, 0, kWgt);
  VTADepPush(cmd_, 1, 2);
  VTADepPop(cmd_, 1, 2);
  PushKernel(&reset_site, GemmKernel(/*reset=*/true).Loop(kBlock, 1, 0, 0).Uop(0, 0, 0));
  PushKernel(&gemm_site, GemmKernel().Loop(kBlock, 1, 1, 0).Uop(0, 0, 0));
  VTADepPush(cmd_, 2, 3);
  VTADepPop(cmd_, 2, 3);
  VTAStoreBuffer2D(cmd_, 0, kOut, c_dev.data(), 0, kBlock, 1, kBlock);
  VTASynchronize(cmd_, kNoCycleLimit);
  ASSERT_STREQ(VTAGetLastError(), "");

  std::vector<int8_t> c = c_dev.CopyToHost();
  for (int i = 0; i < kBlock; ++i) {
    for (int j = 0; j < kBlock; ++j) {
      int32_t sum = 0;
      for (int k = 0; k < kBlock; ++k) sum += a[i * kBlock + k] * b[j * kBlock + k];
      ASSERT_EQ(c[i * kBlock + j], static_cast<int8_t>(sum)) << "C[" << i << "][" << j << "]";
    }
  }
  const SimCounters& counters = LastRun(cmd_).report.counters;
  EXPECT_EQ(counters.gemm_counter, uint64_t{kBlock});  // reset GEMMs do not count
  EXPECT_EQ(counters.inp_load_nbytes, uint64_t{kBlock * kBlock});
  EXPECT_EQ(counters.wgt_load_nbytes, uint64_t{kBlock * kBlock});
  EXPECT_EQ(counters.out_store_nbytes, uint64_t{kBlock * kBlock});
  EXPECT_EQ(counters.uop_load_nbytes, 2 * sizeof(uint32_t));
}

// The exact runtime calls of the blocked-GEMM tutorial's lowered code (batch 1, 1024 input
// and output channels; on-chip blocks of 256 by 256 channels; shift by 8, clip to
// [0, 127]), including its dependency pushes and pops and its per-row stores.
TEST_F(RuntimeGemm, BlockedGemmTutorialCallSequence) {
  constexpr int kChannels = 1024;
  constexpr int kBlocks = kChannels / kBlock;  // 64
  std::vector<int8_t> data = RandomInt8(kChannels, 3);
  // weight[oc][ic][ci][ki]: (64, 64, 16, 16).
  std::vector<int8_t> weight = RandomInt8(size_t{kChannels} * kChannels, 4);
  DeviceBuffer<int8_t> data_dev(data.size());
  DeviceBuffer<int8_t> weight_dev(weight.size());
  DeviceBuffer<int8_t> res_dev(kChannels);
  data_dev.CopyFrom(data);
  weight_dev.CopyFrom(weight);

  static void* reset_site = nullptr;
  static void* gemm_site = nullptr;
  static void* shr_site = nullptr;
  static void* max_site = nullptr;
  static void* min_site = nullptr;
  // The generating functions of the tutorial's five coproc_uop_scope regions.
  auto reset = +[](void*) {
    VTAUopLoopBegin(16, 1, 0, 0);
    VTAUopPush(0, 1, 0, 0, 0, 0, 0, 0);
    VTAUopLoopEnd();
    return 0;
  };
  auto gemm = +[](void*) {
    VTAUopLoopBegin(16, 1, 0, 16);
    VTAUopLoopBegin(16, 0, 1, 1);
    VTAUopPush(0, 0, 0, 0, 0, 0, 0, 0);
    VTAUopLoopEnd();
    VTAUopLoopEnd();
    return 0;
  };
  auto shr = +[](void*) {
    VTAUopLoopBegin(16, 1, 1, 0);
    VTAUopPush(1, 0, 0, 0, 0, 3, 1, 8);
    VTAUopLoopEnd();
    return 0;
  };
  auto max = +[](void*) {
    VTAUopLoopBegin(16, 1, 1, 0);
    VTAUopPush(1, 0, 0, 0, 0, 1, 1, 0);
    VTAUopLoopEnd();
    return 0;
  };
  auto min = +[](void*) {
    VTAUopLoopBegin(16, 1, 1, 0);
    VTAUopPush(1, 0, 0, 0, 0, 0, 1, 127);
    VTAUopLoopEnd();
    return 0;
  };

  VTADepPush(cmd_, 3, 2);
  for (int i1_outer = 0; i1_outer < 4; ++i1_outer) {
    VTADepPop(cmd_, 3, 2);
    VTAPushGEMMOp(&reset_site, reset, nullptr, 0);
    VTADepPush(cmd_, 2, 1);
    for (int ic_outer = 0; ic_outer < 4; ++ic_outer) {
      VTADepPop(cmd_, 2, 1);
      VTALoadBuffer2D(cmd_, data_dev.data(), ic_outer * 16, 16, 1, 16, 0, 0, 0, 0, 0, kInp);
      VTALoadBuffer2D(cmd_, weight_dev.data(), i1_outer * 1024 + ic_outer * 16, 16, 16, 64, 0, 0, 0,
                      0, 0, kWgt);
      VTADepPush(cmd_, 1, 2);
      VTADepPop(cmd_, 1, 2);
      VTAPushGEMMOp(&gemm_site, gemm, nullptr, 0);
      VTADepPush(cmd_, 2, 1);
    }
    VTADepPop(cmd_, 2, 1);
    VTAPushALUOp(&shr_site, shr, nullptr, 0);
    VTAPushALUOp(&max_site, max, nullptr, 0);
    VTAPushALUOp(&min_site, min, nullptr, 0);
    VTADepPush(cmd_, 2, 3);
    VTADepPop(cmd_, 2, 3);
    for (int i1_inner = 0; i1_inner < 16; ++i1_inner) {
      VTAStoreBuffer2D(cmd_, i1_inner, kOut, res_dev.data(), i1_outer * 16 + i1_inner, 1, 1, 1);
    }
    VTADepPush(cmd_, 3, 2);
  }
  VTASynchronize(cmd_, kNoCycleLimit);
  ASSERT_STREQ(VTAGetLastError(), "");

  std::vector<int8_t> res = res_dev.CopyToHost();
  for (int oc = 0; oc < kBlocks; ++oc) {
    for (int ci = 0; ci < kBlock; ++ci) {
      int32_t sum = 0;
      for (int ic = 0; ic < kBlocks; ++ic) {
        for (int ki = 0; ki < kBlock; ++ki) {
          size_t w = ((static_cast<size_t>(oc) * kBlocks + ic) * kBlock + ci) * kBlock + ki;
          sum += data[ic * kBlock + ki] * weight[w];
        }
      }
      ASSERT_EQ(res[oc * kBlock + ci], ShiftAndClip(sum)) << "res[" << oc << "][" << ci << "]";
    }
  }
  // Each of the five kernels was generated once and loaded once: later pushes hit the cache.
  EXPECT_EQ(LastRun(cmd_).report.counters.uop_load_nbytes, 5 * sizeof(uint32_t));
  EXPECT_EQ(LastRun(cmd_).report.counters.alu_counter, uint64_t{4 * 3 * 16});
}

// ---- Blocked 256x256x256: C = clip((A . B^T) >> 8, 0, 127), int8 x int8 -> int32.
//
// Tiles of kTileRows rows of A and C; the reduction runs in kChunks chunks of kChunkBlocks
// 16-wide blocks. Each virtual thread has its own input/weight buffers (per chunk) and
// accumulator buffer (per tile); with two of them, the load of the next chunk overlaps the
// GEMM of the current one and the store of one tile overlaps the next tile's compute.
constexpr int kSize = 256;
constexpr int kSizeBlocks = kSize / kBlock;  // 16
constexpr int kTileRows = 32;
constexpr int kTiles = kSize / kTileRows;  // 8
constexpr int kChunkBlocks = 8;
constexpr int kChunks = kSizeBlocks / kChunkBlocks;             // 2
constexpr uint32_t kInpPerThread = kTileRows * kChunkBlocks;    // input elements
constexpr uint32_t kWgtPerThread = kSizeBlocks * kChunkBlocks;  // weight elements
constexpr uint32_t kAccPerThread = kTileRows * kSizeBlocks;     // accumulator elements

struct BlockedOperands {
  std::vector<int8_t> a;         // [256][256] row-major
  std::vector<int8_t> b;         // [256][256] row-major, C = A . B^T
  std::vector<int8_t> b_packed;  // weight elements [n_block][k_block][16][16]
  std::vector<int8_t> reference;
};

BlockedOperands MakeOperands() {
  BlockedOperands ops;
  ops.a = RandomInt8(kSize * kSize, 11);
  ops.b = RandomInt8(kSize * kSize, 12);
  ops.b_packed.resize(ops.b.size());
  for (int nb = 0; nb < kSizeBlocks; ++nb) {
    for (int kb = 0; kb < kSizeBlocks; ++kb) {
      for (int ni = 0; ni < kBlock; ++ni) {
        for (int ki = 0; ki < kBlock; ++ki) {
          size_t packed =
              ((static_cast<size_t>(nb) * kSizeBlocks + kb) * kBlock + ni) * kBlock + ki;
          ops.b_packed[packed] = ops.b[(nb * kBlock + ni) * kSize + kb * kBlock + ki];
        }
      }
    }
  }
  ops.reference.resize(kSize * kSize);
  for (int m = 0; m < kSize; ++m) {
    for (int n = 0; n < kSize; ++n) {
      int32_t sum = 0;
      for (int k = 0; k < kSize; ++k) sum += ops.a[m * kSize + k] * ops.b[n * kSize + k];
      ops.reference[m * kSize + n] = static_cast<int8_t>(ShiftAndClip(sum));
    }
  }
  return ops;
}

// Issues the blocked multiply with `threads` virtual threads (1 = serialized) and
// synchronizes. Kernels are cached per call site and per buffer assignment (signature).
void RunBlockedGemm(VTACommandHandle cmd, int threads, const DeviceBuffer<int8_t>& a,
                    const DeviceBuffer<int8_t>& b_packed, const DeviceBuffer<int8_t>& c) {
  static void* reset_site = nullptr;
  static void* gemm_site = nullptr;
  static void* shr_site = nullptr;
  static void* max_site = nullptr;
  static void* min_site = nullptr;
  const auto t = static_cast<uint32_t>(threads);
  // Buffers start free: one "compute is done with it" token per input/weight buffer and one
  // "store is done with it" token per accumulator buffer.
  for (uint32_t v = 0; v < t; ++v) VTADepPush(cmd, 2, 1);
  for (uint32_t v = 0; v < t; ++v) VTADepPush(cmd, 3, 2);
  uint32_t chunk_counter = 0;
  for (uint32_t tile = 0; tile < kTiles; ++tile) {
    const uint32_t acc_base = (tile % t) * kAccPerThread;
    VTADepPop(cmd, 3, 2);
    PushKernel(&reset_site, GemmKernel(/*reset=*/true)
                                .Loop(kTileRows, kSizeBlocks, 0, 0)
                                .Loop(kSizeBlocks, 1, 0, 0)
                                .Uop(acc_base, 0, 0));
    for (uint32_t chunk = 0; chunk < kChunks; ++chunk) {
      const uint32_t slot = chunk_counter++ % t;
      const uint32_t inp_base = slot * kInpPerThread;
      const uint32_t wgt_base = slot * kWgtPerThread;
      VTADepPop(cmd, 2, 1);
      VTALoadBuffer2D(cmd, a.data(), tile * kTileRows * kSizeBlocks + chunk * kChunkBlocks,
                      kChunkBlocks, kTileRows, kSizeBlocks, 0, 0, 0, 0, inp_base, kInp);
      VTALoadBuffer2D(cmd, b_packed.data(), chunk * kChunkBlocks, kChunkBlocks, kSizeBlocks,
                      kSizeBlocks, 0, 0, 0, 0, wgt_base, kWgt);
      VTADepPush(cmd, 1, 2);
      VTADepPop(cmd, 1, 2);
      // acc[m][n] += inp[m][k] . wgt[n][k]: rows outer, output blocks inner, one micro-op
      // per reduction block.
      KernelSpec gemm = GemmKernel()
                            .Loop(kTileRows, kSizeBlocks, kChunkBlocks, 0)
                            .Loop(kSizeBlocks, 1, 0, kChunkBlocks);
      for (uint32_t k = 0; k < kChunkBlocks; ++k) gemm.Uop(acc_base, inp_base + k, wgt_base + k);
      PushKernel(&gemm_site, gemm);
      VTADepPush(cmd, 2, 1);
    }
    auto alu = [&](AluOpcode op, int32_t imm) {
      return AluKernel(op, /*use_imm=*/true, imm)
          .Loop(kTileRows, kSizeBlocks, kSizeBlocks, 0)
          .Loop(kSizeBlocks, 1, 1, 0)
          .Uop(acc_base, acc_base, 0);
    };
    PushKernel(&shr_site, alu(AluOpcode::kShr, 8));
    PushKernel(&max_site, alu(AluOpcode::kMax, 0));
    PushKernel(&min_site, alu(AluOpcode::kMin, 127));
    VTADepPush(cmd, 2, 3);
    VTADepPop(cmd, 2, 3);
    VTAStoreBuffer2D(cmd, acc_base, kOut, c.data(), tile * kTileRows * kSizeBlocks, kSizeBlocks,
                     kTileRows, kSizeBlocks);
    VTADepPush(cmd, 3, 2);
  }
  // Retire the initial tokens so that every queue drains.
  for (uint32_t v = 0; v < t; ++v) VTADepPop(cmd, 2, 1);
  for (uint32_t v = 0; v < t; ++v) VTADepPop(cmd, 3, 2);
  VTASynchronize(cmd, kNoCycleLimit);
}

TEST_F(RuntimeGemm, Blocked256DoubleBufferedIsBitExactAndFasterThanSerialized) {
  BlockedOperands ops = MakeOperands();
  DeviceBuffer<int8_t> a(ops.a.size());
  DeviceBuffer<int8_t> b(ops.b_packed.size());
  DeviceBuffer<int8_t> c_serial(kSize * kSize);
  DeviceBuffer<int8_t> c_double(kSize * kSize);
  a.CopyFrom(ops.a);
  b.CopyFrom(ops.b_packed);

  RunBlockedGemm(cmd_, 1, a, b, c_serial);
  ASSERT_STREQ(VTAGetLastError(), "");
  const SimReport serial = LastRun(cmd_).report;
  RunBlockedGemm(cmd_, 2, a, b, c_double);
  ASSERT_STREQ(VTAGetLastError(), "");
  const SimReport overlapped = LastRun(cmd_).report;

  EXPECT_EQ(c_serial.CopyToHost(), ops.reference);
  EXPECT_EQ(c_double.CopyToHost(), ops.reference);

  // Same work, same traffic (micro-kernels aside: the second run reuses resident ones).
  constexpr uint64_t kGemmIterations = uint64_t{kSize} * kSizeBlocks * kSizeBlocks;
  for (const SimReport* report : {&serial, &overlapped}) {
    EXPECT_EQ(report->counters.gemm_counter, kGemmIterations);
    EXPECT_EQ(report->counters.alu_counter, uint64_t{3} * kSize * kSizeBlocks);
    EXPECT_EQ(report->counters.inp_load_nbytes, uint64_t{kSize} * kSize);
    EXPECT_EQ(report->counters.wgt_load_nbytes, uint64_t{kTiles} * kSize * kSize);
    EXPECT_EQ(report->counters.out_store_nbytes, uint64_t{kSize} * kSize);
  }
  EXPECT_LT(overlapped.timing.total_cycles, serial.timing.total_cycles);
  EXPECT_GT(overlapped.timing.gemm_utilization(), serial.timing.gemm_utilization());
  // Overlap is substantial, not a rounding effect: loads hide behind GEMMs.
  EXPECT_LT(overlapped.timing.total_cycles * 10, serial.timing.total_cycles * 8)
      << "serialized:\n"
      << serial.ToString() << "double-buffered:\n"
      << overlapped.ToString();
}

}  // namespace
}  // namespace loom::vta::testing
