// The math converters (ops_math.cc): each ONNX operator's semantic corners -- broadcasting,
// integer rules, opset-dependent forms, negative axes, optional outputs -- run compiled
// against references computed here.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <set>

#include "onnx_test_util.h"

namespace loom::frontend::onnx::test {
namespace {

const DataType kI32 = DataType::Int(32);
const DataType kBool = DataType::Bool();

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// f applied to every element of x, in an array of `dtype` (x's by default).
runtime::NDArray Map(const runtime::NDArray& x, const std::function<double(double)>& f,
                     std::optional<DataType> dtype = std::nullopt) {
  runtime::NDArray y = runtime::NDArray::Empty(x.Shape(), dtype.value_or(x.dtype()));
  for (int64_t i = 0; i < x.NumElements(); ++i) SetValue(y, i, f(GetFloat(x, i)));
  return y;
}

// f(a[i, j], b[j]) for a of shape [rows, columns] and b of shape [columns].
runtime::NDArray RowBroadcast(const runtime::NDArray& a, const runtime::NDArray& b,
                              const std::function<double(double, double)>& f,
                              std::optional<DataType> dtype = std::nullopt) {
  runtime::NDArray y = runtime::NDArray::Empty(a.Shape(), dtype.value_or(a.dtype()));
  int64_t columns = b.NumElements();
  for (int64_t i = 0; i < a.NumElements(); ++i) {
    SetValue(y, i, f(GetFloat(a, i), GetFloat(b, i % columns)));
  }
  return y;
}

// A reduction of x over `axes` (dimension indices): `init`, `combine` per element, then
// `finish(accumulated, count)`.
runtime::NDArray Reduce(const runtime::NDArray& x, const std::set<int>& axes, bool keepdims,
                        double init, const std::function<double(double, double)>& combine,
                        const std::function<double(double, int64_t)>& finish) {
  std::vector<int64_t> shape = x.Shape(), out_shape, kept_shape;
  for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
    bool reduced = axes.count(d) != 0;
    kept_shape.push_back(reduced ? 1 : shape[d]);
    if (!reduced || keepdims) out_shape.push_back(reduced ? 1 : shape[d]);
  }
  int64_t outputs = 1;
  for (int64_t d : kept_shape) outputs *= d;
  std::vector<double> acc(static_cast<size_t>(outputs), init);
  std::vector<int64_t> counts(static_cast<size_t>(outputs), 0);
  for (int64_t i = 0; i < x.NumElements(); ++i) {
    int64_t rest = i, out = 0, stride = 1;
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      int64_t index = rest % shape[d];
      rest /= shape[d];
      if (!axes.count(d)) out += index * stride;
      stride *= kept_shape[d];
    }
    acc[out] = combine(acc[out], GetFloat(x, i));
    ++counts[out];
  }
  runtime::NDArray y = runtime::NDArray::Empty(out_shape, x.dtype());
  for (int64_t k = 0; k < outputs; ++k) SetValue(y, k, finish(acc[k], counts[k]));
  return y;
}

double Sum(double a, double b) { return a + b; }
double Same(double v, int64_t) { return v; }

TEST(OnnxMath, BinaryArithmeticBroadcasts) {
  runtime::NDArray a = RandomArray({2, 3}, kF32, 1);
  runtime::NDArray b = ArrayOf({3}, kF32, {1.5, -2, 0.25});
  ModelBuilder model;
  model.Input("a", {2, 3}).Input("b", {3});
  model.Node("Add", {"a", "b"}, {"s"}).Node("Sub", {"b", "a"}, {"d"});
  model.Node("Mul", {"a", "b"}, {"m"}).Node("Div", {"a", "b"}, {"q"});
  model.Output("s").Output("d").Output("m").Output("q");
  ExpectOutputs(model, {a, b},
                {RowBroadcast(a, b, [](double x, double y) { return x + y; }),
                 RowBroadcast(a, b, [](double x, double y) { return y - x; }),
                 RowBroadcast(a, b, [](double x, double y) { return x * y; }),
                 RowBroadcast(a, b, [](double x, double y) { return x / y; })});
}

