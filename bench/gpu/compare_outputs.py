#!/usr/bin/env python3
"""compare_outputs.py GOT_DIR EXPECTED_DIR: every expected .npy against the file of the same
name `loom run --output-dir` wrote, with check_model.py's float32 tolerance
(max|got - expected| <= 1e-4 * max|expected| + 1e-5). Exit status 1 on any mismatch."""

import os
import sys

import numpy as np


def main():
    got_dir, expected_dir = sys.argv[1], sys.argv[2]
    ok = True
    for file in sorted(os.listdir(expected_dir)):
        expected = np.load(os.path.join(expected_dir, file))
        got_path = os.path.join(got_dir, file)
        if not os.path.exists(got_path):
            print(f"FAIL   {file}: loom wrote no such output")
            ok = False
            continue
        got = np.load(got_path)
        diff = float(np.abs(got.astype(np.float64) - expected).max())
        bound = 1e-4 * float(np.abs(expected).max()) + 1e-5
        passed = got.shape == expected.shape and diff <= bound
        ok &= passed
        print(f"{'PASS' if passed else 'FAIL'}   {file}: max|diff|={diff:.3g} bound={bound:.3g}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
