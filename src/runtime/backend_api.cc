// The backend services of c_backend_api.h other than parallel launch (thread_pool.cc):
// workspace memory, the per-thread last error, and calls into a module's imports. They are called from generated code, so
// they report failure through return values and the last error, never by throwing.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "loom/runtime/c_backend_api.h"
#include "loom/runtime/device_api.h"
#include "loom/runtime/module.h"
#include "loom/support/error.h"

namespace {

// Per thread, so concurrent callers never see each other's failures.
thread_local std::string tls_last_error;

// CPU workspaces freed by a thread, kept for its next allocations. A kernel asks for the
// same workspaces on every call, and a fresh large block costs a page fault per page: the
// allocator maps blocks of 128 KiB and more anew each time, and the zero-padded input of a
// 56x56x64 convolution (860 KB) cost more to fault in than the convolution took to read.
// Each block starts with a header naming the pool that made it and its size, so a block
// freed by another thread (generated code frees on the allocating thread; hand-written code
// might not) goes straight back to the system.
class CPUWorkspacePool {
 public:
  ~CPUWorkspacePool() {
    for (Header* block : free_) Device()->FreeDataSpace(kCPU, block);
  }

  void* Alloc(size_t nbytes) {
    // The smallest free block that fits without wasting more than half of it.
    auto best = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      size_t capacity = (*it)->capacity;
      if (capacity >= nbytes && capacity / 2 <= nbytes &&
          (best == free_.end() || capacity < (*best)->capacity)) {
        best = it;
      }
    }
    Header* block = nullptr;
    if (best != free_.end()) {
      block = *best;
      cached_bytes_ -= block->capacity;
      free_.erase(best);
    } else {
      LOOM_CHECK_USER(nbytes <= SIZE_MAX - kHeaderBytes)
          << nbytes << " bytes overflow the address space";
      block = static_cast<Header*>(Device()->AllocDataSpace(kCPU, kHeaderBytes + nbytes,
                                                            loom::runtime::kCPUAllocAlignment));
      block->owner = this;
      block->capacity = nbytes;
    }
    return reinterpret_cast<std::byte*>(block) + kHeaderBytes;
  }

  // Keeps a block this pool made; frees any other.
  void Free(void* workspace) {
    auto* block = reinterpret_cast<Header*>(static_cast<std::byte*>(workspace) - kHeaderBytes);
    if (block->owner != this) {
      Device()->FreeDataSpace(kCPU, block);
      return;
    }
    free_.push_back(block);
    cached_bytes_ += block->capacity;
    // Bounded: the oldest blocks go back to the system first.
    while (cached_bytes_ > kMaxCachedBytes) {
      cached_bytes_ -= free_.front()->capacity;
      Device()->FreeDataSpace(kCPU, free_.front());
      free_.erase(free_.begin());
    }
  }

 private:
  struct Header {
    const CPUWorkspacePool* owner;
    size_t capacity;
  };
  // A whole alignment unit, so the workspace after it keeps the allocator's alignment.
  static constexpr size_t kHeaderBytes = loom::runtime::kCPUAllocAlignment;
  static_assert(sizeof(Header) <= kHeaderBytes);
  // Per thread: a model's largest intermediates stay cached, and a pool of N threads keeps
  // at most N times this.
  static constexpr size_t kMaxCachedBytes = size_t{64} << 20;
  static constexpr DLDevice kCPU{kDLCPU, 0};
  static loom::runtime::DeviceAPI* Device() { return loom::runtime::GetDeviceAPI(kDLCPU); }

  std::vector<Header*> free_;
  size_t cached_bytes_ = 0;
};

thread_local CPUWorkspacePool tls_cpu_workspaces;

