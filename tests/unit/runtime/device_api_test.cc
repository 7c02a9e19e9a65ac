#include "runtime_test_util.h"
#include "loom/runtime/device_api.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "loom/support/error.h"

namespace loom::runtime {
namespace {

constexpr DLDevice kCPU{kDLCPU, 0};

TEST(DeviceAPI, CPUIsRegisteredByDefault) {
  EXPECT_NE(FindDeviceAPI(kDLCPU), nullptr);
  EXPECT_EQ(GetDeviceAPI(kDLCPU), FindDeviceAPI(kDLCPU));
  EXPECT_EQ(DeviceName(kDLCPU), "cpu");
}

TEST(DeviceAPI, CPUAllocationsAreAlignedToACacheLineAtLeast) {
  DeviceAPI* cpu = GetDeviceAPI(kDLCPU);
  for (size_t nbytes : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{1000}}) {
    for (size_t alignment : {size_t{1}, size_t{8}, size_t{64}, size_t{256}, size_t{4096}}) {
      void* ptr = cpu->AllocDataSpace(kCPU, nbytes, alignment);
      ASSERT_NE(ptr, nullptr);
      size_t expected = alignment < kCPUAllocAlignment ? kCPUAllocAlignment : alignment;
      EXPECT_EQ(reinterpret_cast<uintptr_t>(ptr) % expected, 0u)
          << "nbytes=" << nbytes << " alignment=" << alignment;
      cpu->FreeDataSpace(kCPU, ptr);
    }
  }
}

TEST(DeviceAPI, CPUAllocationRejectsAlignmentThatIsNotAPowerOfTwo) {
  DeviceAPI* cpu = GetDeviceAPI(kDLCPU);
  std::string message = ErrorOf([&] { cpu->AllocDataSpace(kCPU, 16, 48); });
  EXPECT_NE(message.find("alignment 48 is not a power of two"), std::string::npos) << message;
}

TEST(DeviceAPI, CopyHonoursOffsetsOnTheHost) {
  DeviceAPI* cpu = GetDeviceAPI(kDLCPU);
  auto* src = static_cast<uint8_t*>(cpu->AllocDataSpace(kCPU, 32, 64));
  auto* dst = static_cast<uint8_t*>(cpu->AllocDataSpace(kCPU, 32, 64));
  std::iota(src, src + 32, uint8_t{0});
  std::fill(dst, dst + 32, uint8_t{0xEE});
  CopyDataFromTo(src, 4, dst, 10, 8, kCPU, kCPU);
  for (int i = 0; i < 32; ++i) {
    uint8_t expected = (i >= 10 && i < 18) ? static_cast<uint8_t>(i - 10 + 4) : uint8_t{0xEE};
    EXPECT_EQ(dst[i], expected) << "byte " << i;
  }
  cpu->StreamSync(kCPU);
  cpu->FreeDataSpace(kCPU, src);
  cpu->FreeDataSpace(kCPU, dst);
}

// A fake accelerator whose memory is a host vector; it records which side called it.
class RecordingDevice final : public DeviceAPI {
 public:
  void* AllocDataSpace(DLDevice, size_t nbytes, size_t) override {
    storage_.resize(nbytes);
    return storage_.data();
  }
  void FreeDataSpace(DLDevice, void*) override { ++frees_; }
  void CopyDataFromTo(const void* from, size_t from_offset, void* to, size_t to_offset,
                      size_t nbytes, DLDevice device_from, DLDevice device_to) override {
    last_from_ = device_from.device_type;
    last_to_ = device_to.device_type;
    std::memcpy(static_cast<char*>(to) + to_offset, static_cast<const char*>(from) + from_offset,
                nbytes);
  }
  void StreamSync(DLDevice) override { ++syncs_; }

  std::vector<uint8_t> storage_;
  int frees_ = 0;
  int syncs_ = 0;
  int last_from_ = -1;
  int last_to_ = -1;
};

TEST(DeviceAPI, RegisteredDeviceReceivesCopiesInBothDirections) {
  static RecordingDevice device;
  RegisterDeviceAPI(kDLVulkan, "fake-vulkan", &device);
  RegisterDeviceAPI(kDLVulkan, "fake-vulkan", &device);  // same object again: harmless
  EXPECT_EQ(GetDeviceAPI(kDLVulkan), &device);
  EXPECT_EQ(DeviceName(kDLVulkan), "fake-vulkan");

  const DLDevice accel{kDLVulkan, 0};
  void* on_device = device.AllocDataSpace(accel, 4, 64);
  const uint8_t host_in[4] = {1, 2, 3, 4};
  CopyDataFromTo(host_in, 0, on_device, 0, 4, kCPU, accel);
  EXPECT_EQ(device.last_from_, kDLCPU);
  EXPECT_EQ(device.last_to_, kDLVulkan);

  uint8_t host_out[4] = {};
  CopyDataFromTo(on_device, 1, host_out, 0, 3, accel, kCPU);
  EXPECT_EQ(device.last_from_, kDLVulkan);
  EXPECT_EQ(device.last_to_, kDLCPU);
  EXPECT_EQ(host_out[0], 2);
  EXPECT_EQ(host_out[2], 4);
}

TEST(DeviceAPI, TakingARegisteredDeviceTypeIsAnError) {
  static RecordingDevice first;
  static RecordingDevice second;
  RegisterDeviceAPI(kDLMetal, "fake-metal", &first);
  std::string message = ErrorOf([&] { RegisterDeviceAPI(kDLMetal, "other-metal", &second); });
  EXPECT_NE(message.find("already registered as 'fake-metal'"), std::string::npos) << message;
  EXPECT_EQ(GetDeviceAPI(kDLMetal), &first);
}

TEST(DeviceAPI, UnknownDeviceTypeNamesTheType) {
  EXPECT_EQ(FindDeviceAPI(kDLROCM), nullptr);
  EXPECT_EQ(DeviceName(kDLROCM), "dlpack-device-10");
  std::string message = ErrorOf([] { GetDeviceAPI(kDLROCM); });
  EXPECT_NE(message.find("no device API is registered for DLPack device type 10"),
            std::string::npos)
      << message;
}

TEST(DeviceAPI, CopyBetweenTwoAcceleratorsMustGoThroughTheHost) {
  static RecordingDevice device;
  RegisterDeviceAPI(kDLVPI, "fake-vpi", &device);
  uint8_t a = 0;
  uint8_t b = 0;
  std::string message = ErrorOf([&] {
    CopyDataFromTo(&a, 0, &b, 0, 1, DLDevice{kDLVPI, 0}, DLDevice{kDLCPU, 0});
  });
  EXPECT_EQ(message, "no error");
  message = ErrorOf([&] {
    CopyDataFromTo(&a, 0, &b, 0, 1, DLDevice{kDLVPI, 0}, DLDevice{kDLVulkan, 0});
  });
  EXPECT_NE(message.find("staged through host memory"), std::string::npos) << message;
}

}  // namespace
}  // namespace loom::runtime
