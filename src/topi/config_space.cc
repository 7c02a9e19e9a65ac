#include "loom/topi/config_space.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "loom/support/error.h"

namespace loom::topi {

namespace {

// A space past this many points is a template bug: its value lists are too long to walk.
constexpr int64_t kMaxProductSize = 10'000'000;

}  // namespace

int64_t Config::operator[](const std::string& knob) const {
  auto it = values_.find(knob);
  LOOM_CHECK_USER(it != values_.end())
      << "config {" << str() << "} has no knob '" << knob
      << "'; it belongs to another template or an older version of this one";
  return it->second;
}

std::string Config::str() const {
  std::ostringstream text;
  const char* separator = "";
  for (const auto& [name, value] : values_) {
    text << separator << name << "=" << value;
    separator = " ";
  }
  return text.str();
}

void ConfigSpace::AddKnob(const std::string& name, KnobKind kind, std::vector<int64_t> values) {
  for (const Knob& knob : knobs_) {
    LOOM_CHECK_USER(knob.name != name) << "ConfigSpace::AddKnob: knob '" << name << "' added twice";
  }
  LOOM_CHECK_USER(!values.empty()) << "ConfigSpace::AddKnob('" << name << "'): no candidate values";
  LOOM_CHECK_USER(std::set<int64_t>(values.begin(), values.end()).size() == values.size())
      << "ConfigSpace::AddKnob('" << name << "'): candidate values repeat";
  LOOM_CHECK_USER(product_size() * static_cast<int64_t>(values.size()) <= kMaxProductSize)
      << "ConfigSpace::AddKnob('" << name << "'): the space would pass " << kMaxProductSize
      << " points; offer fewer candidates";
  knobs_.push_back({name, kind, std::move(values)});
  enumerated_ = false;
}

void ConfigSpace::AddConstraint(const std::string& description,
                                std::function<bool(const Config&)> holds) {
  constraints_.emplace_back(description, std::move(holds));
  enumerated_ = false;
}

int64_t ConfigSpace::product_size() const {
  int64_t size = 1;
  for (const Knob& knob : knobs_) size *= static_cast<int64_t>(knob.values.size());
  return size;
}

std::vector<int64_t> ConfigSpace::Digits(int64_t index) const {
  LOOM_CHECK_USER(index >= 0 && index < product_size())
      << "ConfigSpace: point " << index << " is outside the space of " << product_size();
  std::vector<int64_t> digits(knobs_.size());
  for (size_t k = knobs_.size(); k-- > 0;) {
    const int64_t radix = static_cast<int64_t>(knobs_[k].values.size());
    digits[k] = index % radix;
    index /= radix;
  }
  return digits;
}

int64_t ConfigSpace::IndexOfDigits(const std::vector<int64_t>& digits) const {
  LOOM_ICHECK(digits.size() == knobs_.size()) << "one digit per knob";
  int64_t index = 0;
  for (size_t k = 0; k < knobs_.size(); ++k) {
    const int64_t radix = static_cast<int64_t>(knobs_[k].values.size());
    LOOM_ICHECK(digits[k] >= 0 && digits[k] < radix) << "digit out of range";
    index = index * radix + digits[k];
  }
  return index;
}

Config ConfigSpace::At(int64_t index) const {
  std::vector<int64_t> digits = Digits(index);
  std::map<std::string, int64_t> values;
  for (size_t k = 0; k < knobs_.size(); ++k) values[knobs_[k].name] = knobs_[k].values[digits[k]];
  return Config(std::move(values));
}

int64_t ConfigSpace::IndexOf(const Config& config) const {
  std::vector<int64_t> digits;
  for (const Knob& knob : knobs_) {
    const int64_t value = config[knob.name];
    auto it = std::find(knob.values.begin(), knob.values.end(), value);
    LOOM_CHECK_USER(it != knob.values.end())
        << "config {" << config.str() << "}: " << knob.name << "=" << value
        << " is not one of this space's candidates; the record was tuned for "
           "another workload";
    digits.push_back(it - knob.values.begin());
  }
  LOOM_CHECK_USER(config.values().size() == knobs_.size())
      << "config {" << config.str() << "} has knobs this space lacks; it belongs to another "
      << "template";
  return IndexOfDigits(digits);
}

void ConfigSpace::Pin(const std::string& knob, int64_t value) {
  for (Knob& k : knobs_) {
    if (k.name != knob) continue;
    LOOM_CHECK_USER(std::find(k.values.begin(), k.values.end(), value) != k.values.end())
        << "ConfigSpace::Pin: " << knob << "=" << value << " is not one of its candidates";
    k.values = {value};
    enumerated_ = false;
    return;
  }
  LOOM_THROW << "ConfigSpace::Pin: no knob '" << knob << "'";
}

void ConfigSpace::PinLayouts(const Config& config) {
  for (const Knob& k : std::vector<Knob>(knobs_)) {
    if (k.kind == KnobKind::kLayout) Pin(k.name, config[k.name]);
  }
}

bool ConfigSpace::SameLayouts(const Config& config, const Config& reference) const {
  for (const Knob& k : knobs_) {
    if (k.kind == KnobKind::kLayout &&
        (!config.Has(k.name) || !reference.Has(k.name) || config[k.name] != reference[k.name])) {
      return false;
    }
  }
  return true;
}

bool ConfigSpace::IsValid(const Config& config, std::string* failed) const {
  for (const auto& [description, holds] : constraints_) {
    if (!holds(config)) {
      if (failed) *failed = description;
      return false;
    }
  }
  return true;
}

const std::vector<int64_t>& ConfigSpace::ValidIndices() const {
  if (!enumerated_) {
    valid_.clear();
    for (int64_t index = 0, size = product_size(); index < size; ++index) {
      if (IsValid(At(index))) valid_.push_back(index);
    }
    enumerated_ = true;
  }
  return valid_;
}

std::vector<int64_t> DivisorsUpTo(int64_t n, int64_t limit) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= std::min(n, limit); ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

}  // namespace loom::topi
