"""End-to-end test of `loom compile`, `tune`, `run`, `bench`, `inspect` and `rpc` on a small ONNX model built
here with onnx.helper (Conv, Relu, GlobalAveragePool, Flatten, Gemm, Softmax; a symbolic
batch dimension; a second output whose name is no file name), checked against ONNX
Runtime, and of each command's error paths: exit status 1, one line "loom: error: ...".

Usage: model_cli_test.py LOOM_BINARY. Exits 77 (skipped) when this Python lacks numpy, onnx
or onnxruntime.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
    import onnx
    import onnxruntime
    from onnx import TensorProto, helper, numpy_helper
except ImportError as error:
    print(f"SKIP: {error}")
    sys.exit(77)

LOOM = sys.argv[1]
FAILURES = []
STAGES = ["import", "graph passes", "lowering", "memory plan", "codegen", "export"]


def check(condition, what):
    if not condition:
        FAILURES.append(what)
        print(f"FAIL: {what}", flush=True)


def loom(*args, env=None):
    result = subprocess.run([LOOM, *args], capture_output=True, text=True, timeout=600,
                            env=None if env is None else {**os.environ, **env})
    return result.returncode, result.stdout, result.stderr


def expect_success(*args):
    status, out, err = loom(*args)
    check(status == 0, f"`loom {' '.join(args)}` exited {status}: {err.strip()}")
    return out, err


def expect_error(name, message, *args, env=None):
    """Exit status 1, nothing on stdout, and stderr one line 'loom: error: ...' containing
    each of `message` (a string or a list)."""
    status, out, err = loom(*args, env=env)
    check(status == 1, f"{name}: exit status {status}, expected 1")
    check(out == "", f"{name}: printed to stdout: {out!r}")
    lines = err.splitlines()
    if env is None:
        check(len(lines) == 1, f"{name}: expected one line on stderr, got {err!r}")
    first = lines[0] if lines else ""
    check(first.startswith("loom: error: "), f"{name}: stderr was {err!r}")
    for part in [message] if isinstance(message, str) else message:
        check(part in first, f"{name}: {part!r} not in {first!r}")
    return err


def build_model(path, dtype=np.float32):
    """A small classifier, stored in `dtype` (float32 or float16)."""
    elem_type = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    rng = np.random.default_rng(0)
    weights = {
        "conv.w": rng.uniform(-0.5, 0.5, (4, 3, 3, 3)).astype(np.float32),
        "conv.b": rng.uniform(-0.1, 0.1, (4,)).astype(np.float32),
        "fc.w": rng.uniform(-0.5, 0.5, (5, 4)).astype(np.float32),
        "fc.b": rng.uniform(-0.1, 0.1, (5,)).astype(np.float32),
    }
    weights = {name: value.astype(dtype) for name, value in weights.items()}
    nodes = [
        helper.make_node("Conv", ["image", "conv.w", "conv.b"], ["conv"], name="conv",
                         pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        helper.make_node("Relu", ["conv"], ["relu"], name="relu"),
        helper.make_node("GlobalAveragePool", ["relu"], ["pool"], name="pool"),
        helper.make_node("Flatten", ["pool"], ["flat"], name="flatten"),
        helper.make_node("Gemm", ["flat", "fc.w", "fc.b"], ["logits/raw:0"], name="fc",
                         transB=1),
        helper.make_node("Softmax", ["logits/raw:0"], ["probs"], name="softmax", axis=1),
    ]
    graph = helper.make_graph(
        nodes, "cli_test",
        [helper.make_tensor_value_info("image", elem_type, ["batch", 3, 8, 8])],
        [helper.make_tensor_value_info("probs", elem_type, ["batch", 5]),
         helper.make_tensor_value_info("logits/raw:0", elem_type, ["batch", 5])],
        [numpy_helper.from_array(value, name) for name, value in weights.items()])
    model = helper.make_model(graph, producer_name="loom-cli-test",
                              opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, path)


def test_compile(tmp, model):
    artifact = os.path.join(tmp, "model.so")
    # The symbolic batch stays symbolic: the model compiles once for the VM (convolutions
    # take a symbolic batch) ...
    vm_artifact = os.path.join(tmp, "model_symbolic_batch.so")
    out, _ = expect_success("compile", model, "-o", vm_artifact, "--quiet")
    check("virtual machine" in out and "Tensor[(batch, 3, 8, 8)" in out,
          f"compile summary of the symbolic batch: {out!r}")
    # ... while the graph executor needs every size bound.
    expect_error("unbound symbolic dimension", ["'image'", "symbolic", "--input-shape"],
                 "compile", model, "-o", artifact, "--executor", "graph")
    check(not os.path.exists(artifact), "a failed compile left an artifact")

    out, err = expect_success("compile", model, "-o", artifact, "--input-shape", "image=2x3x8x8")
    for stage in STAGES:
        check(re.search(rf"^{stage} +[0-9]+\.[0-9]+ s$", err, re.M),
              f"compile progress has no '{stage} <seconds> s' line: {err!r}")
    check(re.search(r"kernel calls .*planned memory .*weights", out) and artifact in out,
          f"compile summary: {out!r}")
    check(os.path.isfile(artifact), "compile wrote no artifact")

    quiet = os.path.join(tmp, "model_o0.so")
    out, err = expect_success("compile", model, "-o", quiet, "--input-shape", "image=2x3x8x8",
                              "--opt-level", "0", "--quiet", "--target", "llvm")
    check(err == "", f"--quiet still printed progress: {err!r}")

    # Another architecture: an AArch64 library is written, and this machine refuses to run it.
    arm = os.path.join(tmp, "model_aarch64.so")
    expect_success("compile", model, "-o", arm, "--input-shape", "image=2x3x8x8", "--quiet",
                   "--target", "aarch64-neon")
    with open(arm, "rb") as f:
        header = f.read(20)
    check(header[:4] == b"\x7fELF" and int.from_bytes(header[18:20], "little") == 183,
          "the aarch64-neon artifact is not an AArch64 ELF library")
    expect_error("running an AArch64 artifact here",
                 ["built for aarch64, and this runtime runs on"], "run", arm)
    # inspect reads the file without loading its code: any architecture's artifact.
    listing, _ = expect_success("inspect", arm)
    check("target: llvm" in listing and "aarch64" in listing and "inputs:" in listing,
          f"inspect of the AArch64 artifact: {listing!r}")

    # Ahead of time, for the micro runtime: C sources in a new folder, named after the model.
    aot = os.path.join(tmp, "model_c")
    out, _ = expect_success("compile", model, "-o", aot, "--input-shape", "image=1x3x8x8",
                            "--quiet", "--target", "c", "--executor", "aot", "--runtime", "crt")
    stem = os.path.basename(model)[:-len(".onnx")]
    for name in (f"{stem}.h", f"{stem}.c", f"{stem}_kernels.c", "loom_crt.h", "loom_crt.c"):
        check(os.path.isfile(os.path.join(aot, name)), f"the AOT export wrote no {name}")
    check(f"entry point {stem}_run" in out and "workspace" in out, f"AOT summary: {out!r}")
    expect_error("aot without crt", "add --runtime crt", "compile", model, "-o", aot,
                 "--executor", "aot")
    expect_error("crt without aot", "add --executor aot", "compile", model, "-o", aot,
                 "--runtime", "crt")
    expect_error("aot for llvm", ["compiled for 'llvm", "whose kernels are not C"], "compile",
                 model, "-o", aot, "--input-shape", "image=1x3x8x8", "--executor", "aot",
                 "--runtime", "crt")
    expect_error("aot name", "'9lives' is not a C identifier", "compile", model, "-o", aot,
                 "--input-shape", "image=1x3x8x8", "--executor", "aot", "--runtime", "crt",
                 "--target", "c", "--name", "9lives")
    return artifact, quiet


def test_tune(tmp, model):
    """`loom tune` on the small model within a few trials, then `loom compile --records`; the
    tuned artifact is checked against ONNX Runtime by test_run."""
    records = os.path.join(tmp, "tune.jsonl")
    shape = ["--input-shape", "image=2x3x8x8"]
    expect_error("tiny budget", "a tuning budget of 5 s is smaller than one measurement",
                 "tune", model, "--budget", "5s", "--records", records, *shape)
    expect_error("unreadable budget", "--budget 'soon': expected a positive time", "tune", model,
                 "--budget", "soon", "--records", records, *shape)
    out, err = expect_success("tune", model, "--budget", "2m", "--records", records,
                              "--trials-per-task", "4", "--batch", "2", *shape)
    check("tuned 2 tasks" in out and "GFLOP/s" in out, f"tune summary: {out!r}")
    check(re.search(r"^\[ 1/2\] conv2d n=2 c=3 h=8 w=8 k=4 .* trials +[0-9]+/", err, re.M),
          f"tune progress: {err!r}")
    with open(records) as f:
        lines = f.read().splitlines()
    check(len(lines) >= 8, f"tune wrote {len(lines)} records")
    check(all(json.loads(line)["workload"]["template"] in ("x86.conv2d", "x86.dense")
              for line in lines), "records of unknown templates")

    # Resuming counts what the file holds: every task is at its limit; only the confirmation
    # measures, points the file has.
    def point(line):
        record = json.loads(line)
        return json.dumps([record["workload"], record["config"]], sort_keys=True)

    _, err = expect_success("tune", model, "--budget", "2m", "--records", records,
                            "--trials-per-task", "4", "--resume", *shape)
    check("done: trial limit reached" in err and "confirmed: " in err, f"resumed tune: {err!r}")
    with open(records) as f:
        after = f.read().splitlines()
    known = {point(line) for line in lines}
    check(len(after) > len(lines) and all(point(line) in known for line in after[len(lines):]),
          "a resumed tune measured a new point")
    lines = after

    tuned = os.path.join(tmp, "model_tuned.so")
    _, err = expect_success("compile", model, "-o", tuned, "--records", records, *shape)
    check("records: 2 of 2 tunable kernels tuned (2 from " in err, f"compile --records: {err!r}")
    # A corrupt file: the records before the bad line are used, the line is named.
    corrupt = os.path.join(tmp, "corrupt.jsonl")
    with open(corrupt, "w") as f:
        f.write(lines[0] + "\n{\"workload\": tru\n")
    _, err = expect_success("compile", model, "-o", os.path.join(tmp, "model_corrupt.so"),
                            "--records", corrupt, "--quiet", *shape)
    check(f"{corrupt} line 2: not JSON" in err, f"corrupt records: {err!r}")
    expect_error("missing records", ["tuning records", "does not exist"], "compile", model, "-o",
                 os.path.join(tmp, "x.so"), "--records", os.path.join(tmp, "none.jsonl"), *shape)
    return tuned


def test_run(tmp, model, artifacts):
    image = np.random.default_rng(1).uniform(-1, 1, (2, 3, 8, 8)).astype(np.float32)
    image_path = os.path.join(tmp, "image.npy")
    np.save(image_path, image)
    session = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
    reference = dict(zip(["probs", "logits/raw:0"], session.run(["probs", "logits/raw:0"],
                                                                 {"image": image})))
    files = {"probs": "probs.npy", "logits/raw:0": "logits_raw_0.npy"}
    for artifact in artifacts:
        out_dir = os.path.join(tmp, "out_" + os.path.basename(artifact))
        out, _ = expect_success("run", artifact, "--input", f"image={image_path}",
                                "--output-dir", out_dir, "--threads", "1")
        check(sorted(os.listdir(out_dir)) == sorted(files.values()),
              f"run wrote {sorted(os.listdir(out_dir))}")
        for name, file in files.items():
            check(re.search(rf"^{re.escape(name)}: float32 2x5 \[", out, re.M),
                  f"run does not summarize output '{name}': {out!r}")
            path = os.path.join(out_dir, file)
            if not os.path.exists(path):
                continue
            got, want = np.load(path), reference[name]
            check(got.shape == want.shape and got.dtype == want.dtype,
                  f"{artifact} {name}: {got.dtype}{got.shape} vs {want.dtype}{want.shape}")
            if got.shape == want.shape:
                error = float(np.max(np.abs(got - want)))
                bound = 1e-4 * float(np.max(np.abs(want))) + 1e-5
                check(error <= bound, f"{artifact} {name}: max|loom - ort| = {error} > {bound}")
    return image_path


def test_bench(artifact):
    out, _ = expect_success("bench", artifact, "--repeat", "3", "--warmup", "1",
                            "--threads", "1")
    line = re.fullmatch(r"median_ms=([0-9.]+) min_ms=([0-9.]+) max_ms=([0-9.]+) "
                        r"mean_ms=([0-9.]+) repeat=3 threads=1\n", out)
    check(line is not None, f"bench printed {out!r}")
    if line:
        median, low, high, mean = map(float, line.groups())
        check(low <= median <= high and low <= mean <= high, f"bench figures: {out!r}")
    out, _ = expect_success("bench", artifact, "--repeat", "2", "--profile")
    check(out.startswith("median_ms=") and "per-kernel profile" in out and "fused_" in out,
          f"bench --profile printed {out!r}")


def test_inspect(model, artifact):
    out, _ = expect_success("inspect", model, "--input-shape", "image=2x3x8x8",
                            "--opt-level", "3")
    for text in ["producer 'loom-cli-test'", "opset 13", "float32 2x3x8x8", "probs",
                 "logits/raw:0", "Conv", "Softmax", "operators (6 nodes, 6 types)",
                 "compiled at -O3", "kernels, in execution order", "[conv", "memory plan:"]:
        check(text in out, f"inspect of the ONNX model lacks {text!r}: {out!r}")
    out, _ = expect_success("inspect", artifact)
    for text in ["compiled model\ntarget: llvm", "image", "float32 2x3x8x8", "probs",
                 "float32 2x5", "kernels, in execution order", "[conv", "memory plan:",
                 "weights:"]:
        check(text in out, f"inspect of the compiled model lacks {text!r}: {out!r}")


def test_errors(tmp, model, artifact, image_path):
    missing = os.path.join(tmp, "missing.onnx")
    for command in ["compile", "inspect"]:
        extra = ["-o", os.path.join(tmp, "x.so")] if command == "compile" else []
        expect_error(f"{command} of a missing file", [missing, "does not exist"], command,
                     missing, *extra)
    expect_error("run of a missing file", "does not exist", "run", os.path.join(tmp, "no.so"))

    corrupt = os.path.join(tmp, "corrupt.so")
    with open(corrupt, "wb") as f:
        f.write(b"\x7fELF" + bytes(60))
    expect_error("run of a corrupt .so", corrupt, "run", corrupt, "--input",
                 f"image={image_path}")
    expect_error("inspect of a corrupt .so", corrupt, "inspect", corrupt)
    # One flipped byte of a real artifact: refused before loading, by its digest.
    with open(artifact, "rb") as f:
        data = bytearray(f.read())
    data[len(data) // 2] ^= 0x10
    flipped = os.path.join(tmp, "flipped.so")
    with open(flipped, "wb") as f:
        f.write(bytes(data))
    for command in ("run", "inspect"):
        expect_error(f"{command} of an artifact with a flipped byte",
                     "differs from what was exported", command, flipped)
    expect_error("inspect --opt-level of a .so", "apply to ONNX models", "inspect", artifact,
                 "--opt-level", "1")
    not_onnx = os.path.join(tmp, "text.onnx")
    with open(not_onnx, "w") as f:
        f.write("not a model\n")
    expect_error("compile of a non-ONNX file", not_onnx, "compile", not_onnx, "-o",
                 os.path.join(tmp, "x.so"))

    wrong_shape = os.path.join(tmp, "wrong_shape.npy")
    np.save(wrong_shape, np.zeros((1, 3, 8, 8), np.float32))
    expect_error("wrong input shape", ["'image'", wrong_shape, "2x3x8x8", "1x3x8x8"], "run",
                 artifact, "--input", f"image={wrong_shape}")
    wrong_dtype = os.path.join(tmp, "wrong_dtype.npy")
    np.save(wrong_dtype, np.zeros((2, 3, 8, 8), np.float64))
    expect_error("wrong input dtype", ["'image'", wrong_dtype, "float32", "float64"], "run",
                 artifact, "--input", f"image={wrong_dtype}")
    expect_error("unknown input", ["no input 'picture'", "'image'"], "run", artifact,
                 "--input", f"picture={image_path}")
    expect_error("missing input", ["'image'", "--input image="], "run", artifact)
    expect_error("input file missing", ["--input image", "does not exist"], "run", artifact,
                 "--input", f"image={os.path.join(tmp, 'none.npy')}")
    expect_error("unknown flag", "--bogus", "run", artifact, "--bogus")
    expect_error("compile without -o", "--output", "compile", model)
    expect_error("-o the model itself", "is the model", "compile", model, "-o", model)
    check(open(model, "rb").read(4) != b"\x7fELF", "compile -o MODEL overwrote the model")
    expect_error("--memory-limit too small", ["more than the memory limit of 100 B"],
                 "compile", model, "-o", os.path.join(tmp, "x.so"), "--input-shape",
                 "image=2x3x8x8", "--memory-limit", "100", "-q")
    # An output file planted as a symbolic link is replaced, its target left alone.
    out_dir = os.path.join(tmp, "planted")
    os.makedirs(out_dir, exist_ok=True)
    victim = os.path.join(tmp, "victim.txt")
    with open(victim, "w") as f:
        f.write("keep me")
    os.symlink(victim, os.path.join(out_dir, "probs.npy"))
    expect_success("run", artifact, "--input", f"image={image_path}", "--output-dir", out_dir)
    check(open(victim).read() == "keep me" and
          not os.path.islink(os.path.join(out_dir, "probs.npy")),
          "run followed a symbolic link planted at its output")
    expect_error("bad --input-shape", "image=2xA", "compile", model, "-o",
                 os.path.join(tmp, "x.so"), "--input-shape", "image=2xA")
    expect_error("bad --opt-level", "--opt-level", "compile", model, "-o",
                 os.path.join(tmp, "x.so"), "--opt-level", "4")
    expect_error("bad --threads", "--threads", "bench", artifact, "--threads", "0")
    expect_error("no command", "subcommand")

    # LOOM_BACKTRACE=1 adds the stack of the throw after the error line.
    err = expect_error("backtrace", "wrong_shape.npy", "run", artifact, "--input",
                       f"image={wrong_shape}", env={"LOOM_BACKTRACE": "1"})
    check("backtrace of the throw" in err and "LoadInputs" in err,
          f"LOOM_BACKTRACE=1 printed no backtrace: {err!r}")


def probability_difference(tmp, label, artifact, float_artifact, rng):
    """The largest difference of the probabilities `artifact` and `float_artifact` give for
    one random 2x3x8x8 image (files under tmp named after `label`)."""
    image = os.path.join(tmp, f"{label}_image.npy")
    np.save(image, rng.uniform(-1, 1, (2, 3, 8, 8)).astype(np.float32))
    outputs = []
    for name, path in [("low", artifact), ("float", float_artifact)]:
        out_dir = os.path.join(tmp, f"{label}_{name}")
        expect_success("run", path, "--input", f"image={image}", "--output-dir", out_dir)
        outputs.append(np.load(os.path.join(out_dir, "probs.npy")))
    return float(np.abs(outputs[0] - outputs[1]).max())


def test_quantize(tmp, model):
    """--quantize int8: a report per layer on stderr, an artifact whose outputs stay close to
    the float one's; calibration that does not fit the inputs is an error listing both."""
    rng = np.random.default_rng(3)
    samples = os.path.join(tmp, "calibration.npy")
    np.save(samples, rng.uniform(-1, 1, (4, 2, 3, 8, 8)).astype(np.float32))
    int8 = os.path.join(tmp, "model_int8.so")
    _, err = expect_success("compile", model, "-o", int8, "--input-shape", "image=2x3x8x8",
                            "--quantize", "int8", "--calibration", f"image={samples}")
    check(re.search(r"quantized 2 layers to int8, calibrated on 4 samples", err) and
          re.search(r"conv \(nn.conv2d\): data in \[-0\.9", err) and "fc (nn.dense)" in err,
          f"quantize report: {err!r}")
    float_model = os.path.join(tmp, "model_float.so")
    expect_success("compile", model, "-o", float_model, "--input-shape", "image=2x3x8x8", "-q")
    error = probability_difference(tmp, "quantize", int8, float_model, rng)
    check(error < 0.02, f"int8 probabilities differ from float32 by {error}")
    int8_percentile = os.path.join(tmp, "model_int8_percentile.so")
    _, err = expect_success("compile", model, "-o", int8_percentile, "--input-shape",
                            "image=2x3x8x8", "--quantize", "int8", "--calibration",
                            f"image={samples}", "--calibration-method", "percentile",
                            "--percentile", "99")
    check(re.search(r"conv \(nn.conv2d\): data in \[-0\.9\d*, 0\.9\d*\], quantized over "
                    r"\[-0\.9\d*, 0\.9\d*\]", err), f"percentile quantize report: {err!r}")
    error = probability_difference(tmp, "percentile", int8_percentile, float_model, rng)
    check(error < 0.02, f"int8 (percentile) probabilities differ from float32 by {error}")
    int8_shift = os.path.join(tmp, "model_int8_shift.so")
    _, err = expect_success("compile", model, "-o", int8_shift, "--input-shape",
                            "image=2x3x8x8", "--quantize", "int8", "--calibration",
                            f"image={samples}", "--quantize-scheme", "power-of-two")
    check(re.search(r"quantized 2 layers to int8 with power-of-two scales", err) and
          re.search(r"conv \(nn.conv2d\): data in \[-0\.9\d*, 0\.9\d*\], scale 2\^-6, "
                    r"weight scale 2\^-?\d+", err), f"power-of-two quantize report: {err!r}")
    error = probability_difference(tmp, "shift", int8_shift, float_model, rng)
    check(error < 0.05, f"int8 (power-of-two) probabilities differ from float32 by {error}")

    kept = os.path.join(tmp, "model_int8_kept.so")
    _, err = expect_success("compile", model, "-o", kept, "--input-shape", "image=2x3x8x8",
                            "--quantize", "int8", "--calibration", f"image={samples}",
                            "--keep-float", "fc")
    check(re.search(r"quantized 1 layer to int8", err) and
          "kept in float: fc (named to keep in float)" in err and
          "fc (nn.dense)" not in err, f"--keep-float report: {err!r}")
    _, err = expect_success("compile", model, "-o", kept, "--input-shape", "image=2x3x8x8",
                            "--quantize", "int8", "--calibration", f"image={samples}",
                            "--quantize-every-layer")
    check(re.search(r"quantized 2 layers to int8", err) and "kept in float" not in err,
          f"--quantize-every-layer report: {err!r}")

    x = os.path.join(tmp, "x.so")
    expect_error("keeping an unknown layer in float", ["no layer to quantize is named 'fc2'",
                 "the layers: conv, fc"], "compile", model, "-o", x, "--input-shape",
                 "image=2x3x8x8", "--quantize", "int8", "--calibration", f"image={samples}",
                 "--keep-float", "fc2", "-q")
    expect_error("every layer without quantize", "--quantize-every-layer is for --quantize int8",
                 "compile", model, "-o", x, "--input-shape", "image=2x3x8x8",
                 "--quantize-every-layer")
    expect_error("a scheme without quantize", "--quantize-scheme is for --quantize int8",
                 "compile", model, "-o", x, "--input-shape", "image=2x3x8x8",
                 "--quantize-scheme", "power-of-two")
    expect_error("a global scale without its scheme", "--global-scale is for --quantize-scheme "
                 "power-of-two", "compile", model, "-o", x, "--input-shape", "image=2x3x8x8",
                 "--quantize", "int8", "--calibration", f"image={samples}", "--global-scale", "8")
    expect_error("a global scale not a power of two", "must be a power of two", "compile", model,
                 "-o", x, "--input-shape", "image=2x3x8x8", "--quantize", "int8",
                 "--calibration", f"image={samples}", "--quantize-scheme", "power-of-two",
                 "--global-scale", "6", "-q")
    expect_error("a global scale of 0", "must be a power of two", "compile", model, "-o", x,
                 "--input-shape", "image=2x3x8x8", "--quantize", "int8", "--calibration",
                 f"image={samples}", "--quantize-scheme", "power-of-two", "--global-scale", "0",
                 "-q")
    expect_error("quantize without calibration", "needs --calibration", "compile", model, "-o",
                 x, "--input-shape", "image=2x3x8x8", "--quantize", "int8")
    expect_error("calibration without quantize", "is for --quantize int8", "compile", model,
                 "-o", x, "--input-shape", "image=2x3x8x8", "--calibration", f"image={samples}")
    expect_error("percentile without its method", "--percentile is for --calibration-method "
                 "percentile", "compile", model, "-o", x, "--input-shape", "image=2x3x8x8",
                 "--quantize", "int8", "--calibration", f"image={samples}", "--percentile", "99")
    wrong = os.path.join(tmp, "calibration_wrong.npy")
    np.save(wrong, np.zeros((4, 3, 8, 8), np.float32))
    expect_error("calibration of another shape",
                 ["--calibration image", "4x3x8x8", "takes float32 2x3x8x8"],
                 "compile", model, "-o", x, "--input-shape", "image=2x3x8x8", "--quantize",
                 "int8", "--calibration", f"image={wrong}", "-q")
    expect_error("calibration of an unknown input", ["picture", "image Tensor[(2, 3, 8, 8)"],
                 "compile", model, "-o", x, "--input-shape", "image=2x3x8x8", "--quantize",
                 "int8", "--calibration", f"image={samples}", "--calibration",
                 f"picture={samples}", "-q")


