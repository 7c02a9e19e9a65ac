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

#include "loom/runtime/data_type.h"
#include "loom/runtime/module.h"

namespace loom::runtime {

// One kernel of an OpenCL module and how a launch passes its arguments.
struct OpenCLKernelInfo {
  std::string name;
  // One per kernel parameter: a handle is a buffer (the cl_mem of a tensor on the device),
  // anything else a scalar of that type.
  std::vector<DataType> params;
  // The thread axes the kernel is launched over ("blockIdx.x", "threadIdx.y", ...): a call
  // passes the parameters, then the extent of each axis in this order (int64).
  std::vector<std::string> thread_tags;
};

// A thread tag's launch dimension (x 0, y 1, z 2) and whether it counts work-groups
// (blockIdx) or the work-items of one (threadIdx); another tag is a loom::Error naming `kernel`.
struct OpenCLThreadAxis {
  int dim;
  bool is_block;
};
OpenCLThreadAxis OpenCLThreadAxisOf(const std::string& kernel, const std::string& tag);

// A module of `kernels`, all defined in the OpenCL C `source`. Each kernel is a function of
// the module (GetFunction): a call launches it on device 0's queue and returns without
// waiting (a copy to the host, or DeviceAPI::StreamSync, waits). The program is compiled
// once, on the first call; a driver's compile error is a loom::Error with its build log.
Module OpenCLModuleCreate(std::string source, std::vector<OpenCLKernelInfo> kernels);

// The bytes an artifact holds of an OpenCL module (type key "opencl"), which the loader this
// runtime registers reads back.
std::string SerializeOpenCLModule(const Module& module);

// The OpenCL C source of an OpenCL module.
const std::string& OpenCLModuleSource(const Module& module);

}  // namespace loom::runtime
