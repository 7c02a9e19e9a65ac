// Elementwise operators compiled with schedule_injective against references written here
// in double precision: every unary operator on float32 (and the numeric ones on int32),
// binary operators over broadcasting shape pairs (including sizes that are no multiple of
// the vector width, size-1 dimensions, and a size large enough to run in parallel), and the
// user errors for bad operands.
#include "loom/topi/elementwise.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "loom/ir/functor.h"
#include "topi_test_util.h"

namespace loom::topi {
namespace {

using target_test::RandomArray;
using test::ErrorOf;
using test::ExpectClose;
using test::RunCompiled;

// The flat index into an operand of `shape` (right-aligned, size-1 dimensions broadcast)
// of the output element at `flat` in `out_shape`.
int64_t BroadcastSource(const std::vector<int64_t>& shape, const std::vector<int64_t>& out_shape,
                        int64_t flat) {
  int64_t source = 0, stride = 1;
  for (int d = static_cast<int>(out_shape.size()) - 1, s = static_cast<int>(shape.size()) - 1;
       s >= 0; --d, --s) {
    int64_t index = flat % out_shape[d];
    flat /= out_shape[d];
    if (shape[s] != 1) source += index * stride;
    stride *= shape[s];
  }
  return source;
}

struct UnaryCase {
  std::string name;
  std::function<te::Tensor(const te::Tensor&)> op;
  std::function<double(double)> reference;
  bool positive_inputs = false;  // log, sqrt, rsqrt
  double tolerance = 2e-6;
};

double RoundHalfEven(double v) { return std::nearbyint(v); }

TEST(TopiElementwise, UnaryOperatorsMatchTheReference) {
  const double selu_alpha = 1.67326319217681884765625, selu_gamma = 1.05070102214813232421875;
  std::vector<UnaryCase> cases = {
      {"negative", [](auto& x) { return negative(x); }, [](double v) { return -v; }},
      {"abs", [](auto& x) { return abs(x); }, [](double v) { return std::abs(v); }},
      {"sign", [](auto& x) { return sign(x); }, [](double v) { return double((v > 0) - (v < 0)); }},
      {"exp", [](auto& x) { return exp(x); }, [](double v) { return std::exp(v); }},
      {"log", [](auto& x) { return log(x); }, [](double v) { return std::log(v); }, true},
      {"sqrt", [](auto& x) { return sqrt(x); }, [](double v) { return std::sqrt(v); }, true},
      {"rsqrt", [](auto& x) { return rsqrt(x); }, [](double v) { return 1 / std::sqrt(v); }, true},
      {"reciprocal", [](auto& x) { return reciprocal(x); }, [](double v) { return 1 / v; }, true},
      {"sigmoid", [](auto& x) { return sigmoid(x); }, [](double v) { return 1 / (1 + std::exp(-v)); }},
      {"tanh", [](auto& x) { return tanh(x); }, [](double v) { return std::tanh(v); }},
      {"erf", [](auto& x) { return erf(x); }, [](double v) { return std::erf(v); }},
      {"sin", [](auto& x) { return sin(x); }, [](double v) { return std::sin(v); }},
      {"cos", [](auto& x) { return cos(x); }, [](double v) { return std::cos(v); }},
      {"floor", [](auto& x) { return floor(x); }, [](double v) { return std::floor(v); }},
      {"ceil", [](auto& x) { return ceil(x); }, [](double v) { return std::ceil(v); }},
      {"round", [](auto& x) { return round(x); }, RoundHalfEven},
      {"gelu", [](auto& x) { return gelu(x); },
       [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }},
      {"relu", [](auto& x) { return relu(x); }, [](double v) { return std::max(v, 0.0); }},
      {"leaky_relu", [](auto& x) { return leaky_relu(x, 0.1); },
       [](double v) { return v < 0 ? 0.1 * v : v; }},
      {"elu", [](auto& x) { return elu(x, 0.5); },
       [](double v) { return v < 0 ? 0.5 * (std::exp(v) - 1) : v; }},
      {"selu", [](auto& x) { return selu(x); },
       [&](double v) { return selu_gamma * (v <= 0 ? selu_alpha * (std::exp(v) - 1) : v); }},
      {"softplus", [](auto& x) { return softplus(x); }, [](double v) { return std::log1p(std::exp(v)); }},
      {"hard_sigmoid", [](auto& x) { return hard_sigmoid(x); },
       [](double v) { return std::clamp(0.2 * v + 0.5, 0.0, 1.0); }},
      {"hard_swish", [](auto& x) { return hard_swish(x); },
       [](double v) { return v * std::clamp(v / 6 + 0.5, 0.0, 1.0); }},
      {"clip", [](auto& x) { return clip(x, -1.5, 2.25); },
       [](double v) { return std::clamp(v, -1.5, 2.25); }},
  };
  // 67 and 1000 are no multiples of the 16 lanes; 40000 runs in parallel.
  for (int64_t n : {int64_t{1}, int64_t{67}, int64_t{1000}, int64_t{40000}}) {
    for (const UnaryCase& c : cases) {
      te::Tensor x = te::placeholder({int(n)}, DataType::Float(32), "x");
      tir::HostArray input = RandomArray(DataType::Float(32), {n}, 7);
      if (c.positive_inputs) {
        for (int64_t i = 0; i < n; ++i) input.SetFloat(i, std::abs(input.GetFloat(i)) + 0.125);
      }
      tir::HostArray got = RunCompiled({x}, c.op(x), {input});
      // The reference sees the float32 input; float32 rounding of the result is within
      // the tolerance.
      ExpectClose(got, [&](int64_t i) { return c.reference(input.GetFloat(i)); }, c.tolerance,
                  c.name + " n=" + std::to_string(n));
    }
  }
}

TEST(TopiElementwise, NumericUnaryOperatorsOnIntegers) {
  te::Tensor x = te::placeholder({70}, DataType::Int(32), "x");
  tir::HostArray input = RandomArray(DataType::Int(32), {70}, 3);
  auto value = [&](int64_t i) { return double(input.GetInt(i)); };
  ExpectClose(RunCompiled({x}, negative(x), {input}), [&](int64_t i) { return -value(i); }, 0, "negative");
  ExpectClose(RunCompiled({x}, abs(x), {input}), [&](int64_t i) { return std::abs(value(i)); }, 0, "abs");
  ExpectClose(RunCompiled({x}, relu(x), {input}), [&](int64_t i) { return std::max(value(i), 0.0); }, 0, "relu");
  ExpectClose(RunCompiled({x}, clip(x, -20, 30), {input}),
              [&](int64_t i) { return std::clamp(value(i), -20.0, 30.0); }, 0, "clip");
  ExpectClose(RunCompiled({x}, cast(x, DataType::Float(32)), {input}), value, 0, "cast");
}

struct BinaryCase {
  std::string name;
  std::function<te::Tensor(const te::Tensor&, const te::Tensor&)> op;
  std::function<double(double, double)> reference;
  DataType dtype;
  bool nonzero_divisor = false;
};

TEST(TopiElementwise, BinaryOperatorsBroadcastLikeNumPy) {
  const DataType f32 = DataType::Float(32), i32 = DataType::Int(32);
  std::vector<BinaryCase> cases = {
      {"add f32", [](auto& a, auto& b) { return add(a, b); }, std::plus<double>(), f32},
      {"subtract i32", [](auto& a, auto& b) { return subtract(a, b); }, std::minus<double>(), i32},
      {"multiply f32", [](auto& a, auto& b) { return multiply(a, b); }, std::multiplies<double>(), f32},
      {"divide f32", [](auto& a, auto& b) { return divide(a, b); }, std::divides<double>(), f32, true},
      {"divide i32 (truncating)", [](auto& a, auto& b) { return divide(a, b); },
       [](double a, double b) { return std::trunc(a / b); }, i32, true},
      {"mod i32 (sign of divisor)", [](auto& a, auto& b) { return mod(a, b); },
       [](double a, double b) { double r = std::fmod(a, b); return r != 0 && (r < 0) != (b < 0) ? r + b : r; },
       i32, true},
      {"mod f32 fmod", [](auto& a, auto& b) { return mod(a, b, true); },
       [](double a, double b) { return std::fmod(a, b); }, f32, true},
      {"power f32", [](auto& a, auto& b) { return power(abs(a), b); },
       [](double a, double b) { return std::pow(std::abs(a), b); }, f32, true},
      {"maximum i32", [](auto& a, auto& b) { return maximum(a, b); },
       [](double a, double b) { return std::max(a, b); }, i32},
      {"minimum f32", [](auto& a, auto& b) { return minimum(a, b); },
       [](double a, double b) { return std::min(a, b); }, f32},
      {"prelu f32", [](auto& a, auto& b) { return prelu(a, b); },
       [](double a, double b) { return a < 0 ? a * b : a; }, f32},
      {"equal i32", [](auto& a, auto& b) { return equal(a, b); },
       [](double a, double b) { return double(a == b); }, i32},
      {"less f32", [](auto& a, auto& b) { return less(a, b); },
       [](double a, double b) { return double(a < b); }, f32},
      {"less_equal i32", [](auto& a, auto& b) { return less_equal(a, b); },
       [](double a, double b) { return double(a <= b); }, i32},
      {"greater f32", [](auto& a, auto& b) { return greater(a, b); },
       [](double a, double b) { return double(a > b); }, f32},
      {"greater_equal i32", [](auto& a, auto& b) { return greater_equal(a, b); },
       [](double a, double b) { return double(a >= b); }, i32},
  };
  std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes = {
      {{2, 3, 17}, {2, 3, 17}}, {{2, 3, 17}, {17}}, {{2, 1, 17}, {3, 1}},
      {{1}, {5, 7}},            {{4, 1, 1}, {1, 6, 5}}, {{2, 20000}, {2, 1}}};
  for (const BinaryCase& c : cases) {
    for (const auto& [shape_a, shape_b] : shapes) {
      std::vector<int64_t> out_shape(std::max(shape_a.size(), shape_b.size()));
      for (size_t d = 0; d < out_shape.size(); ++d) {
        auto dim = [&](const std::vector<int64_t>& s) {
          return d + s.size() >= out_shape.size() ? s[d + s.size() - out_shape.size()] : 1;
        };
        out_shape[d] = std::max(dim(shape_a), dim(shape_b));
      }
      te::Tensor a = te::placeholder(test::Exprs(shape_a), c.dtype, "a");
      te::Tensor b = te::placeholder(test::Exprs(shape_b), c.dtype, "b");
      tir::HostArray in_a = RandomArray(c.dtype, shape_a, 11);
      tir::HostArray in_b = RandomArray(c.dtype, shape_b, 12, c.nonzero_divisor);
      auto get = [](const tir::HostArray& h, int64_t i) {
        return h.dtype().is_float() ? h.GetFloat(i) : double(h.GetInt(i));
      };
      tir::HostArray got = RunCompiled({a, b}, c.op(a, b), {in_a, in_b});
      ExpectClose(
          got,
          [&](int64_t i) {
            return c.reference(get(in_a, BroadcastSource(shape_a, out_shape, i)),
                               get(in_b, BroadcastSource(shape_b, out_shape, i)));
          },
          2e-6, c.name);
    }
  }
}

// Integer division and remainder by 0 (undefined in ONNX) and of the smallest value by -1
// trap on x86; Loom's give 0 and wrap instead, for every integer type.
TEST(TopiElementwise, IntegerDivisionNeverTraps) {
  for (DataType dtype : {DataType::Int(8), DataType::Int(32), DataType::Int(64), DataType::UInt(8),
                         DataType::UInt(32)}) {
    const bool is_signed = dtype.is_int();
    const int64_t smallest = is_signed ? -(int64_t{1} << (dtype.bits() - 1)) : 0;
    std::vector<std::array<int64_t, 2>> pairs = {{7, 0}, {0, 0}, {7, 2}, {smallest, 3}};
    if (is_signed) pairs.insert(pairs.end(), {{smallest, -1}, {-7, 0}, {-7, -1}, {7, -2}});
    const int64_t n = static_cast<int64_t>(pairs.size());
    te::Tensor a = te::placeholder(test::Exprs({n}), dtype, "a");
    te::Tensor b = te::placeholder(test::Exprs({n}), dtype, "b");
    tir::HostArray in_a(dtype, {n}), in_b(dtype, {n});
    for (int64_t i = 0; i < n; ++i) {
      in_a.SetInt(i, pairs[static_cast<size_t>(i)][0]);
      in_b.SetInt(i, pairs[static_cast<size_t>(i)][1]);
    }
    auto reference = [&](int64_t i, int op) -> double {
      const int64_t x = pairs[static_cast<size_t>(i)][0], y = pairs[static_cast<size_t>(i)][1];
      if (y == 0) return 0;
      if (y == -1) return op == 0 ? (x == smallest ? double(smallest) : double(-x)) : 0;
      const int64_t q = x / y, r = x % y;
      if (op == 0) return double(q);
      if (op == 1) return double(r);                            // fmod: dividend's sign
      return double(r != 0 && (r < 0) != (y < 0) ? r + y : r);  // mod: divisor's sign
    };
    const std::string type = dtype.str();
    ExpectClose(
        RunCompiled({a, b}, divide(a, b), {in_a, in_b}), [&](int64_t i) { return reference(i, 0); },
        0, "divide " + type);
    ExpectClose(
        RunCompiled({a, b}, mod(a, b, true), {in_a, in_b}),
        [&](int64_t i) { return reference(i, 1); }, 0, "fmod " + type);
    ExpectClose(
        RunCompiled({a, b}, mod(a, b), {in_a, in_b}), [&](int64_t i) { return reference(i, 2); }, 0,
        "mod " + type);
  }
}

TEST(TopiElementwise, LogicalOperatorsAndWhere) {
  te::Tensor p = te::placeholder({3, 33}, DataType::Bool(), "p");
  te::Tensor q = te::placeholder({33}, DataType::Bool(), "q");
  tir::HostArray in_p = RandomArray(DataType::Bool(), {3, 33}, 5);
  tir::HostArray in_q = RandomArray(DataType::Bool(), {33}, 6);
  auto P = [&](int64_t i) { return in_p.GetInt(i) != 0; };
  auto Q = [&](int64_t i) { return in_q.GetInt(i % 33) != 0; };
  ExpectClose(RunCompiled({p, q}, logical_and(p, q), {in_p, in_q}),
              [&](int64_t i) { return double(P(i) && Q(i)); }, 0, "and");
  ExpectClose(RunCompiled({p, q}, logical_or(p, q), {in_p, in_q}),
              [&](int64_t i) { return double(P(i) || Q(i)); }, 0, "or");
  ExpectClose(RunCompiled({p, q}, logical_xor(p, q), {in_p, in_q}),
              [&](int64_t i) { return double(P(i) != Q(i)); }, 0, "xor");
  ExpectClose(RunCompiled({p}, logical_not(p), {in_p}), [&](int64_t i) { return double(!P(i)); }, 0,
              "not");
  te::Tensor a = te::placeholder({3, 1}, DataType::Float(32), "a");
  te::Tensor b = te::placeholder({33}, DataType::Float(32), "b");
  tir::HostArray in_a = RandomArray(DataType::Float(32), {3, 1}, 8);
  tir::HostArray in_b = RandomArray(DataType::Float(32), {33}, 9);
  ExpectClose(RunCompiled({p, a, b}, where(p, a, b), {in_p, in_a, in_b}),
              [&](int64_t i) { return P(i) ? in_a.GetFloat(i / 33) : in_b.GetFloat(i % 33); }, 0,
              "where");
}

// Shifts in every bit position of signed and unsigned values: right_shift fills in the sign
// of a signed value (arithmetic, the requantization of power-of-two scales relies on it) and
// zeros in an unsigned one; the amounts broadcast.
TEST(TopiElementwise, ShiftsAreArithmeticOnSignedAndLogicalOnUnsigned) {
  for (DataType t : {DataType::Int(32), DataType::UInt(8), DataType::Int(8)}) {
    SCOPED_TRACE(t.str());
    te::Tensor a = te::placeholder({3, 40}, t, "a");
    te::Tensor b = te::placeholder({40}, t, "b");
    tir::HostArray in_a = RandomArray(t, {3, 40}, 11);
    tir::HostArray in_b(t, {40});
    for (int64_t i = 0; i < 40; ++i) in_b.SetInt(i, i % t.bits());
    auto A = [&](int64_t i) { return in_a.GetInt(i); };
    auto B = [&](int64_t i) { return in_b.GetInt(i % 40); };
    ExpectClose(RunCompiled({a, b}, right_shift(a, b), {in_a, in_b}),
                [&](int64_t i) {
                  // floor(a / 2^b): >> of the (sign-extended or zero-extended) 64-bit value
                  return double(A(i) >> B(i));
                },
                0, "right_shift");
    ExpectClose(RunCompiled({a, b}, left_shift(a, b), {in_a, in_b}),
                [&](int64_t i) {
                  // the low bits of the shifted value, read back as the type reads them
                  const uint64_t mask = (uint64_t{1} << t.bits()) - 1;
                  const uint64_t bits = (static_cast<uint64_t>(A(i)) << B(i)) & mask;
                  if (t.is_uint() || bits < (uint64_t{1} << (t.bits() - 1))) return double(bits);
                  return double(int64_t(bits) - int64_t(mask) - 1);
                },
                0, "left_shift");
  }
  te::Tensor f = te::placeholder({4}, DataType::Float(32), "f");
  EXPECT_NE(ErrorOf([&] { right_shift(f, f); }).find("right_shift: 'f' is float32; the operator "
                                                     "takes integer tensors"),
            std::string::npos);
}

TEST(TopiElementwise, InjectiveChainsAreInlinedIntoOneLoop) {
  te::Tensor x = te::placeholder({100}, DataType::Float(32), "x");
  te::Tensor bias = te::placeholder({1}, DataType::Float(32), "bias");
  te::Tensor y = relu(add(multiply(x, x), bias));
  PrimFunc f = te::lower(schedule_injective({y}), {x, bias, y}, "chain");
  // One store (to y): the intermediate stages were inlined.
  int stores = 0;
  PostOrderVisit(f->body, [&](const ObjectRef& node) {
    stores += node.as<BufferStoreNode>() != nullptr;
  });
  EXPECT_EQ(stores, 2);  // the vector body and the peeled scalar tail
  tir::HostArray in_x = RandomArray(DataType::Float(32), {100}, 1);
  tir::HostArray in_bias = RandomArray(DataType::Float(32), {1}, 2);
  ExpectClose(RunCompiled({x, bias}, y, {in_x, in_bias}),
              [&](int64_t i) {
                double v = double(float(in_x.GetFloat(i) * in_x.GetFloat(i))) + in_bias.GetFloat(0);
                return std::max(v, 0.0);
              },
              1e-6, "chain");
}

// The stores of a lowered function, by the name of the buffer each writes.
std::vector<std::string> StoredBuffers(const PrimFunc& f) {
  std::vector<std::string> names;
  PostOrderVisit(f->body, [&](const ObjectRef& node) {
    if (const auto* store = node.as<BufferStoreNode>()) names.push_back(store->buffer->name);
  });
  return names;
}

// A per-channel sigmoid scaling a feature map (a squeeze-and-excitation block) is computed
// once per channel, in a buffer of its own, not again for every element it scales; a sigmoid
// of the feature map itself, or a cheap per-channel stage, stays inlined.
TEST(TopiElementwise, SmallTranscendentalStagesBroadcastIntoTheOutputAreComputedOnce) {
  const DataType f32 = DataType::Float(32);
  te::Tensor x = te::placeholder({1, 24, 6, 6}, f32, "x");
  te::Tensor logits = te::placeholder({1, 24, 1, 1}, f32, "logits");
  te::Tensor scale = sigmoid(logits);
  te::Tensor y = multiply(x, scale);
  std::vector<std::string> stores =
      StoredBuffers(te::lower(schedule_injective({y}), {x, logits, y}, "se"));
  EXPECT_NE(std::find(stores.begin(), stores.end(), scale.op()->name), stores.end())
      << "the scale is not materialized";
  tir::HostArray in_x = RandomArray(f32, {1, 24, 6, 6}, 3);
  tir::HostArray in_logits = RandomArray(f32, {1, 24, 1, 1}, 4);
  ExpectClose(
      RunCompiled({x, logits}, y, {in_x, in_logits}),
      [&](int64_t i) { return in_x.GetFloat(i) / (1.0 + std::exp(-in_logits.GetFloat(i / 36))); },
      1e-6, "scaled");

  te::Tensor gated = multiply(x, sigmoid(x));
  stores = StoredBuffers(te::lower(schedule_injective({gated}), {x, gated}, "silu"));
  EXPECT_EQ(std::count(stores.begin(), stores.end(), gated.op()->name), int64_t(stores.size()));
  te::Tensor shifted = multiply(x, add(logits, logits));
  stores = StoredBuffers(te::lower(schedule_injective({shifted}), {x, logits, shifted}, "cheap"));
  EXPECT_EQ(std::count(stores.begin(), stores.end(), shifted.op()->name), int64_t(stores.size()));
}

TEST(TopiElementwise, BadOperandsAreUserErrors) {
  te::Tensor f = te::placeholder({4, 3}, DataType::Float(32), "f");
  te::Tensor i = te::placeholder({4, 3}, DataType::Int(32), "i");
  te::Tensor g = te::placeholder({5}, DataType::Float(32), "g");
  EXPECT_NE(ErrorOf([&] { add(f, i); }).find("add: operand types differ ('f' is float32, 'i' is int32)"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { add(f, g); }).find("add: shapes (4, 3) and (5) do not broadcast"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { exp(i); }).find("exp: 'i' is int32; the operator takes float tensors"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { logical_and(f, f); }).find("takes bool tensors"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { clip(f, 2, 1); }).find("min 2 is greater than max 1"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { mod(f, f); }).find("float operands need fmod = true"), std::string::npos);
}

}  // namespace
}  // namespace loom::topi
