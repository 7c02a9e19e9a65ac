#!/usr/bin/env python3
"""Draws loom-bench-tuning's CSV (best GFLOP/s after each trial, per task, tuner and seed) as
one panel per task, and prints per task and tuner the trials its mean curve (over seeds)
needs to reach 95% of the best point any tuner found, and the best each tuner found (mean
over seeds), as a Markdown table.

    build/bench/loom-bench-tuning --trials 128 --seeds 2 > curves.csv
    python3 bench/tuning/plot_curves.py curves.csv bench/tuning/curves.png
"""
import csv
import statistics
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(csv_path, png_path):
    runs = defaultdict(list)  # (task, tuner, seed) -> [gflops after trial 1, 2, ...]
    with open(csv_path) as f:
        for row in csv.DictReader(f):
            runs[(row["task"], row["tuner"], int(row["seed"]))].append(float(row["gflops"]))
    tasks = sorted({task for task, _, _ in runs})
    tuners = ["xgb", "random", "grid"]
    figure, axes = plt.subplots(1, len(tasks), figsize=(5 * len(tasks), 4), squeeze=False)
    print("| task | best GFLOP/s | " + " | ".join(f"{t}: trials to 95% (best)" for t in tuners)
          + " |")
    print("|---|---:|" + "---:|" * len(tuners))
    for axis, task in zip(axes[0], tasks):
        best = max(curve[-1] for (t, _, _), curve in runs.items() if t == task)
        cells = []
        for tuner, color in zip(tuners, ["tab:red", "tab:blue", "tab:gray"]):
            curves = [curve for (t, k, _), curve in sorted(runs.items()) if t == task and k == tuner]
            for seed, curve in enumerate(curves):
                axis.plot(range(1, len(curve) + 1), curve, color=color, alpha=0.8,
                          label=tuner if seed == 0 else None)
            length = min(len(curve) for curve in curves)
            mean = [statistics.mean(curve[i] for curve in curves) for i in range(length)]
            reached = [i + 1 for i, g in enumerate(mean) if g >= 0.95 * best]
            trials = f"{reached[0]}" if reached else f"> {length}"
            cells.append(f"{trials} ({mean[-1]:.1f})")
        print(f"| {task} | {best:.1f} | " + " | ".join(cells) + " |")
        axis.axhline(0.95 * best, color="black", linestyle=":", linewidth=1)
        axis.set_title(task, fontsize=9)
        axis.set_xlabel("trials")
        axis.set_ylabel("best GFLOP/s")
        axis.legend()
    figure.tight_layout()
    figure.savefig(png_path, dpi=110)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