TEST(OnnxMath, IntegerDivisionTruncatesAndModFollowsTheDivisorUnlessFmod) {
  runtime::NDArray a = ArrayOf({4}, kI32, {-7, 7, -7, 7});
  runtime::NDArray b = ArrayOf({4}, kI32, {2, -2, -2, 2});
  runtime::NDArray c = ArrayOf({2}, kF32, {-7.5, 7.5});
  runtime::NDArray d = ArrayOf({2}, kF32, {2, -2});
  ModelBuilder model;
  model.Input("a", {4}, kI32).Input("b", {4}, kI32).Input("c", {2}).Input("d", {2});
  model.Node("Div", {"a", "b"}, {"q"});
  model.Node("Mod", {"a", "b"}, {"r"});
  model.Node("Mod", {"a", "b"}, {"t"}, {IntAttr("fmod", 1)});
  model.Node("Mod", {"c", "d"}, {"f"}, {IntAttr("fmod", 1)});
  model.Output("q").Output("r").Output("t").Output("f");
  ExpectOutputs(model, {a, b, c, d},
                {ArrayOf({4}, kI32, {-3, -3, 3, 3}), ArrayOf({4}, kI32, {1, -1, -1, 1}),
                 ArrayOf({4}, kI32, {-1, 1, -1, 1}), ArrayOf({2}, kF32, {-1.5, 1.5})});
}

TEST(OnnxMath, FloatModWithoutFmodIsAnErrorNamingTheNode) {
  ModelBuilder model;
  model.Input("a", {2}).Input("b", {2}).Node("Mod", {"a", "b"}, {"r"}, {}, "mod_1").Output("r");
  std::string error = ErrorOf([&] { model.Import(); });
  EXPECT_TRUE(Contains(error, "'mod_1'")) << error;
  EXPECT_TRUE(Contains(error, "fmod = 1")) << error;
}

TEST(OnnxMath, BeforeOpset7BroadcastingIsOptInAndAlignsAtAxis) {
  runtime::NDArray a = RandomArray({2, 3, 2}, kF32, 2);
  runtime::NDArray b = ArrayOf({3}, kF32, {10, 20, 30});
  runtime::NDArray c = ArrayOf({2}, kF32, {-1, 2});
  ModelBuilder model(6);
  model.Input("a", {2, 3, 2}).Input("b", {3}).Input("c", {2});
  model.Node("Add", {"a", "b"}, {"s"}, {IntAttr("broadcast", 1), IntAttr("axis", 1)});
  model.Node("Mul", {"a", "c"}, {"m"}, {IntAttr("broadcast", 1)});
  model.Output("s").Output("m");
  runtime::NDArray sum = Map(a, [](double v) { return v; });
  runtime::NDArray product = Map(a, [](double v) { return v; });
  for (int64_t i = 0; i < a.NumElements(); ++i) {
    SetValue(sum, i, GetFloat(a, i) + GetFloat(b, (i / 2) % 3));
    SetValue(product, i, GetFloat(a, i) * GetFloat(c, i % 2));
  }
  ExpectOutputs(model, {a, b, c}, {sum, product});

  ModelBuilder strict(6);
  strict.Input("a", {2, 3}).Input("b", {3}).Node("Add", {"a", "b"}, {"s"}, {}, "add_0");
  strict.Output("s");
  std::string error = ErrorOf([&] { strict.Import(); });
  EXPECT_TRUE(Contains(error, "'add_0'") && Contains(error, "broadcast = 1")) << error;
}

TEST(OnnxMath, PowCastsTheExponentAndTakesIntegerBases) {
  runtime::NDArray base = ArrayOf({3}, kF32, {2, -1.5, 0.5});
  runtime::NDArray exponent = ArrayOf({3}, kI64, {3, 2, -2});
  runtime::NDArray int_base = ArrayOf({4}, kI32, {2, 3, -2, 5});
  runtime::NDArray int_exponent = ArrayOf({4}, kI32, {3, 2, 3, 0});
  ModelBuilder model(15);
  model.Input("x", {3}).Input("e", {3}, kI64).Input("i", {4}, kI32).Input("j", {4}, kI32);
  model.Node("Pow", {"x", "e"}, {"p"}).Node("Pow", {"i", "j"}, {"q"});
  model.Output("p").Output("q");
  ExpectOutputs(model, {base, exponent, int_base, int_exponent},
                {ArrayOf({3}, kF32, {8, 2.25, 4}), ArrayOf({4}, kI32, {8, 9, -8, 1})});
}

