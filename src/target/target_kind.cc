// The registries of target kinds and tags.
#include "loom/target/target_kind.h"

#include <map>
#include <memory>
#include <mutex>

#include "loom/support/error.h"

namespace loom {

const char* TargetAttrTypeName(TargetAttrType type) {
  switch (type) {
    case TargetAttrType::kBool: return "bool";
    case TargetAttrType::kInt: return "int";
    case TargetAttrType::kString: return "string";
    case TargetAttrType::kStringList: return "list";
  }
  return "?";
}

std::vector<TargetAttrSpec> CommonTargetAttrs() {
  return {
      {"keys", TargetAttrType::kStringList, std::vector<std::string>{},
       "strategy keys before the kind's own, most specific first", {}, {}, {}},
      {"vector-width", TargetAttrType::kInt, int64_t{0},
       "bits of the widest SIMD register schedules use (0: the kind decides)", {}, 0, 4096},
      {"num-cores", TargetAttrType::kInt, int64_t{0},
       "cores kernels may use (0: all the machine has; recorded, not read by schedules yet)",
       {}, 0, 1 << 16},
  };
}

const TargetAttrSpec* TargetKind::FindAttr(const std::string& attr) const {
  for (const TargetAttrSpec& spec : attrs) {
    if (spec.name == attr) return &spec;
  }
  return nullptr;
}

namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<TargetKind>> kinds;
  std::map<std::string, std::unique_ptr<TargetTag>> tags;
};

Registry& GlobalRegistry() {
  static Registry* registry = new Registry();  // never destroyed: pointers outlive all
  return *registry;
}

}  // namespace

const TargetKind* TargetKindRegistry::Find(const std::string& name) {
  Registry& registry = GlobalRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  auto it = registry.kinds.find(name);
  return it == registry.kinds.end() ? nullptr : it->second.get();
}

std::vector<const TargetKind*> TargetKindRegistry::List() {
  Registry& registry = GlobalRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  std::vector<const TargetKind*> kinds;
  for (const auto& [name, kind] : registry.kinds) kinds.push_back(kind.get());
  return kinds;
}

TargetKind& TargetKindRegistry::Register(const std::string& name) {
  Registry& registry = GlobalRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  LOOM_ICHECK(!registry.kinds.count(name)) << "target kind '" << name << "' registered twice";
  auto kind = std::make_unique<TargetKind>();
  kind->name = name;
  kind->attrs = CommonTargetAttrs();
  return *(registry.kinds[name] = std::move(kind));
}

const TargetTag* TargetKindRegistry::FindTag(const std::string& name) {
  Registry& registry = GlobalRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  auto it = registry.tags.find(name);
  return it == registry.tags.end() ? nullptr : it->second.get();
}

std::vector<const TargetTag*> TargetKindRegistry::ListTags() {
  Registry& registry = GlobalRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  std::vector<const TargetTag*> tags;
  for (const auto& [name, tag] : registry.tags) tags.push_back(tag.get());
  return tags;
}

void TargetKindRegistry::RegisterTag(TargetTag tag) {
  Registry& registry = GlobalRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  LOOM_ICHECK(!registry.tags.count(tag.name) && !registry.kinds.count(tag.name))
      << "target tag '" << tag.name << "' registered twice or named like a kind";
  std::string name = tag.name;
  registry.tags[name] = std::make_unique<TargetTag>(std::move(tag));
}

TargetKindBuilder& TargetKindBuilder::Describe(std::string doc) {
  kind_.doc = std::move(doc);
  return *this;
}

TargetKindBuilder& TargetKindBuilder::DeviceType(int device_type) {
  kind_.device_type = device_type;
  return *this;
}

TargetKindBuilder& TargetKindBuilder::Keys(std::vector<std::string> keys) {
  kind_.default_keys = std::move(keys);
  return *this;
}

TargetKindBuilder& TargetKindBuilder::Device() {
  kind_.is_device = true;
  return *this;
}

TargetKindBuilder& TargetKindBuilder::OpaqueMemory() {
  kind_.opaque_memory = true;
  return *this;
}

TargetKindBuilder& TargetKindBuilder::LayersOnHost() {
  kind_.layers_on_host = true;
  return *this;
}

TargetKindBuilder& TargetKindBuilder::Attr(std::string name, TargetAttrType type,
                                           TargetAttrValue default_value, std::string doc) {
  LOOM_ICHECK(!kind_.FindAttr(name)) << "target kind '" << kind_.name << "' declares -" << name
                                     << " twice";
  LOOM_ICHECK(static_cast<size_t>(type) == default_value.index())
      << "-" << name << ": the default's type is not " << TargetAttrTypeName(type);
  kind_.attrs.push_back({std::move(name), type, std::move(default_value), std::move(doc), {}, {}, {}});
  return *this;
}

TargetKindBuilder& TargetKindBuilder::Choices(std::vector<std::string> choices) {
  LOOM_ICHECK(kind_.attrs.back().type == TargetAttrType::kString);
  kind_.attrs.back().choices = std::move(choices);
  return *this;
}

TargetKindBuilder& TargetKindBuilder::Range(int64_t min, int64_t max) {
  LOOM_ICHECK(kind_.attrs.back().type == TargetAttrType::kInt);
  kind_.attrs.back().min = min;
  kind_.attrs.back().max = max;
  return *this;
}

TargetKindBuilder& TargetKindBuilder::Canonicalize(
    std::function<void(Target&, const std::string&)> fn) {
  kind_.canonicalize = std::move(fn);
  return *this;
}

TargetKindBuilder& TargetKindBuilder::DeviceConfiguration(
    std::function<std::string(const Target&)> fn) {
  kind_.device_configuration = std::move(fn);
  return *this;
}

TargetKindBuilder& TargetKindBuilder::HasFeature(
    std::function<bool(const Target&, const std::string&)> fn) {
  kind_.has_feature = std::move(fn);
  return *this;
}

}  // namespace loom
