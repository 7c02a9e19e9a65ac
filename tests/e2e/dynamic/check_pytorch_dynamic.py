#!/usr/bin/env python3
"""Models exported from PyTorch with dynamic axes (torch.onnx.export(dynamic_axes=...)), whose
exporter writes every view as Shape -> Gather -> Unsqueeze -> Concat -> Reshape: compiled once
by `loom compile` (the sizes stay symbolic; the shape arithmetic is evaluated at import) and
run by `loom run` at several sizes against ONNX Runtime on the same model and inputs, two
also with dynamic buckets: an attention block, rows flattened through an MLP and back, a
small CNN of symbolic batch, BERT's embeddings as transformers writes them (buffers sliced
to the sequence length and expanded to the batch), GPT-2's position ids (arange) with a
mask of ones, a selection (TopK, and NonZero, whose row count only a run knows), recurrent
layers over a sequence length only a run knows, and a scripted loop of an input's count.

Usage: check_pytorch_dynamic.py --loom PATH --workdir DIR
Exit status: 0 pass, 1 fail, 77 skipped (the Python environment lacks a package).
"""

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


class Embeddings(torch.nn.Module):
    """BERT's embeddings as transformers writes them: position ids and token types sliced
    from buffers to the sequence length and expanded to the batch, and the additive mask."""

    def __init__(self, vocabulary=100, width=32, longest=64):
        super().__init__()
        self.words = torch.nn.Embedding(vocabulary, width)
        self.positions = torch.nn.Embedding(longest, width)
        self.token_types = torch.nn.Embedding(2, width)
        self.norm = torch.nn.LayerNorm(width)
        self.register_buffer("position_ids", torch.arange(longest).expand((1, -1)))
        self.register_buffer("token_type_ids", torch.zeros((1, longest), dtype=torch.long))

    def forward(self, input_ids, attention_mask):
        batch, seq = input_ids.size()
        positions = self.position_ids[:, 0:seq]
        token_types = self.token_type_ids[:, :seq].expand(batch, seq)
        x = self.words(input_ids) + self.positions(positions) + self.token_types(token_types)
        mask = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * -10000.0
        return self.norm(x), mask


class Positions(torch.nn.Module):
    """GPT-2's position ids (torch.arange to the sequence length) and a mask of ones made
    for the batch (torch.ones): Range and ConstantOfShape of symbolic sizes."""

    def __init__(self, vocabulary=100, width=32, longest=64):
        super().__init__()
        self.words = torch.nn.Embedding(vocabulary, width)
        self.positions = torch.nn.Embedding(longest, width)

    def forward(self, input_ids):
        batch, seq = input_ids.size()
        position_ids = torch.arange(0, seq, dtype=torch.long).unsqueeze(0)
        ones = torch.ones(batch, seq)
        return (self.words(input_ids) + self.positions(position_ids)) * ones[:, :, None]


class Selection(torch.nn.Module):
    """The 3 best scores of each row with their positions (TopK), and the positions of the
    scores above 1 (NonZero: as many rows as a run finds)."""

    def forward(self, x):
        values, indices = torch.topk(x, 3, dim=-1)
        return values, indices, torch.nonzero(x > 1.0)


class Recurrent(torch.nn.Module):
    """A 2-layer bidirectional LSTM and a GRU over x [batch, seq, 8]: over a sequence length
    only a run knows, each layer a loop in the VM."""

    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(8, 16, num_layers=2, batch_first=True, bidirectional=True)
        self.gru = torch.nn.GRU(32, 12, batch_first=True)
        self.out = torch.nn.Linear(12, 5)

    def forward(self, x):
        y, _ = self.lstm(x)
        z, h = self.gru(y)
        return self.out(z), h


class Repeat(torch.nn.Module):
    """A scripted for loop of n iterations, n an input: ONNX Loop with a run-time trip count."""

    def forward(self, x, n):
        y = x
        for i in range(int(n)):
            y = torch.tanh(y * 1.5 + float(i))
        return y


def float_input(shape):
    """Inputs of one float tensor "x" of `shape`."""
    def make(rng):
        return {"x": rng.standard_normal(shape, dtype=np.float32)}
    return make


def repeat_inputs(n):
    """x [3, 4] and the iteration count n."""
    def make(rng):
        return {"x": rng.standard_normal((3, 4), dtype=np.float32), "n": np.array(n, np.int64)}
    return make


