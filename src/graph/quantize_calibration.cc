// The quantizers' shared parts: quantizable layers, the prepared model, calibration ranges.
#include "graph/quantize_calibration.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <utility>

#include "loom/graph/functor.h"
#include "loom/graph/transform.h"
#include "loom/ir/pass_context.h"

namespace loom::graph::quantize_detail {
namespace {

const DataType kF32 = DataType::Float(32);

// The range [lo, hi] within [min, max] that leaves out at most (100 - percentile) / 2 percent
// of the values counted in `bins` (equal widths over [min, max]) at each end.
std::pair<double, double> PercentileRange(const std::vector<int64_t>& bins, double min, double max,
                                          double percentile) {
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

}  // namespace

namespace {

bool Quantizable(const CallNode& call) {
  if (call.op == nullptr) return false;
  const std::string& name = call.op->name;
  if (name != "nn.conv2d" && name != "nn.dense") return false;
  if (name == "nn.conv2d" && call.attrs.GetInt("groups") != 1) return false;
  const auto* weight = call.args[1].as<ConstantNode>();
  return weight != nullptr && weight->data.dtype() == kF32 && call.args[0].type().dtype() == kF32 &&
         weight->data.NumElements() > 0 && call.attrs.GetString("out_dtype").empty();
}

bool AllFinite(const runtime::NDArray& a) {
  const auto* v = static_cast<const float*>(a.data());
  return std::all_of(v, v + a.NumElements(), [](float x) { return std::isfinite(x); });
}

}  // namespace

Layers QuantizableLayers(const Function& main, const QuantizeOptions& options) {
  std::vector<std::string> names;
  std::vector<const CallNode*> calls;
  PostOrderVisit(main->body, [&](const Expr& e) {
    const auto* call = e.as<CallNode>();
    if (call == nullptr || !Quantizable(*call)) return;
    names.push_back(call->name_hint.empty() ? call->op->name + " #" + std::to_string(calls.size())
                                            : call->name_hint);
    calls.push_back(call);
    LOOM_CHECK_USER(AllFinite(call->args[1].as<ConstantNode>()->data))
        << "QuantizeInt8: the weight of layer '" << names.back()
        << "' holds an infinite or NaN value, so it has no finite scale; fix the model, or "
        << "leave the layer in float (--keep-float)";
  });
  LOOM_CHECK_USER(!calls.empty())
      << "QuantizeInt8: the model has no layer to quantize (a conv2d with groups 1 or a dense "
      << "layer with a constant float32 weight)";
  const std::set<std::string> keep(options.keep_float.begin(), options.keep_float.end());
  for (const std::string& name : keep) {
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    std::string known;
    for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
    LOOM_THROW << "QuantizeInt8: no layer to quantize is named '" << name
               << "' (to keep in float); the layers: " << known;
  }
  Layers layers;
  for (size_t i = 0; i < calls.size(); ++i) {
    if (keep.count(names[i])) {
      layers.kept_float.push_back(names[i]);
      layers.kept_float_why.push_back("named to keep in float");
      continue;
    }
    layers.calls.push_back(calls[i]);
    layers.names.push_back(names[i]);
  }
  LOOM_CHECK_USER(!layers.calls.empty())
      << "QuantizeInt8: every layer to quantize is kept in float; nothing is left to quantize";
  return layers;
}

IRModule PrepareForQuantization(const IRModule& module, const Target& target) {
  transform::PassContext context = transform::PassContext::Current();
  context.opt_level = 3;
  transform::PassContextScope scope(context);
  return RunPasses(
      module, {SimplifyInference(), FoldConstant(target), FoldScaleAxis(), FoldConstant(target)});
}

Calibration::Calibration(const Function& main, const std::vector<Expr>& observed,
                         const std::string& target,
                         const std::vector<std::vector<runtime::NDArray>>& samples)
    : executor_(MakeGraphModel(
          Compile(IRModule::FromFunction(MakeFunction(main->params, MakeTuple(observed))),
                  {.opt_level = 3, .target = target}))),
      samples_(samples),
      observed_(observed.size()) {}

void Calibration::ForEachValue(const std::function<void(size_t, double)>& visit) {
  for (const std::vector<runtime::NDArray>& sample : samples_) {
    LOOM_CHECK_USER(static_cast<int>(sample.size()) == executor_.NumInputs())
        << "QuantizeInt8: a calibration sample holds " << sample.size() << " arrays; the model "
        << "takes " << executor_.NumInputs() << " inputs";
    for (int i = 0; i < executor_.NumInputs(); ++i)
      executor_.SetInput(i, sample[static_cast<size_t>(i)]);
    executor_.Run();
    for (size_t i = 0; i < observed_; ++i) {
      runtime::NDArray data = executor_.GetOutput(static_cast<int>(i));
      const auto* v = static_cast<const float*>(data.data());
      for (int64_t j = 0; j < data.NumElements(); ++j) visit(i, v[j]);
    }
  }
}

std::vector<ObservedRange> CalibratedRanges(Calibration& calibration,
                                            const QuantizeOptions& options,
                                            const std::vector<std::string>& names) {
  const size_t n = names.size();
  std::vector<ObservedRange> ranges(n);
  for (ObservedRange& r : ranges) {
    r.min = std::numeric_limits<double>::infinity();
    r.max = -std::numeric_limits<double>::infinity();
  }
  std::vector<bool> finite(n, true);
  calibration.ForEachValue([&](size_t i, double v) {
    finite[i] = finite[i] && std::isfinite(v);
    ranges[i].min = std::min(ranges[i].min, v);
    ranges[i].max = std::max(ranges[i].max, v);
  });
  for (size_t i = 0; i < n; ++i) {
    LOOM_CHECK_USER(finite[i])
        << "QuantizeInt8: " << names[i]
        << " takes an infinite or NaN value on the calibration samples, so it has no "
        << "finite scale; check the samples, or leave the model in float";
    ranges[i].range_min = ranges[i].min;
    ranges[i].range_max = ranges[i].max;
  }
  if (options.calibration != "percentile") return ranges;
  constexpr int64_t kBins = 2048;
  std::vector<std::vector<int64_t>> bins(n, std::vector<int64_t>(kBins, 0));
  std::vector<double> bins_per_unit(n, 0.0);  // 0 where the range is one value
  for (size_t i = 0; i < n; ++i) {
    if (ranges[i].max > ranges[i].min) bins_per_unit[i] = kBins / (ranges[i].max - ranges[i].min);
  }
  calibration.ForEachValue([&](size_t i, double v) {
    const auto bin = static_cast<int64_t>((v - ranges[i].min) * bins_per_unit[i]);
    ++bins[i][std::clamp<int64_t>(bin, 0, kBins - 1)];
  });
  for (size_t i = 0; i < n; ++i) {
    std::tie(ranges[i].range_min, ranges[i].range_max) =
        PercentileRange(bins[i], ranges[i].min, ranges[i].max, options.percentile);
  }
  return ranges;
}

IRModule QuantizedModule(const IRModule& module, const IRModule& prepared, const Expr& body,
                         const QuantizeOptions& options, const Layers& found, int samples,
                         std::vector<QuantizedLayer> layers, QuantizeReport* report) {
  const Function& main = prepared.main();
  IRModule result = prepared;
  result.Add("main", MakeFunction(main->params, body, main->attrs), /*replace=*/true);
  result.SetOutputNames(module.output_names());
  if (report != nullptr) {
    report->scheme = options.scheme;
    report->kept_float = found.kept_float;
    report->kept_float_why = found.kept_float_why;
    report->samples = samples;
    report->layers = std::move(layers);
  }
  return result;
}

QuantizedLayer ReportedLayer(const Layers& found, size_t i, const ObservedRange& range) {
  QuantizedLayer layer;
  layer.name = found.names[i];
  layer.op = found.calls[i]->op->name;
  layer.data_min = range.min;
  layer.data_max = range.max;
  layer.range_min = range.range_min;
  layer.range_max = range.range_max;
  return layer;
}

double ErrorSum::Relative() const { return signal > 0 ? std::sqrt(error / signal) : 0.0; }

double RoundTrip(double v, float scale, int64_t zero_point, int64_t low, int64_t high) {
  double q = std::clamp<double>(std::nearbyint(static_cast<float>(v) / scale) + double(zero_point),
                                double(low), double(high));
  return (q - double(zero_point)) * scale;
}

}  // namespace loom::graph::quantize_detail
