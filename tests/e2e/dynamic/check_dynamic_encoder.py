#!/usr/bin/env python3
"""A transformer encoder whose sequence length is symbolic, compiled once by `loom compile`
(for the virtual machine) and run by `loom run` at many lengths, with and without padding in
the attention mask, against ONNX Runtime on the same model and inputs; the same compiled
with dynamic buckets (kernels specialized for two of the lengths, the general ones for the
rest) and a declared constraint; and the lengths the signature or the constraint refuses.

Usage: check_dynamic_encoder.py --loom PATH --workdir DIR
Exit status: 0 pass, 1 fail, 77 skipped (the Python environment lacks a package).
"""

import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
sys.path.insert(0, os.path.join(REPO, "python"))

from loom_models import environment  # noqa: E402

environment.require("numpy", "onnx", "onnxruntime")

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime  # noqa: E402

from loom_models import bert_encoder, loom_tool  # noqa: E402

RELATIVE_TOLERANCE = 1e-4
ABSOLUTE_TOLERANCE = 1e-5
LENGTHS = (1, 7, 16, 33, 64)
BUCKETS = (16, 33)


def main():
    args = loom_tool.end_to_end_arguments(__doc__)
    config = bert_encoder.Config(layers=2, hidden=64, heads=4, ffn=128, dynamic=True)
    model_path = os.path.join(args.workdir, "encoder.onnx")
    onnx.save(bert_encoder.build(config, seed=3), model_path)
    artifact = os.path.join(args.workdir, "encoder.so")
    loom_tool.compile_model(args.loom, model_path, artifact)
    bucketed = os.path.join(args.workdir, "encoder_buckets.so")
    loom_tool.compile_model(
        args.loom, model_path, bucketed,
        extra_args=["--dynamic-buckets", "sequence=" + ",".join(str(b) for b in BUCKETS),
                    "--constraint", f"sequence <= {max(LENGTHS)}"])
    session = onnxruntime.InferenceSession(model_path, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    failures = 0
    for length in LENGTHS:
        for attended in sorted({length, max(1, length - length // 3)}):
            inputs = {"hidden_states": rng.standard_normal((1, length, 64), dtype=np.float32),
                      "attention_mask": bert_encoder.attention_mask(length, attended)}
            want = session.run(None, inputs)[0]
            for path, kind in ((artifact, "general"), (bucketed, "buckets")):
                g = loom_tool.run_model(args.loom, path, inputs, args.workdir)["last_hidden_state"]
                error = float(np.max(np.abs(g - want))) if g.shape == want.shape else float("inf")
                bound = RELATIVE_TOLERANCE * float(np.max(np.abs(want))) + ABSOLUTE_TOLERANCE
                ok = g.shape == want.shape and error <= bound
                failures += not ok
                print(f"{'ok  ' if ok else 'FAIL'} {kind} sequence {length:3d} attended "
                      f"{attended:3d}: shape {list(g.shape)}, max|loom - ort| = {error:.3g} "
                      f"(bound {bound:.3g})")
    # `loom inspect` lists each program's kernels under its condition, and the constraint.
    listing = subprocess.run([args.loom, "inspect", bucketed], capture_output=True, text=True,
                             check=True).stdout
    for expected in [f"when (sequence == {b}):" for b in BUCKETS] + [
            f"constraint: sequence <= {max(LENGTHS)}", "otherwise:",
            "float32 (1, sequence, 64)", "slots (tensors whose sizes have bounds)"]:
        ok = expected in listing
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} loom inspect shows '{expected}'")
    # Inputs whose lengths disagree, or break the constraint, are refused before anything runs.
    longest = max(LENGTHS) + 1
    refused = [(artifact, 8, 9, "inputs sharing a size variable must agree"),
               (bucketed, longest, longest,
                f"is sequence = {longest}, but the model was compiled for sequence <= "
                f"{max(LENGTHS)} only")]
    for path, length, mask_length, expected in refused:
        inputs = {"hidden_states": rng.standard_normal((1, length, 64), dtype=np.float32),
                  "attention_mask": bert_encoder.attention_mask(mask_length, mask_length)}
        try:
            loom_tool.run_model(args.loom, path, inputs, args.workdir)
            print(f"FAIL lengths {length} and {mask_length} ran")
            failures += 1
        except loom_tool.LoomError as error:
            ok = expected in str(error)
            failures += not ok
            print(f"{'ok  ' if ok else 'FAIL'} lengths {length} and {mask_length} refused: "
                  f"{str(error).splitlines()[-1]}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