def test_precision(tmp, model, float_artifact):
    """--precision bf16: recorded in the artifact (inspect shows it), its outputs close to the
    float model's (the conv multiplies bfloat16; the dense makes the logits and stays
    float32). A target without bfloat16 kernels says once that it computes by conversion;
    --precision fp16 likewise (CPUs have no float16 product kernels), closer to float32; an
    unknown precision is refused."""
    bf16 = os.path.join(tmp, "model_bf16.so")
    expect_success("compile", model, "-o", bf16, "--input-shape", "image=2x3x8x8",
                   "--precision", "bf16", "-q")
    out, _ = expect_success("inspect", bf16)
    check("\nprecision: bf16\n" in out, f"inspect of the bf16 model: {out!r}")
    out, _ = expect_success("inspect", float_artifact)
    check("\nprecision: float32\n" in out, f"inspect of the float32 model: {out!r}")
    error = probability_difference(tmp, "precision", bf16, float_artifact,
                                   np.random.default_rng(5))
    check(0 < error < 0.01, f"bf16 probabilities differ from float32 by {error}")
    _, err = expect_success("compile", model, "-o", os.path.join(tmp, "model_bf16_avx2.so"),
                            "--input-shape", "image=2x3x8x8", "--precision", "bf16", "-q",
                            "--target", "llvm -mcpu=haswell")
    check(err.count("by conversion") == 1, f"the conversion note: {err!r}")
    # fp16: no float16 product kernels on CPUs (by conversion), closer to float32 than bf16.
    fp16 = os.path.join(tmp, "model_fp16_products.so")
    _, err = expect_success("compile", model, "-o", fp16, "--input-shape", "image=2x3x8x8",
                            "--precision", "fp16", "-q")
    check(err.count("no float16 product kernels") == 1, f"the fp16 conversion note: {err!r}")
    out, _ = expect_success("inspect", fp16)
    check("\nprecision: fp16\n" in out, f"inspect of the fp16 model: {out!r}")
    fp16_error = probability_difference(tmp, "precision_fp16", fp16, float_artifact,
                                        np.random.default_rng(5))
    check(0 < fp16_error < error, f"fp16 probabilities differ from float32 by {fp16_error}, "
          f"bf16's by {error}")
    x = os.path.join(tmp, "x.so")
    status, _, err = loom("compile", model, "-o", x, "--precision", "fp8")
    check(status != 0 and "--precision" in err and "fp8" in err, f"--precision fp8: {err!r}")


