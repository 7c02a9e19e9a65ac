// The converter registry and the importer's small public helpers.
#include "frontend/onnx/converter.h"

#include <algorithm>
#include <map>

#include "loom/frontend/onnx.h"
#include "loom/support/error.h"

namespace loom::frontend::onnx {
namespace {

std::map<std::string, Converter>& Registry() {
  static std::map<std::string, Converter> registry;
  return registry;
}

}  // namespace

bool RegisterConverter(const std::string& op_type, Converter converter) {
  bool fresh = Registry().emplace(op_type, std::move(converter)).second;
  LOOM_ICHECK(fresh) << "two ONNX converters for " << op_type;
  return true;
}

const Converter* FindConverter(const std::string& op_type) {
  auto it = Registry().find(op_type);
  return it == Registry().end() ? nullptr : &it->second;
}

std::vector<std::string> ConverterNames() {
  std::vector<std::string> names;
  for (const auto& [name, converter] : Registry()) names.push_back(name);
  return names;
}

std::vector<std::string> SupportedOperators() { return ConverterNames(); }

std::pair<std::string, std::vector<int64_t>> ParseInputShape(const std::string& text) {
  auto fail = [&](const std::string& why) {
    LOOM_THROW << "invalid input shape '" << text << "': " << why
                      << "; expected name=d0xd1x... (for example input=1x3x224x224)";
  };
  size_t equals = text.rfind('=');
  if (equals == std::string::npos || equals == 0) fail("no 'name='");
  std::string name = text.substr(0, equals);
  std::string dims = text.substr(equals + 1);
  std::vector<int64_t> shape;
  size_t begin = 0;
  while (begin <= dims.size()) {
    size_t end = std::min(dims.find('x', begin), dims.size());
    std::string dim = dims.substr(begin, end - begin);
    if (dim.empty() || dim.size() > 18 ||
        !std::all_of(dim.begin(), dim.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      fail("dimension '" + dim + "' is not a non-negative integer");
    }
    shape.push_back(std::stoll(dim));
    begin = end + 1;
  }
  return {name, shape};
}

}  // namespace loom::frontend::onnx
