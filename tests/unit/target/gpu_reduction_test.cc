// Cross-thread reductions on the GPU targets: reduction loops bound to threadIdx, combined
// across the block through shared memory (OpenCL; CUDA where a reduction is not warp-shaped)
// or warp shuffles (CUDA), compared with the same computation built for llvm. OpenCL runs
// here on PoCL; CUDA compiles through NVRTC and runs where a GPU is.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "error_of.h"
#include "gpu_target_test.h"
#include "loom/te/lower.h"
#include "loom/te/operation.h"
#include "loom/te/schedule.h"
#include "loom/topi/reduction.h"

namespace loom {
namespace {

using runtime::NDArray;
using testing::ErrorOf;
using testing::GpuTarget;
using testing::RowReducer;
using testing::RowReduction;
using testing::TotalSum;

struct RowCase {
  int m, n, rows, threads;
  RowReducer op;
};

class GpuReductionTest : public ::testing::TestWithParam<GpuTarget> {
 protected:
  // Builds every case for the target (so that a compiler without a device still compiles
  // them), then runs each on the device against the host.
  void ExpectRowReductionsMatchTheHost(const std::vector<RowCase>& cases) {
    const GpuTarget& gpu = GetParam();
    std::vector<runtime::Module> modules;
    for (const RowCase& c : cases) {
      modules.push_back(
          build(RowReduction(c.m, c.n, c.rows, c.threads, c.op, true), Target::Parse(gpu.kind)));
    }
    LOOM_SKIP_WITHOUT_DEVICE(gpu.device, gpu.kind);
    for (size_t i = 0; i < cases.size(); ++i) {
      const RowCase& c = cases[i];
      SCOPED_TRACE("m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) +
                   " rows=" + std::to_string(c.rows) + " threads=" + std::to_string(c.threads) +
                   " reducer=" + std::to_string(static_cast<int>(c.op)));
      std::vector<NDArray> inputs = testing::RandomInputs({{c.m, c.n}});
      NDArray got = testing::RunOnDevice(gpu.device, modules[i], "row_reduction", inputs, {c.m});
      NDArray want = testing::RunOnHost(RowReduction(c.m, c.n, c.rows, c.threads, c.op, false),
                                        "row_reduction", inputs, {c.m});
      testing::ExpectNear(got, want, c.m, 1e-5f);
    }
  }
};

TEST_P(GpuReductionTest, RowsReducedAcrossTheThreadsOfABlock) {
  const GpuTarget& gpu = GetParam();
  LOOM_SKIP_WITHOUT_COMPILER(gpu);
  // Thread counts: within a warp (a power of two), whole warps, and neither (48: shared
  // memory with a first step folding the 16 above 32); rows that leave the last block partly
  // empty (their threads still take part); rows shorter than the block.
  const std::vector<RowCase> cases = {
      {6, 1000, 1, 32, RowReducer::kSum}, {5, 1000, 4, 16, RowReducer::kSum},
      {3, 999, 1, 128, RowReducer::kMax}, {7, 130, 2, 48, RowReducer::kSum},
      {4, 20, 1, 256, RowReducer::kMax},  {9, 333, 3, 64, RowReducer::kSumOfPositives},
  };
  ExpectRowReductionsMatchTheHost(cases);
}

TEST_P(GpuReductionTest, AWholeTensorReducedToAScalarByOneBlock) {
  const GpuTarget& gpu = GetParam();
  LOOM_SKIP_WITHOUT_COMPILER(gpu);
  runtime::Module module = build(TotalSum(37, 41, 256, true), Target::Parse(gpu.kind));
  LOOM_SKIP_WITHOUT_DEVICE(gpu.device, gpu.kind);
  std::vector<NDArray> inputs = testing::RandomInputs({{37, 41}});
  NDArray got = testing::RunOnDevice(gpu.device, module, "total_sum", inputs, {});
  NDArray want = testing::RunOnHost(TotalSum(37, 41, 256, false), "total_sum", inputs, {});
  testing::ExpectNear(got, want, 1, 1e-5f);
}

// Random shapes and blocks: any thread count (warp-shaped or not, up to a block), rows per
// block, row lengths shorter or longer than the block, each reducer.
TEST_P(GpuReductionTest, RandomShapesAndBlocksMatchTheHost) {
  const GpuTarget& gpu = GetParam();
  LOOM_SKIP_WITHOUT_COMPILER(gpu);
  std::mt19937 rng(2026);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::vector<RowCase> cases;
  for (int i = 0; i < 16; ++i) {
    const int rows = pick(1, 4);
    const int threads = pick(1, 256 / rows);
    cases.push_back({pick(1, 9), pick(1, 600), rows, threads, static_cast<RowReducer>(pick(0, 2))});
  }
  ExpectRowReductionsMatchTheHost(cases);
}

// topi's argmax along rows: a reducer of two values (index, value), whose ties take the
// first index whichever threads meet them. The pair is computed inside the output's blocks,
// in each thread's own memory, where the output's copy reads it in every thread.
PrimFunc RowArgmax(int m, int n, int threads, bool bind) {
  te::Tensor a = te::placeholder({m, n}, DataType::Float(32), "A");
  te::Tensor index = topi::argmax(a, 1, /*keepdims=*/false);
  te::Schedule s = te::create_schedule({index.op()});
  if (bind) {
    te::Stage out = s[index];
    te::Stage pair = s[index.op()->InputTensors()[0]];
    out.bind(out->leaf_iter_vars[0], te::thread_axis("blockIdx.x"));
    pair.compute_at(out, out->leaf_iter_vars[0]);
    auto [serial, thread] = pair.split(pair->leaf_iter_vars[1], threads);
    pair.bind(thread, te::thread_axis("threadIdx.x"));
  }
  return te::lower(s, {a, index}, "row_argmax");
}

TEST_P(GpuReductionTest, TupleReductionsCombineEveryValue) {
  const GpuTarget& gpu = GetParam();
  LOOM_SKIP_WITHOUT_COMPILER(gpu);
  const int m = 5, n = 700;
  std::vector<runtime::Module> modules;
  for (int threads : {64, 96})
    modules.push_back(build(RowArgmax(m, n, threads, true), Target::Parse(gpu.kind)));
  LOOM_SKIP_WITHOUT_DEVICE(gpu.device, gpu.kind);
  std::vector<NDArray> inputs = testing::RandomInputs({{m, n}});
  // Ties: row 1 has its largest value twice, the second time where another thread reads it.
  float* data = static_cast<float*>(inputs[0]->data);
  data[n + 10] = data[n + 500] = 2.0f;
  const std::pair<std::vector<int64_t>, DataType> output{{m}, DataType::Int(64)};
  std::vector<NDArray> want =
      testing::RunOn({kDLCPU, 0}, build(RowArgmax(m, n, 64, false), Target::Parse("llvm")),
                     "row_argmax", inputs, {output});
  EXPECT_EQ(static_cast<const int64_t*>(want[0]->data)[1], 10);
  for (const runtime::Module& module : modules) {
    std::vector<NDArray> got = testing::RunOn(gpu.device, module, "row_argmax", inputs, {output});
    for (int i = 0; i < m; ++i) {
      EXPECT_EQ(static_cast<const int64_t*>(got[0]->data)[i],
                static_cast<const int64_t*>(want[0]->data)[i])
          << "row " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Gpu, GpuReductionTest, testing::kGpuTargets, testing::GpuTargetName);

TEST(CUDATarget, WarpShapedReductionsShuffleAndOthersUseSharedMemory) {
  const GpuTarget cuda{"cuda", testing::kCUDADevice};
  LOOM_SKIP_WITHOUT_COMPILER(cuda);
  auto ptx = [](int rows, int threads) {
    return testing::DeviceCode(
        build(RowReduction(8, 256, rows, threads, RowReducer::kSum, true), Target::Parse("cuda")));
  };
  // Within a warp: shuffles alone.
  std::string code = ptx(4, 16);
  EXPECT_NE(code.find("shfl.sync.down"), std::string::npos) << code;
  EXPECT_EQ(code.find(".shared"), std::string::npos) << code;
  // Whole warps: shuffles, each warp's result through shared memory, shuffles again.
  code = ptx(1, 128);
  EXPECT_NE(code.find("shfl.sync.down"), std::string::npos) << code;
  EXPECT_NE(code.find(".shared"), std::string::npos) << code;
  EXPECT_NE(code.find("bar.sync"), std::string::npos) << code;
  // Neither: shared memory and barriers only.
  code = ptx(1, 48);
  EXPECT_EQ(code.find("shfl.sync"), std::string::npos) << code;
  EXPECT_NE(code.find("bar.sync"), std::string::npos) << code;
  // -thread-warp-size=1: no shuffles on any block.
  code = testing::DeviceCode(build(RowReduction(8, 256, 1, 32, RowReducer::kSum, true),
                                   Target::Parse("cuda -thread-warp-size=1")));
  EXPECT_EQ(code.find("shfl.sync"), std::string::npos) << code;
}

TEST(GpuReduction, AReductionOutsideAThreadAxisOfItsKernelIsAnError) {
  // C's blocks have threadIdx.y; B, computed inside them, reduces over threadIdx.x alone, so
  // the threads of different threadIdx.y would combine into the same shared memory.
  te::Tensor a = te::placeholder({8, 64}, DataType::Float(32), "A");
  IterVar k = te::reduce_axis(Range(0, 64), "k");
  te::Tensor b = te::compute(
      {8}, [&](Var i) { return te::sum(a(i, k->var), {k}); }, "B");
  te::Tensor c = te::compute(
      {8, 4}, [&](Var i, Var j) { return b(i) + cast(DataType::Float(32), j); }, "C");
  te::Schedule s = te::create_schedule({c.op()});
  s[c].bind(s[c]->leaf_iter_vars[0], te::thread_axis("blockIdx.x"));
  s[c].bind(s[c]->leaf_iter_vars[1], te::thread_axis("threadIdx.y"));
  s[b].compute_at(s[c], s[c]->leaf_iter_vars[0]);
  s[b].bind(k, te::thread_axis("threadIdx.x"));
  PrimFunc func = te::lower(s, {a, c}, "misplaced");
  EXPECT_EQ(ErrorOf([&] { build(func, Target::Parse("opencl")); }),
            "kernel 'misplaced_kernel0': a cross-thread reduction runs outside the loop bound "
            "to threadIdx.y, so the threads that differ in threadIdx.y would reduce into the "
            "same shared memory; bind threadIdx.y in the reducing stage too, or compute it in "
            "a kernel of its own");
}

TEST(GpuReduction, AWarpSizeNotAPowerOfTwoIsAnError) {
  EXPECT_EQ(ErrorOf([] {
              build(RowReduction(8, 64, 1, 32, RowReducer::kSum, true),
                    Target::Parse("cuda -thread-warp-size=24"));
            }),
            "LowerThreadAllreduce: a warp of 24 threads (the target's -thread-warp-size) is not "
            "a power of two");
}

}  // namespace
}  // namespace loom
