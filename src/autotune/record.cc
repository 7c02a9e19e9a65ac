#include "loom/autotune/record.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <nlohmann/json.hpp>
#include <map>
#include <mutex>
#include <set>
#include <sstream>

#include "autotune/shipped_records.h"
#include "loom/support/error.h"
#include "loom/support/version.h"

namespace loom::autotune {

namespace {

using Json = nlohmann::json;

std::string NowUtc() {
  std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

// The features the templates' code depends on: the vector instruction sets of float code (the
// vector width, FMA, AVX-512's foundation and the VL/BW/DQ subsets LLVM uses for it; NEON, SVE).
// Extensions for other data types (FP16, BF16, VNNI, AMX, ...) do not change a float kernel's
// code, so a record tuned where they exist applies where they do not. A template whose code
// comes to use such an extension adds it here.
const std::set<std::string>& CodegenIsaFeatures() {
  static const std::set<std::string> kFeatures = {
      "+sse",      "+sse2",     "+sse3", "+ssse3",   "+sse4.1",   "+sse4.2",
      "+avx",      "+avx2",     "+fma",  "+avx512f", "+avx512vl", "+avx512bw",
      "+avx512dq", "+avx512cd", "+neon", "+sve",     "+sve2"};
  return kFeatures;
}

// Features that tell CPU families apart whose costs differ for the same code: a record applies
// only where the target's CPU has exactly the same of these as the CPU it was measured on.
// sse4a marks AMD's cores (every one since K10; no Intel core has it): with the same AVX-512
// instructions, a Zen core runs 512-bit vectors in two halves and has other caches, and
// records tuned on a Xeon measured 6-19% slower there than the defaults (ResNet-18's
// Winograd layers 0.69 -> 1.0 ms, 2026-11-30). A family read off the CPU's features holds in
// a virtual machine, whose reported model name need not.
const std::set<std::string>& FamilyFeatures() {
  static const std::set<std::string> kFeatures = {"+sse4a"};
  return kFeatures;
}

// Whether `target` has `feature` ("+avx2"), as its kind says for its CPU (a -mcpu or a tag
// implies features no -mattr lists). Cached: BestRecords asks for every record.
bool TargetHas(const Target& target, const std::string& feature) {
  static std::mutex mutex;
  static std::map<std::pair<std::string, std::string>, bool> known;
  std::lock_guard<std::mutex> lock(mutex);
  auto key = std::make_pair(target.str(), feature);
  auto it = known.find(key);
  if (it == known.end()) it = known.emplace(key, target.HasFeature(feature.substr(1))).first;
  return it->second;
}

// What a record keeps of its CPU: the features -mattr enables, and the vector instruction sets
// the target has.
std::vector<std::string> RecordedFeatures(const Target& target) {
  std::set<std::string> recorded;
  for (const std::string& f : target.features()) {
    if (!f.empty() && f[0] == '+') recorded.insert(f);
  }
  for (const std::set<std::string>* kept : {&CodegenIsaFeatures(), &FamilyFeatures()}) {
    for (const std::string& f : *kept) {
      if (TargetHas(target, f)) recorded.insert(f);
    }
  }
  return {recorded.begin(), recorded.end()};
}

// Reads records from `in` up to the first bad line, naming lines "<source> line N".
RecordsFile ReadRecordLines(std::istream& in, const std::string& source) {
  RecordsFile file;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      file.records.push_back(TuningRecord::FromJson(line));
      file.lines.push_back(number);
    } catch (const Error& e) {
      file.error = source + " line " + std::to_string(number) + ": " + e.what() +
                   "; the records before it are used, those after it are not read";
      break;
    }
  }
  return file;
}

// The field of `object`, of the JSON type `check` accepts; a loom::Error naming it otherwise.
const Json& Field(const Json& object, const char* name, bool (Json::*check)() const,
                  const char* expected) {
  auto it = object.find(name);
  LOOM_CHECK_USER(it != object.end()) << "no \"" << name << "\" field";
  LOOM_CHECK_USER(((*it).*check)()) << "\"" << name << "\" must be " << expected;
  return *it;
}

}  // namespace

TuningRecord TuningRecord::Make(const graph::TuningWorkload& workload, const Target& target,
                                const topi::Config& config, const MeasureResult& result) {
  TuningRecord r;
  r.workload = workload;
  r.target_kind = target.kind();
  r.features = RecordedFeatures(target);
  r.config = config;
  r.result = result;
  r.timestamp = NowUtc();
  r.loom_version = kLoomVersion;
  return r;
}

std::string TuningRecord::ToJson() const {
  Json config_json = Json::object();
  for (const auto& [knob, value] : config.values()) config_json[knob] = value;
  Json j = {
      {"workload", {{"template", workload.template_name}, {"args", workload.args}}},
      {"target", {{"kind", target_kind}, {"features", features}}},
      {"config", config_json},
      {"costs", result.costs},
      {"error", MeasureErrorName(result.error)},
      {"message", result.message},
      {"build_s", result.build_seconds},
      {"timestamp", timestamp},
      {"loom_version", loom_version},
  };
  return j.dump();
}

