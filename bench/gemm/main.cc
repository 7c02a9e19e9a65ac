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
// OpenMP (oneDNN) and OpenBLAS threads sleep instead of spinning (OMP_WAIT_POLICY=passive,
// OPENBLAS_THREAD_TIMEOUT=4, unless set already), like Loom's.
#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gemm_f32.h"
#include "gemm_u8s8s32.h"
#include "loom/runtime/ndarray.h"
#include "loom/support/error.h"
#include "loom/target/build.h"

extern char** environ;

namespace loom::bench {
namespace {

struct Options {
  std::vector<int> threads{1, 2};
  std::vector<int64_t> sizes{1024, 2048, 1000};
  int repeat = 10;
  std::vector<std::string> kinds{"f32", "u8s8s32"};
};

std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  for (std::string part; std::getline(stream, part, ',');) parts.push_back(part);
  return parts;
}

int64_t ParsePositive(const std::string& text, const std::string& flag) {
  char* end = nullptr;
  long long value = std::strtoll(text.c_str(), &end, 10);
  LOOM_CHECK_USER(!text.empty() && *end == '\0' && value > 0)
      << "loom-bench-gemm: " << flag << " takes positive integers, got '" << text << "'";
  return value;
}

Options ParseOptions(int argc, char** argv) {
  Options options;
  for (int a = 1; a < argc; ++a) {
    std::string flag = argv[a];
    LOOM_CHECK_USER(a + 1 < argc && flag.rfind("--", 0) == 0)
        << "loom-bench-gemm: expected '--threads|--sizes|--repeat|--kinds VALUE', got '"
        << flag << "'";
    std::string value = argv[++a];
    if (flag == "--threads") {
      options.threads.clear();
      for (const auto& part : SplitCommas(value))
        options.threads.push_back(static_cast<int>(ParsePositive(part, flag)));
    } else if (flag == "--sizes") {
      options.sizes.clear();
      for (const auto& part : SplitCommas(value)) options.sizes.push_back(ParsePositive(part, flag));
    } else if (flag == "--repeat") {
      options.repeat = static_cast<int>(ParsePositive(value, flag));
    } else if (flag == "--kinds") {
      options.kinds = SplitCommas(value);
      for (const auto& kind : options.kinds)
        LOOM_CHECK_USER(kind == "f32" || kind == "u8s8s32")
            << "loom-bench-gemm: --kinds takes f32 and/or u8s8s32, got '" << kind << "'";
    } else {
      LOOM_THROW << "loom-bench-gemm: unknown option '" << flag
                 << "' (accepted: --threads, --sizes, --repeat, --kinds)";
    }
  }
  return options;
}

// Times the functions call by call, round-robin, after one warm-up call each; returns the
// median seconds of each.
std::vector<double> MedianSeconds(const std::vector<std::function<void()>>& calls, int repeat) {
  for (const auto& call : calls) call();
  std::vector<std::vector<double>> times(calls.size());
  for (int r = 0; r < repeat; ++r) {
    for (size_t c = 0; c < calls.size(); ++c) {
      auto start = std::chrono::steady_clock::now();
      calls[c]();
      times[c].push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
  }
  std::vector<double> medians;
  for (auto& t : times) {
    std::sort(t.begin(), t.end());
    medians.push_back(t.size() % 2 ? t[t.size() / 2] : (t[t.size() / 2 - 1] + t[t.size() / 2]) / 2);
  }
  return medians;
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
  std::printf("gemm m=%lld n=%lld k=%lld threads=%d loom_gflops=%.1f openblas_gflops=%.1f "
              "onednn_gflops=%.1f\n",
              static_cast<long long>(n), static_cast<long long>(n), static_cast<long long>(n),
              threads, gflops[0], gflops[1], gflops[2]);
  std::fflush(stdout);
  return {"gemm " + std::to_string(n) + "^3 threads=" + std::to_string(threads),
          gflops[0] / std::max(gflops[1], gflops[2])};
}

Ratio RunU8S8S32(int64_t n, int threads, int repeat) {
  runtime::NDArray a = Matrix(n, n, DataType::UInt(8)), b = Matrix(n, n, DataType::Int(8));
  runtime::NDArray c_loom = Matrix(n, n, DataType::Int(32)), c_dnnl = Matrix(n, n, DataType::Int(32));
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
  std::printf("gemm_u8s8s32 m=%lld n=%lld k=%lld threads=%d loom_gops=%.1f onednn_gops=%.1f\n",
              static_cast<long long>(n), static_cast<long long>(n), static_cast<long long>(n),
              threads, loom_gops, onednn_gops);
  std::fflush(stdout);
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
  for (const Ratio& r : ratios) std::printf("# ratio %s loom/best_baseline=%.2f\n", r.label.c_str(), r.ratio);
  return 0;
}

std::string JoinInts(const std::vector<int64_t>& values) {
  std::string text;
  for (int64_t v : values) text += (text.empty() ? "" : ",") + std::to_string(v);
  return text;
}

// Runs this program once per thread count, each in a child with that environment.
int RunChildren(const Options& options, const char* self) {
  bool avx512 = Target::Parse("llvm").HasFeature("avx512f");
  std::string kinds;
  for (const auto& k : options.kinds) kinds += (kinds.empty() ? "" : ",") + k;
  for (int threads : options.threads) {
    std::string count = std::to_string(threads);
    setenv("LOOM_NUM_THREADS", count.c_str(), 1);
    setenv("OPENBLAS_NUM_THREADS", count.c_str(), 1);
    setenv("OMP_NUM_THREADS", count.c_str(), 1);
    if (avx512) setenv("OPENBLAS_CORETYPE", "SKYLAKEX", 1);
    // Between calls every library's threads sleep, as Loom's pool does after a short spin.
    // Left spinning (OpenMP's and OpenBLAS's defaults), one library's idle threads would
    // occupy the cores during the next library's call in the interleaved timing.
    setenv("OMP_WAIT_POLICY", "passive", 0);
    setenv("OPENBLAS_THREAD_TIMEOUT", "4", 0);
    std::vector<std::string> args{self,       "--threads", count, "--sizes", JoinInts(options.sizes),
                                  "--repeat", std::to_string(options.repeat), "--kinds", kinds};
    std::vector<char*> argv;
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    setenv("LOOM_BENCH_GEMM_CHILD", "1", 1);
    pid_t child = 0;
    LOOM_CHECK_USER(posix_spawn(&child, "/proc/self/exe", nullptr, nullptr, argv.data(), environ) == 0)
        << "loom-bench-gemm: cannot start the run with " << threads << " threads";
    int status = 0;
    waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
  }
  return 0;
}

}  // namespace
}  // namespace loom::bench

int main(int argc, char** argv) {
  try {
    loom::bench::Options options = loom::bench::ParseOptions(argc, argv);
    if (std::getenv("LOOM_BENCH_GEMM_CHILD") != nullptr) {
      LOOM_CHECK_USER(options.threads.size() == 1) << "loom-bench-gemm: internal: one thread count per run";
      return loom::bench::RunCases(options);
    }
    return loom::bench::RunChildren(options, argv[0]);
  } catch (const loom::Error& error) {
    std::cerr << error.what() << "\n";
    return 1;
  }
}
