#!/usr/bin/env bash
# The wheel as users get it: built like `pip install ./python` (scikit-build-core, the
# project's CMake build, no build isolation: nothing downloads), installed into a folder
# outside the repository, then a model compiled and run and a kernel built from there, with
# the libraries the wheel carries (loom/lib, found through $ORIGIN).
#   check_wheel.sh REPO BUILD_DIR PYTHON
set -euo pipefail
repo=$1 build=$2 python=$3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$python" -m pip wheel --quiet --disable-pip-version-check --no-build-isolation --no-deps \
  -w "$out/wheel" --config-settings=build-dir="$build/wheel" "$repo/python"
"$python" -m pip install --quiet --disable-pip-version-check --no-deps --target "$out/site" \
  "$out"/wheel/loom-*.whl
cd "$out"
PYTHONPATH="$out/site" LOOM_EXPECTED_SITE="$out/site" "$python" - <<'PY'
import os

import numpy as np
from onnx import TensorProto, helper

import loom
from loom import te

site = os.environ["LOOM_EXPECTED_SITE"]
assert loom.__file__.startswith(site), loom.__file__
assert os.path.exists(os.path.join(site, "loom", "_loom", "te.pyi"))
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
proto = helper.make_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y]),
                          opset_imports=[helper.make_opsetid("", 17)])
value = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
np.testing.assert_array_equal(loom.compile(proto)(value)["y"], np.maximum(value, 0))
A = te.placeholder((64,), name="A")
B = te.compute((64,), lambda i: A[i] * 2 + 1, name="B")
kernel = loom.build(te.create_schedule(B.op), [A, B])
a = loom.nd.array(np.arange(64, dtype=np.float32))
b = loom.nd.empty((64,), "float32")
kernel(a, b)
np.testing.assert_array_equal(b.numpy(), np.arange(64, dtype=np.float32) * 2 + 1)
print(f"wheel ok: loom {loom.__version__} from {loom.__file__}")
PY
