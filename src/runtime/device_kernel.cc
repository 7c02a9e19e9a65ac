// The kernels of GPU modules (loom/runtime/device_kernel.h).
#include "loom/runtime/device_kernel.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "runtime/device_kernel_json.h"

#include "loom/support/error.h"

namespace loom::runtime {

ThreadAxis ThreadAxisOf(const std::string& kernel, const std::string& tag) {
  const bool is_block = tag.rfind("blockIdx.", 0) == 0;
  const bool is_thread = tag.rfind("threadIdx.", 0) == 0;
  const std::string axis = tag.substr(tag.find('.') + 1);
  LOOM_CHECK_USER((is_block || is_thread) && (axis == "x" || axis == "y" || axis == "z"))
      << "kernel '" << kernel << "': unknown thread axis '" << tag << "' (expected "
      << "blockIdx.x/y/z or threadIdx.x/y/z)";
  return {axis[0] - 'x', is_block};
}

std::vector<std::vector<ThreadAxis>> ThreadAxesOf(const std::vector<DeviceKernelInfo>& kernels) {
  std::vector<std::vector<ThreadAxis>> axes;
  for (const DeviceKernelInfo& kernel : kernels) {
    std::vector<ThreadAxis>& of_kernel = axes.emplace_back();
    for (const std::string& tag : kernel.thread_tags) {
      of_kernel.push_back(ThreadAxisOf(kernel.name, tag));
    }
  }
  return axes;
}

LaunchShape LaunchShapeOf(const char* device, const DeviceKernelInfo& kernel,
                          const std::vector<ThreadAxis>& axes, PackedArgs args) {
  const size_t num_params = kernel.params.size();
  LOOM_CHECK_USER(static_cast<size_t>(args.size()) == num_params + axes.size())
      << device << " kernel '" << kernel.name << "' takes " << num_params << " arguments and "
      << axes.size() << " launch extents, got " << args.size() << " values";
  LaunchShape shape;
  for (size_t t = 0; t < axes.size(); ++t) {
    const int64_t extent = args[static_cast<int>(num_params + t)].AsInt();
    LOOM_CHECK_USER(extent > 0) << device << " kernel '" << kernel.name << "': launch extent "
                                << extent << " of " << kernel.thread_tags[t];
    (axes[t].is_block ? shape.blocks : shape.threads)[axes[t].dim] = extent;
    shape.dims = std::max(shape.dims, axes[t].dim + 1);
  }
  return shape;
}

std::string SerializeDeviceModule(const std::string& format, const std::string& code_key,
                                  const DeviceModuleParts& parts) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const DeviceKernelInfo& kernel : parts.kernels) {
    std::vector<std::string> params;
    for (DataType t : kernel.params) params.push_back(t.str());
    kernels.push_back(
        {{"name", kernel.name}, {"params", params}, {"thread_tags", kernel.thread_tags}});
  }
  return nlohmann::json{{"format", format}, {code_key, parts.code}, {"kernels", kernels}}.dump();
}

DeviceModuleParts ParseDeviceModule(const std::string& bytes, const std::string& format,
                                    const std::string& code_key, const std::string& what) {
  try {
    const nlohmann::json document = nlohmann::json::parse(bytes);
    LOOM_CHECK_USER(document.at("format") == format)
        << what << " of format " << document.at("format").dump() << "; this runtime reads "
        << format << " (compile the model again)";
    DeviceModuleParts parts;
    parts.code = document.at(code_key).get<std::string>();
    for (const nlohmann::json& entry : document.at("kernels")) {
      DeviceKernelInfo kernel;
      kernel.name = entry.at("name").get<std::string>();
      for (const nlohmann::json& param : entry.at("params")) {
        kernel.params.push_back(DataType::Parse(param.get<std::string>()));
      }
      kernel.thread_tags = entry.at("thread_tags").get<std::vector<std::string>>();
      parts.kernels.push_back(std::move(kernel));
    }
    return parts;
  } catch (const nlohmann::json::exception& error) {
    LOOM_THROW << what << " that cannot be read (" << error.what()
               << "): the artifact is corrupt; compile the model again";
  }
}

}  // namespace loom::runtime
