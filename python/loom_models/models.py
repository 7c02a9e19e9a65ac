"""The test models by name: how each is generated and what inputs it takes.

torch is imported only when a torchvision model is generated, so that users of the input
generators (the ONNX Runtime timing child of bench/models) stay light.
"""

import os

import numpy as np

from . import bert_encoder, recurrent

TORCHVISION_NAMES = ("resnet18", "resnet50", "mobilenet_v2", "squeezenet", "regnet_x_400mf",
                     "regnet_y_400mf", "resnext50_32x4d", "densenet121", "mobilenet_v3_large")
# int8 QDQ versions of the torchvision models (quantize.py), named <model>_int8.
INT8_SUFFIX = "_int8"
QUANTIZED_NAMES = tuple(name + INT8_SUFFIX for name in TORCHVISION_NAMES + ("bert_base",))
# float16 versions of the float models (to_float16.py), named <model>_fp16.
FP16_SUFFIX = "_fp16"
FLOAT16_NAMES = tuple(name + FP16_SUFFIX for name in TORCHVISION_NAMES + ("bert_base",))
# Recurrent models exported from PyTorch (recurrent.py): token ids in, float32 out.
RECURRENT_NAMES = tuple(recurrent.SIZES)
NAMES = TORCHVISION_NAMES + ("bert_base",) + QUANTIZED_NAMES + FLOAT16_NAMES + RECURRENT_NAMES
# Calibration inputs of the quantized models: seeds apart from those the tests run on.
CALIBRATION_SEEDS = range(1000, 1008)


def float_name(name):
    """The float32 model a quantized or float16 one is made from (`name` itself for a float32
    model)."""
    if name in QUANTIZED_NAMES:
        return name[:-len(INT8_SUFFIX)]
    return name[:-len(FP16_SUFFIX)] if name in FLOAT16_NAMES else name


def generate(name, path, layers=None):
    """Writes model `name` to `path`. `layers` applies to bert_base only (default 12)."""
    if name not in NAMES:
        raise ValueError(f"unknown model '{name}'; known: {', '.join(NAMES)}")
    if layers is not None and float_name(name) != "bert_base":
        raise ValueError(f"--layers applies to bert_base only, not to '{name}'")
    if name in FLOAT16_NAMES:
        from . import to_float16
        source = cached(float_name(name), os.path.dirname(os.path.abspath(path)), layers)
        to_float16.convert(source, path)
        return
    if name == "bert_base":
        bert_encoder.export(path, layers=12 if layers is None else layers)
        return
    if name in RECURRENT_NAMES:
        recurrent.export(name, path)
        return
    if name in QUANTIZED_NAMES:
        from . import quantize  # onnxruntime: only for the models that need it
        source = cached(float_name(name), os.path.dirname(os.path.abspath(path)))
        calibration = [random_inputs(name, seed) for seed in CALIBRATION_SEEDS]
        quantize.quantize(source, path, calibration)
        return
    from . import export_torchvision  # torch is heavy: only for the models that need it
    export_torchvision.export(name, path)


# The sources that define the models: a cached model older than any of them is stale.
_GENERATOR_SOURCES = ("models.py", "bert_encoder.py", "export_torchvision.py", "quantize.py",
                      "to_float16.py", "recurrent.py")


def _newest_generator_time():
    package = os.path.dirname(os.path.abspath(__file__))
    return max(os.path.getmtime(os.path.join(package, f)) for f in _GENERATOR_SOURCES)


def cached(name, directory, layers=None):
    """The path of model `name` in `directory`, generated unless a copy at least as new as
    the generators' sources is there."""
    os.makedirs(directory, exist_ok=True)
    suffix = "" if layers is None else f"_{layers}layers"
    path = os.path.join(directory, f"{name}{suffix}.onnx")
    if not os.path.exists(path) or os.path.getmtime(path) < _newest_generator_time():
        partial = f"{path}.{os.getpid()}.partial"
        generate(name, partial, layers)
        os.replace(partial, path)  # an interrupted run leaves no truncated model behind
    return path


def random_inputs(name, seed=0):
    """The inputs of model `name` by input name: normal images or hidden states (float16 for
    a float16 model), for bert_base an attention mask that leaves the last 28 positions
    out, and uniform token ids for a recurrent model."""
    rng = np.random.default_rng(seed)
    dtype = np.float16 if name in FLOAT16_NAMES else np.float32
    name = float_name(name)
    if name in TORCHVISION_NAMES:
        return {"input": rng.standard_normal((1, 3, 224, 224), dtype=np.float32).astype(dtype)}
    if name in RECURRENT_NAMES:
        return {"tokens": rng.integers(0, recurrent.vocabulary(name),
                                       recurrent.token_shape(name), dtype=np.int64)}
    if name == "bert_base":
        return {"hidden_states":
                rng.standard_normal((1, 128, 768), dtype=np.float32).astype(dtype),
                "attention_mask": bert_encoder.attention_mask(128, attended=100)}
    raise ValueError(f"unknown model '{name}'; known: {', '.join(NAMES)}")
