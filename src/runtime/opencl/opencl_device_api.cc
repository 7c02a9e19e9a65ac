// DLPack's kDLOpenCL in the runtime's device registry: memory handles are cl_mem buffers of
// the process's context (opencl_context.h), copies go through the device's in-order queue.
#include <algorithm>
#include <string>

#include "loom/runtime/device_api.h"
#include "loom/support/error.h"
#include "runtime/opencl/opencl_context.h"

namespace loom::runtime::opencl {

namespace {

std::string Where(DLDevice device) { return "opencl:" + std::to_string(device.device_id); }

class OpenCLDeviceAPI final : public DeviceAPI {
 public:
  void* AllocDataSpace(DLDevice device, size_t nbytes, size_t /*alignment*/) override {
    // A buffer is aligned for every type (CL_DEVICE_MEM_BASE_ADDR_ALIGN); kernels index it.
    QueueOf(device.device_id);
    Context& context = GlobalContext();
    cl_int status = CL_SUCCESS;
    cl_mem buffer = context.cl.clCreateBuffer(context.context, CL_MEM_READ_WRITE,
                                              std::max<size_t>(nbytes, 1), nullptr, &status);
    Check(status, "clCreateBuffer", std::to_string(nbytes) + " bytes on " + Where(device));
    return buffer;
  }

  // Never throws (it runs in destructors); a failed release leaves the buffer to the context.
  void FreeDataSpace(DLDevice /*device*/, void* ptr) override {
    GlobalContext().cl.clReleaseMemObject(static_cast<cl_mem>(ptr));
  }

  void CopyDataFromTo(const void* from, size_t from_offset, void* to, size_t to_offset,
                      size_t nbytes, DLDevice device_from, DLDevice device_to) override {
    if (nbytes == 0) return;
    const Library& cl = GlobalContext().cl;
    const bool from_device = device_from.device_type == kDLOpenCL;
    const bool to_device = device_to.device_type == kDLOpenCL;
    if (from_device && to_device) {
      Check(cl.clEnqueueCopyBuffer(
                QueueOf(device_to.device_id), static_cast<cl_mem>(const_cast<void*>(from)),
                static_cast<cl_mem>(to), from_offset, to_offset, nbytes, 0, nullptr, nullptr),
            "clEnqueueCopyBuffer", Where(device_from) + " to " + Where(device_to));
    } else if (to_device) {
      // Blocking: the host memory may be gone when the call returns.
      Check(cl.clEnqueueWriteBuffer(QueueOf(device_to.device_id), static_cast<cl_mem>(to), CL_TRUE,
                                    to_offset, nbytes, static_cast<const char*>(from) + from_offset,
                                    0, nullptr, nullptr),
            "clEnqueueWriteBuffer", "the host to " + Where(device_to));
    } else {
      LOOM_CHECK_USER(from_device) << "CopyDataFromTo on the opencl device API: neither side is "
                                   << "an opencl device";
      // Blocking, and after every kernel queued before it: the host reads a finished result.
      Check(
          cl.clEnqueueReadBuffer(QueueOf(device_from.device_id),
                                 static_cast<cl_mem>(const_cast<void*>(from)), CL_TRUE, from_offset,
                                 nbytes, static_cast<char*>(to) + to_offset, 0, nullptr, nullptr),
          "clEnqueueReadBuffer", Where(device_from) + " to the host");
    }
  }

  bool AddressableOffsets() const override { return false; }

  void StreamSync(DLDevice device) override {
    Check(GlobalContext().cl.clFinish(QueueOf(device.device_id)), "clFinish", Where(device));
  }
};

// Registered when the runtime loads, like the CPU; nothing touches OpenCL until a tensor is
// allocated on the device.
OpenCLDeviceAPI device_api;
const bool registered = (RegisterDeviceAPI(kDLOpenCL, "opencl", &device_api), true);

}  // namespace

}  // namespace loom::runtime::opencl
