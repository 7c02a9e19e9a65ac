// What the GPU target kinds (cuda, opencl) declare alike: a device of opaque memory with the
// key "gpu", its launch limits, the threads schedules aim to keep busy, and contraction into
// fma. Private to src/target.
#pragma once

#include <string>

#include "loom/target/target_kind.h"

namespace loom::codegen {

struct GpuKindLimits {
  int device_type;               // DLPack's
  std::string key;               // the kind's own strategy key, before "gpu"
  int64_t max_threads;           // -max-threads-per-block's default and upper bound
  int64_t max_threads_limit;
  int64_t max_shared_bytes;      // -max-shared-memory-per-block's default and upper bound
  int64_t max_shared_limit;
  std::string shared_memory;     // what the dialect calls it ("__shared__", "__local")
  int64_t warp_size;             // -thread-warp-size's default: 1 where kernels cannot shuffle
};

// The kind `name`, registered with those declarations; its description and own attributes
// follow on the returned builder.
TargetKindBuilder DeclareGpuKind(const std::string& name, const GpuKindLimits& limits);

}  // namespace loom::codegen
