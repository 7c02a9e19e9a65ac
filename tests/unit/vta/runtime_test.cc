// The VTA runtime API: device memory, micro-kernel recording and caching, the dependency
// flags it derives from token pushes and pops, every tensor-ALU operation, padded loads,
// the device registration, and errors. Everything goes through the C API (plus the C++
// accessors for the last run), and results are compared with plain C++ references.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "loom/runtime/device_api.h"
#include "loom/support/error.h"
#include "runtime_test_util.h"

namespace loom::vta::testing {
namespace {

constexpr uint32_t kWgt = 1;
constexpr uint32_t kInp = 2;
constexpr uint32_t kAcc = 3;
constexpr uint32_t kOut = 4;
constexpr int kLanes = 16;  // BATCH x BLOCK_OUT accumulator lanes of the default config

class Runtime : public ::testing::Test {
 protected:
  void SetUp() override {
    VTAClearLastError();
    cmd_ = VTATLSCommandHandle();
    ASSERT_NE(cmd_, nullptr);
  }
  void TearDown() override { VTARuntimeShutdown(); }

  // Queues the compute -> store handoff and a store of `elements` output elements from
  // SRAM element `sram` to the start of `out`.
  void StoreOut(uint32_t sram, const DeviceBuffer<int8_t>& out, uint32_t elements) {
    VTADepPush(cmd_, 2, 3);
    VTADepPop(cmd_, 2, 3);
    VTAStoreBuffer2D(cmd_, sram, kOut, out.data(), 0, elements, 1, elements);
  }

