// The OpenCL ICD loader opened at run time and the process's context (opencl_context.h).
#include "runtime/opencl/opencl_context.h"

#include <dlfcn.h>

#include <string>

#include "loom/support/error.h"

namespace loom::runtime::opencl {

namespace {

constexpr const char* kIcdLoader = "libOpenCL.so.1";
constexpr const char* kInstallHint =
    "install the OpenCL ICD loader and a driver (Debian: ocl-icd-libopencl1, and "
    "pocl-opencl-icd to run OpenCL on the CPU)";

Library OpenLibrary() {
  void* handle = dlopen(kIcdLoader, RTLD_NOW | RTLD_LOCAL);
  LOOM_CHECK_USER(handle != nullptr) << "OpenCL: the ICD loader " << kIcdLoader
                                     << " cannot be loaded (" << dlerror() << "); " << kInstallHint;
  Library library;
#define LOOM_OPENCL_RESOLVE(name)                                                \
  library.name = reinterpret_cast<decltype(library.name)>(dlsym(handle, #name)); \
  LOOM_CHECK_USER(library.name != nullptr)                                       \
      << "OpenCL: " << kIcdLoader << " has no " #name " (an OpenCL 1.2 loader is needed)";
  LOOM_OPENCL_FUNCTIONS(LOOM_OPENCL_RESOLVE)
#undef LOOM_OPENCL_RESOLVE
  return library;  // the loader stays open for the life of the process
}

std::string DeviceName(const Library& cl, cl_device_id device) {
  char name[256] = {};
  cl.clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof(name) - 1, name, nullptr);
  return name;
}

Context MakeContext() {
  Context made;
  made.cl = OpenLibrary();
  const Library& cl = made.cl;
  cl_platform_id platform = nullptr;
  cl_uint platforms = 0;
  const cl_int found = cl.clGetPlatformIDs(1, &platform, &platforms);
  LOOM_CHECK_USER(found == CL_SUCCESS && platforms > 0)
      << "OpenCL: no platform is installed (the ICD loader found no driver in "
      << "/etc/OpenCL/vendors); " << kInstallHint;
  char name[256] = {};
  cl.clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof(name) - 1, name, nullptr);
  made.platform_name = name;
  cl_uint count = 0;
  cl.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count);
  LOOM_CHECK_USER(count > 0) << "OpenCL: the platform '" << made.platform_name
                             << "' has no devices";
  made.devices.resize(count);
  Check(cl.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, made.devices.data(), nullptr),
        "clGetDeviceIDs", "listing the devices of '" + made.platform_name + "'");
  for (cl_device_id device : made.devices) made.device_names.push_back(DeviceName(cl, device));
  cl_int status = CL_SUCCESS;
  made.context = cl.clCreateContext(nullptr, count, made.devices.data(), nullptr, nullptr, &status);
  Check(status, "clCreateContext", "the context of '" + made.platform_name + "'");
  for (size_t i = 0; i < made.devices.size(); ++i) {
    made.queues.push_back(cl.clCreateCommandQueue(made.context, made.devices[i], 0, &status));
    Check(status, "clCreateCommandQueue", "the queue of opencl:" + std::to_string(i));
  }
  return made;
}

}  // namespace

Context& GlobalContext() {
  // Made once; a failure is rethrown to every caller (the machine will not grow a driver).
  static std::once_flag once;
  static Context* context = nullptr;
  static std::string failure;
  std::call_once(once, [] {
    try {
      context = new Context(MakeContext());  // lives as long as the process
    } catch (const Error& error) {
      failure = error.what();
    }
  });
  LOOM_CHECK_USER(context != nullptr) << failure;
  return *context;
}

cl_command_queue QueueOf(int device_id) {
  Context& context = GlobalContext();
  LOOM_CHECK_USER(device_id >= 0 && static_cast<size_t>(device_id) < context.queues.size())
      << "OpenCL: there is no device opencl:" << device_id << "; the platform '"
      << context.platform_name << "' has " << context.queues.size() << " (opencl:0 is '"
      << context.device_names[0] << "')";
  return context.queues[static_cast<size_t>(device_id)];
}

void Check(cl_int status, const char* call, const std::string& what) {
  LOOM_CHECK_USER(status == CL_SUCCESS)
      << "OpenCL: " << call << " failed with error " << status << " (" << what << ")";
}

}  // namespace loom::runtime::opencl
