// Selections and sizes read at run time: topk against a stable sort of each row (constant k
// on the graph executor, a k read at run time by the VM), nonzero and non-maximum
// suppression against plain C++ references on random inputs, and the errors: a size out of
// its bound, the graph executor asked to run one, a program that uses a size before reading
// it.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>

#include "compile_test_models.h"
#include "graph_test_util.h"
#include "loom/graph/compile.h"
#include "loom/runtime/vm.h"

namespace loom::graph {
namespace {

using test::ErrorOf;
using test::GetFloat;
using test::GetInt;
using test::RandomArray;
using test::models::RunOn;

const DataType kF32 = DataType::Float(32);
const DataType kI64 = DataType::Int(64);

runtime::NDArray Scalar1(int64_t value) { return test::ArrayOf({1}, kI64, {double(value)}); }

// Row-major strides of `shape`.
std::vector<int64_t> Strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

// Checks topk's values and indices of x along `axis` against a stable sort of each row.
void ExpectTopK(const runtime::NDArray& x, int64_t k, int axis, bool largest,
                const runtime::NDArray& values, const runtime::NDArray& indices,
                const std::string& what) {
  std::vector<int64_t> shape = x.Shape(), out_shape = shape;
  out_shape[static_cast<size_t>(axis)] = k;
  ASSERT_EQ(values.Shape(), out_shape) << what;
  ASSERT_EQ(indices.Shape(), out_shape) << what;
  const std::vector<int64_t> in_strides = Strides(shape), out_strides = Strides(out_shape);
  const int64_t n = shape[static_cast<size_t>(axis)];
  const int64_t rows = x.NumElements() / n;
  for (int64_t row = 0; row < rows; ++row) {
    // The row's first element, in x and in the outputs.
    int64_t rest = row, in_base = 0, out_base = 0;
    for (size_t d = shape.size(); d-- > 0;) {
      if (static_cast<int>(d) == axis) continue;
      in_base += rest % shape[d] * in_strides[d];
      out_base += rest % shape[d] * out_strides[d];
      rest /= shape[d];
    }
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    auto value = [&](int64_t i) { return GetFloat(x, in_base + i * in_strides[axis]); };
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return largest ? value(a) > value(b) : value(a) < value(b);
    });
    for (int64_t j = 0; j < k; ++j) {
      const int64_t at = out_base + j * out_strides[axis];
      ASSERT_EQ(GetInt(indices, at), order[static_cast<size_t>(j)])
          << what << ", row " << row << ", rank " << j;
      ASSERT_EQ(GetFloat(values, at), value(order[static_cast<size_t>(j)])) << what;
    }
  }
}

// Random shapes, axes, k and directions, on data with many ties (small integers): the
// values and indices of a stable sort, ties in index order.
TEST(Selection, TopKMatchesAStableSortOfEachRow) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 12; ++trial) {
    const int rank = 1 + trial % 3;
    std::vector<int64_t> shape;
    for (int d = 0; d < rank; ++d) shape.push_back(1 + static_cast<int64_t>(rng() % 9));
    const int axis = static_cast<int>(rng() % static_cast<unsigned>(rank));
    const int64_t n = shape[static_cast<size_t>(axis)];
    const int64_t k = 1 + static_cast<int64_t>(rng() % static_cast<unsigned>(n));
    const bool largest = trial % 2 == 0;
    runtime::NDArray x = runtime::NDArray::Empty(shape, kF32);
    for (int64_t i = 0; i < x.NumElements(); ++i) test::SetValue(x, i, double(rng() % 5));
    Var input = test::In("x", shape);
    Expr top = MakeCall("topk", {input},
                        {{"k", k}, {"axis", int64_t{axis - rank}}, {"largest", int64_t{largest}}});
    Function main = MakeFunction({input}, top);
    CompiledModel compiled = Compile(IRModule::FromFunction(main), {.opt_level = 3});
    EXPECT_EQ(compiled.executor, "graph");
    std::vector<runtime::NDArray> out = RunOn(*MakeExecutor(compiled), {x});
    ExpectTopK(x, k, axis, largest, out.at(0), out.at(1),
               "trial " + std::to_string(trial) + " " + runtime::ShapeString(shape) + " axis " +
                   std::to_string(axis) + " k " + std::to_string(k));
  }
}

