// Shapes given as tensors at run time: reshape, expand, tile, range, the reductions, squeeze,
// unsqueeze, slice, pad, split and resize compiled once with their shape operand an input, run with
// many operands against the same operator compiled for each operand as a constant (the graph
// executor); operands that do not fit are refused as sizes, before the output is allocated.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

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

// (Written as int64: a double would round INT64_MAX.)
runtime::NDArray Ints64(const std::vector<int64_t>& values) {
  runtime::NDArray array = runtime::NDArray::Empty({static_cast<int64_t>(values.size())}, kI64);
  std::copy(values.begin(), values.end(), static_cast<int64_t*>(array.data()));
  return array;
}

runtime::NDArray RunOn(runtime::Executor& executor, const std::vector<runtime::NDArray>& inputs) {
  return test::models::RunOn(executor, inputs).at(0);
}

// Sizes `dims` computes (dims_of_value, named "test.<dims_op>").
Expr SizesOf(const Expr& dims, const std::string& dims_op) {
  return MakeCall("dims_of_value", {dims, dims},
                  {{"size", std::string("test." + dims_op)}, {"like_dim", int64_t{-2}}});
}

// data [shape] and an operand of `length` int64 values, through `dims_op` (a shape function),
// dims_of_value and `to_op`.
std::unique_ptr<runtime::Executor> ShapedAtRunTime(const std::vector<int64_t>& shape,
                                                   int64_t length, const std::string& dims_op,
                                                   const std::string& to_op, Attrs to_attrs = {}) {
  Var data = test::In("data", shape);
  Var operand = test::In("operand", {length}, kI64);
  Expr sizes = SizesOf(MakeCall(dims_op, {data, operand}), dims_op);
  Function main =
      MakeFunction({data, operand}, MakeCall(to_op, {data, sizes}, std::move(to_attrs)));
  CompiledModel compiled = Compile(IRModule::FromFunction(main), {.opt_level = 3});
  EXPECT_EQ(compiled.executor, "vm");
  return MakeExecutor(compiled);
}

// The same operator with the operand as an attribute, compiled for the graph executor.
// (With `keepdims`, a reduction's.)
runtime::NDArray Static(const std::string& op, const std::string& attr,
                        const runtime::NDArray& data, const std::vector<int64_t>& operand,
                        std::optional<bool> keepdims = std::nullopt) {
  Var x = test::In("data", data.Shape());
  Attrs attrs = {{attr, Ints(operand.begin(), operand.end())}};
  if (keepdims) attrs = attrs.With("keepdims", int64_t{*keepdims});
  Function main = MakeFunction({x}, MakeCall(op, {x}, attrs));
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

// data (of `shape`) reduced by `reducer` over k axes given at run time (reduce_dims,
// reduce_to, and without keepdims reduce_dims again, reshape_to, and to a scalar when every
// dimension goes), as the ONNX importer writes it.
std::unique_ptr<runtime::Executor> ReducedAtRunTime(const std::string& reducer, int64_t k,
                                                    bool keepdims,
                                                    const std::vector<int64_t>& shape = {2, 3, 4},
                                                    DataType dtype = kF32) {
  Var data = test::In("data", shape, dtype);
  Var axes = test::In("axes", {k}, kI64);
  Expr kept = MakeCall("reduce_dims", {data, axes}, {{"keepdims", int64_t{1}}});
  Expr y = MakeCall("reduce_to", {data, SizesOf(kept, "reduce_dims")}, {{"reducer", reducer}});
  if (!keepdims) {
    Expr dropped = MakeCall("reduce_dims", {data, axes}, {{"keepdims", int64_t{0}}});
    y = MakeCall("reshape_to", {y, SizesOf(dropped, "dropped_dims")});
    if (k == static_cast<int64_t>(shape.size())) {  // one dimension, checked to be 1: a scalar
      y = MakeCall("reshape_to", {y, MakeConstant(runtime::NDArray::Empty({0}, kI64))});
    }
  }
  CompiledModel compiled =
      Compile(IRModule::FromFunction(MakeFunction({data, axes}, y)), {.opt_level = 3});
  EXPECT_EQ(compiled.executor, "vm");
  return MakeExecutor(compiled);
}

void ExpectClose(const runtime::NDArray& got, const runtime::NDArray& want,
                 const std::string& what) {
  ASSERT_EQ(got.Shape(), want.Shape()) << what;
  std::vector<double> a = Values(got), b = Values(want);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_NEAR(a[i], b[i], 1e-5 * (1 + std::abs(b[i]))) << what << " element " << i;
  }
}

