// loom-gpu-prepare OUT [--arch sm_90]: what scripts/gpu-check.sh runs on a lent GPU, compiled
// here (the GPU machine has no LLVM): artifacts built for the cuda target, each a library
// whose host code launches PTX kernels, as a deployment ships them, and a manifest
// (OUT/manifest.json) that loom-gpu-check reads there.
//  - "check" entries: the GPU target tests' kernels (tests/common/gpu_test_kernels.h: shared
//    memory tiles, cross-thread reductions) with their inputs and the host's (llvm) outputs
//    as .npy files;
//  - "gemm" entries: float32 C = A x B of 4096^3 (and smaller) with topi's shared-memory
//    schedule at several tilings, and of float16 / bfloat16 operands on tensor cores, timed
//    there against cuBLAS in the same process.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gpu_test_kernels.h"
#include "gpu_tool.h"
#include "loom/support/error.h"
#include "loom/target/build.h"
#include "loom/topi/gpu/tensor_core.h"

namespace loom {
namespace {

namespace fs = std::filesystem;
using runtime::NDArray;

struct CheckCase {
  std::string name;
  PrimFunc device, host;  // the same computation with and without thread bindings
  std::vector<std::vector<int64_t>> inputs;
  std::vector<int64_t> output;
  double tolerance;
};

std::vector<CheckCase> CheckCases() {
  using namespace testing;
  std::vector<CheckCase> cases;
  for (int n : {1, 200, 4097}) {
    cases.push_back({"elementwise_" + std::to_string(n), Elementwise(n, 64, true),
                     Elementwise(n, 64, false), {{n}, {n}}, {n}, 1e-6});
  }
  cases.push_back({"matmul_24x40x33", Matmul(24, 40, 33, true), Matmul(24, 40, 33, false),
                   {{24, 33}, {33, 40}}, {24, 40}, 1e-5});
  for (bool strided : {false, true}) {
    for (auto [m, n, k, tile_k] :
         {std::tuple{64, 96, 48, 8}, std::tuple{50, 70, 45, 4}, std::tuple{256, 256, 256, 8}}) {
      const std::string shape =
          std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
      cases.push_back({"shared_matmul_" + shape + (strided ? "_strided" : ""),
                       SharedMatmul(m, n, k, 8, 8, tile_k, strided),
                       Matmul(m, n, k, false),
                       {{m, k}, {k, n}},
                       {m, n},
                       1e-5});
    }
  }
  // 128-bit vector accesses (rows of 48 and 256 floats) and scalar ones (45: unaligned).
  for (auto [m, n, k, tile_k] :
       {std::tuple{64, 96, 48, 8}, std::tuple{50, 70, 45, 4}, std::tuple{256, 256, 256, 8}}) {
    const std::string shape = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
    cases.push_back({"shared_matmul_" + shape + "_v4",
                     SharedMatmul(m, n, k, 8, 8, tile_k, false, false, true, 4),
                     Matmul(m, n, k, false),
                     {{m, k}, {k, n}},
                     {m, n},
                     1e-5});
  }
  // Cross-thread reductions: warp shuffles alone (16 threads, 4 rows a block), shuffles and
  // shared memory (128), shared memory alone (48, not warp-shaped).
  for (auto [m, n, rows, threads] :
       {std::tuple{5, 1000, 4, 16}, std::tuple{3, 999, 1, 128}, std::tuple{7, 130, 2, 48}}) {
    cases.push_back({"row_sum_" + std::to_string(threads) + "_threads",
                     RowReduction(m, n, rows, threads, RowReducer::kSum, true),
                     RowReduction(m, n, rows, threads, RowReducer::kSum, false),
                     {{m, n}},
                     {m},
                     1e-5});
  }
  // Tensor cores (warp matrix instructions; float16 from sm_70, bfloat16 from sm_80).
  for (const TensorCoreCase& c : TensorCoreCases()) {
    cases.push_back({"tensor_core_" + c.Name(),
                     c.Lower(true),
                     c.Lower(false),
                     {c.Shape(c.m, c.k), c.Shape(c.n, c.k)},
                     c.Shape(c.m, c.n),
                     1e-4});
  }
  cases.push_back({"total_sum",
                   TotalSum(37, 41, 256, true),
                   TotalSum(37, 41, 256, false),
                   {{37, 41}},
                   {},
                   1e-5});
  return cases;
}

// The function a PrimFunc is exported as.
std::string SymbolOf(const PrimFunc& func) {
  return func->attrs.at("global_symbol").as<StringImmNode>()->value;
}

nlohmann::json PrepareCheck(const CheckCase& c, const fs::path& out, const Target& target) {
  const std::string library = c.name + ".so";
  ExportLibrary(build(c.device, target), (out / library).string());
  std::vector<NDArray> inputs = testing::RandomInputs(c.inputs);
  NDArray expected = testing::RunOnHost(c.host, SymbolOf(c.host), inputs, c.output);
  nlohmann::json entry = {{"kind", "check"},  {"name", c.name},
                          {"library", library}, {"function", SymbolOf(c.device)},
                          {"tolerance", c.tolerance}};
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string file = c.name + "_in" + std::to_string(i) + ".npy";
    inputs[i].SaveNpy((out / file).string());
    entry["inputs"].push_back(file);
  }
  expected.SaveNpy((out / (c.name + "_expected.npy")).string());
  entry["expected"] = c.name + "_expected.npy";
  return entry;
}

nlohmann::json PrepareGemm(int size, const topi::gpu::MatmulTiling& t, const fs::path& out,
                           const Target& target) {
  auto [a, b, c] = testing::MatmulCompute(size, size, size);
  te::Schedule s = topi::gpu::schedule_matmul_shared(c, t);
  const std::string tiling =
      std::to_string(t.threads_y) + "x" + std::to_string(t.threads_x) + " threads, " +
      std::to_string(t.rows_per_thread) + "x" + std::to_string(t.cols_per_thread) +
      (t.strided ? " strided" : "") + " each, k step " + std::to_string(t.tile_k) +
      (t.pad_rows ? ", A rows padded" : "") + (t.double_buffer ? ", double-buffered" : "") +
      (t.vector_width > 1 ? ", vectors of " + std::to_string(t.vector_width) : "");
  const std::string name =
      "sgemm_" + std::to_string(size) + "_" + std::to_string(t.threads_y) + "x" +
      std::to_string(t.threads_x) + "_" + std::to_string(t.rows_per_thread) + "x" +
      std::to_string(t.cols_per_thread) + "_k" + std::to_string(t.tile_k) +
      (t.strided ? "_strided" : "") + (t.pad_rows ? "_pad" : "") + (t.double_buffer ? "_db" : "") +
      (t.vector_width > 1 ? "_v" + std::to_string(t.vector_width) : "");
  ExportLibrary(build(te::lower(s, {a, b, c}, "sgemm"), target), (out / (name + ".so")).string());
  return {{"kind", "gemm"}, {"name", name},     {"library", name + ".so"},
          {"function", "sgemm"}, {"size", size}, {"tiling", tiling}};
}

// C (float32) = A x B of float16 or bfloat16 operands on tensor cores, timed there against
// cuBLAS's GemmEx of the same types.
nlohmann::json PrepareTensorCoreGemm(int size, DataType operand,
                                     const topi::gpu::TensorCoreTiling& t, const fs::path& out,
                                     const Target& target) {
  te::Tensor a = te::placeholder({size, size}, operand, "A");
  te::Tensor b = te::placeholder({size, size}, operand, "B");
  te::Tensor c = topi::matmul(a, b, DataType::Float(32));
  te::Schedule s = topi::gpu::schedule_matmul_tensor_core(c, t);
  const std::string tiling = std::to_string(t.warps_m) + "x" + std::to_string(t.warps_n) +
                             " warps, " + std::to_string(t.warp_tiles_m) + "x" +
                             std::to_string(t.warp_tiles_n) + " tiles each, k step " +
                             std::to_string(t.tile_k()) + ", tensor cores";
  const std::string name = std::string(operand.is_bfloat16() ? "bf16" : "f16") + "gemm_" +
                           std::to_string(size) + "_" + std::to_string(t.warps_m) + "x" +
                           std::to_string(t.warps_n) + "_" + std::to_string(t.warp_tiles_m) + "x" +
                           std::to_string(t.warp_tiles_n) + "_k" + std::to_string(t.tile_k());
  ExportLibrary(build(te::lower(s, {a, b, c}, "gemm"), target), (out / (name + ".so")).string());
  return {{"kind", "gemm"}, {"name", name},     {"library", name + ".so"}, {"function", "gemm"},
          {"size", size},   {"tiling", tiling}, {"operand", operand.str()}};
}

int Main(int argc, char** argv) {
  LOOM_CHECK_USER(argc == 2 || (argc == 4 && std::string(argv[2]) == "--arch"))
      << "usage: loom-gpu-prepare OUT_DIR [--arch sm_XY]";
  const fs::path out = argv[1];
  const std::string arch = argc == 4 ? argv[3] : "sm_90";
  fs::create_directories(out);
  const Target target = Target::Parse("cuda -arch=" + arch);
  nlohmann::json manifest = {{"arch", arch}, {"entries", nlohmann::json::array()}};
  for (const CheckCase& c : CheckCases()) {
    manifest["entries"].push_back(PrepareCheck(c, out, target));
  }
  using topi::gpu::MatmulTiling;
  for (int size : {1024, 4096}) {
    for (MatmulTiling t :
         {MatmulTiling{16, 16, 8, 8, 8}, MatmulTiling{16, 16, 8, 8, 16},
          MatmulTiling{16, 16, 4, 4, 8}, MatmulTiling{8, 32, 8, 4, 8}, MatmulTiling{8, 32, 8, 8, 8},
          MatmulTiling{16, 16, 8, 4, 8}, MatmulTiling{16, 16, 4, 8, 8},
          MatmulTiling{32, 8, 4, 8, 8}, MatmulTiling{8, 16, 8, 8, 8}, MatmulTiling{16, 8, 8, 8, 8},
          // Strided parts (virtual threads): conflict-free shared reads,
          // coalesced stores; not yet measured (nor the padded ones below).
          MatmulTiling{16, 16, 4, 4, 8, true}, MatmulTiling{16, 16, 8, 8, 8, true},
          MatmulTiling{16, 16, 8, 4, 8, true}, MatmulTiling{8, 32, 8, 4, 8, true},
          MatmulTiling{16, 16, 8, 8, 16, true},
          // A's shared rows padded off one bank.
          MatmulTiling{16, 16, 4, 4, 8, false, true}, MatmulTiling{16, 16, 8, 8, 8, false, true},
          // Tiles double-buffered.
          MatmulTiling{16, 16, 4, 4, 8, false, false, true},
          MatmulTiling{16, 16, 4, 4, 8, true, false, true},
          MatmulTiling{16, 16, 8, 8, 8, true, false, true},
          // Tiles fetched, and C accumulated and stored, 4 floats at once (128-bit accesses).
          MatmulTiling{16, 16, 4, 4, 8, false, false, false, 4},
          MatmulTiling{16, 16, 8, 8, 8, false, false, false, 4},
          MatmulTiling{16, 16, 8, 8, 16, false, false, false, 4},
          MatmulTiling{16, 16, 4, 4, 8, false, false, true, 4},
          MatmulTiling{16, 16, 8, 8, 8, true, false, true, 4}}) {
      manifest["entries"].push_back(PrepareGemm(size, t, out, target));
    }
  }
  using topi::gpu::TensorCoreTiling;
  for (DataType operand : {DataType::Float(16), DataType::BFloat16()}) {
    if (!target.HasTensorCores(operand)) continue;
    for (int size : {1024, 4096}) {
      // Each within the 48 KB of static shared memory (the C tile staged there is float32).
      for (TensorCoreTiling t :
           {TensorCoreTiling{2, 2, 2, 2, 2}, TensorCoreTiling{2, 4, 2, 2, 2},
            TensorCoreTiling{2, 2, 2, 4, 1}, TensorCoreTiling{4, 2, 2, 2, 1},
            TensorCoreTiling{4, 4, 1, 1, 2}, TensorCoreTiling{2, 2, 2, 2, 4}}) {
        manifest["entries"].push_back(PrepareTensorCoreGemm(size, operand, t, out, target));
      }
    }
  }
  std::ofstream(out / "manifest.json") << manifest.dump(2) << "\n";
  std::cout << "prepared " << manifest["entries"].size() << " artifacts for cuda -arch=" << arch
            << " in " << out.string() << "\n";
  return 0;
}

}  // namespace
}  // namespace loom

int main(int argc, char** argv) {
  return loom::RunGpuTool("loom-gpu-prepare", loom::Main, argc, argv, 1);
}
