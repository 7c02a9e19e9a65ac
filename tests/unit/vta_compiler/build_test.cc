// The VTA compiler end to end: schedules lowered by vta::lower, built for the vta target (host
// code calling the VTA runtime), run on the simulator with the hazard checker on, and checked
// bit for bit against a CPU reference.
#include <gtest/gtest.h>

#include <iostream>

#include "blocked_gemm.h"
#include "error_of.h"
#include "hazard_checked_test.h"
#include "loom/ir/functor.h"
#include "loom/tir/transform.h"
#include "matrix_multiply.h"
#include "vta_configs.h"
#include "vta_example.h"

namespace loom::vta {
namespace {

using example::kVta;
using example::ShapeOf;
using example::Values;
using loom::testing::ErrorOf;

runtime::NDArray RandomOnDevice(const te::Tensor& tensor, unsigned seed) {
  return example::ToDevice(example::RandomInt8(ShapeOf(tensor), -128, 127, seed));
}

std::vector<int8_t> ToHost(const runtime::NDArray& device) {
  runtime::NDArray host = example::ToHost(device);
  return std::vector<int8_t>(Values(host), Values(host) + host.NumElements());
}

class VtaBuild : public testing::HazardCheckedTest {
 protected:
  // The tutorial's matrix multiply built for vta and run; its result against the reference.
  static void RunTutorialGemm(const example::TutorialGemm& g) {
    runtime::Module module =
        build(lower(g.env, g.Scheduled(), {g.A, g.B, g.C}, "gemm"), Target::Parse("vta"));
    runtime::NDArray a = RandomOnDevice(g.A, 1), b = RandomOnDevice(g.B, 2);
    runtime::NDArray c = runtime::NDArray::Empty(ShapeOf(g.C), g.env.out_dtype(), kVta);
    module.GetFunction("gemm")(a, b, c);
    ThrowIfLastError();
    std::vector<int8_t> av = ToHost(a), bv = ToHost(b);
    EXPECT_EQ(ToHost(c), g.Reference(av.data(), bv.data()));
    const RunRecord& run = LastRun(VTATLSCommandHandle());
    EXPECT_EQ(run.report.counters.gemm_counter, uint64_t(g.m * g.n));  // one per micro-op
  }
};

// The tutorial's matrix multiply: 4 output blocks by 4 input blocks.
TEST_F(VtaBuild, TheTutorialsMatrixMultiplyRunsOnTheSimulator) {
  RunTutorialGemm(example::TutorialGemm(4, 4));
}

// The same algorithm and schedule on a core of batch 2, blocks of 8 and 16-bit accumulators,
// which the runtime's device then has too.
TEST_F(VtaBuild, TheMatrixMultiplyRunsOnANonDefaultCore) {
  VTARuntimeShutdown();
  SetRuntimeConfig(loom::testing::Batch2Block8Config());
  VTASetDebugMode(VTATLSCommandHandle(), VTA_DEBUG_CHECK_HAZARDS);
  RunTutorialGemm(example::TutorialGemm(6, 5, loom::testing::Batch2Block8Config()));
  VTARuntimeShutdown();
  SetRuntimeConfig(VTAConfig::Default());
}

// The blocked matrix multiply, 16 output by 16 input blocks in tiles of 4 by 4, with and
// without two co-processor threads: bit-exact, the same work, and with threads the loads of
// one thread overlap the GEMMs of the other (fewer cycles in the simulator's cycle model).
TEST_F(VtaBuild, TheBlockedMatrixMultiplyRunsWithAndWithoutVirtualThreads) {
  example::BlockedGemm g(16, 16, 4, 4);
  runtime::NDArray data = RandomOnDevice(g.data, 3), weight = RandomOnDevice(g.weight, 4);
  std::vector<int8_t> dv = ToHost(data), wv = ToHost(weight);
  std::vector<SimReport> reports;
  for (const std::string thread_tag : {"", "cthread"}) {
    PrimFunc f = lower(g.env, g.Scheduled(thread_tag), {g.data, g.weight, g.res}, "blocked");
    runtime::Module module = build(f, Target::Parse("vta"));
    runtime::NDArray res = runtime::NDArray::Empty(ShapeOf(g.res), example::kI8, kVta);
    module.GetFunction("blocked")(data, weight, res);
    ThrowIfLastError();
    EXPECT_EQ(ToHost(res), g.Reference(dv.data(), wv.data())) << thread_tag;
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
  runtime::NDArray a = RandomOnDevice(g.A, 1), b = RandomOnDevice(g.B, 2);
  runtime::NDArray c = runtime::NDArray::Empty(ShapeOf(g.C), DataType::Int(8), kVta);
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
  runtime::NDArray a = runtime::NDArray::Empty(ShapeOf(g.A), DataType::Int(8), example::kCpu);
  runtime::NDArray b = runtime::NDArray::Empty(ShapeOf(g.B), DataType::Int(8), kVta);
  runtime::NDArray c = runtime::NDArray::Empty(ShapeOf(g.C), DataType::Int(8), kVta);
  EXPECT_NE(ErrorOf([&] { module.GetFunction("gemm")(a, b, c); })
                .find("gemm: argument 0 ('A') must be on device 'vta' (device type 12), got "
                      "device type 1"),
            std::string::npos);
}

// A stage in an on-chip scope that no pragma or intrinsic turns into instructions: the host
// cannot reach the buffer.
TEST_F(VtaBuild, AnOnChipStageLeftToTheHostIsAnError) {
  example::TutorialGemm g(2, 2);
  const std::string message = ErrorOf([&] {
    lower(g.env, g.Scheduled({.dma = false, .tensorize = false}), {g.A, g.B, g.C}, "gemm");
  });
  EXPECT_NE(message.find("the host would access on-chip buffer 'C_buf' (local.acc_buffer)"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("a dma_copy pragma on copies"), std::string::npos) << message;
}

// Host computation among VTA work would run before the device does (at VTASynchronize): here
// the copies left to the host in the loop that also runs the GEMM.
TEST_F(VtaBuild, HostComputationAfterVtaWorkIsAnError) {
  example::TutorialGemm g(2, 2);
  std::string message = ErrorOf([&] {
    lower(g.env, g.Scheduled({.dma = false}), {g.A, g.B, g.C}, "gemm");
  });
  EXPECT_NE(message.find("follows VTA work in a loop that holds VTA work; the device runs a "
                         "function's VTA work only when the function ends (at VTASynchronize)"),
            std::string::npos)
      << message;
}

// Co-processor work under a parallel loop would be queued on each worker's own command queue.
TEST_F(VtaBuild, VtaWorkUnderAParallelLoopIsAnError) {
  example::TutorialGemm g(4, 2);
  te::Schedule s = g.Scheduled({.dma = false});
  s[g.A_buf].pragma(s[g.A_buf]->leaf_iter_vars[0], Environment::kDmaCopy);
  s[g.B_buf].pragma(s[g.B_buf]->leaf_iter_vars[0], Environment::kDmaCopy);
  te::Stage c = s[g.C];
  auto [outer, inner] = c.split(c->leaf_iter_vars[1], 2);
  c.parallel(outer);
  c.pragma(inner, Environment::kDmaCopy);
  s[g.C_buf].compute_at(c, outer);
  const std::string message = ErrorOf([&] { lower(g.env, s, {g.A, g.B, g.C}, "gemm"); });
  EXPECT_NE(message.find("VTA co-processor work inside the non-serial loop over 'j.outer' "
                         "(parallel): one host thread drives the device's queues"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace loom::vta
