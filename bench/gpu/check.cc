// loom-gpu-check DIR [PREFIX]: runs what loom-gpu-prepare compiled (DIR/manifest.json) on cuda:0,
// with the runtime alone, as a deployment does (scripts/gpu-check.sh, on a lent GPU):
//  - "check" entries: the kernel's output against the host's, element by element;
//  - "gemm" entries: C = A x B timed against cuBLAS's sgemm (GemmEx for float16 / bfloat16
//    operands) on the same inputs in this process (interleaved, the median of each), and
//    checked against cuBLAS's result.
// With PREFIX, only the entries whose names start with it. Exit status 1 when any output is
// wrong.
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gpu_tool.h"
#include "loom/runtime/device_api.h"
#include "loom/runtime/float_codec.h"
#include "loom/runtime/module.h"
#include "loom/runtime/ndarray.h"
#include "loom/support/error.h"

namespace loom {
namespace {

using runtime::NDArray;
constexpr DLDevice kGpu{kDLCUDA, 0};
constexpr DLDevice kHost{kDLCPU, 0};

void Sync() { runtime::GetDeviceAPI(kDLCUDA)->StreamSync(kGpu); }

// The largest |got - want| / (1 + |want|) over float32 arrays of the same size.
double MaxError(const NDArray& got, const NDArray& want) {
  const auto* g = static_cast<const float*>(got->data);
  const auto* w = static_cast<const float*>(want->data);
  double worst = 0;
  for (int64_t i = 0; i < want.NumElements(); ++i) {
    const double error = std::fabs(double(g[i]) - double(w[i])) / (1 + std::fabs(double(w[i])));
    worst = std::max(worst, std::isnan(error) ? INFINITY : error);
  }
  return worst;
}

// cuBLAS's sgemm, opened at run time (the GPU machine's toolkit or PyTorch's copy).
class Cublas {
 public:
  Cublas() {
    for (const char* name : {"libcublas.so.13", "libcublas.so.12", "libcublas.so"}) {
      if ((library_ = dlopen(name, RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
    }
    LOOM_CHECK_USER(library_ != nullptr)
        << "cuBLAS (libcublas.so.13) cannot be loaded; add its folder to LD_LIBRARY_PATH";
    create_ = reinterpret_cast<int (*)(void**)>(dlsym(library_, "cublasCreate_v2"));
    sgemm_ = reinterpret_cast<Sgemm>(dlsym(library_, "cublasSgemm_v2"));
    gemm_ex_ = reinterpret_cast<GemmEx>(dlsym(library_, "cublasGemmEx"));
    LOOM_CHECK_USER(create_ != nullptr && sgemm_ != nullptr && gemm_ex_ != nullptr)
        << "cuBLAS lacks cublasSgemm_v2 or cublasGemmEx";
    LOOM_CHECK_USER(create_(&handle_) == 0) << "cublasCreate failed";
  }

  // C = A x B, all row-major n x n: cuBLAS is column-major, so it computes C^T = B^T A^T.
  void Multiply(const NDArray& a, const NDArray& b, NDArray& c, int n) {
    const float one = 1, zero = 0;
    LOOM_CHECK_USER(sgemm_(handle_, 0, 0, n, n, n, &one, static_cast<const float*>(b->data), n,
                           static_cast<const float*>(a->data), n, &zero,
                           static_cast<float*>(c->data), n) == 0)
        << "cublasSgemm failed";
  }

  // The same of float16 or bfloat16 operands, summed in float32 (tensor cores).
  void Multiply16(const NDArray& a, const NDArray& b, NDArray& c, int n) {
    // cudaDataType and cublasComputeType_t values (library_types.h, cublas_api.h).
    constexpr int kFloat16 = 2, kBFloat16 = 14, kFloat32 = 0, kCompute32F = 68, kDefault = -1;
    const int type = a.dtype().is_bfloat16() ? kBFloat16 : kFloat16;
    const float one = 1, zero = 0;
    LOOM_CHECK_USER(gemm_ex_(handle_, 0, 0, n, n, n, &one, b->data, type, n, a->data, type, n,
                             &zero, c->data, kFloat32, n, kCompute32F, kDefault) == 0)
        << "cublasGemmEx failed";
  }

 private:
  using Sgemm = int (*)(void*, int, int, int, int, int, const float*, const float*, int,
                        const float*, int, const float*, float*, int);
  using GemmEx = int (*)(void*, int, int, int, int, int, const void*, const void*, int, int,
                         const void*, int, int, const void*, void*, int, int, int, int);
  void* library_ = nullptr;
  int (*create_)(void**) = nullptr;
  Sgemm sgemm_ = nullptr;
  GemmEx gemm_ex_ = nullptr;
  void* handle_ = nullptr;
};

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

template <typename F>
double SecondsOf(F&& run) {
  Sync();
  const auto start = std::chrono::steady_clock::now();
  run();
  Sync();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

bool RunCheck(const nlohmann::json& entry, const std::string& dir) {
  runtime::Module module = runtime::LoadModuleFromFile(dir + "/" + entry["library"].get<std::string>());
  std::vector<NDArray> args;
  for (const auto& file : entry["inputs"]) {
    args.push_back(NDArray::LoadNpy(dir + "/" + file.get<std::string>()).CopyTo(kGpu));
  }
  NDArray expected = NDArray::LoadNpy(dir + "/" + entry["expected"].get<std::string>());
  args.push_back(NDArray::Empty(expected.Shape(), expected.dtype(), kGpu));
  module.GetRequiredFunction(entry["function"]).CallWithArrays(args);
  const double error = MaxError(args.back().CopyTo(kHost), expected);
  const bool ok = error <= entry["tolerance"].get<double>();
  std::printf("%-6s %-28s max error %.3g\n", ok ? "PASS" : "FAIL",
              entry["name"].get<std::string>().c_str(), error);
  return ok;
}

bool RunGemm(const nlohmann::json& entry, const std::string& dir, Cublas& cublas) {
  const int n = entry["size"];
  runtime::Module module = runtime::LoadModuleFromFile(dir + "/" + entry["library"].get<std::string>());
  runtime::PackedFunc sgemm = module.GetRequiredFunction(entry["function"]);
  NDArray a_host = NDArray::Empty({n, n}, DataType::Float(32));
  NDArray b_host = NDArray::Empty({n, n}, DataType::Float(32));
  uint32_t state = 2026;
  for (NDArray* array : {&a_host, &b_host}) {
    auto* data = static_cast<float*>((*array)->data);
    for (int64_t i = 0; i < int64_t{n} * n; ++i) {
      state = state * 1664525u + 1013904223u;
      data[i] = static_cast<float>(state >> 8) / 16777216.0f - 0.5f;
    }
  }
  // Operands of 16-bit floats (the tensor-core entries): the same values, rounded.
  const DataType operand = DataType::Parse(entry.value("operand", std::string("float32")));
  if (operand.bits() == 16) {
    for (NDArray* array : {&a_host, &b_host}) {
      NDArray rounded = NDArray::Empty({n, n}, operand);
      const auto* from = static_cast<const float*>((*array)->data);
      auto* to = static_cast<uint16_t*>(rounded->data);
      for (int64_t i = 0; i < int64_t{n} * n; ++i) {
        to[i] = operand.is_bfloat16() ? FloatToBFloat16Bits(from[i]) : FloatToHalfBits(from[i]);
      }
      *array = rounded;
    }
  }
  NDArray a = a_host.CopyTo(kGpu), b = b_host.CopyTo(kGpu);
  NDArray c = NDArray::Empty({n, n}, DataType::Float(32), kGpu);
  NDArray c_ref = NDArray::Empty({n, n}, DataType::Float(32), kGpu);
  std::vector<NDArray> args = {a, b, c};
  auto loom_run = [&] { sgemm.CallWithArrays(args); };
  auto cublas_run = [&] {
    operand.bits() == 16 ? cublas.Multiply16(a, b, c_ref, n) : cublas.Multiply(a, b, c_ref, n);
  };
  for (int i = 0; i < 3; ++i) {
    SecondsOf(loom_run);
    SecondsOf(cublas_run);
  }
  std::vector<double> loom_times, cublas_times;
  for (int i = 0; i < 15; ++i) {  // interleaved: both see the same clocks and heat
    loom_times.push_back(SecondsOf(loom_run));
    cublas_times.push_back(SecondsOf(cublas_run));
  }
  const double error = MaxError(c.CopyTo(kHost), c_ref.CopyTo(kHost));
  const double flops = 2.0 * n * n * n;
  const double loom_s = Median(loom_times), cublas_s = Median(cublas_times);
  const bool ok = error <= 1e-3;
  std::printf("%-6s %-28s %8.1f GFLOP/s  cuBLAS %8.1f GFLOP/s  loom/cuBLAS %.3f  (%s; max "
              "error vs cuBLAS %.2g)\n",
              ok ? "PASS" : "FAIL", entry["name"].get<std::string>().c_str(), flops / loom_s / 1e9,
              flops / cublas_s / 1e9, cublas_s / loom_s, entry["tiling"].get<std::string>().c_str(),
              error);
  return ok;
}

int Main(int argc, char** argv) {
  LOOM_CHECK_USER(argc >= 2)
      << "usage: loom-gpu-check DIR [PREFIX...] (DIR made by loom-gpu-prepare; with prefixes, "
         "only the entries whose names start with one)";
  const std::string dir = argv[1];
  const std::vector<std::string> prefixes(argv + 2, argv + argc);
  auto selected = [&](const std::string& name) {
    return prefixes.empty() ||
           std::any_of(prefixes.begin(), prefixes.end(),
                       [&](const std::string& p) { return name.rfind(p, 0) == 0; });
  };
  std::ifstream file(dir + "/manifest.json");
  LOOM_CHECK_USER(file.good()) << dir << "/manifest.json cannot be read";
  const nlohmann::json manifest = nlohmann::json::parse(file);
  std::cout << "kernels compiled for cuda -arch=" << manifest["arch"].get<std::string>() << "\n";
  bool all_ok = true;
  Cublas* cublas = nullptr;
  for (const nlohmann::json& entry : manifest["entries"]) {
    if (!selected(entry["name"].get<std::string>())) continue;
    try {
      if (entry["kind"] == "check") {
        all_ok &= RunCheck(entry, dir);
      } else {
        if (cublas == nullptr) cublas = new Cublas();  // lives to the end of the process
        all_ok &= RunGemm(entry, dir, *cublas);
      }
    } catch (const Error& error) {
      std::printf("FAIL   %-28s %s\n", entry["name"].get<std::string>().c_str(), error.what());
      all_ok = false;
    }
    std::fflush(stdout);
  }
  std::cout << (all_ok ? "all outputs correct" : "SOME OUTPUTS WRONG") << "\n";
  return all_ok ? 0 : 1;
}

}  // namespace
}  // namespace loom

int main(int argc, char** argv) {
  return loom::RunGpuTool("loom-gpu-check", loom::Main, argc, argv, 2);
}
