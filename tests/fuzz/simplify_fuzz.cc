// Differential fuzzer for the arithmetic layer. For random integer expressions over
// variables with random ranges it checks, at random points in range (and at the corners):
//   * Analyzer::Simplify(e) evaluates to the same value as e wherever e is defined;
//   * the ConstIntBound of e and the IntSet of e over the ranges contain the value.
// Any mismatch prints the seed and the index that reproduce it, and the run fails.
//
//   simplify_fuzz [--count N] [--seed S] [--index I] [--verbose]
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "loom/arith/analyzer.h"
#include "loom/ir/expr_ops.h"
#include "loom/ir/int_eval.h"
#include "loom/ir/printer.h"
#include "random_expr.h"

namespace loom {
namespace {

constexpr int kMaxDepth = 6;
constexpr int kNumVars = 3;
constexpr int kRandomSamples = 6;

using testing::RangedVar;

struct Options {
  int64_t count = 100000;
  uint64_t seed = 20261122;
  int64_t only_index = -1;
  bool verbose = false;
};

struct Stats {
  int64_t expressions = 0;
  int64_t samples = 0;
  int64_t skipped = 0;  // points where the original is undefined (division by zero, wrap)
  int64_t failures = 0;
};

std::string Bindings(const std::vector<RangedVar>& vars, const VarValueMap& values) {
  std::string s;
  for (const RangedVar& v : vars) {
    s += v.var->name_hint + "=" + std::to_string(values.at(v.var)) + " in [" +
         std::to_string(v.lo) + ", " + std::to_string(v.lo + v.extent - 1) + "]  ";
  }
  return s;
}

void Report(const Options& opt, int64_t index, const std::string& what, const PrimExpr& e,
            const std::string& detail) {
  std::cerr << "MISMATCH (" << what << ") — reproduce with: simplify_fuzz --seed " << opt.seed
            << " --index " << index << "\n  expr:  " << e << "\n  " << detail << "\n";
}

// Runs one expression; returns false on a mismatch.
bool RunOne(const Options& opt, int64_t index, Stats* stats) {
  std::mt19937_64 rng(opt.seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(index));
  std::vector<RangedVar> vars = testing::RandomRangedVars(&rng, kNumVars);
  testing::RandomExprGenerator gen(&rng, &vars);
  int depth = static_cast<int>(std::uniform_int_distribution<int>(1, kMaxDepth)(rng));
  PrimExpr e = std::uniform_int_distribution<int>(0, 9)(rng) == 0 ? gen.Condition(depth)
                                                                   : gen.Integer(depth);

  arith::Analyzer analyzer;
  arith::VarIntSetMap dom;
  for (const RangedVar& v : vars) {
    Range range(IntImm(DataType::Int(32), v.lo), IntImm(DataType::Int(32), v.extent));
    analyzer.Bind(v.var, range);
    dom.emplace(v.var, arith::IntSet::FromRange(range));
  }
  PrimExpr simplified = analyzer.Simplify(e);
  arith::ConstIntBound bound = analyzer.const_int_bound(e);
  arith::IntSet set = analyzer.int_set(e, dom);
  if (opt.verbose) std::cout << index << ": " << e << "\n   => " << simplified << "\n";
  ++stats->expressions;

  for (const VarValueMap& point : testing::SamplePoints(&rng, vars, kRandomSamples)) {
    std::optional<int64_t> expected = EvalInt(e, point);
    if (!expected) {
      ++stats->skipped;
      continue;
    }
    ++stats->samples;
    std::optional<int64_t> actual = EvalInt(simplified, point);
    if (actual != expected) {
      Report(opt, index, "simplify", e,
             "simplified: " + ToScript(simplified) + "\n  at " + Bindings(vars, point) +
                 "\n  original = " + std::to_string(*expected) + ", simplified = " +
                 (actual ? std::to_string(*actual) : std::string("undefined")));
      return false;
    }
    if (*expected < bound.min_value || *expected > bound.max_value) {
      Report(opt, index, "const_int_bound", e,
             "bound [" + std::to_string(bound.min_value) + ", " +
                 std::to_string(bound.max_value) + "] misses " + std::to_string(*expected) +
                 " at " + Bindings(vars, point));
      return false;
    }
    auto outside = [&](const PrimExpr& end, bool is_min) {
      if (!end.defined()) return false;
      std::optional<int64_t> v = EvalInt(end, point);
      return v && (is_min ? *expected < *v : *expected > *v);
    };
    if (set.is_nothing() || outside(set.min(), true) || outside(set.max(), false)) {
      Report(opt, index, "int_set", e,
             "set " + set.str() + " misses " + std::to_string(*expected) + " at " +
                 Bindings(vars, point));
      return false;
    }
  }
  return true;
}

Options ParseOptions(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "simplify_fuzz: " << arg << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--count") opt.count = std::stoll(next());
    else if (arg == "--seed") opt.seed = std::stoull(next());
    else if (arg == "--index") opt.only_index = std::stoll(next());
    else if (arg == "--verbose") opt.verbose = true;
    else {
      std::cerr << "usage: simplify_fuzz [--count N] [--seed S] [--index I] [--verbose]\n";
      std::exit(2);
    }
  }
  return opt;
}

}  // namespace
}  // namespace loom

int main(int argc, char** argv) {
  using namespace loom;
  Options opt = ParseOptions(argc, argv);
  Stats stats;
  constexpr int64_t kMaxReported = 10;
  int64_t first = opt.only_index >= 0 ? opt.only_index : 0;
  int64_t last = opt.only_index >= 0 ? opt.only_index + 1 : opt.count;
  for (int64_t index = first; index < last && stats.failures < kMaxReported; ++index) {
    try {
      if (!RunOne(opt, index, &stats)) ++stats.failures;
    } catch (const std::exception& err) {
      std::cerr << "EXCEPTION — reproduce with: simplify_fuzz --seed " << opt.seed << " --index "
                << index << "\n  " << err.what() << "\n";
      ++stats.failures;
    }
  }
  std::cout << "simplify_fuzz: seed " << opt.seed << ", " << stats.expressions
            << " expressions, " << stats.samples << " points compared, " << stats.skipped
            << " undefined points skipped, " << stats.failures << " mismatches\n";
  return stats.failures == 0 ? 0 : 1;
}
