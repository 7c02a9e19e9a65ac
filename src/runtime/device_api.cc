#include "loom/runtime/device_api.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "loom/support/error.h"

namespace loom::runtime {

namespace {

bool IsPowerOfTwo(size_t value) { return value != 0 && (value & (value - 1)) == 0; }

class CPUDeviceAPI final : public DeviceAPI {
 public:
  void* AllocDataSpace(DLDevice device, size_t nbytes, size_t alignment) override {
    LOOM_CHECK_USER(IsPowerOfTwo(alignment))
        << "AllocDataSpace on cpu(" << device.device_id << "): alignment " << alignment
        << " is not a power of two";
    size_t effective_alignment = alignment < kCPUAllocAlignment ? kCPUAllocAlignment : alignment;
    // aligned_alloc wants a size that is a multiple of the alignment; a zero-byte request
    // still gets a distinct, freeable block.
    size_t rounded = (nbytes + effective_alignment - 1) / effective_alignment * effective_alignment;
    if (rounded == 0) rounded = effective_alignment;
    LOOM_CHECK_USER(rounded >= nbytes)
        << "AllocDataSpace on cpu: " << nbytes << " bytes overflows the address space";
    void* ptr = std::aligned_alloc(effective_alignment, rounded);
    LOOM_CHECK_USER(ptr != nullptr)
        << "AllocDataSpace on cpu: out of memory allocating " << nbytes << " bytes";
    return ptr;
  }

  void FreeDataSpace(DLDevice, void* ptr) override { std::free(ptr); }

  void CopyDataFromTo(const void* from, size_t from_offset, void* to, size_t to_offset,
                      size_t nbytes, DLDevice, DLDevice) override {
    if (nbytes == 0) return;
    std::memmove(static_cast<char*>(to) + to_offset, static_cast<const char*>(from) + from_offset,
                 nbytes);
  }

  // Host work is synchronous: there is never anything in flight.
  void StreamSync(DLDevice) override {}
};

struct RegistryEntry {
  std::string name;
  DeviceAPI* api;
};

class Registry {
 public:
  static Registry& Global() {
    static Registry registry;
    return registry;
  }

  void Register(DLDeviceType device_type, const std::string& name, DeviceAPI* api) {
    LOOM_CHECK_USER(api != nullptr)
        << "RegisterDeviceAPI(" << name << "): the device API object is null";
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(device_type);
    if (it != entries_.end()) {
      LOOM_CHECK_USER(it->second.api == api)
          << "RegisterDeviceAPI(" << name << "): DLPack device type " << device_type
          << " is already registered as '" << it->second.name << "'";
      return;
    }
    entries_.emplace(device_type, RegistryEntry{name, api});
  }

  const RegistryEntry* Find(DLDeviceType device_type) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(device_type);
    return it == entries_.end() ? nullptr : &it->second;
  }

 private:
  Registry() { entries_.emplace(kDLCPU, RegistryEntry{"cpu", &cpu_}); }

  std::mutex mutex_;
  // Entries are never erased, so pointers handed out by Find stay valid.
  std::map<int, RegistryEntry> entries_;
  CPUDeviceAPI cpu_;
};

}  // namespace

void DeviceAPI::SetConfiguration(const std::string& configuration) {
  LOOM_CHECK_USER(configuration.empty())
      << "this device comes in one configuration; it cannot take " << configuration;
}

void RegisterDeviceAPI(DLDeviceType device_type, const std::string& name, DeviceAPI* api) {
  Registry::Global().Register(device_type, name, api);
}

DeviceAPI* FindDeviceAPI(DLDeviceType device_type) {
  const RegistryEntry* entry = Registry::Global().Find(device_type);
  return entry == nullptr ? nullptr : entry->api;
}

std::string DeviceName(DLDeviceType device_type) {
  const RegistryEntry* entry = Registry::Global().Find(device_type);
  if (entry != nullptr) return entry->name;
  return "dlpack-device-" + std::to_string(static_cast<int>(device_type));
}

DeviceAPI* GetDeviceAPI(DLDeviceType device_type) {
  DeviceAPI* api = FindDeviceAPI(device_type);
  LOOM_CHECK_USER(api != nullptr)
      << "no device API is registered for DLPack device type " << static_cast<int>(device_type)
      << (device_type == kDLExtDev ? " (ext_dev, the VTA device: link or load libloom_vta)" : "")
      << "; the library implementing that device registers it when it is loaded";
  return api;
}

void CopyDataFromTo(const void* from, size_t from_offset, void* to, size_t to_offset, size_t nbytes,
                    DLDevice device_from, DLDevice device_to) {
  DLDeviceType owner = kDLCPU;
  if (device_from.device_type != kDLCPU && device_to.device_type != kDLCPU) {
    LOOM_CHECK_USER(device_from.device_type == device_to.device_type)
        << "CopyDataFromTo from " << DeviceName(device_from.device_type) << " to "
        << DeviceName(device_to.device_type)
        << ": copies between two different devices must be staged through host memory";
    owner = device_from.device_type;
  } else if (device_from.device_type != kDLCPU) {
    owner = device_from.device_type;
  } else {
    owner = device_to.device_type;
  }
  GetDeviceAPI(owner)->CopyDataFromTo(from, from_offset, to, to_offset, nbytes, device_from,
                                      device_to);
}

}  // namespace loom::runtime
