#!/usr/bin/env python3
"""Models exported from PyTorch with dynamic axes (torch.onnx.export(dynamic_axes=...)), whose
exporter writes every view as Shape -> Gather -> Unsqueeze -> Concat -> Reshape: compiled once
by `loom compile` (the sizes stay symbolic; the shape arithmetic is evaluated at import) and
run by `loom run` at several sizes against ONNX Runtime on the same model and inputs, two
also with dynamic buckets: an attention block, rows flattened through an MLP and back, and a
small CNN of symbolic batch.

Usage: check_pytorch_dynamic.py --loom PATH --workdir DIR
Exit status: 0 pass, 1 fail, 77 skipped (the Python environment lacks a package).
"""

import argparse
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(REPO, "python"))

from loom_models import environment  # noqa: E402

environment.require("numpy", "onnx", "onnxruntime", "torch")

import numpy as np  # noqa: E402
import onnxruntime  # noqa: E402
import torch  # noqa: E402

from loom_models import loom_tool  # noqa: E402

RELATIVE_TOLERANCE = 1e-4
ABSOLUTE_TOLERANCE = 1e-5


class Attention(torch.nn.Module):
    """Self-attention over x [batch, seq, 64]: heads split and merged by view/reshape."""

    def __init__(self, width=64, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv = torch.nn.Linear(width, 3 * width)
        self.out = torch.nn.Linear(width, width)
        self.norm = torch.nn.LayerNorm(width)

    def forward(self, x):
        batch, seq, width = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)

        def split(t):
            return t.view(batch, seq, self.heads, width // self.heads).transpose(1, 2)

        q, k, v = split(q), split(k), split(v)
        scores = q @ k.transpose(-1, -2) / (width // self.heads) ** 0.5
        context = (torch.softmax(scores, -1) @ v).transpose(1, 2).reshape(batch, seq, width)
        return self.norm(x + self.out(context))


class TokenMlp(torch.nn.Module):
    """Tokens flattened to rows (reshape(-1, width): batch * seq rows) and back."""

    def __init__(self, width=32):
        super().__init__()
        self.up = torch.nn.Linear(width, 4 * width)
        self.down = torch.nn.Linear(4 * width, width)

    def forward(self, x):
        rows = x.reshape(-1, x.shape[-1])
        y = self.down(torch.nn.functional.gelu(self.up(rows)))
        return y.view(x.size(0), x.size(1), -1) + x


class ConvNet(torch.nn.Module):
    """Convolutions (one grouped), batch norm, pools, then a classifier: a symbolic batch."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.norm = torch.nn.BatchNorm2d(8)
        self.pool = torch.nn.MaxPool2d(2)
        self.grouped = torch.nn.Conv2d(8, 8, 3, padding=1, groups=2)
        self.average = torch.nn.AdaptiveAvgPool2d(1)
        self.fc = torch.nn.Linear(8, 10)

    def forward(self, x):
        y = self.pool(torch.relu(self.norm(self.conv(x))))
        y = self.average(torch.relu(self.grouped(y)))
        return self.fc(y.view(y.size(0), -1))


# name, module, example input shape, dynamic axes {axis: name}, sizes to run, buckets
CASES = [
    ("attention", Attention, (1, 7, 64), {0: "batch", 1: "seq"},
     [(1, 7), (2, 13), (3, 1), (1, 16)], ["seq=16"]),
    ("token_mlp", TokenMlp, (2, 5, 32), {0: "batch", 1: "seq"}, [(2, 5), (1, 9), (4, 3)], []),
    ("convnet", ConvNet, (2, 3, 8, 8), {0: "batch"}, [(1,), (2,), (5,)], ["batch=2"]),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--loom", required=True)
    parser.add_argument("--workdir", required=True)
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    failures = 0
    for name, module_class, example, axes, sizes, buckets in CASES:
        module = module_class().eval()
        model_path = os.path.join(args.workdir, f"{name}.onnx")
        with torch.no_grad():
            torch.onnx.export(module, (torch.randn(*example),), model_path, input_names=["x"],
                              output_names=["y"], dynamic_axes={"x": axes}, opset_version=17)
        artifacts = [(os.path.join(args.workdir, f"{name}.so"), [])]
        for bucket in buckets:
            artifacts.append((os.path.join(args.workdir, f"{name}_buckets.so"),
                              ["--dynamic-buckets", bucket]))
        for artifact, extra in artifacts:
            loom_tool.compile_model(args.loom, model_path, artifact, extra_args=extra)
        session = onnxruntime.InferenceSession(model_path, providers=["CPUExecutionProvider"])
        for dynamic in sizes:
            shape = list(example)
            for (axis, _), size in zip(sorted(axes.items()), dynamic):
                shape[axis] = size
            x = rng.standard_normal(shape, dtype=np.float32)
            want = session.run(None, {"x": x})[0]
            for artifact, extra in artifacts:
                got = loom_tool.run_model(args.loom, artifact, {"x": x}, args.workdir)["y"]
                error = (float(np.max(np.abs(got - want))) if got.shape == want.shape
                         else float("inf"))
                bound = RELATIVE_TOLERANCE * float(np.max(np.abs(want))) + ABSOLUTE_TOLERANCE
                ok = got.shape == want.shape and error <= bound
                failures += not ok
                label = f"{name}{' ' + ' '.join(extra) if extra else ''}"
                print(f"{'ok  ' if ok else 'FAIL'} {label} x{list(shape)}: shape "
                      f"{list(got.shape)}, max|loom - ort| = {error:.3g} (bound {bound:.3g})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
