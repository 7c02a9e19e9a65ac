#!/usr/bin/env python3
"""One-node models whose output sizes only a run knows, timed against ONNX Runtime on the
same models and inputs, in one run: selections (TopK with k a run-time input, NonZero,
NonMaxSuppression: a detector's post-processing) and operators whose shape operands are
run-time inputs (ReduceSum's axes, beside the same reduction with constant axes; Slice's
starts, ends and steps; Pad's pads; Resize's scales and sizes, beside the same resize with
constant scales). One line per case:
  topk_k5 threads=1 loom_ms=... onnxruntime_ms=... loom/ort=...
Each latency is the median of --repeat runs after --warmup, the two engines alternating for
--rounds rounds (the median of the rounds' medians). A benchmark, not a test.

  bench/models/selection_ops.py --threads 1
"""

import argparse
import os
import statistics
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "python"))

from loom_models import loom_tool  # noqa: E402


def one_node_model(node, inputs, outputs, initializers=()):
    graph = helper.make_graph([node], node.op_type, inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def cases(rng):
    """(name, model, feeds) per case."""
    x = rng.standard_normal((256, 1000), dtype=np.float32)
    topk = one_node_model(
        helper.make_node("TopK", ["x", "k"], ["values", "indices"], axis=1),
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [256, 1000]),
         helper.make_tensor_value_info("k", TensorProto.INT64, [1])],
        [helper.make_tensor_value_info("values", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("indices", TensorProto.INT64, None)])
    sparse = rng.standard_normal((1000, 1000), dtype=np.float32)
    sparse[rng.random(sparse.shape) < 0.9] = 0
    nonzero = one_node_model(
        helper.make_node("NonZero", ["x"], ["positions"]),
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1000, 1000])],
        [helper.make_tensor_value_info("positions", TensorProto.INT64, None)])
    count = 2000
    corners = rng.random((1, count, 2), dtype=np.float32) * 100
    sizes = 2 + rng.random((1, count, 2), dtype=np.float32) * 20
    boxes = np.concatenate([corners, corners + sizes], axis=2)
    scores = rng.random((1, 20, count), dtype=np.float32)
    nms = one_node_model(
        helper.make_node("NonMaxSuppression", ["boxes", "scores", "max_out", "iou", "floor"],
                         ["selected"]),
        [helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [1, count, 4]),
         helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 20, count])],
        [helper.make_tensor_value_info("selected", TensorProto.INT64, None)],
        [helper.make_tensor("max_out", TensorProto.INT64, [1], [100]),
         helper.make_tensor("iou", TensorProto.FLOAT, [1], [0.5]),
         helper.make_tensor("floor", TensorProto.FLOAT, [1], [0.2])])
    reduce_at_run_time = one_node_model(
        helper.make_node("ReduceSum", ["x", "axes"], ["sums"], keepdims=0),
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [256, 1000]),
         helper.make_tensor_value_info("axes", TensorProto.INT64, [1])],
        [helper.make_tensor_value_info("sums", TensorProto.FLOAT, None)])
    reduce_constant = one_node_model(
        helper.make_node("ReduceSum", ["x", "axes"], ["sums"], keepdims=0),
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [256, 1000])],
        [helper.make_tensor_value_info("sums", TensorProto.FLOAT, None)],
        [helper.make_tensor("axes", TensorProto.INT64, [1], [1])])
    slice_at_run_time = one_node_model(
        helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["part"]),
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [256, 1000])]
        + [helper.make_tensor_value_info(name, TensorProto.INT64, [2])
           for name in ("starts", "ends", "axes", "steps")],
        [helper.make_tensor_value_info("part", TensorProto.FLOAT, None)])
    image = rng.standard_normal((1, 64, 112, 112), dtype=np.float32)
    pad_at_run_time = one_node_model(
        helper.make_node("Pad", ["x", "pads"], ["padded"], mode="reflect"),
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, 112, 112]),
         helper.make_tensor_value_info("pads", TensorProto.INT64, [8])],
        [helper.make_tensor_value_info("padded", TensorProto.FLOAT, None)])
    def resize(operand, constant=None, **attrs):
        """Resize-13 of image by scales (input 2) or sizes (input 3), a run-time input unless
        `constant` gives its values."""
        inputs = ["x", "", "scales"] if operand == "scales" else ["x", "", "", "sizes"]
        kind = TensorProto.FLOAT if operand == "scales" else TensorProto.INT64
        given = [] if constant is not None else [
            helper.make_tensor_value_info(operand, kind, [4])]
        initializers = [] if constant is None else [
            helper.make_tensor(operand, kind, [4], constant)]
        return one_node_model(
            helper.make_node("Resize", inputs, ["resized"], **attrs),
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, 112, 112])] + given,
            [helper.make_tensor_value_info("resized", TensorProto.FLOAT, None)], initializers)
    pairs = lambda *values: np.array(values, np.int64)  # noqa: E731
    scales = np.array([1, 1, 2, 2], np.float32)
    return [
        ("reduce_sum_axes_at_run_time", reduce_at_run_time, {"x": x, "axes": pairs(1)}),
        ("reduce_sum_constant_axes", reduce_constant, {"x": x}),
        ("slice_at_run_time", slice_at_run_time,
         {"x": x, "starts": pairs(10, 0), "ends": pairs(200, 1000), "axes": pairs(0, 1),
          "steps": pairs(1, 2)}),
        ("pad_reflect_at_run_time", pad_at_run_time,
         {"x": image, "pads": pairs(0, 0, 1, 1, 0, 0, 1, 1)}),
        ("resize_nearest_scales_at_run_time", resize("scales"), {"x": image, "scales": scales}),
        ("resize_nearest_constant_scales", resize("scales", [1, 1, 2, 2]), {"x": image}),
        ("resize_linear_sizes_at_run_time", resize("sizes", mode="linear"),
         {"x": image, "sizes": pairs(1, 64, 200, 200)}),
        ("resize_linear_constant_sizes", resize("sizes", [1, 64, 200, 200], mode="linear"),
         {"x": image}),
        ("topk_k5", topk, {"x": x, "k": np.array([5], np.int64)}),
        ("topk_k100", topk, {"x": x, "k": np.array([100], np.int64)}),
        ("nonzero_1M_10pct", nonzero, {"x": sparse}),
        ("nms_2000x20", nms, {"boxes": boxes, "scores": scores}),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--loom", default=os.path.join(REPO, "build", "tools", "loom", "loom"))
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    from loom_models import reference  # onnxruntime

    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as workdir:
        for name, model, feeds in cases(rng):
            model_path = os.path.join(workdir, f"{name}.onnx")
            onnx.save(model, model_path)
            artifact = os.path.join(workdir, f"{name}.so")
            loom_tool.compile_model(args.loom, model_path, artifact)
            input_args = []
            for input_name, array in feeds.items():
                path = os.path.join(workdir, f"{name}_{input_name}.npy")
                np.save(path, array)
                input_args += ["--input", f"{input_name}={path}"]
            # The outputs agree before anything is timed.
            got = loom_tool.run_model(args.loom, artifact, feeds, workdir)
            want = reference.run(model_path, feeds)
            # (Sums in another order differ by rounding: a bound relative to the largest.)
            for output, expected in want.items():
                bound = 1e-5 * float(np.abs(expected).max()) if expected.size else 0.0
                if got[output].shape != expected.shape or not np.allclose(
                        got[output], expected, rtol=1e-5, atol=bound):
                    raise SystemExit(f"{name}: output '{output}' differs from ONNX Runtime")
            loom_ms, ort_ms = [], []
            for _ in range(args.rounds):
                out, _ = loom_tool.measure_child(
                    [args.loom, "bench", artifact, *input_args, "--threads", str(args.threads),
                     "--repeat", str(args.repeat), "--warmup", str(args.warmup)])
                loom_ms.append(loom_tool.parse_bench_line(out)["median_ms"])
                ort_ms.append(statistics.median(reference.time_runs(
                    model_path, args.threads, args.repeat, args.warmup, feeds)))
            loom_median, ort_median = statistics.median(loom_ms), statistics.median(ort_ms)
            print(f"{name} threads={args.threads} loom_ms={loom_median:.3f} "
                  f"onnxruntime_ms={ort_median:.3f} loom/ort={loom_median / ort_median:.2f}",
                  flush=True)


if __name__ == "__main__":
    main()
