// The VTA compiler end to end: schedules lowered by vta::lower, built for the vta target (host
// code calling the VTA runtime), run on the simulator with the hazard checker on, and checked
// bit for bit against a CPU reference.
#include "loom/target/build.h"
#include "loom/tir/transform.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <random>

#include "blocked_gemm.h"
#include "error_of.h"
#include "loom/ir/functor.h"
#include "loom/runtime/ndarray.h"
#include "loom/vta/compiler/passes.h"
#include "loom/vta/runtime.h"
#include "matrix_multiply.h"

namespace loom::vta {
namespace {

using loom::testing::ErrorOf;

const DLDevice kVta{kDLExtDev, 0};

runtime::NDArray RandomInt8(const std::vector<int64_t>& shape, unsigned seed) {
  runtime::NDArray host = runtime::NDArray::Empty(shape, DataType::Int(8), {kDLCPU, 0});
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> value(-128, 127);
  auto* data = static_cast<int8_t*>(host->data);
  for (int64_t i = 0; i < host.NumElements(); ++i) data[i] = static_cast<int8_t>(value(rng));
  runtime::NDArray device = runtime::NDArray::Empty(shape, DataType::Int(8), kVta);
  device.CopyFrom(host);
  return device;
}

std::vector<int8_t> ToHost(const runtime::NDArray& device) {
  runtime::NDArray host = runtime::NDArray::Empty(device.Shape(), device.dtype(), {kDLCPU, 0});
  host.CopyFrom(device);
  const auto* data = static_cast<const int8_t*>(host->data);
  return std::vector<int8_t>(data, data + host.NumElements());
}

class VtaBuild : public ::testing::Test {
 protected:
  void SetUp() override { VTASetDebugMode(VTATLSCommandHandle(), VTA_DEBUG_CHECK_HAZARDS); }
  void TearDown() override {
    VTASetDebugMode(VTATLSCommandHandle(), 0);
    VTAClearLastError();
  }
};

// The tutorial's matrix multiply: 4 output blocks by 4 input blocks.
TEST_F(VtaBuild, TheTutorialsMatrixMultiplyRunsOnTheSimulator) {
  example::TutorialGemm g(4, 4);
  PrimFunc f = lower(g.env, g.Scheduled(), {g.A, g.B, g.C}, "gemm");
  runtime::Module module = build(f, Target::Parse("vta"));
  runtime::NDArray a = RandomInt8({1, g.n, 1, 16}, 1), b = RandomInt8({g.m, g.n, 16, 16}, 2);
  runtime::NDArray c = runtime::NDArray::Empty({1, g.m, 1, 16}, DataType::Int(8), kVta);
  module.GetFunction("gemm")(a, b, c);
  ThrowIfLastError();
  std::vector<int8_t> av = ToHost(a), bv = ToHost(b), cv = ToHost(c);
  for (int co = 0; co < g.m; ++co) {
    for (int ci = 0; ci < 16; ++ci) {
      int32_t sum = 0;
      for (int ko = 0; ko < g.n; ++ko) {
        for (int ki = 0; ki < 16; ++ki) {
          sum += av[ko * 16 + ki] * bv[((co * g.n + ko) * 16 + ci) * 16 + ki];
        }
      }
      EXPECT_EQ(cv[co * 16 + ci], static_cast<int8_t>(sum)) << co << ", " << ci;
    }
  }
  const RunRecord& run = LastRun(VTATLSCommandHandle());
  EXPECT_EQ(run.report.counters.gemm_counter, uint64_t(g.m * g.n));
}

// The blocked matrix multiply, 16 output by 16 input blocks in tiles of 4 by 4, with and
// without two co-processor threads: bit-exact, the same work, and with threads the loads of
// one thread overlap the GEMMs of the other (fewer cycles in the simulator's cycle model).
TEST_F(VtaBuild, TheBlockedMatrixMultiplyRunsWithAndWithoutVirtualThreads) {
  example::BlockedGemm g(16, 16, 4, 4);
  runtime::NDArray data = RandomInt8({1, g.n, 1, 16}, 3);
  runtime::NDArray weight = RandomInt8({g.m, g.n, 16, 16}, 4);
  std::vector<int8_t> dv = ToHost(data), wv = ToHost(weight);
  std::vector<SimReport> reports;
  for (const std::string thread_tag : {"", "cthread"}) {
    PrimFunc f = lower(g.env, g.Scheduled(thread_tag), {g.data, g.weight, g.res}, "blocked");
    runtime::Module module = build(f, Target::Parse("vta"));
    runtime::NDArray res = runtime::NDArray::Empty({1, g.m, 1, 16}, example::kI8, kVta);
    module.GetFunction("blocked")(data, weight, res);
    ThrowIfLastError();
    std::vector<int8_t> rv = ToHost(res);
    for (int co = 0; co < g.m; ++co) {
      for (int ci = 0; ci < 16; ++ci) {
        int32_t sum = 0;
        for (int k = 0; k < g.n * 16; ++k) {
          sum += dv[k] * wv[((co * g.n + k / 16) * 16 + ci) * 16 + k % 16];
        }
        const int32_t expected = std::min(std::max(sum >> 8, 0), 127);
        ASSERT_EQ(rv[co * 16 + ci], expected) << thread_tag << " " << co << ", " << ci;
      }
    }
    reports.push_back(LastRun(VTATLSCommandHandle()).report);
  }
  EXPECT_EQ(reports[0].counters.gemm_counter, uint64_t(16 * 16));
  // The same data moved and computed (each thread's kernels are its own micro-ops).
  const SimCounters &serial = reports[0].counters, &threads = reports[1].counters;
  EXPECT_EQ(threads.inp_load_nbytes, serial.inp_load_nbytes);
  EXPECT_EQ(threads.wgt_load_nbytes, serial.wgt_load_nbytes);
  EXPECT_EQ(threads.out_store_nbytes, serial.out_store_nbytes);
  EXPECT_EQ(threads.gemm_counter, serial.gemm_counter);
  EXPECT_EQ(threads.alu_counter, serial.alu_counter);
  EXPECT_LT(reports[1].timing.total_cycles, reports[0].timing.total_cycles);
  std::cout << "blocked GEMM cycles: " << reports[0].timing.total_cycles << " (utilization "
            << reports[0].timing.gemm_utilization() << "), with virtual threads "
            << reports[1].timing.total_cycles << " (" << reports[1].timing.gemm_utilization()
            << ")\n";
}

// The tokens are what orders the queues: without them the hazard checker refuses the program,
// and the compiled function fails with the runtime's message.
class StripTokens : public StmtExprMutator {
 public:
  Stmt VisitStmt_(const EvaluateNode* op) override {
    const auto* call = op->value.as<CallNode>();
    if (call != nullptr && call->op.name() == "call_extern") {
      const std::string callee = call->args[0].as<StringImmNode>()->value;
      if (callee == "VTADepPush" || callee == "VTADepPop") return Evaluate(make_zero(kI32Type));
    }
    return StmtExprMutator::VisitStmt_(op);
  }
  const DataType kI32Type = DataType::Int(32);
};

TEST_F(VtaBuild, WithoutItsTokensAProgramFailsTheHazardCheck) {
  example::TutorialGemm g(4, 4);
  PrimFunc f = lower(g.env, g.Scheduled(), {g.A, g.B, g.C}, "gemm");
  f = tir::transform::WithBody(f, StripTokens().VisitStmt(f->body));
  runtime::Module module = build(f, Target::Parse("vta"));
  runtime::NDArray a = RandomInt8({1, g.n, 1, 16}, 1), b = RandomInt8({g.m, g.n, 16, 16}, 2);
  runtime::NDArray c = runtime::NDArray::Empty({1, g.m, 1, 16}, DataType::Int(8), kVta);
  const std::string message = ErrorOf([&] { module.GetFunction("gemm")(a, b, c); });
  EXPECT_NE(message.find("gemm: the VTA runtime failed: "), std::string::npos) << message;
  EXPECT_NE(message.find("hazard"), std::string::npos) << message;
  // The error was taken: the next program starts clean.
  EXPECT_STREQ(VTAGetLastError(), "");
}

TEST_F(VtaBuild, TensorsMustBeOnTheVtaDevice) {
  example::TutorialGemm g(2, 2);
  runtime::Module module =
      build(lower(g.env, g.Scheduled(), {g.A, g.B, g.C}, "gemm"), Target::Parse("vta"));
  const DLDevice cpu{kDLCPU, 0};
  runtime::NDArray a = runtime::NDArray::Empty({1, g.n, 1, 16}, DataType::Int(8), cpu);
  runtime::NDArray b = runtime::NDArray::Empty({g.m, g.n, 16, 16}, DataType::Int(8), kVta);
  runtime::NDArray c = runtime::NDArray::Empty({1, g.m, 1, 16}, DataType::Int(8), kVta);
  EXPECT_NE(ErrorOf([&] { module.GetFunction("gemm")(a, b, c); })
                .find("gemm: argument 0 ('A') must be on device 'vta' (device type 12), got "
                      "device type 1"),
            std::string::npos);
}

// A stage in an on-chip scope that no pragma or intrinsic turns into instructions: the host
// cannot reach the buffer.
TEST_F(VtaBuild, AnOnChipStageLeftToTheHostIsAnError) {
  example::TutorialGemm g(2, 2);
  const std::string message = ErrorOf(
      [&] { lower(g.env, g.Scheduled({.dma = false}), {g.A, g.B, g.C}, "gemm"); });
  EXPECT_NE(message.find("the host would access on-chip buffer 'A_buf' (local.inp_buffer)"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("a dma_copy pragma on copies"), std::string::npos) << message;
}

}  // namespace
}  // namespace loom::vta
