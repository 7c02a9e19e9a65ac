// The power-of-two scheme (quantize.h): every tensor of the quantized region an integer q with
// a power-of-two scale 2^e, the region computed in integers, requantized by shift and clip.
//
// The realization is decided by the graph's shape alone, so it runs twice: once with
// stand-in exponents to learn which values need one (each value that goes to int8), then,
// after the calibration has observed exactly those, with their calibrated exponents.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "graph/quantize_calibration.h"
#include "loom/graph/functor.h"

namespace loom::graph::quantize_detail {
namespace {

const DataType kF32 = DataType::Float(32), kI8 = DataType::Int(8), kI32 = DataType::Int(32);

// The exponents of int8 values: x = q * 2^e with |q| <= 127.
constexpr double kLargestInt8 = 127;
// The widest shifts: right by s, the rounding's 2^(s-1) must be an int32 (s <= 30); left, an
// int8 value must stay within 2^30 (s <= 23).
constexpr int kWidestRightShift = 30, kWidestLeftShift = 23;

// The smallest e with largest <= 127 * 2^e (0 for an all-zero tensor).
int ExponentCovering(double largest) {
  if (!(largest > 0)) return 0;
  int e = static_cast<int>(std::ceil(std::log2(largest / kLargestInt8)));
  while (std::ldexp(kLargestInt8, e) < largest) ++e;  // log2's rounding, either way
  while (std::ldexp(kLargestInt8, e - 1) >= largest) --e;
  return e;
}

// The call's name hint, or its operator's name.
std::string NameOfCall(const CallNode& call) {
  return call.name_hint.empty() ? call.op->name : call.name_hint;
}

// An integer tensor standing for a float one: real = value * 2^exponent; value is int8 or
// int32.
struct IntegerValue {
  Expr value;
  int exponent = 0;
  bool Wide() const { return value.type().dtype() == kI32; }
};

Expr Int32Scalar(int64_t v) { return MakeScalarConstant(double(v), kI32); }

Expr Widen(const IntegerValue& v) {
  return v.Wide() ? v.value : MakeCast(v.value, kI32);
}

// An int32 (or integral float) value clipped to int8's symmetric range, as int8.
Expr ClipToInt8(const Expr& x) {
  Expr clipped = MakeCall("clip", {x}, {{"a_min", -kLargestInt8}, {"a_max", kLargestInt8}});
  return MakeCast(clipped, kI8);
}

// A weight as int8 with one power-of-two scale for the whole tensor, and its rounding error.
struct PowerOfTwoWeight {
  runtime::NDArray values;
  int exponent = 0;
  double error = 0;
};

PowerOfTwoWeight QuantizeWeight(const runtime::NDArray& weight) {
  const auto* w = static_cast<const float*>(weight.data());
  const int64_t n = weight.NumElements();
  double largest = 0;
  for (int64_t i = 0; i < n; ++i) largest = std::max(largest, std::fabs(double(w[i])));
  PowerOfTwoWeight q;
  q.exponent = ExponentCovering(largest);
  q.values = runtime::NDArray::Empty(weight.Shape(), kI8);
  auto* values = static_cast<int8_t*>(q.values.data());
  ErrorSum error;
  const double step = std::ldexp(1.0, q.exponent);
  for (int64_t i = 0; i < n; ++i) {
    const double v = std::clamp(std::nearbyint(double(w[i]) / step), -kLargestInt8, kLargestInt8);
    values[i] = static_cast<int8_t>(v);
    error.Add(w[i], v * step);
  }
  q.error = error.Relative();
  return q;
}

// Rewrites main's body into the integer form: the layers are `weights`' keys, each with its
// quantized weight. exponent_of(e) is the int8 exponent of the value of e (an expression of
// the original body) where the realization needs one. What it
// builds does not depend on the exponents; where they do not fit the integer form (a shift
// wider than int32, a bias beyond it) that is a loom::Error, except when `planning` (the
// stand-in exponents of the first run).
class PowerOfTwoRealizer : public ExprMutator {
 public:
  PowerOfTwoRealizer(const Expr& body,
                     const std::unordered_map<const CallNode*, PowerOfTwoWeight>& weights,
                     std::function<int(const Expr&)> exponent_of, bool planning)
      : weights_(weights), exponent_of_(std::move(exponent_of)), planning_(planning) {
    ++uses_[body.get()];
    results_.insert(body.get());
    if (const auto* tuple = body.as<TupleNode>()) {
      for (const Expr& field : tuple->fields) results_.insert(field.get());
    }
    PostOrderVisit(body, [&](const Expr& e) {
      if (const auto* call = e.as<CallNode>()) {
        for (const Expr& arg : call->args) ++uses_[arg.get()];
      } else if (const auto* tuple = e.as<TupleNode>()) {
        for (const Expr& field : tuple->fields) ++uses_[field.get()];
      } else if (const auto* item = e.as<TupleGetItemNode>()) {
        ++uses_[item->tuple.get()];
      }
    });
  }

