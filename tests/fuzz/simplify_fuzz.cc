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

namespace loom {
namespace {

constexpr int kMaxDepth = 6;
constexpr int kNumVars = 3;
constexpr int kRandomSamples = 6;

struct FuzzVar {
  Var var;
  int64_t lo;
  int64_t extent;
};

class ExpressionGenerator {
 public:
  ExpressionGenerator(std::mt19937_64* rng, const std::vector<FuzzVar>* vars)
      : rng_(*rng), vars_(*vars) {}

  PrimExpr Integer(int depth) {
    if (depth == 0 || Chance(0.2)) return Leaf();
    switch (Uniform(0, 10)) {
      case 0: return Add(Integer(depth - 1), Integer(depth - 1));
      case 1: return Sub(Integer(depth - 1), Integer(depth - 1));
      case 2: return Mul(Integer(depth - 1), Chance(0.6) ? Constant() : Integer(depth - 1));
      case 3: return Div(Integer(depth - 1), Divisor(depth));
      case 4: return Mod(Integer(depth - 1), Divisor(depth));
      case 5: return FloorDiv(Integer(depth - 1), Divisor(depth));
      case 6: return FloorMod(Integer(depth - 1), Divisor(depth));
      case 7: return Min(Integer(depth - 1), Integer(depth - 1));
      case 8: return Max(Integer(depth - 1), Integer(depth - 1));
      case 9: return Select(Condition(depth - 1), Integer(depth - 1), Integer(depth - 1));
      default: return Add(Integer(depth - 1), Constant());
    }
  }

  PrimExpr Condition(int depth) {
    PrimExpr a = Integer(std::max(depth - 1, 0)), b = Integer(std::max(depth - 1, 0));
    PrimExpr cmp;
    switch (Uniform(0, 5)) {
      case 0: cmp = EQ(a, b); break;
      case 1: cmp = NE(a, b); break;
      case 2: cmp = LT(a, b); break;
      case 3: cmp = LE(a, b); break;
      case 4: cmp = GT(a, b); break;
      default: cmp = GE(a, b); break;
    }
    if (depth > 1 && Chance(0.2)) return And(cmp, Condition(depth - 1));
    if (depth > 1 && Chance(0.2)) return Or(cmp, Condition(depth - 1));
    if (Chance(0.1)) return Not(cmp);
    return cmp;
  }

 private:
  bool Chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  int64_t Uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  PrimExpr Constant() { return IntImm(DataType::Int(32), Uniform(-16, 16)); }
  PrimExpr Leaf() {
    if (Chance(0.7)) return vars_[Uniform(0, kNumVars - 1)].var;
    return Constant();
  }
  // Mostly non-zero constants (both signs); sometimes a variable or an expression, which
  // may be zero at some points (those points are then skipped as undefined).
  PrimExpr Divisor(int depth) {
    if (Chance(0.7)) {
      int64_t c = Uniform(1, 9);
      return IntImm(DataType::Int(32), Chance(0.3) ? -c : c);
    }
    return Chance(0.5) ? Leaf() : Integer(std::max(depth - 2, 0));
  }

  std::mt19937_64& rng_;
  const std::vector<FuzzVar>& vars_;
};

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

std::string Bindings(const std::vector<FuzzVar>& vars, const VarValueMap& values) {
  std::string s;
  for (const FuzzVar& v : vars) {
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
  std::vector<FuzzVar> vars;
  for (const char* name : {"x", "y", "z"}) {
    int64_t lo = std::uniform_int_distribution<int64_t>(-20, 20)(rng);
    int64_t extent = std::uniform_int_distribution<int64_t>(1, 40)(rng);
    vars.push_back({Var(name), lo, extent});
  }
  ExpressionGenerator gen(&rng, &vars);
  int depth = static_cast<int>(std::uniform_int_distribution<int>(1, kMaxDepth)(rng));
  PrimExpr e = std::uniform_int_distribution<int>(0, 9)(rng) == 0 ? gen.Condition(depth)
                                                                   : gen.Integer(depth);

  arith::Analyzer analyzer;
  arith::VarIntSetMap dom;
  for (const FuzzVar& v : vars) {
    Range range(IntImm(DataType::Int(32), v.lo), IntImm(DataType::Int(32), v.extent));
    analyzer.Bind(v.var, range);
    dom.emplace(v.var, arith::IntSet::FromRange(range));
  }
  PrimExpr simplified = analyzer.Simplify(e);
  arith::ConstIntBound bound = analyzer.const_int_bound(e);
  arith::IntSet set = analyzer.int_set(e, dom);
  if (opt.verbose) std::cout << index << ": " << e << "\n   => " << simplified << "\n";
  ++stats->expressions;

  // Corner points first (every var at its low or high end), then random points.
  std::vector<VarValueMap> points;
  for (int corner = 0; corner < (1 << kNumVars); ++corner) {
    VarValueMap p;
    for (int i = 0; i < kNumVars; ++i) {
      p[vars[i].var] = vars[i].lo + (((corner >> i) & 1) ? vars[i].extent - 1 : 0);
    }
    points.push_back(p);
  }
  for (int s = 0; s < kRandomSamples; ++s) {
    VarValueMap p;
    for (const FuzzVar& v : vars) {
      p[v.var] = v.lo + std::uniform_int_distribution<int64_t>(0, v.extent - 1)(rng);
    }
    points.push_back(p);
  }

  for (const VarValueMap& point : points) {
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
