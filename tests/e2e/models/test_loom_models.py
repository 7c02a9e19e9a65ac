#!/usr/bin/env python3
"""The model generators of python/loom_models, against independent references: the BERT
encoder's ONNX graph against the same encoder written in numpy from its weights, a
torchvision export against torch itself, and the generate CLI and model cache.
Exit status 77 (skipped) when this Python lacks a package the generators need."""

import argparse
import importlib
import math
import os
import subprocess
import sys
import tempfile
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
PYTHON_DIR = os.path.join(REPO, "python")
sys.path.insert(0, PYTHON_DIR)

for _package in ("numpy", "onnx", "onnxruntime", "torch", "torchvision"):
    try:
        importlib.import_module(_package)
    except ImportError:
        print(f"skipped: {sys.executable} lacks {_package}; `make deps` installs it")
        sys.exit(77)

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import numpy_helper  # noqa: E402

from loom_models import (bert_encoder, export_torchvision, loom_tool, models,  # noqa: E402
                         reference, to_float16)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_model  # noqa: E402


def numpy_encoder(weights, config, hidden_states, mask):
    """The post-norm BERT encoder in float64, from the ONNX model's weights by name."""
    def linear(x, name):
        return x @ weights[f"{name}.weight"] + weights[f"{name}.bias"]

    def layer_norm(x, name):
        mean = x.mean(-1, keepdims=True)
        variance = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(variance + 1e-12) * weights[f"{name}.scale"] + \
            weights[f"{name}.bias"]

    def split_heads(x):  # [S, H] -> [heads, S, d]
        return x.reshape(config.sequence, config.heads, config.head_size).transpose(1, 0, 2)

    erf = np.vectorize(math.erf)
    x = hidden_states[0].astype(np.float64)
    for layer in range(config.layers):
        prefix = f"layer{layer}"
        query = split_heads(linear(x, f"{prefix}.attention.query"))
        key = split_heads(linear(x, f"{prefix}.attention.key"))
        value = split_heads(linear(x, f"{prefix}.attention.value"))
        scores = query @ key.transpose(0, 2, 1) / math.sqrt(config.head_size)
        scores = np.where(mask[0][None, None, :] == 0, bert_encoder.MASK_FILL, scores)
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        context = (probs @ value).transpose(1, 0, 2).reshape(config.sequence, config.hidden)
        x = layer_norm(x + linear(context, f"{prefix}.attention.output"),
                       f"{prefix}.attention.norm")
        up = linear(x, f"{prefix}.ffn.up")
        x = layer_norm(x + linear(up * 0.5 * (1 + erf(up / math.sqrt(2))), f"{prefix}.ffn.down"),
                       f"{prefix}.ffn.norm")
    return x[None]


class BertEncoderTest(unittest.TestCase):
    def test_onnx_graph_computes_the_encoder(self):
        config = bert_encoder.Config(layers=2, hidden=64, heads=4, ffn=128, sequence=16)
        model = bert_encoder.build(config, seed=3)
        weights = {t.name: numpy_helper.to_array(t).astype(np.float64)
                   for t in model.graph.initializer}
        rng = np.random.default_rng(1)
        hidden_states = rng.standard_normal((1, 16, 64), dtype=np.float32)
        mask = bert_encoder.attention_mask(16, attended=11)
        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "encoder.onnx")
            onnx.save(model, path)
            got = reference.run(path, {"hidden_states": hidden_states,
                                       "attention_mask": mask})["last_hidden_state"]
        expected = numpy_encoder(weights, config, hidden_states, mask)
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-4)
        # The mask matters: attending everywhere gives another result.
        unmasked = numpy_encoder(weights, config, hidden_states, np.ones_like(mask))
        self.assertGreater(np.abs(unmasked - expected).max(), 1e-2)

    def test_without_mask_attends_everywhere(self):
        config = bert_encoder.Config(layers=1, hidden=32, heads=2, ffn=64, sequence=8,
                                     attention_mask=False)
        model = bert_encoder.build(config, seed=4)
        self.assertEqual([i.name for i in model.graph.input], ["hidden_states"])
        self.assertNotIn("Where", {node.op_type for node in model.graph.node})
        weights = {t.name: numpy_helper.to_array(t).astype(np.float64)
                   for t in model.graph.initializer}
        hidden_states = np.random.default_rng(2).standard_normal((1, 8, 32), dtype=np.float32)
        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "encoder.onnx")
            onnx.save(model, path)
            got = reference.run(path, {"hidden_states": hidden_states})["last_hidden_state"]
        expected = numpy_encoder(weights, config, hidden_states, np.ones((1, 8), np.int64))
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-4)

    def test_full_size_has_bert_base_encoder_parameters(self):
        model = bert_encoder.build(bert_encoder.Config(layers=1), seed=0)
        matrices = [numpy_helper.to_array(t) for t in model.graph.initializer
                    if t.data_type == onnx.TensorProto.FLOAT and len(t.dims) >= 1]
        # BERT-base's encoder has 85,054,464 parameters, 12 layers of 7,087,872.
        self.assertEqual(sum(m.size for m in matrices), 7087872)
        ops = {node.op_type for node in model.graph.node}
        for op in ("LayerNormalization", "Erf", "Where", "Expand", "Softmax", "Transpose"):
            self.assertIn(op, ops)
        self.assertEqual([i.name for i in model.graph.input], ["hidden_states", "attention_mask"])
        self.assertEqual(model.opset_import[0].version, 17)

    def test_activations_stay_order_one(self):
        model = bert_encoder.build(bert_encoder.Config(layers=4, hidden=128, heads=2, ffn=512,
                                                       sequence=32), seed=0)
        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "encoder.onnx")
            onnx.save(model, path)
            rng = np.random.default_rng(0)
            out = reference.run(path, {
                "hidden_states": rng.standard_normal((1, 32, 128), dtype=np.float32),
                "attention_mask": bert_encoder.attention_mask(32, 20)})["last_hidden_state"]
        self.assertLess(np.abs(out).max(), 20.0)
        self.assertGreater(out.std(), 0.5)