TEST(OnnxMath, PowByAConstantTwoIsAProduct) {
  runtime::NDArray x = RandomArray({2, 3}, kF32, 17);
  ModelBuilder model;
  model.Input("x", {2, 3}).Initializer("two", ArrayOf({1}, kF32, {2}));
  model.Initializer("three", ArrayOf({}, kF32, {3}));
  model.Node("Pow", {"x", "two"}, {"square"}).Node("Pow", {"x", "three"}, {"cube"});
  model.Output("square").Output("cube");
  std::string text = graph::ToText(model.Import().module);
  EXPECT_TRUE(Contains(text, "multiply(%x, %x)")) << text;
  EXPECT_TRUE(Contains(text, "power(%x,")) << text;  // other exponents stay powers
  ExpectOutputs(
      model, {x},
      {Map(x, [](double v) { return v * v; }), Map(x, [](double v) { return v * v * v; })});
}

TEST(OnnxMath, VariadicOperatorsCombineEveryInput) {
  runtime::NDArray x = RandomArray({2, 3}, kF32, 3);
  runtime::NDArray y = RandomArray({3}, kF32, 4);
  runtime::NDArray z = ArrayOf({1}, kF32, {0.5});
  ModelBuilder model;
  model.Input("x", {2, 3}).Input("y", {3}).Input("z", {1});
  for (const char* op : {"Max", "Min", "Sum", "Mean"}) {
    model.Node(op, {"x", "y", "z"}, {std::string(op) + "_out"});
    model.Output(std::string(op) + "_out");
  }
  model.Node("Max", {"x"}, {"single"}).Output("single");
  auto combine = [&](const std::function<double(double, double, double)>& f) {
    return RowBroadcast(x, y, [&](double a, double b) { return f(a, b, 0.5); });
  };
  ExpectOutputs(model, {x, y, z},
                {combine([](double a, double b, double c) {
                   return std::max({a, b, c});
                 }),
                 combine([](double a, double b, double c) {
                   return std::min({a, b, c});
                 }),
                 combine([](double a, double b, double c) { return a + b + c; }),
                 combine([](double a, double b, double c) { return (a + b + c) / 3; }), x});
}

TEST(OnnxMath, UnaryOperators) {
  runtime::NDArray x = ArrayOf({8}, kF32, {-2.5, -1.5, -0.5, 0, 0.5, 1.5, 2.5, 3.7});
  runtime::NDArray p = ArrayOf({4}, kF32, {0.25, 1, 4, 9});
  std::vector<std::pair<std::string, std::function<double(double)>>> on_x = {
      {"Neg", [](double v) { return -v; }},
      {"Abs", [](double v) { return std::fabs(v); }},
      {"Floor", [](double v) { return std::floor(v); }},
      {"Ceil", [](double v) { return std::ceil(v); }},
      {"Round", [](double v) { return std::nearbyint(v); }},  // half to even
      {"Sign", [](double v) { return v > 0   ? 1.0
                                     : v < 0 ? -1.0
                                             : 0.0; }},
      {"Exp", [](double v) { return std::exp(v); }},
      {"Tanh", [](double v) { return std::tanh(v); }},
      {"Erf", [](double v) { return std::erf(v); }},
      {"Sin", [](double v) { return std::sin(v); }},
      {"Cos", [](double v) { return std::cos(v); }}};
  std::vector<std::pair<std::string, std::function<double(double)>>> on_p = {
      {"Sqrt", [](double v) { return std::sqrt(v); }},
      {"Log", [](double v) { return std::log(v); }},
      {"Reciprocal", [](double v) { return 1 / v; }}};
  ModelBuilder model;
  model.Input("x", {8}).Input("p", {4});
  std::vector<runtime::NDArray> expected;
  for (const auto& [op, f] : on_x) {
    model.Node(op, {"x"}, {op}).Output(op);
    expected.push_back(Map(x, f));
  }
  for (const auto& [op, f] : on_p) {
    model.Node(op, {"p"}, {op}).Output(op);
    expected.push_back(Map(p, f));
  }
  ExpectOutputs(model, {x, p}, expected);
}