def test_float16(tmp, float_artifact):
    """A model stored in float16: float16 inputs and outputs (inspect), run on a float16 image
    (its outputs printed and written as float16, close to the float32 model's), and bench's
    random inputs."""
    model = os.path.join(tmp, "model_fp16.onnx")
    build_model(model, np.float16)
    artifact = os.path.join(tmp, "model_fp16.so")
    expect_success("compile", model, "-o", artifact, "--input-shape", "image=2x3x8x8", "-q")
    out, _ = expect_success("inspect", artifact)
    check("float16 2x3x8x8" in out and "float16 2x5" in out,
          f"inspect of the float16 model: {out!r}")
    image = np.random.default_rng(6).uniform(-1, 1, (2, 3, 8, 8))
    image_path = os.path.join(tmp, "image_fp16.npy")
    np.save(image_path, image.astype(np.float16))
    float_image_path = os.path.join(tmp, "image_fp32.npy")
    np.save(float_image_path, image.astype(np.float16).astype(np.float32))
    probs = []
    for path, image_file, label in [(artifact, image_path, "fp16"),
                                    (float_artifact, float_image_path, "fp32")]:
        out_dir = os.path.join(tmp, f"out_{label}")
        out, _ = expect_success("run", path, "--input", f"image={image_file}", "--output-dir",
                                out_dir)
        probs.append(np.load(os.path.join(out_dir, "probs.npy")))
        if label == "fp16":
            check(re.search(r"^probs: float16 2x5 \[0\.\d+, ", out, re.M),
                  f"run of the float16 model prints its values: {out!r}")
    check(probs[0].dtype == np.float16, f"float16 model's output dtype: {probs[0].dtype}")
    error = float(np.abs(probs[0].astype(np.float32) - probs[1]).max())
    check(error < 2e-3, f"float16 probabilities differ from float32 by {error}")
    out, _ = expect_success("bench", artifact, "--repeat", "2", "--warmup", "1")
    check("median_ms=" in out, f"bench of the float16 model: {out!r}")


