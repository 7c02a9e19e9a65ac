#include "loom/graph/attrs.h"

#include <sstream>

#include "loom/support/error.h"

namespace loom::graph {

const char* AttrKindName(AttrKind kind) {
  switch (kind) {
    case AttrKind::kInt: return "int";
    case AttrKind::kFloat: return "float";
    case AttrKind::kString: return "string";
    case AttrKind::kInts: return "ints";
    case AttrKind::kFloats: return "floats";
  }
  return "?";
}

AttrKind KindOf(const AttrValue& value) { return static_cast<AttrKind>(value.index()); }

std::string AttrValueText(const AttrValue& value) {
  std::ostringstream text;
  auto list = [&](const auto& items) {
    text << "[";
    for (size_t i = 0; i < items.size(); ++i) text << (i ? ", " : "") << items[i];
    text << "]";
  };
  switch (KindOf(value)) {
    case AttrKind::kInt: text << std::get<int64_t>(value); break;
    case AttrKind::kFloat: text << std::get<double>(value); break;
    case AttrKind::kString: text << '"' << std::get<std::string>(value) << '"'; break;
    case AttrKind::kInts: list(std::get<Ints>(value)); break;
    case AttrKind::kFloats: list(std::get<Floats>(value)); break;
  }
  return text.str();
}

template <typename T>
const T& Attrs::Get(const std::string& name, AttrKind kind) const {
  auto it = values_.find(name);
  LOOM_ICHECK(it != values_.end()) << "attribute '" << name << "' is missing from {" << str()
                                   << "}: the operator's schema should have supplied it";
  LOOM_ICHECK(KindOf(it->second) == kind)
      << "attribute '" << name << "' is " << AttrKindName(KindOf(it->second)) << ", read as "
      << AttrKindName(kind);
  return std::get<T>(it->second);
}

int64_t Attrs::GetInt(const std::string& name) const { return Get<int64_t>(name, AttrKind::kInt); }
double Attrs::GetFloat(const std::string& name) const {
  return Get<double>(name, AttrKind::kFloat);
}
const std::string& Attrs::GetString(const std::string& name) const {
  return Get<std::string>(name, AttrKind::kString);
}
const Ints& Attrs::GetInts(const std::string& name) const { return Get<Ints>(name, AttrKind::kInts); }
const Floats& Attrs::GetFloats(const std::string& name) const {
  return Get<Floats>(name, AttrKind::kFloats);
}

Attrs Attrs::With(const std::string& name, AttrValue value) const {
  std::map<std::string, AttrValue> values = values_;
  values[name] = std::move(value);
  return Attrs(std::move(values));
}

std::string Attrs::str() const {
  std::string text;
  for (const auto& [name, value] : values_) {
    text += (text.empty() ? "" : ", ") + name + "=" + AttrValueText(value);
  }
  return text;
}

}  // namespace loom::graph
