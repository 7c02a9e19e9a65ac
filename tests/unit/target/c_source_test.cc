// The c target's source as the AOT executor takes it (codegen::FindCSource): the text, and
// the scratch a kernel asks the workspace service for at most -- what sizes the micro
// runtime's scratch area.
#include <gtest/gtest.h>

#include "loom/target/build.h"
#include "loom/target/codegen.h"
#include "loom/te/lower.h"
#include "loom/te/operation.h"
#include "loom/te/schedule.h"

namespace loom {
namespace {

// B = A + 1 kept as a stage of its own (not inlined): an intermediate buffer of
// rows x 128 floats.
PrimFunc TwoStages(PrimExpr rows) {
  te::Tensor a = te::placeholder({rows, 128}, DataType::Float(32), "A");
  te::Tensor b = te::compute({rows, 128}, [&](Var i, Var j) { return a(i, j) + 1.0f; }, "B");
  te::Tensor c = te::compute({rows, 128}, [&](Var i, Var j) { return b(i, j) * 2.0f; }, "C");
  te::Schedule s = te::create_schedule({c.op()});
  return te::lower(s, {a, c}, "two_stages");
}

TEST(CSource, ScratchCountsEachWorkspaceBlockWithItsHeader) {
  runtime::Module large = build(TwoStages(64), Target::Parse("c"));  // 32 KiB: workspace
  const codegen::CSource* source = codegen::FindCSource(large);
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(source->scratch_bytes, 64 + 64 * 128 * 4);
  EXPECT_TRUE(source->unbounded_function.empty());
  EXPECT_NE(source->text.find("LOOM_EXPORT int32_t two_stages("), std::string::npos);

  runtime::Module small = build(TwoStages(4), Target::Parse("c"));  // 2 KiB: on the stack
  EXPECT_EQ(codegen::FindCSource(small)->scratch_bytes, 0);
}

TEST(CSource, SymbolicAllocationHasNoBound) {
  runtime::Module module = build(TwoStages(Var("n", DataType::Int(32))), Target::Parse("c"));
  EXPECT_EQ(codegen::FindCSource(module)->unbounded_function, "two_stages");
}

TEST(CSource, OtherModulesHaveNone) {
  EXPECT_EQ(codegen::FindCSource(build(TwoStages(4), Target::Parse("llvm"))), nullptr);
}

}  // namespace
}  // namespace loom
