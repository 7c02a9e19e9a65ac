#!/usr/bin/env python3
"""conv_layers.py LOOM LAYERS_DIR: on the GPU machine, each ResNet-50 and MobileNetV2 convolution that
bench/gpu/prepare_conv_layers.py compiled, run by Loom (`loom run`, `loom bench`; the
default schedules and those without the tiled implicit product) and by PyTorch (cuDNN,
float32 without TF32, cudnn.benchmark) on the same seeded inputs: Loom's outputs against
cuDNN's (max|diff| <= 1e-4 * max|cuDNN| + 1e-5), then each one's median latency over 50 runs
after 10, the ratios to cuDNN, and, per network, their geometric means over its distinct
layers and over its layers (each weighted by how often it occurs). Exit status 1 when an
output differs."""

import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch


def cudnn_latency_ms(x, w, layer):
    def conv():
        return torch.nn.functional.conv2d(x, w, stride=layer["stride"], padding=layer["padding"],
                                          groups=layer["groups"])

    times = []
    with torch.no_grad():
        for i in range(60):
            torch.cuda.synchronize()
            start = time.perf_counter()
            conv()
            torch.cuda.synchronize()
            if i >= 10:
                times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times), conv().cpu().numpy()


def loom_run(loom, artifact, inputs, workdir):
    args = [loom, "run", artifact, "--output-dir", workdir, "--values", "0"]
    for name, path in inputs.items():
        args += ["--input", f"{name}={path}"]
    subprocess.run(args, check=True, capture_output=True)
    return np.load(os.path.join(workdir, "y.npy"))


def loom_latency_ms(loom, artifact, inputs):
    args = [loom, "bench", artifact, "--repeat", "50", "--warmup", "10"]
    for name, path in inputs.items():
        args += ["--input", f"{name}={path}"]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return float(re.search(r"median_ms=([0-9.]+)", out).group(1))


def geometric_means(ratios, weights):
    distinct = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    weighted = math.exp(sum(c * math.log(r) for r, c in zip(ratios, weights)) / sum(weights))
    return distinct, weighted


def main():
    loom, folder = sys.argv[1], sys.argv[2]
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    with open(os.path.join(folder, "layers.json")) as f:
        layers = json.load(f)
    rng = np.random.default_rng(1)
    ok = True
    # A layer without a Winograd artifact (not 3x3, stride 1, one group) counts its default's
    # time as its Winograd one.
    variants = ("", "_untiled", "_winograd")
    ratios = {v: [] for v in variants}
    weights = []
    print(f"torch {torch.__version__} cuDNN {torch.backends.cudnn.version()}")
    print(f"{'layer':40} {'count':>5} {'cudnn ms':>9} {'loom ms':>9} {'ratio':>6} "
          f"{'untiled':>9} {'ratio':>6} {'winograd':>9} {'ratio':>6}  check")
    with tempfile.TemporaryDirectory() as workdir:
        for layer in layers:
            x = rng.uniform(-1, 1, layer["input"]).astype(np.float32)
            w = rng.uniform(-1, 1, layer["weight"]).astype(np.float32)
            inputs = {"x": os.path.join(workdir, "x.npy"), "w": os.path.join(workdir, "w.npy")}
            np.save(inputs["x"], x)
            np.save(inputs["w"], w)
            cudnn_ms, expected = cudnn_latency_ms(torch.from_numpy(x).cuda(),
                                                  torch.from_numpy(w).cuda(), layer)
            scale = float(np.abs(expected).max())
            cells, checks = [], []
            for variant in variants:
                artifact = os.path.join(folder, layer["name"] + variant + ".so")
                if not os.path.exists(artifact):
                    ratios[variant].append(ratios[""][-1])
                    cells.append(f"{'-':>9} {'-':>6}")
                    continue
                got = loom_run(loom, artifact, inputs, workdir)
                diff = float(np.abs(got.astype(np.float64) - expected).max())
                # Winograd's transforms lose more bits (as in Loom's tests: 1e-3).
                bound = (1e-3 if variant == "_winograd" else 1e-4) * scale + 1e-5
                passed = got.shape == expected.shape and diff <= bound
                ok &= passed
                checks.append(f"{'PASS' if passed else 'FAIL'} {diff:.2g}")
                loom_ms = loom_latency_ms(loom, artifact, inputs)
                ratios[variant].append(loom_ms / cudnn_ms)
                cells.append(f"{loom_ms:9.4f} {loom_ms / cudnn_ms:6.2f}")
            weights.append(layer["count"])
            print(f"{layer['name']:40} {layer['count']:5d} {cudnn_ms:9.4f} {' '.join(cells)}  "
                  f"{', '.join(checks)}")
    best = [min(pair) for pair in zip(*ratios.values())]
    for model in sorted({layer["model"] for layer in layers}):
        mine = [i for i, layer in enumerate(layers) if layer["model"] == model]
        for label, values in (("default", ratios[""]), ("untiled", ratios["_untiled"]),
                              ("winograd where it applies", ratios["_winograd"]),
                              ("best of all", best)):
            distinct, weighted = geometric_means([values[i] for i in mine],
                                                 [weights[i] for i in mine])
            print(f"{model}: geometric mean of loom/cudnn, {label}: {distinct:.3f} over "
                  f"{len(mine)} distinct layers, {weighted:.3f} over its "
                  f"{sum(weights[i] for i in mine)} convolutions")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