TEST(OnnxMath, GeluExactAndTanhApproximation) {
  runtime::NDArray x = RandomArray({8}, kF32, 5);
  ModelBuilder model(20);
  model.Input("x", {8}).Node("Gelu", {"x"}, {"exact"});
  model.Node("Gelu", {"x"}, {"tanh"}, {StringAttr("approximate", "tanh")});
  model.Output("exact").Output("tanh");
  ExpectOutputs(model, {x},
                {Map(x, [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }),
                 Map(x, [](double v) {
                   double inner = std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v);
                   return 0.5 * v * (1 + std::tanh(inner));
                 })});

  ModelBuilder invalid(20);
  invalid.Input("x", {8}).Node("Gelu", {"x"}, {"y"}, {StringAttr("approximate", "fast")});
  std::string error = ErrorOf([&] { invalid.Output("y").Import(); });
  EXPECT_TRUE(Contains(error, "\"none\" or \"tanh\"")) << error;
}

TEST(OnnxMath, ComparisonsLogicAndWhere) {
  runtime::NDArray a = ArrayOf({2, 3}, kF32, {1, 2, 3, 4, 5, 6});
  runtime::NDArray b = ArrayOf({3}, kF32, {2, 2, 5});
  runtime::NDArray p = ArrayOf({4}, kBool, {0, 0, 1, 1});
  runtime::NDArray q = ArrayOf({4}, kBool, {0, 1, 0, 1});
  runtime::NDArray cond = ArrayOf({2, 1}, kBool, {1, 0});
  ModelBuilder model;
  model.Input("a", {2, 3}).Input("b", {3}).Input("p", {4}, kBool).Input("q", {4}, kBool);
  model.Input("cond", {2, 1}, kBool);
  std::vector<runtime::NDArray> expected;
  std::vector<std::pair<std::string, std::function<double(double, double)>>> comparisons = {
      {"Equal", [](double x, double y) { return x == y; }},
      {"Less", [](double x, double y) { return x < y; }},
      {"LessOrEqual", [](double x, double y) { return x <= y; }},
      {"Greater", [](double x, double y) { return x > y; }},
      {"GreaterOrEqual", [](double x, double y) { return x >= y; }}};
  for (const auto& [op, f] : comparisons) {
    model.Node(op, {"a", "b"}, {op}).Output(op);
    expected.push_back(RowBroadcast(a, b, f, kBool));
  }
  model.Node("And", {"p", "q"}, {"and"}).Node("Or", {"p", "q"}, {"or"});
  model.Node("Xor", {"p", "q"}, {"xor"}).Node("Not", {"p"}, {"not"});
  model.Node("Equal", {"p", "q"}, {"bool_equal"});
  model.Node("Where", {"cond", "a", "b"}, {"where"});
  for (const char* name : {"and", "or", "xor", "not", "bool_equal", "where"}) model.Output(name);
  expected.push_back(ArrayOf({4}, kBool, {0, 0, 0, 1}));
  expected.push_back(ArrayOf({4}, kBool, {0, 1, 1, 1}));
  expected.push_back(ArrayOf({4}, kBool, {0, 1, 1, 0}));
  expected.push_back(ArrayOf({4}, kBool, {1, 1, 0, 0}));
  expected.push_back(ArrayOf({4}, kBool, {1, 0, 0, 1}));
  expected.push_back(ArrayOf({2, 3}, kF32, {1, 2, 3, 2, 2, 5}));
  ExpectOutputs(model, {a, b, p, q, cond}, expected);
}

TEST(OnnxMath, CastTruncatesTowardZeroAndCastLikeTakesTheOtherDtype) {
  runtime::NDArray x = ArrayOf({5}, kF32, {-2.7, -0.5, 0, 0.5, 3.9});
  runtime::NDArray like = ArrayOf({1}, kI64, {0});
  ModelBuilder model(15);
  model.Input("x", {5}).Input("like", {1}, kI64);
  model.Node("Cast", {"x"}, {"i"}, {IntAttr("to", ::onnx::TensorProto::INT32)});
  model.Node("Cast", {"x"}, {"b"}, {IntAttr("to", ::onnx::TensorProto::BOOL)});
  model.Node("Cast", {"i"}, {"f"}, {IntAttr("to", ::onnx::TensorProto::DOUBLE)});
  model.Node("CastLike", {"x", "like"}, {"l"});
  model.Output("i").Output("b").Output("f").Output("l");
  ExpectOutputs(
      model, {x, like},
      {ArrayOf({5}, kI32, {-2, 0, 0, 0, 3}), ArrayOf({5}, kBool, {1, 1, 0, 1, 1}),
       ArrayOf({5}, DataType::Float(64), {-2, 0, 0, 0, 3}), ArrayOf({5}, kI64, {-2, 0, 0, 0, 3})});
}

