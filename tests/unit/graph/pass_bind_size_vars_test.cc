// BindSizeVars: the named size variables of main's inputs become constants, every call after
// them retyped (a reshape's -1 resolved at the bound size); others stay symbolic.
#include "pass_test_util.h"

namespace loom::graph::test {
namespace {

const DataType kF32 = DataType::Float(32);
const DataType kI64 = DataType::Int(64);

TEST(BindSizeVars, BoundSizesRetypeEveryCallAfterThem) {
  loom::Var b = SizeVar("b", kI64), n = SizeVar("n", kI64);
  Var x = MakeVar("x", TensorType(std::vector<PrimExpr>{b, n, IntImm(kI64, 6)}, kF32));
  Expr flat = MakeCall("reshape", {x}, {{"newshape", Ints{-1, 6}}}, "flat");
  Function before = MakeFunction({x}, MakeCall("exp", {flat}));
  EXPECT_EQ(before->body.type().str(), "Tensor[(b * n, 6), float32]");
  IRModule bound = RunPasses(IRModule::FromFunction(before), {BindSizeVars({{"n", 4}})});
  const Function& after = bound.main();
  EXPECT_EQ(after->params[0].type().str(), "Tensor[(b, 4, 6), float32]");
  EXPECT_EQ(after->body.type().str(), "Tensor[(b * T.int64(4), 6), float32]");
  EXPECT_EQ(after->params[0]->name_hint, "x");
  IRModule both = RunPasses(IRModule::FromFunction(before), {BindSizeVars({{"b", 2}, {"n", 4}})});
  EXPECT_EQ(both.main()->body.type().str(), "Tensor[(8, 6), float32]");
}

TEST(BindSizeVars, UnknownNamesAndSizesBelowOneAreErrors) {
  loom::Var n = SizeVar("n", kI64);
  Var x = MakeVar("x", TensorType(std::vector<PrimExpr>{n}, kF32));
  IRModule module = IRModule::FromFunction(MakeFunction({x}, MakeCall("exp", {x})));
  EXPECT_EQ(ErrorOf([&] {
              RunPasses(module, {BindSizeVars({{"seq", 4}})});
            }),
            "BindSizeVars: 'seq' is no symbolic dimension of the model's inputs");
  EXPECT_EQ(ErrorOf([&] {
              RunPasses(module, {BindSizeVars({{"n", 0}})});
            }),
            "BindSizeVars: size variable 'n' must be at least 1, got 0");
}

}  // namespace
}  // namespace loom::graph::test
