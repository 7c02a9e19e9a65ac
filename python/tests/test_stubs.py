"""The package ships type stubs: mypy checks code that uses it (and catches misuse)."""
import os
import subprocess
import sys
import textwrap

import pytest

import loom

PACKAGE = os.path.dirname(loom.__file__)


def test_every_submodule_has_stubs():
    stubs = os.path.join(PACKAGE, "_loom")
    for module in ("__init__", "nd", "runtime", "te", "tir", "arith", "build"):
        assert os.path.exists(os.path.join(stubs, module + ".pyi")), module
    assert os.path.exists(os.path.join(PACKAGE, "py.typed"))
    nd_stub = open(os.path.join(stubs, "nd.pyi")).read()
    assert "def from_dlpack(" in nd_stub and "def __dlpack__(" in nd_stub


def mypy(tmp_path, source):
    path = tmp_path / "snippet.py"
    path.write_text(textwrap.dedent(source))
    env = dict(os.environ, MYPYPATH=os.path.dirname(PACKAGE))
    return subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir",
                           str(tmp_path / "cache"), "--follow-imports=silent",
                           "--ignore-missing-imports", str(path)],
                          capture_output=True, text=True, env=env, timeout=300)


def test_mypy_accepts_correct_use_and_rejects_misuse(tmp_path):
    pytest.importorskip("mypy")
    good = mypy(tmp_path, """
        import loom
        a: loom.nd.NDArray = loom.nd.empty((2, 3), "float32")
        shape: tuple = a.shape
        model: loom.Model = loom.load("model.so")
        spec: loom.TensorSpec = model.inputs[0]
        result: loom.BenchmarkResult = model.benchmark(repeat=3)
        median: float = result.median_ms
    """)
    assert good.returncode == 0, good.stdout + good.stderr
    bad = mypy(tmp_path, """
        import loom
        a = loom.nd.empty((2, 3), dtype=3)
        n: int = loom.nd.from_dlpack(a).dtype
        loom.load("model.so").benchmark(repeat="many")
    """)
    assert bad.returncode != 0
    assert 'Argument "dtype" to "empty" has incompatible type "int"' in bad.stdout, bad.stdout
    assert "Incompatible types in assignment" in bad.stdout
    assert 'Argument "repeat" to "benchmark" of "Model"' in bad.stdout
