"""examples/python/gemm_schedule.py: the schedule API against the C++ results.

With `64 --print-only` the Python port prints exactly what examples/gemm_schedule.cc prints
(the loop nest of every step, built through loom.te), and run fully it computes every step
correctly with the TIR interpreter and with loom.build.
"""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

SOURCE_DIR = Path(os.environ.get("LOOM_SOURCE_DIR", Path(__file__).resolve().parents[2]))
BUILD_DIR = Path(os.environ.get("LOOM_BUILD_DIR", "/work/main/build"))
EXAMPLE = SOURCE_DIR / "examples" / "python" / "gemm_schedule.py"
CPP_EXAMPLE = BUILD_DIR / "examples" / "gemm_schedule"


def run_python(*args):
    return subprocess.run([sys.executable, str(EXAMPLE), *args], capture_output=True, text=True,
                          timeout=600, env=os.environ.copy())


def steps(text):
    """{step number: (title, printed IR)} of an example's output."""
    parts = re.split(r"^==== Step (\d+): (.*)$", text, flags=re.M)
    return {int(parts[i]): (parts[i + 1], parts[i + 2]) for i in range(1, len(parts), 3)}


@pytest.mark.skipif(not CPP_EXAMPLE.exists(), reason=f"{CPP_EXAMPLE} is not built")
def test_print_only_output_is_the_cpp_examples():
    cpp = subprocess.run([str(CPP_EXAMPLE), "64", "--print-only"], capture_output=True,
                         text=True, timeout=600, check=True).stdout
    py = run_python("64", "--print-only")
    assert py.returncode == 0, py.stderr
    cpp_steps, py_steps = steps(cpp), steps(py.stdout)
    assert sorted(py_steps) == list(range(6)) and sorted(cpp_steps) == list(range(6))
    for index in range(6):
        assert py_steps[index] == cpp_steps[index], f"step {index} differs"
    assert py.stdout == cpp


def test_every_step_runs_and_matches_numpy():
    result = run_python("64")
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert out.count("(TIR interpreter)") == 6 and out.count("(loom.build, llvm)") == 6
    assert "MISMATCH" not in out
    assert "Every step computes the same C." in out


def test_usage_errors():
    for args in (["48"], ["abc"], ["0"]):
        result = run_python(*args)
        assert result.returncode == 2 and "usage: gemm_schedule.py" in result.stderr
