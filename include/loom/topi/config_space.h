// Configuration spaces: the choices a schedule template leaves open, as data the auto-tuner
// searches (autotune/). A template declares knobs, each with its candidate values, and the
// constraints a point must meet to be scheduled (register budgets, divisibility); a point of the
// space is one value per knob. Templates live with their schedules (topi/x86/...), which is why the
// space is here and not in autotune/, the layer that searches it.
//
//   ConfigSpace space;
//   space.AddKnob("reg_w", KnobKind::kSplit, {1, 2, 4, 7, 14, 28});
//   space.AddKnob("unroll_kw", KnobKind::kAnnotate, {0, 1});
//   space.AddConstraint("reg_w * vectors fits 28 registers",
//                       [](const Config& c) { return c["reg_w"] <= 28; });
//   for (int64_t index : space.ValidIndices()) { Config c = space.At(index); ... }
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace loom::topi {

// What a knob decides (a layout knob is what a search within a model keeps: PinLayouts).
enum class KnobKind {
  kSplit,   // a loop's split factor (a tile size)
  kChoice,  // an algorithm, a variant
  // A layout the kernel shares with its neighbours (a channel block): changing it alone makes
  // the graph convert the tensors between kernels, which a kernel measured alone does not pay.
  kLayout,
  kAnnotate,  // unroll / vectorize / parallel on a loop, on or off
  kReorder,   // one of a list of loop orders
};


struct Knob {
  std::string name;
  KnobKind kind = KnobKind::kChoice;
  std::vector<int64_t> values;  // the candidates, distinct
};

// One point: a value for every knob of its space.
class Config {
 public:
  Config() = default;
  explicit Config(std::map<std::string, int64_t> values) : values_(std::move(values)) {}
  // The knob's value; a loom::Error naming the knob when the config has none.
  int64_t operator[](const std::string& knob) const;
  bool Has(const std::string& knob) const { return values_.count(knob) != 0; }
  const std::map<std::string, int64_t>& values() const { return values_; }
  // "ic_bn=16 oc_bn=16 reg_w=14" (knobs by name)
  std::string str() const;
  bool operator==(const Config& other) const { return values_ == other.values_; }

 private:
  std::map<std::string, int64_t> values_;
};

class ConfigSpace {
 public:
  // Knobs are added in the order that numbers the points (the first varies slowest). A name used
  // twice, or an empty or repeating value list, is a loom::Error.
  void AddKnob(const std::string& name, KnobKind kind, std::vector<int64_t> values);
  void AddConstraint(const std::string& description, std::function<bool(const Config&)> holds);

  const std::vector<Knob>& knobs() const { return knobs_; }
  // Points of the product of the knobs' values, valid or not.
  int64_t product_size() const;
  // The point at `index` of the product (0 <= index < product_size()).
  Config At(int64_t index) const;
  // The index of `config`; a loom::Error naming the knob whose value is not a candidate or that the
  // config lacks (a record for another space).
  int64_t IndexOf(const Config& config) const;
  // Whether every constraint holds; the description of the first that fails otherwise.
  bool IsValid(const Config& config, std::string* failed = nullptr) const;
  // Every valid point's index, ascending (computed once: at most 10^7 points are walked).
  const std::vector<int64_t>& ValidIndices() const;
  // The position of each knob's value in its list, for `index` (what search moves change).
  std::vector<int64_t> Digits(int64_t index) const;
  int64_t IndexOfDigits(const std::vector<int64_t>& digits) const;
  // Leaves `value` the knob's only candidate (a loom::Error unless it is one): the space of
  // points sharing that choice, numbered anew.
  void Pin(const std::string& knob, int64_t value);
  // Each kLayout knob pinned to its value in `config` (the default's layouts: what a search
  // within a model keeps, since it does not see the conversions between kernels).
  void PinLayouts(const Config& config);
  // Whether `config` has `reference`'s value for every kLayout knob.
  bool SameLayouts(const Config& config, const Config& reference) const;

 private:
  std::vector<Knob> knobs_;
  std::vector<std::pair<std::string, std::function<bool(const Config&)>>> constraints_;
  mutable std::vector<int64_t> valid_;
  mutable bool enumerated_ = false;
};

// The divisors of n up to `limit`, ascending: a split knob's candidates (tile sizes that
// divide an extent).
std::vector<int64_t> DivisorsUpTo(int64_t n, int64_t limit);
inline std::vector<int64_t> Divisors(int64_t n) { return DivisorsUpTo(n, n); }

}  // namespace loom::topi
