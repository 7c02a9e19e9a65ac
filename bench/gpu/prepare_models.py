#!/usr/bin/env python3
"""Whole models for scripts/gpu-check.sh: each generated (python/loom_models), compiled by
`loom compile --target "cuda -arch=ARCH"` into OUT/<model>/model.so, with seeded random
inputs (OUT/<model>/inputs/<name>.npy) and ONNX Runtime's outputs on them
(OUT/<model>/expected/<name>.npy), which the GPU machine's run compares with Loom's
(bench/gpu/compare_outputs.py)."""

import argparse
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "python"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loom", required=True, help="the loom binary")
    parser.add_argument("--out", required=True, help="the bundle's models folder")
    parser.add_argument("--arch", default="sm_90", help="the cuda target's -arch")
    parser.add_argument("--cache", default="/tmp/loom-gpu-models",
                        help="where the generated ONNX models are kept between runs")
    parser.add_argument("models", nargs="+", help="models of loom_models.models.NAMES")
    args = parser.parse_args()

    import numpy as np
    from loom_models import loom_tool, models, reference

    for name in args.models:
        folder = os.path.join(args.out, name)
        os.makedirs(os.path.join(folder, "inputs"), exist_ok=True)
        os.makedirs(os.path.join(folder, "expected"), exist_ok=True)
        model_path = models.cached(name, os.path.join(args.cache, name))
        seconds = loom_tool.compile_model(
            args.loom, model_path, os.path.join(folder, "model.so"),
            extra_args=["--target", f"cuda -arch={args.arch}"])
        inputs = models.random_inputs(name)
        for input_name, value in inputs.items():
            np.save(os.path.join(folder, "inputs", input_name + ".npy"), value)
        for output_name, value in reference.run(model_path, inputs).items():
            np.save(os.path.join(folder, "expected", output_name + ".npy"), value)
        print(f"{name}: compiled for cuda -arch={args.arch} in {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