TEST(OnnxMath, ReduceSumTakesAxesAsAnAttributeBeforeOpset13AndAsAnInputAfter) {
  runtime::NDArray x = RandomArray({2, 3, 4}, kF32, 6);
  ModelBuilder v11(11);
  v11.Input("x", {2, 3, 4});
  v11.Node("ReduceSum", {"x"}, {"y"}, {IntsAttr("axes", {-1}), IntAttr("keepdims", 0)});
  v11.Node("ReduceSum", {"x"}, {"all"});  // no axes: every dimension, kept as 1
  v11.Output("y").Output("all");
  ExpectOutputs(v11, {x},
                {Reduce(x, {2}, false, 0, Sum, Same), Reduce(x, {0, 1, 2}, true, 0, Sum, Same)});

  ModelBuilder v13(13);
  v13.Input("x", {2, 3, 4}).Initializer("axes", ArrayOf({2}, kI64, {0, -1}));
  v13.Node("ReduceSum", {"x", "axes"}, {"y"});
  v13.Node("ReduceSum", {"x"}, {"same"}, {IntAttr("noop_with_empty_axes", 1)});
  v13.Output("y").Output("same");
  ExpectOutputs(v13, {x}, {Reduce(x, {0, 2}, true, 0, Sum, Same), x});
}

TEST(OnnxMath, OtherReductionsTakeAxesAsAnInputFromOpset18) {
  runtime::NDArray x = Map(RandomArray({2, 3, 4}, kF32, 7), [](double v) { return v / 4 + 1.5; });
  ModelBuilder v17(17);
  v17.Input("x", {2, 3, 4});
  v17.Node("ReduceMean", {"x"}, {"mean"}, {IntsAttr("axes", {1})});
  v17.Node("ReduceLogSumExp", {"x"}, {"lse"}, {IntsAttr("axes", {-1}), IntAttr("keepdims", 0)});
  v17.Output("mean").Output("lse");
  ExpectOutputs(v17, {x},
                {Reduce(x, {1}, true, 0, Sum, [](double s, int64_t n) { return s / n; }),
                 Reduce(
                     x, {2}, false, 0, [](double a, double v) { return a + std::exp(v); },
                     [](double s, int64_t) { return std::log(s); })});

  ModelBuilder v18(18);
  v18.Input("x", {2, 3, 4}).Initializer("axes", ArrayOf({1}, kI64, {-2}));
  const std::vector<std::string> ops = {"ReduceMax", "ReduceMin", "ReduceProd",     "ReduceLogSum",
                                        "ReduceL1",  "ReduceL2",  "ReduceSumSquare"};
  for (const std::string& op : ops) {
    v18.Node(op, {"x", "axes"}, {op}, {IntAttr("keepdims", 0)}).Output(op);
  }
  auto reduce = [&](double init, std::function<double(double, double)> combine,
                    std::function<double(double, int64_t)> finish) {
    return Reduce(x, {1}, false, init, combine, finish);
  };
  auto square = [](double a, double v) { return a + v * v; };
  ExpectOutputs(
      v18, {x},
      {reduce(
           -INFINITY, [](double a, double v) { return std::max(a, v); }, Same),
       reduce(
           INFINITY, [](double a, double v) { return std::min(a, v); }, Same),
       reduce(
           1, [](double a, double v) { return a * v; }, Same),
       reduce(0, Sum, [](double s, int64_t) { return std::log(s); }),
       reduce(
           0, [](double a, double v) { return a + std::fabs(v); }, Same),
       reduce(0, square, [](double s, int64_t) { return std::sqrt(s); }), reduce(0, square, Same)});
}

