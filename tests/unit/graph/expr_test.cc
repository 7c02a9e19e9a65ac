// The graph IR core: typing at construction, user errors naming the call, the printer,
// traversal order and the mutator's sharing.
#include <gtest/gtest.h>

#include "error_of.h"

#include "loom/graph/functor.h"
#include "loom/graph/module.h"

namespace loom::graph {
namespace {

const DataType kF32 = DataType::Float(32);

using testing::ErrorOf;

runtime::NDArray Zeros(const std::vector<int64_t>& shape) {
  runtime::NDArray array = runtime::NDArray::Empty(shape, kF32);
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  std::fill_n(static_cast<float*>(array.data()), count, 0.0f);
  return array;
}

TEST(GraphExpr, CallsAreTypedWhenBuilt) {
  Var x = MakeVar("x", TensorType({2, 1, 5}, kF32));
  Constant bias = MakeConstant(Zeros({3, 1}), "bias");
  Call sum = MakeCall("add", {x, bias}, {}, "add_1");
  EXPECT_EQ(sum.type().str(), "Tensor[(2, 3, 5), float32]");
  Call relu = MakeCall("nn.relu", {sum});
  EXPECT_TRUE(Equal(relu.type(), sum.type()));
  Tuple pair = MakeTuple({x, relu});
  EXPECT_EQ(pair.type().str(), "(Tensor[(2, 1, 5), float32], Tensor[(2, 3, 5), float32])");
  EXPECT_EQ(MakeTupleGetItem(pair, 1).type().str(), "Tensor[(2, 3, 5), float32]");
}

TEST(GraphExpr, SymbolicDimensionsBroadcast) {
  loom::Var batch = SizeVar("batch", DataType::Int(64));
  Var x = MakeVar("x", TensorType(std::vector<PrimExpr>{batch, IntImm(DataType::Int(64), 4)}, kF32));
  Var y = MakeVar("y", TensorType({1, 4}, kF32));
  EXPECT_EQ(MakeCall("multiply", {x, y}).type().str(), "Tensor[(batch, 4), float32]");
}

TEST(GraphExpr, ErrorsNameTheCallAndTheShapes) {
  Var x = MakeVar("x", TensorType({2, 3}, kF32));
  Var y = MakeVar("y", TensorType({4}, kF32));
  EXPECT_NE(ErrorOf([&] { MakeCall("add", {x, y}, {}, "Add_7"); }).find("add 'Add_7'"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { MakeCall("add", {x}); }).find("add call: takes 2 inputs, got 1"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { MakeCall("nn.relu", {x}, {{"alpha", 0.5}}, "r"); })
                .find("nn.relu 'r': nn.relu has no attribute 'alpha' (it takes none)"),
            std::string::npos);
  std::string unknown = ErrorOf([&] { MakeCall("nn.rleu", {x}); });
  EXPECT_NE(unknown.find("no graph operator is named 'nn.rleu' (close: "), std::string::npos);
  EXPECT_NE(unknown.find("nn.relu"), std::string::npos) << unknown;
  Var i = MakeVar("i", TensorType({2, 3}, DataType::Int(32)));
  EXPECT_NE(ErrorOf([&] { MakeCall("add", {x, i}); }).find("must share one dtype"),
            std::string::npos);
  // A unary operator's type comes from its compute: exp takes float tensors only.
  EXPECT_NE(ErrorOf([&] { MakeCall("exp", {i}, {}, "exp_3"); }).find("exp 'exp_3'"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { MakeFunction({}, MakeCall("nn.relu", {x})); })
                .find("variable 'x' is used in the function but is not one of its parameters"),
            std::string::npos);
}

TEST(GraphExpr, PrinterNumbersBindingsInDataflowOrder) {
  Var x = MakeVar("x", TensorType({1, 4}, kF32));
  Constant w = MakeConstant(Zeros({1, 4}), "scale");
  Expr scaled = MakeCall("multiply", {x, w}, {}, "mul");
  Expr out = MakeCall("add", {MakeCall("nn.relu", {scaled}), scaled});
  EXPECT_EQ(ToText(IRModule::FromFunction(MakeFunction({x}, out))),
            "def @main fn (%x: Tensor[(1, 4), float32]) -> Tensor[(1, 4), float32] {\n"
            "  %0 = multiply(%x, meta[Constant 'scale' Tensor[(1, 4), float32]]) /* mul */;\n"
            "  %1 = nn.relu(%0);\n"
            "  %2 = add(%1, %0);\n"
            "  %2\n"
            "}\n");
}

TEST(GraphExpr, CallsOfPrimitiveFunctionsPrintTheFunctionAfter) {
  Var x = MakeVar("x", TensorType({4}, kF32));
  Var p = MakeVar("p0", TensorType({4}, kF32));
  Function fused = MakeFunction({p}, MakeCall("exp", {MakeCall("nn.relu", {p})}),
                                {{"Primitive", int64_t{1}}, {"name", std::string("fused_relu_exp")}});
  EXPECT_TRUE(fused->primitive());
  Call call = MakeCall(fused, {x}, "block");
  Function main = MakeFunction({x}, MakeCall("add", {call, x}));
  EXPECT_EQ(ToText(main),
            "fn (%x: Tensor[(4,), float32]) -> Tensor[(4,), float32] {\n"
            "  %0 = @fused_relu_exp(%x) /* block */;\n"
            "  %1 = add(%0, %x);\n"
            "  %1\n"
            "}\n"
            "@fused_relu_exp = fn (%p0: Tensor[(4,), float32]) -> Tensor[(4,), float32] {\n"
            "  %0 = nn.relu(%p0);\n"
            "  %1 = exp(%0);\n"
            "  %1\n"
            "}\n");
  Var y = MakeVar("y", TensorType({5}, kF32));
  EXPECT_NE(ErrorOf([&] { MakeCall(fused, {y}); })
                .find("argument 0 of a function call is Tensor[(5,), float32], its parameter "
                      "'p0' is Tensor[(4,), float32]"),
            std::string::npos);
}

TEST(GraphExpr, MutatorKeepsUnchangedNodesAndRetypesChangedOnes) {
  Var x = MakeVar("x", TensorType({2, 3}, kF32));
  Expr relu = MakeCall("nn.relu", {x});
  Expr out = MakeCall("add", {relu, relu});
  Function f = MakeFunction({x}, out);
  ExprMutator identity;
  EXPECT_TRUE(identity.VisitExpr(f).same_as(f));

  // Replace relu by exp: the add is rebuilt once (its two operands are one node).
  class ReluToExp : public ExprMutator {
   public:
    Expr VisitExpr_(const CallNode* op) override {
      Expr rebuilt = ExprMutator::VisitExpr_(op);
      const auto* call = rebuilt.as<CallNode>();
      if (call->op->name == "nn.relu") return MakeCall("exp", call->args);
      return rebuilt;
    }
  };
  Function g = Downcast<Function>(ReluToExp().VisitExpr(f));
  const auto* add = g->body.as<CallNode>();
  ASSERT_NE(add, nullptr);
  EXPECT_TRUE(add->args[0].same_as(add->args[1]));
  EXPECT_EQ(add->args[0].as<CallNode>()->op->name, "exp");
  int calls = 0;
  PostOrderVisit(g, [&](const Expr& e) { calls += e.as<CallNode>() != nullptr; });
  EXPECT_EQ(calls, 2);
}

}  // namespace
}  // namespace loom::graph
