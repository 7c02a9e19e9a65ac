"""int8 QDQ versions of the test models, as ONNX Runtime's static quantizer writes them.

`quantize(src, dst, calibration)` runs `onnxruntime.quantization.quantize_static` in the
QDQ format with its defaults for CPUs: uint8 activations with a zero point (MinMax
calibration on the given inputs), int8 weights with one symmetric scale per output channel,
int32 biases. The same file is what Loom compiles and what ONNX Runtime runs as the
reference, so both compute from the same scales.
"""

from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                      quantize_static)


class _Samples(CalibrationDataReader):
    def __init__(self, samples):
        self._samples = iter(samples)

    def get_next(self):
        return next(self._samples, None)


def quantize(src, dst, calibration):
    """Writes `src` quantized to `dst`; `calibration` is a list of input dicts (name ->
    array) whose activation ranges set the scales."""
    quantize_static(src, dst, _Samples(calibration), quant_format=QuantFormat.QDQ,
                    per_channel=True, activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QInt8)