TEST(OnnxMath, ReducedAxesGivenAtRunTimeOrInRange) {
  // Axes a run gives: the VM reads the output's sizes then (with and without keepdims).
  ModelBuilder input_axes(13);
  input_axes.Input("x", {2, 3}).Input("axes", {1}, kI64);
  input_axes.Node("ReduceSum", {"x", "axes"}, {"kept"}, {}, "sum_0").Output("kept");
  input_axes.Node("ReduceSum", {"x", "axes"}, {"dropped"}, {IntAttr("keepdims", 0)}, "sum_1")
      .Output("dropped");
  runtime::NDArray x = ArrayOf({2, 3}, kF32, {1, 2, 3, 4, 5, 6});
  ExpectOutputs(input_axes, {x, ArrayOf({1}, kI64, {-1})},
                {ArrayOf({2, 1}, kF32, {6, 15}), ArrayOf({2}, kF32, {6, 15})});
  ExpectOutputs(input_axes, {x, ArrayOf({1}, kI64, {0})},
                {ArrayOf({1, 3}, kF32, {5, 7, 9}), ArrayOf({3}, kF32, {5, 7, 9})});

  // Their count decides the output's rank: a 1-d tensor of static length.
  ModelBuilder matrix_axes(13);
  matrix_axes.Input("x", {2, 3}).Input("axes", {1, 1}, kI64);
  matrix_axes.Node("ReduceSum", {"x", "axes"}, {"y"}, {}, "sum_2").Output("y");
  std::string error = ErrorOf([&] { matrix_axes.Import(); });
  EXPECT_TRUE(Contains(error, "'sum_2'") && Contains(error,
                                                     "axes must be a 1-d tensor, got "
                                                     "shape [1, 1]"))
      << error;

  ModelBuilder out_of_range(11);
  out_of_range.Input("x", {2, 3});
  out_of_range.Node("ReduceMax", {"x"}, {"y"}, {IntsAttr("axes", {2})}, "max_0").Output("y");
  error = ErrorOf([&] { out_of_range.Import(); });
  EXPECT_TRUE(Contains(error, "'max_0'") && Contains(error, "out of range")) << error;
}

TEST(OnnxMath, ArgMaxAndArgMinWithTiesAndNegativeAxes) {
  runtime::NDArray x = ArrayOf({2, 3}, kF32, {1, 3, 3, 5, 5, 2});
  ModelBuilder model;
  model.Input("x", {2, 3});
  model.Node("ArgMax", {"x"}, {"first"}, {IntAttr("axis", -1), IntAttr("keepdims", 0)});
  model.Node("ArgMax", {"x"}, {"last"},
             {IntAttr("axis", -1), IntAttr("keepdims", 0), IntAttr("select_last_index", 1)});
  model.Node("ArgMin", {"x"}, {"min"});
  model.Output("first").Output("last").Output("min");
  ExpectOutputs(
      model, {x},
      {ArrayOf({2}, kI64, {1, 0}), ArrayOf({2}, kI64, {2, 1}), ArrayOf({1, 3}, kI64, {0, 0, 1})});
}

// softmax of each `group` consecutive elements of x.
runtime::NDArray GroupSoftmax(const runtime::NDArray& x, int64_t group, bool log) {
  runtime::NDArray y = runtime::NDArray::Empty(x.Shape(), x.dtype());
  for (int64_t begin = 0; begin < x.NumElements(); begin += group) {
    double sum = 0;
    for (int64_t i = begin; i < begin + group; ++i) sum += std::exp(GetFloat(x, i));
    for (int64_t i = begin; i < begin + group; ++i) {
      double v = std::exp(GetFloat(x, i)) / sum;
      SetValue(y, i, log ? std::log(v) : v);
    }
  }
  return y;
}

TEST(OnnxMath, SoftmaxBeforeOpset13NormalizesTheFlattenedTrailingDimensions) {
  runtime::NDArray x = RandomArray({2, 2, 3}, kF32, 8);
  ModelBuilder v11(11);
  v11.Input("x", {2, 2, 3});
  v11.Node("Softmax", {"x"}, {"s"}, {IntAttr("axis", 1)});
  v11.Node("LogSoftmax", {"x"}, {"l"});  // axis 1 by default
  v11.Node("Softmax", {"x"}, {"last"}, {IntAttr("axis", -1)});
  v11.Output("s").Output("l").Output("last");
  ExpectOutputs(v11, {x},
                {GroupSoftmax(x, 6, false), GroupSoftmax(x, 6, true), GroupSoftmax(x, 3, false)});

  // From opset 13 one axis: dimension 1 of [2, 2, 3] pairs elements 3 apart.
  runtime::NDArray transposed = runtime::NDArray::Empty({2, 3, 2}, kF32);
  for (int64_t n = 0; n < 2; ++n) {
    for (int64_t c = 0; c < 2; ++c) {
      for (int64_t w = 0; w < 3; ++w) {
        SetValue(transposed, n * 6 + w * 2 + c, GetFloat(x, n * 6 + c * 3 + w));
      }
    }
  }
  runtime::NDArray normalized = GroupSoftmax(transposed, 2, false);
  runtime::NDArray expected = runtime::NDArray::Empty({2, 2, 3}, kF32);
  for (int64_t n = 0; n < 2; ++n) {
    for (int64_t c = 0; c < 2; ++c) {
      for (int64_t w = 0; w < 3; ++w) {
        SetValue(expected, n * 6 + c * 3 + w, GetFloat(normalized, n * 6 + w * 2 + c));
      }
    }
  }
  ModelBuilder v13(13);
  v13.Input("x", {2, 2, 3}).Node("Softmax", {"x"}, {"s"}, {IntAttr("axis", 1)}).Output("s");
  ExpectOutputs(v13, {x}, {expected});
}

