#include "cli_common.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "loom/runtime/device_api.h"
#include "loom/runtime/thread_pool.h"
#include "loom/vta/runtime.h"

namespace loom::cli {

std::string ShapeText(const std::vector<int64_t>& shape) {
  if (shape.empty()) return "scalar";
  std::string text;
  for (size_t i = 0; i < shape.size(); ++i) {
    text += (i == 0 ? "" : "x") + std::to_string(shape[i]);
  }
  return text;
}

int64_t WeightBytes(const runtime::GraphModel& model) {
  int64_t bytes = 0;
  for (const runtime::GraphParam& param : model.params())
    bytes += static_cast<int64_t>(param.bytes);
  return bytes;
}

void CheckReadableFile(const std::string& path, const std::string& what) {
  std::error_code ec;
  auto status = std::filesystem::status(path, ec);
  LOOM_CHECK_USER(std::filesystem::exists(status))
      << what << " '" << path << "' does not exist (relative paths start at "
      << std::filesystem::current_path(ec).string() << ")";
  LOOM_CHECK_USER(std::filesystem::is_regular_file(status))
      << what << " '" << path << "' is not a regular file";
  LOOM_CHECK_USER(std::ifstream(path, std::ios::binary).good())
      << what << " '" << path << "' cannot be read; check its permissions";
}

bool IsSharedLibrary(const std::string& path) {
  char magic[4] = {};
  std::ifstream in(path, std::ios::binary);
  in.read(magic, sizeof(magic));
  return in.gcount() == 4 && magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' &&
         magic[3] == 'F';
}

void ConfigureVta(const std::string& config_path) {
  if (!config_path.empty()) vta::SetRuntimeConfig(vta::VTAConfig::FromFile(config_path));
}

int ConfigureThreads(std::optional<int> threads) {
  // The commands size the pool before running any kernel, which is when it is created.
  if (threads) runtime::ThreadPool::SetGlobalThreads(*threads);
  return runtime::ThreadPool::Global().num_threads();
}

namespace {

// "name=path" of one --input option.
std::pair<std::string, std::string> SplitInputOption(const std::string& text) {
  size_t equals = text.find('=');
  LOOM_CHECK_USER(equals != std::string::npos && equals > 0 && equals + 1 < text.size())
      << "--input '" << text << "': expected NAME=FILE.npy, for example --input data=image.npy";
  return {text.substr(0, equals), text.substr(equals + 1)};
}

std::string InputNames(const runtime::Executor& executor) {
  std::string names;
  for (int i = 0; i < executor.NumInputs(); ++i) {
    names += (i == 0 ? "'" : ", '") + executor.InputName(i) + "'";
  }
  return names.empty() ? "none" : names;
}

}  // namespace

std::string InputShapeText(const runtime::Executor& executor, int index) {
  std::vector<int64_t> shape = executor.InputShape(index);
  bool symbolic = std::find(shape.begin(), shape.end(), -1) != shape.end();
  return symbolic ? executor.InputSignature(index) : ShapeText(shape);
}

bool ShapeFits(const std::vector<int64_t>& shape, const std::vector<int64_t>& model_shape) {
  if (shape.size() != model_shape.size()) return false;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (model_shape[d] >= 0 && model_shape[d] != shape[d]) return false;
  }
  return true;
}

std::map<std::string, runtime::NDArray> LoadInputs(const runtime::Executor& executor,
                                                   const std::vector<std::string>& texts,
                                                   bool require_all) {
  std::map<std::string, int> index_of;
  for (int i = 0; i < executor.NumInputs(); ++i) index_of[executor.InputName(i)] = i;
  std::map<std::string, runtime::NDArray> inputs;
  for (const std::string& text : texts) {
    auto [name, path] = SplitInputOption(text);
    auto it = index_of.find(name);
    LOOM_CHECK_USER(it != index_of.end()) << "--input " << text << ": the model has no input '"
                                          << name << "'; its inputs are " << InputNames(executor);
    LOOM_CHECK_USER(inputs.count(name) == 0) << "--input: input '" << name << "' is given twice";
    CheckReadableFile(path, "--input " + name);
    runtime::NDArray value;
    try {
      value = runtime::NDArray::LoadNpy(path);
    } catch (const Error& error) {
      LOOM_THROW << "--input " << text << ": " << error.what();
    }
    int index = it->second;
    LOOM_CHECK_USER(value.dtype() == executor.InputDtype(index))
        << "--input " << text << ": input '" << name << "' takes dtype "
        << executor.InputDtype(index) << ", the file holds " << value.dtype();
    LOOM_CHECK_USER(ShapeFits(value.Shape(), executor.InputShape(index)))
        << "--input " << text << ": input '" << name << "' takes shape "
        << InputShapeText(executor, index) << ", the file holds " << ShapeText(value.Shape());
    inputs.emplace(name, std::move(value));
  }
  if (require_all) {
    for (int i = 0; i < executor.NumInputs(); ++i) {
      const std::string& name = executor.InputName(i);
      LOOM_CHECK_USER(inputs.count(name) != 0)
          << "model input '" << name << "' (" << executor.InputDtype(i) << " "
          << InputShapeText(executor, i) << ") is not given; add --input " << name << "=FILE.npy";
    }
  }
  return inputs;
}

