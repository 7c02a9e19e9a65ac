#include "loom/ir/module.h"

#include <gtest/gtest.h>

#include "loom/ir/expr_ops.h"
#include "loom/support/error.h"

namespace loom {
namespace {

// for i in range(n): A[i] = A[i] + value
PrimFunc AddConstant(float value, int n = 16) {
  Buffer a = DeclBuffer({n}, DataType::Float(32), "A");
  Var i("i");
  Stmt body = For(i, 0, n, ForKind::kSerial,
                  BufferStore(a, BufferLoad(a, {i}) + PrimExpr(value), {i}), IterVar(), {});
  return PrimFunc({a->data}, {{a->data, a}}, body, DataType::Void(), {});
}

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(IRModule, AddLookupRemove) {
  IRModule mod;
  PrimFunc f = AddConstant(1.0f);
  mod.Add("add_one", f);
  mod.Add("add_two", AddConstant(2.0f));
  EXPECT_EQ(mod.size(), 2u);
  EXPECT_TRUE(mod.Lookup("add_one").same_as(f));
  EXPECT_TRUE(mod.Contains("add_two"));
  mod.Remove("add_two");
  EXPECT_FALSE(mod.Contains("add_two"));
}

TEST(IRModule, CopiesAreIndependent) {
  IRModule a;
  a.Add("f", AddConstant(1.0f));
  IRModule b = a;
  b.Add("f", AddConstant(3.0f), /*replace=*/true);
  EXPECT_FALSE(StructuralEqual(a, b));
  EXPECT_TRUE(StructuralEqual(a.Lookup("f"), AddConstant(1.0f)));
}

TEST(IRModule, UserErrorsNameTheFunction) {
  IRModule mod;
  mod.Add("f", AddConstant(1.0f));
  std::string dup = ErrorOf([&] { mod.Add("f", AddConstant(2.0f)); });
  EXPECT_NE(dup.find("IRModule::Add(\"f\")"), std::string::npos) << dup;
  EXPECT_NE(dup.find("replace"), std::string::npos) << dup;
  std::string missing = ErrorOf([&] { mod.Lookup("g"); });
  EXPECT_NE(missing.find("IRModule::Lookup(\"g\")"), std::string::npos) << missing;
  EXPECT_NE(missing.find("the module has: f"), std::string::npos) << missing;
  EXPECT_NE(ErrorOf([&] { mod.Add("", AddConstant(1.0f)); }).find("empty"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { mod.Add("h", PrimFunc()); }).find("undefined"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { mod.Remove("g"); }).find("no function"), std::string::npos);
}

TEST(IRModule, StructuralEqualityAndHash) {
  IRModule a, b;
  a.Add("f", AddConstant(1.0f));
  b.Add("f", AddConstant(1.0f));  // fresh variables, same structure
  EXPECT_TRUE(StructuralEqual(a, b));
  EXPECT_EQ(StructuralHash(a), StructuralHash(b));
  IRModule renamed;
  renamed.Add("g", AddConstant(1.0f));
  EXPECT_FALSE(StructuralEqual(a, renamed));
  IRModule different;
  different.Add("f", AddConstant(1.0f, 8));
  EXPECT_FALSE(StructuralEqual(a, different));
}

TEST(IRModule, PrintsEachFunctionUnderItsName) {
  IRModule mod;
  mod.Add("beta", AddConstant(1.0f));
  mod.Add("alpha", AddConstant(2.0f));
  std::string text = ToScript(mod);
  EXPECT_EQ(text.rfind("@I.ir_module\nclass Module:\n", 0), 0u) << text;
  size_t alpha = text.find("def alpha("), beta = text.find("def beta(");
  ASSERT_NE(alpha, std::string::npos) << text;
  ASSERT_NE(beta, std::string::npos) << text;
  EXPECT_LT(alpha, beta) << "functions print in name order\n" << text;
  EXPECT_NE(text.find("    @T.prim_func"), std::string::npos) << text;
  EXPECT_EQ(ToScript(IRModule()), "@I.ir_module\nclass Module:\n    pass\n");
}

}  // namespace
}  // namespace loom
