// Tuning records: one JSON object per line, appended after every measurement (an interrupted run
// loses nothing), read back by `loom tune --resume` and `loom compile --records`. Keyed by the
// target's kind and CPU features, not by a board's name: a record applies to any target of its kind
// that has every vector instruction set of float code it was measured with (sse*, avx, avx2, fma,
// avx512f/vl/bw/dq/cd, neon, sve*: what the kernels' code can use), as the target's kind says for
// its CPU; extensions for other data types (avx512fp16, bf16, vnni, amx) do not matter. Loom ships records for the bundled benchmark models (ShippedRecords), which
// `loom compile` uses where they apply.
//
//   {"workload": {"template": "x86.conv2d", "args": [1, 64, 56, ...]},
//    "target": {"kind": "llvm", "features": ["+avx512f", ...]},
//    "config": {"ic_bn": 16, ...}, "costs": [0.00021, ...], "error": "none",
//    "message": "", "build_s": 0.41, "timestamp": "2026-11-29T10:00:00Z",
//    "loom_version": "0.4.0"}
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "loom/autotune/measure.h"
#include "loom/graph/tuning.h"
#include "loom/target/target.h"

namespace loom::autotune {

struct TuningRecord {
  graph::TuningWorkload workload;
  std::string target_kind;
  // "+avx512f", ...: those the target's -mattr enables, the vector instruction sets its CPU
  // has, and the features that mark its CPU's family (+sse4a: AMD).
  std::vector<std::string> features;
  topi::Config config;
  MeasureResult result;
  std::string timestamp;
  std::string loom_version;

  // A record of a measurement just made on `target`, stamped with this Loom and now.
  static TuningRecord Make(const graph::TuningWorkload& workload, const Target& target,
                           const topi::Config& config, const MeasureResult& result);
  std::string ToJson() const;  // one line, no newline
  // A loom::Error saying what is wrong with the line.
  static TuningRecord FromJson(const std::string& line);
  // Why the record does not apply to `target` with this Loom ("" when it does): another
  // version or kind, vector instruction sets of float code the target lacks, or a CPU of
  // another family (record.cc: FamilyFeatures).
  std::string Mismatch(const Target& target) const;
};

struct RecordsFile {
  std::vector<TuningRecord> records;
  std::vector<int> lines;  // the line number of each record
  // "tune.jsonl line 7: ..." for the first bad line (reading stopped there); "" when none.
  std::string error;
};

// Reads up to the first bad line. A missing file is a loom::Error.
RecordsFile ReadRecords(const std::string& path);
// The records shipped with this Loom (src/autotune/records/, compiled in).
RecordsFile ShippedRecords();

// Appends records to a file, each flushed as it is written.
class RecordWriter {
 public:
  explicit RecordWriter(const std::string& path);  // a loom::Error if it cannot be opened
  void Write(const TuningRecord& record);

 private:
  std::string path_;
  std::ofstream out_;
};

// A config of one workload with the costs of its records (one per measurement).
struct MeasuredConfig {
  topi::Config config;
  std::vector<double> costs;
  double cost = 0;  // their median (the upper one of an even count)
};
// The configs of one workload's successful records, best first: those measured more than once
// (a tuning run's confirmation, tune.h) before those measured once, each group by median cost.
// A single run may have been a lucky one; the median of several interleaved ones is not.
std::vector<MeasuredConfig> RankMeasuredConfigs(const std::vector<TuningRecord>& records);

// The best record per workload among those that apply to a target: what `loom compile --records`
// uses. Records for another target or Loom version, and failed measurements, are skipped; each
// skipped record that applies to nothing is one warning.
class BestRecords : public graph::ConfigDispatcher {
 public:
  // With `keep_layouts`, a workload takes the best record whose layout knobs (channel blocks)
  // are the default's: without a search over the whole graph's layouts, a kernel faster alone
  // in other blocks costs conversions around it (MobileNetV2 took 26 more kernels).
  BestRecords(const std::vector<TuningRecord>& records, const Target& target,
              const std::vector<int>& lines = {}, bool keep_layouts = true);
  // What a compile tunes with (`loom compile`, loom.compile): the records of the file at
  // `path` ("": none; a missing file is a loom::Error, a bad line stops the reading there and
  // is the first warning) and, with `shipped`, the shipped records for the workloads the
  // file lacks. Null when there is neither.
  static std::shared_ptr<BestRecords> ForCompile(const std::string& path, const Target& target,
                                                 bool shipped);
  std::optional<topi::Config> Query(const Target& target,
                                    const graph::TuningWorkload& workload) override;
  // Adds the records of each workload that has none yet (shipped records under the user's
  // own: times measured on another machine do not compare), without warnings.
  void AddFallback(const std::vector<TuningRecord>& records, const Target& target);
  // Workloads answered from AddFallback's records.
  size_t fallbacks_used() const;

  // "line 3: tuned for another target (lacks +avx512f)", ...
  const std::vector<std::string>& warnings() const { return warnings_; }
  // The workloads a compile asked about, and those among them that had no record.
  const std::set<graph::TuningWorkload>& queried() const { return queried_; }
  std::vector<graph::TuningWorkload> missing() const;

 private:
  bool keep_layouts_;
  // Per workload, the successful records that apply to the target.
  std::map<graph::TuningWorkload, std::vector<TuningRecord>> candidates_;
  std::map<graph::TuningWorkload, topi::Config> chosen_;
  std::vector<std::string> warnings_;
  std::set<graph::TuningWorkload> queried_;
  std::set<graph::TuningWorkload> fallback_;
};

}  // namespace loom::autotune
