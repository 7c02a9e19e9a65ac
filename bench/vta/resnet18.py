"""ResNet-18 on VTA's simulator, end to end through the CLI (torchvision's topology with the
model generator's weights, bench/models' ResNet-18), against the same quantized graph on
the host and against the float32 model:

- quantized with the power-of-two scheme on seeded calibration inputs, compiled for
  `--target vta` (2 and 1 virtual threads) and for the host, with each compile's time;
- the convolutions' tilings tuned on the simulator (`loom tune --target vta`, cost: simulated
  cycles; --tune-budget, the run ends early once every space is measured) and compiled from
  the records;
- the VTA logits against the host's, bit for bit, and the top-1 class against the float32
  model's (ONNX Runtime), on --inputs seeded inputs;
- one inference's simulator counters, cycles and GEMM utilization, the share of the model's
  multiply-accumulates that ran on VTA, and the simulator's wall time per inference.

Usage: bench/vta/resnet18.py [--loom build/tools/loom/loom] [--workdir build/bench-vta]
                             [--inputs 100] [--tune-budget 20m]
Exits 1 when a VTA output differs from the host's.
"""

import argparse
import os
import re
import subprocess
import sys
import time

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "python"))

from loom_models import models  # noqa: E402


def loom(binary, *args):
    result = subprocess.run([binary, *args], capture_output=True, text=True, timeout=3600)
    if result.returncode != 0:
        sys.exit(f"`loom {' '.join(args)}` failed:\n{result.stderr}")
    return result.stdout


def multiply_accumulates(path):
    """Per layer kind, the multiply-accumulates of the model's Conv and Gemm nodes."""
    import onnx
    from onnx import shape_inference
    model = shape_inference.infer_shapes(onnx.load(path))
    shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
              for v in list(model.graph.value_info) + list(model.graph.output) +
              list(model.graph.input)}
    weights = {i.name: list(i.dims) for i in model.graph.initializer}
    convs = gemms = 0
    for node in model.graph.node:
        if node.op_type == "Conv":
            out = shapes[node.output[0]]
            w = weights[node.input[1]]
            convs += int(np.prod(out)) * w[1] * w[2] * w[3]
        elif node.op_type == "Gemm":
            w = weights[node.input[1]]
            gemms += w[0] * w[1]
    return convs, gemms


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--loom", default=os.path.join(REPO, "build/tools/loom/loom"))
    parser.add_argument("--workdir", default=os.path.join(REPO, "build/bench-vta"))
    parser.add_argument("--inputs", type=int, default=100)
    parser.add_argument("--tune-budget", default="20m")
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    model = models.cached("resnet18", os.path.join(args.workdir, "models"))
    calibration = os.path.join(args.workdir, "calibration.npy")
    np.save(calibration, np.stack([models.random_inputs("resnet18", seed=1000 + s)["input"]
                                   for s in range(4)]))
    quantize = ["--quantize", "int8", "--quantize-scheme", "power-of-two", "--calibration",
                f"input={calibration}", "--quantize-every-layer"]
    artifacts, compile_seconds = {}, {}
    for name, target in (("vta", "vta"), ("vta_1_thread", "vta -virtual-threads=1"),
                         ("host", "llvm")):
        artifacts[name] = os.path.join(args.workdir, f"resnet18_{name}.so")
        start = time.perf_counter()
        out = loom(args.loom, "compile", model, "-o", artifacts[name], "--target", target,
                   *quantize, "-q")
        compile_seconds[name] = time.perf_counter() - start
        print(out.strip())
    records = os.path.join(args.workdir, "resnet18_vta.jsonl")
    if os.path.exists(records):
        os.remove(records)
    start = time.perf_counter()
    tune_report = loom(args.loom, "tune", model, "--target", "vta", "--budget", args.tune_budget,
                       "--records", records, *quantize, "-q")
    tune_seconds = time.perf_counter() - start
    print(tune_report.strip())
    artifacts["vta_tuned"] = os.path.join(args.workdir, "resnet18_vta_tuned.so")
    print(loom(args.loom, "compile", model, "-o", artifacts["vta_tuned"], "--target", "vta",
               "--records", records, *quantize, "-q").strip())

    import onnxruntime
    session = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
    agree = exact = 0
    for seed in range(args.inputs):
        image = models.random_inputs("resnet18", seed=seed)["input"]
        path = os.path.join(args.workdir, "input.npy")
        np.save(path, image)
        logits = {}
        for name in ("vta", "vta_tuned", "host") if seed < 5 else ("vta",):
            out_dir = os.path.join(args.workdir, f"out_{name}")
            loom(args.loom, "run", artifacts[name], "--input", f"input={path}", "--output-dir",
                 out_dir)
            logits[name] = np.load(os.path.join(out_dir, os.listdir(out_dir)[0]))
        if "host" in logits:
            for name in ("vta", "vta_tuned"):
                if not np.array_equal(logits[name], logits["host"]):
                    sys.exit(f"input {seed}: the {name} logits differ from the host's")
            exact += 1
        reference = session.run(None, {"input": image})[0]
        agree += int(np.argmax(logits["vta"]) == np.argmax(reference))

    convs, gemms = multiply_accumulates(model)
    rows = []
    for name in ("vta", "vta_1_thread", "vta_tuned"):
        report = loom(args.loom, "bench", artifacts[name], "--repeat", "3", "--warmup", "1")
        counters = {k: int(v) for k, v in re.findall(r"counter (\w+)=(\d+)", report)}
        cycles, utilization = re.search(r"cycles total=(\d+) gemm_utilization=([\d.]+)",
                                        report).groups()
        wall = float(re.search(r"median_ms=([\d.]+)", report).group(1))
        rows.append((name, counters, int(cycles), float(utilization), wall))
        print(report.strip())

    print(f"\nResNet-18 on VTA's simulator ({args.inputs} seeded inputs):")
    print(f"- VTA logits (default and tuned tilings) equal the host's bit for bit on {exact} "
          f"of {exact} inputs compared")
    print(f"- tuning the tilings: {tune_seconds:.0f} s; "
          + re.search(r"tuned kernels' time per inference: (.*)", tune_report).group(1)
          + " (simulated, at the configuration's clock)")
    print(f"- top-1 agrees with float32 (ONNX Runtime) on {agree} of {args.inputs}")
    print(f"- compile: {compile_seconds['vta']:.1f} s for vta, "
          f"{compile_seconds['host']:.1f} s for the host (quantization's calibration included)")
    print("\n| tiling | cycles | GEMM utilization | GEMM micro-ops | MACs on VTA "
          "| simulator wall time |")
    print("|---|---:|---:|---:|---:|---:|")
    labels = {"vta": "default, 2 virtual threads", "vta_1_thread": "default, 1 virtual thread",
              "vta_tuned": "tuned"}
    for name, counters, cycles, utilization, wall in rows:
        macs = counters["gemm_counter"] * 16 * 16
        print(f"| {labels[name]} | {cycles:,} | {utilization:.1%} "
              f"| {counters['gemm_counter']:,} | {macs / (convs + gemms):.1%} | {wall:.0f} ms |")
    print("\ncounters (2 virtual threads): " +
          ", ".join(f"{k}={v:,}" for k, v in rows[0][1].items()))


if __name__ == "__main__":
    main()
