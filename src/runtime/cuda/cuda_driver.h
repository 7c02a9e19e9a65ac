// The CUDA driver API's entry points (libcuda.so.1, opened with dlopen on first use, so the
// runtime links nothing of CUDA and runs CPU models on machines without it) and each device's
// primary context. The few types and constants Loom uses are declared here, as the driver's
// ABI defines them, so the runtime builds without the CUDA toolkit. Private to
// src/runtime/cuda.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace loom::runtime::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;  // NOLINT(runtime/int): the driver's type
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUjit_option = int;

inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
inline constexpr CUjit_option CU_JIT_ERROR_LOG_BUFFER = 5;
inline constexpr CUjit_option CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;

// name, the symbol the driver exports (the _v2 ABI where there is one), the signature.
#define LOOM_CUDA_FUNCTIONS(X)                                                                     \
  X(cuInit, "cuInit", CUresult (*)(unsigned))                                                      \
  X(cuDeviceGetCount, "cuDeviceGetCount", CUresult (*)(int*))                                      \
  X(cuDeviceGet, "cuDeviceGet", CUresult (*)(CUdevice*, int))                                      \
  X(cuDeviceGetName, "cuDeviceGetName", CUresult (*)(char*, int, CUdevice))                        \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute", CUresult (*)(int*, int, CUdevice))               \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", CUresult (*)(CUcontext*, CUdevice))      \
  X(cuCtxSetCurrent, "cuCtxSetCurrent", CUresult (*)(CUcontext))                                   \
  X(cuCtxSynchronize, "cuCtxSynchronize", CUresult (*)())                                          \
  X(cuMemAlloc, "cuMemAlloc_v2", CUresult (*)(CUdeviceptr*, size_t))                               \
  X(cuMemFree, "cuMemFree_v2", CUresult (*)(CUdeviceptr))                                          \
  X(cuMemcpyHtoD, "cuMemcpyHtoD_v2", CUresult (*)(CUdeviceptr, const void*, size_t))               \
  X(cuMemcpyDtoH, "cuMemcpyDtoH_v2", CUresult (*)(void*, CUdeviceptr, size_t))                     \
  X(cuMemcpyDtoD, "cuMemcpyDtoD_v2", CUresult (*)(CUdeviceptr, CUdeviceptr, size_t))               \
  X(cuModuleLoadDataEx, "cuModuleLoadDataEx",                                                      \
    CUresult (*)(CUmodule*, const void*, unsigned, CUjit_option*, void**))                         \
  X(cuModuleUnload, "cuModuleUnload", CUresult (*)(CUmodule))                                      \
  X(cuModuleGetFunction, "cuModuleGetFunction", CUresult (*)(CUfunction*, CUmodule, const char*))  \
  X(cuLaunchKernel, "cuLaunchKernel",                                                              \
    CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, \
                 CUstream, void**, void**))

template <typename Pointer>
using FunctionPointer = Pointer;

struct Driver {
#define LOOM_CUDA_POINTER(name, symbol, type) FunctionPointer<type> name = nullptr;
  LOOM_CUDA_FUNCTIONS(LOOM_CUDA_POINTER)
#undef LOOM_CUDA_POINTER
};

// One device: its primary context, and what a load error names.
struct Device {
  CUdevice handle = 0;
  CUcontext context = nullptr;
  std::string name;
  int compute_capability = 0;  // major * 10 + minor
};

// The driver, initialized once; a loom::Error when libcuda.so.1 cannot be loaded or has no
// device (saying what was looked for).
const Driver& GlobalDriver();

// cuda:`device_id`, its context made current on the calling thread; a loom::Error naming the
// devices there are otherwise.
const Device& UseDevice(int device_id);

// A loom::Error naming `call`, the driver's error name and text and `what` when `result` is
// not CUDA_SUCCESS.
void Check(CUresult result, const char* call, const std::string& what);

}  // namespace loom::runtime::cuda
