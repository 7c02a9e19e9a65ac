"""The Python walk-throughs of examples/python/ run as users run them."""
import os
import subprocess
import sys

from conftest import REPO


def run_example(name, *args):
    env = dict(os.environ)
    return subprocess.run([sys.executable, os.path.join(REPO, "examples", "python", name), *args],
                          capture_output=True, text=True, env=env, timeout=600)


def test_compile_and_run_walkthrough(tmp_path):
    result = run_example("compile_and_run.py", "--workdir", str(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "every layer agrees" in result.stdout and result.stdout.rstrip().endswith("ok")
    assert "output shares memory with the torch tensor: True" in result.stdout
    assert (tmp_path / "net.so").exists()