def token_inputs(batch, seq, mask=True):
    """Token ids and (with `mask`) an attention mask, a third of the positions padded."""
    def make(rng):
        inputs = {"input_ids": rng.integers(0, 100, (batch, seq)).astype(np.int64)}
        if mask:
            inputs["attention_mask"] = (rng.random((batch, seq)) > 0.3).astype(np.int64)
        return inputs
    return make


# name, module, its inputs for the export, dynamic axes per input, inputs to run, buckets
CASES = [
    ("attention", Attention, float_input((1, 7, 64)), {"x": {0: "batch", 1: "seq"}},
     [float_input(s) for s in [(1, 7, 64), (2, 13, 64), (3, 1, 64), (1, 16, 64)]], ["seq=16"]),
    ("token_mlp", TokenMlp, float_input((2, 5, 32)), {"x": {0: "batch", 1: "seq"}},
     [float_input(s) for s in [(2, 5, 32), (1, 9, 32), (4, 3, 32)]], []),
    ("convnet", ConvNet, float_input((2, 3, 8, 8)), {"x": {0: "batch"}},
     [float_input((b, 3, 8, 8)) for b in (1, 2, 5)], ["batch=2"]),
    ("embeddings", Embeddings, token_inputs(2, 7),
     {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}},
     [token_inputs(b, n) for b, n in [(2, 7), (1, 13), (3, 1)]], ["seq=13"]),
    ("positions", Positions, token_inputs(2, 7, mask=False),
     {"input_ids": {0: "batch", 1: "seq"}},
     [token_inputs(b, n, mask=False) for b, n in [(2, 7), (1, 13)]], []),
    ("selection", Selection, float_input((2, 9)), {"x": {0: "batch", 1: "seq"}},
     [float_input(s) for s in [(2, 9), (1, 4), (3, 17)]], []),
    ("recurrent", Recurrent, float_input((2, 7, 8)), {"x": {1: "seq"}},
     [float_input(s) for s in [(2, 7, 8), (2, 1, 8), (2, 20, 8)]], []),
    ("repeat", Repeat, repeat_inputs(3), {}, [repeat_inputs(n) for n in (0, 1, 5)], []),
]


def main():
    args = loom_tool.end_to_end_arguments(__doc__)
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    failures = 0
    for name, module_class, example, axes, runs, buckets in CASES:
        module = module_class().eval()
        if module_class is Repeat:  # a loop of tensor-dependent count exports only scripted
            module = torch.jit.script(module)
        model_path = os.path.join(args.workdir, f"{name}.onnx")
        example_inputs = example(rng)
        with torch.no_grad():
            torch.onnx.export(module, tuple(torch.from_numpy(v) for v in example_inputs.values()),
                              model_path, input_names=list(example_inputs), dynamic_axes=axes,
                              opset_version=17)
        artifacts = [(os.path.join(args.workdir, f"{name}.so"), [])]
        for bucket in buckets:
            artifacts.append((os.path.join(args.workdir, f"{name}_buckets.so"),
                              ["--dynamic-buckets", bucket]))
        for artifact, extra in artifacts:
            loom_tool.compile_model(args.loom, model_path, artifact, extra_args=extra)
        session = onnxruntime.InferenceSession(model_path, providers=["CPUExecutionProvider"])
        output_names = [output.name for output in session.get_outputs()]
        for make_inputs in runs:
            inputs = make_inputs(rng)
            wants = dict(zip(output_names, session.run(None, inputs)))
            shapes = " ".join(f"{k}{list(v.shape)}" for k, v in inputs.items())
            for artifact, extra in artifacts:
                gots = loom_tool.run_model(args.loom, artifact, inputs, args.workdir)
                for output, want in wants.items():
                    got = gots[output]
                    error = (float(np.max(np.abs(got - want))) if got.shape == want.shape
                             else float("inf"))
                    bound = (RELATIVE_TOLERANCE * float(np.max(np.abs(want))) +
                             ABSOLUTE_TOLERANCE)
                    ok = got.shape == want.shape and error <= bound
                    failures += not ok
                    label = f"{name}{' ' + ' '.join(extra) if extra else ''}"
                    print(f"{'ok  ' if ok else 'FAIL'} {label} {shapes} -> {output} "
                          f"{list(got.shape)}: max|loom - ort| = {error:.3g} (bound {bound:.3g})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
