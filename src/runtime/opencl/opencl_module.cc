// Modules of OpenCL C kernels (loom/runtime/opencl_module.h): the source and each kernel's
// calling convention, compiled by the driver on the first call and launched on device 0.
#include "loom/runtime/opencl_module.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "loom/support/error.h"
#include "runtime/opencl/opencl_context.h"

namespace loom::runtime {

namespace {

using opencl::Check;

constexpr const char* kFormat = "loom-opencl-1";

class OpenCLModuleNode final : public ModuleNode,
                               public std::enable_shared_from_this<OpenCLModuleNode> {
 public:
  OpenCLModuleNode(std::string source, std::vector<OpenCLKernelInfo> kernels)
      : source_(std::move(source)), kernels_(std::move(kernels)) {
    // Parsed once here, so a bad tag fails at load and a launch reads no strings.
    for (const OpenCLKernelInfo& kernel : kernels_) {
      std::vector<OpenCLThreadAxis>& axes = axes_.emplace_back();
      for (const std::string& tag : kernel.thread_tags) {
        axes.push_back(OpenCLThreadAxisOf(kernel.name, tag));
      }
    }
  }

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
  const std::vector<OpenCLKernelInfo>& kernels() const { return kernels_; }

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
    const OpenCLKernelInfo& kernel = kernels_[k];
    const size_t num_params = kernel.params.size();
    LOOM_CHECK_USER(static_cast<size_t>(args.size()) == num_params + kernel.thread_tags.size())
        << "OpenCL kernel '" << kernel.name << "' takes " << num_params << " arguments and "
        << kernel.thread_tags.size() << " launch extents, got " << args.size() << " values";
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
    size_t global[3] = {1, 1, 1}, local[3] = {1, 1, 1};
    cl_uint dims = 1;
    for (size_t t = 0; t < kernel.thread_tags.size(); ++t) {
      const OpenCLThreadAxis axis = axes_[k][t];
      const int64_t extent = args[static_cast<int>(num_params + t)].AsInt();
      LOOM_CHECK_USER(extent > 0) << "OpenCL kernel '" << kernel.name << "': launch extent "
                                  << extent << " of " << kernel.thread_tags[t];
      (axis.is_block ? global : local)[axis.dim] = static_cast<size_t>(extent);
      dims = std::max<cl_uint>(dims, static_cast<cl_uint>(axis.dim + 1));
    }
    // OpenCL's global size counts work-items: groups times the items of each.
    for (int d = 0; d < 3; ++d) global[d] *= local[d];
    Check(cl.clEnqueueNDRangeKernel(opencl::QueueOf(0), compiled, dims, nullptr, global, local, 0,
                                    nullptr, nullptr),
          "clEnqueueNDRangeKernel", "kernel '" + kernel.name + "'");
  }

  std::string source_;
  std::vector<OpenCLKernelInfo> kernels_;
  std::vector<std::vector<OpenCLThreadAxis>> axes_;  // of each kernel's thread tags
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
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(bytes);
    LOOM_CHECK_USER(document.at("format") == kFormat)
        << "an OpenCL module of format " << document.at("format").dump() << "; this runtime reads "
        << kFormat << " (compile the model again)";
    std::vector<OpenCLKernelInfo> kernels;
    for (const nlohmann::json& entry : document.at("kernels")) {
      OpenCLKernelInfo kernel;
      kernel.name = entry.at("name").get<std::string>();
      for (const nlohmann::json& param : entry.at("params")) {
        kernel.params.push_back(DataType::Parse(param.get<std::string>()));
      }
      kernel.thread_tags = entry.at("thread_tags").get<std::vector<std::string>>();
      kernels.push_back(std::move(kernel));
    }
    return OpenCLModuleCreate(document.at("source").get<std::string>(), std::move(kernels));
  } catch (const nlohmann::json::exception& error) {
    LOOM_THROW << "an OpenCL module that cannot be read (" << error.what()
               << "): the artifact is corrupt; compile the model again";
  }
}

const bool registered = (RegisterModuleLoader("opencl", LoadOpenCLModule), true);

}  // namespace

OpenCLThreadAxis OpenCLThreadAxisOf(const std::string& kernel, const std::string& tag) {
  const bool is_block = tag.rfind("blockIdx.", 0) == 0;
  const bool is_thread = tag.rfind("threadIdx.", 0) == 0;
  const std::string axis = tag.substr(tag.find('.') + 1);
  LOOM_CHECK_USER((is_block || is_thread) && (axis == "x" || axis == "y" || axis == "z"))
      << "OpenCL kernel '" << kernel << "': unknown thread axis '" << tag << "' (expected "
      << "blockIdx.x/y/z or threadIdx.x/y/z)";
  return {axis[0] - 'x', is_block};
}

Module OpenCLModuleCreate(std::string source, std::vector<OpenCLKernelInfo> kernels) {
  return Module(std::make_shared<OpenCLModuleNode>(std::move(source), std::move(kernels)));
}

std::string SerializeOpenCLModule(const Module& module) {
  const OpenCLModuleNode& node = AsOpenCL(module);
  nlohmann::json kernels = nlohmann::json::array();
  for (const OpenCLKernelInfo& kernel : node.kernels()) {
    std::vector<std::string> params;
    for (DataType t : kernel.params) params.push_back(t.str());
    kernels.push_back(
        {{"name", kernel.name}, {"params", params}, {"thread_tags", kernel.thread_tags}});
  }
  return nlohmann::json{{"format", kFormat}, {"source", node.source()}, {"kernels", kernels}}
      .dump();
}

const std::string& OpenCLModuleSource(const Module& module) { return AsOpenCL(module).source(); }

}  // namespace loom::runtime
