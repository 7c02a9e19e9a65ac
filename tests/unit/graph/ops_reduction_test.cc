// Reduction graph operators: output types (axes, negative axes, keepdims, every axis),
// errors naming the call, and each call compiled against a naive reduction.
#include <cmath>
#include <limits>

#include "graph_test_util.h"

namespace loom::graph {
namespace {

using runtime::NDArray;
using test::ErrorOf;
using test::In;
using test::GetFloat;
using test::RandomArray;
using test::RunCall;

const DataType kF32 = DataType::Float(32);

TEST(GraphOpsReduce, Types) {
  Var x = In("x", {2, 3, 4});
  EXPECT_EQ(MakeCall("sum", {x}).type().str(), "Tensor[(), float32]");
  EXPECT_EQ(MakeCall("mean", {x}, {{"axis", Ints{-1, 0}}}).type().str(), "Tensor[(3,), float32]");
  EXPECT_EQ(MakeCall("max", {x}, {{"axis", Ints{1}}, {"keepdims", int64_t{1}}}).type().str(),
            "Tensor[(2, 1, 4), float32]");
  EXPECT_EQ(MakeCall("argmax", {x}, {{"axis", int64_t{-1}}}).type().str(),
            "Tensor[(2, 3, 1), int64]");
  EXPECT_EQ(MakeCall("argmin", {x}, {{"keepdims", int64_t{0}}}).type().str(),
            "Tensor[(3, 4), int64]");
  EXPECT_EQ(MakeCall("sum", {x})->op->pattern, OpPattern::kCommReduce);
  std::string message = ErrorOf([&] { MakeCall("sum", {x}, {{"axis", Ints{3}}}, "s"); });
  EXPECT_NE(message.find("sum 's': "), std::string::npos) << message;
  EXPECT_NE(message.find("data Tensor[(2, 3, 4), float32]"), std::string::npos) << message;
  message = ErrorOf([&] { MakeCall("argmax", {x}, {{"axis", Ints{1}}}, "am"); });
  EXPECT_EQ(message, "argmax 'am': attribute 'axis' must be int, got ints [1]");
}

// x [2, 3, 4] reduced over axis 1 with `combine` from `init`, then `finish`.
std::vector<double> ReduceMiddle(const NDArray& x, double init,
                                 const std::function<double(double, double)>& combine,
                                 const std::function<double(double)>& finish) {
  std::vector<double> out;
  for (int n = 0; n < 2; ++n)
    for (int j = 0; j < 4; ++j) {
      double acc = init;
      for (int c = 0; c < 3; ++c) acc = combine(acc, GetFloat(x, n * 12 + c * 4 + j));
      out.push_back(finish(acc));
    }
  return out;
}

TEST(GraphOpsReduce, ReductionsMatchReference) {
  NDArray x = RandomArray({2, 3, 4}, kF32, 1);
  auto identity = [](double v) { return v; };
  auto plus = [](double a, double b) { return a + b; };
  struct Case {
    const char* op;
    std::vector<double> want;
  };
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<Case> cases = {
      {"sum", ReduceMiddle(x, 0, plus, identity)},
      {"mean", ReduceMiddle(x, 0, plus, [](double v) { return v / 3; })},
      {"max", ReduceMiddle(
                  x, -inf, [](double a, double b) { return std::max(a, b); }, identity)},
      {"min", ReduceMiddle(
                  x, inf, [](double a, double b) { return std::min(a, b); }, identity)},
      {"prod", ReduceMiddle(
                   x, 1, [](double a, double b) { return a * b; }, identity)},
      {"logsumexp", ReduceMiddle(
                        x, 0, [](double a, double b) { return a + std::exp(b); },
                        [](double v) { return std::log(v); })},
      {"l1_norm", ReduceMiddle(
                      x, 0, [](double a, double b) { return a + std::abs(b); }, identity)},
      {"l2_norm", ReduceMiddle(
                      x, 0, [](double a, double b) { return a + b * b; },
                      [](double v) { return std::sqrt(v); })},
      {"sum_square", ReduceMiddle(
                         x, 0, [](double a, double b) { return a + b * b; }, identity)},
  };
  for (const Case& c : cases) {
    Call call = MakeCall(c.op, {In("x", {2, 3, 4})}, {{"axis", Ints{-2}}});
    ASSERT_EQ(call.type().str(), "Tensor[(2, 4), float32]") << c.op;
    test::ExpectClose(RunCall(call, {x}), c.want, 1e-5, c.op);
  }
  // Every axis.
  double total = 0;
  for (int64_t i = 0; i < 24; ++i) total += GetFloat(x, i);
  test::ExpectClose(RunCall(MakeCall("sum", {In("x", {2, 3, 4})}), {x}), {total}, 1e-5, "sum all");
}

TEST(GraphOpsReduce, ArgReductionsPickTies) {
  NDArray x = test::ArrayOf({2, 4}, kF32, {1, 5, 5, 0, 3, 3, -1, -1});
  auto run = [&](const std::string& op, int64_t last) {
    return test::Values(RunCall(
        MakeCall(op, {In("x", {2, 4})},
                 {{"axis", int64_t{1}}, {"keepdims", int64_t{0}}, {"select_last_index", last}}),
        {x}));
  };
  EXPECT_EQ(run("argmax", 0), (std::vector<double>{1, 0}));
  EXPECT_EQ(run("argmax", 1), (std::vector<double>{2, 1}));
  EXPECT_EQ(run("argmin", 0), (std::vector<double>{3, 2}));
  EXPECT_EQ(run("argmin", 1), (std::vector<double>{3, 3}));
}

}  // namespace
}  // namespace loom::graph
