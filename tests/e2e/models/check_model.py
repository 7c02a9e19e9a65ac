#!/usr/bin/env python3
"""A real model end to end against ONNX Runtime.

Generates the model (cached in --model-dir, shared by a model's variants), compiles it with `loom compile` (for --target),
runs it with `loom run` (through --runner, for another architecture's runtime under an
emulator; with --run-args "--rpc HOST:PORT", on a remote device) on seeded random inputs,
runs ONNX Runtime on the same inputs, and checks every output: same names, shapes and
dtypes, and max|loom - ort| <= 1e-4 * max|ort| + 1e-5.
A quantized model (<model>_int8) rounds at every requantization, and a value near a .5
boundary goes either way with float arithmetic in another order; one flip early on moves
later layers by whole quanta. ONNX Runtime's own fused and unfused executions of one QDQ
ResNet-50 differ by up to 12 quanta of the logits (cosine similarity 0.9967). So for these
models the outputs must agree in direction (cosine similarity >= INT8_MIN_COSINE) and, for a
classifier's scores ([batch, classes]), in their top-1 class. So must a model compiled with
--precision bf16, whose products round their operands to bfloat16 (8 significant bits):
cosine similarity >= BF16_MIN_COSINE, and a float16 model (<model>_fp16): FP16_MIN_COSINE.
With --compile-only (a cuda target on a machine without a GPU) it only compiles.
A passing check removes its artifact and arrays (the whole suite's would take gigabytes of a
machine's disk); a failing one keeps them in --workdir to look into, as does --keep.
Exit status: 0 pass, 1 fail, 77 skipped (the Python environment lacks a package).
"""

import argparse
import importlib
import os
import shlex
import shutil
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(REPO, "python"))

SKIP = 77
RELATIVE_TOLERANCE = 1e-4
ABSOLUTE_TOLERANCE = 1e-5
INT8_MIN_COSINE = 0.99
# bfloat16 operands keep 8 significant bits; the error grows with depth: measured 0.99997 on
# ResNet-18 and BERT-base, 0.995 on ResNet-50, on AMX and by conversion alike (the
# rounding's, not a kernel's).
BF16_MIN_COSINE = 0.99
# A float16 model (<model>_fp16) rounds every operator's result to float16 (11 significant
# bits); where each engine rounds and what it computes in float32 differ, so the outputs agree
# to a few float16 steps, not to float32's tolerance.
FP16_MIN_COSINE = 0.999


def missing_packages(model):
    needed = ["numpy", "onnx", "onnxruntime"]
    if model in ("lstm_lm", "gru_classifier"):  # exported from torch.nn layers
        needed.append("torch")
    elif not model.startswith("bert_base"):  # the encoder is written with onnx's helpers
        needed += ["torch", "torchvision"]
    missing = []
    for package in needed:
        try:
            importlib.import_module(package)
        except ImportError:
            missing.append(package)
    return missing


def compare(loom_outputs, reference_outputs, quantized=False, min_cosine=None):
    """One line per output with its figures, and whether all are within tolerance (for a
    `quantized` model, INT8_MIN_COSINE and the same arg max; with `min_cosine`, that
    similarity and the same arg max)."""
    import numpy as np

    lines = []
    passed = True
    if sorted(loom_outputs) != sorted(reference_outputs):
        return [f"FAIL output names: loom wrote {sorted(loom_outputs)}, ONNX Runtime "
                f"gives {sorted(reference_outputs)}"], False
    for name, reference in reference_outputs.items():
        got = loom_outputs[name]
        if got.shape != reference.shape or got.dtype != reference.dtype:
            lines.append(f"FAIL {name}: loom gives {got.dtype}{list(got.shape)}, ONNX Runtime "
                         f"{reference.dtype}{list(reference.shape)}")
            passed = False
            continue
        diff = np.abs(got.astype(np.float64) - reference.astype(np.float64))
        max_diff = float(diff.max()) if diff.size else 0.0
        max_ref = float(np.abs(reference).max()) if reference.size else 0.0
        bound = RELATIVE_TOLERANCE * max_ref + ABSOLUTE_TOLERANCE
        within = max_diff <= bound
        extra = ""
        if quantized or min_cosine is not None:
            a, b = got.astype(np.float64).ravel(), reference.astype(np.float64).ravel()
            norms = float(np.linalg.norm(a) * np.linalg.norm(b))
            cosine = float(a @ b) / norms if norms > 0 else float(max_diff == 0)
            # Top-1 of a classifier's scores [batch, classes]; a hidden state's arg max over
            # all its values is a tie among near-equal values, not a class.
            classifier = reference.ndim == 2
            same_top1 = not classifier or int(got.argmax()) == int(reference.argmax())
            within = cosine >= (INT8_MIN_COSINE if quantized else min_cosine) and same_top1
            top1 = ("same" if same_top1 else "DIFFERENT") if classifier else "n/a"
            extra = f" cosine={cosine:.5f} top1={top1}"
        ok = bool(np.isfinite(got).all()) and within
        passed &= ok
        bound_text = "" if extra else f" bound={bound:.3g}"
        lines.append(f"{'ok  ' if ok else 'FAIL'} {name} {list(reference.shape)}: "
                     f"max|diff|={max_diff:.3g}{bound_text} max|ref|={max_ref:.4g} "
                     f"mean|diff|={float(diff.mean()) if diff.size else 0.0:.3g}{extra}")
    return lines, passed


