// Elementwise graph operators with attributes, comparisons, logical operators, mod and
// where: types, errors naming the call, and each call compiled against a formula.
#include <cmath>

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
const DataType kBool = DataType::Bool();

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Compiles `op` on x [2, 3, 5] (random, seed 1) and compares with f of each element.
void ExpectUnary(const std::string& op, Attrs attrs, const std::function<double(double)>& f,
                 double tolerance = 1e-5) {
  Call call = MakeCall(op, {In("x", {2, 3, 5})}, std::move(attrs));
  EXPECT_EQ(call.type().str(), "Tensor[(2, 3, 5), float32]") << op;
  EXPECT_EQ(call->op->pattern, OpPattern::kElemWise) << op;
  NDArray x = RandomArray({2, 3, 5}, kF32, 1);
  std::vector<double> want;
  for (int64_t i = 0; i < x.NumElements(); ++i) want.push_back(f(GetFloat(x, i)));
  test::ExpectClose(RunCall(call, {x}), want, tolerance, op);
}

TEST(GraphOpsMisc, ActivationsMatchFormulas) {
  ExpectUnary("nn.leaky_relu", {{"alpha", 0.1}}, [](double v) { return v < 0 ? 0.1 * v : v; });
  ExpectUnary("nn.elu", {{"alpha", 0.5}},
              [](double v) { return v < 0 ? 0.5 * (std::exp(v) - 1) : v; });
  const double alpha = 1.67326319217681884765625, gamma = 1.05070102214813232421875;
  ExpectUnary("nn.selu", {},
              [&](double v) { return gamma * (v < 0 ? alpha * (std::exp(v) - 1) : v); });
  ExpectUnary("nn.softplus", {}, [](double v) { return std::log1p(std::exp(v)); });
  ExpectUnary("nn.hard_sigmoid", {{"alpha", 0.25}},
              [](double v) { return std::clamp(0.25 * v + 0.5, 0.0, 1.0); });
  ExpectUnary("nn.hard_swish", {}, [](double v) { return v * std::clamp(v / 6 + 0.5, 0.0, 1.0); });
  ExpectUnary("clip", {{"a_min", -1.0}, {"a_max", int64_t{2}}},
              [](double v) { return std::clamp(v, -1.0, 2.0); });
  ExpectUnary(
      "nn.dropout", {{"rate", 0.3}}, [](double v) { return v; }, 0);
}

TEST(GraphOpsMisc, AttributeErrorsNameTheCall) {
  EXPECT_EQ(ErrorOf([] {
              MakeCall("clip", {In("x", {2})}, {{"a_min", 0.0}}, "c");
            }),
            "clip 'c': the required attribute 'a_max' (float: upper bound) is missing");
  std::string message = ErrorOf([] {
    MakeCall("clip", {In("x", {2})}, {{"a_min", 1.0}, {"a_max", 0.0}}, "c");
  });
  EXPECT_TRUE(Has(message, "clip 'c': ")) << message;
  EXPECT_TRUE(Has(message, "x Tensor[(2,), float32]")) << message;
  message = ErrorOf([] {
    MakeCall("cast", {In("x", {2})}, {{"dtype", std::string("floot32")}}, "k");
  });
  EXPECT_TRUE(Has(message, "cast 'k': cannot parse data type 'floot32'")) << message;
  message = ErrorOf([] { MakeCall("nn.elu", {In("x", {2}, DataType::Int(32))}, {}, "e"); });
  EXPECT_TRUE(Has(message, "nn.elu 'e': ")) << message;
  EXPECT_TRUE(Has(message, "x Tensor[(2,), int32]")) << message;
}

TEST(GraphOpsMisc, CastConverts) {
  Call cast = MakeCall("cast", {In("x", {6})}, {{"dtype", std::string("int64")}});
  EXPECT_EQ(cast.type().str(), "Tensor[(6,), int64]");
  NDArray x = test::ArrayOf({6}, kF32, {-2.7, -0.5, 0, 0.5, 1.9, 3});
  EXPECT_EQ(test::Values(RunCall(cast, {x})), (std::vector<double>{-2, 0, 0, 0, 1, 3}));
}

TEST(GraphOpsMisc, PreluBroadcastsTheSlope) {
  Call prelu = MakeCall("nn.prelu", {In("x", {2, 3, 2}), In("slope", {3, 1})});
  EXPECT_EQ(prelu.type().str(), "Tensor[(2, 3, 2), float32]");
  NDArray x = RandomArray({2, 3, 2}, kF32, 2), slope = RandomArray({3, 1}, kF32, 3);
  std::vector<double> want;
  for (int64_t i = 0; i < 12; ++i) {
    double v = GetFloat(x, i);
    want.push_back(v < 0 ? v * GetFloat(slope, (i / 2) % 3) : v);
  }
  test::ExpectClose(RunCall(prelu, {x, slope}), want, 1e-6, "prelu");
}

TEST(GraphOpsMisc, BroadcastErrorsNameTheCallAndShapes) {
  std::string message = ErrorOf([] {
    MakeCall("nn.prelu", {In("x", {2, 3}), In("slope", {4})}, {}, "pr");
  });
  EXPECT_TRUE(Has(message, "nn.prelu 'pr': ")) << message;
  EXPECT_TRUE(Has(message, "x Tensor[(2, 3), float32], slope Tensor[(4,), float32]")) << message;
  // Float remainders need fmod = 1 (C fmod); the integer convention is the divisor's sign.
  message = ErrorOf([] { MakeCall("mod", {In("a", {2}), In("b", {2})}, {}, "m"); });
  EXPECT_TRUE(Has(message, "mod 'm': ")) << message;
  EXPECT_TRUE(Has(message, "fmod")) << message;
}

