// Modules of CUDA kernels (loom/runtime/cuda_module.h): PTX and each kernel's calling
// convention, loaded by the driver on the first call and launched on cuda:0.
#include "loom/runtime/cuda_module.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "loom/support/error.h"
#include "runtime/cuda/cuda_driver.h"
#include "runtime/device_kernel_json.h"

namespace loom::runtime {

namespace {

using cuda::Check;

constexpr const char* kFormat = "loom-cuda-1";
constexpr int kLaunchDevice = 0;

// One kernel argument as the driver reads it: the bytes of the parameter's type.
union KernelArg {
  cuda::CUdeviceptr pointer;
  float f32;
  double f64;
  int32_t i32;
  int64_t i64;
};

class CUDAModuleNode final : public ModuleNode,
                             public std::enable_shared_from_this<CUDAModuleNode> {
 public:
  CUDAModuleNode(std::string ptx, std::vector<DeviceKernelInfo> kernels)
      : ptx_(std::move(ptx)), kernels_(std::move(kernels)), axes_(ThreadAxesOf(kernels_)) {
    for (const DeviceKernelInfo& kernel : kernels_) {
      for (DataType t : kernel.params) {
        LOOM_CHECK_USER(t.is_handle() || t.bits() == 32 || t.bits() == 64)
            << "CUDA kernel '" << kernel.name << "': a " << t << " parameter (kernels take "
            << "buffers and 32- or 64-bit scalars)";
      }
    }
  }

  ~CUDAModuleNode() override {
    // Errors ignored: the driver may be gone at exit, and a module still loaded then is
    // released with the context.
    if (module_ == nullptr) return;
    try {
      cuda::UseDevice(kLaunchDevice);
      cuda::GlobalDriver().cuModuleUnload(module_);
    } catch (const Error&) {
    }
  }

  std::string type_key() const override { return "cuda"; }
  std::string description() const override { return "a CUDA module"; }
  const std::string& ptx() const { return ptx_; }
  const std::vector<DeviceKernelInfo>& kernels() const { return kernels_; }

  PackedFunc GetFunction(const std::string& name) override {
    for (size_t k = 0; k < kernels_.size(); ++k) {
      if (kernels_[k].name != name) continue;
      std::shared_ptr<CUDAModuleNode> self = shared_from_this();
      return PackedFunc([self, k](PackedArgs args, RetValue*) { self->Launch(k, args); });
    }
    return PackedFunc();
  }

 private:
  // Loads the PTX into the device's context (the driver compiles it for the GPU), once.
  void Load(const cuda::Device& device) {
    const cuda::Driver& cu = cuda::GlobalDriver();
    std::string log(8192, '\0');
    cuda::CUjit_option options[] = {cuda::CU_JIT_ERROR_LOG_BUFFER,
                                    cuda::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* values[] = {log.data(), reinterpret_cast<void*>(log.size())};
    cuda::CUmodule module = nullptr;
    const cuda::CUresult loaded = cu.cuModuleLoadDataEx(&module, ptx_.c_str(), 2, options, values);
    if (loaded != cuda::CUDA_SUCCESS) {
      log.resize(log.find('\0') == std::string::npos ? log.size() : log.find('\0'));
      Check(loaded, "cuModuleLoadDataEx",
            "loading the module's PTX on '" + device.name + "' (compute capability " +
                std::to_string(device.compute_capability) + "; the PTX must be for an -arch it " +
                "has, by an NVRTC no newer than the driver):\n" + log);
    }
    // Published only whole: a kernel missing from the PTX leaves the module unloaded.
    std::vector<cuda::CUfunction> functions(kernels_.size(), nullptr);
    for (size_t k = 0; k < kernels_.size(); ++k) {
      const cuda::CUresult found =
          cu.cuModuleGetFunction(&functions[k], module, kernels_[k].name.c_str());
      if (found != cuda::CUDA_SUCCESS) {
        cu.cuModuleUnload(module);
        Check(found, "cuModuleGetFunction", "kernel '" + kernels_[k].name + "'");
      }
    }
    module_ = module;
    functions_ = std::move(functions);
  }

  void Launch(size_t k, PackedArgs args) {
    const DeviceKernelInfo& kernel = kernels_[k];
    const size_t num_params = kernel.params.size();
    const LaunchShape shape = LaunchShapeOf("CUDA", kernel, axes_[k], args);
    const cuda::Device& device = cuda::UseDevice(kLaunchDevice);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (module_ == nullptr) Load(device);
    }
    std::vector<KernelArg> values(num_params);
    std::vector<void*> pointers(num_params);
    for (size_t i = 0; i < num_params; ++i) {
      const DataType t = kernel.params[i];
      const ArgValue arg = args[static_cast<int>(i)];
      KernelArg& value = values[i];
      if (t.is_handle()) {
        value.pointer = reinterpret_cast<cuda::CUdeviceptr>(arg.AsHandle());
      } else if (t.is_float()) {
        if (t.bits() == 64) value.f64 = arg.AsFloat();
        else value.f32 = static_cast<float>(arg.AsFloat());
      } else if (t.bits() == 64) {
        value.i64 = arg.AsInt();
      } else {
        value.i32 = static_cast<int32_t>(arg.AsInt());
      }
      pointers[i] = &value;
    }
    // CUDA's grid: x up to 2^31 - 1 blocks, y and z up to 65535.
    const int64_t grid_limit[3] = {(int64_t{1} << 31) - 1, 65535, 65535};
    for (int d = 0; d < 3; ++d) {
      LOOM_CHECK_USER(shape.blocks[d] <= grid_limit[d])
          << "CUDA kernel '" << kernel.name << "': " << shape.blocks[d] << " blocks along "
          << static_cast<char>('x' + d) << ", more than CUDA's " << grid_limit[d]
          << "; bind the larger loop to blockIdx.x";
    }
    auto dim = [](int64_t extent) { return static_cast<unsigned>(extent); };
    Check(cuda::GlobalDriver().cuLaunchKernel(
              functions_[k], dim(shape.blocks[0]), dim(shape.blocks[1]), dim(shape.blocks[2]),
              dim(shape.threads[0]), dim(shape.threads[1]), dim(shape.threads[2]), 0, nullptr,
              pointers.data(), nullptr),
          "cuLaunchKernel", "kernel '" + kernel.name + "' on '" + device.name + "'");
  }

  std::string ptx_;
  std::vector<DeviceKernelInfo> kernels_;
  std::vector<std::vector<ThreadAxis>> axes_;  // of each kernel's thread tags
  std::mutex mutex_;
  cuda::CUmodule module_ = nullptr;
  std::vector<cuda::CUfunction> functions_;
};

const CUDAModuleNode& AsCUDA(const Module& module) {
  const auto* node = dynamic_cast<const CUDAModuleNode*>(module.node().get());
  LOOM_CHECK_USER(node != nullptr) << "not a CUDA module: " << module->description();
  return *node;
}

Module LoadCUDAModule(const std::string& bytes) {
  DeviceModuleParts parts = ParseDeviceModule(bytes, kFormat, "ptx", "a CUDA module");
  return CUDAModuleCreate(std::move(parts.code), std::move(parts.kernels));
}

const bool registered = (RegisterModuleLoader("cuda", LoadCUDAModule), true);

}  // namespace

Module CUDAModuleCreate(std::string ptx, std::vector<DeviceKernelInfo> kernels) {
  LOOM_CHECK_USER(ptx.find('\0') == std::string::npos)
      << "a CUDA module's PTX holds a NUL byte: PTX is text (the artifact is corrupt)";
  return Module(std::make_shared<CUDAModuleNode>(std::move(ptx), std::move(kernels)));
}

std::string SerializeCUDAModule(const Module& module) {
  const CUDAModuleNode& node = AsCUDA(module);
  return SerializeDeviceModule(kFormat, "ptx", {node.ptx(), node.kernels()});
}

const std::string& CUDAModulePTX(const Module& module) { return AsCUDA(module).ptx(); }

}  // namespace loom::runtime
