// Attributes of an operator call: named values of a few kinds, checked against the
// operator's schema (op.h) when the call is built, with the schema's defaults filled in.
//
//   Attrs a = {{"strides", Ints{2, 2}}, {"groups", int64_t{1}}};
//   a.GetInts("strides");  // {2, 2}
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace loom::graph {

using Ints = std::vector<int64_t>;
using Floats = std::vector<double>;
using AttrValue = std::variant<int64_t, double, std::string, Ints, Floats>;

enum class AttrKind : uint8_t { kInt, kFloat, kString, kInts, kFloats };
const char* AttrKindName(AttrKind kind);
AttrKind KindOf(const AttrValue& value);
// "3", "0.5", "\"SAME_UPPER\"", "[1, 1]"
std::string AttrValueText(const AttrValue& value);

class Attrs {
 public:
  Attrs() = default;
  Attrs(std::initializer_list<std::pair<const std::string, AttrValue>> values)
      : values_(values) {}
  explicit Attrs(std::map<std::string, AttrValue> values) : values_(std::move(values)) {}

  bool Has(const std::string& name) const { return values_.count(name) != 0; }
  // The value of `name` as the given kind: an internal error when it is missing or of
  // another kind (the schema check at construction makes that a bug).
  int64_t GetInt(const std::string& name) const;
  double GetFloat(const std::string& name) const;
  const std::string& GetString(const std::string& name) const;
  const Ints& GetInts(const std::string& name) const;
  const Floats& GetFloats(const std::string& name) const;

  // A copy with `name` set to `value`.
  Attrs With(const std::string& name, AttrValue value) const;

  const std::map<std::string, AttrValue>& values() const { return values_; }
  bool operator==(const Attrs& other) const { return values_ == other.values_; }
  // "strides=[1, 1], groups=1" (names in order).
  std::string str() const;

 private:
  template <typename T>
  const T& Get(const std::string& name, AttrKind kind) const;
  std::map<std::string, AttrValue> values_;
};

}  // namespace loom::graph
