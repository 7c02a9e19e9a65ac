#include "graph/attrs_key.h"

#include <sstream>
#include <type_traits>

namespace loom::graph {

std::string AttrsKey(const Attrs& attrs) {
  std::ostringstream key;
  key << std::hexfloat;
  for (const auto& [name, value] : attrs.values()) {
    key << name << "=";
    std::visit(
        [&](const auto& v) {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, Ints> || std::is_same_v<V, Floats>) {
            key << "[";
            for (const auto& item : v) key << item << ",";
            key << "]";
          } else if constexpr (std::is_same_v<V, std::string>) {
            key << v.size() << ":" << v;
          } else {
            key << v;
          }
        },
        value);
    key << ";";
  }
  return key.str();
}

}  // namespace loom::graph
