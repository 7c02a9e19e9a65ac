"""A walk-through of Loom from Python, cell by cell: a PyTorch model exported to ONNX,
compiled, run, checked against ONNX Runtime, shared with PyTorch without copies, timed,
exported as one artifact and loaded back, and compared layer by layer.

    python examples/python/compile_and_run.py [--workdir DIR]

Exits non-zero if Loom's outputs differ from ONNX Runtime's or PyTorch's.
"""
import argparse
import os
import sys
import tempfile

import numpy as np
import onnxruntime
import torch

import loom

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--workdir", default=None, help="where the .onnx and .so files go")
args = parser.parse_args()
workdir = args.workdir or tempfile.mkdtemp(prefix="loom-walkthrough-")
os.makedirs(workdir, exist_ok=True)

# %% 1. A small convolutional network in PyTorch, exported to ONNX with a dynamic batch.
torch.manual_seed(0)
net = torch.nn.Sequential(
    torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
    torch.nn.MaxPool2d(2),
    torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(),
    torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(32, 10)).eval()
onnx_path = os.path.join(workdir, "net.onnx")
torch.onnx.export(net, torch.randn(1, 3, 32, 32), onnx_path, input_names=["image"],
                  output_names=["logits"], dynamic_axes={"image": {0: "batch"}}, opset_version=13)

# %% 2. Compile it for this CPU, the batch bound to 4 (the graph executor: every shape fixed,
# one static memory plan). Leaving it unbound would give a model for any batch (the VM).
model = loom.compile(onnx_path, input_shapes={"image": (4, 3, 32, 32)})
print(model)
print("inputs: ", model.inputs)
print("outputs:", model.outputs)

# %% 3. Run it on a NumPy batch and check against ONNX Runtime and PyTorch.
images = np.random.default_rng(0).uniform(-1, 1, (4, 3, 32, 32)).astype(np.float32)
logits = model(images)["logits"]
session = onnxruntime.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
(expected,) = session.run(["logits"], {"image": images})
with torch.no_grad():
    from_torch = net(torch.from_numpy(images)).numpy()
error_ort = float(np.abs(logits - expected).max())
error_torch = float(np.abs(logits - from_torch).max())
print(f"max |Loom - ONNX Runtime| = {error_ort:.2e}, max |Loom - PyTorch| = {error_torch:.2e}")

# %% 4. Tensors cross to and from PyTorch without copies (DLPack): the input is read where
# torch keeps it, and the output tensor is a view of Loom's array.
batch = torch.from_numpy(images)
out = model.run_dlpack(batch)["logits"]
as_torch = torch.from_dlpack(out)
print(f"output shares memory with the torch tensor: {as_torch.data_ptr() == out.data_ptr}")

# %% 5. Time it (medians over repeats; the GIL is released while it runs).
print("1 thread:  ", model.benchmark(repeat=10, threads=1))
print("all threads:", model.benchmark(repeat=10))

# %% 6. One artifact: kernels, execution graph and weights in one shared library, which
# loom.load, `loom run` and the C API load.
artifact = os.path.join(workdir, "net.so")
model.export(artifact)
loaded = loom.load(artifact)
same = np.array_equal(loaded(images)["logits"], logits)
print(f"exported {artifact} ({os.path.getsize(artifact) // 1024} KiB); reloaded outputs equal: {same}")

# %% 7. Layer by layer against ONNX Runtime: the first divergent node, if any.
report = loom.debug.compare(onnx_path, {"image": images})
print(report)

ok = error_ort < 1e-4 and error_torch < 1e-4 and same and report.first_divergence is None
print("ok" if ok else "MISMATCH")
sys.exit(0 if ok else 1)
