// The backend services of c_backend_api.h other than parallel launch (thread_pool.cc):
// workspace memory and the per-thread last error. They are called from generated code, so
// they report failure through return values and the last error, never by throwing.
#include <exception>
#include <string>

#include "loom/runtime/c_backend_api.h"
#include "loom/runtime/device_api.h"

namespace {

// Per thread, so concurrent callers never see each other's failures.
thread_local std::string tls_last_error;

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
    DLDevice device{static_cast<DLDeviceType>(device_type), device_id};
    loom::runtime::GetDeviceAPI(device.device_type)->FreeDataSpace(device, ptr);
    return 0;
  } catch (const std::exception& error) {
    LoomAPISetLastError((std::string("LoomBackendFreeWorkspace: ") + error.what()).c_str());
    return -1;
  }
}

}  // extern "C"
