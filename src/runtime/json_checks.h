// Reading a JSON document the compiler wrote (the graph executor's execution graph, the
// VM's program) with every field checked: each check that fails is a loom::Error that names
// the document and the field ("graph JSON: entries[3].storage ...") and says what was
// expected and what was found.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "loom/runtime/data_type.h"

namespace loom::runtime {

class JsonChecks {
 public:
  using json = nlohmann::json;
  using KindTest = bool (json::*)() const noexcept;

  // `doc` names the document in messages ("graph JSON", "VM program"), `whole` what it
  // describes ("the graph": "... is out of range: the graph has 4 storages").
  JsonChecks(std::string doc, std::string whole) : doc_(std::move(doc)), whole_(std::move(whole)) {}

  // A JSON value quoted in a message, cut short: a mistyped field may hold a whole array.
  static std::string Shown(const json& value);
  const json& Object(const json& value, const std::string& where) const;
  const json& Field(const json& object, const char* key, const std::string& where) const;
  // The member `key` of `object`, checked to be of the kind `is` tests.
  const json& Member(const json& object, const char* key, KindTest is, const char* kind,
                     const std::string& where) const;
  // `value` (the JSON at `field`) as an integer in [0, 2^63): sizes and ids are int64 in the
  // executors, and an unsigned JSON number above that would wrap to a negative one.
  int64_t NonNegative(const json& value, const std::string& field) const;
  int64_t Count(const json& object, const char* key, const std::string& where) const;
  std::string Text(const json& object, const char* key, const std::string& where) const;
  const json& Array(const json& object, const char* key, const std::string& where) const;
  // object[key] as an index below `count` (of `of_what` the document has).
  int Id(const json& object, const char* key, const std::string& where, size_t count,
         const char* of_what) const;
  DataType ParseDtype(const std::string& text, const std::string& where) const;
  // The bytes of a `dtype` tensor of `shape`, checked not to overflow: a wrapped size would
  // pass the fit checks and let a kernel write past its memory.
  size_t TensorBytes(const std::vector<int64_t>& shape, DataType dtype, const std::string& where,
                     const std::string& name) const;
  // The document parsed; a text that does not parse is an error saying where.
  json Parse(const std::string& text) const;

 private:
  std::string doc_;
  std::string whole_;
};

}  // namespace loom::runtime
