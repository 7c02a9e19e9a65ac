// Loom's own int8 quantizer: a float model in, the same model with its convolutions and dense
// layers quantized, calibrated on sample inputs. Quantized: nn.conv2d with groups 1 and
// nn.dense, each with a constant float32 weight (after batch norms are folded into the
// weights).
//
//   QuantizeReport report;
//   IRModule int8 = QuantizeInt8(module, samples, {.target = "llvm"}, &report);
//   CompiledModel model = Compile(int8, {});
//
// Two schemes:
//   - "affine" (the default), that of ONNX Runtime's static quantizer, so that a model
//     quantized by either computes alike: each quantized layer's data is uint8 with one scale
//     and zero point from the range [min(x, 0), max(x, 0)] seen over the samples (or,
//     calibrated by percentile, the range that leaves the rarest values out); its weight is
//     int8 with one symmetric scale per output channel (max |w| / 127). The result is the QDQ
//     form: Compile makes those layers integer (FoldQuantizedProducts), and everything
//     between them stays float.
//   - "power-of-two", the form an integer-only accelerator (VTA) computes, as the seeds' TVM
//     realizes it: every scale a power of two, zero points 0, and integer arithmetic from the
//     first quantized layer's input to the model's float operators. A tensor x is q * 2^e
//     with q int8 in [-127, 127] and e the smallest exponent whose range covers the
//     calibrated one (or one exponent for every activation, from global_scale). A layer is
//     qnn.conv2d / qnn.dense of int8 data and an int8 weight (one exponent per tensor) into
//     int32 at the sum of the exponents; a bias adds in int32, rounded to that exponent;
//     nn.relu, max pooling and reshapes stay integer; an add of two integer tensors shifts the
//     coarser one left to the finer one's exponent and adds in int32. Where a value goes to
//     int8 it is requantized by shift and clip: (x + 2^(s-1)) >> s (round half up), clipped to
//     [-127, 127]. An int32 value is handed on as int32 only to its one user (an accumulator
//     chain: bias, residual add, relu); several users, an add's second int32 operand, and the
//     float operators after take its int8 form, which a float operator reads as q * 2^e (as
//     values leave an accelerator); a result of the model held in int32 is read from its
//     int32 form instead (everywhere). Other operators stay float; their results are
//     quantized where a layer reads them. Sums that would overflow int32 saturate (before a
//     left shift, and before the rounding's addition).
#pragma once

#include <string>
#include <vector>

#include "loom/graph/module.h"
#include "loom/runtime/ndarray.h"

namespace loom::graph {

struct QuantizeOptions {
  std::string target = "llvm";  // what the calibration runs on
  // How each layer's data range is chosen from the values it takes on the samples:
  //   "max": all of them, [min, max];
  //   "percentile": without the (100 - percentile) / 2 percent smallest and as many largest
  //   (a histogram of 2048 bins over [min, max]), so that a few outliers do not coarsen the
  //   steps of the rest; values beyond saturate. Like ONNX Runtime's Percentile calibrator
  //   (which ends the range a bin lower at the top).
  std::string calibration = "max";
  double percentile = 99.999;  // in (0, 100], with "percentile"
  std::string scheme = "affine";  // or "power-of-two" (above)
  // With "power-of-two": > 0, a power of two, gives every activation the one scale
  // global_scale / 128 (exponent log2(global_scale) - 7: the range [-127, 127] of those
  // steps), instead of its calibrated one; the seeds' TVM defaults to 8. Weights keep their
  // own exponents. 0: none.
  double global_scale = 0;
  // Layers left in float, by the names the report gives them (the model's node names): the
  // ones that cost more accuracy than they save time, which the report's errors (or an
  // accuracy check) point to.
  std::vector<std::string> keep_float = {};
  // With "affine": also leave in float each layer that costs more accuracy than it saves
  // time (LayersNotWorthQuantizing, below). The power-of-two form is for integer-only
  // hardware, which has no float layers to keep.
  bool auto_keep_float = true;
};

struct QuantizedLayer {
  std::string name;                   // the call's name hint, or "<op> #<index>"
  std::string op;                     // "nn.conv2d" or "nn.dense"
  double data_min = 0, data_max = 0;  // the range seen over the samples
  double range_min = 0, range_max = 0;  // the range quantized (the percentile's, or the above)
  double data_scale = 0;  // with "power-of-two": 2^e of the int8 data the layer reads
  int64_t data_zero_point = 0;
  double weight_scale = 0;  // with "power-of-two": 2^e of the weight (affine: 0, one per channel)
  // sqrt(mean (q(v) - v)^2) / sqrt(mean v^2) over the samples' data, and over the weight: what
  // rounding this layer's operands to 8 bits costs, relative to their size.
  double data_error = 0, weight_error = 0;
};

struct QuantizeReport {
  std::string scheme;  // QuantizeOptions::scheme
  int samples = 0;
  // The layers left in float: those QuantizeOptions::keep_float names, then those
  // auto_keep_float found not worth quantizing; why, for each ("named to keep in float", or
  // the error and the share of the multiply-adds).
  std::vector<std::string> kept_float, kept_float_why;
  std::vector<QuantizedLayer> layers;
};

// Which of the calibrated `layers` cost more accuracy than they save time: a layer whose
// operands' rounding error, sqrt(data_error^2 + weight_error^2), is an outlier -- at least
// kOutlierFactor times the (lower) median layer's and at least kNoticeableError -- while it does at
// most kSmallShare of the layers' multiply-adds (`multiply_adds`, one per layer). Such a
// layer (a classifier fed by a few huge activations, a layer after an unnormalized input)
// adds most of the model's rounding error for a sliver of its int8 speed-up. One flag per
// layer.
inline constexpr double kOutlierFactor = 4.0;
inline constexpr double kNoticeableError = 0.02;
inline constexpr double kSmallShare = 0.05;
std::vector<bool> LayersNotWorthQuantizing(const std::vector<QuantizedLayer>& layers,
                                           const std::vector<double>& multiply_adds);

// `samples`: the calibration inputs, each one array per parameter of main in order, of the
// parameter's shape and dtype (a loom::Error naming the parameter otherwise). The model is
// compiled for options.target to observe the ranges. A model without a layer to quantize,
// an unknown calibration method or scheme, a percentile outside (0, 100], a global scale
// that is not a power of two (or not with "power-of-two"), a name to keep in float that names
// no layer to quantize (the message lists them), or a layer whose data takes an infinite or
// NaN value on the samples (no finite scale) is a loom::Error saying so.
IRModule QuantizeInt8(const IRModule& module,
                      const std::vector<std::vector<runtime::NDArray>>& samples,
                      const QuantizeOptions& options, QuantizeReport* report);

}  // namespace loom::graph