TEST(ShapeFunction, ReductionsOverAxesGivenAtRunTimeMatchTheirConstantForms) {
  runtime::NDArray x = RandomArray({2, 3, 4}, kF32, 3);
  for (const std::string reducer :
       {"sum", "mean", "max", "min", "prod", "l1_norm", "l2_norm", "sum_square", "logsumexp"}) {
    std::unique_ptr<runtime::Executor> two = ReducedAtRunTime(reducer, 2, /*keepdims=*/true);
    for (const std::vector<int64_t>& axes :
         std::vector<std::vector<int64_t>>{{0, 1}, {2, 0}, {-1, 1}, {1, 1}, {0, 2}}) {
      std::set<int64_t> listed;
      for (int64_t a : axes) listed.insert(a < 0 ? a + 3 : a);
      ExpectClose(RunOn(*two, {x, Ints64(axes)}),
                  Static(reducer, "axis", x, std::vector<int64_t>(listed.begin(), listed.end()),
                         /*keepdims=*/true),
                  reducer + " keepdims over " + Text(axes));
    }
  }
  for (const std::string reducer : {"sum", "mean", "logsumexp"}) {
    std::unique_ptr<runtime::Executor> one = ReducedAtRunTime(reducer, 1, /*keepdims=*/false);
    for (int64_t axis : {0, 1, 2, -2}) {
      ExpectClose(RunOn(*one, {x, Ints64({axis})}),
                  Static(reducer, "axis", x, {axis}, /*keepdims=*/false),
                  reducer + " over " + std::to_string(axis));
    }
    std::unique_ptr<runtime::Executor> all = ReducedAtRunTime(reducer, 3, /*keepdims=*/false);
    ExpectClose(RunOn(*all, {x, Ints64({2, 0, 1})}), Static(reducer, "axis", x, {}, false),
                reducer + " over every axis");
  }
}

TEST(ShapeFunction, AxesThatDoNotFitAreRefusedBeforeTheReduction) {
  runtime::NDArray x = RandomArray({2, 3, 4}, kF32, 4);
  std::unique_ptr<runtime::Executor> keep = ReducedAtRunTime("sum", 1, /*keepdims=*/true);
  std::unique_ptr<runtime::Executor> drop = ReducedAtRunTime("sum", 2, /*keepdims=*/false);
  for (int64_t axis : {int64_t{3}, int64_t{-4}, int64_t{1} << 40}) {
    EXPECT_NE(ErrorOf([&] {
                RunOn(*keep, {x, Ints64({axis})});
              }).find("the size test.reduce_dims[0] read at run time is -1"),
              std::string::npos)
        << axis;
  }
  // Without keepdims the output's rank counts the axes: a repeated one would leave a dimension
  // no axis drops.
  EXPECT_NE(ErrorOf([&] {
              RunOn(*drop, {x, Ints64({1, 1})});
            }).find("the size test.dropped_dims read at run time is -1"),
            std::string::npos);
  // So with every dimension dropped (a scalar result, which alone could refuse nothing).
  std::unique_ptr<runtime::Executor> all = ReducedAtRunTime("sum", 3, /*keepdims=*/false);
  EXPECT_NE(ErrorOf([&] {
              RunOn(*all, {x, Ints64({0, 0, 1})});
            }).find("the size test.dropped_dims read at run time is -1"),
            std::string::npos);
}

