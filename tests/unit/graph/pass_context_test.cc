// One PassContext for a whole compile: its instruments see graph and TIR passes, its
// disabled passes and the compile's opt_level gate passes at both layers. (That the levels
// compute the same is compile_test.cc's.)
#include <gtest/gtest.h>

#include <algorithm>

#include "compile_test_models.h"
#include "loom/ir/pass_context.h"

namespace loom::graph {
namespace {

using namespace test::models;  // NOLINT: the models of compile_test_models.h

class PassRecorder : public transform::PassInstrument {
 public:
  void RunAfterPass(const transform::PassInfo& info, bool) override { ran.push_back(info.name); }
  bool Ran(const std::string& name) const {
    return std::find(ran.begin(), ran.end(), name) != ran.end();
  }
  std::vector<std::string> ran;
};

std::shared_ptr<PassRecorder> CompileRecorded(int opt_level,
                                              std::vector<std::string> disabled = {}) {
  auto recorder = std::make_shared<PassRecorder>();
  transform::PassContext context;
  context.instruments.push_back(recorder);
  context.disabled_passes = std::move(disabled);
  transform::PassContextScope scope(context);
  // Compile only: the reference values would compile each operator alone in this context.
  Compile(IRModule::FromFunction(SmallCnn()), {.opt_level = opt_level});
  return recorder;
}

TEST(PassContext, InstrumentsSeeGraphAndTirPassesOfACompile) {
  std::shared_ptr<PassRecorder> o3 = CompileRecorded(3);
  for (const char* pass : {"SimplifyInference", "AlterOpLayout", "FuseOps",  // graph
                           "StorageFlatten", "VectorizeLoop", "LoopPartition", "MakePackedAPI"}) {
    EXPECT_TRUE(o3->Ran(pass)) << pass << " did not run at -O3";
  }
}

TEST(PassContext, OptLevelGatesPassesAtEveryLayer) {
  std::shared_ptr<PassRecorder> o0 = CompileRecorded(0);
  EXPECT_TRUE(o0->Ran("FuseOps"));
  EXPECT_TRUE(o0->Ran("StorageFlatten"));
  for (const char* pass : {"SimplifyInference", "FoldConstant", "AlterOpLayout",  // graph
                           "LoopPartition", "StorageRewrite", "UnrollLoop", "RemoveNoOp"}) {
    EXPECT_FALSE(o0->Ran(pass)) << pass << " ran at -O0";
  }
  std::shared_ptr<PassRecorder> o1 = CompileRecorded(1);
  EXPECT_TRUE(o1->Ran("LoopPartition"));
  EXPECT_FALSE(o1->Ran("SimplifyInference"));
}

TEST(PassContext, DisabledPassesAreSkippedAtEveryLayer) {
  std::shared_ptr<PassRecorder> recorder = CompileRecorded(3, {"AlterOpLayout", "UnrollLoop"});
  EXPECT_FALSE(recorder->Ran("AlterOpLayout"));
  EXPECT_FALSE(recorder->Ran("UnrollLoop"));
  EXPECT_TRUE(recorder->Ran("FuseOps"));
}

}  // namespace
}  // namespace loom::graph