TEST(OnnxMath, LayerNormalizationWithItsStatisticsOutputs) {
  runtime::NDArray x = RandomArray({2, 3, 4}, kF32, 9);
  runtime::NDArray scale = RandomArray({3, 4}, kF32, 10);
  runtime::NDArray bias = RandomArray({3, 4}, kF32, 11);
  const double epsilon = 1e-3;
  runtime::NDArray y = runtime::NDArray::Empty({2, 3, 4}, kF32);
  runtime::NDArray no_bias = runtime::NDArray::Empty({2, 3, 4}, kF32);
  runtime::NDArray mean = runtime::NDArray::Empty({2, 1, 1}, kF32);
  runtime::NDArray inv_std_dev = runtime::NDArray::Empty({2, 1, 1}, kF32);
  for (int64_t n = 0; n < 2; ++n) {
    double sum = 0, squares = 0;
    for (int64_t i = 0; i < 12; ++i) sum += GetFloat(x, n * 12 + i);
    double m = sum / 12;
    for (int64_t i = 0; i < 12; ++i) squares += std::pow(GetFloat(x, n * 12 + i) - m, 2);
    double inv = 1 / std::sqrt(squares / 12 + epsilon);
    SetValue(mean, n, m);
    SetValue(inv_std_dev, n, inv);
    for (int64_t i = 0; i < 12; ++i) {
      double normalized = (GetFloat(x, n * 12 + i) - m) * inv * GetFloat(scale, i);
      SetValue(no_bias, n * 12 + i, normalized);
      SetValue(y, n * 12 + i, normalized + GetFloat(bias, i));
    }
  }
  ModelBuilder model;
  model.Input("x", {2, 3, 4}).Initializer("scale", scale).Initializer("bias", bias);
  std::vector<::onnx::AttributeProto> attrs = {IntAttr("axis", -2), FloatAttr("epsilon", 1e-3f)};
  model.Node("LayerNormalization", {"x", "scale", "bias"}, {"y", "mean", "inv"}, attrs);
  model.Node("LayerNormalization", {"x", "scale"}, {"no_bias"}, attrs);
  model.Output("y").Output("mean").Output("inv").Output("no_bias");
  ExpectOutputs(model, {x}, {y, mean, inv_std_dev, no_bias});
}

// a [batch..., M, K] x b [K, N] (b shared by every batch).
runtime::NDArray MatMulShared(const runtime::NDArray& a, const runtime::NDArray& b) {
  std::vector<int64_t> shape = a.Shape();
  int64_t k_size = shape.back(), n_size = b.Shape()[1];
  int64_t rows = a.NumElements() / k_size;
  shape.back() = n_size;
  runtime::NDArray c = runtime::NDArray::Empty(shape, a.dtype());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t n = 0; n < n_size; ++n) {
      double acc = 0;
      for (int64_t k = 0; k < k_size; ++k) {
        acc += GetFloat(a, r * k_size + k) * GetFloat(b, k * n_size + n);
      }
      SetValue(c, r * n_size + n, acc);
    }
  }
  return c;
}

TEST(OnnxMath, MatMulWithAConstantMatrixBecomesDenseOnItsTranspose) {
  runtime::NDArray a = RandomArray({2, 3, 4}, kF32, 12);
  runtime::NDArray v = RandomArray({4}, kF32, 13);
  runtime::NDArray w = RandomArray({4, 5}, kF32, 14);
  ModelBuilder model;
  model.Input("a", {2, 3, 4}).Input("v", {4}).Initializer("w", w);
  model.Node("MatMul", {"a", "w"}, {"y"}).Node("MatMul", {"v", "w"}, {"z"});
  model.Output("y").Output("z");
  std::string text = graph::ToText(model.Import().module);
  EXPECT_TRUE(Contains(text, "nn.dense")) << text;
  EXPECT_FALSE(Contains(text, "nn.matmul")) << text;
  runtime::NDArray z = MatMulShared(runtime::NDArray(v).CreateView({1, 4}, kF32), w);
  ExpectOutputs(model, {a, v}, {MatMulShared(a, w), z.CreateView({5}, kF32)});
}