// x [3, n] and k, a tensor read at run time: topk_like of dims_of_value(k).
CompiledModel TopKOfRunTimeK(PrimExpr n) {
  Var x = MakeVar("x", TensorType(std::vector<PrimExpr>{IntImm(kI64, 3), n}, kF32));
  Var k = test::In("k", {1}, kI64);
  Expr dims = MakeCall("dims_of_value", {k, x},
                       {{"size", std::string("test.k")}, {"like_dim", int64_t{1}}});
  Expr top = MakeCall("topk_like", {x, dims}, {{"axis", int64_t{1}}, {"largest", int64_t{1}}});
  return Compile(IRModule::FromFunction(MakeFunction({x, k}, top)), {});
}

TEST(Selection, ASizeReadAtRunTimeGivesEachRunItsOwnShape) {
  CompiledModel compiled = TopKOfRunTimeK(IntImm(kI64, 10));
  EXPECT_EQ(compiled.executor, "vm");  // chosen: a size only a run knows
  std::unique_ptr<runtime::Executor> vm = MakeExecutor(compiled);
  runtime::NDArray x = RandomArray({3, 10}, kF32, 3);
  for (int64_t k : {4, 0, 10, 1}) {
    std::vector<runtime::NDArray> out = RunOn(*vm, {x, Scalar1(k)});
    ExpectTopK(x, k, 1, true, out.at(0), out.at(1), "k = " + std::to_string(k));
  }
  EXPECT_EQ(ErrorOf([&] { RunOn(*vm, {x, Scalar1(11)}); }),
            "VirtualMachine: the size test.k read at run time is 11, but it must lie in [0, 10] "
            "(10 at these inputs)");
  EXPECT_NE(ErrorOf([&] { RunOn(*vm, {x, Scalar1(-1)}); }).find("test.k read at run time is -1"),
            std::string::npos);
  // The bound may itself be symbolic: x's second dimension n.
  loom::Var n = SizeVar("n", kI64);
  std::unique_ptr<runtime::Executor> symbolic = MakeExecutor(TopKOfRunTimeK(n));
  runtime::NDArray wide = RandomArray({3, 17}, kF32, 4);
  std::vector<runtime::NDArray> out = RunOn(*symbolic, {wide, Scalar1(17)});
  ExpectTopK(wide, 17, 1, true, out.at(0), out.at(1), "n = 17, k = 17");
  EXPECT_NE(ErrorOf([&] { RunOn(*symbolic, {RandomArray({3, 5}, kF32, 5), Scalar1(6)}); })
                .find("must lie in [0, 5] (n at these inputs)"),
            std::string::npos);
}

TEST(Selection, TheGraphExecutorRefusesSizesReadAtRunTime) {
  Var x = test::In("x", {3, 10});
  Var k = test::In("k", {1}, kI64);
  Expr dims = MakeCall("dims_of_value", {k, x},
                       {{"size", std::string("test.k")}, {"like_dim", int64_t{1}}}, "topk.k");
  Expr top = MakeCall("topk_like", {x, dims}, {{"axis", int64_t{1}}});
  IRModule module = IRModule::FromFunction(MakeFunction({x, k}, top));
  EXPECT_EQ(
      ErrorOf([&] { Compile(module, {.executor = "graph"}); }),
      "Compile: dims_of_value 'topk.k' computes Tensor[(test.k, 0), int64], a size known only "
      "when the model runs; the graph executor needs constant shapes: compile for the "
      "virtual machine (executor \"vm\" or \"auto\")");
}

// nonzero(x) of x with about a third of its elements zero (all of them in one run), against
// the row-major positions of the non-zero ones.
TEST(Selection, NonZeroListsTheNonZeroPositionsInRowMajorOrder) {
  Var x = test::In("x", {4, 3, 5});
  Expr count = MakeCall("sum", {MakeCall("cast", {MakeCall("not_equal", {x, MakeConstant(test::ArrayOf({}, kF32, {0}))})}, {{"dtype", std::string("int64")}})},
                        {{"axis", Ints{}}, {"keepdims", int64_t{0}}});
  Expr dims = MakeCall("dims_of_value", {count, x}, {{"size", std::string("test.count")}});
  Function main = MakeFunction({x}, MakeCall("nonzero", {x, dims}));
  std::unique_ptr<runtime::Executor> vm =
      MakeExecutor(Compile(IRModule::FromFunction(main), {.opt_level = 3}));
  std::mt19937 rng(11);
  for (int trial = 0; trial < 4; ++trial) {
    runtime::NDArray input = runtime::NDArray::Empty({4, 3, 5}, kF32);
    std::vector<int64_t> want;  // flat positions
    for (int64_t i = 0; i < 60; ++i) {
      const bool zero = trial == 3 || rng() % 3 == 0;
      test::SetValue(input, i, zero ? 0.0 : 1.0 + double(rng() % 7));
      if (!zero) want.push_back(i);
    }
    runtime::NDArray got = RunOn(*vm, {input}).at(0);
    const int64_t count_got = static_cast<int64_t>(want.size());
    ASSERT_EQ(got.Shape(), (std::vector<int64_t>{3, count_got})) << "trial " << trial;
    for (int64_t j = 0; j < count_got; ++j) {
      const int64_t flat = want[static_cast<size_t>(j)];
      EXPECT_EQ(GetInt(got, j), flat / 15);
      EXPECT_EQ(GetInt(got, count_got + j), flat / 5 % 3);
      EXPECT_EQ(GetInt(got, 2 * count_got + j), flat % 5);
    }
  }
}

