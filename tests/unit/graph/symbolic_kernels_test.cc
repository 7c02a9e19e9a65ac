// Kernels with symbolic extents: a model whose input has a size variable (a sequence length
// n) is optimized, fused and lowered once; each kernel then takes tensors of any n (its
// PackedAPI binds n from the shapes it is given). Run at several n, the kernels agree with
// every operator evaluated alone at that n (EvaluateCall, the reference interpreter).
#include <gtest/gtest.h>

#include <functional>

#include "graph_test_util.h"
#include "loom/arith/analyzer.h"
#include "loom/graph/compile.h"
#include "loom/graph/evaluate.h"
#include "loom/graph/functor.h"
#include "loom/graph/lower.h"
#include "loom/ir/printer.h"
#include "loom/target/build.h"
#include "loom/tir/stmt_functor.h"

namespace loom::graph {
namespace {

using test::ErrorOf;
using test::HostTarget;
using test::RandomArray;
using test::RandomConstant;
using test::Values;

const DataType kF32 = DataType::Float(32);

// `dims` with size variables bound to their values.
std::vector<int64_t> Bound(const std::vector<PrimExpr>& dims, const tir::VarMap& bindings) {
  arith::Analyzer analyzer;
  std::vector<int64_t> shape;
  for (const PrimExpr& dim : dims) {
    int64_t value = 0;
    PrimExpr bound = analyzer.Simplify(tir::Substitute(dim, bindings));
    EXPECT_TRUE(IsConstInt(bound, &value)) << "dimension " << dim << " stays " << bound;
    shape.push_back(value);
  }
  return shape;
}

// The fused model run on `inputs`: the size variables of main's parameters bound from the
// inputs' shapes, each kernel's output allocated at the shape its type then has.
runtime::NDArray RunFused(const IRModule& fused, const LoweredModel& lowered,
                          const runtime::Module& kernels,
                          const std::vector<runtime::NDArray>& inputs) {
  const Function& main = fused.main();
  tir::VarMap bindings;
  std::unordered_map<const Object*, runtime::NDArray> values;
  for (size_t i = 0; i < main->params.size(); ++i) {
    const std::vector<PrimExpr>& dims = main->params[i].type().shape();
    for (size_t d = 0; d < dims.size(); ++d) {
      if (dims[d].as<loom::VarNode>() != nullptr) {
        bindings[Downcast<loom::Var>(dims[d])] = IntImm(dims[d].dtype(), inputs[i].Shape()[d]);
      }
    }
    values[main->params[i].get()] = inputs[i];
  }
  for (const CallNode* call : CallsInOrder(main)) {
    std::vector<runtime::NDArray> args;
    for (const Expr& arg : call->args) {
      const auto* constant = arg.as<ConstantNode>();
      args.push_back(constant ? constant->data : values.at(arg.get()));
    }
    runtime::NDArray out = runtime::NDArray::Empty(Bound(call->checked_type.shape(), bindings),
                                                   call->checked_type.dtype());
    args.push_back(out);
    kernels.GetRequiredFunction(lowered.KernelName(*call)).CallWithArrays(args);
    values[call] = out;
  }
  return values.at(main->body.get());
}

// The unfused model on `inputs`, every operator evaluated alone.
runtime::NDArray Interpret(const Function& main, const std::vector<runtime::NDArray>& inputs) {
  std::unordered_map<const Object*, runtime::NDArray> values;
  for (size_t i = 0; i < main->params.size(); ++i) values[main->params[i].get()] = inputs[i];
  PostOrderVisit(main->body, [&](const Expr& e) {
    if (const auto* constant = e.as<ConstantNode>()) values[e.get()] = constant->data;
    const auto* call = e.as<CallNode>();
    if (call == nullptr) return;
    std::vector<runtime::NDArray> args;
    for (const Expr& arg : call->args) args.push_back(values.at(arg.get()));
    values[e.get()] = EvaluateCall(*call, args, HostTarget());
  });
  return values.at(main->body.get());
}

// `body` over x: [1, n, 64], compiled once at `opt_level` and run at n = 1, 7 and 32 against
// the interpreter.
void ExpectRunsAtEveryLength(const std::function<Expr(Expr)>& body, int opt_level) {
  loom::Var n = SizeVar("n", DataType::Int(64));
  Var x = MakeVar("x", TensorType(std::vector<PrimExpr>{IntImm(DataType::Int(64), 1), n,
                                                        IntImm(DataType::Int(64), 64)},
                                  kF32));
  Function main = MakeFunction({x}, body(x));
  CompileOptions options;
  options.opt_level = opt_level;
  IRModule fused = OptimizeGraph(IRModule::FromFunction(main), options);
  LoweredModel lowered = LowerToTIR(fused, HostTarget());
  runtime::Module kernels = build(lowered.tir, HostTarget());
  for (int64_t length : {1, 7, 32}) {
    runtime::NDArray input = RandomArray({1, length, 64}, kF32, static_cast<unsigned>(length));
    runtime::NDArray got = RunFused(fused, lowered, kernels, {input});
    runtime::NDArray want = Interpret(main, {input});
    EXPECT_EQ(got.Shape(), want.Shape()) << "n = " << length;
    test::ExpectClose(got, Values(want), 1e-4, "n = " + std::to_string(length));
  }
}

// One encoder attention block's operators over a sequence of n tokens: projections, heads
// split by reshape and transpose, scores, softmax, context, layer norm.
Expr Attention(Expr x) {
  auto project = [&](const std::string& name, unsigned seed) {
    Expr y = MakeCall("nn.dense", {x, RandomConstant({64, 64}, name + ".w", seed, -0.2, 0.2)});
    return MakeCall("add", {y, RandomConstant({64}, name + ".b", seed + 1)});
  };
  auto heads = [](Expr y) {  // [1, n, 64] -> [1, 4, n, 16]
    y = MakeCall("reshape", {y}, {{"newshape", Ints{0, 0, 4, 16}}});
    return MakeCall("transpose", {y}, {{"axes", Ints{0, 2, 1, 3}}});
  };
  Expr q = heads(project("q", 1)), k = heads(project("k", 3)), v = heads(project("v", 5));
  Expr scores =
      MakeCall("nn.matmul", {q, MakeCall("transpose", {k}, {{"axes", Ints{0, 1, 3, 2}}})});
  scores = MakeCall("multiply", {scores, MakeConstant(test::ArrayOf({}, kF32, {0.25}))});
  Expr context =
      MakeCall("nn.matmul", {MakeCall("nn.softmax", {scores}, {{"axis", int64_t{-1}}}), v});
  context = MakeCall("reshape", {MakeCall("transpose", {context}, {{"axes", Ints{0, 2, 1, 3}}})},
                     {{"newshape", Ints{0, 0, -1}}});
  Expr out = MakeCall("add", {x, MakeCall("erf", {context})});
  return MakeCall("nn.layer_norm",
                  {out, RandomConstant({64}, "g", 7), RandomConstant({64}, "b", 8)});
}

TEST(SymbolicKernels, AnAttentionBlockCompiledOnceRunsAtEveryLength) {
  ExpectRunsAtEveryLength(Attention, 0);
  ExpectRunsAtEveryLength(Attention, 3);
}

TEST(SymbolicKernels, ReshapeInfersSymbolicSizesOrSaysWhyNot) {
  ExpectRunsAtEveryLength(
      [](Expr x) {
        return MakeCall("reshape", {x}, {{"newshape", Ints{-1, 32}}});
      },
      1);
  loom::Var n = SizeVar("n", DataType::Int(64));
  Var x = MakeVar("x", TensorType(std::vector<PrimExpr>{n, IntImm(DataType::Int(64), 6)}, kF32));
  std::string error = ErrorOf([&] { MakeCall("reshape", {x}, {{"newshape", Ints{-1, 4}}}, "r"); });
  EXPECT_NE(error.find("cannot infer the -1 of (-1, 4) at compile time: the element count of (n, "
                       "6) is not shown to be a multiple of the other entries' product"),
            std::string::npos)
      << error;
  EXPECT_NE(ErrorOf([&] {
              MakeCall("reshape", {x}, {{"newshape", Ints{3, 4}}}, "r");
            }).find("target shape (3, 4) has an element count not shown to equal that of (n, 6)"),
            std::string::npos);
}

}  // namespace
}  // namespace loom::graph