std::string FirstValuesText(const runtime::NDArray& array, int64_t count) {
  std::ostringstream text;
  text << "[";
  int64_t shown = std::min(count, array.NumElements());
  VisitElementType(array.dtype(), "printing values", [&](auto zero) {
    using T = decltype(zero);
    const T* data = static_cast<const T*>(array.data());
    for (int64_t i = 0; i < shown; ++i) {
      if (i > 0) text << ", ";
      // Widen so that int8/uint8 print as numbers, not characters.
      if constexpr (std::is_floating_point_v<T>) {
        text << data[i];
      } else if constexpr (kIsHalfFloatElement<T>) {
        text << static_cast<float>(data[i]);
      } else if constexpr (std::is_signed_v<T>) {
        text << static_cast<int64_t>(data[i]);
      } else {
        text << static_cast<uint64_t>(data[i]);
      }
    }
  });
  if (array.NumElements() > shown) text << (shown > 0 ? ", ..." : "...");
  text << "]";
  return text.str();
}

std::string SanitizeFileName(const std::string& name) {
  std::string file = name;
  for (char& c : file) {
    bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '.' || c == '-' || c == '_';
    if (!keep) c = '_';
  }
  // "." and ".." name directories; a leading '.' would hide the file.
  if (file.empty() || file[0] == '.') file = "_" + file;
  return file;
}

void PrintValue(const std::string& name, const std::string& description) {
  std::printf("  %-24s %s\n", name.c_str(), description.c_str());
}

// The kernels in execution order with the graph nodes each runs, the memory plan and the
// weights: what a compile made of the model.
void PrintPlan(const runtime::GraphModel& model) {
  std::printf("kernels, in execution order (%zu):\n", model.kernels().size());
  for (size_t k = 0; k < model.kernels().size(); ++k) {
    const runtime::GraphKernel& kernel = model.kernels()[k];
    std::string nodes;
    for (const std::string& node : kernel.nodes) nodes += (nodes.empty() ? "" : ", ") + node;
    const std::string device =
        kernel.device_type == kDLCPU ? "" : " on " + runtime::DeviceName(kernel.device_type);
    std::printf("  %4zu  %s%s  [%s]\n", k, kernel.func.c_str(), device.c_str(), nodes.c_str());
  }
  if (!model.placements().empty()) {
    std::printf("placement of the layers the device could take (%zu):\n",
                model.placements().size());
    for (const runtime::GraphPlacement& p : model.placements()) {
      std::printf("  %-5s %s%s\n", p.device.c_str(), p.layer.c_str(),
                  p.reason.empty() ? "" : (": " + p.reason).c_str());
    }
  }
  int64_t planned = 0;
  for (size_t bytes : model.storages()) planned += static_cast<int64_t>(bytes);
  std::printf("memory plan: %s in %zu slots\n", BytesText(planned).c_str(),
              model.storages().size());
  std::printf("weights: %s in %zu tensors\n", BytesText(WeightBytes(model)).c_str(),
              model.params().size());
}

