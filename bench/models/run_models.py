#!/usr/bin/env python3
"""Whole models, Loom against ONNX Runtime: latency, compile time and peak memory.

For each model and thread count it prints exactly one line:
  model=resnet18 threads=1 loom_ms=17.9 onnxruntime_ms=16.2 compile_s=4.1 loom_rss_mb=120 onnxruntime_rss_mb=150
- loom_ms: `loom bench --threads N --repeat R --warmup W`'s median;
- onnxruntime_ms: the median of R runs after W warm-up runs in a child process
  (`python -m loom_models.reference`: intra-op threads N, inter-op 1, ORT_ENABLE_ALL,
  sequential execution);
- compile_s: the wall time of `loom compile` (one artifact serves every thread count);
- *_rss_mb: the peak resident memory (ru_maxrss) of the timing process, largest over rounds;
- openvino_ms: OpenVINO's CPU plugin (float32, one stream, N threads) in its own process,
  when the openvino package is installed (python/requirements-test.txt pins it);
- --precision bf16: Loom compiles with --precision bf16 and OpenVINO runs at bf16 (its
  default precision on CPUs with AMX); ONNX Runtime stays float32; a second '#' line gives
  loom/openvino;
- tuned_ms: the model compiled with its tuning records (those shipped with Loom; with
  --records DIR those of DIR/<model>.jsonl first, for models that have one), timed in the
  same alternation; loom_ms is the defaults alone (--no-shipped-records).
Loom and ONNX Runtime alternate for --rounds rounds per case, so both share the machine's
noise; each latency is the median of the rounds' medians. Lines starting with '#' are
commentary (the ratio per model). Exit status 1 if any model failed.
"""

import argparse
import os
import statistics
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHON_DIR = os.path.join(REPO, "python")
sys.path.insert(0, PYTHON_DIR)

from loom_models import loom_tool, models  # noqa: E402


def time_onnxruntime(model_path, threads, repeat, warmup, runtime="onnxruntime",
                     precision="f32"):
    """(median ms, peak RSS MiB) of ONNX Runtime (or OpenVINO, at `precision`) timing the
    model in its own process."""
    command = [sys.executable, "-m", "loom_models.reference", model_path,
               "--threads", str(threads), "--repeat", str(repeat), "--warmup", str(warmup),
               "--runtime", runtime, "--precision", precision]
    out, rss_mb = loom_tool.measure_child(command, env=dict(os.environ, PYTHONPATH=PYTHON_DIR))
    return loom_tool.parse_bench_line(out)["median_ms"], rss_mb


def openvino_available():
    try:
        import openvino  # noqa: F401
    except ImportError:
        return False
    return True


def measure_case(loom, artifact, tuned, model_path, threads, args):
    loom_ms, tuned_ms, ort_ms, ov_ms, loom_rss, ort_rss = [], [], [], [], 0.0, 0.0
    for _ in range(args.rounds):
        if args.openvino:
            ov_ms.append(time_onnxruntime(model_path, threads, args.repeat, args.warmup,
                                          runtime="openvino",
                                          precision="bf16" if args.bf16 else "f32")[0])
        figures, rss = loom_tool.bench(loom, artifact, threads, args.repeat, args.warmup)
        loom_ms.append(figures["median_ms"])
        loom_rss = max(loom_rss, rss)
        if tuned:
            figures, _ = loom_tool.bench(loom, tuned, threads, args.repeat, args.warmup)
            tuned_ms.append(figures["median_ms"])
        median, rss = time_onnxruntime(model_path, threads, args.repeat, args.warmup)
        ort_ms.append(median)
        ort_rss = max(ort_rss, rss)
    tuned_median = statistics.median(tuned_ms) if tuned_ms else None
    ov_median = statistics.median(ov_ms) if ov_ms else None
    return (statistics.median(loom_ms), tuned_median, statistics.median(ort_ms), ov_median,
            loom_rss, ort_rss)


