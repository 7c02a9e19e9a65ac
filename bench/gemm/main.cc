// loom-bench-gemm: Loom's generated GEMMs against OpenBLAS and oneDNN, in the same run.
//
//   loom-bench-gemm [--threads 1,2] [--sizes 1024,2048,1000] [--repeat 10] [--kinds f32,u8s8s32]
//
// Prints one line per case, e.g.
//   gemm m=1024 n=1024 k=1024 threads=1 loom_gflops=210.3 openblas_gflops=226.0 onednn_gflops=231.2
//   gemm_u8s8s32 m=1024 n=1024 k=1024 threads=1 loom_gops=901.2 onednn_gops=930.4
// then a summary of ratios (loom / the better baseline). Every figure is the median of
// --repeat timed calls; the libraries' calls are interleaved call by call, so a noisy
// neighbour slows all of them alike. Before timing, Loom's result is checked against the
// baseline's (exactly for int8, relative error for float32); a mismatch aborts the run.
//
// The thread count of every library is fixed when it starts (LOOM_NUM_THREADS,
// OPENBLAS_NUM_THREADS, OMP_NUM_THREADS), and OpenBLAS picks its kernel when it loads
// (OPENBLAS_CORETYPE: its default detection takes an AVX2 kernel on AVX-512 machines). So
// each thread count runs in a child process started with that environment. In it, idle
// OpenBLAS threads sleep at once instead of spinning for 0.1 s (OPENBLAS_THREAD_TIMEOUT=4,
// see kOpenBlasThreadTimeout, unless set already), and each timed call starts after an
// untimed pause that outlasts the other libraries' idle spinning (kSettleTime in
// bench/common/bench_common.cc).
#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "bench_common.h"
#include "gemm_f32.h"
#include "gemm_u8s8s32.h"
#include "loom/runtime/ndarray.h"
#include "loom/support/error.h"
#include "loom/target/build.h"

namespace loom::bench {
namespace {

constexpr const char* kProgram = "loom-bench-gemm";

struct Options {
  std::vector<int> threads{1, 2};
  std::vector<int64_t> sizes{1024, 2048, 1000};
  int repeat = 10;
  std::vector<std::string> kinds{"f32", "u8s8s32"};
};

Options ParseOptions(int argc, char** argv) {
  Options options;
  ParseFlags(argc, argv, kProgram,
             {ThreadCountsFlag(kProgram, &options.threads),
              {"--sizes",
               [&](const std::string& value) {
                 options.sizes = ParsePositiveList(value, kProgram, "--sizes");
               }},
              {"--repeat",
               [&](const std::string& value) {
                 options.repeat = static_cast<int>(
                     ParsePositive(value, kProgram, "--repeat", std::numeric_limits<int>::max()));
               }},
              {"--kinds", [&](const std::string& value) {
                 options.kinds = SplitCommas(value);
                 for (const auto& kind : options.kinds)
                   LOOM_CHECK_USER(kind == "f32" || kind == "u8s8s32")
                       << kProgram << ": --kinds takes f32 and/or u8s8s32, got '" << kind << "'";
               }}});
  return options;
}

runtime::NDArray Matrix(int64_t rows, int64_t columns, DataType dtype) {
  return runtime::NDArray::Empty({rows, columns}, dtype, {kDLCPU, 0});
}

template <typename T>
void FillRandom(const runtime::NDArray& array, int lo, int hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(lo, hi);
  T* data = static_cast<T*>(array.data());
  int64_t count = array.Shape()[0] * array.Shape()[1];
  for (int64_t x = 0; x < count; ++x) {
    if constexpr (std::is_floating_point_v<T>) data[x] = static_cast<T>(dist(rng)) / 16;
    else data[x] = static_cast<T>(dist(rng));
  }
}

struct Ratio {
  std::string label;
  double ratio;
};

Ratio RunF32(int64_t n, int threads, int repeat) {
  const DataType f32 = DataType::Float(32);
  runtime::NDArray a = Matrix(n, n, f32), b = Matrix(n, n, f32);
  runtime::NDArray c_loom = Matrix(n, n, f32), c_blas = Matrix(n, n, f32),
                   c_dnnl = Matrix(n, n, f32);
  FillRandom<float>(a, -16, 16, 1);
  FillRandom<float>(b, -16, 16, 2);
  runtime::Module module = build(MakeGemmF32(n, n, n), Target::Parse("llvm"));
  runtime::PackedFunc loom_gemm = module.GetRequiredFunction("gemm_f32");
  const float* pa = static_cast<const float*>(a.data());
  const float* pb = static_cast<const float*>(b.data());
  auto loom = [&] { loom_gemm(a, b, c_loom); };
  auto openblas = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, pa, n, pb, n, 0.0f,
                static_cast<float*>(c_blas.data()), n);
  };
  auto onednn = [&] {
    dnnl_sgemm('N', 'N', n, n, n, 1.0f, pa, n, pb, n, 0.0f, static_cast<float*>(c_dnnl.data()), n);
  };
  loom();
  openblas();
  const float* got = static_cast<const float*>(c_loom.data());
  const float* want = static_cast<const float*>(c_blas.data());
  // The inputs are multiples of 1/16 in [-1, 1]: every product is a multiple of 2^-8 and
  // every partial sum below 2^16 in magnitude, so float32 holds them exactly in any order of
  // summation and both libraries must agree bit for bit.
  for (int64_t x = 0; x < n * n; ++x) {
    LOOM_CHECK_USER(got[x] == want[x])
        << "loom-bench-gemm: Loom's float32 GEMM differs from OpenBLAS at (" << x / n << ", "
        << x % n << "): " << got[x] << " vs " << want[x];
  }
  std::vector<double> seconds = MedianSeconds({loom, openblas, onednn}, repeat);
  double flop = 2.0 * n * n * n;
  double gflops[3];
  for (int x = 0; x < 3; ++x) gflops[x] = flop / seconds[x] / 1e9;
  PrintLine(Format("gemm m=%lld n=%lld k=%lld threads=%d loom_gflops=%.1f openblas_gflops=%.1f "
                   "onednn_gflops=%.1f",
                   static_cast<long long>(n), static_cast<long long>(n),
                   static_cast<long long>(n), threads, gflops[0], gflops[1], gflops[2]));
  return {"gemm " + std::to_string(n) + "^3 threads=" + std::to_string(threads),
          gflops[0] / std::max(gflops[1], gflops[2])};
}