def passed_and_cleaned(args, artifact):
    """0, once the artifact and the arrays of a passing check are removed (unless --keep)."""
    if not args.keep:
        if os.path.exists(artifact):
            os.remove(artifact)
        for arrays in ("inputs", "outputs"):
            shutil.rmtree(os.path.join(args.workdir, arrays), ignore_errors=True)
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loom", required=True, help="the loom binary")
    parser.add_argument("--model", required=True,
                        help="a model of loom_models.models.NAMES (resnet18, resnet18_int8, "
                             "bert_base, ...)")
    parser.add_argument("--workdir", required=True,
                        help="where the artifact and the arrays are written")
    parser.add_argument("--model-dir",
                        help="where the generated models are cached (default: --workdir); "
                             "the variants of a model (bf16, opencl, ...) share one")
    parser.add_argument("--keep", action="store_true",
                        help="keep the artifact and the arrays after a passing check")
    parser.add_argument("--layers", type=int, help="encoder layers of bert_base")
    parser.add_argument("--opt-level", type=int, help="loom compile --opt-level")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    parser.add_argument("--target", help="loom compile --target")
    parser.add_argument("--precision", choices=["float32", "bf16"], default="float32",
                        help="loom compile --precision (bf16: compared on cosine similarity "
                             "and top-1)")
    parser.add_argument("--compile-only", action="store_true",
                        help="compile, and run only when the target's device is here (a "
                             "cuda target on a machine without a GPU: the compile is the test)")
    parser.add_argument("--runner",
                        help="the command line that runs `loom`, for `loom run` (default: "
                             "--loom itself)")
    parser.add_argument("--run-args", default="",
                        help="more arguments for `loom run`, as one shell-quoted string (\"--rpc "
                             "HOST:PORT\": run the model on a `loom rpc server`)")
    args = parser.parse_args()

    missing = missing_packages(args.model)
    if missing:
        print(f"skipped: this Python ({sys.executable}) lacks {', '.join(missing)}; "
              "`make deps` installs them into .venv")
        return SKIP
    if not os.access(args.loom, os.X_OK):
        print(f"error: the loom binary '{args.loom}' is not an executable file")
        return 1

    from loom_models import loom_tool, models, reference

    if args.model not in models.NAMES:
        print(f"error: unknown model '{args.model}'; known: {', '.join(models.NAMES)}")
        return 1

    os.makedirs(args.workdir, exist_ok=True)
    model_path = models.cached(args.model, args.model_dir or args.workdir, args.layers)
    artifact = os.path.join(args.workdir, os.path.basename(model_path)[:-len(".onnx")] +
                            ("" if args.precision == "float32" else "_" + args.precision) + ".so")
    extra_args = ["--precision", args.precision]
    if args.target:
        extra_args += ["--target", args.target]
    try:
        compile_s = loom_tool.compile_model(args.loom, model_path, artifact, args.opt_level,
                                            extra_args=extra_args)
        print(f"{args.model}: loom compile took {compile_s:.1f} s", flush=True)
        if args.compile_only:
            print(f"{args.model}: compiled for {args.target}; not run (--compile-only)")
            return passed_and_cleaned(args, artifact)
        inputs = models.random_inputs(args.model, args.seed)
        start = time.perf_counter()
        loom_outputs = loom_tool.run_model(
            shlex.split(args.runner) if args.runner else args.loom, artifact, inputs,
            args.workdir, extra_args=shlex.split(args.run_args))
        print(f"{args.model}: loom run took {time.perf_counter() - start:.1f} s", flush=True)
    except loom_tool.LoomError as error:
        print(f"FAIL {args.model}: {error}")
        return 1
    reference_outputs = reference.run(model_path, inputs)
    lines, passed = compare(loom_outputs, reference_outputs,
                            quantized=args.model in models.QUANTIZED_NAMES,
                            min_cosine=BF16_MIN_COSINE if args.precision == "bf16" else
                            FP16_MIN_COSINE if args.model in models.FLOAT16_NAMES else None)
    for line in lines:
        print(f"{args.model}: {line}")
    print(f"{args.model}: {'PASS' if passed else 'FAIL'}")
    if not passed:
        print(f"{args.model}: the artifact and the arrays are kept in {args.workdir}")
        return 1
    return passed_and_cleaned(args, artifact)


if __name__ == "__main__":
    sys.exit(main())
