// Modules of OpenCL C kernels (loom/runtime/opencl_module.h): the source and each kernel's
// calling convention, compiled by the driver on the first call and launched on device 0.
#include "loom/runtime/opencl_module.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "loom/support/error.h"
#include "runtime/device_kernel_json.h"
#include "runtime/opencl/opencl_context.h"

namespace loom::runtime {

namespace {

using opencl::Check;

constexpr const char* kFormat = "loom-opencl-1";

class OpenCLModuleNode final : public ModuleNode,
                               public std::enable_shared_from_this<OpenCLModuleNode> {
 public:
  OpenCLModuleNode(std::string source, std::vector<DeviceKernelInfo> kernels)
      : source_(std::move(source)),
        kernels_(std::move(kernels)),
        // Parsed once here, so a bad tag fails at load and a launch reads no strings.
        axes_(ThreadAxesOf(kernels_)) {}

  ~OpenCLModuleNode() override {
    if (program_ == nullptr) return;
    const opencl::Library& cl = opencl::GlobalContext().cl;
    for (cl_kernel kernel : compiled_) {
      if (kernel != nullptr) cl.clReleaseKernel(kernel);
    }
    cl.clReleaseProgram(program_);
  }

  std::string type_key() const override { return "opencl"; }
  std::string description() const override { return "an OpenCL module"; }
  const std::string& source() const { return source_; }
  const std::vector<DeviceKernelInfo>& kernels() const { return kernels_; }

  PackedFunc GetFunction(const std::string& name) override {
    for (size_t k = 0; k < kernels_.size(); ++k) {
      if (kernels_[k].name != name) continue;
      std::shared_ptr<OpenCLModuleNode> self = shared_from_this();
      return PackedFunc([self, k](PackedArgs args, RetValue*) { self->Launch(k, args); });
    }
    return PackedFunc();
  }

 private:
  // Compiles the program for every device of the context, once.
  void Build() {
    opencl::Context& context = opencl::GlobalContext();
    const opencl::Library& cl = context.cl;
    const char* text = source_.c_str();
    const size_t length = source_.size();
    cl_int status = CL_SUCCESS;
    program_ = cl.clCreateProgramWithSource(context.context, 1, &text, &length, &status);
    Check(status, "clCreateProgramWithSource", "an OpenCL module");
    // No contraction: as on the CPU targets, whether a*b+c is fused is decided in TIR.
    status = cl.clBuildProgram(program_, 0, nullptr, "-cl-fp32-correctly-rounded-divide-sqrt",
                               nullptr, nullptr);
    if (status != CL_SUCCESS) {
      size_t log_size = 0;
      cl.clGetProgramBuildInfo(program_, context.devices[0], CL_PROGRAM_BUILD_LOG, 0, nullptr,
                               &log_size);
      std::string log(log_size, '\0');
      cl.clGetProgramBuildInfo(program_, context.devices[0], CL_PROGRAM_BUILD_LOG, log_size,
                               log.data(), nullptr);
      LOOM_THROW << "OpenCL: the driver of '" << context.device_names[0]
                 << "' could not compile the module's kernels (error " << status << "):\n"
                 << log;
    }
    compiled_.assign(kernels_.size(), nullptr);
    for (size_t k = 0; k < kernels_.size(); ++k) {
      compiled_[k] = cl.clCreateKernel(program_, kernels_[k].name.c_str(), &status);
      Check(status, "clCreateKernel", "kernel '" + kernels_[k].name + "'");
    }
  }

  void Launch(size_t k, PackedArgs args) {
    const DeviceKernelInfo& kernel = kernels_[k];
    const size_t num_params = kernel.params.size();
    const LaunchShape shape = LaunchShapeOf("OpenCL", kernel, axes_[k], args);
    std::lock_guard<std::mutex> lock(mutex_);  // kernel arguments are per kernel object
    if (program_ == nullptr) Build();
    const opencl::Library& cl = opencl::GlobalContext().cl;
    cl_kernel compiled = compiled_[k];
    for (size_t i = 0; i < num_params; ++i) {
      const DataType t = kernel.params[i];
      const std::string what = "argument " + std::to_string(i) + " of '" + kernel.name + "'";
      const ArgValue arg = args[static_cast<int>(i)];
      const auto index = static_cast<cl_uint>(i);
      cl_int status = CL_SUCCESS;
      if (t.is_handle()) {
        cl_mem buffer = static_cast<cl_mem>(arg.AsHandle());
        status = cl.clSetKernelArg(compiled, index, sizeof(buffer), &buffer);
      } else if (t.is_float()) {
        LOOM_CHECK_USER(t.bits() == 32 || t.bits() == 64)
            << "OpenCL kernel '" << kernel.name << "': a " << t << " scalar argument";
        const double value = arg.AsFloat();
        const float narrow = static_cast<float>(value);
        status = t.bits() == 64 ? cl.clSetKernelArg(compiled, index, sizeof(value), &value)
                                : cl.clSetKernelArg(compiled, index, sizeof(narrow), &narrow);
      } else {
        const int64_t value = arg.AsInt();
        const int32_t narrow = static_cast<int32_t>(value);
        status = t.bits() == 64 ? cl.clSetKernelArg(compiled, index, sizeof(value), &value)
                                : cl.clSetKernelArg(compiled, index, sizeof(narrow), &narrow);
      }
      Check(status, "clSetKernelArg", what);
    }
    // OpenCL's global size counts work-items: groups times the items of each.
    size_t global[3], local[3];
    for (int d = 0; d < 3; ++d) {
      local[d] = static_cast<size_t>(shape.threads[d]);
      global[d] = static_cast<size_t>(shape.blocks[d]) * local[d];
    }
    const auto dims = static_cast<cl_uint>(shape.dims);
    Check(cl.clEnqueueNDRangeKernel(opencl::QueueOf(0), compiled, dims, nullptr, global, local, 0,
                                    nullptr, nullptr),
          "clEnqueueNDRangeKernel", "kernel '" + kernel.name + "'");
  }

  std::string source_;
  std::vector<DeviceKernelInfo> kernels_;
  std::vector<std::vector<ThreadAxis>> axes_;  // of each kernel's thread tags
  std::mutex mutex_;
  cl_program program_ = nullptr;
  std::vector<cl_kernel> compiled_;
};

const OpenCLModuleNode& AsOpenCL(const Module& module) {
  const auto* node = dynamic_cast<const OpenCLModuleNode*>(module.node().get());
  LOOM_CHECK_USER(node != nullptr) << "not an OpenCL module: " << module->description();
  return *node;
}

Module LoadOpenCLModule(const std::string& bytes) {
  DeviceModuleParts parts = ParseDeviceModule(bytes, kFormat, "source", "an OpenCL module");
  return OpenCLModuleCreate(std::move(parts.code), std::move(parts.kernels));
}

const bool registered = (RegisterModuleLoader("opencl", LoadOpenCLModule), true);

}  // namespace

Module OpenCLModuleCreate(std::string source, std::vector<DeviceKernelInfo> kernels) {
  return Module(std::make_shared<OpenCLModuleNode>(std::move(source), std::move(kernels)));
}

std::string SerializeOpenCLModule(const Module& module) {
  const OpenCLModuleNode& node = AsOpenCL(module);
  return SerializeDeviceModule(kFormat, "source", {node.source(), node.kernels()});
}

const std::string& OpenCLModuleSource(const Module& module) { return AsOpenCL(module).source(); }

}  // namespace loom::runtime