  // The float path: a value computed in integers is read as q * 2^e. A float operator inside
  // the model reads its int8 form, as it would leave an accelerator; a result of the model
  // keeps its int32 accumulator's precision (the logits of a last dense layer).
  Expr VisitExpr_(const CallNode* op) override {
    const Expr e(op);
    if (std::optional<IntegerValue> integer = Integer(e)) {
      const IntegerValue q = integer->Wide() && results_.count(op) ? *integer : Int8(e);
      const DataType t = q.value.type().dtype();
      return MakeCall("qnn.dequantize",
                      {q.value, MakeScalarConstant(std::ldexp(1.0, q.exponent), kF32),
                       MakeScalarConstant(0, t)});
    }
    return ExprMutator::VisitExpr_(op);
  }

  // The exponent of the int8 data each layer reads.
  const std::unordered_map<const CallNode*, int>& data_exponents() const { return data_exponents_; }

 private:
  // The integer form of e's value, if it is computed in integers.
  std::optional<IntegerValue> Integer(const Expr& e) {
    auto it = integer_.find(e.get());
    if (it != integer_.end()) return it->second;
    std::optional<IntegerValue> result = IntegerOf(e);
    integer_[e.get()] = result;
    return result;
  }

  std::optional<IntegerValue> IntegerOf(const Expr& e) {
    const auto* call = e.as<CallNode>();
    if (call == nullptr || call->op == nullptr || e.type().is_tuple() || e.type().dtype() != kF32) {
      return std::nullopt;
    }
    if (weights_.count(call)) return Product(*call);
    const std::string& name = call->op->name;
    if (name == "add" || name == "nn.bias_add") return Add(*call);
    if (call->args.size() != 1 || !Integer(call->args[0])) return std::nullopt;
    if (name == "nn.relu") {
      const IntegerValue x = Operand(call->args[0], /*wide_allowed=*/true);
      return IntegerValue{MakeCall("nn.relu", {x.value}, {}, call->name_hint), x.exponent};
    }
    // Operators that choose or move values without arithmetic keep the exponent.
    if (name == "nn.max_pool2d" || name == "reshape" || name == "nn.batch_flatten" ||
        name == "squeeze" || name == "expand_dims" || name == "transpose") {
      const IntegerValue x = Int8(call->args[0]);
      return IntegerValue{MakeCall(call->op, {x.value}, call->attrs, call->name_hint), x.exponent};
    }
    return std::nullopt;
  }

  // conv2d / dense: int8 data times the int8 weight, summed in int32.
  IntegerValue Product(const CallNode& call) {
    const IntegerValue data = Int8(call.args[0]);
    data_exponents_[&call] = data.exponent;
    const PowerOfTwoWeight& weight = weights_.at(&call);
    Expr quantized = MakeConstant(weight.values, call.name_hint + ".weight_quantized");
    return {MakeIntegerProduct(call, data.value, quantized, 0, 0),
            data.exponent + weight.exponent};
  }