TEST(ShapeFunction, AnIntegerMeanOverAnEmptyDimensionIsZero) {
  runtime::NDArray empty = runtime::NDArray::Empty({0, 3}, DataType::Int(32));
  std::unique_ptr<runtime::Executor> mean =
      ReducedAtRunTime("mean", 1, /*keepdims=*/true, {0, 3}, DataType::Int(32));
  runtime::NDArray got = RunOn(*mean, {empty, Ints64({0})});
  EXPECT_EQ(got.Shape(), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(Values(got), (std::vector<double>{0, 0, 0}));
}

TEST(ShapeFunction, SqueezeAndUnsqueezeByAxesGivenAtRunTime) {
  runtime::NDArray x = RandomArray({1, 3, 1, 2}, kF32, 5);
  std::unique_ptr<runtime::Executor> squeeze =
      ShapedAtRunTime({1, 3, 1, 2}, 2, "squeeze_dims", "reshape_to");
  for (const std::vector<int64_t>& axes : std::vector<std::vector<int64_t>>{{0, 2}, {-2, 0}}) {
    ExpectSame(RunOn(*squeeze, {x, Ints64(axes)}), Static("reshape", "newshape", x, {3, 2}),
               "squeeze " + Text(axes));
  }
  // A dimension that is not 1, a repeated axis, one out of range.
  for (const std::vector<int64_t>& axes :
       std::vector<std::vector<int64_t>>{{0, 1}, {2, 2}, {0, 4}}) {
    EXPECT_NE(ErrorOf([&] {
                RunOn(*squeeze, {x, Ints64(axes)});
              }).find("the size test.squeeze_dims[0] read at run time is -1"),
              std::string::npos)
        << Text(axes);
  }
  // Every dimension squeezed: one dimension of 1, or refused (a repeated axis leaves a 2).
  runtime::NDArray pair = RandomArray({1, 2}, kF32, 9);
  std::unique_ptr<runtime::Executor> squeeze_all =
      ShapedAtRunTime({1, 2}, 2, "squeeze_dims", "reshape_to");
  EXPECT_NE(ErrorOf([&] {
              RunOn(*squeeze_all, {pair, Ints64({0, 0})});
            }).find("the size test.squeeze_dims read at run time is -1"),
            std::string::npos);
  std::unique_ptr<runtime::Executor> unsqueeze =
      ShapedAtRunTime({1, 3, 1, 2}, 2, "unsqueeze_dims", "reshape_to");
  for (const auto& [axes, shape] :
       std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>{
           {{0, 5}, {1, 1, 3, 1, 2, 1}},
           {{-1, 2}, {1, 3, 1, 1, 2, 1}},
           {{4, 1}, {1, 1, 3, 1, 1, 2}}}) {
    ExpectSame(RunOn(*unsqueeze, {x, Ints64(axes)}), Static("reshape", "newshape", x, shape),
               "unsqueeze " + Text(axes));
  }
  for (const std::vector<int64_t>& axes : std::vector<std::vector<int64_t>>{{1, 1}, {6, 0}}) {
    EXPECT_NE(ErrorOf([&] {
                RunOn(*unsqueeze, {x, Ints64(axes)});
              }).find("the size test.unsqueeze_dims[0] read at run time is -1"),
              std::string::npos)
        << Text(axes);
  }
}

// `op` with `attrs` on data, compiled for the graph executor.
runtime::NDArray StaticCall(const std::string& op, const Attrs& attrs,
                            const runtime::NDArray& data) {
  Var x = test::In("data", data.Shape());
  Function main = MakeFunction({x}, MakeCall(op, {x}, attrs));
  std::unique_ptr<runtime::Executor> graph =
      MakeExecutor(Compile(IRModule::FromFunction(main), {}));
  return RunOn(*graph, {data});
}

TEST(ShapeFunction, SliceByOperandsGivenAtRunTimeMatchesTheConstantSlice) {
  runtime::NDArray x = RandomArray({4, 5, 6}, kF32, 6);
  std::vector<Var> params = {test::In("data", {4, 5, 6})};
  for (const char* name : {"starts", "ends", "axes", "steps"})
    params.push_back(test::In(name, {2}, kI64));
  std::vector<Expr> operands(params.begin(), params.end());
  Expr dims = MakeCall("slice_dims", operands);
  operands.push_back(SizesOf(dims, "slice_dims"));
  std::unique_ptr<runtime::Executor> vm = MakeExecutor(Compile(
      IRModule::FromFunction(MakeFunction(params, MakeCall("strided_slice_to", operands))), {}));
  const int64_t big = INT64_MAX, small = INT64_MIN;
  struct Case {
    std::vector<int64_t> starts, ends, axes, steps;
  };
  for (const Case& c : std::vector<Case>{{{1, 0}, {3, 5}, {0, 2}, {1, 2}},
                                         {{-1, 4}, {-5, 0}, {1, 2}, {-1, -2}},
                                         {{0, 0}, {big, big}, {0, -1}, {1, 1}},
                                         {{10, -10}, {20, -20}, {0, 1}, {1, -1}},
                                         {{5, -1}, {small, small}, {2, 1}, {-2, small}},
                                         {{2, 1}, {2, 1}, {0, 1}, {1, 1}}}) {
    const std::string what =
        "starts " + Text(c.starts) + " ends " + Text(c.ends) + " axes " + Text(c.axes);
    ExpectSame(RunOn(*vm, {x, Ints64(c.starts), Ints64(c.ends), Ints64(c.axes), Ints64(c.steps)}),
               StaticCall("strided_slice",
                          {{"begin", Ints(c.starts)},
                           {"end", Ints(c.ends)},
                           {"axes", Ints(c.axes)},
                           {"strides", Ints(c.steps)}},
                          x),
               what);
  }
  // Going backward over an empty dimension reads nothing, as the constant slice.
  {
    runtime::NDArray empty = runtime::NDArray::Empty({0, 3}, kF32);
    std::vector<Var> one = {test::In("data", {0, 3})};
    for (const char* name : {"starts", "ends", "axes", "steps"})
      one.push_back(test::In(name, {1}, kI64));
    std::vector<Expr> args(one.begin(), one.end());
    Expr counts = MakeCall("slice_dims", args);
    args.push_back(SizesOf(counts, "slice_dims"));
    std::unique_ptr<runtime::Executor> backward = MakeExecutor(
        Compile(IRModule::FromFunction(MakeFunction(one, MakeCall("strided_slice_to", args))), {}));
    runtime::NDArray got =
        RunOn(*backward, {empty, Ints64({0}), Ints64({-10}), Ints64({0}), Ints64({-1})});
    EXPECT_EQ(got.Shape(), (std::vector<int64_t>{0, 3}));
    Var data = test::In("data", {0, 3});
    Call constant = MakeCall(
        "strided_slice", {data},
        {{"begin", Ints{0}}, {"end", Ints{-10}}, {"axes", Ints{0}}, {"strides", Ints{-1}}});
    EXPECT_EQ(constant.type().str(), "Tensor[(0, 3), float32]");
  }
  // A step of 0, a repeated axis, an axis out of range.
  for (const Case& c : std::vector<Case>{{{0, 0}, {2, 2}, {0, 1}, {1, 0}},
                                         {{0, 0}, {2, 2}, {1, -2}, {1, 1}},
                                         {{0, 0}, {2, 2}, {0, 3}, {1, 1}}}) {
    EXPECT_NE(ErrorOf([&] {
                RunOn(*vm, {x, Ints64(c.starts), Ints64(c.ends), Ints64(c.axes), Ints64(c.steps)});
              }).find("the size test.slice_dims[0] read at run time is -1"),
              std::string::npos)
        << "axes " << Text(c.axes) << " steps " << Text(c.steps);
  }
}

TEST(ShapeFunction, PadByOperandsGivenAtRunTimeMatchesTheConstantPad) {
  runtime::NDArray x = RandomArray({3, 4}, kF32, 7);
  runtime::NDArray seven = test::ArrayOf({}, kF32, {7});
  for (const std::string mode : {"constant", "reflect", "edge", "wrap"}) {
    Var data = test::In("data", {3, 4}), pads = test::In("pads", {4}, kI64);
    Var axes = test::In("axes", {2}, kI64);
    Var value = MakeVar("value", TensorType(std::vector<int64_t>{}, kF32));
    Expr dims = MakeCall("pad_dims", {data, pads, axes}, {{"pad_mode", mode}});
    Expr y = MakeCall("pad_to", {data, pads, axes, value, SizesOf(dims, "pad_dims")},
                      {{"pad_mode", mode}});
    std::unique_ptr<runtime::Executor> vm = MakeExecutor(
        Compile(IRModule::FromFunction(MakeFunction({data, pads, axes, value}, y)), {}));
    // pads (begin of axes[0], of axes[1], end of axes[0], of axes[1]).
    for (const auto& [given, order] :
         std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>{
             {{1, 2, 0, 1}, {0, 1}}, {{0, -1, 2, 1}, {1, 0}}, {{-1, 0, 1, 2}, {-2, 1}}}) {
      Ints width(4, 0);
      for (size_t j = 0; j < 2; ++j) {
        const int64_t d = order[j] < 0 ? order[j] + 2 : order[j];
        width[static_cast<size_t>(d)] = given[j];
        width[static_cast<size_t>(d) + 2] = given[j + 2];
      }
      ExpectSame(
          RunOn(*vm, {x, Ints64(given), Ints64(order), seven}),
          StaticCall("nn.pad", {{"pad_width", width}, {"pad_value", 7.0}, {"pad_mode", mode}}, x),
          mode + " pads " + Text(given) + " axes " + Text(order));
    }
    // A dimension cropped below 0, a repeated axis; reflect: a pad as large as the dimension.
    std::vector<std::vector<int64_t>> refused = {{-2, 0, -2, 0}, {0, 0, 0, 0}};
    std::vector<std::vector<int64_t>> refused_axes = {{0, 1}, {1, 1}};
    if (mode == "reflect") {
      refused.push_back({3, 0, 0, 0});
      refused_axes.push_back({0, 1});
    }
    for (size_t r = 0; r < refused.size(); ++r) {
      EXPECT_NE(ErrorOf([&] {
                  RunOn(*vm, {x, Ints64(refused[r]), Ints64(refused_axes[r]), seven});
                }).find("the size test.pad_dims[0] read at run time is -1"),
                std::string::npos)
          << mode << " pads " << Text(refused[r]) << " axes " << Text(refused_axes[r]);
    }
  }
}

TEST(ShapeFunction, SplitBySizesGivenAtRunTime) {
  runtime::NDArray x = RandomArray({3, 7}, kF32, 8);
  Var data = test::In("data", {3, 7}), split = test::In("split", {3}, kI64);
  Expr dims = MakeCall("split_dims", {data, split}, {{"axis", int64_t{1}}});
  Expr sizes = SizesOf(dims, "split_dims");
  std::vector<Expr> pieces;
  for (int64_t i = 0; i < 3; ++i) {
    pieces.push_back(
        MakeCall("split_piece_to", {data, sizes}, {{"axis", int64_t{1}}, {"index", i}}));
  }
  std::unique_ptr<runtime::Executor> vm = MakeExecutor(
      Compile(IRModule::FromFunction(MakeFunction({data, split}, MakeTuple(pieces))), {}));
  for (const std::vector<int64_t>& given :
       std::vector<std::vector<int64_t>>{{2, 4, 1}, {0, 7, 0}, {7, 0, 0}}) {
    std::vector<runtime::NDArray> got = test::models::RunOn(*vm, {x, Ints64(given)});
    ASSERT_EQ(got.size(), 3u);
    int64_t begin = 0;
    for (size_t i = 0; i < 3; ++i) {
      ExpectSame(got[i],
                 StaticCall("strided_slice",
                            {{"begin", Ints{begin}},
                             {"end", Ints{begin + given[i]}},
                             {"axes", Ints{1}},
                             {"strides", Ints{1}}},
                            x),
                 "piece " + std::to_string(i) + " of " + Text(given));
      begin += given[i];
    }
  }
  // Sizes that do not sum to 7, a negative one, one past the dimension.
  for (const std::vector<int64_t>& given :
       std::vector<std::vector<int64_t>>{{3, 3, 3}, {-1, 4, 4}, {8, -1, 0}}) {
    EXPECT_NE(ErrorOf([&] {
                RunOn(*vm, {x, Ints64(given)});
              }).find("the size test.split_dims[0] read at run time is -1"),
              std::string::npos)
        << Text(given);
  }
}

// x resized by an operand (scales or sizes, of `axes`) and a roi given at run time, through
// resize_dims and image.resize_to, with the resize attributes `attrs`.
std::unique_ptr<runtime::Executor> ResizeAtRunTime(const std::vector<int64_t>& shape,
                                                   const std::string& operand, const Ints& axes,
                                                   Attrs attrs,
                                                   const std::string& policy = "stretch") {
  const int64_t k = static_cast<int64_t>(axes.size());
  Var data = test::In("data", shape);
  Var given = test::In(operand, {k}, operand == "sizes" ? kI64 : kF32);
  Var roi = test::In("roi", {2 * k}, kF32);
  Attrs by = {{"operand", operand}, {"axes", axes}, {"keep_aspect_ratio_policy", policy}};
  for (const auto& [name, value] : by.values()) attrs = attrs.With(name, value);
  Expr dims = MakeCall("resize_dims", {data, given}, by);
  Expr y = MakeCall("image.resize_to", {data, given, roi, SizesOf(dims, "resize_dims")}, attrs);
  return MakeExecutor(
      Compile(IRModule::FromFunction(MakeFunction({data, given, roi}, y)), {.opt_level = 3}));
}

void ExpectSameResize(const runtime::NDArray& got, const runtime::NDArray& want, bool exact,
                      const std::string& what) {
  ASSERT_EQ(got.Shape(), want.Shape()) << what;
  if (exact) {
    EXPECT_EQ(Values(got), Values(want)) << what;
  } else {
    test::ExpectClose(got, Values(want), 1e-5, what);
  }
}

TEST(ShapeFunction, ResizeByScalesGivenAtRunTimeMatchesTheConstantResize) {
  runtime::NDArray x = RandomArray({1, 2, 5, 7}, kF32, 9);
  const std::vector<double> roi = {0, 0, 0.1, 0.0, 1, 1, 0.9, 1.2};
  for (const std::string method : {"nearest", "linear", "cubic"}) {
    for (const std::string mode : {"half_pixel", "pytorch_half_pixel", "align_corners",
                                   "asymmetric", "tf_crop_and_resize", "half_pixel_symmetric"}) {
      Attrs attrs = {{"mode", method},
                     {"coordinate_transformation_mode", mode},
                     {"nearest_mode", std::string("round_prefer_ceil")},
                     {"extrapolation_value", -3.0}};
      std::unique_ptr<runtime::Executor> vm =
          ResizeAtRunTime({1, 2, 5, 7}, "scales", {0, 1, 2, 3}, attrs);
      for (auto [h, w] : std::vector<std::pair<float, float>>{{0.6f, 1.7f}, {2.0f, 0.5f}}) {
        const std::string what =
            method + " " + mode + " scales " + std::to_string(h) + "x" + std::to_string(w);
        runtime::NDArray got =
            RunOn(*vm, {x, test::ArrayOf({4}, kF32, {1, 1, h, w}), test::ArrayOf({8}, kF32, roi)});
        Attrs fixed = attrs
                          .With("size", Ints{static_cast<int64_t>(std::floor(5 * double(h))),
                                             static_cast<int64_t>(std::floor(7 * double(w)))})
                          .With("scales", Floats{h, w})
                          .With("roi", Floats{roi[2], roi[3], roi[6], roi[7]});
        ExpectSameResize(got, StaticCall("image.resize2d", fixed, x), method == "nearest", what);
      }
    }
  }
}

// Sizes of some axes, in their order, stretched or under an aspect policy (one scale for
// every listed axis, the output rounded half up); operands that do not fit are refused.
TEST(ShapeFunction, ResizeBySizesGivenAtRunTimeMatchesTheConstantResize) {
  runtime::NDArray x = RandomArray({2, 1, 6, 4}, kF32, 10);
  for (const std::string method : {"nearest", "linear"}) {
    Attrs attrs = {{"mode", method},
                   {"coordinate_transformation_mode", std::string("align_corners")}};
    struct Case {
      std::string policy;
      std::vector<int64_t> sizes;  // of axes (3, 2)
      Ints out;                    // (h, w)
      Floats scales;               // mapping coordinates (float64 at run time: exact ratios)
    };
    for (const Case& c : std::vector<Case>{{"stretch", {9, 4}, {4, 9}, {4 / 6.0, 9 / 4.0}},
                                           {"stretch", {1, 13}, {13, 1}, {13 / 6.0, 1 / 4.0}},
                                           {"not_larger", {10, 9}, {9, 6}, {1.5, 1.5}},
                                           {"not_smaller", {10, 9}, {15, 10}, {2.5, 2.5}}}) {
      std::unique_ptr<runtime::Executor> vm =
          ResizeAtRunTime({2, 1, 6, 4}, "sizes", {3, 2}, attrs, c.policy);
      const std::string what = method + " " + c.policy + " sizes " + Text(c.sizes);
      runtime::NDArray got =
          RunOn(*vm, {x, Ints64(c.sizes), test::ArrayOf({4}, kF32, {0, 0, 1, 1})});
      Attrs fixed = attrs.With("size", c.out).With("scales", c.scales);
      ExpectSameResize(got, StaticCall("image.resize2d", fixed, x), method == "nearest", what);
    }
  }
  std::unique_ptr<runtime::Executor> every =
      ResizeAtRunTime({2, 1, 6, 4}, "sizes", {0, 1, 2, 3}, {});
  std::unique_ptr<runtime::Executor> scaled = ResizeAtRunTime({2, 1, 6, 4}, "scales", {2, 3}, {});
  const runtime::NDArray roi4 = test::ArrayOf({4}, kF32, {0, 0, 1, 1});
  const runtime::NDArray roi8 = test::ArrayOf({8}, kF32, {0, 0, 0, 0, 1, 1, 1, 1});
  // A batch or channel resized, a negative size; a scale of 0, a negative or NaN one.
  for (const std::vector<int64_t>& sizes :
       std::vector<std::vector<int64_t>>{{3, 1, 6, 4}, {2, 2, 6, 4}, {2, 1, -1, 4}}) {
    EXPECT_NE(ErrorOf([&] {
                RunOn(*every, {x, Ints64(sizes), roi8});
              }).find("the size test.resize_dims[0] read at run time is -1"),
              std::string::npos)
        << Text(sizes);
  }
  for (double scale : {0.0, -2.0, std::nan("")}) {
    EXPECT_NE(ErrorOf([&] {
                RunOn(*scaled, {x, test::ArrayOf({2}, kF32, {scale, 2}), roi4});
              }).find("the size test.resize_dims[0] read at run time is -1"),
              std::string::npos)
        << scale;
  }
}

}  // namespace
}  // namespace loom::graph
