// DLPack's kDLCUDA in the runtime's device registry: memory is the device's global memory
// (cuMemAlloc), copies and kernels are ordered on each context's default stream.
#include <algorithm>
#include <string>

#include "loom/runtime/device_api.h"
#include "loom/support/error.h"
#include "runtime/cuda/cuda_driver.h"

namespace loom::runtime::cuda {

namespace {

std::string Where(DLDevice device) { return "cuda:" + std::to_string(device.device_id); }

CUdeviceptr Address(const void* ptr, size_t offset) {
  return reinterpret_cast<CUdeviceptr>(ptr) + offset;
}

class CUDADeviceAPI final : public DeviceAPI {
 public:
  void* AllocDataSpace(DLDevice device, size_t nbytes, size_t /*alignment*/) override {
    // cuMemAlloc aligns to 256 bytes, enough for any access a kernel makes.
    UseDevice(device.device_id);
    CUdeviceptr ptr = 0;
    Check(GlobalDriver().cuMemAlloc(&ptr, std::max<size_t>(nbytes, 1)), "cuMemAlloc",
          std::to_string(nbytes) + " bytes on " + Where(device));
    return reinterpret_cast<void*>(ptr);
  }

  // Never throws (it runs in destructors): after a kernel faulted, every driver call fails
  // with that fault, which the next synchronizing call reports; the memory goes with the
  // context then.
  void FreeDataSpace(DLDevice device, void* ptr) override {
    try {
      UseDevice(device.device_id);
      GlobalDriver().cuMemFree(Address(ptr, 0));
    } catch (const Error&) {
    }
  }

  void CopyDataFromTo(const void* from, size_t from_offset, void* to, size_t to_offset,
                      size_t nbytes, DLDevice device_from, DLDevice device_to) override {
    if (nbytes == 0) return;
    const Driver& cu = GlobalDriver();
    const bool from_device = device_from.device_type == kDLCUDA;
    const bool to_device = device_to.device_type == kDLCUDA;
    if (from_device && to_device) {
      LOOM_CHECK_USER(device_from.device_id == device_to.device_id)
          << "CopyDataFromTo: " << Where(device_from) << " to " << Where(device_to)
          << " (copies between two GPUs go through the host)";
      UseDevice(device_to.device_id);
      Check(cu.cuMemcpyDtoD(Address(to, to_offset), Address(from, from_offset), nbytes),
            "cuMemcpyDtoD", Where(device_from) + " to " + Where(device_to));
    } else if (to_device) {
      // Returns once the host memory may be reused.
      UseDevice(device_to.device_id);
      Check(cu.cuMemcpyHtoD(Address(to, to_offset), static_cast<const char*>(from) + from_offset,
                            nbytes),
            "cuMemcpyHtoD", "the host to " + Where(device_to));
    } else {
      LOOM_CHECK_USER(from_device)
          << "CopyDataFromTo on the cuda device API: neither side is a cuda device";
      // Waits for every kernel queued before it: the host reads a finished result.
      UseDevice(device_from.device_id);
      Check(cu.cuMemcpyDtoH(static_cast<char*>(to) + to_offset, Address(from, from_offset),
                            nbytes),
            "cuMemcpyDtoH", Where(device_from) + " to the host");
    }
  }

  void StreamSync(DLDevice device) override {
    UseDevice(device.device_id);
    Check(GlobalDriver().cuCtxSynchronize(), "cuCtxSynchronize",
          Where(device) + " (a kernel launched before it failed)");
  }
};

// Registered when the runtime loads; nothing touches the driver until a tensor is allocated on
// the device.
CUDADeviceAPI device_api;
const bool registered = (RegisterDeviceAPI(kDLCUDA, "cuda", &device_api), true);

}  // namespace

}  // namespace loom::runtime::cuda