  // x + a constant (a bias, rounded to x's exponent in int32), or the sum of two integer
  // values at the finer exponent of the two.
  std::optional<IntegerValue> Add(const CallNode& call) {
    const bool bias = call.op->name == "nn.bias_add";
    Expr x = call.args[0], y = call.args[1];
    if (!bias && x.as<ConstantNode>() != nullptr) std::swap(x, y);
    if (!Integer(x)) return std::nullopt;
    if (const auto* constant = y.as<ConstantNode>()) {
      if (constant->data.dtype() != kF32) return std::nullopt;
      const IntegerValue widened = Operand(x, /*wide_allowed=*/true);
      Expr rounded = MakeConstant(RoundedToInt32(constant->data, widened.exponent, call));
      return IntegerValue{MakeCall(call.op, {Widen(widened), rounded}, call.attrs, call.name_hint),
                          widened.exponent};
    }
    if (bias || !Integer(y)) return std::nullopt;
    // One operand may stay an int32 accumulator: the first that is one (and has no other
    // user); the other comes in as int8.
    const bool x_wide = WideOperand(x);
    const IntegerValue a = Operand(x, x_wide), b = Operand(y, !x_wide);
    const int exponent = std::min(a.exponent, b.exponent);
    // The coarser operand shifts left (a negative shift, for RequireShift).
    RequireShift(exponent - std::max(a.exponent, b.exponent), call, "adding");
    auto aligned = [&](const IntegerValue& v) {
      Expr wide = Widen(v);
      const int shift = std::clamp(v.exponent - exponent, 0, kWidestLeftShift);
      if (shift == 0) return wide;
      if (v.Wide()) {
        // An int8 value shifted by up to 23 bits stays within 2^30; an int32 one saturates
        // there first, so that neither the shift nor the sum wraps.
        const double limit = std::ldexp(1.0, 30 - shift);
        wide = MakeCall("clip", {wide}, {{"a_min", -limit}, {"a_max", limit}});
      }
      return Expr(MakeCall("left_shift", {wide, Int32Scalar(shift)}));
    };
    return IntegerValue{MakeCall("add", {aligned(a), aligned(b)}, {}, call.name_hint), exponent};
  }

  // The float32 constant (the operand of `add`) rounded to multiples of 2^exponent, as int32.
  runtime::NDArray RoundedToInt32(const runtime::NDArray& c, int exponent, const CallNode& add) {
    runtime::NDArray result = runtime::NDArray::Empty(c.Shape(), kI32);
    const auto* in = static_cast<const float*>(c.data());
    auto* out = static_cast<int32_t*>(result.data());
    constexpr double kLargest = std::numeric_limits<int32_t>::max();
    for (int64_t i = 0; i < c.NumElements(); ++i) {
      const double v = std::nearbyint(std::ldexp(double(in[i]), -exponent));
      LOOM_CHECK_USER(planning_ || std::fabs(v) <= kLargest)
          << "QuantizeInt8: the constant " << in[i] << " added in '" << NameOfCall(add)
          << "' is beyond int32 at its operand's scale 2^" << exponent << "; the layer's values "
          << "are too small beside it for power-of-two scales; use the affine scheme";
      out[i] = static_cast<int32_t>(std::clamp(v, -kLargest, kLargest));
    }
    return result;
  }

  // A loom::Error unless a value may be shifted by `shift` bits (right if positive) where
  // `call` is realized.
  void RequireShift(int shift, const CallNode& call, const std::string& doing) const {
    LOOM_CHECK_USER(planning_ || (shift <= kWidestRightShift && -shift <= kWidestLeftShift))
        << "QuantizeInt8: " << doing << " '" << NameOfCall(call) << "' in int8/int32 takes a shift "
        << "of " << shift << " bits, beyond what int32 holds (" << -kWidestLeftShift << " to "
        << kWidestRightShift << "): its values and its operands' differ too much in size for "
        << "power-of-two scales; use the affine scheme";
  }

