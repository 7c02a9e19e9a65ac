// OpenCL in the runtime: DLPack's kDLOpenCL device ("opencl": buffers are cl_mem handles,
// copies and kernels go through one in-order queue per device) and modules of OpenCL C
// kernels, compiled by the driver on their first call.
//
// The OpenCL ICD loader (libOpenCL.so.1) is opened with dlopen on first use, so the runtime
// has no link-time dependency on it: a machine without OpenCL runs CPU models as before, and
// the first OpenCL call there is a loom::Error naming what was looked for. On the machines
// without a GPU that Loom is tested on, PoCL (Debian's pocl-opencl-icd) runs the kernels on
// the CPU.
#pragma once

#include <string>
#include <vector>

#include "loom/runtime/device_kernel.h"
#include "loom/runtime/module.h"

namespace loom::runtime {

// A module of `kernels`, all defined in the OpenCL C `source`. Each kernel is a function of
// the module (GetFunction): a call launches it on device 0's queue and returns without
// waiting (a copy to the host, or DeviceAPI::StreamSync, waits). The program is compiled
// once, on the first call; a driver's compile error is a loom::Error with its build log.
Module OpenCLModuleCreate(std::string source, std::vector<DeviceKernelInfo> kernels);

// The bytes an artifact holds of an OpenCL module (type key "opencl"), which the loader this
// runtime registers reads back.
std::string SerializeOpenCLModule(const Module& module);

// The OpenCL C source of an OpenCL module.
const std::string& OpenCLModuleSource(const Module& module);

}  // namespace loom::runtime
