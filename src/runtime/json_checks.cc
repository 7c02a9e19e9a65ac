#include "runtime/json_checks.h"

#include "loom/runtime/ndarray.h"
#include "loom/support/error.h"

namespace loom::runtime {

std::string JsonChecks::Shown(const json& value) {
  constexpr size_t kMaxChars = 60;
  std::string text = value.dump();
  return text.size() <= kMaxChars ? text : text.substr(0, kMaxChars) + "...";
}

const JsonChecks::json& JsonChecks::Object(const json& value, const std::string& where) const {
  LOOM_CHECK_USER(value.is_object())
      << doc_ << ": " << where << " must be an object, got " << Shown(value);
  return value;
}

const JsonChecks::json& JsonChecks::Field(const json& object, const char* key,
                                          const std::string& where) const {
  auto it = object.find(key);
  LOOM_CHECK_USER(it != object.end()) << doc_ << ": " << where << " has no '" << key << "' field";
  return *it;
}

// The member `key` of `object`, checked to be of the kind `is` tests.
const JsonChecks::json& JsonChecks::Member(const json& object, const char* key, KindTest is,
                                           const char* kind, const std::string& where) const {
  const json& value = Field(object, key, where);
  LOOM_CHECK_USER((value.*is)()) << doc_ << ": " << where << "." << key << " must be " << kind
                                 << ", got " << Shown(value);
  return value;
}

// `value` (the JSON at `field`) as an integer in [0, 2^63): sizes and ids are int64 in the
// executor, and an unsigned JSON number above that would wrap to a negative one.
int64_t JsonChecks::NonNegative(const json& value, const std::string& field) const {
  LOOM_CHECK_USER(value.is_number_integer())
      << doc_ << ": " << field << " must be an integer >= 0, got " << Shown(value);
  LOOM_CHECK_USER(!value.is_number_unsigned() ||
                  value.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX))
      << doc_ << ": " << field << " = " << Shown(value) << " is too large (at most 2^63 - 1)";
  int64_t count = value.get<int64_t>();
  LOOM_CHECK_USER(count >= 0) << doc_ << ": " << field << " must be an integer >= 0, got " << count;
  return count;
}

int64_t JsonChecks::Count(const json& object, const char* key, const std::string& where) const {
  return NonNegative(Field(object, key, where), where + "." + key);
}

std::string JsonChecks::Text(const json& object, const char* key, const std::string& where) const {
  return Member(object, key, &json::is_string, "a string", where).get<std::string>();
}

const JsonChecks::json& JsonChecks::Array(const json& object, const char* key,
                                          const std::string& where) const {
  return Member(object, key, &json::is_array, "an array", where);
}

int JsonChecks::Id(const json& object, const char* key, const std::string& where, size_t count,
                   const char* of_what) const {
  int64_t id = Count(object, key, where);
  LOOM_CHECK_USER(static_cast<uint64_t>(id) < count)
      << doc_ << ": " << where << "." << key << " = " << id << " is out of range: " << whole_
      << " has " << count << " " << of_what;
  return static_cast<int>(id);
}

DataType JsonChecks::ParseDtype(const std::string& text, const std::string& where) const {
  DataType dtype;
  bool parsed = true;
  try {
    dtype = DataType::Parse(text);
  } catch (const Error&) {
    parsed = false;
  }
  LOOM_CHECK_USER(parsed && !dtype.is_void() && !dtype.is_handle())
      << doc_ << ": " << where << ".dtype '" << text
      << "' is not a known dtype (expected a tensor element type such as \"float32\", \"int64\", "
      << "\"bool\")";
  return dtype;
}

// The bytes of a `dtype` tensor of `shape`, checked not to overflow: a wrapped size would
// pass the fit checks below and let a kernel write past its slot.
size_t JsonChecks::TensorBytes(const std::vector<int64_t>& shape, DataType dtype,
                               const std::string& where, const std::string& name) const {
  uint64_t bytes = ElementBytes(dtype);
  for (int64_t extent : shape) {
    LOOM_CHECK_USER(extent == 0 || bytes <= static_cast<uint64_t>(INT64_MAX) / extent)
        << doc_ << ": " << where << " ('" << name << "', " << dtype << ShapeString(shape)
        << ") is too large: its size in bytes overflows 63 bits";
    bytes *= static_cast<uint64_t>(extent);
  }
  return static_cast<size_t>(bytes);
}

JsonChecks::json JsonChecks::Parse(const std::string& text) const {
  try {
    return json::parse(text);
  } catch (const json::exception& error) {
    // Drop the library's "[json.exception.parse_error.101] " tag; keep line and column.
    std::string reason = error.what();
    size_t tag_end = reason.find("] ");
    if (tag_end != std::string::npos) reason = reason.substr(tag_end + 2);
    LOOM_THROW << doc_ << ": the document does not parse (" << reason
               << "); pass the document written by the Loom compiler";
  }
  return {};
}

}  // namespace loom::runtime