TuningRecord TuningRecord::FromJson(const std::string& line) {
  Json j;
  try {
    j = Json::parse(line);
  } catch (const Json::exception& e) {
    LOOM_THROW << "not JSON (" << e.what() << ")";
  }
  LOOM_CHECK_USER(j.is_object()) << "not a JSON object";
  TuningRecord r;
  const Json& workload = Field(j, "workload", &Json::is_object, "an object");
  r.workload.template_name =
      Field(workload, "template", &Json::is_string, "a string").get<std::string>();
  for (const Json& a : Field(workload, "args", &Json::is_array, "an array")) {
    LOOM_CHECK_USER(a.is_number_integer()) << "\"args\" must hold integers";
    r.workload.args.push_back(a.get<int64_t>());
  }
  const Json& target = Field(j, "target", &Json::is_object, "an object");
  r.target_kind = Field(target, "kind", &Json::is_string, "a string").get<std::string>();
  for (const Json& f : Field(target, "features", &Json::is_array, "an array")) {
    LOOM_CHECK_USER(f.is_string()) << "\"features\" must hold strings";
    r.features.push_back(f.get<std::string>());
  }
  std::map<std::string, int64_t> values;
  for (const auto& [knob, value] : Field(j, "config", &Json::is_object, "an object").items()) {
    LOOM_CHECK_USER(value.is_number_integer())
        << "config knob \"" << knob << "\" must be an integer";
    values[knob] = value.get<int64_t>();
  }
  r.config = topi::Config(values);
  for (const Json& c : Field(j, "costs", &Json::is_array, "an array")) {
    LOOM_CHECK_USER(c.is_number() && c.get<double>() > 0) << "\"costs\" must be positive numbers";
    r.result.costs.push_back(c.get<double>());
  }
  r.result.error =
      MeasureErrorFromName(Field(j, "error", &Json::is_string, "a string").get<std::string>());
  LOOM_CHECK_USER(r.result.error != MeasureError::kNone || !r.result.costs.empty())
      << "a record without an error needs costs";
  r.result.message = Field(j, "message", &Json::is_string, "a string").get<std::string>();
  r.result.build_seconds = Field(j, "build_s", &Json::is_number, "a number").get<double>();
  r.timestamp = Field(j, "timestamp", &Json::is_string, "a string").get<std::string>();
  r.loom_version = Field(j, "loom_version", &Json::is_string, "a string").get<std::string>();
  return r;
}

std::string TuningRecord::Mismatch(const Target& target) const {
  if (loom_version != kLoomVersion) {
    return "written by Loom " + loom_version + ", this is " + kLoomVersion;
  }
  if (target_kind != target.kind()) return "tuned for target kind " + target_kind;
  // The target's kind answers for its CPU (a -mcpu or a tag implies features no -mattr lists).
  std::string lacking;
  for (const std::string& f : features) {
    if (CodegenIsaFeatures().count(f) != 0 && !TargetHas(target, f)) {
      lacking += (lacking.empty() ? "" : " ") + f;
    }
  }
  if (!lacking.empty()) return "tuned for a CPU with features this target lacks (" + lacking + ")";
  for (const std::string& f : FamilyFeatures()) {
    const bool recorded = std::find(features.begin(), features.end(), f) != features.end();
    if (recorded != TargetHas(target, f)) {
      return "tuned on a CPU of another family (" + std::string(recorded ? "with " : "without ") +
             f + ", this target's CPU " + (recorded ? "without" : "with") +
             " it): its measurements do not carry over";
    }
  }
  return "";
}

RecordsFile ReadRecords(const std::string& path) {
  std::ifstream in(path);
  LOOM_CHECK_USER(in) << "cannot read tuning records '" << path << "'";
  return ReadRecordLines(in, path);
}

RecordsFile ShippedRecords() {
  RecordsFile all;
  for (const EmbeddedFile& file : ShippedRecordFiles()) {
    std::istringstream in(file.text);
    RecordsFile one = ReadRecordLines(in, file.name);
    LOOM_ICHECK(one.error.empty()) << "a shipped records file is broken: " << one.error;
    all.records.insert(all.records.end(), one.records.begin(), one.records.end());
    all.lines.insert(all.lines.end(), one.lines.begin(), one.lines.end());
  }
  return all;
}

RecordWriter::RecordWriter(const std::string& path) : path_(path), out_(path, std::ios::app) {
  LOOM_CHECK_USER(out_) << "cannot write tuning records to '" << path << "'";
}

void RecordWriter::Write(const TuningRecord& record) {
  out_ << record.ToJson() << "\n";
  out_.flush();
  LOOM_CHECK_USER(out_) << "writing tuning records to '" << path_ << "' failed";
}

