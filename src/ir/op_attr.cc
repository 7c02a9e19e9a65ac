// The table of built-in operator attributes (loom/ir/op_attr.h).
#include "loom/ir/op_attr.h"

#include <map>
#include <mutex>

namespace loom::detail {

namespace {

struct Table {
  std::mutex mutex;
  std::map<std::pair<std::string, std::string>, std::any> values;  // (key, op) -> value
};

Table& GlobalTable() {
  static Table* table = new Table();  // never destroyed: values outlive every user
  return *table;
}

}  // namespace

void RegisterOpAttr(const std::string& key, const std::string& op, std::any value) {
  Table& table = GlobalTable();
  std::lock_guard<std::mutex> lock(table.mutex);
  bool inserted = table.values.emplace(std::make_pair(key, op), std::move(value)).second;
  LOOM_ICHECK(inserted) << "op attribute " << key << " of " << op << " registered twice";
}

const std::any* FindOpAttr(const std::string& key, const std::string& op) {
  Table& table = GlobalTable();
  std::lock_guard<std::mutex> lock(table.mutex);
  auto it = table.values.find({key, op});
  return it == table.values.end() ? nullptr : &it->second;
}

}  // namespace loom::detail