  VTACommandHandle cmd_ = nullptr;
};

// ---- Tensor ALU: every operation with an immediate and with a second operand.

int32_t Wrap(int64_t value) { return static_cast<int32_t>(static_cast<uint32_t>(value)); }

// The simulator's documented semantics (simulator.h): SHR takes the low log2(32) = 5 bits
// of the operand as a signed amount; negative amounts shift left. ADD and MUL wrap.
int32_t AluReference(AluOpcode op, int32_t a, int32_t b) {
  switch (op) {
    case AluOpcode::kMin:
      return std::min(a, b);
    case AluOpcode::kMax:
      return std::max(a, b);
    case AluOpcode::kAdd:
      return Wrap(int64_t{a} + b);
    case AluOpcode::kMul:
      return Wrap(int64_t{a} * b);
    case AluOpcode::kShr: {
      int amount = static_cast<int>(static_cast<uint32_t>(b) & 31u);
      if (amount >= 16) amount -= 32;
      if (amount >= 0) return a >> amount;
      return Wrap(static_cast<int64_t>(static_cast<uint32_t>(a) << -amount));
    }
  }
  return 0;
}

struct AluCase {
  AluOpcode op;
  bool use_imm;
  int32_t imm;
};

class RuntimeAlu : public Runtime, public ::testing::WithParamInterface<AluCase> {};

TEST_P(RuntimeAlu, MatchesReference) {
  const AluCase param = GetParam();
  constexpr uint32_t kRows = 8;
  // Rows [0, kRows) are destinations, rows [kRows, 2 kRows) second operands.
  std::vector<int32_t> acc = RandomInt32(2 * kRows * kLanes, 21, -2000000000, 2000000000);
  if (param.op == AluOpcode::kShr) {
    for (size_t i = kRows * kLanes; i < acc.size(); ++i) acc[i] = static_cast<int32_t>(i % 32) - 16;
  }
  DeviceBuffer<int32_t> acc_dev(acc.size());
  DeviceBuffer<int8_t> out(kRows * kLanes);
  acc_dev.CopyFrom(acc);

  static void* site = nullptr;
  VTALoadBuffer2D(cmd_, acc_dev.data(), 0, 2 * kRows, 1, 2 * kRows, 0, 0, 0, 0, 0, kAcc);
  ASSERT_EQ(
      PushKernel(
          &site,
          AluKernel(param.op, param.use_imm, param.imm).Loop(kRows, 1, 1, 0).Uop(0, kRows, 0)),
      0)
      << VTAGetLastError();
  StoreOut(0, out, kRows);
  VTASynchronize(cmd_, kNoCycleLimit);
  ASSERT_STREQ(VTAGetLastError(), "");

  std::vector<int8_t> result = out.CopyToHost();
  for (uint32_t i = 0; i < kRows * kLanes; ++i) {
    int32_t operand = param.use_imm ? param.imm : acc[kRows * kLanes + i];
    int32_t expected = AluReference(param.op, acc[i], operand);
    ASSERT_EQ(result[i], static_cast<int8_t>(expected))
        << AluOpcodeName(param.op) << " lane " << i << ": " << acc[i] << ", " << operand;
  }
  EXPECT_EQ(LastRun(cmd_).report.counters.alu_counter, uint64_t{kRows});
}

INSTANTIATE_TEST_SUITE_P(
    AllOps, RuntimeAlu,
    ::testing::Values(AluCase{AluOpcode::kMin, true, 37}, AluCase{AluOpcode::kMin, false, 0},
                      AluCase{AluOpcode::kMax, true, -5}, AluCase{AluOpcode::kMax, false, 0},
                      AluCase{AluOpcode::kAdd, true, -1000}, AluCase{AluOpcode::kAdd, false, 0},
                      AluCase{AluOpcode::kShr, true, 8}, AluCase{AluOpcode::kShr, true, -3},
                      AluCase{AluOpcode::kShr, false, 0}, AluCase{AluOpcode::kMul, true, -7},
                      AluCase{AluOpcode::kMul, false, 0}),
    [](const ::testing::TestParamInfo<AluCase>& info) {
      std::string name = AluOpcodeName(info.param.op);
      if (!info.param.use_imm) return name + "Tensor";
      return name + "Imm" + (info.param.imm < 0 ? "Neg" : "") +
             std::to_string(std::abs(info.param.imm));
    });

// The tutorials' fix-point normalization: shift right by 8, then clip to [0, 127], with the
// exact VTAUopPush arguments of the lowered code.
TEST_F(Runtime, ShiftAndClipSequenceOfTheTutorial) {
  constexpr uint32_t kRows = 16;
  std::vector<int32_t> acc = RandomInt32(kRows * kLanes, 22, -(1 << 20), 1 << 20);
  DeviceBuffer<int32_t> acc_dev(acc.size());
  DeviceBuffer<int8_t> out(acc.size());
  acc_dev.CopyFrom(acc);

  static void* shr_site = nullptr;
  static void* max_site = nullptr;
  static void* min_site = nullptr;
  VTALoadBuffer2D(cmd_, acc_dev.data(), 0, kRows, 1, kRows, 0, 0, 0, 0, 0, kAcc);
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
  EXPECT_EQ(VTAPushALUOp(&shr_site, shr, nullptr, 0), 0);
  EXPECT_EQ(VTAPushALUOp(&max_site, max, nullptr, 0), 0);
  EXPECT_EQ(VTAPushALUOp(&min_site, min, nullptr, 0), 0);
  StoreOut(0, out, kRows);
  VTASynchronize(cmd_, kNoCycleLimit);
  ASSERT_STREQ(VTAGetLastError(), "");

  std::vector<int8_t> result = out.CopyToHost();
  for (size_t i = 0; i < acc.size(); ++i) {
    ASSERT_EQ(result[i], std::clamp(acc[i] >> 8, 0, 127)) << "lane " << i << ": " << acc[i];
  }
}

// ---- Padded loads.

// A strided 3x4 window of a 5x9 accumulator matrix, padded by 2 rows before, 1 after, 1
// element before and 2 after each row: the 6x7 footprint holds zeros around the window.
TEST_F(Runtime, PaddedStridedAccumulatorLoad) {
  constexpr uint32_t kRows = 5, kCols = 9;
  constexpr uint32_t kY = 3, kX = 4, kRow0 = 1, kCol0 = 2;
  constexpr uint32_t kYBefore = 2, kYAfter = 1, kXBefore = 1, kXAfter = 2;
  constexpr uint32_t kWidth = kXBefore + kX + kXAfter;
  constexpr uint32_t kHeight = kYBefore + kY + kYAfter;
  constexpr uint32_t kSram = 5;
  std::vector<int32_t> acc = RandomInt32(kRows * kCols * kLanes, 23, -100000, 100000);
  for (auto& v : acc) v |= 1;  // nonzero low bits, so a lost value cannot look like padding
  DeviceBuffer<int32_t> acc_dev(acc.size());
  DeviceBuffer<int8_t> out(kWidth * kHeight * kLanes);
  acc_dev.CopyFrom(acc);

  VTALoadBuffer2D(cmd_, acc_dev.data(), kRow0 * kCols + kCol0, kX, kY, kCols, kXBefore, kYBefore,
                  kXAfter, kYAfter, kSram, kAcc);
  StoreOut(kSram, out, kWidth * kHeight);
  VTASynchronize(cmd_, kNoCycleLimit);
  ASSERT_STREQ(VTAGetLastError(), "");

  std::vector<int8_t> result = out.CopyToHost();
  for (uint32_t y = 0; y < kHeight; ++y) {
    for (uint32_t x = 0; x < kWidth; ++x) {
      bool inside = y >= kYBefore && y < kYBefore + kY && x >= kXBefore && x < kXBefore + kX;
      for (int lane = 0; lane < kLanes; ++lane) {
        int32_t expected = 0;
        if (inside) {
          uint32_t element = (kRow0 + y - kYBefore) * kCols + kCol0 + x - kXBefore;
          expected = acc[element * kLanes + lane];
        }
        ASSERT_EQ(result[(y * kWidth + x) * kLanes + lane], static_cast<int8_t>(expected))
            << "footprint (" << y << ", " << x << ") lane " << lane;
      }
    }
  }
}

// A padded input load observed through a GEMM with the identity weight: each output
// element equals the input element (zero in the padding).
TEST_F(Runtime, PaddedInputLoadThroughIdentityGemm) {
  constexpr uint32_t kCols = 5;
  constexpr uint32_t kY = 2, kX = 3;
  constexpr uint32_t kYBefore = 1, kYAfter = 2, kXBefore = 2, kXAfter = 1;
  constexpr uint32_t kWidth = kXBefore + kX + kXAfter;
  constexpr uint32_t kElements = (kYBefore + kY + kYAfter) * kWidth;
  std::vector<int8_t> inp = RandomInt8(kY * kCols * kLanes, 24);
  std::vector<int8_t> identity(kLanes * kLanes, 0);
  for (int i = 0; i < kLanes; ++i) identity[i * kLanes + i] = 1;
  DeviceBuffer<int8_t> inp_dev(inp.size());
  DeviceBuffer<int8_t> wgt_dev(identity.size());
  DeviceBuffer<int8_t> out(kElements * kLanes);
  inp_dev.CopyFrom(inp);
  wgt_dev.CopyFrom(identity);

  static void* reset_site = nullptr;
  static void* gemm_site = nullptr;
  VTALoadBuffer2D(cmd_, inp_dev.data(), 1, kX, kY, kCols, kXBefore, kYBefore, kXAfter, kYAfter, 0,
                  kInp);
  VTALoadBuffer2D(cmd_, wgt_dev.data(), 0, 1, 1, 1, 0, 0, 0, 0, 0, kWgt);
  VTADepPush(cmd_, 1, 2);
  VTADepPop(cmd_, 1, 2);
  PushKernel(&reset_site, GemmKernel(true).Loop(kElements, 1, 0, 0).Uop(0, 0, 0));
  PushKernel(&gemm_site, GemmKernel().Loop(kElements, 1, 1, 0).Uop(0, 0, 0));
  StoreOut(0, out, kElements);
  VTASynchronize(cmd_, kNoCycleLimit);
  ASSERT_STREQ(VTAGetLastError(), "");

  std::vector<int8_t> result = out.CopyToHost();
  for (uint32_t e = 0; e < kElements; ++e) {
    uint32_t y = e / kWidth, x = e % kWidth;
    bool inside = y >= kYBefore && y < kYBefore + kY && x >= kXBefore && x < kXBefore + kX;
    for (int lane = 0; lane < kLanes; ++lane) {
      int8_t expected = 0;
      if (inside) expected = inp[((y - kYBefore) * kCols + 1 + x - kXBefore) * kLanes + lane];
      ASSERT_EQ(result[e * kLanes + lane], expected) << "element " << e << " lane " << lane;
    }
  }
  EXPECT_EQ(LastRun(cmd_).report.counters.inp_load_nbytes, uint64_t{kX * kY * kLanes});
}

// ---- Micro-kernel cache.

int generated_kernels = 0;

int CountingAddKernel(void* signature) {
  ++generated_kernels;
  int32_t imm = *static_cast<int32_t*>(signature);
  VTAUopLoopBegin(4, 1, 1, 0);
  VTAUopPush(1, 0, 0, 0, 0, 2, 1, imm);
  VTAUopPush(1, 0, 4, 4, 0, 2, 1, imm);
  VTAUopLoopEnd();
  return 0;
}

// 8 accumulator elements of 100 in DRAM, and room for them as output; no kernel generated yet.
struct CacheTestBuffers {
  DeviceBuffer<int32_t> acc{8 * kLanes};
  DeviceBuffer<int8_t> out{8 * kLanes};
  CacheTestBuffers() {
    acc.CopyFrom(std::vector<int32_t>(8 * kLanes, 100));
    generated_kernels = 0;
  }
};

TEST_F(Runtime, KernelsAreGeneratedOncePerCallSiteAndSignatureAndStayResident) {
  static void* site = nullptr;
  static void* other_site = nullptr;
  CacheTestBuffers buffers;
  DeviceBuffer<int32_t>& acc_dev = buffers.acc;
  DeviceBuffer<int8_t>& out = buffers.out;
  int32_t one = 1;
  int32_t five = 5;

  VTALoadBuffer2D(cmd_, acc_dev.data(), 0, 8, 1, 8, 0, 0, 0, 0, 0, kAcc);
  EXPECT_EQ(VTAPushALUOp(&site, CountingAddKernel, &one, sizeof(one)), 0);
  EXPECT_EQ(VTAPushALUOp(&site, CountingAddKernel, &one, sizeof(one)), 0);
  EXPECT_EQ(generated_kernels, 1);
  EXPECT_EQ(VTAPushALUOp(&site, CountingAddKernel, &five, sizeof(five)), 0);
  EXPECT_EQ(generated_kernels, 2);
  EXPECT_EQ(VTAPushALUOp(&other_site, CountingAddKernel, &one, sizeof(one)), 0);
  EXPECT_EQ(generated_kernels, 3);
  StoreOut(0, out, 8);
  VTASynchronize(cmd_, kNoCycleLimit);
  ASSERT_STREQ(VTAGetLastError(), "");
  for (int8_t v : out.CopyToHost()) EXPECT_EQ(v, 100 + 1 + 1 + 5 + 1);
  // Three distinct kernels of two micro-ops each were loaded, each once.
  EXPECT_EQ(LastRun(cmd_).report.counters.uop_load_nbytes, 3 * 2 * sizeof(uint32_t));

  // Next program: the kernels are still resident, nothing is generated or loaded.
  VTALoadBuffer2D(cmd_, acc_dev.data(), 0, 8, 1, 8, 0, 0, 0, 0, 0, kAcc);
  EXPECT_EQ(VTAPushALUOp(&site, CountingAddKernel, &five, sizeof(five)), 0);
  StoreOut(0, out, 8);
  VTASynchronize(cmd_, kNoCycleLimit);
  ASSERT_STREQ(VTAGetLastError(), "");
  EXPECT_EQ(generated_kernels, 3);
  EXPECT_EQ(LastRun(cmd_).report.counters.uop_load_nbytes, 0u);
  for (int8_t v : out.CopyToHost()) EXPECT_EQ(v, 105);
}

// A module unloaded and another loaded at the same address: the new code's slot is null again,
// and its call site must not find the old one's kernels (the cache keys on the id kept in the
// slot, not on the slot's address).
TEST_F(Runtime, ACallSiteWhoseSlotIsNullAgainIsANewCallSite) {
  static void* site = nullptr;
  CacheTestBuffers buffers;
  DeviceBuffer<int8_t>& out = buffers.out;
  int32_t one = 1;
  VTALoadBuffer2D(cmd_, buffers.acc.data(), 0, 8, 1, 8, 0, 0, 0, 0, 0, kAcc);
  EXPECT_EQ(VTAPushALUOp(&site, CountingAddKernel, &one, sizeof(one)), 0);
  EXPECT_NE(site, nullptr);
  site = nullptr;  // what a module loaded at the same address starts with
  EXPECT_EQ(VTAPushALUOp(&site, CountingAddKernel, &one, sizeof(one)), 0);
  EXPECT_EQ(generated_kernels, 2);
  StoreOut(0, out, 8);
  VTASynchronize(cmd_, kNoCycleLimit);
  ASSERT_STREQ(VTAGetLastError(), "");
  for (int8_t v : out.CopyToHost()) EXPECT_EQ(v, 100 + 1 + 1);
}

int LargeKernel(void* signature) {
  uint32_t base = *static_cast<uint32_t*>(signature);
  for (uint32_t i = 0; i < 5000; ++i) VTAUopPush(1, 0, base + i % 64, base + i % 64, 0, 2, 1, 0);
  return 0;
}

// Two 5000-micro-op kernels do not fit the 8192-entry micro-op buffer together: each push
// of the one not resident reloads it.
TEST_F(Runtime, KernelsThatDoNotFitTogetherEvictEachOther) {
  static void* site = nullptr;
  uint32_t first = 0;
  uint32_t second = 64;
  ASSERT_EQ(RuntimeConfig().uop_buff_depth(), 8192);
  EXPECT_EQ(VTAPushALUOp(&site, LargeKernel, &first, sizeof(first)), 0);
  EXPECT_EQ(VTAPushALUOp(&site, LargeKernel, &second, sizeof(second)), 0);
  EXPECT_EQ(VTAPushALUOp(&site, LargeKernel, &first, sizeof(first)), 0);
  EXPECT_EQ(VTAPushALUOp(&site, LargeKernel, &first, sizeof(first)), 0);
  VTASynchronize(cmd_, kNoCycleLimit);
  ASSERT_STREQ(VTAGetLastError(), "");
  EXPECT_EQ(LastRun(cmd_).report.counters.uop_load_nbytes, 3 * 5000 * sizeof(uint32_t));
  EXPECT_EQ(LastRun(cmd_).report.counters.alu_counter, 4 * 5000u);
}

// ---- Dependency flags and the synchronization epilogue (the streams TVM's runtime builds).

TEST_F(Runtime, TokenPushesAndPopsBecomeInstructionFlags) {
  static void* site = nullptr;
  DeviceBuffer<int8_t> inp(kLanes);
  VTALoadBuffer2D(cmd_, inp.data(), 0, 1, 1, 1, 0, 0, 0, 0, 0, kInp);  // #0 load stage
  VTADepPush(cmd_, 1, 2);                                              // -> #0 push_next
  VTADepPop(cmd_, 1, 2);                                               // pending on compute
  PushKernel(&site, GemmKernel(true).Uop(0, 0, 0));  // #1 LOAD UOP (pops), #2 GEMM
  VTADepPush(cmd_, 2, 1);                            // -> #2 push_prev
  VTADepPush(cmd_, 2, 1);                            // #3 compute no-op
  VTADepPop(cmd_, 2, 1);
  VTADepPop(cmd_, 2, 1);  // #4 load no-op for the first pop
  ASSERT_STREQ(VTAGetLastError(), "");

  const std::vector<Insn>& pending = PendingInstructions(cmd_);
  ASSERT_EQ(pending.size(), 5u);
  EXPECT_EQ(GetDeps(pending[0]), (DepFlags{false, false, false, true}));
  const auto& uop_load = std::get<MemInsn>(pending[1]);
  EXPECT_EQ(uop_load.memory_type, MemId::kUop);
  EXPECT_EQ(uop_load.x_size, 1u);
  EXPECT_EQ(uop_load.deps, (DepFlags{true, false, false, false}));
  EXPECT_EQ(GetDeps(pending[2]), (DepFlags{false, false, true, false}));
  const auto& compute_noop = std::get<MemInsn>(pending[3]);
  EXPECT_EQ(compute_noop.x_size, 0u);
  EXPECT_EQ(compute_noop.memory_type, MemId::kUop);
  EXPECT_EQ(compute_noop.deps, (DepFlags{false, false, true, false}));
  const auto& load_noop = std::get<MemInsn>(pending[4]);
  EXPECT_EQ(load_noop.memory_type, MemId::kInp);
  EXPECT_EQ(load_noop.deps, (DepFlags{false, true, false, false}));

  VTASynchronize(cmd_, kNoCycleLimit);
  ASSERT_STREQ(VTAGetLastError(), "");
  const std::vector<Insn>& program = LastRun(cmd_).program;
  // #5 load no-op (the held pop), #6 store no-op pushing to compute, #7 load no-op pushing
  // to compute, #8 compute no-op popping both, #9 FINISH.
  ASSERT_EQ(program.size(), 10u);
  EXPECT_EQ(GetDeps(program[5]), (DepFlags{false, true, false, false}));
  EXPECT_EQ(std::get<MemInsn>(program[6]).opcode, Opcode::kStore);
  EXPECT_EQ(GetDeps(program[6]), (DepFlags{false, false, true, false}));
  EXPECT_EQ(GetDeps(program[7]), (DepFlags{false, false, false, true}));
  EXPECT_EQ(std::get<MemInsn>(program[8]).memory_type, MemId::kUop);
  EXPECT_EQ(GetDeps(program[8]), (DepFlags{true, true, false, false}));
  EXPECT_EQ(GetOpcode(program[9]), Opcode::kFinish);
  EXPECT_EQ(GetDeps(program[9]), DepFlags{});
  EXPECT_TRUE(PendingInstructions(cmd_).empty());
}

// A program that leaves a token in a queue (the blocked-GEMM tutorial leaves one
// store -> compute token) is drained by the synchronization, so FINISH waits for the store.
TEST_F(Runtime, SynchronizeDrainsTokensTheProgramLeavesBehind) {
  std::vector<int32_t> acc = RandomInt32(kLanes, 25, -100, 100);
  DeviceBuffer<int32_t> acc_dev(acc.size());
  DeviceBuffer<int8_t> out(kLanes);
  acc_dev.CopyFrom(acc);
  VTADepPush(cmd_, 3, 2);  // the tutorial's initial "accumulator free" token, never popped
  VTALoadBuffer2D(cmd_, acc_dev.data(), 0, 1, 1, 1, 0, 0, 0, 0, 0, kAcc);
  StoreOut(0, out, 1);
  VTADepPush(cmd_, 3, 2);
  VTASynchronize(cmd_, kNoCycleLimit);
  ASSERT_STREQ(VTAGetLastError(), "");
  std::vector<int8_t> result = out.CopyToHost();
  for (int lane = 0; lane < kLanes; ++lane) EXPECT_EQ(result[lane], acc[lane]);
}

// ---- Reports.

TEST_F(Runtime, LastRunReportsCountersAndCycles) {
  DeviceBuffer<int8_t> inp(4 * kLanes);
  VTALoadBuffer2D(cmd_, inp.data(), 0, 4, 1, 4, 0, 0, 0, 0, 0, kInp);
  VTASynchronize(cmd_, kNoCycleLimit);
  ASSERT_STREQ(VTAGetLastError(), "");
  const SimReport& report = LastRun(cmd_).report;
  EXPECT_EQ(report.counters.inp_load_nbytes, uint64_t{4 * kLanes});
  EXPECT_EQ(report.counters.gemm_counter, 0u);
  EXPECT_GE(report.timing.load_busy_cycles, kDramLatencyCycles);
  EXPECT_GE(report.timing.total_cycles, report.timing.load_busy_cycles);
  EXPECT_NE(report.ToJson().find("\"inp_load_nbytes\": 64"), std::string::npos) << report.ToJson();
}

// ---- Debug mode and the device configuration.

TEST_F(Runtime, DebugModeDumpsTheProgramAndItsMicroOps) {
  VTASetDebugMode(cmd_, VTA_DEBUG_DUMP_INSN | VTA_DEBUG_DUMP_UOP);
  ASSERT_STREQ(VTAGetLastError(), "");
  DeviceBuffer<int8_t> inp(kLanes);
  static void* handle = nullptr;
  VTALoadBuffer2D(cmd_, inp.data(), 0, 1, 1, 1, 0, 0, 0, 0, 0, kInp);
  ASSERT_EQ(PushKernel(&handle, GemmKernel(/*reset=*/true).Uop(3, 0, 0)), 0) << VTAGetLastError();
  ::testing::internal::CaptureStderr();
  VTASynchronize(cmd_, kNoCycleLimit);
  std::string dump = ::testing::internal::GetCapturedStderr();
  ASSERT_STREQ(VTAGetLastError(), "");
  EXPECT_NE(dump.find("VTA micro-ops loaded by this program (1):\n  0: dst=3 src=0 wgt=0"),
            std::string::npos)
      << dump;
  EXPECT_NE(dump.find("LOAD INP"), std::string::npos) << dump;
  EXPECT_NE(dump.find("GEMM reset"), std::string::npos) << dump;
  EXPECT_NE(dump.find("FINISH"), std::string::npos) << dump;

  VTASetDebugMode(cmd_, 1 << 12);
  EXPECT_NE(std::string(VTAGetLastError()).find("VTASetDebugMode: unknown flag bits 0x1000"),
            std::string::npos)
      << VTAGetLastError();
}

// The serial-tutorial GEMM with hazard checking on, and forced serialization: the same result,
// the serialized run no faster.
TEST_F(Runtime, HazardCheckingAndForcedSerializationKeepTheResult) {
  DeviceBuffer<int8_t> inp(kLanes), out(kLanes);
  DeviceBuffer<int8_t> wgt(kLanes * kLanes);
  inp.CopyFrom(RandomInt8(kLanes, 1));
  wgt.CopyFrom(RandomInt8(kLanes * kLanes, 2));
  static void* reset_handle = nullptr;
  static void* gemm_handle = nullptr;
  auto run = [&](int flags) {
    VTASetDebugMode(cmd_, flags);
    VTALoadBuffer2D(cmd_, inp.data(), 0, 1, 1, 1, 0, 0, 0, 0, 0, kInp);
    VTALoadBuffer2D(cmd_, wgt.data(), 0, 1, 1, 1, 0, 0, 0, 0, 0, kWgt);
    VTADepPush(cmd_, 1, 2);
    VTADepPop(cmd_, 1, 2);
    PushKernel(&reset_handle, GemmKernel(/*reset=*/true).Uop(0, 0, 0));
    PushKernel(&gemm_handle, GemmKernel().Uop(0, 0, 0));
    StoreOut(0, out, 1);
    VTASynchronize(cmd_, kNoCycleLimit);
    EXPECT_STREQ(VTAGetLastError(), "");
    return std::make_pair(out.CopyToHost(), LastRun(cmd_).report.timing.total_cycles);
  };
  run(0);  // loads the kernels: the runs below find them resident
  auto [plain, plain_cycles] = run(0);
  auto [checked, checked_cycles] = run(VTA_DEBUG_CHECK_HAZARDS);
  auto [serial, serial_cycles] = run(VTA_DEBUG_FORCE_SERIAL | VTA_DEBUG_CHECK_HAZARDS);
  EXPECT_EQ(plain, checked);
  EXPECT_EQ(plain, serial);
  EXPECT_EQ(plain_cycles, checked_cycles);
  EXPECT_GE(serial_cycles, plain_cycles);
}

TEST_F(Runtime, Acc8BitLoadsFillTheAccumulatorFromBytes) {
  DeviceBuffer<int8_t> bias(kLanes), out(kLanes);
  std::vector<int8_t> values = RandomInt8(kLanes, 7);
  bias.CopyFrom(values);
  VTALoadBuffer2D(cmd_, bias.data(), 0, 1, 1, 1, 0, 0, 0, 0, 0, 5);
  StoreOut(0, out, 1);
  VTASynchronize(cmd_, kNoCycleLimit);
  ASSERT_STREQ(VTAGetLastError(), "");
  EXPECT_EQ(out.CopyToHost(), values);
  EXPECT_EQ(LastRun(cmd_).report.counters.acc_load_nbytes, uint64_t{kLanes});
}

// The configuration can change only while no thread holds a command queue.
TEST(RuntimeConfigChoice, SetWhileNoQueueLives) {
  VTARuntimeShutdown();
  VTAConfig small = VTAConfig::Default();
  small.log_acc_buff_size = 16;
  SetRuntimeConfig(small);
  EXPECT_EQ(RuntimeConfig(), small);
  VTACommandHandle cmd = VTATLSCommandHandle();
  ASSERT_NE(cmd, nullptr);
  try {
    SetRuntimeConfig(VTAConfig::Default());
    ADD_FAILURE() << "SetRuntimeConfig succeeded while a command queue lived";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("1 thread(s) hold a VTA command queue"),
              std::string::npos)
        << error.what();
  }
  // The queue's device has the chosen accumulator depth, 1024 elements instead of 2048.
  {
    DeviceBuffer<int32_t> acc(kLanes);
    VTALoadBuffer2D(cmd, acc.data(), 0, 1, 1, 1, 0, 0, 0, 0, 1024, kAcc);
    VTASynchronize(cmd, kNoCycleLimit);
    EXPECT_NE(std::string(VTAGetLastError()).find("accumulator buffer depth 1024"),
              std::string::npos)
        << VTAGetLastError();
  }
  VTARuntimeShutdown();
  SetRuntimeConfig(VTAConfig::Default());
  EXPECT_EQ(RuntimeConfig(), VTAConfig::Default());
}

// ---- Device memory and the device registry.

TEST_F(Runtime, BufferCopiesHonourOffsetsAndDirections) {
  DeviceBuffer<uint8_t> a(64);
  DeviceBuffer<uint8_t> b(64);
  std::vector<uint8_t> host(64);
  for (int i = 0; i < 64; ++i) host[i] = static_cast<uint8_t>(i);
  VTABufferCopy(host.data(), 8, a.data(), 16, 32, VTA_MEMCPY_H2D);
  VTABufferCopy(a.data(), 16, b.data(), 0, 32, VTA_MEMCPY_D2D);
  std::vector<uint8_t> back(64, 0xFF);
  VTABufferCopy(b.data(), 4, back.data(), 1, 8, VTA_MEMCPY_D2H);
  ASSERT_STREQ(VTAGetLastError(), "");
  EXPECT_EQ(back[0], 0xFF);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(back[1 + i], 8 + 4 + i);
  EXPECT_EQ(back[9], 0xFF);
  EXPECT_EQ(VTABufferCPUPtr(cmd_, a.data()), a.data());
  VTAWriteBarrier(cmd_, a.data(), 8, 0, 64);
  VTAReadBarrier(cmd_, a.data(), 32, 0, 16);
  ASSERT_STREQ(VTAGetLastError(), "");
}

TEST_F(Runtime, VtaIsRegisteredAsTheExtDevDevice) {
  EXPECT_EQ(runtime::DeviceName(kDLExtDev), "vta");
  runtime::DeviceAPI* api = runtime::GetDeviceAPI(kDLExtDev);
  const DLDevice vta{kDLExtDev, 0};
  const DLDevice cpu{kDLCPU, 0};
  auto* acc = static_cast<int32_t*>(api->AllocDataSpace(vta, kLanes * sizeof(int32_t), 64));
  auto* out = static_cast<int8_t*>(api->AllocDataSpace(vta, kLanes, 64));
  std::vector<int32_t> values = RandomInt32(kLanes, 26, -1000, 1000);
  api->CopyDataFromTo(values.data(), 0, acc, 0, values.size() * sizeof(int32_t), cpu, vta);
  // A program queued through the C API runs when the device stream is synchronized.
  VTALoadBuffer2D(cmd_, acc, 0, 1, 1, 1, 0, 0, 0, 0, 0, kAcc);
  VTADepPush(cmd_, 2, 3);
  VTADepPop(cmd_, 2, 3);
  VTAStoreBuffer2D(cmd_, 0, kOut, out, 0, 1, 1, 1);
  api->StreamSync(vta);
  std::vector<int8_t> result(kLanes);
  runtime::CopyDataFromTo(out, 0, result.data(), 0, kLanes, vta, cpu);
  for (int lane = 0; lane < kLanes; ++lane) {
    EXPECT_EQ(result[lane], static_cast<int8_t>(values[lane]));
  }
  EXPECT_THROW(api->AllocDataSpace(vta, 16, 8192), Error);
  EXPECT_THROW(api->CopyDataFromTo(values.data(), 0, values.data(), 0, 4, cpu, vta), Error);
  api->FreeDataSpace(vta, acc);
  api->FreeDataSpace(vta, out);
}

// ---- Errors: misuse is reported through VTAGetLastError, never thrown across the C API;
// malformed programs fail at VTASynchronize with the simulator's message naming the
// instruction index; the queue then starts the next program clean.

// A short program that must work after any of the errors below.
void ExpectQueueStillWorks(VTACommandHandle cmd) {
  std::vector<int32_t> acc = RandomInt32(kLanes, 27, -100, 100);
  DeviceBuffer<int32_t> acc_dev(acc.size());
  DeviceBuffer<int8_t> out(kLanes);
  acc_dev.CopyFrom(acc);
  VTALoadBuffer2D(cmd, acc_dev.data(), 0, 1, 1, 1, 0, 0, 0, 0, 0, kAcc);
  VTADepPush(cmd, 2, 3);
  VTADepPop(cmd, 2, 3);
  VTAStoreBuffer2D(cmd, 0, kOut, out.data(), 0, 1, 1, 1);
  VTASynchronize(cmd, kNoCycleLimit);
  ASSERT_STREQ(VTAGetLastError(), "");
  std::vector<int8_t> result = out.CopyToHost();
  for (int lane = 0; lane < kLanes; ++lane) EXPECT_EQ(result[lane], acc[lane]);
}

TEST_F(Runtime, OutOfRangeSramIndexFailsAtSynchronizeNamingTheInstruction) {
  DeviceBuffer<int8_t> inp(4 * kLanes);
  const auto depth = static_cast<uint32_t>(RuntimeConfig().inp_buff_depth());
  VTALoadBuffer2D(cmd_, inp.data(), 0, 4, 1, 4, 0, 0, 0, 0, depth - 2, kInp);  // #0
  ASSERT_STREQ(VTAGetLastError(), "");
  VTASynchronize(cmd_, kNoCycleLimit);
  ExpectLastError({"VTASynchronize: ", "instruction #0", "LOAD", std::to_string(depth)});
  ExpectQueueStillWorks(cmd_);
}

TEST_F(Runtime, OutOfRangeMicroOpIndexNamesTheGemmInstruction) {
  static void* site = nullptr;
  const auto depth = static_cast<uint32_t>(RuntimeConfig().wgt_buff_depth());
  // The loop walks the weight index past the end of the weight buffer.
  PushKernel(&site, GemmKernel().Loop(4, 0, 0, depth / 2).Uop(0, 0, 1));  // #0 uops, #1 GEMM
  ASSERT_STREQ(VTAGetLastError(), "");
  VTASynchronize(cmd_, kNoCycleLimit);
  ExpectLastError({"VTASynchronize: ", "instruction #1", "GEMM"});
  ExpectQueueStillWorks(cmd_);
}

TEST_F(Runtime, PopThatNoModuleFeedsDeadlocksNamingTheInstruction) {
  DeviceBuffer<int8_t> out(kLanes);
  VTADepPop(cmd_, 2, 3);  // the store waits for a compute result that is never announced
  VTAStoreBuffer2D(cmd_, 0, kOut, out.data(), 0, 1, 1, 1);  // #0
  ASSERT_STREQ(VTAGetLastError(), "");
  VTASynchronize(cmd_, kNoCycleLimit);
  ExpectLastError({"VTASynchronize: ", "deadlocks",
                   "instruction #0 (STORE OUT) in the store module", "compute->store"});
  ExpectQueueStillWorks(cmd_);
}

// An extra pop on compute consumes the token the synchronization epilogue sends, so the
// epilogue's own wait (#4, the no-op before FINISH) is the one that can never be served.
TEST_F(Runtime, UnbalancedComputePopDeadlocksTheEpilogue) {
  static void* site = nullptr;
  VTADepPop(cmd_, 1, 2);
  PushKernel(&site, AluKernel(AluOpcode::kAdd, true, 1).Uop(0, 0, 0));  // #0 uops, #1 ALU
  ASSERT_STREQ(VTAGetLastError(), "");
  VTASynchronize(cmd_, kNoCycleLimit);
  ExpectLastError({"VTASynchronize: ", "deadlocks", "instruction #4", "load->compute"});
  ExpectQueueStillWorks(cmd_);
}

TEST_F(Runtime, DramRangeOutsideTheBufferNamesTheInstruction) {
  DeviceBuffer<int8_t> inp(2 * kLanes);
  VTALoadBuffer2D(cmd_, inp.data(), 0, 1, 1, 1, 0, 0, 0, 0, 0, kInp);    // #0
  VTALoadBuffer2D(cmd_, inp.data(), 1, 2, 300, 2, 0, 0, 0, 0, 0, kInp);  // #1 runs past it
  VTASynchronize(cmd_, kNoCycleLimit);
  ExpectLastError({"VTASynchronize: ", "instruction #1"});
  ExpectQueueStillWorks(cmd_);
}

TEST_F(Runtime, MisusedQueueIdsAreRejectedAtTheCall) {
  EXPECT_EQ(VTADepPush(cmd_, 1, 3), -1);
  ExpectLastError({"VTADepPush(cmd, 1, 3)", "not neighbours"});
  EXPECT_EQ(VTADepPop(cmd_, 0, 2), -1);
  ExpectLastError({"VTADepPop(cmd, 0, 2)", "queue ids are 1 (load), 2 (compute) and 3 (store)"});
  EXPECT_EQ(VTADepPush(cmd_, 2, 2), -1);
  ExpectLastError({"same stage"});
  // The program is incomplete now: the next synchronize discards it, then all is well.
  VTASynchronize(cmd_, kNoCycleLimit);
  ExpectLastError({"VTASynchronize", "discarded", "VTADepPush(cmd, 1, 3)"});
  ExpectQueueStillWorks(cmd_);
}

TEST_F(Runtime, RecordingCallsOutsideAGeneratingFunctionAreErrors) {
  VTAUopPush(0, 0, 0, 0, 0, 0, 0, 0);
  ExpectLastError({"VTAUopPush", "outside a micro-kernel's generating function"});
  VTAUopLoopBegin(1, 0, 0, 0);
  ExpectLastError({"VTAUopLoopBegin", "outside"});
  VTAUopLoopEnd();
  ExpectLastError({"VTAUopLoopEnd", "outside"});
  VTASynchronize(cmd_, kNoCycleLimit);
  ExpectLastError({"discarded"});
}

int MixedModeKernel(void*) {
  VTAUopPush(0, 0, 0, 0, 0, 0, 0, 0);
  VTAUopPush(1, 0, 1, 1, 0, 2, 1, 3);
  return 0;
}

int FailingKernel(void*) { return 7; }

int ThreeLoopKernel(void*) {
  VTAUopLoopBegin(2, 0, 0, 0);
  VTAUopLoopBegin(2, 0, 0, 0);
  VTAUopLoopBegin(2, 0, 0, 0);
  VTAUopPush(0, 0, 0, 0, 0, 0, 0, 0);
  return 0;
}

int UnclosedLoopKernel(void*) {
  VTAUopLoopBegin(2, 1, 0, 0);
  VTAUopPush(0, 0, 0, 0, 0, 0, 0, 0);
  return 0;
}

TEST_F(Runtime, MalformedKernelsFailTheirPushAndAreNotCached) {
  static void* site = nullptr;
  EXPECT_EQ(VTAPushGEMMOp(&site, MixedModeKernel, nullptr, 0), -1);
  ExpectLastError({"VTAPushGEMMOp: recording the micro-kernel failed",
                   "micro-op 1 is ALU but the kernel's earlier micro-ops are GEMM"});
  EXPECT_EQ(VTAPushGEMMOp(&site, FailingKernel, nullptr, 0), -1);  // not served from cache
  ExpectLastError({"generating function returned 7"});
  static void* three_site = nullptr;
  EXPECT_EQ(VTAPushGEMMOp(&three_site, ThreeLoopKernel, nullptr, 0), -1);
  ExpectLastError({"at most 2 loops"});
  static void* unclosed_site = nullptr;
  EXPECT_EQ(VTAPushGEMMOp(&unclosed_site, UnclosedLoopKernel, nullptr, 0), -1);
  ExpectLastError({"left 1 micro-op loop(s) open"});
  // GEMM micro-ops pushed as an ALU op: when recorded, and when served from the cache.
  KernelSpec gemm = GemmKernel().Uop(0, 0, 0);
  static void* alu_site = nullptr;
  EXPECT_EQ(VTAPushALUOp(&alu_site, RecordKernelSpec, &gemm, sizeof(gemm)), -1);
  ExpectLastError({"VTAPushALUOp", "GEMM micro-kernel; use VTAPushGEMMOp"});
  static void* kind_site = nullptr;
  EXPECT_EQ(VTAPushGEMMOp(&kind_site, RecordKernelSpec, &gemm, sizeof(gemm)), 0);
  EXPECT_EQ(VTAPushALUOp(&kind_site, RecordKernelSpec, &gemm, sizeof(gemm)), -1);
  ExpectLastError({"VTAPushALUOp", "GEMM micro-kernel; use VTAPushGEMMOp"});
  static void* imm_site = nullptr;
  EXPECT_EQ(PushKernel(&imm_site, AluKernel(AluOpcode::kAdd, true, 40000).Uop(0, 0, 0)), -1);
  ExpectLastError({"immediate 40000 does not fit"});
  VTASynchronize(cmd_, kNoCycleLimit);
  ExpectLastError({"discarded"});
  ExpectQueueStillWorks(cmd_);
}

TEST_F(Runtime, FieldsThatDoNotFitTheInstructionNameTheCall) {
  DeviceBuffer<int8_t> inp(kLanes);
  VTALoadBuffer2D(cmd_, inp.data(), 0, 1, 1, 1, /*x_pad_before=*/16, 0, 0, 0, 0, kInp);
  ExpectLastError({"VTALoadBuffer2D: ", "16"});
  VTALoadBuffer2D(cmd_, inp.data(), 0, 1, 1, 1, 0, 0, 0, 0, 0, /*dst_memory_type=*/4);
  ExpectLastError({"VTALoadBuffer2D: destination memory type 4 cannot be loaded"});
  VTAStoreBuffer2D(cmd_, 0, kAcc, inp.data(), 0, 1, 1, 1);
  ExpectLastError({"VTAStoreBuffer2D: source memory type 3 cannot be stored"});
  std::vector<int8_t> host(kLanes);
  VTALoadBuffer2D(cmd_, host.data(), 0, 1, 1, 1, 0, 0, 0, 0, 0, kInp);
  ExpectLastError({"VTALoadBuffer2D: DRAM address", "is not VTA memory"});
  VTALoadBuffer2D(cmd_, inp.data() + 1, 0, 1, 1, 1, 0, 0, 0, 0, 0, kInp);
  ExpectLastError({"not aligned to the 16-byte elements of INP"});
  VTASynchronize(cmd_, kNoCycleLimit);
  ExpectLastError({"discarded"});
  ExpectQueueStillWorks(cmd_);
}

TEST_F(Runtime, ForeignHandlesAndBuffersAreRejected) {
  int not_a_queue = 0;
  EXPECT_EQ(VTADepPush(&not_a_queue, 1, 2), -1);
  ExpectLastError({"VTADepPush: command handle", "not the calling thread's command queue"});
  VTASynchronize(nullptr, kNoCycleLimit);
  ExpectLastError({"VTASynchronize: command handle"});
  // The failed push was building a program: the thread's program is discarded.
  VTASynchronize(cmd_, kNoCycleLimit);
  ExpectLastError({"discarded"});
  std::vector<uint8_t> host(16);
  VTABufferCopy(host.data(), 0, host.data(), 0, 16, VTA_MEMCPY_H2D);
  ExpectLastError(
      {"VTABufferCopy: the destination range of 16 bytes", "not inside one VTA buffer"});
  VTABufferCopy(host.data(), 0, host.data(), 0, 16, 0);
  ExpectLastError({"kind_mask 0"});
  VTABufferFree(host.data());
  ExpectLastError({"VTABufferFree", "is not a VTA buffer"});
  DeviceBuffer<uint8_t> small(16);
  VTABufferCopy(host.data(), 0, small.data(), 8, 16, VTA_MEMCPY_H2D);
  ExpectLastError({"destination range"});
  VTAReadBarrier(cmd_, small.data(), 32, 2, 3);
  ExpectLastError({"VTAReadBarrier: elements [2, 5) of 32 bits"});
  // Device-memory errors do not poison the program being built.
  ExpectQueueStillWorks(cmd_);
  // A handle dies with the thread's queue.
  VTACommandHandle old = cmd_;
  VTARuntimeShutdown();
  EXPECT_EQ(VTADepPush(old, 1, 2), -1);
  ExpectLastError({"not the calling thread's command queue"});
}

// Each thread builds and runs its own program on its own queue; buffers are shared.
TEST_F(Runtime, ThreadsHaveTheirOwnCommandQueues) {
  VTACommandHandle main_queue = cmd_;
  std::vector<std::thread> threads;
  std::vector<std::string> errors(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, main_queue, &errors] {
      VTACommandHandle own = VTATLSCommandHandle();
      EXPECT_NE(own, main_queue);
      VTADepPush(main_queue, 1, 2);
      std::string foreign = VTAGetLastError();
      EXPECT_NE(foreign.find("not the calling thread's command queue"), std::string::npos);
      VTASynchronize(own, kNoCycleLimit);  // discards the program the foreign push poisoned
      VTAClearLastError();
      for (int round = 0; round < 3; ++round) ExpectQueueStillWorks(own);
      errors[t] = VTAGetLastError();
      VTARuntimeShutdown();
    });
  }
  for (auto& thread : threads) thread.join();
  for (const auto& error : errors) EXPECT_EQ(error, "");
  EXPECT_STREQ(VTAGetLastError(), "");  // errors stay with the thread that made them
  ExpectQueueStillWorks(cmd_);
}

TEST_F(Runtime, ProgramsLongerThanWaitCyclesTimeOut) {
  DeviceBuffer<int8_t> inp(kLanes);
  VTALoadBuffer2D(cmd_, inp.data(), 0, 1, 1, 1, 0, 0, 0, 0, 0, kInp);
  VTASynchronize(cmd_, 10);
  ExpectLastError({"VTASynchronize: the program ran", "more than wait_cycles = 10"});
  // The run happened and was recorded.
  EXPECT_EQ(LastRun(cmd_).report.counters.inp_load_nbytes, uint64_t{kLanes});
  ExpectQueueStillWorks(cmd_);
}

TEST_F(Runtime, ThrowIfLastErrorRaisesTheRecordedMessage) {
  VTADepPush(cmd_, 1, 3);
  try {
    ThrowIfLastError();
    ADD_FAILURE() << "no exception";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("not neighbours"), std::string::npos);
  }
  EXPECT_STREQ(VTAGetLastError(), "");
  EXPECT_NO_THROW(ThrowIfLastError());
}

}  // namespace
}  // namespace loom::vta::testing
