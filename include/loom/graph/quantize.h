// Loom's own int8 quantizer: a float model in, the same model with its convolutions and dense
// layers quantized (QDQ form), calibrated on sample inputs. Compile then makes those layers
// integer (FoldQuantizedProducts) and runs them on the int8 kernels.
//
//   QuantizeReport report;
//   IRModule int8 = QuantizeInt8(module, samples, {.target = "llvm"}, &report);
//   CompiledModel model = Compile(int8, {});
//
// The scheme is that of ONNX Runtime's static quantizer, so that a model quantized by either
// computes alike: each quantized layer's data is uint8 with one scale and zero point from the
// range [min(x, 0), max(x, 0)] seen over the samples (or, calibrated by percentile, the
// range that leaves the rarest values out); its weight is int8 with one symmetric
// scale per output channel (max |w| / 127). Quantized: nn.conv2d with groups 1 and nn.dense,
// each with a constant float32 weight (after batch norms are folded into the weights).
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
};

struct QuantizedLayer {
  std::string name;                   // the call's name hint, or "<op> #<index>"
  std::string op;                     // "nn.conv2d" or "nn.dense"
  double data_min = 0, data_max = 0;  // the range seen over the samples
  double range_min = 0, range_max = 0;  // the range quantized (the percentile's, or the above)
  double data_scale = 0;
  int64_t data_zero_point = 0;
  // sqrt(mean (q(v) - v)^2) / sqrt(mean v^2) over the samples' data, and over the weight: what
  // rounding this layer's operands to 8 bits costs, relative to their size.
  double data_error = 0, weight_error = 0;
};

struct QuantizeReport {
  int samples = 0;
  std::vector<QuantizedLayer> layers;
};

// `samples`: the calibration inputs, each one array per parameter of main in order, of the
// parameter's shape and dtype (a loom::Error naming the parameter otherwise). The model is
// compiled for options.target to observe the ranges. A model without a layer to quantize,
// an unknown calibration method, a percentile outside (0, 100], or a layer whose data takes
// an infinite or NaN value on the samples (no finite scale) is a loom::Error saying so.
IRModule QuantizeInt8(const IRModule& module,
                      const std::vector<std::vector<runtime::NDArray>>& samples,
                      const QuantizeOptions& options, QuantizeReport* report);

}  // namespace loom::graph