std::vector<MeasuredConfig> RankMeasuredConfigs(const std::vector<TuningRecord>& records) {
  std::vector<MeasuredConfig> configs;
  for (const TuningRecord& r : records) {
    auto same = std::find_if(configs.begin(), configs.end(),
                             [&](const MeasuredConfig& m) { return m.config == r.config; });
    if (same == configs.end())
      same = configs.insert(configs.end(), MeasuredConfig{r.config, {}, 0});
    same->costs.push_back(r.result.cost());
  }
  for (MeasuredConfig& m : configs) {
    std::vector<double> sorted = m.costs;
    std::sort(sorted.begin(), sorted.end());
    m.cost = sorted[sorted.size() / 2];
  }
  // Measured again, a point's median stands against the single runs of the others.
  std::stable_sort(configs.begin(), configs.end(),
                   [&](const MeasuredConfig& a, const MeasuredConfig& b) {
                     const bool a_again = a.costs.size() > 1, b_again = b.costs.size() > 1;
                     if (a_again != b_again) return a_again;
                     return a.cost < b.cost;
                   });
  return configs;
}

BestRecords::BestRecords(const std::vector<TuningRecord>& records, const Target& target,
                         const std::vector<int>& lines, bool keep_layouts)
    : keep_layouts_(keep_layouts) {
  for (size_t i = 0; i < records.size(); ++i) {
    const TuningRecord& r = records[i];
    const std::string where =
        i < lines.size() ? "line " + std::to_string(lines[i]) : "record " + std::to_string(i + 1);
    std::string mismatch = r.Mismatch(target);
    if (!mismatch.empty()) {
      warnings_.push_back(where + ": " + mismatch + "; ignored");
      continue;
    }
    if (r.result.error != MeasureError::kNone) continue;  // a failure is a result, not a config
    candidates_[r.workload].push_back(r);
  }
}

std::shared_ptr<BestRecords> BestRecords::ForCompile(const std::string& path, const Target& target,
                                                     bool shipped) {
  if (path.empty() && !shipped) return nullptr;
  RecordsFile file;
  if (!path.empty()) file = ReadRecords(path);
  auto best = std::make_shared<BestRecords>(file.records, target, file.lines);
  if (!file.error.empty()) best->warnings_.insert(best->warnings_.begin(), file.error);
  if (shipped) best->AddFallback(ShippedRecords().records, target);
  return best;
}

void BestRecords::AddFallback(const std::vector<TuningRecord>& records, const Target& target) {
  std::map<graph::TuningWorkload, std::vector<TuningRecord>> added;
  for (const TuningRecord& r : records) {
    if (candidates_.count(r.workload) || !r.Mismatch(target).empty() ||
        r.result.error != MeasureError::kNone) {
      continue;
    }
    added[r.workload].push_back(r);
  }
  for (auto& [workload, list] : added) {
    candidates_.emplace(workload, std::move(list));
    fallback_.insert(workload);
  }
}

size_t BestRecords::fallbacks_used() const {
  size_t used = 0;
  for (const auto& [workload, config] : chosen_) used += fallback_.count(workload);
  return used;
}

std::optional<topi::Config> BestRecords::Query(const Target&,
                                               const graph::TuningWorkload& workload) {
  queried_.insert(workload);
  if (auto it = chosen_.find(workload); it != chosen_.end()) return it->second;
  auto it = candidates_.find(workload);
  if (it == candidates_.end()) return std::nullopt;
  const std::vector<MeasuredConfig> list = RankMeasuredConfigs(it->second);
  const graph::TuningTemplate& t = graph::FindTuningTemplate(workload.template_name);
  const topi::ConfigSpace space = t.space(workload.args);
  const topi::Config fallback = t.default_config(workload.args);
  std::string unfit;
  for (const MeasuredConfig& r : list) {
    // Without a search of the whole graph's layouts, a kernel keeps the layouts its neighbours
    // expect (a faster kernel in other blocks costs conversions around it).
    if (keep_layouts_ && !space.SameLayouts(r.config, fallback)) continue;
    try {
      space.IndexOf(r.config);
      std::string failed;
      LOOM_CHECK_USER(space.IsValid(r.config, &failed)) << "it breaks: " << failed;
    } catch (const Error& e) {
      // A config the template no longer takes: the next best, with a warning.
      if (unfit.empty()) unfit = "{" + r.config.str() + "} (" + e.what() + ")";
      continue;
    }
    if (!unfit.empty()) {
      warnings_.push_back(workload.str() + ": records do not fit the template, e.g. " + unfit +
                          "; the best that fits is used");
    }
    chosen_[workload] = r.config;
    return r.config;
  }
  if (!unfit.empty()) {
    warnings_.push_back(workload.str() + ": no record fits the template, e.g. " + unfit +
                        "; the default is used");
  }
  return std::nullopt;
}

std::vector<graph::TuningWorkload> BestRecords::missing() const {
  std::vector<graph::TuningWorkload> out;
  for (const graph::TuningWorkload& w : queried_) {
    if (!chosen_.count(w)) out.push_back(w);
  }
  return out;
}

}  // namespace loom::autotune
