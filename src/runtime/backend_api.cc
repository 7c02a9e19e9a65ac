// The backend services of c_backend_api.h other than parallel launch (thread_pool.cc):
// workspace memory and the per-thread last error. They are called from generated code, so
// they report failure through return values and the last error, never by throwing.
#include <algorithm>
#include <exception>
#include <string>
#include <unordered_map>
#include <vector>

#include "loom/runtime/c_backend_api.h"
#include "loom/runtime/device_api.h"

namespace {

// Per thread, so concurrent callers never see each other's failures.
thread_local std::string tls_last_error;

// CPU workspaces freed by a thread, kept for its next allocations. A kernel asks for the
// same workspaces on every call, and a fresh large block costs a page fault per page: the
// allocator maps blocks of 128 KiB and more anew each time, and the zero-padded input of a
// 56x56x64 convolution (860 KB) cost more to fault in than the convolution took to read.
class CPUWorkspacePool {
 public:
  ~CPUWorkspacePool() {
    for (const Block& block : free_) Device()->FreeDataSpace(kCPU, block.ptr);
  }

  void* Alloc(size_t nbytes) {
    // The smallest free block that fits without wasting more than half of it.
    auto best = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->nbytes >= nbytes && it->nbytes / 2 <= nbytes &&
          (best == free_.end() || it->nbytes < best->nbytes)) {
        best = it;
      }
    }
    Block block{nbytes, nullptr};
    if (best != free_.end()) {
      block = *best;
      cached_bytes_ -= block.nbytes;
      free_.erase(best);
    } else {
      block.ptr = Device()->AllocDataSpace(kCPU, nbytes, loom::runtime::kCPUAllocAlignment);
    }
    live_[block.ptr] = block.nbytes;
    return block.ptr;
  }

  // False if `ptr` was not allocated by this thread's pool.
  bool Free(void* ptr) {
    auto live = live_.find(ptr);
    if (live == live_.end()) return false;
    free_.push_back({live->second, ptr});
    cached_bytes_ += live->second;
    live_.erase(live);
    // Bounded: the oldest blocks go back to the system first.
    while (cached_bytes_ > kMaxCachedBytes) {
      cached_bytes_ -= free_.front().nbytes;
      Device()->FreeDataSpace(kCPU, free_.front().ptr);
      free_.erase(free_.begin());
    }
    return true;
  }

 private:
  struct Block {
    size_t nbytes;
    void* ptr;
  };
  static constexpr size_t kMaxCachedBytes = size_t{256} << 20;
  static constexpr DLDevice kCPU{kDLCPU, 0};
  static loom::runtime::DeviceAPI* Device() { return loom::runtime::GetDeviceAPI(kDLCPU); }

  std::vector<Block> free_;
  std::unordered_map<void*, size_t> live_;
  size_t cached_bytes_ = 0;
};

thread_local CPUWorkspacePool tls_cpu_workspaces;

}  // namespace

extern "C" {

void LoomAPISetLastError(const char* msg) { tls_last_error = msg == nullptr ? "" : msg; }

const char* LoomGetLastError(void) { return tls_last_error.c_str(); }

void* LoomBackendAllocWorkspace(int32_t device_type, int32_t device_id, uint64_t nbytes,
                                int32_t /*dtype_code_hint*/, int32_t /*dtype_bits_hint*/) {
  if (device_type < kDLCPU || device_type > kDLCUDAManaged) {
    LoomAPISetLastError(("LoomBackendAllocWorkspace: " + std::to_string(device_type) +
                         " is not a DLPack device type")
                            .c_str());
    return nullptr;
  }
  try {
    if (device_type == kDLCPU) return tls_cpu_workspaces.Alloc(static_cast<size_t>(nbytes));
    DLDevice device{static_cast<DLDeviceType>(device_type), device_id};
    return loom::runtime::GetDeviceAPI(device.device_type)
        ->AllocDataSpace(device, static_cast<size_t>(nbytes), loom::runtime::kCPUAllocAlignment);
  } catch (const std::exception& error) {
    LoomAPISetLastError(
        ("LoomBackendAllocWorkspace of " + std::to_string(nbytes) + " bytes: " + error.what())
            .c_str());
    return nullptr;
  }
}

int32_t LoomBackendFreeWorkspace(int32_t device_type, int32_t device_id, void* ptr) {
  if (device_type < kDLCPU || device_type > kDLCUDAManaged) {
    LoomAPISetLastError(("LoomBackendFreeWorkspace: " + std::to_string(device_type) +
                         " is not a DLPack device type")
                            .c_str());
    return -1;
  }
  try {
    if (device_type == kDLCPU && tls_cpu_workspaces.Free(ptr)) return 0;
    DLDevice device{static_cast<DLDeviceType>(device_type), device_id};
    loom::runtime::GetDeviceAPI(device.device_type)->FreeDataSpace(device, ptr);
    return 0;
  } catch (const std::exception& error) {
    LoomAPISetLastError((std::string("LoomBackendFreeWorkspace: ") + error.what()).c_str());
    return -1;
  }
}

}  // extern "C"
