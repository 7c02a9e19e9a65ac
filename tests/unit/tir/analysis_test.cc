// Substitute and the small analyses passes share.
#include "loom/tir/analysis.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "loom/ir/expr_ops.h"
#include "loom/ir/printer.h"
#include "loom/tir/stmt_functor.h"

namespace loom::tir {
namespace {

const DataType kInt32 = DataType::Int(32);

TEST(SubstituteTest, ReplacesUsesAndKeepsUnchangedTreesIdentical) {
  Var i("i"), j("j"), n("n");
  Buffer a = DeclBuffer({16}, kInt32, "A");
  Stmt loop = For(j, i, 4, ForKind::kSerial, BufferStore(a, Add(i, j), {Add(j, i)}), IterVar(), {});
  Stmt replaced = Substitute(loop, VarMap{{i, Mul(n, 2)}});
  EXPECT_EQ(ToScript(replaced),
            "for j in T.serial(n * 2, n * 2 + 4):\n"
            "    A[j + n * 2] = n * 2 + j\n");
  EXPECT_TRUE(Substitute(loop, VarMap{{n, 1}}).same_as(loop)) << "nothing to replace";
  EXPECT_TRUE(Substitute(loop, VarMap{}).same_as(loop));
  // The loop's own variable is a definition, not a use: only its uses change.
  Stmt renamed = Substitute(loop, [&](const Var& v) -> std::optional<PrimExpr> {
    if (v.same_as(j)) return PrimExpr(0);
    return std::nullopt;
  });
  EXPECT_TRUE(renamed.as<ForNode>()->loop_var.same_as(j));
  EXPECT_EQ(ToScript(renamed.as<ForNode>()->body), "A[0 + i] = i + 0\n");
  EXPECT_EQ(ToScript(Substitute(Add(i, j), VarMap{{j, i}})), "i + i");
}

TEST(AnalysisTest, UsesVarSeesBufferShapesAndData) {
  Var n("n"), i("i"), m("m");
  Buffer a = DeclBuffer({n}, kInt32, "A");
  EXPECT_TRUE(UsesVar(BufferLoad(a, {0}), n)) << "the access reads the shape";
  EXPECT_TRUE(UsesVar(BufferStore(a, 1, {0}), a->data));
  EXPECT_TRUE(UsesVar(Add(i, 1), i));
  EXPECT_FALSE(UsesVar(Add(i, 1), m));
  EXPECT_FALSE(UsesVar(Evaluate(0), i));
}

TEST(AnalysisTest, SideEffectsAndMemoryIndependence) {
  Var i("i");
  Buffer a = DeclBuffer({4}, kInt32, "A");
  PrimExpr pure = Add(i, call_intrin(kInt32, "bitwise_and", {i, 3}));
  PrimExpr load = Add(i, BufferLoad(a, {0}));
  PrimExpr external = call_extern(kInt32, "f", {i});
  EXPECT_FALSE(HasSideEffect(pure));
  EXPECT_FALSE(HasSideEffect(load));
  EXPECT_TRUE(HasSideEffect(Add(external, 1)));
  EXPECT_TRUE(IsMemoryIndependent(pure));
  EXPECT_FALSE(IsMemoryIndependent(load));
  EXPECT_FALSE(IsMemoryIndependent(external));
  EXPECT_TRUE(IsNoOp(Evaluate(load)));
  EXPECT_FALSE(IsNoOp(Evaluate(external)));
  EXPECT_FALSE(IsNoOp(BufferStore(a, 1, {0})));
}

TEST(AnalysisTest, ParameterBuffersAndTheirConstantShapes) {
  Var n("n"), scalar("scale", kInt32);
  Buffer fixed = DeclBuffer({3, 5}, kInt32, "A");
  Buffer sized = DeclBuffer({n}, kInt32, "B");
  PrimFunc func({fixed->data, scalar, sized->data}, {{fixed->data, fixed}, {sized->data, sized}},
                Evaluate(0), DataType::Void(), {{"global_symbol", StringImm("f")}});
  EXPECT_TRUE(ParamBuffer(func, 2).same_as(sized)) << "found by parameter, not map order";
  EXPECT_EQ(ConstParamShape(func, 0), (std::vector<int64_t>{3, 5}));
  auto message = [](const std::function<void()>& call) {
    try {
      call();
    } catch (const Error& error) {
      return std::string(error.what());
    }
    return std::string();
  };
  EXPECT_NE(message([&] { ParamBuffer(func, 1); }).find("'f': parameter 1 is a scalar"),
            std::string::npos);
  EXPECT_NE(message([&] { ParamBuffer(func, 3); }).find("'f' has 3 parameters, not 4"),
            std::string::npos);
  EXPECT_NE(message([&] { ConstParamShape(func, 2); }).find("has a symbolic extent n"),
            std::string::npos);
}

}  // namespace
}  // namespace loom::tir
