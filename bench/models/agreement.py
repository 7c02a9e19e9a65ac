#!/usr/bin/env python3
"""Top-1 agreement of Loom's low-precision forms of a model with its float32 form.

For each model, Loom compiles the float32 model and these forms of it, and runs each on the
same N seeded inputs (seeds 0 .. N-1; the calibration inputs use seeds 1000-1007):
- int8_ort: the QDQ model ONNX Runtime's quantize_static makes (<model>_int8);
- int8_loom: Loom's own quantizer (--quantize int8, calibrated on the calibration inputs);
- int8_loom_percentile: the same with --calibration-method percentile (99.999);
- int8_loom_power_of_two: Loom's quantizer with --quantize-scheme power-of-two (the integer-only
  form VTA computes: power-of-two scales, requantized by shift and clip);
- bf16: --precision bf16;
- fp16: the model stored in float16 (<model>_fp16).
It prints one line per model and form: how many inputs get the float32 artifact's top-1
class, and the mean and smallest cosine similarity of the outputs. The torchvision models
have random weights but batch-norm statistics calibrated on data, so their classes are not
noise. A benchmark of accuracy, not a test: it takes minutes per model.

  bench/models/agreement.py --models resnet18,mobilenet_v2 --inputs 100
"""

import argparse
import os
import sys

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "python"))

from loom_models import loom_tool, models  # noqa: E402

FORMS = ("int8_ort", "int8_loom", "int8_loom_percentile", "int8_loom_power_of_two", "bf16",
         "fp16")


def calibration_file(name, workdir):
    """The calibration inputs stacked along a first axis, as `--calibration` takes them."""
    path = os.path.join(workdir, f"{name}_calibration.npy")
    samples = [models.random_inputs(name, seed)["input"] for seed in models.CALIBRATION_SEEDS]
    np.save(path, np.stack(samples))
    return path


def compile_forms(loom, name, workdir, forms):
    """{form: artifact} for the float32 model and each of `forms`."""
    source = models.cached(name, workdir)
    plans = {"float32": (source, [])}
    if "int8_ort" in forms:
        plans["int8_ort"] = (models.cached(name + models.INT8_SUFFIX, workdir), [])
    quantize = ["--quantize", "int8", "--calibration", f"input={calibration_file(name, workdir)}"]
    if "int8_loom" in forms:
        plans["int8_loom"] = (source, quantize)
    if "int8_loom_percentile" in forms:
        plans["int8_loom_percentile"] = (source, [*quantize, "--calibration-method", "percentile"])
    if "int8_loom_power_of_two" in forms:
        plans["int8_loom_power_of_two"] = (source, [*quantize, "--quantize-scheme", "power-of-two"])
    if "bf16" in forms:
        plans["bf16"] = (source, ["--precision", "bf16"])
    if "fp16" in forms:
        plans["fp16"] = (models.cached(name + models.FP16_SUFFIX, workdir), [])
    artifacts = {}
    for form, (model_path, extra) in plans.items():
        artifact = os.path.join(workdir, f"{name}_agreement_{form}.so")
        loom_tool.compile_model(loom, model_path, artifact, extra_args=[*extra, "-q"])
        artifacts[form] = artifact
    return artifacts


def cosine(a, b):
    a, b = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loom", default=os.path.join(REPO, "build", "tools", "loom", "loom"))
    parser.add_argument("--workdir", default=os.path.join(REPO, "build", "bench-models"))
    parser.add_argument("--models", default="resnet18,resnet50,mobilenet_v2",
                        help="torchvision models of loom_models (comma-separated)")
    parser.add_argument("--forms", default=",".join(FORMS),
                        help=f"which low-precision forms (of {', '.join(FORMS)})")
    parser.add_argument("--inputs", type=int, default=100, help="seeded inputs per model")
    args = parser.parse_args()
    forms = [f for f in args.forms.split(",") if f]
    for form in forms:
        if form not in FORMS:
            parser.error(f"unknown form '{form}'; known: {', '.join(FORMS)}")
    for name in [m for m in args.models.split(",") if m]:
        if name not in models.TORCHVISION_NAMES:
            parser.error(f"'{name}' is not a torchvision model of loom_models")
        artifacts = compile_forms(args.loom, name, args.workdir, forms)
        run_dir = os.path.join(args.workdir, f"{name}_agreement_run")
        outputs = {form: [] for form in artifacts}
        for seed in range(args.inputs):
            image = models.random_inputs(name, seed)["input"]
            for form, artifact in artifacts.items():
                given = {"input": image.astype(np.float16) if form == "fp16" else image}
                logits = loom_tool.run_model(args.loom, artifact, given, run_dir)
                outputs[form].append(next(iter(logits.values())))
        reference = outputs.pop("float32")
        for form, got in outputs.items():
            same = sum(int(g.argmax()) == int(r.argmax()) for g, r in zip(got, reference))
            cosines = [cosine(g, r) for g, r in zip(got, reference)]
            print(f"model={name} form={form} inputs={args.inputs} top1_agreement={same} "
                  f"mean_cosine={np.mean(cosines):.5f} min_cosine={min(cosines):.5f}",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