Ratio RunU8S8S32(int64_t n, int threads, int repeat) {
  runtime::NDArray a = Matrix(n, n, DataType::UInt(8)), b = Matrix(n, n, DataType::Int(8));
  runtime::NDArray c_loom = Matrix(n, n, DataType::Int(32));
  runtime::NDArray c_dnnl = Matrix(n, n, DataType::Int(32));
  FillRandom<uint8_t>(a, 0, 255, 3);
  FillRandom<int8_t>(b, -128, 127, 4);
  runtime::Module module = build(MakeGemmU8S8S32(n, n, n), Target::Parse("llvm"));
  runtime::PackedFunc loom_gemm = module.GetRequiredFunction("gemm_u8s8s32");
  auto loom = [&] { loom_gemm(a, b, c_loom); };
  const int32_t zero_offset = 0;
  auto onednn = [&] {
    dnnl_gemm_u8s8s32('N', 'N', 'F', n, n, n, 1.0f, static_cast<const uint8_t*>(a.data()), n, 0,
                      static_cast<const int8_t*>(b.data()), n, 0, 0.0f,
                      static_cast<int32_t*>(c_dnnl.data()), n, &zero_offset);
  };
  loom();
  onednn();
  LOOM_CHECK_USER(std::memcmp(c_loom.data(), c_dnnl.data(), n * n * sizeof(int32_t)) == 0)
      << "loom-bench-gemm: Loom's u8 x s8 -> s32 GEMM differs from oneDNN's at " << n << "^3";
  std::vector<double> seconds = MedianSeconds({loom, onednn}, repeat);
  double ops = 2.0 * n * n * n;
  double loom_gops = ops / seconds[0] / 1e9, onednn_gops = ops / seconds[1] / 1e9;
  PrintLine(Format("gemm_u8s8s32 m=%lld n=%lld k=%lld threads=%d loom_gops=%.1f onednn_gops=%.1f",
                   static_cast<long long>(n), static_cast<long long>(n),
                   static_cast<long long>(n), threads, loom_gops, onednn_gops));
  return {"gemm_u8s8s32 " + std::to_string(n) + "^3 threads=" + std::to_string(threads),
          loom_gops / onednn_gops};
}

// One thread count, in this process (the environment is already set for it).
int RunCases(const Options& options) {
  int threads = options.threads.at(0);
  std::vector<Ratio> ratios;
  for (const std::string& kind : options.kinds) {
    for (int64_t n : options.sizes) {
      ratios.push_back(kind == "f32" ? RunF32(n, threads, options.repeat)
                                     : RunU8S8S32(n, threads, options.repeat));
    }
  }
  for (const Ratio& r : ratios)
    PrintLine(Format("# ratio %s loom/best_baseline=%.2f", r.label.c_str(), r.ratio));
  return 0;
}

// OpenBLAS's idle threads spin (yielding) for 2^OPENBLAS_THREAD_TIMEOUT cycles of the time
// stamp counter before they sleep. Its default, 2^28 (0.1 s here), would spin through the
// untimed settling pause before each timed call (MedianSeconds) and hold the cores during the other
// libraries' calls. 4 is its least: sleep at once. Each timed call follows a 6 ms pause, so
// any timeout below it times alike: 2^17 cycles, measured at 57 us of an idle worker's CPU after a 2-thread sgemm (Loom's
// pool spins ~60 us), gave the same 2-thread figures as 4 within this machine's noise.
constexpr const char* kOpenBlasThreadTimeout = "4";

// Runs this program once per thread count, each in a child with that environment (OpenBLAS's
// part of it added here).
int RunChildren(const Options& options, const char* self) {
  bool avx512 = Target::Parse("llvm").HasFeature("avx512f");
  return RunPerThreadCount(
      kProgram, options.threads,
      [&](int threads) {
        return std::vector<std::string>{self,
                                        "--threads",
                                        std::to_string(threads),
                                        "--sizes",
                                        JoinCommas(options.sizes),
                                        "--repeat",
                                        std::to_string(options.repeat),
                                        "--kinds",
                                        JoinCommas(options.kinds)};
      },
      [&](int threads) {
        setenv("OPENBLAS_NUM_THREADS", std::to_string(threads).c_str(), 1);
        if (avx512) setenv("OPENBLAS_CORETYPE", "SKYLAKEX", 1);
        setenv("OPENBLAS_THREAD_TIMEOUT", kOpenBlasThreadTimeout, 0);
      });
}

}  // namespace
}  // namespace loom::bench

int main(int argc, char** argv) {
  using loom::bench::Options;
  return loom::bench::BenchMain<Options>(
      argc, argv, loom::bench::ParseOptions, loom::bench::RunCases,
      [&](const Options& options) { return loom::bench::RunChildren(options, argv[0]); });
}