class Float16Test(unittest.TestCase):
    def test_every_float_tensor_becomes_float16_and_computes_the_same(self):
        config = bert_encoder.Config(layers=1, hidden=32, heads=2, ffn=64, sequence=8)
        rng = np.random.default_rng(5)
        inputs = {"hidden_states": rng.standard_normal((1, 8, 32), dtype=np.float32),
                  "attention_mask": bert_encoder.attention_mask(8, attended=6)}
        with tempfile.TemporaryDirectory() as directory:
            src, dst = (os.path.join(directory, name) for name in ("f32.onnx", "f16.onnx"))
            onnx.save(bert_encoder.build(config, seed=6), src)
            to_float16.convert(src, dst)
            model = onnx.load(dst)
            float_types = {onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16}
            tensors = list(model.graph.initializer) + [
                a.t for n in model.graph.node for a in n.attribute
                if a.type == onnx.AttributeProto.TENSOR]
            self.assertTrue(tensors)
            for tensor in tensors:
                self.assertNotEqual(tensor.data_type, onnx.TensorProto.FLOAT, tensor.name)
            for value in list(model.graph.input) + list(model.graph.output):
                if value.type.tensor_type.elem_type in float_types:
                    self.assertEqual(value.type.tensor_type.elem_type,
                                     onnx.TensorProto.FLOAT16, value.name)
            expected = reference.run(src, inputs)["last_hidden_state"]
            half_inputs = dict(inputs, hidden_states=inputs["hidden_states"].astype(np.float16))
            got = reference.run(dst, half_inputs)["last_hidden_state"]
        self.assertEqual(got.dtype, np.float16)
        np.testing.assert_allclose(got.astype(np.float32), expected, rtol=0, atol=2e-2)

    def test_inputs_of_a_float16_model_are_float16(self):
        inputs = models.random_inputs("bert_base_fp16", seed=1)
        self.assertEqual(inputs["hidden_states"].dtype, np.float16)
        self.assertEqual(inputs["attention_mask"].dtype, np.int64)
        self.assertEqual(models.float_name("resnet18_fp16"), "resnet18")


class TorchvisionTest(unittest.TestCase):
    def test_export_matches_torch(self):
        import torch

        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "squeezenet.onnx")
            export_torchvision.export("squeezenet", path)
            model = onnx.load(path)
            self.assertEqual([i.name for i in model.graph.input], ["input"])
            self.assertEqual([o.name for o in model.graph.output], ["logits"])
            self.assertEqual(model.opset_import[0].version, 13)
            inputs = models.random_inputs("squeezenet", seed=5)
            got = reference.run(path, inputs)["logits"]
        with torch.no_grad():
            expected = export_torchvision.build("squeezenet")(
                torch.from_numpy(inputs["input"])).numpy()
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-4 * np.abs(expected).max())

    def test_batch_norms_are_calibrated(self):
        import torch

        model = export_torchvision.build("resnet18")
        norms = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d)]
        self.assertFalse(any(torch.all(bn.running_var == 1) for bn in norms))
        with torch.no_grad():
            logits = model(torch.randn(2, 3, 224, 224))
        self.assertLess(float(logits.abs().max()), 50.0)
        self.assertGreater(float(logits.std()), 0.01)


