// The VTA device in Loom's runtime device registry: "vta", DLPack's kDLExtDev.
//
// Registration is static: loading libloom_vta (linking it, or dlopen) registers the device,
// as TVM's VTA library registers "device_api.ext_dev". Memory handles are VTA buffers
// (host-visible DRAM of the simulator), so AllocDataSpace results can be passed straight
// to VTALoadBuffer2D / VTAStoreBuffer2D.
#include <algorithm>
#include <cstdint>
#include <string>

#include "loom/runtime/device_api.h"
#include "loom/support/error.h"
#include "loom/vta/runtime.h"
#include "loom/vta/simulator.h"

namespace loom::vta {

namespace {

// Calls a C API function and rethrows its recorded error: the device API is C++.
template <typename Result>
Result Checked(Result result) {
  ThrowIfLastError();
  return result;
}

class VTADeviceAPI final : public runtime::DeviceAPI {
 public:
  void* AllocDataSpace(DLDevice device, size_t nbytes, size_t alignment) override {
    LOOM_CHECK_USER(alignment != 0 && (alignment & (alignment - 1)) == 0 &&
                    alignment <= Dram::kPageBytes)
        << "AllocDataSpace on vta(" << device.device_id << "): alignment " << alignment
        << " must be a power of two no larger than the " << Dram::kPageBytes
        << "-byte DRAM page (the alignment applies to the physical address)";
    VTAClearLastError();
    return Checked(VTABufferAlloc(nbytes));
  }

  void FreeDataSpace(DLDevice, void* ptr) override {
    VTAClearLastError();
    VTABufferFree(ptr);
    ThrowIfLastError();
  }

  void CopyDataFromTo(const void* from, size_t from_offset, void* to, size_t to_offset,
                      size_t nbytes, DLDevice device_from, DLDevice device_to) override {
    int kind_mask = 0;
    if (device_from.device_type == kDLExtDev) kind_mask |= VTA_MEMCPY_D2H;
    if (device_to.device_type == kDLExtDev) kind_mask |= VTA_MEMCPY_H2D;
    LOOM_CHECK_USER(kind_mask != 0)
        << "CopyDataFromTo on the vta device API: neither side is a vta device";
    VTAClearLastError();
    VTABufferCopy(from, from_offset, to, to_offset, nbytes, kind_mask);
    ThrowIfLastError();
  }

  // VTA's DRAM is the host's (the boards' shared memory, the simulator's host pages): a
  // model's host kernels use its tensors in place.
  bool SharesHostMemory() const override { return true; }
  // A DRAM address of a LOAD is a whole number of the buffer's elements: the largest.
  size_t DataAlignment() const override {
    const VTAConfig& c = RuntimeConfig();
    return static_cast<size_t>(std::max({c.inp_elem_bytes(), c.wgt_elem_bytes(),
                                         c.acc_elem_bytes(), c.out_elem_bytes()}));
  }
  // What a model compiled for VTA recorded (the vta target's device_configuration).
  std::string Configuration() const override { return RuntimeConfig().ToJson(); }
  void SetConfiguration(const std::string& configuration) override {
    const VTAConfig config = VTAConfig::FromJson(configuration);
    if (!(config == RuntimeConfig())) SetRuntimeConfig(config);
  }
  // The simulator's cycles of this thread's runs, at the configuration's clock.
  std::optional<double> TakeSimulatedSeconds() override {
    const VTACommandHandle cmd = VTATLSCommandHandle();
    const uint64_t cycles = RunTotalsOf(cmd).timing.total_cycles;
    ResetRunTotals(cmd);
    return RuntimeConfig().SecondsOf(static_cast<int64_t>(cycles));
  }
  // Runs whatever the calling thread queued, with no cycle limit.
  void StreamSync(DLDevice) override {
    VTAClearLastError();
    VTASynchronize(VTATLSCommandHandle(), UINT32_MAX);
    ThrowIfLastError();
  }
};

VTADeviceAPI& Instance() {
  static VTADeviceAPI api;
  return api;
}

[[maybe_unused]] const bool registered = [] {
  runtime::RegisterDeviceAPI(kDLExtDev, "vta", &Instance());
  return true;
}();

}  // namespace

}  // namespace loom::vta
