"""Drives the `loom` command-line tool: compile, run and bench, as a user would.

Each call runs the binary in a child process; a failure raises LoomError carrying the
command and what it printed, so a caller's report shows Loom's own message.
"""

import os
import re
import subprocess
import tempfile
import time

import numpy as np


class LoomError(RuntimeError):
    pass


def _run(command, timeout=None):
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise LoomError(f"`{' '.join(command)}` ran past {timeout} s") from None
    if result.returncode != 0:
        raise LoomError(f"`{' '.join(command)}` exited with {result.returncode}:\n"
                        f"{result.stdout}{result.stderr}".rstrip())
    return result


def compile_model(loom, model_path, artifact_path, opt_level=None, input_shapes=None,
                  timeout=None, extra_args=()):
    """Runs `loom compile`; returns its wall time in seconds. `input_shapes` maps input
    names to shapes for symbolic dimensions; `extra_args` go on the command line as given
    (`--target`, `--executor`, ...)."""
    command = [loom, "compile", model_path, "-o", artifact_path, *extra_args]
    if opt_level is not None:
        command += ["--opt-level", str(opt_level)]
    for name, shape in (input_shapes or {}).items():
        command += ["--input-shape", f"{name}={'x'.join(str(d) for d in shape)}"]
    start = time.perf_counter()
    _run(command, timeout)
    return time.perf_counter() - start


def run_model(loom, artifact_path, inputs, workdir, timeout=None, extra_args=()):
    """Runs `loom run` on `inputs` (name -> array, saved as .npy under `workdir`); returns
    the outputs it wrote, by output name. `loom` is the binary, or a command that runs it
    (an emulator and its arguments first); `extra_args` go on `loom run`'s command line as
    given (`--rpc HOST:PORT`, `--threads`, ...)."""
    input_dir = os.path.join(workdir, "inputs")
    output_dir = os.path.join(workdir, "outputs")
    os.makedirs(input_dir, exist_ok=True)
    os.makedirs(output_dir, exist_ok=True)
    for stale in os.listdir(output_dir):
        os.remove(os.path.join(output_dir, stale))
    command = [*([loom] if isinstance(loom, str) else loom), "run", artifact_path,
               *extra_args, "--output-dir", output_dir]
    for name, array in inputs.items():
        path = os.path.join(input_dir, f"{name}.npy")
        np.save(path, array)
        command += ["--input", f"{name}={path}"]
    _run(command, timeout)
    return {f[:-len(".npy")]: np.load(os.path.join(output_dir, f))
            for f in sorted(os.listdir(output_dir)) if f.endswith(".npy")}


_BENCH_FIELD = re.compile(r"(\w+)=([0-9.]+)")


def parse_bench_line(text):
    """{'median_ms': ..., 'min_ms': ..., ...} from the line `loom bench` prints."""
    for line in text.splitlines():
        if line.startswith("median_ms="):
            return {key: float(value) for key, value in _BENCH_FIELD.findall(line)}
    raise LoomError(f"no 'median_ms=...' line in the benchmark's output:\n{text}")


def _peak_rss_kb(pid):
    """The process's VmHWM (peak resident set of its address space) in kB, or None once
    it has exited."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def measure_child(command, timeout=None, env=None):
    """Runs `command`; returns (its stdout, its peak resident memory in MiB) or raises
    LoomError.

    The peak is the child's VmHWM, read every few milliseconds while it runs. Its rusage
    (ru_maxrss) would not do: Linux carries the high-water mark of the address space a
    process replaces at exec into ru_maxrss, and a child forked or vforked from this Python
    process starts from this process's whole footprint."""
    peak_kb = 0
    with tempfile.TemporaryFile("w+") as stdout, tempfile.TemporaryFile("w+") as stderr:
        process = subprocess.Popen(command, stdout=stdout, stderr=stderr, text=True, env=env)
        deadline = None if timeout is None else time.monotonic() + timeout
        while process.poll() is None:
            peak_kb = max(peak_kb, _peak_rss_kb(process.pid) or 0)
            if deadline is not None and time.monotonic() > deadline:
                process.kill()
                process.wait()
                raise LoomError(f"`{' '.join(command)}` ran past {timeout} s")
            time.sleep(0.005)
        stdout.seek(0)
        stderr.seek(0)
        out, err = stdout.read(), stderr.read()
    if process.returncode != 0:
        raise LoomError(f"`{' '.join(command)}` exited with {process.returncode}:\n"
                        f"{out}{err}".rstrip())
    if peak_kb == 0:
        raise LoomError(f"`{' '.join(command)}` ended before its memory could be read")
    return out, peak_kb / 1024.0


def bench(loom, artifact_path, threads, repeat, warmup, timeout=None):
    """Runs `loom bench`; returns (its figures as parse_bench_line gives them, its peak
    resident memory in MiB)."""
    out, rss_mb = measure_child([loom, "bench", artifact_path, "--threads", str(threads),
                                 "--repeat", str(repeat), "--warmup", str(warmup)], timeout)
    return parse_bench_line(out), rss_mb


def end_to_end_arguments(doc):
    """The arguments every end-to-end check takes, --loom (the binary) and --workdir (made
    if missing), parsed with the check's docstring as its description."""
    import argparse
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--loom", required=True)
    parser.add_argument("--workdir", required=True)
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    return args
