// What both quantization schemes share (quantize.cc: scales and zero points like ONNX
// Runtime's; quantize_power_of_two.cc: power-of-two scales, integer arithmetic between
// layers): the layers they quantize, the model as the layers see it, and the calibration that
// observes the values an expression takes on the sample inputs.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "loom/graph/compile.h"
#include "loom/graph/quantize.h"
#include "loom/runtime/graph_executor.h"

namespace loom::graph::quantize_detail {

// The layers to quantize in post order, named (their name hints, or "<op> #<i>"): each
// groups-1 conv2d and dense layer with a constant float32 weight (whose axis 0 is the output
// channels), float32 data and no other out_dtype, but those named in options.keep_float. A
// loom::Error if there are none, if keep_float names no such layer (the message lists them),
// or if a weight holds an infinite or NaN value.
struct Layers {
  std::vector<const CallNode*> calls;
  std::vector<std::string> names;
  std::vector<std::string> kept_float;  // the layers options.keep_float names
  std::vector<std::string> kept_float_why;  // one for each
};
Layers QuantizableLayers(const Function& main, const QuantizeOptions& options);

// The layers as Compile sees them: batch norms folded into the weights, the weights constant.
IRModule PrepareForQuantization(const IRModule& module, const Target& target);

// The values that `observed` (float32 expressions of `main`) take on the samples: `main`
// compiled for `target` with them as its outputs.
class Calibration {
 public:
  Calibration(const Function& main, const std::vector<Expr>& observed, const std::string& target,
              const std::vector<std::vector<runtime::NDArray>>& samples);

  // visit(i, v) for every value v that observed[i] takes on the samples.
  void ForEachValue(const std::function<void(size_t, double)>& visit);

 private:
  runtime::GraphExecutor executor_;
  const std::vector<std::vector<runtime::NDArray>>& samples_;
  size_t observed_;
};

// The values one observed expression takes: their extremes, and the range to quantize, which
// options.calibration chooses ("max": the extremes; "percentile": without the rarest).
struct ObservedRange {
  double min = 0, max = 0;
  double range_min = 0, range_max = 0;
};
// One per observed expression; a loom::Error with names[i] (what observed[i] is: "the data of
// layer 'conv1'") where observed[i] takes an infinite or NaN value.
std::vector<ObservedRange> CalibratedRanges(Calibration& calibration,
                                            const QuantizeOptions& options,
                                            const std::vector<std::string>& names);

// The quantized model: `prepared` with `body` as main's, the outputs named as `module`'s (the
// passes keep functions only); the report filled in, if one is asked for.
IRModule QuantizedModule(const IRModule& module, const IRModule& prepared, const Expr& body,
                         const QuantizeOptions& options, const Layers& found, int samples,
                         std::vector<QuantizedLayer> layers, QuantizeReport* report);

// The report of layer i of `found` with the range its data took: its name, operator and
// ranges (the scheme fills in the rest).
QuantizedLayer ReportedLayer(const Layers& found, size_t i, const ObservedRange& range);

// Accumulates sum (q(v) - v)^2 and sum v^2: rounding's error relative to the values' size.
struct ErrorSum {
  double error = 0, signal = 0;
  void Add(double v, double rounded) {
    error += (rounded - v) * (rounded - v);
    signal += v * v;
  }
  double Relative() const;
};

// round_half_even(v / scale) + zero_point saturated to [low, high], dequantized.
double RoundTrip(double v, float scale, int64_t zero_point, int64_t low, int64_t high);

// The scheme of power-of-two scales (quantize_power_of_two.cc); `options` checked.
IRModule QuantizePowerOfTwo(const IRModule& module,
                            const std::vector<std::vector<runtime::NDArray>>& samples,
                            const QuantizeOptions& options, QuantizeReport* report);

}  // namespace loom::graph::quantize_detail
