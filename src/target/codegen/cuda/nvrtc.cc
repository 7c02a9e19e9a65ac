// NVRTC opened at run time (nvrtc.h).
#include "target/codegen/cuda/nvrtc.h"

#include <dlfcn.h>

#include <mutex>
#include <string>
#include <vector>

#include "loom/support/error.h"

namespace loom::codegen {

namespace {

// NVRTC's ABI, as its header declares it.
using nvrtcResult = int;
using nvrtcProgram = struct _nvrtcProgram*;
constexpr nvrtcResult NVRTC_SUCCESS = 0;

// Looked for in this order: the loader's path, then the toolkit's usual home.
constexpr const char* kLibraries[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12",
                                      "/usr/local/cuda/lib64/libnvrtc.so"};

struct NVRTC {
  const char* (*nvrtcGetErrorString)(nvrtcResult) = nullptr;
  nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram*, const char*, const char*, int,
                                    const char* const*, const char* const*) = nullptr;
  nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram, int, const char* const*) = nullptr;
  nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram, size_t*) = nullptr;
  nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram, char*) = nullptr;
  nvrtcResult (*nvrtcGetPTXSize)(nvrtcProgram, size_t*) = nullptr;
  nvrtcResult (*nvrtcGetPTX)(nvrtcProgram, char*) = nullptr;
  nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram*) = nullptr;
};

NVRTC Open() {
  void* handle = nullptr;
  std::string tried;
  for (const char* library : kLibraries) {
    handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) break;
    tried += std::string(tried.empty() ? "" : ", ") + library;
  }
  LOOM_CHECK_USER(handle != nullptr)
      << "the cuda target compiles kernels with NVRTC, which is not installed here (looked for "
      << tried << "); install the CUDA toolkit's NVRTC (libnvrtc) or add its folder to "
      << "LD_LIBRARY_PATH";
  NVRTC nvrtc;
#define LOOM_NVRTC_RESOLVE(name)                                                             \
  nvrtc.name = reinterpret_cast<decltype(nvrtc.name)>(dlsym(handle, #name));                 \
  LOOM_CHECK_USER(nvrtc.name != nullptr) << "NVRTC: the library has no " #name " (the CUDA " \
                                         << "toolkit is too old)";
  LOOM_NVRTC_RESOLVE(nvrtcGetErrorString)
  LOOM_NVRTC_RESOLVE(nvrtcCreateProgram)
  LOOM_NVRTC_RESOLVE(nvrtcCompileProgram)
  LOOM_NVRTC_RESOLVE(nvrtcGetProgramLogSize)
  LOOM_NVRTC_RESOLVE(nvrtcGetProgramLog)
  LOOM_NVRTC_RESOLVE(nvrtcGetPTXSize)
  LOOM_NVRTC_RESOLVE(nvrtcGetPTX)
  LOOM_NVRTC_RESOLVE(nvrtcDestroyProgram)
#undef LOOM_NVRTC_RESOLVE
  return nvrtc;  // the library stays open for the life of the process
}

const NVRTC& Library() {
  static std::once_flag once;
  static NVRTC* nvrtc = nullptr;
  static std::string failure;
  std::call_once(once, [] {
    try {
      nvrtc = new NVRTC(Open());
    } catch (const Error& error) {
      failure = error.what();
    }
  });
  LOOM_CHECK_USER(nvrtc != nullptr) << failure;
  return *nvrtc;
}

void Check(const NVRTC& nvrtc, nvrtcResult result, const char* call) {
  LOOM_CHECK_USER(result == NVRTC_SUCCESS)
      << "NVRTC: " << call << " failed: " << nvrtc.nvrtcGetErrorString(result);
}

}  // namespace

std::string CompileToPTX(const std::string& source, const std::string& arch) {
  LOOM_CHECK_USER(arch.rfind("sm_", 0) == 0 && arch.size() > 3)
      << "the cuda target's -arch is '" << arch << "'; expected sm_<major><minor> (sm_90 for "
      << "an H100 or H200)";
  const NVRTC& nvrtc = Library();
  nvrtcProgram program = nullptr;
  Check(nvrtc, nvrtc.nvrtcCreateProgram(&program, source.c_str(), "loom_kernels.cu", 0, nullptr,
                                        nullptr),
        "nvrtcCreateProgram");
  // Destroyed however this returns.
  struct ProgramGuard {
    const NVRTC& nvrtc;
    nvrtcProgram& program;
    ~ProgramGuard() { nvrtc.nvrtcDestroyProgram(&program); }
  } guard{nvrtc, program};
  const std::string architecture = "--gpu-architecture=compute_" + arch.substr(3);
  const char* options[] = {architecture.c_str(), "--fmad=false", "--std=c++17"};
  const nvrtcResult compiled = nvrtc.nvrtcCompileProgram(program, 3, options);
  std::string log;
  size_t log_size = 0;
  if (nvrtc.nvrtcGetProgramLogSize(program, &log_size) == NVRTC_SUCCESS && log_size > 1) {
    log.resize(log_size);
    nvrtc.nvrtcGetProgramLog(program, log.data());
    log.resize(log_size - 1);
  }
  std::string ptx;
  if (compiled == NVRTC_SUCCESS) {
    size_t ptx_size = 0;
    Check(nvrtc, nvrtc.nvrtcGetPTXSize(program, &ptx_size), "nvrtcGetPTXSize");
    ptx.resize(ptx_size);
    Check(nvrtc, nvrtc.nvrtcGetPTX(program, ptx.data()), "nvrtcGetPTX");
    if (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
  }
  const bool unsupported_arch = log.find("--gpu-architecture") != std::string::npos;
  LOOM_CHECK_USER(compiled == NVRTC_SUCCESS)
      << "NVRTC could not compile the kernels for " << arch << " ("
      << nvrtc.nvrtcGetErrorString(compiled) << "):\n"
      << log
      << (unsupported_arch ? "\nthis NVRTC does not compile for -arch=" + arch +
                                 "; use an architecture its toolkit supports (CUDA 13: sm_75 "
                                 "and up)"
                           : std::string());
  return ptx;
}

}  // namespace loom::codegen
