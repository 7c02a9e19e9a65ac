// DeviceAPI: how the runtime allocates, copies and synchronizes memory on one kind of
// device. Devices are keyed by DLPack's device type, so tensors described by a DLTensor
// find the implementation that owns their memory. The CPU implementation is built in;
// other devices (the VTA simulator in libloom_vta; later CUDA and OpenCL) register an
// instance of their own when their library is loaded.
#pragma once

#include <dlpack/dlpack.h>

#include <cstddef>
#include <optional>
#include <string>

namespace loom::runtime {

class DeviceAPI {
 public:
  virtual ~DeviceAPI() = default;

  // Allocates `nbytes` on `device`, aligned to at least `alignment` bytes (a power of two).
  // The returned handle is what the device's kernels and CopyDataFromTo take; whether the
  // host may dereference it is up to the device.
  virtual void* AllocDataSpace(DLDevice device, size_t nbytes, size_t alignment) = 0;
  virtual void FreeDataSpace(DLDevice device, void* ptr) = 0;
  // Copies `nbytes` from `from + from_offset` to `to + to_offset`. At least one side lives
  // on this API's device; the other is either the same device or the host (kDLCPU).
  virtual void CopyDataFromTo(const void* from, size_t from_offset, void* to, size_t to_offset,
                              size_t nbytes, DLDevice device_from, DLDevice device_to) = 0;
  // Waits until all work queued on `device` has finished.
  virtual void StreamSync(DLDevice device) = 0;
  // Whether the host may read and write this device's allocations in place: a device that
  // shares the host's DRAM (VTA on its boards, and its simulator). A model whose kernels run
  // on such a device keeps all its tensors there, and its host kernels use them directly.
  virtual bool SharesHostMemory() const { return false; }
  // Whether a handle plus a byte offset addresses memory inside the allocation, so that one
  // allocation can hold several tensors (CUDA's device pointers do; OpenCL's cl_mem handles
  // are opaque, so each tensor there is an allocation of its own).
  virtual bool AddressableOffsets() const { return true; }
  // The alignment in bytes every tensor a device kernel reads needs (an accelerator that
  // addresses DRAM in whole elements of its buffers: VTA's weight element, 256 bytes at its
  // default configuration).
  virtual size_t DataAlignment() const { return 64; }
  // The configuration of this runtime's device, for a device that comes in configurations
  // (TargetKind::device_configuration); empty for the others.
  virtual std::string Configuration() const { return ""; }
  // Makes `configuration` (what Configuration returns) this runtime's, for a process that
  // runs a kernel compiled for it (a tuner's measurement); a loom::Error when it is invalid or
  // the device cannot change now. A device without configurations takes only "".
  virtual void SetConfiguration(const std::string& configuration);
  // A simulated device's time: the seconds the work this thread ran on it since the last call
  // took on the hardware it models (at the configuration's clock), which a measurement takes
  // instead of the host's wall time. Empty for a device that runs for real.
  virtual std::optional<double> TakeSimulatedSeconds() { return std::nullopt; }
};

// Installs `api` (not owned; it must outlive every use) as the implementation for
// `device_type`, under a human-readable `name` ("cpu", "vta"). Registering the same object
// twice is harmless; registering a different object for a taken type is a loom::Error.
void RegisterDeviceAPI(DLDeviceType device_type, const std::string& name, DeviceAPI* api);

// The implementation for `device_type`; throws loom::Error naming the device type when no
// library registered one.
DeviceAPI* GetDeviceAPI(DLDeviceType device_type);
// Returns nullptr instead of throwing.
DeviceAPI* FindDeviceAPI(DLDeviceType device_type);
// The registered name, or "dlpack-device-<n>" when none is registered.
std::string DeviceName(DLDeviceType device_type);

// Copies between any two devices by dispatching to the API that owns the non-host side
// (host-to-host copies use the CPU API). Copies between two different non-host device
// types are a loom::Error: they must go through host memory.
void CopyDataFromTo(const void* from, size_t from_offset, void* to, size_t to_offset, size_t nbytes,
                    DLDevice device_from, DLDevice device_to);

// Alignment of every CPU allocation: one cache line, enough for any vector load.
inline constexpr size_t kCPUAllocAlignment = 64;

}  // namespace loom::runtime