// ONNX NonMaxSuppression over corner boxes, as its reference implementation states it.
std::vector<std::array<int64_t, 3>> ReferenceNms(const runtime::NDArray& boxes,
                                                 const runtime::NDArray& scores,
                                                 int64_t max_out, double iou, double floor) {
  const std::vector<int64_t> b = boxes.Shape(), s = scores.Shape();
  auto box = [&](int64_t batch, int64_t i, int c) {
    return GetFloat(boxes, (batch * b[1] + i) * 4 + c);
  };
  auto overlaps = [&](int64_t batch, int64_t p, int64_t q) {
    auto extent = [&](int64_t i) {
      return std::array<double, 4>{std::min(box(batch, i, 1), box(batch, i, 3)),
                                   std::max(box(batch, i, 1), box(batch, i, 3)),
                                   std::min(box(batch, i, 0), box(batch, i, 2)),
                                   std::max(box(batch, i, 0), box(batch, i, 2))};
    };
    auto e = extent(p), f = extent(q);
    double w = std::min(e[1], f[1]) - std::max(e[0], f[0]);
    double h = std::min(e[3], f[3]) - std::max(e[2], f[2]);
    if (w <= 0 || h <= 0) return false;
    double a = (e[1] - e[0]) * (e[3] - e[2]), c = (f[1] - f[0]) * (f[3] - f[2]);
    double u = a + c - w * h;
    if (a <= 0 || c <= 0 || u <= 0) return false;
    return w * h / u > iou;
  };
  std::vector<std::array<int64_t, 3>> selected;
  for (int64_t batch = 0; batch < s[0]; ++batch) {
    for (int64_t cls = 0; cls < s[1]; ++cls) {
      auto score = [&](int64_t i) { return GetFloat(scores, (batch * s[1] + cls) * s[2] + i); };
      std::vector<int64_t> order;
      for (int64_t i = 0; i < s[2]; ++i) {
        if (score(i) > floor) order.push_back(i);
      }
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t p, int64_t q) { return score(p) > score(q); });
      std::vector<int64_t> kept;
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= max_out) break;
        if (std::none_of(kept.begin(), kept.end(),
                         [&](int64_t j) { return overlaps(batch, i, j); })) {
          kept.push_back(i);
          selected.push_back({batch, cls, i});
        }
      }
    }
  }
  return selected;
}

TEST(Selection, NonMaxSuppressionRefusesScoresThatDoNotFitTheBoxes) {
  auto nms = [](std::vector<int64_t> boxes, std::vector<int64_t> scores) {
    return ErrorOf([&] {
      MakeCall("vision.non_max_suppression",
               {test::In("boxes", boxes), test::In("scores", scores), test::In("m", {1}, kI64),
                test::In("iou", {1}), test::In("floor", {1})},
               {}, "nms");
    });
  };
  EXPECT_NE(nms({1, 10, 4}, {1, 2, 5})
                .find("boxes must be [batches, boxes, 4] and scores "
                      "[batches, classes, boxes], got (1, 10, 4) and "
                      "(1, 2, 5)"),
            std::string::npos)
      << nms({1, 10, 4}, {1, 2, 5});
  EXPECT_NE(nms({2, 10, 4}, {1, 2, 10}).find("boxes must be"), std::string::npos);
  EXPECT_NE(nms({1, 10, 2}, {1, 2, 10}).find("boxes must be"), std::string::npos);
}