  // Whether e's integer form is int32 and e has no other user: an accumulator that its user
  // may extend in int32.
  bool WideOperand(const Expr& e) {
    std::optional<IntegerValue> v = Integer(e);
    return v && v->Wide() && uses_[e.get()] == 1;
  }

  // e's integer form as an operand: int32 where allowed and WideOperand, int8 otherwise.
  IntegerValue Operand(const Expr& e, bool wide_allowed) {
    if (wide_allowed && WideOperand(e)) return *Integer(e);
    return Int8(e);
  }

  // e's value as int8: its integer form requantized by shift and clip, or its float value
  // rounded.
  IntegerValue Int8(const Expr& e) {
    auto it = int8_.find(e.get());
    if (it != int8_.end()) return it->second;
    std::optional<IntegerValue> integer = Integer(e);
    IntegerValue result;
    if (integer && !integer->Wide()) {
      result = *integer;
    } else {
      result.exponent = exponent_of_(e);
      if (integer) {
        const auto* call = e.as<CallNode>();
        RequireShift(result.exponent - integer->exponent, *call, "requantizing");
        result.value = Requantize(*integer, result.exponent);
      } else {
        result.value = QuantizeFloat(VisitExpr(e), result.exponent);
      }
    }
    int8_[e.get()] = result;
    return result;
  }

  // round_half_even(x / 2^exponent) clipped to [-127, 127], as int8 (clipped as a float, so
  // that no value is beyond the integers it is cast to).
  static Expr QuantizeFloat(const Expr& x, int exponent) {
    Expr scaled = MakeCall("multiply", {x, MakeScalarConstant(std::ldexp(1.0, -exponent), kF32)});
    return ClipToInt8(MakeCall("round", {scaled}));
  }

  // The int32 value v at `exponent` as int8: shifted right with rounding half up (or left),
  // clipped. The shift within [-kWidestLeftShift, kWidestRightShift] (RequireShift).
  static Expr Requantize(const IntegerValue& v, int exponent) {
    const int shift = std::clamp(exponent - v.exponent, -kWidestLeftShift, kWidestRightShift);
    Expr x = v.value;
    if (shift > 0) {
      // Below the largest int32 by the rounding's half, so that adding it cannot wrap (a value
      // that large saturates after the shift, or moves by one step at most).
      const int64_t half = int64_t{1} << (shift - 1);
      x = MakeCall("clip", {x},
                   {{"a_min", double(std::numeric_limits<int32_t>::min())},
                    {"a_max", double(std::numeric_limits<int32_t>::max() - half)}});
      x = MakeCall("add", {x, Int32Scalar(half)});
      x = MakeCall("right_shift", {x, Int32Scalar(shift)});
    } else if (shift < 0) {
      // Anything beyond int8's range saturates anyway; clipping first keeps the shift in int32.
      x = MakeCall("clip", {x}, {{"a_min", -128.0}, {"a_max", 127.0}});
      x = MakeCall("left_shift", {x, Int32Scalar(-shift)});
    }
    return ClipToInt8(x);
  }