def build_sequence_model(path):
    """x [1, seq, 64] -> MatMul, Add, Reshape [0, 0, 4, 16], Transpose, Softmax: a model of a
    symbolic sequence length, for the virtual machine."""
    rng = np.random.default_rng(4)
    initializers = [
        numpy_helper.from_array((rng.standard_normal((64, 64)) * 0.1).astype(np.float32), "w"),
        numpy_helper.from_array(rng.standard_normal(64).astype(np.float32), "b"),
        numpy_helper.from_array(np.array([0, 0, 4, 16], dtype=np.int64), "heads")]
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]),
             helper.make_node("Add", ["m", "b"], ["a"]),
             helper.make_node("Reshape", ["a", "heads"], ["r"]),
             helper.make_node("Transpose", ["r"], ["t"], perm=[0, 2, 1, 3]),
             helper.make_node("Softmax", ["t"], ["y"], axis=-1)]
    graph = helper.make_graph(
        nodes, "sequence", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "seq", 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, "seq", 16])], initializers)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def test_virtual_machine(tmp):
    """A symbolic sequence length: compiled once for the VM, inspected (the signature), run at
    two lengths against ONNX Runtime, benched at a chosen length; and the errors."""
    model = os.path.join(tmp, "sequence.onnx")
    build_sequence_model(model)
    artifact = os.path.join(tmp, "sequence.so")
    out, _ = expect_success("compile", model, "-o", artifact)
    check("virtual machine" in out and "(1, seq, 64)" in out, f"compile said {out!r}")
    out, _ = expect_success("inspect", artifact)
    check("executor: virtual machine" in out and re.search(r"x\s+float32 \(1, seq, 64\)", out),
          f"inspect of the VM model: {out!r}")
    out, _ = expect_success("inspect", model)
    check(re.search(r"x\s+Tensor\[\(1, seq, 64\), float32\]", out),
          f"inspect of the ONNX model shows no symbolic signature: {out!r}")
    session = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
    for length in (5, 33):
        x = np.random.default_rng(length).standard_normal((1, length, 64)).astype(np.float32)
        x_path = os.path.join(tmp, f"x{length}.npy")
        np.save(x_path, x)
        out_dir = os.path.join(tmp, f"vm_out{length}")
        expect_success("run", artifact, "--input", f"x={x_path}", "-o", out_dir)
        got = np.load(os.path.join(out_dir, "y.npy"))
        want = session.run(None, {"x": x})[0]
        check(got.shape == want.shape and np.abs(got - want).max() < 1e-5,
              f"VM at seq={length}: shape {got.shape}, max|diff| "
              f"{np.abs(got - want).max() if got.shape == want.shape else '-'}")
    out, _ = expect_success("bench", artifact, "--input-shape", "x=1x128x64", "--repeat", "3",
                            "--warmup", "1", "--profile")
    check(out.startswith("median_ms=") and "fused_nn_softmax" in out, f"bench said {out!r}")
    expect_error("bench without a size", ["input 'x' has the symbolic shape (1, seq, 64)",
                                          "--input-shape x="], "bench", artifact)
    expect_error("bench at a shape outside the signature",
                 "--input-shape x=1x128x65: input 'x' takes shape (1, seq, 64)",
                 "bench", artifact, "--input-shape", "x=1x128x65")
    wrong = os.path.join(tmp, "wrong.npy")
    np.save(wrong, np.zeros((1, 5, 65), dtype=np.float32))
    expect_error("run outside the signature", "takes shape (1, seq, 64), the file holds 1x5x65",
                 "run", artifact, "--input", f"x={wrong}")
    graph_only = os.path.join(tmp, "graph_only.so")
    expect_error("graph executor with a symbolic input",
                 ["dimension 1 ('seq') is symbolic", "--input-shape x="],
                 "compile", model, "-o", graph_only, "--executor", "graph")
    # A static model on the VM (--executor vm) gives what the graph executor gives.
    static_vm = os.path.join(tmp, "static_vm.so")
    static_graph = os.path.join(tmp, "static_graph.so")
    expect_success("compile", model, "-o", static_vm, "--executor", "vm", "--input-shape",
                   "x=1x7x64", "-q")
    expect_success("compile", model, "-o", static_graph, "--input-shape", "x=1x7x64", "-q")
    x_path = os.path.join(tmp, "x7.npy")
    np.save(x_path, np.random.default_rng(7).standard_normal((1, 7, 64)).astype(np.float32))
    outputs = []
    for artifact_path in (static_vm, static_graph):
        out_dir = artifact_path + ".out"
        expect_success("run", artifact_path, "--input", f"x={x_path}", "-o", out_dir)
        outputs.append(np.load(os.path.join(out_dir, "y.npy")))
    check(np.array_equal(outputs[0], outputs[1]), "the VM and the graph executor differ")


