// What the runtime knows of one kernel of a GPU module (OpenCL or CUDA), shared by their
// modules and code generators: its parameters and the thread axes it is launched over.
#pragma once

#include <string>
#include <vector>

#include "loom/runtime/data_type.h"
#include "loom/runtime/packed_func.h"

namespace loom::runtime {

// One kernel of a device module and how a launch passes its arguments.
struct DeviceKernelInfo {
  std::string name;
  // One per kernel parameter: a handle is a buffer (the device memory of a tensor), anything
  // else a scalar of that type.
  std::vector<DataType> params;
  // The thread axes the kernel is launched over ("blockIdx.x", "threadIdx.y", ...): a call
  // passes the parameters, then the extent of each axis in this order (int64).
  std::vector<std::string> thread_tags;
};

// A thread tag's launch dimension (x 0, y 1, z 2) and whether it counts blocks (blockIdx;
// OpenCL's work-groups) or the threads of one (threadIdx; OpenCL's work-items); another tag
// is a loom::Error naming `kernel`.
struct ThreadAxis {
  int dim;
  bool is_block;
};
ThreadAxis ThreadAxisOf(const std::string& kernel, const std::string& tag);

// A launch's shape: blocks and threads per block in x, y, z.
struct LaunchShape {
  int64_t blocks[3] = {1, 1, 1};
  int64_t threads[3] = {1, 1, 1};
  int dims = 1;  // the highest dimension used, plus one
};

// The launch shape of a call of `kernel` (whose thread tags parsed to `axes`) on `device`
// ("CUDA"): `args` must be its parameters then one positive extent per thread tag; a
// loom::Error naming the device and the kernel otherwise.
LaunchShape LaunchShapeOf(const char* device, const DeviceKernelInfo& kernel,
                          const std::vector<ThreadAxis>& axes, PackedArgs args);

// The axes of each kernel's thread tags, parsed once when a module is made.
std::vector<std::vector<ThreadAxis>> ThreadAxesOf(const std::vector<DeviceKernelInfo>& kernels);

}  // namespace loom::runtime