TEST(OnnxMath, MatMulOfTwoInputsBroadcastsBatchDimensions) {
  runtime::NDArray a = RandomArray({2, 1, 2, 3}, kF32, 15);
  runtime::NDArray b = RandomArray({3, 3, 2}, kF32, 16);
  runtime::NDArray c = runtime::NDArray::Empty({2, 3, 2, 2}, kF32);
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      for (int64_t m = 0; m < 2; ++m) {
        for (int64_t n = 0; n < 2; ++n) {
          double acc = 0;
          for (int64_t k = 0; k < 3; ++k) {
            acc += GetFloat(a, i * 6 + m * 3 + k) * GetFloat(b, j * 6 + k * 2 + n);
          }
          SetValue(c, ((i * 3 + j) * 2 + m) * 2 + n, acc);
        }
      }
    }
  }
  ModelBuilder model;
  model.Input("a", {2, 1, 2, 3}).Input("b", {3, 3, 2}).Node("MatMul", {"a", "b"}, {"c"});
  model.Output("c");
  EXPECT_TRUE(Contains(graph::ToText(model.Import().module), "nn.matmul"));
  ExpectOutputs(model, {a, b}, {c});
}

TEST(OnnxMath, EinsumAsSumsTransposesAndOneBatchedProduct) {
  runtime::NDArray a = RandomArray({2, 3, 4}, kF32, 18);
  runtime::NDArray b = RandomArray({4, 2, 6, 5}, kF32, 19);
  runtime::NDArray u = RandomArray({3}, kF32, 20);
  runtime::NDArray v = RandomArray({2}, kF32, 21);
  ModelBuilder model(12);
  model.Input("a", {2, 3, 4}).Input("b", {4, 2, 6, 5}).Input("u", {3}).Input("v", {2});
  // batch i, contracted k, b's m summed away alone, output transposed.
  model.Node("Einsum", {"a", "b"}, {"p"}, {StringAttr("equation", "ijk, kiml -> l j i")});
  model.Node("Einsum", {"u", "v"}, {"outer"}, {StringAttr("equation", "x,y")});  // implicit
  model.Node("Einsum", {"a"}, {"s"}, {StringAttr("equation", "ijk->ki")});
  model.Output("p").Output("outer").Output("s");
  runtime::NDArray p = runtime::NDArray::Empty({5, 3, 2}, kF32);
  runtime::NDArray outer = runtime::NDArray::Empty({3, 2}, kF32);
  runtime::NDArray sums = runtime::NDArray::Empty({4, 2}, kF32);
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      for (int64_t l = 0; l < 5; ++l) {
        double acc = 0;
        for (int64_t k = 0; k < 4; ++k) {
          for (int64_t m = 0; m < 6; ++m) {
            acc += GetFloat(a, (i * 3 + j) * 4 + k) * GetFloat(b, ((k * 2 + i) * 6 + m) * 5 + l);
          }
        }
        SetValue(p, (l * 3 + j) * 2 + i, acc);
      }
      SetValue(outer, j * 2 + i, GetFloat(u, j) * GetFloat(v, i));
    }
    for (int64_t k = 0; k < 4; ++k) {
      double acc = 0;
      for (int64_t j = 0; j < 3; ++j) acc += GetFloat(a, (i * 3 + j) * 4 + k);
      SetValue(sums, k * 2 + i, acc);
    }
  }
  ExpectOutputs(model, {a, b, u, v}, {p, outer, sums});

  ModelBuilder diagonal(12);
  diagonal.Input("x", {3, 3})
      .Node("Einsum", {"x"}, {"d"}, {StringAttr("equation", "ii->i")}, "einsum_9");
  std::string error = ErrorOf([&] { diagonal.Output("d").Import(); });
  EXPECT_TRUE(Contains(error, "'einsum_9'") && Contains(error, "diagonals")) << error;
}

}  // namespace
}  // namespace loom::frontend::onnx::test
