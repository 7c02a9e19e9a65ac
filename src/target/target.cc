// Target strings read against the registry of target kinds and tags; the kinds themselves
// register from their own files (src/target/llvm/, src/target/source/).
#include "loom/target/target.h"

#include <algorithm>
#include <sstream>

#include "loom/support/error.h"
#include "loom/tir/transform.h"

namespace loom {

namespace {

// Whitespace-separated tokens; a value may be quoted ('...' or "...") to hold spaces, as a
// nested -host target string does. The quotes are removed.
std::vector<std::string> Tokenize(const std::string& text) {
  std::vector<std::string> tokens;
  std::string token;
  char quote = 0;
  bool in_token = false;
  for (char c : text) {
    if (quote) {
      if (c == quote) {
        quote = 0;
      } else {
        token += c;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_token = true;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      if (in_token) tokens.push_back(token);
      token.clear();
      in_token = false;
    } else {
      token += c;
      in_token = true;
    }
  }
  LOOM_CHECK_USER(!quote) << "target '" << text << "': a quote (" << quote << ") is not closed";
  if (in_token) tokens.push_back(token);
  return tokens;
}

std::string Join(const std::vector<std::string>& items, const char* separator = ",") {
  std::string joined;
  for (const std::string& item : items) joined += (joined.empty() ? "" : separator) + item;
  return joined;
}

std::string KnownKindsAndTags() {
  std::vector<std::string> kinds, tags;
  for (const TargetKind* kind : TargetKindRegistry::List()) kinds.push_back(kind->name);
  for (const TargetTag* tag : TargetKindRegistry::ListTags()) tags.push_back(tag->name);
  return "the known kinds are: " + Join(kinds, ", ") +
         (tags.empty() ? "" : "; the known tags are: " + Join(tags, ", "));
}

std::string AttrUsage(const TargetAttrSpec& spec) {
  switch (spec.type) {
    case TargetAttrType::kBool: return "-" + spec.name;
    case TargetAttrType::kInt:
      return "-" + spec.name + "=INT" +
             (spec.min ? " (" + std::to_string(*spec.min) + ".." + std::to_string(*spec.max) + ")"
                       : "");
    case TargetAttrType::kString:
      return "-" + spec.name + "=" + (spec.choices.empty() ? "NAME" : Join(spec.choices, "|"));
    case TargetAttrType::kStringList: return "-" + spec.name + "=A,B,...";
  }
  return "";
}

std::string KindUsage(const TargetKind& kind) {
  std::string usage;
  for (const TargetAttrSpec& spec : kind.attrs) usage += (usage.empty() ? "" : ", ") + AttrUsage(spec);
  if (kind.is_device) usage += ", -host=TARGET";
  return usage;
}

// `value` (the text after '=', or none for a bare -name) as the attribute's type.
TargetAttrValue ParseValue(const TargetAttrSpec& spec, const std::optional<std::string>& value,
                           const std::string& whole) {
  auto bad = [&](const char* expected) {
    LOOM_THROW << "target '" << whole << "': -" << spec.name << " takes " << expected << ", got "
               << (value ? "'" + *value + "'" : "no value") << " (" << spec.doc << ")";
    return TargetAttrValue();
  };
  if (spec.type == TargetAttrType::kBool) {
    if (!value || *value == "true" || *value == "1") return true;
    if (*value == "false" || *value == "0") return false;
    return bad("no value, or true or false");
  }
  if (!value) return bad(spec.type == TargetAttrType::kInt ? "an integer" : "a value after '='");
  if (spec.type == TargetAttrType::kInt) {
    int64_t number = 0;
    size_t used = 0;
    try {
      number = std::stoll(*value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != value->size()) return bad("an integer");
    if (spec.min && (number < *spec.min || number > *spec.max)) {
      LOOM_THROW << "target '" << whole << "': -" << spec.name << " must be in " << *spec.min
                 << ".." << *spec.max << ", got '" << *value << "'";
    }
    return number;
  }
  if (spec.type == TargetAttrType::kString) {
    if (!spec.choices.empty() &&
        std::find(spec.choices.begin(), spec.choices.end(), *value) == spec.choices.end()) {
      LOOM_THROW << "target '" << whole << "': -" << spec.name << " must be "
                 << Join(spec.choices, " or ") << ", got '" << *value << "'";
    }
    return *value;
  }
  std::vector<std::string> items;
  std::stringstream stream(*value);
  std::string item;
  while (std::getline(stream, item, ',')) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

std::string ValueText(const TargetAttrValue& value) {
  if (const auto* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  if (const auto* i = std::get_if<int64_t>(&value)) return std::to_string(*i);
  if (const auto* s = std::get_if<std::string>(&value)) return *s;
  return Join(std::get<std::vector<std::string>>(value));
}

}  // namespace

Target Target::Parse(const std::string& text) {
  std::vector<std::string> tokens = Tokenize(text);
  LOOM_CHECK_USER(!tokens.empty()) << "target string is empty; write e.g. \"llvm\" or "
                                      "\"llvm -mcpu=znver4\" (" << KnownKindsAndTags() << ")";
  // A tag stands for its target string; attributes after it add to or override it.
  if (const TargetTag* tag = TargetKindRegistry::FindTag(tokens[0])) {
    std::vector<std::string> expanded = Tokenize(tag->target);
    expanded.insert(expanded.end(), tokens.begin() + 1, tokens.end());
    tokens = std::move(expanded);
  }
  Target target;
  target.kind_ = TargetKindRegistry::Find(tokens[0]);
  LOOM_CHECK_USER(target.kind_ != nullptr)
      << "target '" << text << "': unknown target kind or tag '" << tokens[0] << "'; "
      << KnownKindsAndTags();
  const TargetKind& kind = *target.kind_;
  for (size_t i = 1; i < tokens.size(); ++i) {
    const std::string& token = tokens[i];
    size_t equals = token.find('=');
    std::string name = token.substr(0, equals);
    std::optional<std::string> value;
    if (equals != std::string::npos) value = token.substr(equals + 1);
    if (name.size() > 1 && name[0] == '-') name = name.substr(1);
    if (name == "host") {
      LOOM_CHECK_USER(kind.is_device && value)
          << "target '" << text << "': -host=TARGET applies to device kinds; " << kind.name
          << " code runs on the host itself";
      target.host_ = std::make_shared<Target>(Parse(*value));
      LOOM_CHECK_USER(!target.host_->kind_def().is_device)
          << "target '" << text << "': the host '" << *value << "' is itself a device kind";
      continue;
    }
    const TargetAttrSpec* spec = token[0] == '-' ? kind.FindAttr(name) : nullptr;
    LOOM_CHECK_USER(spec != nullptr)
        << "target '" << text << "': unknown attribute '" << token << "' for kind '" << kind.name
        << "'; " << kind.name << " takes " << KindUsage(kind);
    TargetAttrValue parsed = ParseValue(*spec, value, text);
    auto existing = target.attrs_.find(name);
    if (spec->type == TargetAttrType::kStringList && existing != target.attrs_.end()) {
      auto& list = std::get<std::vector<std::string>>(existing->second);
      for (std::string& item : std::get<std::vector<std::string>>(parsed)) list.push_back(item);
    } else {
      target.attrs_[name] = std::move(parsed);
    }
  }
  target.Set("keys", std::vector<std::string>{});
  if (kind.canonicalize) kind.canonicalize(target, text);
  if (kind.is_device && !target.host_) target.host_ = std::make_shared<Target>(Parse("llvm"));
  return target;
}

const std::string& Target::kind() const { return kind_->name; }

bool Target::HasKey(const std::string& key) const {
  return std::find(keys_.begin(), keys_.end(), key) != keys_.end();
}

bool Target::Has(const std::string& attr) const { return kind_->FindAttr(attr) != nullptr; }

const TargetAttrValue& Target::Value(const std::string& attr, TargetAttrType type) const {
  const TargetAttrSpec* spec = kind_->FindAttr(attr);
  LOOM_ICHECK(spec && spec->type == type)
      << "target kind '" << kind_->name << "' has no " << TargetAttrTypeName(type)
      << " attribute -" << attr;
  auto it = attrs_.find(attr);
  return it == attrs_.end() ? spec->default_value : it->second;
}

bool Target::GetBool(const std::string& attr) const {
  return std::get<bool>(Value(attr, TargetAttrType::kBool));
}
int64_t Target::GetInt(const std::string& attr) const {
  return std::get<int64_t>(Value(attr, TargetAttrType::kInt));
}
const std::string& Target::GetString(const std::string& attr) const {
  return std::get<std::string>(Value(attr, TargetAttrType::kString));
}
const std::vector<std::string>& Target::GetStrings(const std::string& attr) const {
  return std::get<std::vector<std::string>>(Value(attr, TargetAttrType::kStringList));
}

void Target::Set(const std::string& attr, TargetAttrValue value) {
  const TargetAttrSpec* spec = kind_->FindAttr(attr);
  LOOM_ICHECK(spec && static_cast<size_t>(spec->type) == value.index())
      << "target kind '" << kind_->name << "': no attribute -" << attr << " of that type";
  if (attr == "keys") {
    // Keys a kind adds (an architecture's) go after those the string gave and before the
    // kind's defaults: more specific than "cpu", less than what the user asked for.
    std::vector<std::string> added = std::get<std::vector<std::string>>(value);
    keys_.clear();
    std::vector<std::string> given = GetStrings("keys");
    for (const std::vector<std::string>* list :
         std::initializer_list<const std::vector<std::string>*>{&given, &added, &kind_->default_keys}) {
      for (const std::string& key : *list) {
        if (!HasKey(key)) keys_.push_back(key);
      }
    }
    return;
  }
  attrs_[attr] = std::move(value);
}

std::string Target::triple() const { return Has("mtriple") ? GetString("mtriple") : ""; }
std::string Target::cpu() const { return Has("mcpu") ? GetString("mcpu") : ""; }
std::vector<std::string> Target::features() const {
  return Has("mattr") ? GetStrings("mattr") : std::vector<std::string>{};
}
bool Target::fast_math() const { return Has("fast-math") && GetBool("fast-math"); }
bool Target::fp_contract() const {
  return Has("fp-contract") && GetString("fp-contract") == "fast";
}
int Target::opt_level() const { return Has("opt-level") ? static_cast<int>(GetInt("opt-level")) : 3; }
bool Target::ContractsMultiplyAdd() const { return fp_contract() && HasFeature("fma"); }

bool Target::HasFeature(const std::string& name) const {
  if (kind_->has_feature) return kind_->has_feature(*this, name);
  bool enabled = false;
  for (const std::string& feature : features()) {
    if (feature.substr(1) == name) enabled = feature[0] == '+';
  }
  return enabled;
}

bool Target::HasTensorCores(DataType operand) const {
  const std::string feature = tir::builtin::TensorCoreFeature(operand);
  return !feature.empty() && HasFeature(feature);
}

int Target::vector_width_bits() const {
  int64_t bits = GetInt("vector-width");
  return bits > 0 ? static_cast<int>(bits) : 128;
}

int Target::VectorLanes(int element_bits) const {
  LOOM_ICHECK(element_bits > 0);
  return std::max(1, vector_width_bits() / element_bits);
}

std::string Target::str() const {
  std::string text = kind_->name;
  for (const TargetAttrSpec& spec : kind_->attrs) {
    auto it = attrs_.find(spec.name);
    if (it == attrs_.end() || it->second == spec.default_value) continue;
    if (spec.type == TargetAttrType::kBool) {
      text += std::get<bool>(it->second) ? " -" + spec.name : " -" + spec.name + "=false";
      continue;
    }
    std::string value = ValueText(it->second);
    bool quote = value.find(' ') != std::string::npos;
    text += " -" + spec.name + "=" + (quote ? "'" + value + "'" : value);
  }
  if (host_) text += " -host='" + host_->str() + "'";
  return text;
}

}  // namespace loom