TEST(GraphOpsMisc, ComparisonsGiveBools) {
  NDArray a = test::ArrayOf({2, 3}, kF32, {1, 2, 3, 4, 5, 6});
  NDArray b = test::ArrayOf({3}, kF32, {2, 2, 5});
  struct Case {
    const char* op;
    std::vector<double> want;
  };
  for (const Case& c :
       {Case{"equal", {0, 1, 0, 0, 0, 0}}, Case{"not_equal", {1, 0, 1, 1, 1, 1}},
        Case{"less", {1, 0, 1, 0, 0, 0}}, Case{"less_equal", {1, 1, 1, 0, 0, 0}},
        Case{"greater", {0, 0, 0, 1, 1, 1}}, Case{"greater_equal", {0, 1, 0, 1, 1, 1}}}) {
    Call call = MakeCall(c.op, {In("a", {2, 3}), In("b", {3})});
    EXPECT_EQ(call.type().str(), "Tensor[(2, 3), bool]") << c.op;
    EXPECT_EQ(call->op->pattern, OpPattern::kBroadcast) << c.op;
    EXPECT_EQ(test::Values(RunCall(call, {a, b})), c.want) << c.op;
  }
  std::string message = ErrorOf([] {
    MakeCall("less", {In("a", {2, 3}), In("b", {2})}, {}, "lt");
  });
  EXPECT_TRUE(Has(message, "less 'lt': ")) << message;
  EXPECT_TRUE(Has(message, "a Tensor[(2, 3), float32], b Tensor[(2,), float32]")) << message;
}

TEST(GraphOpsMisc, LogicalOperators) {
  NDArray a = test::ArrayOf({4}, kBool, {0, 0, 1, 1});
  NDArray b = test::ArrayOf({4}, kBool, {0, 1, 0, 1});
  auto run = [&](const std::string& op) {
    return test::Values(RunCall(MakeCall(op, {In("a", {4}, kBool), In("b", {4}, kBool)}), {a, b}));
  };
  EXPECT_EQ(run("logical_and"), (std::vector<double>{0, 0, 0, 1}));
  EXPECT_EQ(run("logical_or"), (std::vector<double>{0, 1, 1, 1}));
  EXPECT_EQ(run("logical_xor"), (std::vector<double>{0, 1, 1, 0}));
  EXPECT_EQ(test::Values(RunCall(MakeCall("logical_not", {In("a", {4}, kBool)}), {a})),
            (std::vector<double>{1, 1, 0, 0}));
  std::string message = ErrorOf([] {
    MakeCall("logical_and", {In("a", {4}), In("b", {4})}, {}, "and");
  });
  EXPECT_TRUE(Has(message, "logical_and 'and': ")) << message;
}

TEST(GraphOpsMisc, ModAndWhere) {
  const DataType i32 = DataType::Int(32);
  NDArray a = test::ArrayOf({4}, i32, {7, -7, 7, -7});
  NDArray b = test::ArrayOf({4}, i32, {3, 3, -3, -3});
  EXPECT_EQ(test::Values(RunCall(MakeCall("mod", {In("a", {4}, i32), In("b", {4}, i32)}), {a, b})),
            (std::vector<double>{1, 2, -2, -1}));
  NDArray fa = test::ArrayOf({2}, kF32, {7.5, -7.5});
  NDArray fb = test::ArrayOf({2}, kF32, {2, 2});
  EXPECT_EQ(test::Values(RunCall(
                MakeCall("mod", {In("a", {2}), In("b", {2})}, {{"fmod", int64_t{1}}}), {fa, fb})),
            (std::vector<double>{1.5, -1.5}));

  Call where = MakeCall("where", {In("c", {2, 1}, kBool), In("a", {3}), In("b", {2, 3})});
  EXPECT_EQ(where.type().str(), "Tensor[(2, 3), float32]");
  NDArray cond = test::ArrayOf({2, 1}, kBool, {1, 0});
  NDArray x = test::ArrayOf({3}, kF32, {1, 2, 3});
  NDArray y = test::ArrayOf({2, 3}, kF32, {4, 5, 6, 7, 8, 9});
  EXPECT_EQ(test::Values(RunCall(where, {cond, x, y})), (std::vector<double>{1, 2, 3, 7, 8, 9}));
  std::string message = ErrorOf([] {
    MakeCall("where", {In("c", {2}, kF32), In("a", {2}), In("b", {2})}, {}, "w");
  });
  EXPECT_TRUE(Has(message, "where 'w': ")) << message;
}

// Every registered operator (these files' and the other families') is complete: described,
// typed, computed, each input named and each attribute documented.
TEST(GraphOpsRegistry, EveryOperatorIsComplete) {
  std::vector<const OpDef*> ops = OpRegistry::List();
  EXPECT_GT(ops.size(), 90u);
  for (const OpDef* op : ops) {
    EXPECT_FALSE(op->description.empty()) << op->name;
    EXPECT_TRUE(op->type_relation) << op->name;
    // Every operator computes through TE, but the control flow the executor runs itself.
    EXPECT_EQ(static_cast<bool>(op->compute), op->name != "loop") << op->name;
    EXPECT_FALSE(op->inputs.empty()) << op->name;
    for (const AttrField& attr : op->attrs)
      EXPECT_FALSE(attr.doc.empty()) << op->name << "." << attr.name;
  }
}

}  // namespace
}  // namespace loom::graph
