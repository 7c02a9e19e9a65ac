// QuantizeInt8: calibration (the model compiled with each quantizable layer's data as an
// output, run on the samples), then the rewrite of those layers into the QDQ form that
// FoldQuantizedProducts folds, or (the power-of-two scheme) into integer arithmetic,
// quantize_power_of_two.cc. See quantize.h for the schemes.
#include "loom/graph/quantize.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <map>
#include <sstream>
#include <utility>

#include "graph/quantize_calibration.h"
#include "loom/graph/functor.h"

namespace loom::graph {
namespace {

using quantize_detail::ErrorSum;

const DataType kF32 = DataType::Float(32);

const float* FloatData(const runtime::NDArray& a) { return static_cast<const float*>(a.data()); }

struct Uint8Params {
  float scale = 1;
  int64_t zero_point = 0;
};

// uint8 over [min(lo, 0), max(hi, 0)], zero exactly representable.
Uint8Params DataParams(double lo, double hi) {
  lo = std::min(lo, 0.0);
  hi = std::max(hi, 0.0);
  Uint8Params p;
  if (hi > lo) p.scale = static_cast<float>((hi - lo) / 255.0);
  p.zero_point = std::clamp<int64_t>(static_cast<int64_t>(std::nearbyint(-lo / p.scale)), 0, 255);
  return p;
}

// The weight as int8 with one symmetric scale per output channel (axis 0); its error.
struct QuantizedWeight {
  runtime::NDArray values, scales, zero_points;
  double error = 0;
};

QuantizedWeight QuantizeWeight(const runtime::NDArray& weight) {
  const std::vector<int64_t> shape = weight.Shape();
  const int64_t channels = shape[0], per_channel = weight.NumElements() / channels;
  QuantizedWeight q;
  q.values = runtime::NDArray::Empty(shape, DataType::Int(8));
  q.scales = runtime::NDArray::Empty({channels}, kF32);
  q.zero_points = runtime::NDArray::Empty({channels}, DataType::Int(8));
  const float* w = FloatData(weight);
  auto* values = static_cast<int8_t*>(q.values.data());
  auto* scales = static_cast<float*>(q.scales.data());
  auto* zeros = static_cast<int8_t*>(q.zero_points.data());
  ErrorSum error;
  for (int64_t k = 0; k < channels; ++k) {
    const float* row = w + k * per_channel;
    double largest = 0;
    for (int64_t i = 0; i < per_channel; ++i)
      largest = std::max(largest, std::fabs(double(row[i])));
    const float scale = largest > 0 ? static_cast<float>(largest / 127.0) : 1.0f;
    scales[k] = scale;
    zeros[k] = 0;
    for (int64_t i = 0; i < per_channel; ++i) {
      const double q_value = std::clamp<double>(std::nearbyint(row[i] / scale), -127, 127);
      values[k * per_channel + i] = static_cast<int8_t>(q_value);
      error.Add(row[i], q_value * scale);
    }
  }
  q.error = error.Relative();
  return q;
}

// What rounding a layer's operands costs: their relative errors, as independent noises add.
double LayerError(const QuantizedLayer& layer) {
  return std::hypot(layer.data_error, layer.weight_error);
}

double MedianLayerError(const std::vector<QuantizedLayer>& layers) {
  std::vector<double> errors;
  for (const QuantizedLayer& layer : layers) errors.push_back(LayerError(layer));
  if (errors.empty()) return 0;
  // The lower median: of two layers, the smaller error (an outlier is not its own measure).
  const size_t middle = (errors.size() - 1) / 2;
  std::nth_element(errors.begin(), errors.begin() + middle, errors.end());
  return errors[middle];
}

// The multiply-adds of a conv2d or dense layer: per output element, its weight's elements
// per output channel (axis 0).
double MultiplyAdds(const CallNode& call) {
  const runtime::NDArray& weight = call.args[1].as<ConstantNode>()->data;
  double outputs = 1;
  const std::vector<int64_t> shape = call.checked_type.ConstShape().value();
  for (int64_t d : shape) outputs *= double(d);
  return outputs * double(weight.NumElements() / weight.Shape()[0]);
}

std::string Percent(double fraction) {
  std::ostringstream text;
  text << std::setprecision(2) << 100 * fraction << "%";
  return text.str();
}

// x quantized to uint8 and dequantized: the QDQ pair of a quantized layer's data.
Expr QuantizeDequantize(const Expr& x, const Uint8Params& p, const std::string& name) {
  Expr scale = MakeScalarConstant(p.scale, kF32, name + ".data_scale");
  Expr zero_point =
      MakeScalarConstant(double(p.zero_point), DataType::UInt(8), name + ".data_zero_point");
  Expr q = MakeCall("round", {MakeCall("divide", {x, scale})});
  q = MakeCall("add", {q, MakeScalarConstant(double(p.zero_point), kF32)});
  q = MakeCall("clip", {q}, {{"a_min", 0.0}, {"a_max", 255.0}});
  q = MakeCall("cast", {q}, {{"dtype", std::string("uint8")}}, name + ".data_quantized");
  return MakeCall("qnn.dequantize", {q, scale, zero_point}, {}, name + ".data");
}

class LayerQuantizer : public ExprMutator {
 public:
  LayerQuantizer(const std::map<const CallNode*, size_t>& index,
                 const std::vector<Uint8Params>& data, std::vector<QuantizedWeight>* weights,
                 const std::vector<QuantizedLayer>& layers)
      : index_(index), data_(data), weights_(weights), layers_(layers) {}

