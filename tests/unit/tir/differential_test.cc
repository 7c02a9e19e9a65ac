// Differential tests of the passes: random loop nests over buffers are interpreted before
// and after each pass, on the same random inputs; the outputs must be identical. A program
// whose original run fails (a division by zero the generator could not rule out) proves
// nothing and is skipped; a transformed program that fails where the original did not is a
// bug.
#include <gtest/gtest.h>

#include <random>

#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"
#include "loom/tir/interpreter.h"
#include "loom/tir/transform.h"
#include "program_runner.h"
#include "random_expr.h"

namespace loom::tir {
namespace {

using loom::testing::RandomExprGenerator;
using loom::testing::RangedVar;

const DataType kInt32 = DataType::Int(32);
const DataType kFloat32 = DataType::Float(32);
constexpr int kSize = 16;

class ProgramGenerator {
 public:
  explicit ProgramGenerator(uint64_t seed) : rng_(seed) {
    scope_.push_back({n_, 3, 1});
  }

  PrimFunc Generate() {
    Stmt body = Statement(4);
    return PrimFunc({in_->data, out_->data, fout_->data, n_},
                    {{in_->data, in_}, {out_->data, out_}, {fout_->data, fout_}}, body,
                    DataType::Void(), {});
  }

  Var n() const { return n_; }

 private:
  bool Chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  int64_t Uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  PrimExpr Integer(int depth) { return RandomExprGenerator(&rng_, &scope_).Integer(depth); }
  PrimExpr Condition(int depth) { return RandomExprGenerator(&rng_, &scope_).Condition(depth); }
  PrimExpr Index(int depth) { return floormod(Integer(depth), kSize); }

  Stmt Statement(int depth) {
    int choice = static_cast<int>(Uniform(0, depth <= 0 ? 2 : 7));
    switch (choice) {
      case 0:
        return BufferStore(out_, Add(Integer(3), BufferLoad(in_, {Index(2)})), {Index(3)});
      case 1:
        return BufferStore(fout_,
                           Add(Mul(Cast(kFloat32, Integer(2)), FloatImm(kFloat32, 0.1)),
                               Cast(kFloat32, BufferLoad(out_, {Index(2)}))),
                           {Index(2)});
      case 2: {
        PrimExpr index = Index(2);
        if (Chance(0.5)) return BufferStore(out_, BufferLoad(out_, {index}), {index});
        return Evaluate(Integer(1));
      }
      case 3:
      case 4: {
        Var v("v" + std::to_string(scope_.size()));
        bool symbolic = Chance(0.2);
        PrimExpr min = Chance(0.3) ? PrimExpr(n_) : PrimExpr(static_cast<int>(Uniform(-2, 2)));
        PrimExpr extent = symbolic ? PrimExpr(n_) : PrimExpr(static_cast<int>(Uniform(0, 4)));
        ForKind kinds[] = {ForKind::kSerial, ForKind::kParallel, ForKind::kVectorized,
                           ForKind::kUnrolled};
        ForKind kind = symbolic ? ForKind::kSerial : kinds[Uniform(0, 3)];
        scope_.push_back({v, 0, 4});
        Stmt body = Statement(depth - 1);
        scope_.pop_back();
        return For(v, min, extent, kind, body, IterVar(), {});
      }
      case 5: {
        // Conditions that read memory the branch may write test that no pass assumes them.
        PrimExpr condition = Chance(0.3) ? GT(BufferLoad(out_, {Index(1)}), Integer(1))
                                         : Condition(2);
        Stmt then_case = Statement(depth - 1);
        Stmt else_case = Chance(0.5) ? Statement(depth - 1) : Stmt();
        return IfThenElse(condition, then_case, else_case);
      }
      case 6: {
        Var x("x" + std::to_string(scope_.size()));
        PrimExpr value = Chance(0.2) ? BufferLoad(in_, {Index(1)}) : Integer(2);
        scope_.push_back({x, 0, 4});
        Stmt body = Statement(depth - 1);
        scope_.pop_back();
        return LetStmt(x, value, body);
      }
      default: {
        Array<Stmt> seq;
        for (int64_t count = Uniform(2, 3); count > 0; --count) seq.push_back(Statement(depth - 1));
        return SeqStmt(seq);
      }
    }
  }

  std::mt19937_64 rng_;
  Var n_{"n"};
  std::vector<RangedVar> scope_;
  Buffer in_ = DeclBuffer({kSize}, kInt32, "In");
  Buffer out_ = DeclBuffer({kSize}, kInt32, "Out");
  Buffer fout_ = DeclBuffer({kSize}, kFloat32, "FOut");
};

using Outputs = test::ProgramOutputs;

std::optional<Outputs> RunOn(const PrimFunc& func, uint64_t seed, std::string* error) {
  return test::RunProgram(func, kSize, seed, error);
}

void CheckPassPreservesSemantics(const transform::Pass& pass, int programs) {
  int compared = 0;
  for (int seed = 0; seed < programs; ++seed) {
    PrimFunc original = ProgramGenerator(seed).Generate();
    std::string error;
    std::optional<Outputs> expected = RunOn(original, seed, &error);
    if (!expected) continue;
    PrimFunc transformed = pass(original);
    std::optional<Outputs> actual = RunOn(transformed, seed, &error);
    ASSERT_TRUE(actual.has_value())
        << pass.info().name << " made program " << seed << " fail: " << error << "\nbefore:\n"
        << ToScript(original) << "after:\n" << ToScript(transformed);
    ASSERT_TRUE(*actual == *expected)
        << pass.info().name << " changed the outputs of program " << seed << "\nbefore:\n"
        << ToScript(original) << "after:\n" << ToScript(transformed);
    ++compared;
  }
  EXPECT_GT(compared, programs * 3 / 4) << "too few programs ran without error to compare";
}

constexpr int kPrograms = 1000;

TEST(PassDifferentialTest, Simplify) {
  CheckPassPreservesSemantics(transform::Simplify(), kPrograms);
}

TEST(PassDifferentialTest, RemoveNoOp) {
  CheckPassPreservesSemantics(transform::RemoveNoOp(), kPrograms);
}

TEST(PassDifferentialTest, UnrollLoop) {
  transform::PassContext context;
  context.config["tir.UnrollLoop.auto_max_step"] = int64_t{3};
  transform::PassContextScope scope(context);
  CheckPassPreservesSemantics(transform::UnrollLoop(), kPrograms);
}

TEST(PassDifferentialTest, Pipeline) {
  transform::PassContext context;
  context.config["tir.UnrollLoop.auto_max_step"] = int64_t{2};
  transform::PassContextScope scope(context);
  CheckPassPreservesSemantics(
      transform::Sequential({transform::UnrollLoop(), transform::Simplify(),
                             transform::RemoveNoOp()}),
      kPrograms);
}

TEST(PassDifferentialTest, PassesChangeTheGeneratedPrograms) {
  // Guards the tests above against comparing programs the passes leave alone.
  int changed = 0;
  for (int seed = 0; seed < 50; ++seed) {
    PrimFunc original = ProgramGenerator(seed).Generate();
    changed += !transform::Simplify()(original).same_as(original);
  }
  EXPECT_GT(changed, 25);
}

}  // namespace
}  // namespace loom::tir
