// Tuning records: the JSON round trip, reading up to a bad line (reported by number, the records
// before it kept), and the best record per workload for a target, with records of another target or
// Loom version warned about one by one.
#include "loom/autotune/record.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "error_of.h"
#include "loom/support/version.h"

namespace loom::autotune {
namespace {

const graph::TuningWorkload kDense{"x86.dense", {8, 64, 32}};

TuningRecord Record(double cost, int64_t tile_rows, MeasureError error = MeasureError::kNone) {
  MeasureResult result;
  result.error = error;
  if (error == MeasureError::kNone)
    result.costs = {cost, cost * 1.1, cost * 0.9};
  else
    result.message = "it failed";
  result.build_seconds = 0.25;
  return TuningRecord::Make(
      kDense, Target::Parse("llvm"),
      topi::Config(
          {{"tile_rows", tile_rows}, {"tile_columns", 32}, {"block_panels", 0}, {"k_unroll", 8}}),
      result);
}

std::string TempFile(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("loom_record_test_" + name)).string();
}

TEST(TuningRecord, RoundTripsThroughJson) {
  TuningRecord r = Record(1e-4, 4);
  TuningRecord back = TuningRecord::FromJson(r.ToJson());
  EXPECT_EQ(back.workload, r.workload);
  EXPECT_EQ(back.config, r.config);
  EXPECT_EQ(back.result.costs, r.result.costs);
  EXPECT_EQ(back.result.error, MeasureError::kNone);
  EXPECT_EQ(back.features, r.features);
  EXPECT_EQ(back.loom_version, kLoomVersion);
  EXPECT_EQ(back.ToJson(), r.ToJson());
  TuningRecord failed = TuningRecord::FromJson(Record(0, 4, MeasureError::kTimeout).ToJson());
  EXPECT_EQ(failed.result.error, MeasureError::kTimeout);
  EXPECT_EQ(failed.result.message, "it failed");
}

TEST(TuningRecord, NamesWhatIsWrongWithALine) {
  auto error = [](const std::string& line) {
    return testing::ErrorOf([&] { TuningRecord::FromJson(line); });
  };
  EXPECT_NE(error("{\"workload\": ").find("not JSON"), std::string::npos);
  EXPECT_NE(error("[1, 2]").find("not a JSON object"), std::string::npos);
  EXPECT_NE(error("{\"model\": \"resnet\"}").find("no \"workload\" field"), std::string::npos);
  std::string line = Record(1e-4, 4).ToJson();
  line.replace(line.find("\"none\""), 6, "\"melted\"");
  EXPECT_NE(error(line).find("unknown measurement error kind 'melted'"), std::string::npos);
}

TEST(ReadRecords, StopsAtTheFirstBadLineAndKeepsWhatCameBefore) {
  const std::string path = TempFile("truncated.jsonl");
  {
    std::ofstream out(path);
    out << Record(2e-4, 4).ToJson() << "\n\n" << Record(1e-4, 2).ToJson() << "\n";
    std::string cut = Record(3e-4, 1).ToJson();
    out << cut.substr(0, cut.size() / 2) << "\n" << Record(1e-5, 8).ToJson() << "\n";
  }
  RecordsFile file = ReadRecords(path);
  EXPECT_EQ(file.records.size(), 2u);
  EXPECT_EQ(file.lines, (std::vector<int>{1, 3}));
  EXPECT_NE(file.error.find(path + " line 4: not JSON"), std::string::npos) << file.error;
  EXPECT_NE(testing::ErrorOf([] {
              ReadRecords("/nonexistent/tune.jsonl");
            }).find("cannot read tuning records '/nonexistent/tune.jsonl'"),
            std::string::npos);
  std::filesystem::remove(path);
}

TEST(RecordWriter, AppendsALinePerRecord) {
  const std::string path = TempFile("written.jsonl");
  std::filesystem::remove(path);
  {
    RecordWriter writer(path);
    writer.Write(Record(2e-4, 4));
  }
  RecordWriter(path).Write(Record(1e-4, 2));
  RecordsFile file = ReadRecords(path);
  EXPECT_EQ(file.records.size(), 2u);
  EXPECT_EQ(file.error, "");
  std::filesystem::remove(path);
}

// A record measured on an AVX-512 CPU with the FP16, BF16, VNNI and AMX extensions applies to
// any AVX-512 CPU (those extensions do not change a float kernel's code), not to an AVX2 one.
// The CPUs are named by tags: their features come from the CPU, not from -mattr.
TEST(TuningRecord, AppliesWhereTheVectorInstructionSetsOfFloatCodeAre) {
  TuningRecord record = Record(1e-4, 2);
  record.features = {"+avx",       "+avx2",      "+avx512bf16", "+avx512bw", "+avx512dq",
                     "+avx512f",   "+avx512fp16", "+avx512vl",  "+avx512vnni", "+amx-tile",
                     "+fma"};
  EXPECT_EQ(record.Mismatch(Target::Parse("x86-64-avx512")), "");
  EXPECT_EQ(record.Mismatch(Target::Parse("x86-64-avx2")),
            "tuned for a CPU with features this target lacks (+avx512bw +avx512dq +avx512f "
            "+avx512vl)");
  // What a record made for a tag keeps: the vector instruction sets of its CPU.
  TuningRecord tagged = TuningRecord::Make(kDense, Target::Parse("x86-64-avx2"), record.config,
                                           record.result);
  EXPECT_NE(std::find(tagged.features.begin(), tagged.features.end(), "+avx2"),
            tagged.features.end());
  EXPECT_EQ(std::find(tagged.features.begin(), tagged.features.end(), "+avx512f"),
            tagged.features.end());
  EXPECT_EQ(tagged.Mismatch(Target::Parse("x86-64-avx512")), "");
}

// A record measured on an Intel CPU does not apply to an AMD one with the same vector
// instruction sets (the family marker +sse4a differs), nor the other way round; it does to
// another Intel CPU. Records made for named CPUs keep their family.
TEST(TuningRecord, AppliesOnlyToCpusOfTheSameFamily) {
  TuningRecord record = Record(1e-4, 2);
  TuningRecord xeon = TuningRecord::Make(kDense, Target::Parse("llvm -mcpu=sapphirerapids"),
                                         record.config, record.result);
  TuningRecord zen = TuningRecord::Make(kDense, Target::Parse("llvm -mcpu=znver4"),
                                        record.config, record.result);
  EXPECT_NE(std::find(zen.features.begin(), zen.features.end(), "+sse4a"), zen.features.end());
  EXPECT_EQ(std::find(xeon.features.begin(), xeon.features.end(), "+sse4a"), xeon.features.end());
  EXPECT_EQ(xeon.Mismatch(Target::Parse("llvm -mcpu=icelake-server")), "");
  EXPECT_EQ(xeon.Mismatch(Target::Parse("llvm -mcpu=znver4")),
            "tuned on a CPU of another family (without +sse4a, this target's CPU with it): its "
            "measurements do not carry over");
  EXPECT_EQ(zen.Mismatch(Target::Parse("llvm -mcpu=znver5")), "");
  EXPECT_NE(zen.Mismatch(Target::Parse("llvm -mcpu=sapphirerapids")).find("another family"),
            std::string::npos);
}

TEST(BestRecords, PicksTheFastestThatAppliesAndWarnsAboutTheRest) {
  const Target target = Target::Parse("llvm");
  TuningRecord other_version = Record(1e-6, 1);
  other_version.loom_version = "0.0.1";
  TuningRecord other_cpu = Record(1e-6, 1);
  other_cpu.features.push_back("+sve2");  // no x86 CPU has it
  TuningRecord other_extras = Record(3e-4, 1);  // a feature outside the vector ISA: no matter
  other_extras.features.push_back("+amx-unheard-of");
  TuningRecord other_kind = Record(1e-6, 1);
  other_kind.target_kind = "c";
  BestRecords best({Record(2e-4, 4), Record(1e-4, 2), Record(0, 8, MeasureError::kWrongResult),
                    other_version, other_cpu, other_kind, other_extras},
                   target, {1, 2, 3, 4, 5, 6, 7});
  std::optional<topi::Config> config = best.Query(target, kDense);
  ASSERT_TRUE(config.has_value());
  EXPECT_EQ((*config)["tile_rows"], 2);
  ASSERT_EQ(best.warnings().size(), 3u);
  EXPECT_NE(best.warnings()[0].find("line 4: written by Loom 0.0.1"), std::string::npos);
  EXPECT_NE(best.warnings()[1].find("line 5: tuned for a CPU with features this target lacks "
                                    "(+sve2)"),
            std::string::npos);
  EXPECT_NE(best.warnings()[2].find("line 6: tuned for target kind c"), std::string::npos);
  graph::TuningWorkload untuned{"x86.dense", {1, 16, 16}};
  EXPECT_FALSE(best.Query(target, untuned).has_value());
  EXPECT_EQ(best.missing(), (std::vector<graph::TuningWorkload>{untuned}));

  // Fallback records fill only the workloads without one, quietly.
  TuningRecord shipped_dense = Record(1e-9, 8);
  TuningRecord shipped_other = Record(1e-3, 1);
  shipped_other.workload = untuned;
  shipped_other.config =
      topi::Config({{"tile_rows", 1}, {"tile_columns", 16}, {"block_panels", 0}, {"k_unroll", 8}});
  best.AddFallback({shipped_dense, shipped_other, other_cpu}, target);
  EXPECT_EQ((*best.Query(target, kDense))["tile_rows"], 2);
  EXPECT_EQ((*best.Query(target, untuned))["tile_rows"], 1);
  EXPECT_EQ(best.fallbacks_used(), 1u);
  EXPECT_EQ(best.warnings().size(), 3u);
}

// A point measured again (a tuning run's confirmation) is ranked by the median of its runs, and
// ahead of points measured once: a single lucky run does not win.
TEST(BestRecords, PointsMeasuredAgainRankByTheirMedianAheadOfSingleRuns) {
  const Target target = Target::Parse("llvm");
  std::vector<TuningRecord> records = {Record(1e-4, 2),   Record(3e-4, 4), Record(9e-4, 8),
                                       Record(1.5e-4, 4), Record(2e-4, 8), Record(1.6e-4, 4)};
  std::vector<MeasuredConfig> ranked = RankMeasuredConfigs(records);
  ASSERT_EQ(ranked.size(), 3u);
  EXPECT_EQ(ranked[0].config["tile_rows"], 4);
  EXPECT_DOUBLE_EQ(ranked[0].cost, 1.6e-4);
  EXPECT_EQ(ranked[0].costs.size(), 3u);
  EXPECT_EQ(ranked[1].config["tile_rows"], 8);
  EXPECT_DOUBLE_EQ(ranked[1].cost, 9e-4);  // the upper median of two
  EXPECT_EQ(ranked[2].config["tile_rows"], 2);
  BestRecords best(records, target);
  EXPECT_EQ((*best.Query(target, kDense))["tile_rows"], 4);
  // Every point measured once: the fastest run, as before.
  BestRecords single({Record(2e-4, 4), Record(1e-4, 2)}, target);
  EXPECT_EQ((*single.Query(target, kDense))["tile_rows"], 2);
}

TEST(BestRecords, FallsBackToTheDefaultForAConfigTheTemplateNoLongerTakes) {
  const Target target = Target::Parse("llvm");
  TuningRecord stale = Record(1e-4, 4);
  stale.config = topi::Config({{"tile_rows", 4}, {"tile_columns", 32}});
  BestRecords best({stale}, target);
  EXPECT_FALSE(best.Query(target, kDense).has_value());
  ASSERT_EQ(best.warnings().size(), 1u);
  EXPECT_NE(best.warnings()[0].find("no record fits the template"), std::string::npos);
}

// A conv record in other channel blocks is skipped for the best one in the default's blocks
// (kept layouts), and taken when layouts may change.
TEST(BestRecords, KeepTheDefaultsLayoutsUnlessAskedNotTo) {
  const Target target = Target::Parse("llvm");
  const graph::TuningWorkload conv{"x86.conv2d",
                                   {1, 32, 8, 8, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}};
  const graph::TuningTemplate& t = graph::FindTuningTemplate(conv.template_name);
  const topi::Config fallback = t.default_config(conv.args);
  std::map<std::string, int64_t> reblocked = fallback.values(), retiled = fallback.values();
  reblocked["ic_bn"] = 8;
  retiled["unroll_kw"] = 1 - retiled["unroll_kw"];
  auto record = [&](const std::map<std::string, int64_t>& values, double cost) {
    MeasureResult result;
    result.costs = {cost};
    return TuningRecord::Make(conv, target, topi::Config(values), result);
  };
  std::vector<TuningRecord> records = {record(reblocked, 1e-5), record(retiled, 2e-5)};
  EXPECT_EQ(BestRecords(records, target).Query(target, conv), topi::Config(retiled));
  EXPECT_EQ(BestRecords(records, target, {}, /*keep_layouts=*/false).Query(target, conv),
            topi::Config(reblocked));
}

}  // namespace
}  // namespace loom::autotune

namespace loom::autotune {
namespace {

// The shipped records are this version's, and each is a valid point of its template's space in
// the default's layouts: a template change that moves the knobs or the default blocks must come
// with records tuned again.
TEST(ShippedRecords, AreThisVersionsAndFitTheirTemplates) {
  RecordsFile shipped = ShippedRecords();
  EXPECT_EQ(shipped.error, "");
  for (const TuningRecord& r : shipped.records) {
    SCOPED_TRACE(r.workload.str() + " {" + r.config.str() + "}");
    EXPECT_EQ(r.loom_version, kLoomVersion);
    const graph::TuningTemplate& t = graph::FindTuningTemplate(r.workload.template_name);
    topi::ConfigSpace space = t.space(r.workload.args);
    EXPECT_TRUE(space.IsValid(space.At(space.IndexOf(r.config))));
    // What loom compile takes (and scripts/distill_records.py keeps): the default's layouts.
    EXPECT_TRUE(space.SameLayouts(r.config, t.default_config(r.workload.args)));
  }
}

}  // namespace
}  // namespace loom::autotune
