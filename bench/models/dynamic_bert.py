#!/usr/bin/env python3
"""BERT-base compiled once with a symbolic sequence length (the virtual machine), with kernels
specialized for the --buckets lengths (--dynamic-buckets; default: every timed length),
timed at several lengths against ONNX Runtime on the same model and against Loom compiled
statically for each length (the graph executor), in one run. One line per length (bucket:
whether the specialized kernels ran, else the general ones):
  sequence=128 bucket=yes threads=1 vm_ms=... static_ms=... onnxruntime_ms=... vm/ort=...
Each latency is the median of --repeat runs after --warmup, alternating the three engines for
--rounds rounds (the median of the rounds' medians). A benchmark, not a test: minutes.

  bench/models/dynamic_bert.py --lengths 16,64,128,384,512 --threads 1
  bench/models/dynamic_bert.py --lengths 16,24 --buckets 16     # 24: the general kernels

With --bounded, the same VM compile with `--constraint sequence <= <longest length>` is timed
too (bounded_ms): its tensors planned in storages at that bound instead of taken from the
pool; bounded/vm compares the two.
"""

import argparse
import os
import statistics
import sys

import numpy as np
import onnx

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHON_DIR = os.path.join(REPO, "python")
sys.path.insert(0, PYTHON_DIR)

from loom_models import bert_encoder, loom_tool  # noqa: E402


def comma_list(text):
    return [int(item) for item in text.split(",") if item]


def inputs_at(length, workdir):
    """The .npy inputs of one length (a quarter of the positions padded) as loom's --input
    options, and the ONNX Runtime feeds."""
    rng = np.random.default_rng(length)
    feeds = {"hidden_states": rng.standard_normal((1, length, 768), dtype=np.float32),
             "attention_mask": bert_encoder.attention_mask(length, max(1, length * 3 // 4))}
    paths = []
    for name, array in feeds.items():
        path = os.path.join(workdir, f"{name}_{length}.npy")
        np.save(path, array)
        paths += ["--input", f"{name}={path}"]
    return paths, feeds


def time_loom(loom, artifact, input_args, threads, repeat, warmup):
    out, _ = loom_tool.measure_child([loom, "bench", artifact, *input_args, "--threads",
                                      str(threads), "--repeat", str(repeat), "--warmup",
                                      str(warmup)])
    return loom_tool.parse_bench_line(out)["median_ms"]


def time_onnxruntime(model_path, feeds, threads, repeat, warmup):
    from loom_models import reference  # onnxruntime: only when timing it
    return statistics.median(reference.time_runs(model_path, threads, repeat, warmup, feeds))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--loom", default=os.path.join(REPO, "build", "tools", "loom", "loom"))
    parser.add_argument("--workdir", default=os.path.join(REPO, "build", "bench-dynamic-bert"))
    parser.add_argument("--lengths", type=comma_list, default=[16, 64, 128, 384, 512])
    parser.add_argument("--buckets", type=comma_list, default=None,
                        help="lengths to specialize for (default: --lengths; none: 0)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--bounded", action="store_true",
                        help="also time the VM compiled with the longest length as a bound")
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    dynamic_path = os.path.join(args.workdir, "bert_dynamic.onnx")
    onnx.save(bert_encoder.build(bert_encoder.Config(layers=args.layers, dynamic=True)),
              dynamic_path)
    vm_artifact = os.path.join(args.workdir, "bert_dynamic.so")
    buckets = [b for b in (args.lengths if args.buckets is None else args.buckets) if b > 0]
    bucket_args = ["--dynamic-buckets", "sequence=" + ",".join(map(str, buckets))] if buckets else []
    compile_s = loom_tool.compile_model(args.loom, dynamic_path, vm_artifact,
                                        extra_args=bucket_args)
    print(f"# compiled once for the VM in {compile_s:.1f} s, buckets {buckets or 'none'}",
          flush=True)
    bounded_artifact = os.path.join(args.workdir, "bert_dynamic_bounded.so")
    if args.bounded:
        loom_tool.compile_model(args.loom, dynamic_path, bounded_artifact,
                                extra_args=bucket_args + ["--constraint",
                                                          f"sequence <= {max(args.lengths)}"])
    for length in args.lengths:
        static_path = os.path.join(args.workdir, f"bert_{length}.onnx")
        onnx.save(bert_encoder.build(bert_encoder.Config(layers=args.layers, sequence=length)),
                  static_path)
        static_artifact = os.path.join(args.workdir, f"bert_{length}.so")
        loom_tool.compile_model(args.loom, static_path, static_artifact)
        input_args, feeds = inputs_at(length, args.workdir)
        vm_ms, static_ms, ort_ms, bounded_ms = [], [], [], []
        for _ in range(args.rounds):
            vm_ms.append(time_loom(args.loom, vm_artifact, input_args, args.threads, args.repeat,
                                   args.warmup))
            if args.bounded:
                bounded_ms.append(time_loom(args.loom, bounded_artifact, input_args, args.threads,
                                            args.repeat, args.warmup))
            static_ms.append(time_loom(args.loom, static_artifact, input_args, args.threads,
                                       args.repeat, args.warmup))
            ort_ms.append(time_onnxruntime(dynamic_path, feeds, args.threads, args.repeat,
                                           args.warmup))
        vm, static, ort = (statistics.median(x) for x in (vm_ms, static_ms, ort_ms))
        print(f"sequence={length} bucket={'yes' if length in buckets else 'no'} "
              f"threads={args.threads} vm_ms={vm:.2f} static_ms={static:.2f} "
              f"onnxruntime_ms={ort:.2f} vm/ort={vm / ort:.2f} vm/static={vm / static:.2f}" +
              (f" bounded_ms={statistics.median(bounded_ms):.2f} "
               f"bounded/vm={statistics.median(bounded_ms) / vm:.2f}" if args.bounded else ""),
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
