// QuantizeInt8: calibration (the model compiled with each quantizable layer's data as an
// output, run on the samples), then the rewrite of those layers into the QDQ form that
// FoldQuantizedProducts folds. See quantize.h for the scheme.
#include "loom/graph/quantize.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <tuple>
#include <utility>

#include "loom/graph/compile.h"
#include "loom/graph/functor.h"
#include "loom/graph/transform.h"
#include "loom/ir/pass_context.h"
#include "loom/runtime/graph_executor.h"

namespace loom::graph {
namespace {

const DataType kF32 = DataType::Float(32);

// A layer to quantize: a groups-1 conv2d or a dense layer with a constant float32 weight
// (whose axis 0 is the output channels) and float32 data.
bool Quantizable(const CallNode& call) {
  if (call.op == nullptr) return false;
  const std::string& name = call.op->name;
  if (name != "nn.conv2d" && name != "nn.dense") return false;
  if (name == "nn.conv2d" && call.attrs.GetInt("groups") != 1) return false;
  const auto* weight = call.args[1].as<ConstantNode>();
  return weight != nullptr && weight->data.dtype() == kF32 && call.args[0].type().dtype() == kF32 &&
         weight->data.NumElements() > 0;
}

// The layers as Compile sees them: batch norms folded into the weights, the weights constant.
IRModule Prepare(const IRModule& module, const Target& target) {
  transform::PassContext context = transform::PassContext::Current();
  context.opt_level = 3;
  transform::PassContextScope scope(context);
  return RunPasses(
      module, {SimplifyInference(), FoldConstant(target), FoldScaleAxis(), FoldConstant(target)});
}

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

// round_half_even(v / scale) + zero_point saturated to [low, high], dequantized.
double RoundTrip(double v, float scale, int64_t zero_point, int64_t low, int64_t high) {
  double q = std::clamp<double>(std::nearbyint(static_cast<float>(v) / scale) + double(zero_point),
                                double(low), double(high));
  return (q - double(zero_point)) * scale;
}

// Accumulates sum (q(v) - v)^2 and sum v^2.
struct ErrorSum {
  double error = 0, signal = 0;
  void Add(double v, double rounded) {
    error += (rounded - v) * (rounded - v);
    signal += v * v;
  }
  double Relative() const { return signal > 0 ? std::sqrt(error / signal) : 0.0; }
};

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

// The range [lo, hi] within [min, max] that leaves out at most (100 - percentile) / 2 percent
// of the values counted in `bins` (equal widths over [min, max]) at each end.
std::pair<double, double> PercentileRange(const std::vector<int64_t>& bins, double min,
                                          double max, double percentile) {
  int64_t total = 0;
  for (int64_t count : bins) total += count;
  const double cut = static_cast<double>(total) * (100.0 - percentile) / 200.0;
  const int64_t n = static_cast<int64_t>(bins.size());
  int64_t left = 0, right = n;  // the range is bins [left, right)
  for (double out = 0; left < n - 1 && out + double(bins[left]) <= cut; ++left) out += bins[left];
  for (double out = 0; right > left + 1 && out + double(bins[right - 1]) <= cut; --right) {
    out += bins[right - 1];
  }
  const double width = (max - min) / static_cast<double>(n);
  return {min + double(left) * width, right == n ? max : min + double(right) * width};
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
  const std::string& target = options.target;
  IRModule prepared = Prepare(module, Target::Parse(target));
  const Function& main = prepared.main();
  std::vector<const CallNode*> calls;
  PostOrderVisit(main->body, [&](const Expr& e) {
    const auto* call = e.as<CallNode>();
    if (call != nullptr && Quantizable(*call)) calls.push_back(call);
  });
  LOOM_CHECK_USER(!calls.empty())
      << "QuantizeInt8: the model has no layer to quantize (a conv2d with groups 1 or a dense "
      << "layer with a constant float32 weight)";

  // The model with every quantized layer's data as an output.
  std::vector<Expr> observed;
  for (const CallNode* call : calls) observed.push_back(call->args[0]);
  CompiledModel calibration =
      Compile(IRModule::FromFunction(MakeFunction(main->params, MakeTuple(observed))),
              {.opt_level = 3, .target = target});
  runtime::GraphExecutor executor(MakeGraphModel(calibration));
  auto run = [&](const std::vector<runtime::NDArray>& sample) {
    LOOM_CHECK_USER(static_cast<int>(sample.size()) == executor.NumInputs())
        << "QuantizeInt8: a calibration sample holds " << sample.size() << " arrays; the model "
        << "takes " << executor.NumInputs() << " inputs";
    for (int i = 0; i < executor.NumInputs(); ++i)
      executor.SetInput(i, sample[static_cast<size_t>(i)]);
    executor.Run();
  };

  // visit(i, v) for every value v that layer i's data takes on the samples.
  auto for_each_value = [&](const std::function<void(size_t, double)>& visit) {
    for (const std::vector<runtime::NDArray>& sample : samples) {
      run(sample);
      for (size_t i = 0; i < calls.size(); ++i) {
        runtime::NDArray data = executor.GetOutput(static_cast<int>(i));
        const float* v = FloatData(data);
        for (int64_t j = 0; j < data.NumElements(); ++j) visit(i, v[j]);
      }
    }
  };

  std::vector<QuantizedLayer> layers(calls.size());
  for (size_t i = 0; i < calls.size(); ++i) {
    layers[i].op = calls[i]->op->name;
    layers[i].name = calls[i]->name_hint.empty() ? layers[i].op + " #" + std::to_string(i)
                                                 : calls[i]->name_hint;
  }
  std::vector<double> lows(calls.size(), std::numeric_limits<double>::infinity());
  std::vector<double> highs(calls.size(), -std::numeric_limits<double>::infinity());
  std::vector<bool> finite(calls.size(), true);
  for_each_value([&](size_t i, double v) {
    finite[i] = finite[i] && std::isfinite(v);
    lows[i] = std::min(lows[i], v);
    highs[i] = std::max(highs[i], v);
  });
  for (size_t i = 0; i < calls.size(); ++i) {
    LOOM_CHECK_USER(finite[i])
        << "QuantizeInt8: the data of layer '" << layers[i].name
        << "' takes an infinite or NaN value on the calibration samples, so it has no "
        << "finite scale; check the samples, or leave the model in float";
  }
  std::vector<double> range_lows = lows, range_highs = highs;
  if (options.calibration == "percentile") {
    constexpr int64_t kBins = 2048;
    std::vector<std::vector<int64_t>> bins(calls.size(), std::vector<int64_t>(kBins, 0));
    std::vector<double> bins_per_unit(calls.size(), 0.0);  // 0 where the range is one value
    for (size_t i = 0; i < calls.size(); ++i) {
      if (highs[i] > lows[i]) bins_per_unit[i] = kBins / (highs[i] - lows[i]);
    }
    for_each_value([&](size_t i, double v) {
      const auto bin = static_cast<int64_t>((v - lows[i]) * bins_per_unit[i]);
      ++bins[i][std::clamp<int64_t>(bin, 0, kBins - 1)];
    });
    for (size_t i = 0; i < calls.size(); ++i) {
      std::tie(range_lows[i], range_highs[i]) =
          PercentileRange(bins[i], lows[i], highs[i], options.percentile);
    }
  }
  std::vector<Uint8Params> params;
  std::vector<QuantizedWeight> weights;
  for (size_t i = 0; i < calls.size(); ++i) {
    params.push_back(DataParams(range_lows[i], range_highs[i]));
    weights.push_back(QuantizeWeight(calls[i]->args[1].as<ConstantNode>()->data));
    QuantizedLayer& layer = layers[i];
    layer.data_min = lows[i];
    layer.data_max = highs[i];
    layer.range_min = range_lows[i];
    layer.range_max = range_highs[i];
    layer.data_scale = params[i].scale;
    layer.data_zero_point = params[i].zero_point;
    layer.weight_error = weights[i].error;
  }
  // The data's rounding error, now that the scales are known.
  std::vector<ErrorSum> errors(calls.size());
  for_each_value([&](size_t i, double v) {
    errors[i].Add(v, RoundTrip(v, params[i].scale, params[i].zero_point, 0, 255));
  });
  for (size_t i = 0; i < calls.size(); ++i) layers[i].data_error = errors[i].Relative();

  std::map<const CallNode*, size_t> index;
  for (size_t i = 0; i < calls.size(); ++i) index[calls[i]] = i;
  LayerQuantizer quantizer(index, params, &weights, layers);
  Expr body = quantizer.VisitExpr(main->body);
  IRModule result = prepared;
  result.Add("main", MakeFunction(main->params, body, main->attrs), /*replace=*/true);
  result.SetOutputNames(module.output_names());  // the passes keep functions only
  if (report != nullptr) {
    report->samples = static_cast<int>(samples.size());
    report->layers = std::move(layers);
  }
  return result;
}

}  // namespace loom::graph