// Workspaces of devices the host cannot address (a GPU's): kept, per device, for the
// process's life and handed out again. A kernel group's host code allocates its
// intermediates on every call and frees them when it has launched its kernels, before they
// ran: a block freed so must not go back to the driver (OpenCL would release a buffer queued
// work still uses, and CUDA would wait for the device), and is reused only by work queued
// after it on the device's one in-order queue, which runs after the work that used it.
class DeviceWorkspacePool {
 public:
  void* Alloc(DLDevice device, size_t nbytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<Block>& free = free_[Key(device)];
    // The smallest free block that fits without wasting more than half of it.
    auto best = free.end();
    for (auto it = free.begin(); it != free.end(); ++it) {
      if (it->capacity >= nbytes && it->capacity / 2 <= nbytes &&
          (best == free.end() || it->capacity < best->capacity)) {
        best = it;
      }
    }
    if (best != free.end()) {
      Block block = *best;
      free.erase(best);
      capacity_[block.data] = block.capacity;
      return block.data;
    }
    void* data = loom::runtime::GetDeviceAPI(device.device_type)
                     ->AllocDataSpace(device, nbytes, loom::runtime::kCPUAllocAlignment);
    capacity_[data] = nbytes;
    return data;
  }

  void Free(DLDevice device, void* data) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = capacity_.find(data);
    LOOM_CHECK_USER(it != capacity_.end())
        << "LoomBackendFreeWorkspace: " << data << " is not a workspace of "
        << loom::runtime::DeviceName(device.device_type) << " in use";
    free_[Key(device)].push_back({data, it->second});
    capacity_.erase(it);
  }

 private:
  struct Block {
    void* data;
    size_t capacity;
  };
  static std::pair<int, int> Key(DLDevice device) {
    return {static_cast<int>(device.device_type), device.device_id};
  }
  std::mutex mutex_;
  std::map<std::pair<int, int>, std::vector<Block>> free_;
  std::unordered_map<void*, size_t> capacity_;  // the blocks in use
};

DeviceWorkspacePool& DeviceWorkspaces() {
  static auto* pool = new DeviceWorkspacePool();  // the blocks outlive every static user
  return *pool;
}

// Whether `device`'s workspaces come from DeviceWorkspaces (else straight from its API).
bool PooledDevice(DLDevice device) {
  return !loom::runtime::GetDeviceAPI(device.device_type)->SharesHostMemory();
}

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
    if (PooledDevice(device)) return DeviceWorkspaces().Alloc(device, static_cast<size_t>(nbytes));
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
    if (device_type == kDLCPU) {
      if (ptr != nullptr) tls_cpu_workspaces.Free(ptr);
      return 0;
    }
    DLDevice device{static_cast<DLDeviceType>(device_type), device_id};
    if (PooledDevice(device)) {
      DeviceWorkspaces().Free(device, ptr);
    } else {
      loom::runtime::GetDeviceAPI(device.device_type)->FreeDataSpace(device, ptr);
    }
    return 0;
  } catch (const std::exception& error) {
    LoomAPISetLastError((std::string("LoomBackendFreeWorkspace: ") + error.what()).c_str());
    return -1;
  }
}

int32_t LoomBackendCallPacked(void* module_context, const char* name, const LoomValue* args,
                              const int32_t* type_codes, int32_t num_args) {
  if (module_context == nullptr) {
    LoomAPISetLastError((std::string("LoomBackendCallPacked('") + name +
                         "'): the calling code was not loaded by Loom's runtime, so it has no "
                         "module to find the function in")
                            .c_str());
    return -1;
  }
  try {
    auto* module = static_cast<loom::runtime::ModuleNode*>(module_context);
    if (loom::runtime::PackedFunc func = module->GetImportedFunction(name)) {
      loom::runtime::RetValue ret;
      func.CallPacked(loom::runtime::PackedArgs(args, type_codes, num_args), &ret);
      return 0;
    }
    LoomAPISetLastError((std::string("LoomBackendCallPacked: no module that ") +
                         module->description() + " imports has a function '" + name +
                         "'; build host and device code together with loom::build")
                            .c_str());
    return -1;
  } catch (const std::exception& error) {
    LoomAPISetLastError((std::string(name) + ": " + error.what()).c_str());
    return -1;
  } catch (...) {
    LoomAPISetLastError((std::string(name) + ": failed with an exception that is not a "
                         "std::exception")
                            .c_str());
    return -1;
  }
}

}  // extern "C"
