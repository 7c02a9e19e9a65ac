// Shapes given as tensors at run time: reshape, expand, tile and range compiled once with
// their shape operand an input, run with many operands against the same operator compiled
// for each operand as a constant (the graph executor); operands that do not fit are refused
// as sizes, before the output is allocated.
#include <gtest/gtest.h>

#include <cmath>

#include "compile_test_models.h"
#include "graph_test_util.h"
#include "loom/graph/compile.h"

namespace loom::graph {
namespace {

using test::ErrorOf;
using test::RandomArray;
using test::Values;

const DataType kF32 = DataType::Float(32);
const DataType kI64 = DataType::Int(64);

runtime::NDArray Ints64(const std::vector<int64_t>& values) {
  std::vector<double> as_double(values.begin(), values.end());
  return test::ArrayOf({static_cast<int64_t>(values.size())}, kI64, as_double);
}

runtime::NDArray RunOn(runtime::Executor& executor, const std::vector<runtime::NDArray>& inputs) {
  return test::models::RunOn(executor, inputs).at(0);
}

// data [shape] and an operand of `length` int64 values, through `dims_op` (a shape function),
// dims_of_value and `to_op`.
std::unique_ptr<runtime::Executor> ShapedAtRunTime(const std::vector<int64_t>& shape,
                                                   int64_t length, const std::string& dims_op,
                                                   const std::string& to_op) {
  Var data = test::In("data", shape);
  Var operand = test::In("operand", {length}, kI64);
  Expr dims = MakeCall(dims_op, {data, operand});
  Expr sizes = MakeCall("dims_of_value", {dims, dims},
                        {{"size", std::string("test." + dims_op)}, {"like_dim", int64_t{-2}}});
  Function main = MakeFunction({data, operand}, MakeCall(to_op, {data, sizes}));
  CompiledModel compiled = Compile(IRModule::FromFunction(main), {.opt_level = 3});
  EXPECT_EQ(compiled.executor, "vm");
  return MakeExecutor(compiled);
}

// The same operator with the operand as an attribute, compiled for the graph executor.
runtime::NDArray Static(const std::string& op, const std::string& attr,
                        const runtime::NDArray& data, const std::vector<int64_t>& operand) {
  Var x = test::In("data", data.Shape());
  Function main = MakeFunction({x}, MakeCall(op, {x}, {{attr, Ints(operand.begin(), operand.end())}}));
  std::unique_ptr<runtime::Executor> graph = MakeExecutor(Compile(IRModule::FromFunction(main), {}));
  return RunOn(*graph, {data});
}

void ExpectSame(const runtime::NDArray& got, const runtime::NDArray& want, const std::string& what) {
  EXPECT_EQ(got.Shape(), want.Shape()) << what;
  EXPECT_EQ(Values(got), Values(want)) << what;
}

std::string Text(const std::vector<int64_t>& values) {
  std::string text;
  for (int64_t v : values) text += (text.empty() ? "" : ",") + std::to_string(v);
  return "(" + text + ")";
}

TEST(ShapeFunction, ReshapeByATensorMatchesReshapeByAConstant) {
  std::unique_ptr<runtime::Executor> vm = ShapedAtRunTime({2, 3, 4}, 3, "reshape_dims", "reshape_to");
  runtime::NDArray x = RandomArray({2, 3, 4}, kF32, 1);
  for (const std::vector<int64_t>& shape :
       std::vector<std::vector<int64_t>>{{4, 3, 2}, {0, -1, 2}, {-1, 1, 1}, {2, 0, 4}, {1, 24, 1}}) {
    ExpectSame(RunOn(*vm, {x, Ints64(shape)}), Static("reshape", "newshape", x, shape),
               "shape " + Text(shape));
  }
  // Shapes that do not fit: refused as sizes, nothing allocated at them.
  // {8, 2^61 + 3, 1}: a product that wraps past int64 to x's 24 elements.
  for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{
           {5, 5, 1}, {-1, -1, 2}, {7, -1, 1}, {-3, 4, 2}, {8, (int64_t{1} << 61) + 3, 1}}) {
    EXPECT_NE(ErrorOf([&] { RunOn(*vm, {x, Ints64(shape)}); })
                  .find("VirtualMachine: the size test.reshape_dims[0] read at run time is -1, not "
                        "a size: the inputs do not fit the model's shape computation"),
              std::string::npos)
        << Text(shape);
  }
}

TEST(ShapeFunction, ExpandAndTileByATensorMatchTheirConstantForms) {
  runtime::NDArray x = RandomArray({3, 1}, kF32, 2);
  std::unique_ptr<runtime::Executor> expand = ShapedAtRunTime({3, 1}, 3, "broadcast_dims", "expand_to");
  for (const std::vector<int64_t>& shape :
       std::vector<std::vector<int64_t>>{{2, 3, 5}, {1, 1, 1}, {4, 1, 0}, {1, 3, 1}}) {
    ExpectSame(RunOn(*expand, {x, Ints64(shape)}), Static("expand", "shape", x, shape),
               "expand to " + Text(shape));
  }
  // x's 3 cannot become 2.
  EXPECT_NE(ErrorOf([&] { RunOn(*expand, {x, Ints64({1, 2, 4})}); })
                .find("the size test.broadcast_dims[1] read at run time is -1"),
            std::string::npos);
  std::unique_ptr<runtime::Executor> tile = ShapedAtRunTime({3, 1}, 2, "tile_dims", "tile_to");
  for (const std::vector<int64_t>& repeats :
       std::vector<std::vector<int64_t>>{{1, 1}, {2, 3}, {0, 4}, {3, 1}}) {
    ExpectSame(RunOn(*tile, {x, Ints64(repeats)}), Static("tile", "reps", x, repeats),
               "tile by " + Text(repeats));
  }
  EXPECT_NE(ErrorOf([&] { RunOn(*tile, {x, Ints64({1, -2})}); })
                .find("the size test.tile_dims[1] read at run time is -1"),
            std::string::npos);
  // 3 x 2^62 rows: past int64, refused rather than wrapped.
  EXPECT_NE(ErrorOf([&] {
              RunOn(*tile, {x, Ints64({int64_t{1} << 62, 1})});
            }).find("the size test.tile_dims[0] read at run time is -1"),
            std::string::npos);
}

TEST(ShapeFunction, RangeOfScalarsGivenAtRunTime) {
  for (DataType dtype : {kF32, kI64, DataType::Int(32)}) {
    Var start = MakeVar("start", TensorType(std::vector<int64_t>{}, dtype));
    Var limit = MakeVar("limit", TensorType(std::vector<int64_t>{}, dtype));
    Var delta = MakeVar("delta", TensorType(std::vector<int64_t>{}, dtype));
    Expr length = MakeCall("range_length", {start, limit, delta});
    Expr sizes = MakeCall("dims_of_value", {length, length},
                          {{"size", std::string("test.length")}, {"like_dim", int64_t{-2}}});
    Function main = MakeFunction({start, limit, delta}, MakeCall("arange_to", {start, delta, sizes}));
    std::unique_ptr<runtime::Executor> vm = MakeExecutor(Compile(IRModule::FromFunction(main), {}));
    auto scalar = [&](double v) { return test::ArrayOf({}, dtype, {v}); };
    const bool is_float = dtype.is_float();
    for (auto [a, b, step] : std::vector<std::array<double, 3>>{
             {0, 5, 1}, {10, 4, -3}, {3, 3, 1}, {1, 0, 1}, {2.5, 7, 1.5}, {-2, 9, 4}}) {
      if (!is_float && (a != int64_t(a) || step != int64_t(step))) continue;
      std::vector<double> want;
      for (double v = a; step > 0 ? v < b : v > b; v += step) want.push_back(v);
      runtime::NDArray got = RunOn(*vm, {scalar(a), scalar(b), scalar(step)});
      EXPECT_EQ(Values(got), want) << dtype.str() << " range(" << a << ", " << b << ", " << step
                                   << ")";
    }
    EXPECT_NE(ErrorOf([&] { RunOn(*vm, {scalar(0), scalar(4), scalar(0)}); })
                  .find("the size test.length read at run time is -1"),
              std::string::npos);
    if (is_float) {  // a bound that is not a number has no length
      EXPECT_NE(ErrorOf([&] {
                  RunOn(*vm, {scalar(0), scalar(std::nan("")), scalar(1)});
                }).find("the size test.length read at run time is -1"),
                std::string::npos);
    }
  }
}

}  // namespace
}  // namespace loom::graph
