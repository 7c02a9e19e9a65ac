// The CUDA driver opened at run time and its devices (cuda_driver.h).
#include "runtime/cuda/cuda_driver.h"

#include <dlfcn.h>

#include <memory>
#include <mutex>
#include <string>

#include "loom/support/error.h"

namespace loom::runtime::cuda {

namespace {

constexpr const char* kDriverLibrary = "libcuda.so.1";

struct State {
  Driver driver;
  std::vector<Device> devices;
};

Driver OpenDriver() {
  void* handle = dlopen(kDriverLibrary, RTLD_NOW | RTLD_LOCAL);
  LOOM_CHECK_USER(handle != nullptr)
      << "CUDA: the driver library " << kDriverLibrary << " cannot be loaded (" << dlerror()
      << "); this machine has no NVIDIA driver: run on another device (cpu, opencl) or install "
      << "the driver";
  Driver driver;
#define LOOM_CUDA_RESOLVE(name, symbol, type)                            \
  driver.name = reinterpret_cast<type>(dlsym(handle, symbol));           \
  LOOM_CHECK_USER(driver.name != nullptr) << "CUDA: " << kDriverLibrary \
                                          << " has no " symbol " (the driver is too old)";
  LOOM_CUDA_FUNCTIONS(LOOM_CUDA_RESOLVE)
#undef LOOM_CUDA_RESOLVE
  return driver;  // the library stays open for the life of the process
}

State MakeState() {
  State state;
  state.driver = OpenDriver();
  const Driver& cu = state.driver;
  Check(cu.cuInit(0), "cuInit", "initializing the driver (is there an NVIDIA GPU?)");
  int count = 0;
  Check(cu.cuDeviceGetCount(&count), "cuDeviceGetCount", "listing the devices");
  LOOM_CHECK_USER(count > 0) << "CUDA: the driver sees no device";
  for (int i = 0; i < count; ++i) {
    Device device;
    const std::string where = "cuda:" + std::to_string(i);
    Check(cu.cuDeviceGet(&device.handle, i), "cuDeviceGet", where);
    char name[256] = {};
    Check(cu.cuDeviceGetName(name, sizeof(name) - 1, device.handle), "cuDeviceGetName", where);
    device.name = name;
    int major = 0, minor = 0;
    Check(cu.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                  device.handle),
          "cuDeviceGetAttribute", where);
    Check(cu.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                  device.handle),
          "cuDeviceGetAttribute", where);
    device.compute_capability = major * 10 + minor;
    Check(cu.cuDevicePrimaryCtxRetain(&device.context, device.handle), "cuDevicePrimaryCtxRetain",
          where);
    state.devices.push_back(device);
  }
  return state;
}

State& GlobalState() {
  // Made once; a failure is rethrown to every caller (the machine will not grow a GPU).
  static std::once_flag once;
  static State* state = nullptr;
  static std::string failure;
  std::call_once(once, [] {
    try {
      state = new State(MakeState());  // lives as long as the process
    } catch (const Error& error) {
      failure = error.what();
    }
  });
  LOOM_CHECK_USER(state != nullptr) << failure;
  return *state;
}

}  // namespace

const Driver& GlobalDriver() { return GlobalState().driver; }

const Device& UseDevice(int device_id) {
  State& state = GlobalState();
  LOOM_CHECK_USER(device_id >= 0 && static_cast<size_t>(device_id) < state.devices.size())
      << "CUDA: there is no device cuda:" << device_id << "; the driver sees "
      << state.devices.size() << " (cuda:0 is '" << state.devices[0].name << "')";
  const Device& device = state.devices[static_cast<size_t>(device_id)];
  Check(state.driver.cuCtxSetCurrent(device.context), "cuCtxSetCurrent",
        "cuda:" + std::to_string(device_id));
  return device;
}

void Check(CUresult result, const char* call, const std::string& what) {
  if (result == CUDA_SUCCESS) return;
  const char* name = "an unknown error";
  const char* text = "";
  // Resolved here, not from the driver table: cuInit's own failure comes before the table is
  // kept. Only an error pays for the lookup.
  if (void* handle = dlopen(kDriverLibrary, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD)) {
    using Describe = CUresult (*)(CUresult, const char**);
    if (auto get_name = reinterpret_cast<Describe>(dlsym(handle, "cuGetErrorName"))) {
      get_name(result, &name);
    }
    if (auto get_string = reinterpret_cast<Describe>(dlsym(handle, "cuGetErrorString"))) {
      get_string(result, &text);
    }
    dlclose(handle);
  }
  if (name == nullptr) name = "an unknown error";
  if (text == nullptr) text = "";
  LOOM_THROW << "CUDA: " << call << " failed with " << name << " (" << result << ": " << text
             << ") in " << what;
}

}  // namespace loom::runtime::cuda
