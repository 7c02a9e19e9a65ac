// CUDA in the runtime: DLPack's kDLCUDA device ("cuda": buffers in the GPU's global memory;
// copies and kernels ordered on each device's default stream) and modules of kernels compiled
// ahead of time to PTX (the cuda target compiles them with NVRTC when the model is built, and
// the artifact carries the PTX), which the driver loads on the module's first call.
//
// The driver (libcuda.so.1) is opened with dlopen on first use, so the runtime has no
// link-time dependency on CUDA: a machine without an NVIDIA driver runs CPU models as before,
// and its first CUDA call is a loom::Error naming what was looked for.
#pragma once

#include <string>
#include <vector>

#include "loom/runtime/device_kernel.h"
#include "loom/runtime/module.h"

namespace loom::runtime {

// A module of `kernels`, all defined in `ptx` (PTX assembly, NUL-free text). Each kernel is a
// function of the module (GetFunction): a call launches it on cuda:0's default stream and
// returns without waiting (a copy to the host, or DeviceAPI::StreamSync, waits). The driver
// loads the PTX once, on the first call (compiling it for the GPU there); its error log is in
// the loom::Error when it cannot.
Module CUDAModuleCreate(std::string ptx, std::vector<DeviceKernelInfo> kernels);

// The bytes an artifact holds of a CUDA module (type key "cuda"), which the loader this
// runtime registers reads back.
std::string SerializeCUDAModule(const Module& module);

// The PTX of a CUDA module.
const std::string& CUDAModulePTX(const Module& module);

}  // namespace loom::runtime