class GenerateTest(unittest.TestCase):
    def generate(self, *args):
        return subprocess.run([sys.executable, "-m", "loom_models.generate", *args],
                              cwd=PYTHON_DIR, capture_output=True, text=True)

    def test_cli_writes_a_model_and_rejects_bad_requests(self):
        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "bert.onnx")
            result = self.generate("bert_base", path, "--layers", "1")
            self.assertEqual(result.returncode, 0, result.stderr)
            onnx.checker.check_model(path)
            result = self.generate("alexnet", path)
            self.assertEqual(result.returncode, 2)
            self.assertIn("invalid choice: 'alexnet'", result.stderr)
            result = self.generate("resnet18", path, "--layers", "2")
            self.assertEqual(result.returncode, 2)
            self.assertIn("--layers applies to bert_base only", result.stderr)

    def test_cache_reuses_a_current_model(self):
        with tempfile.TemporaryDirectory() as directory:
            path = models.cached("bert_base", directory, layers=1)
            self.assertEqual(os.path.basename(path), "bert_base_1layers.onnx")
            first = os.path.getmtime(path)
            self.assertEqual(models.cached("bert_base", directory, layers=1), path)
            self.assertEqual(os.path.getmtime(path), first)
            os.utime(path, (0, 0))  # older than the generators: made again
            models.cached("bert_base", directory, layers=1)
            self.assertGreater(os.path.getmtime(path), 0)
            self.assertEqual(os.listdir(directory), ["bert_base_1layers.onnx"])  # no .partial


class CleanupTest(unittest.TestCase):
    """A passing check removes its artifact and arrays (gigabytes over the suite), unless
    --keep; the cached models stay."""

    def check_in(self, directory, keep):
        workdir = os.path.join(directory, "work")
        for arrays in ("inputs", "outputs"):
            os.makedirs(os.path.join(workdir, arrays))
            open(os.path.join(workdir, arrays, "x.npy"), "wb").close()
        artifact = os.path.join(workdir, "model.so")
        model = os.path.join(workdir, "model.onnx")
        for path in (artifact, model):
            open(path, "wb").close()
        args = argparse.Namespace(keep=keep, workdir=workdir)
        self.assertEqual(check_model.passed_and_cleaned(args, artifact), 0)
        return sorted(os.listdir(workdir))

    def test_a_pass_leaves_only_the_model(self):
        with tempfile.TemporaryDirectory() as directory:
            self.assertEqual(self.check_in(directory, keep=False), ["model.onnx"])

    def test_keep_leaves_everything(self):
        with tempfile.TemporaryDirectory() as directory:
            self.assertEqual(self.check_in(directory, keep=True),
                             ["inputs", "model.onnx", "model.so", "outputs"])


class CompareTest(unittest.TestCase):
    """check_model's verdict: max|diff| <= 1e-4 * max|ref| + 1e-5 per output."""

    reference_outputs = {"logits": np.array([[4.0, -2.0, 0.5]], dtype=np.float32)}

    def verdict(self, loom_outputs):
        return check_model.compare(loom_outputs, self.reference_outputs)

    def test_within_and_beyond_the_bound(self):
        bound = 1e-4 * 4.0 + 1e-5
        near = {"logits": self.reference_outputs["logits"] + np.float32(0.9 * bound)}
        lines, passed = self.verdict(near)
        self.assertTrue(passed, lines)
        self.assertIn("max|ref|=4", lines[0])
        far = {"logits": self.reference_outputs["logits"] + np.float32(1.5 * bound)}
        self.assertFalse(self.verdict(far)[1])

    def test_names_shapes_and_non_finite_values_fail(self):
        self.assertFalse(self.verdict({"output": self.reference_outputs["logits"]})[1])
        self.assertFalse(self.verdict({"logits": np.zeros((3,), dtype=np.float32)})[1])
        nan = self.reference_outputs["logits"].copy()
        nan[0, 1] = np.nan
        self.assertFalse(self.verdict({"logits": nan})[1])


class LoomToolTest(unittest.TestCase):
    def test_peak_memory_is_the_child_s_own(self):
        ballast = np.ones(300 << 20, dtype=np.uint8)  # this process is now 300 MiB larger
        _, small_rss = loom_tool.measure_child(["sleep", "0.2"])
        self.assertLess(small_rss, 50, "the parent's footprint leaked into the child's")
        del ballast
        _, big_rss = loom_tool.measure_child(
            [sys.executable, "-c", "import time; b = bytearray(200 << 20); time.sleep(0.2)"])
        self.assertGreater(big_rss, 200)

    def test_failures_and_the_bench_line(self):
        with self.assertRaisesRegex(loom_tool.LoomError, "exited with 3"):
            loom_tool.measure_child([sys.executable, "-c", "raise SystemExit(3)"])
        with self.assertRaisesRegex(loom_tool.LoomError, "ran past 0.2 s"):
            loom_tool.measure_child(["sleep", "5"], timeout=0.2)
        figures = loom_tool.parse_bench_line(
            "loading\nmedian_ms=1.5 min_ms=1.25 max_ms=2 mean_ms=1.6 repeat=20 threads=2\n")
        self.assertEqual(figures["median_ms"], 1.5)
        self.assertEqual(figures["threads"], 2)
        with self.assertRaisesRegex(loom_tool.LoomError, "no 'median_ms=...' line"):
            loom_tool.parse_bench_line("median: 3 ms")


if __name__ == "__main__":
    unittest.main(verbosity=2)
