// What the GPU code generators (opencl, cuda) share around CodeGenGPU: a kernel's launch
// shape and its checks against the target's limits, and the kernels' descriptions for the
// runtime. Private to src/target.
#pragma once

#include <string>
#include <vector>

#include "loom/ir/module.h"
#include "loom/runtime/device_kernel.h"
#include "loom/target/target.h"
#include "target/codegen/gpu/codegen_gpu.h"

namespace loom::codegen {

// The threads of one block of `func`: the product of its threadIdx extents, each a constant
// (a loom::Error naming the loop otherwise).
int64_t ThreadsPerBlock(const PrimFunc& func);

// Generates every kernel of `kernels` (device kernels of SplitHostDevice) with `codegen`,
// after checking each against `target`'s -max-threads-per-block and
// -max-shared-memory-per-block; the kernels' descriptions for the runtime's module.
std::vector<runtime::DeviceKernelInfo> GenerateKernels(const IRModule& kernels,
                                                       const Target& target, CodeGenGPU& codegen);

}  // namespace loom::codegen