  Expr VisitExpr_(const CallNode* op) override {
    Expr rebuilt = ExprMutator::VisitExpr_(op);
    auto it = index_.find(op);
    if (it == index_.end()) return rebuilt;
    const auto* call = rebuilt.as<CallNode>();
    const size_t i = it->second;
    const std::string& name = layers_[i].name;
    const QuantizedWeight& w = (*weights_)[i];
    Expr weight = MakeCall("qnn.dequantize",
                           {MakeConstant(w.values, name + ".weight_quantized"),
                            MakeConstant(w.scales, name + ".weight_scale"),
                            MakeConstant(w.zero_points, name + ".weight_zero_point")},
                           {{"axis", int64_t{0}}}, name + ".weight");
    return MakeCall(call->op, {QuantizeDequantize(call->args[0], data_[i], name), weight},
                    call->attrs, call->name_hint);
  }

 private:
  const std::map<const CallNode*, size_t>& index_;
  const std::vector<Uint8Params>& data_;
  std::vector<QuantizedWeight>* weights_;
  const std::vector<QuantizedLayer>& layers_;
};

}  // namespace

IRModule QuantizeInt8(const IRModule& module,
                      const std::vector<std::vector<runtime::NDArray>>& samples,
                      const QuantizeOptions& options, QuantizeReport* report) {
  LOOM_CHECK_USER(!samples.empty()) << "QuantizeInt8: calibration needs at least one sample";
  LOOM_CHECK_USER(options.calibration == "max" || options.calibration == "percentile")
      << "QuantizeInt8: unknown calibration method '" << options.calibration
      << "'; the methods are max and percentile";
  LOOM_CHECK_USER(options.calibration != "percentile" ||
                  (options.percentile > 0 && options.percentile <= 100))
      << "QuantizeInt8: the percentile must be in (0, 100], got " << options.percentile;
  LOOM_CHECK_USER(options.scheme == "affine" || options.scheme == "power-of-two")
      << "QuantizeInt8: unknown scheme '" << options.scheme
      << "'; the schemes are affine and power-of-two";
  LOOM_CHECK_USER(options.global_scale == 0 || options.scheme == "power-of-two")
      << "QuantizeInt8: a global scale is for the power-of-two scheme";
  if (options.scheme == "power-of-two") {
    return quantize_detail::QuantizePowerOfTwo(module, samples, options, report);
  }
  IRModule prepared =
      quantize_detail::PrepareForQuantization(module, Target::Parse(options.target));
  const Function& main = prepared.main();
  const quantize_detail::Layers found = quantize_detail::QuantizableLayers(main, options);
  const std::vector<const CallNode*>& calls = found.calls;

  // The model with every quantized layer's data as an output.
  std::vector<Expr> observed;
  for (const CallNode* call : calls) observed.push_back(call->args[0]);
  std::vector<std::string> described;
  for (const std::string& name : found.names)
    described.push_back("the data of layer '" + name + "'");
  quantize_detail::Calibration calibration(main, observed, options.target, samples);
  const std::vector<quantize_detail::ObservedRange> ranges =
      quantize_detail::CalibratedRanges(calibration, options, described);

  std::vector<QuantizedLayer> layers(calls.size());
  std::vector<Uint8Params> params;
  std::vector<QuantizedWeight> weights;
  for (size_t i = 0; i < calls.size(); ++i) {
    const quantize_detail::ObservedRange& range = ranges[i];
    params.push_back(DataParams(range.range_min, range.range_max));
    weights.push_back(QuantizeWeight(calls[i]->args[1].as<ConstantNode>()->data));
    QuantizedLayer& layer = layers[i] = quantize_detail::ReportedLayer(found, i, range);
    layer.data_scale = params[i].scale;
    layer.data_zero_point = params[i].zero_point;
    layer.weight_error = weights[i].error;
  }
  // The data's rounding error, now that the scales are known.
  std::vector<ErrorSum> errors(calls.size());
  calibration.ForEachValue([&](size_t i, double v) {
    errors[i].Add(v, quantize_detail::RoundTrip(v, params[i].scale, params[i].zero_point, 0, 255));
  });
  for (size_t i = 0; i < calls.size(); ++i) layers[i].data_error = errors[i].Relative();

  // The layers worth quantizing (all, without auto_keep_float); the rest join kept_float.
  std::vector<double> multiply_adds;
  double total = 0;
  for (const CallNode* call : calls) {
    multiply_adds.push_back(MultiplyAdds(*call));
    total += multiply_adds.back();
  }
  const std::vector<bool> not_worth = options.auto_keep_float
                                          ? LayersNotWorthQuantizing(layers, multiply_adds)
                                          : std::vector<bool>(calls.size(), false);
  quantize_detail::Layers quantized = found;
  quantized.calls.clear();
  quantized.names.clear();
  std::vector<QuantizedLayer> reported;
  std::map<const CallNode*, size_t> index;
  for (size_t i = 0; i < calls.size(); ++i) {
    if (not_worth[i]) {
      quantized.kept_float.push_back(found.names[i]);
      std::ostringstream why;
      why << "rounding error " << Percent(LayerError(layers[i])) << " against the median layer's "
          << Percent(MedianLayerError(layers)) << ", " << Percent(multiply_adds[i] / total)
          << " of the multiply-adds";
      quantized.kept_float_why.push_back(why.str());
      continue;
    }
    index[calls[i]] = i;
    quantized.calls.push_back(calls[i]);
    quantized.names.push_back(found.names[i]);
    reported.push_back(layers[i]);
  }
  LayerQuantizer quantizer(index, params, &weights, layers);
  Expr body = quantizer.VisitExpr(main->body);
  return quantize_detail::QuantizedModule(module, prepared, body, options, quantized,
                                          static_cast<int>(samples.size()), std::move(reported),
                                          report);
}

std::vector<bool> LayersNotWorthQuantizing(const std::vector<QuantizedLayer>& layers,
                                           const std::vector<double>& multiply_adds) {
  LOOM_ICHECK(layers.size() == multiply_adds.size())
      << "LayersNotWorthQuantizing: " << layers.size() << " layers, " << multiply_adds.size()
      << " counts of multiply-adds";
  double total = 0;
  for (double m : multiply_adds) total += m;
  const double median = MedianLayerError(layers);
  std::vector<bool> not_worth(layers.size(), false);
  for (size_t i = 0; i < layers.size(); ++i) {
    const double error = LayerError(layers[i]);
    not_worth[i] = error >= kOutlierFactor * median && error >= kNoticeableError &&
                   multiply_adds[i] <= kSmallShare * total;
  }
  return not_worth;
}

}  // namespace loom::graph