def start_listening(*args):
    """`loom rpc server|tracker ...` on a free port: the process and its HOST:PORT."""
    process = subprocess.Popen([LOOM, "rpc", *args, "--port", "0"], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
    line = process.stdout.readline()
    match = re.search(r"listening on (\S+)$", line)
    if not match:
        process.kill()
        raise RuntimeError(f"loom rpc {args[0]} did not start: {line!r}")
    return process, match.group(1)


def test_remote(tmp, model, artifact, image_path):
    """Remote devices end to end: a tracker and two servers on loopback (two devices of one
    key); run, bench and tune on them, several clients at once, a server that dies, and the
    errors of each command."""
    processes = []
    try:
        tracker, tracker_address = start_listening("tracker")
        processes.append(tracker)
        servers = []
        for _ in range(2):
            server, address = start_listening("server", "--tracker", tracker_address,
                                              "--device-key", "x86-test")
            processes.append(server)
            servers.append((server, address))
        for _ in range(100):
            out, _ = expect_success("rpc", "status", "--tracker", tracker_address)
            if len(re.findall(r"^server x86-test .* free$", out, re.M)) == 2:
                break
            time.sleep(0.05)
        check(re.search(r"^x86-test +2 +0 +0$", out, re.M), f"rpc status: {out!r}")
        out, _ = expect_success("rpc", "info", "--rpc", servers[0][1])
        check("x86_64" in out or "aarch64" in out, f"rpc info: {out!r}")

        # The same outputs as a local run, bit for bit, directly and through the tracker; four
        # clients at once share the two devices.
        local_dir = os.path.join(tmp, "remote_local")
        expect_success("run", artifact, "--input", f"image={image_path}", "-o", local_dir)
        runs = [[LOOM, "run", artifact, "--input", f"image={image_path}", "-o",
                 os.path.join(tmp, f"remote_{i}")] +
                (["--rpc", servers[0][1]] if i == 0 else
                 ["--tracker", tracker_address, "--device-key", "x86-test"])
                for i in range(5)]
        clients = [subprocess.Popen(run, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True) for run in runs]
        for i, client in enumerate(clients):
            out, err = client.communicate(timeout=300)
            check(client.returncode == 0 and "running on 127.0.0.1:" in out,
                  f"remote run {i}: {client.returncode} {err!r}")
            for file in ["probs.npy", "logits_raw_0.npy"]:
                remote_file = os.path.join(tmp, f"remote_{i}", file)
                if os.path.exists(remote_file):
                    check(np.array_equal(np.load(remote_file),
                                         np.load(os.path.join(local_dir, file))),
                          f"remote run {i}: {file} differs from the local run")
                else:
                    check(False, f"remote run {i} wrote no {file}")
        out, _ = expect_success("bench", artifact, "--rpc", servers[1][1], "--repeat", "3",
                                "--threads", "1")
        check(re.fullmatch(r"median_ms=[0-9.]+ min_ms=[0-9.]+ max_ms=[0-9.]+ mean_ms=[0-9.]+ "
                           r"repeat=3 threads=1\n", out), f"remote bench: {out!r}")

        # Tuning measured on the fleet.
        records = os.path.join(tmp, "remote_tune.jsonl")
        out, err = expect_success("tune", model, "--budget", "2m", "--records", records,
                                  "--trials-per-task", "4", "--batch", "2", "--input-shape",
                                  "image=2x3x8x8", "--tracker", tracker_address,
                                  "--device-key", "x86-test")
        check("tuned 2 tasks" in out, f"remote tune: {out!r} {err!r}")
        with open(records) as f:
            check(len(f.read().splitlines()) >= 8, "remote tune wrote too few records")

        # Errors, one line each.
        expect_error("no server", ["cannot connect to 127.0.0.1:1"], "run", artifact, "--input",
                     f"image={image_path}", "--rpc", "127.0.0.1:1")
        expect_error("tracker without key", "--tracker needs --device-key", "run", artifact,
                     "--tracker", tracker_address)
        expect_error("key nobody has", ["has no 'riscv-none' device", "'x86-test': 2 servers"],
                     "run", artifact, "--input", f"image={image_path}", "--tracker",
                     tracker_address, "--device-key", "riscv-none")
        expect_error("remote vta config", "--vta-config configures this machine's VTA", "run",
                     artifact, "--input", f"image={image_path}", "--rpc", servers[0][1],
                     "--vta-config", image_path)
        expect_error("bad address", "expected HOST:PORT", "bench", artifact, "--rpc", "nowhere")
        expect_error("remote profile", "--profile is not available", "bench", artifact,
                     "--rpc", servers[0][1], "--profile")
        expect_error("no tracker", "cannot connect", "rpc", "status", "--tracker",
                     "127.0.0.1:1")
        expect_error("public server without key", "give a shared key", "rpc", "server",
                     "--host", "0.0.0.0")
        expect_error("tune without device key", "--tracker needs --device-key", "tune", model,
                     "--budget", "2m", "--records", records, "--tracker", tracker_address,
                     "--input-shape", "image=2x3x8x8")

        # A server that dies leaves the fleet.
        servers[0][0].kill()
        servers[0][0].wait()
        for _ in range(100):
            out, _ = expect_success("rpc", "status", "--tracker", tracker_address)
            if servers[0][1] not in out:
                break
            time.sleep(0.05)
        check(servers[0][1] not in out and servers[1][1] in out, f"status after a kill: {out!r}")
    finally:
        for process in processes:
            process.kill()
            process.wait()


def test_help():
    for command in ["compile", "tune", "run", "bench", "inspect", "rpc server", "rpc tracker",
                    "rpc status", "rpc info"]:
        out, _ = expect_success(*command.split(), "--help")
        check(f"Usage: loom {command}" in out and f"Example: loom {command}" in out,
              f"loom {command} --help: {out!r}")


def test_runtime_only_executable():
    """run and bench load what a deployment loads: the compiler (LLVM, the ONNX library) is a
    module that only compile and ONNX inspect load."""
    linked = subprocess.run(["ldd", LOOM], capture_output=True, text=True).stdout
    for library in ["libLLVM", "libloom_frontend", "libloom_graph", "libonnx", "libprotobuf"]:
        check(library not in linked, f"loom links {library}: {linked!r}")
    module = os.path.join(os.path.dirname(LOOM), "libloom_cli_compiler.so")
    check(os.path.isfile(module), f"the compiler module {module} is missing")


def main():
    test_runtime_only_executable()
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "model.onnx")
        build_model(model)
        artifacts = test_compile(tmp, model)
        tuned = test_tune(tmp, model)
        image_path = test_run(tmp, model, [*artifacts, tuned])
        test_bench(artifacts[0])
        test_inspect(model, artifacts[0])
        test_errors(tmp, model, artifacts[0], image_path)
        test_quantize(tmp, model)
        test_precision(tmp, model, artifacts[0])
        test_float16(tmp, artifacts[0])
        test_virtual_machine(tmp)
        test_remote(tmp, model, artifacts[0], image_path)
        test_help()
    if FAILURES:
        print(f"{len(FAILURES)} check(s) failed")
        return 1
    print("all loom model command checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
