// Math functions in compute bodies: each lowers to its intrinsic and the interpreter computes
// what the C library does; non-float arguments are user errors naming the function.
#include <cmath>
#include <functional>

#include "te_test_util.h"

namespace loom::te::test {
namespace {

struct UnaryCase {
  const char* name;
  std::function<PrimExpr(PrimExpr)> build;
  std::function<double(double)> reference;
  double low, high;  // the random inputs' domain
};

double RandomIn(std::mt19937& rng, double low, double high) {
  return std::uniform_real_distribution<double>(low, high)(rng);
}

TEST(TeMath, EveryUnaryFunctionComputesItsCLibraryCounterpart) {
  const std::vector<UnaryCase> cases = {
      {"exp", [](PrimExpr x) { return exp(x); }, [](double x) { return std::exp(x); }, -10, 10},
      {"exp2", [](PrimExpr x) { return exp2(x); }, [](double x) { return std::exp2(x); }, -10, 10},
      {"log", [](PrimExpr x) { return log(x); }, [](double x) { return std::log(x); }, 0.01, 100},
      {"log2", [](PrimExpr x) { return log2(x); }, [](double x) { return std::log2(x); }, 0.01, 100},
      {"log10", [](PrimExpr x) { return log10(x); }, [](double x) { return std::log10(x); }, 0.01,
       100},
      {"sqrt", [](PrimExpr x) { return sqrt(x); }, [](double x) { return std::sqrt(x); }, 0, 100},
      {"rsqrt", [](PrimExpr x) { return rsqrt(x); }, [](double x) { return 1 / std::sqrt(x); },
       0.01, 100},
      {"tanh", [](PrimExpr x) { return tanh(x); }, [](double x) { return std::tanh(x); }, -6, 6},
      {"sigmoid", [](PrimExpr x) { return sigmoid(x); },
       [](double x) { return 1 / (1 + std::exp(-x)); }, -10, 10},
      {"erf", [](PrimExpr x) { return erf(x); }, [](double x) { return std::erf(x); }, -4, 4},
      {"sin", [](PrimExpr x) { return sin(x); }, [](double x) { return std::sin(x); }, -7, 7},
      {"cos", [](PrimExpr x) { return cos(x); }, [](double x) { return std::cos(x); }, -7, 7},
      {"fabs", [](PrimExpr x) { return fabs(x); }, [](double x) { return std::fabs(x); }, -5, 5},
      {"floor", [](PrimExpr x) { return floor(x); }, [](double x) { return std::floor(x); }, -5, 5},
      {"ceil", [](PrimExpr x) { return ceil(x); }, [](double x) { return std::ceil(x); }, -5, 5},
      {"round", [](PrimExpr x) { return round(x); }, [](double x) { return std::nearbyint(x); },
       -5, 5},
      {"trunc", [](PrimExpr x) { return trunc(x); }, [](double x) { return std::trunc(x); }, -5, 5},
  };
  constexpr int64_t kN = 64;
  for (const UnaryCase& c : cases) {
    SCOPED_TRACE(c.name);
    Tensor A = placeholder({int(kN)}, kF32, "A");
    Tensor B = compute({int(kN)}, [&](Var i) { return c.build(A(i)); }, "B");
    PrimFunc f = lower(create_schedule({B.op()}), {A, B}, c.name);
    EXPECT_NE(ToScript(f).find(std::string(c.name) + "("), std::string::npos) << ToScript(f);

    std::mt19937 rng(7);
    tir::HostArray a(kF32, {kN});
    for (int64_t i = 0; i < kN; ++i) a.SetFloat(i, static_cast<float>(RandomIn(rng, c.low, c.high)));
    tir::HostArray b = RunFunc(f, {a}, {{kF32, {kN}}})[0];
    for (int64_t i = 0; i < kN; ++i) {
      double want = static_cast<float>(c.reference(a.GetFloat(i)));
      EXPECT_NEAR(b.GetFloat(i), want, 1e-6 * std::max(1.0, std::fabs(want)))
          << c.name << "(" << a.GetFloat(i) << ")";
    }
  }
}

TEST(TeMath, PowTakesTheBasesTypeForALiteralExponent) {
  constexpr int64_t kN = 32;
  Tensor A = placeholder({int(kN)}, kF32, "A");
  Tensor B = compute({int(kN)}, [&](Var i) { return pow(A(i), 1.5) + pow(A(i), A(i)); }, "B");
  PrimFunc f = lower(create_schedule({B.op()}), {A, B}, "pow");
  std::mt19937 rng(3);
  tir::HostArray a(kF32, {kN});
  for (int64_t i = 0; i < kN; ++i) a.SetFloat(i, static_cast<float>(RandomIn(rng, 0.1, 4)));
  tir::HostArray b = RunFunc(f, {a}, {{kF32, {kN}}})[0];
  for (int64_t i = 0; i < kN; ++i) {
    float x = static_cast<float>(a.GetFloat(i));
    double want = static_cast<float>(static_cast<float>(std::pow(x, 1.5f)) +
                                     static_cast<float>(std::pow(x, x)));
    EXPECT_NEAR(b.GetFloat(i), want, 1e-5 * std::max(1.0, want)) << "x=" << x;
  }
}

TEST(TeMath, IsnanGivesABooleanPerLane) {
  Var x("x", kF32);
  PrimExpr e = isnan(x);
  EXPECT_EQ(e.dtype(), DataType::Bool());
  EXPECT_NE(ToScript(e).find("isnan(x)"), std::string::npos) << ToScript(e);
}

TEST(TeMath, NonFloatArgumentsAreUserErrorsNamingTheFunction) {
  Var n("n", kI32);
  auto expect_error = [](const std::function<void()>& f, const std::string& expected) {
    std::string message = "(no error)";
    try {
      f();
    } catch (const Error& e) {
      message = e.what();
    }
    EXPECT_NE(message.find(expected), std::string::npos) << "message: " << message;
  };
  expect_error([&] { exp(n); }, "exp: expected a float argument, got int32");
  expect_error([&] { exp(n); }, "cast it first");
  expect_error([&] { sqrt(n > 0); }, "sqrt: expected a float argument, got bool");
  expect_error([&] { pow(Var("y", kF32), n); }, "pow: expected a float exponent, got int32");
  expect_error([&] { pow(Var("y", kF32), Var("z", DataType::Float(64))); },
               "pow: the base is float32 but the exponent is float64");
}

}  // namespace
}  // namespace loom::te::test
