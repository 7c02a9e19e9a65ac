"""ONNX Runtime as the reference: sessions configured alike everywhere, and timing.

`python -m loom_models.reference model.onnx --threads N --repeat N --warmup N` times the
model in a process of its own (so that its peak memory can be read alone) and prints one
line in the form of `loom bench`: median_ms=... min_ms=... max_ms=... mean_ms=... repeat=N
threads=N. With `--runtime openvino` it times OpenVINO's CPU plugin instead (float32
inference forced: on CPUs with bfloat16 units it would otherwise run in bfloat16).
"""

import argparse
import statistics
import sys
import time

import numpy as np
import onnxruntime


def session(model_path, threads=None):
    """A CPU session with every graph optimization, run sequentially; `threads` sets the
    intra-op pool (None: ONNX Runtime's default)."""
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    options.inter_op_num_threads = 1
    if threads is not None:
        options.intra_op_num_threads = threads
    return onnxruntime.InferenceSession(model_path, options,
                                        providers=["CPUExecutionProvider"])


def run(model_path, inputs, threads=None):
    """The model's outputs on `inputs` (name -> array), by output name."""
    sess = session(model_path, threads)
    names = [output.name for output in sess.get_outputs()]
    return dict(zip(names, sess.run(names, inputs)))


_NUMPY_DTYPES = {"tensor(float)": np.float32, "tensor(float16)": np.float16,
                 "tensor(int64)": np.int64,
                 "tensor(int32)": np.int32, "tensor(bool)": np.bool_}


def timing_inputs(sess, seed=0):
    """Inputs for timing any model from its declared inputs: normal floats, integer ones
    (a mask that attends everywhere, index 1). Symbolic dimensions are an error."""
    rng = np.random.default_rng(seed)
    inputs = {}
    for value in sess.get_inputs():
        if not all(isinstance(d, int) for d in value.shape):
            raise ValueError(f"input '{value.name}' has a symbolic shape {value.shape}; "
                             "time a model with static input shapes")
        if value.type not in _NUMPY_DTYPES:
            raise ValueError(f"input '{value.name}' has type {value.type}; "
                             f"supported: {sorted(_NUMPY_DTYPES)}")
        dtype = _NUMPY_DTYPES[value.type]
        if dtype in (np.float32, np.float16):
            inputs[value.name] = rng.standard_normal(value.shape, dtype=np.float32).astype(dtype)
        else:
            inputs[value.name] = np.ones(value.shape, dtype=dtype)
    return inputs


def time_runs(model_path, threads, repeat, warmup, inputs=None):
    """Milliseconds of each of `repeat` runs after `warmup` untimed ones."""
    sess = session(model_path, threads)
    if inputs is None:
        inputs = timing_inputs(sess)
    for _ in range(warmup):
        sess.run(None, inputs)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        sess.run(None, inputs)
        times.append((time.perf_counter() - start) * 1e3)
    return times


def time_openvino_runs(model_path, threads, repeat, warmup, precision="f32"):
    """Milliseconds of each of `repeat` OpenVINO runs after `warmup` untimed ones: the CPU
    plugin, one stream, `threads` inference threads, `precision` (its inference precision
    hint: f32, or bf16, its default on CPUs with AMX), latency hint."""
    import openvino  # a benchmark baseline only: imported when asked for

    inputs = timing_inputs(session(model_path, 1))
    core = openvino.Core()
    compiled = core.compile_model(core.read_model(model_path), "CPU", {
        "INFERENCE_NUM_THREADS": threads, "NUM_STREAMS": 1, "PERFORMANCE_HINT": "LATENCY",
        "INFERENCE_PRECISION_HINT": precision})
    request = compiled.create_infer_request()
    for _ in range(warmup):
        request.infer(inputs)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        request.infer(inputs)
        times.append((time.perf_counter() - start) * 1e3)
    return times


def summary_line(times, threads):
    return (f"median_ms={statistics.median(times):.3f} min_ms={min(times):.3f} "
            f"max_ms={max(times):.3f} mean_ms={statistics.fmean(times):.3f} "
            f"repeat={len(times)} threads={threads}")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m loom_models.reference",
                                     description="Times a model in ONNX Runtime (or OpenVINO).")
    parser.add_argument("model")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--runtime", choices=["onnxruntime", "openvino"], default="onnxruntime")
    parser.add_argument("--precision", choices=["f32", "bf16"], default="f32",
                        help="OpenVINO's inference precision (ONNX Runtime's is float32)")
    args = parser.parse_args(argv)
    if args.threads < 1 or args.repeat < 1 or args.warmup < 0:
        parser.error("--threads and --repeat must be at least 1, --warmup at least 0")
    if args.runtime == "openvino":
        times = time_openvino_runs(args.model, args.threads, args.repeat, args.warmup,
                                   args.precision)
    else:
        times = time_runs(args.model, args.threads, args.repeat, args.warmup)
    print(summary_line(times, args.threads), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
