#include "loom/graph/op.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include "loom/graph/strategy.h"
#include "loom/support/error.h"
#include "loom/topi/schedule.h"

namespace loom::graph {

const char* OpPatternName(OpPattern pattern) {
  switch (pattern) {
    case OpPattern::kElemWise: return "elemwise";
    case OpPattern::kBroadcast: return "broadcast";
    case OpPattern::kInjective: return "injective";
    case OpPattern::kCommReduce: return "reduce";
    case OpPattern::kOutEWiseFusable: return "out_elemwise_fusable";
    case OpPattern::kOpaque: return "opaque";
  }
  return "?";
}

te::Schedule ScheduleGroup(const CallInfo& master, const std::vector<te::Tensor>& outputs,
                           const Target& target) {
  if (const OpImplementation* chosen = SelectImplementation(master, outputs, target)) {
    return chosen->schedule(master, outputs, target);
  }
  if (master.op->schedule) return master.op->schedule(master, outputs, target);
  const int lanes = target.VectorLanes(32);
  if (master.op->pattern == OpPattern::kCommReduce) return topi::schedule_reduce(outputs, lanes);
  return topi::schedule_injective(outputs, lanes);
}

const AttrField* OpDef::FindAttr(const std::string& attr) const {
  for (const AttrField& field : attrs) {
    if (field.name == attr) return &field;
  }
  return nullptr;
}

namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<OpDef>> ops;
};

Registry& GlobalRegistry() {
  static Registry* registry = new Registry();  // never destroyed: OpDef pointers outlive all
  return *registry;
}

// Levenshtein distance, for "did you mean" suggestions.
size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace

const OpDef* OpRegistry::Find(const std::string& name) {
  Registry& registry = GlobalRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  auto it = registry.ops.find(name);
  return it == registry.ops.end() ? nullptr : it->second.get();
}

const OpDef& OpRegistry::Get(const std::string& name) {
  if (const OpDef* op = Find(name)) return *op;
  std::string close;
  for (const OpDef* op : List()) {
    if (EditDistance(op->name, name) <= 2 || op->name.find(name) != std::string::npos) {
      close += (close.empty() ? "" : ", ") + op->name;
    }
  }
  LOOM_THROW << "no graph operator is named '" << name << "'"
             << (close.empty() ? "" : " (close: " + close + ")");
}

std::vector<const OpDef*> OpRegistry::List() {
  Registry& registry = GlobalRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  std::vector<const OpDef*> ops;
  for (const auto& [name, op] : registry.ops) ops.push_back(op.get());
  return ops;
}

OpDef& OpRegistry::Register(const std::string& name) {
  Registry& registry = GlobalRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  auto [it, inserted] = registry.ops.emplace(name, std::make_unique<OpDef>());
  LOOM_ICHECK(inserted) << "graph operator '" << name << "' is registered twice";
  it->second->name = name;
  return *it->second;
}

OpBuilder& OpBuilder::Describe(std::string text) {
  def_.description = std::move(text);
  return *this;
}
OpBuilder& OpBuilder::Inputs(std::vector<std::string> names) {
  def_.inputs = std::move(names);
  return *this;
}
OpBuilder& OpBuilder::Attr(std::string name, AttrKind kind, std::optional<AttrValue> default_value,
                           std::string doc) {
  LOOM_ICHECK(!default_value || KindOf(*default_value) == kind)
      << def_.name << ": the default of attribute '" << name << "' is not " << AttrKindName(kind);
  def_.attrs.push_back({std::move(name), kind, std::move(default_value), std::move(doc)});
  return *this;
}
OpBuilder& OpBuilder::Pattern(OpPattern pattern) {
  def_.pattern = pattern;
  return *this;
}
OpBuilder& OpBuilder::TypeRelation(TypeRelationFn fn) {
  def_.type_relation = std::move(fn);
  return *this;
}
OpBuilder& OpBuilder::Compute(ComputeFn fn) {
  def_.compute = std::move(fn);
  return *this;
}
OpBuilder& OpBuilder::Schedule(ScheduleFn fn) {
  def_.schedule = std::move(fn);
  return *this;
}

}  // namespace loom::graph