void PrintVmProgram(const runtime::VmModel& model) {
  std::printf("executor: virtual machine (shapes computed at run time)\n");
  std::string vars;
  for (const std::string& var : model.size_vars()) vars += (vars.empty() ? "" : ", ") + var;
  std::printf("size variables: %s\n", vars.empty() ? "(none)" : vars.c_str());
  for (const runtime::VmConstraint& constraint : model.constraints()) {
    std::printf("  constraint: %s\n", constraint.text.c_str());
  }
  // "float32 (1, seq, 64)"; empty for an output of a program that does not say.
  auto signature = [&](const runtime::VmIO& io) {
    if (io.dtype.is_void()) return std::string();
    std::string dims;
    for (const runtime::ShapeExpr& e : io.shape) {
      dims += (dims.empty() ? "" : ", ") + e.str(model.size_vars());
    }
    return io.dtype.str() + " (" + dims + ")";
  };
  std::printf("inputs:\n");
  for (const runtime::VmIO& input : model.inputs()) PrintValue(input.name, signature(input));
  std::printf("outputs:\n");
  for (const runtime::VmIO& output : model.outputs()) PrintValue(output.name, signature(output));
  // The kernels of each program in execution order: a specialization's behind the `if`
  // that tests its sizes, the general program's after the last; a loop's body between the
  // `if` that tests whether it goes on and the `goto` back to it.
  std::printf("kernels, in execution order (%zu):\n", model.kernels().size());
  const std::vector<runtime::VmInstruction>& code = model.instructions();
  for (size_t at = 0; at < code.size(); ++at) {
    const runtime::VmInstruction& insn = code[at];
    if (insn.op == runtime::VmInstruction::Op::kIf) {
      const size_t end = static_cast<size_t>(insn.target);
      const bool loop = end > at && code[end - 1].op == runtime::VmInstruction::Op::kGoto &&
                        static_cast<size_t>(code[end - 1].target) == at;
      std::printf(" %s %s:\n", loop ? "loop while" : "when",
                  insn.cond.str(model.size_vars()).c_str());
    } else if (insn.op == runtime::VmInstruction::Op::kGoto) {
      std::printf(static_cast<size_t>(insn.target) < at ? " end of loop\n" : " otherwise:\n");
    } else if (insn.op == runtime::VmInstruction::Op::kInvoke) {
      const runtime::VmKernel& kernel = model.kernels()[static_cast<size_t>(insn.kernel)];
      std::printf("  %4d  %s  [%s]\n", insn.kernel, kernel.func.c_str(), kernel.name.c_str());
    }
  }
  int64_t planned = 0, pooled = 0;
  for (int64_t bytes : model.storages()) planned += bytes;
  for (const runtime::VmInstruction& insn : code) {
    pooled += insn.op == runtime::VmInstruction::Op::kAlloc && insn.storage < 0 ? 1 : 0;
  }
  std::printf(
      "memory plan: %s in %zu slots (tensors whose sizes have bounds); %lld "
      "allocation(s) from the pool at run time\n",
      BytesText(planned).c_str(), model.storages().size(), static_cast<long long>(pooled));
  int64_t weights = 0;
  for (size_t p = 0; p < model.param_names().size(); ++p) {
    weights += static_cast<int64_t>(model.ParamBytes(static_cast<int>(p)));
  }
  std::printf("weights: %s in %zu tensors\n", BytesText(weights).c_str(),
              model.param_names().size());
}

// The --input-shape options ("name=1x3x224x224", repeatable) by input name; a name given
// twice is an error.
std::map<std::string, std::vector<int64_t>> ParseInputShapes(
    const std::vector<std::string>& texts) {
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const std::string& text : texts) {
    auto [name, shape] = runtime::ParseNamedShape(text);
    LOOM_CHECK_USER(shapes.emplace(name, shape).second)
        << "--input-shape: input '" << name << "' is given twice";
  }
  return shapes;
}

std::map<std::string, std::vector<int64_t>> ParseDynamicBuckets(
    const std::vector<std::string>& texts) {
  std::map<std::string, std::vector<int64_t>> buckets;
  for (const std::string& text : texts) {
    auto fail = [&](const std::string& why) {
      LOOM_THROW << "--dynamic-buckets '" << text << "': " << why
                 << "; expected NAME=SIZE,SIZE,... (for example seq=16,64,128)";
    };
    size_t equals = text.find('=');
    if (equals == std::string::npos || equals == 0) fail("no 'NAME='");
    std::string name = text.substr(0, equals);
    std::vector<int64_t> sizes;
    std::string list = text.substr(equals + 1);
    for (size_t begin = 0; begin <= list.size();) {
      size_t end = std::min(list.find(',', begin), list.size());
      std::string size = list.substr(begin, end - begin);
      if (size.empty() || size.size() > 18 ||
          !std::all_of(size.begin(), size.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        fail("'" + size + "' is not a size");
      }
      sizes.push_back(std::stoll(size));
      begin = end + 1;
    }
    if (!buckets.emplace(name, sizes).second) fail("'" + name + "' is given twice");
  }
  return buckets;
}

}  // namespace loom::cli