TEST(Selection, NonMaxSuppressionMatchesTheReferenceOnRandomBoxes) {
  Var boxes = test::In("boxes", {2, 40, 4});
  Var scores = test::In("scores", {2, 3, 40});
  Var max_out = test::In("max_out", {1}, kI64);
  Var iou = test::In("iou", {1});
  Var floor = test::In("floor", {1});
  Expr nms = MakeCall("vision.non_max_suppression", {boxes, scores, max_out, iou, floor});
  Expr selected = MakeTupleGetItem(nms, 0);
  Expr dims = MakeCall("dims_of_value", {MakeTupleGetItem(nms, 1), selected},
                       {{"size", std::string("test.kept")}, {"like_dim", int64_t{0}}});
  Expr kept = MakeCall("slice_like", {selected, dims},
                       {{"begin", Ints{0}}, {"end", Ints{0}}, {"axes", Ints{0}}, {"like_dims", Ints{0}}});
  Function main = MakeFunction({boxes, scores, max_out, iou, floor}, kept);
  std::unique_ptr<runtime::Executor> vm = MakeExecutor(Compile(IRModule::FromFunction(main), {}));
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> corner(0, 10), size(0.5, 4);
  for (int trial = 0; trial < 5; ++trial) {
    runtime::NDArray b = runtime::NDArray::Empty({2, 40, 4}, kF32);
    for (int64_t i = 0; i < 80; ++i) {
      double y = corner(rng), x = corner(rng);
      // Either corner first, as ONNX allows.
      std::array<double, 4> v = {y, x, y + size(rng), x + size(rng)};
      if (rng() % 2) std::swap(v[0], v[2]);
      for (int c = 0; c < 4; ++c) test::SetValue(b, i * 4 + c, v[static_cast<size_t>(c)]);
    }
    runtime::NDArray s = runtime::NDArray::Empty({2, 3, 40}, kF32);
    for (int64_t i = 0; i < 240; ++i) test::SetValue(s, i, double(rng() % 20) / 20);
    const int64_t limit = trial == 4 ? 0 : 3 + trial * 4;
    const double overlap = 0.2 + 0.15 * trial, least = trial * 0.1;
    std::vector<std::array<int64_t, 3>> want = ReferenceNms(b, s, limit, float(overlap), float(least));
    runtime::NDArray got = RunOn(*vm, {b, s, Scalar1(limit), test::ArrayOf({1}, kF32, {overlap}),
                                       test::ArrayOf({1}, kF32, {least})})
                               .at(0);
    ASSERT_EQ(got.Shape(), (std::vector<int64_t>{static_cast<int64_t>(want.size()), 3}))
        << "trial " << trial;
    for (size_t r = 0; r < want.size(); ++r) {
      for (int c = 0; c < 3; ++c) {
        EXPECT_EQ(GetInt(got, static_cast<int64_t>(r) * 3 + c), want[r][static_cast<size_t>(c)])
            << "trial " << trial << ", row " << r;
      }
    }
  }
}

// load_size is checked like every instruction: its variable must be one no input gives, and
// no instruction may use a size before it is read.
TEST(Selection, AProgramThatUsesASizeBeforeReadingItIsRefused) {
  CompiledModel compiled = TopKOfRunTimeK(IntImm(kI64, 10));
  nlohmann::json program = nlohmann::json::parse(compiled.graph_json);
  nlohmann::json& code = program["instructions"];
  auto load = std::find_if(code.begin(), code.end(),
                           [](const nlohmann::json& insn) { return insn["op"] == "load_size"; });
  ASSERT_NE(load, code.end());
  auto refuse = [&](const nlohmann::json& changed) {
    return ErrorOf(
        [&] { runtime::MakeVmModel(compiled.kernels, changed.dump(), nullptr, 0, nullptr); });
  };
  nlohmann::json without = program;
  without["instructions"].erase(static_cast<size_t>(load - code.begin()));
  EXPECT_NE(refuse(without).find("uses size variable 'test.k' before any input or load_size "
                                 "gives its value"),
            std::string::npos)
      << refuse(without);
  nlohmann::json twice = program;
  twice["size_vars"].push_back("n");
  twice["inputs"][0]["shape"][1] = {{"var", 1}};
  twice["instructions"][static_cast<size_t>(load - code.begin())]["var"] = 1;
  EXPECT_NE(refuse(twice).find("loads size variable 'n', which an input's dimension gives"),
            std::string::npos)
      << refuse(twice);
}

}  // namespace
}  // namespace loom::graph