  const std::unordered_map<const CallNode*, PowerOfTwoWeight>& weights_;
  std::function<int(const Expr&)> exponent_of_;
  bool planning_;
  std::unordered_map<const Object*, int> uses_;
  std::unordered_set<const Object*> results_;  // main's result, or its tuple's fields
  std::unordered_map<const Object*, std::optional<IntegerValue>> integer_;
  std::unordered_map<const Object*, IntegerValue> int8_;
  std::unordered_map<const CallNode*, int> data_exponents_;
};

// A power of two's exponent, or a loom::Error.
int ExponentOfGlobalScale(double global_scale) {
  int exponent = 0;
  LOOM_CHECK_USER(std::frexp(global_scale, &exponent) == 0.5 && global_scale > 0)
      << "QuantizeInt8: the global scale must be a power of two (such as 4, 8 or 16), got "
      << global_scale;
  return exponent - 1;
}

}  // namespace

IRModule QuantizePowerOfTwo(const IRModule& module,
                            const std::vector<std::vector<runtime::NDArray>>& samples,
                            const QuantizeOptions& options, QuantizeReport* report) {
  // With a global scale, every activation's exponent; 7: int8's magnitude bits.
  const bool global = options.global_scale != 0;
  const int global_exponent = global ? ExponentOfGlobalScale(options.global_scale) - 7 : 0;
  IRModule prepared = PrepareForQuantization(module, Target::Parse(options.target));
  const Function& main = prepared.main();
  const Layers found = QuantizableLayers(main, options);

  // The values the realization quantizes to int8, and every layer's data (for the report).
  std::vector<Expr> observed;
  std::vector<std::string> names;
  std::unordered_map<const Object*, size_t> index;
  auto observe = [&](const Expr& e, const std::string& name) {
    if (index.emplace(e.get(), observed.size()).second) {
      observed.push_back(e);
      names.push_back(name);
    }
  };
  // Each layer's weight, quantized once for both runs.
  std::unordered_map<const CallNode*, PowerOfTwoWeight> weights;
  for (size_t i = 0; i < found.calls.size(); ++i) {
    observe(found.calls[i]->args[0], "the data of layer '" + found.names[i] + "'");
    weights[found.calls[i]] = QuantizeWeight(found.calls[i]->args[1].as<ConstantNode>()->data);
  }
  PowerOfTwoRealizer(
      main->body, weights,
      [&](const Expr& e) {
        const auto* call = e.as<CallNode>();
        observe(e, call == nullptr ? std::string("an input")
                                   : "the result of '" + NameOfCall(*call) + "'");
        return 0;
      },
      /*planning=*/true)
      .VisitExpr(main->body);

  Calibration calibration(main, observed, options.target, samples);
  const std::vector<ObservedRange> ranges = CalibratedRanges(calibration, options, names);
  std::vector<int> exponents;
  for (const ObservedRange& r : ranges) {
    exponents.push_back(
        global ? global_exponent
               : ExponentCovering(std::max(std::fabs(r.range_min), std::fabs(r.range_max))));
  }
  PowerOfTwoRealizer realizer(
      main->body, weights, [&](const Expr& e) { return exponents[index.at(e.get())]; },
      /*planning=*/false);
  Expr body = realizer.VisitExpr(main->body);

  std::vector<QuantizedLayer> layers(found.calls.size());
  std::vector<ErrorSum> errors(found.calls.size());
  std::vector<float> data_scales(found.calls.size());
  for (size_t i = 0; i < found.calls.size(); ++i) {
    const PowerOfTwoWeight& weight = weights.at(found.calls[i]);
    QuantizedLayer& layer = layers[i] =
        ReportedLayer(found, i, ranges[index.at(found.calls[i]->args[0].get())]);
    data_scales[i] =
        static_cast<float>(std::ldexp(1.0, realizer.data_exponents().at(found.calls[i])));
    layer.data_scale = data_scales[i];
    layer.weight_scale = std::ldexp(1.0, weight.exponent);
    layer.weight_error = weight.error;
  }
  std::vector<std::vector<size_t>> reading(observed.size());  // the layers reading each value
  for (size_t i = 0; i < found.calls.size(); ++i) {
    reading[index.at(found.calls[i]->args[0].get())].push_back(i);
  }
  calibration.ForEachValue([&](size_t k, double v) {
    for (size_t i : reading[k]) errors[i].Add(v, RoundTrip(v, data_scales[i], 0, -127, 127));
  });
  for (size_t i = 0; i < found.calls.size(); ++i) layers[i].data_error = errors[i].Relative();

  return QuantizedModule(module, prepared, body, options, found, static_cast<int>(samples.size()),
                         std::move(layers), report);
}

}  // namespace loom::graph::quantize_detail