def bench_model(name, args):
    model_path = models.cached(name, args.workdir)
    suffix = "_bf16" if args.bf16 else ""
    precision = ["--precision", "bf16"] if args.bf16 else []
    artifact = os.path.join(args.workdir, f"{name}{suffix}.so")
    # The defaults alone: the records shipped with Loom are what tuned_ms shows.
    compile_s = loom_tool.compile_model(args.loom, model_path, artifact,
                                        extra_args=["--no-shipped-records", *precision])
    tuned = None
    records = os.path.join(args.records, f"{name}.jsonl") if args.records else None
    if not args.records or os.path.isfile(records):
        # With --records DIR: DIR's records (then the shipped ones); without: the shipped ones.
        tuned = os.path.join(args.workdir, f"{name}{suffix}_tuned.so")
        loom_tool.compile_model(
            args.loom, model_path, tuned,
            extra_args=(["--records", records] if args.records else []) + precision)
    ratios, ov_ratios = [], []
    for threads in args.threads:
        loom_ms, tuned_ms, ort_ms, ov_ms, loom_rss, ort_rss = measure_case(
            args.loom, artifact, tuned, model_path, threads, args)
        tuned_text = f" tuned_ms={tuned_ms:.1f}" if tuned_ms else ""
        ov_text = f" openvino_ms={ov_ms:.1f}" if ov_ms else ""
        print(f"model={name} threads={threads} loom_ms={loom_ms:.1f}{tuned_text} "
              f"onnxruntime_ms={ort_ms:.1f}{ov_text} compile_s={compile_s:.1f} "
              f"loom_rss_mb={loom_rss:.0f} onnxruntime_rss_mb={ort_rss:.0f}", flush=True)
        plural = "s" if threads > 1 else ""
        ratio = f"{loom_ms / ort_ms:.2f}"
        if tuned_ms:
            ratio += f" (tuned {tuned_ms / ort_ms:.2f})"
        ratios.append(f"{ratio} on {threads} thread{plural}")
        if ov_ms:
            ov_ratio = f"{loom_ms / ov_ms:.2f}"
            if tuned_ms:
                ov_ratio += f" (tuned {tuned_ms / ov_ms:.2f})"
            ov_ratios.append(f"{ov_ratio} on {threads} thread{plural}")
    print(f"# {name}: loom/onnxruntime latency {', '.join(ratios)}", flush=True)
    if ov_ratios:
        print(f"# {name}: loom/openvino latency {', '.join(ov_ratios)}", flush=True)


def comma_list(text):
    return [item for item in text.split(",") if item]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loom", default=os.path.join(REPO, "build", "tools", "loom", "loom"),
                        help="the loom binary (default: build/tools/loom/loom)")
    parser.add_argument("--workdir", default=os.path.join(REPO, "build", "bench-models"),
                        help="where models and artifacts are kept (default: build/bench-models)")
    parser.add_argument("--models", type=comma_list, default=list(models.NAMES),
                        help=f"comma-separated, from {','.join(models.NAMES)} (default: all)")
    parser.add_argument("--threads", type=lambda t: [int(n) for n in comma_list(t)],
                        default=[1, 2], help="comma-separated thread counts (default: 1,2)")
    parser.add_argument("--repeat", type=int, default=20,
                        help="timed runs per measurement (default 20)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed runs first (default 5)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="alternations of Loom and ONNX Runtime per case (default 3)")
    parser.add_argument("--records", default="",
                        help="a folder of tuning records, <model>.jsonl each, used before the "
                             "shipped ones for tuned_ms (models without one are not tuned)")
    parser.add_argument("--precision", choices=["float32", "bf16"], default="float32",
                        help="bf16: Loom compiles with --precision bf16 and OpenVINO runs at "
                             "bf16 (its default on CPUs with AMX); ONNX Runtime stays float32")
    parser.add_argument("--no-openvino", dest="openvino", action="store_false",
                        help="do not time OpenVINO (timed as openvino_ms when it is installed)")
    args = parser.parse_args()
    args.bf16 = args.precision == "bf16"
    args.openvino = args.openvino and openvino_available()
    unknown = [m for m in args.models if m not in models.NAMES]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(models.NAMES)}")
    if args.repeat < 1 or args.rounds < 1 or args.warmup < 0 or min(args.threads) < 1:
        parser.error("--repeat, --rounds and each thread count must be at least 1, "
                     "--warmup at least 0")
    if not os.access(args.loom, os.X_OK):
        parser.error(f"the loom binary '{args.loom}' is not an executable file; "
                     "build it (`make build`) or pass --loom")
    os.makedirs(args.workdir, exist_ok=True)

    failed = []
    for name in args.models:
        try:
            bench_model(name, args)
        except loom_tool.LoomError as error:
            failed.append(name)
            print(f"# {name}: FAILED: {error}".replace("\n", "\n# "), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
