#!/usr/bin/env python3
"""Keeps the fastest successful record of each workload of tuning records (JSON lines from
`loom tune`) among those in the default's channel blocks (what `loom compile` takes, keeping
layouts): what Loom ships in src/autotune/records/ (one file per benchmark model). The
default blocks are computed here as topi/x86's DefaultConv2DNCHWcConfig computes them; the
test ShippedRecords.AreThisVersionsAndFitTheirTemplates checks that they agree.

    python3 scripts/distill_records.py tune.jsonl > src/autotune/records/resnet50.jsonl
"""
import json
import statistics
import sys


def largest_divisor_up_to(n, limit):
    return max(d for d in range(1, min(n, limit) + 1) if n % d == 0)


def default_layouts(record):
    """The default's layout knobs of an x86.conv2d workload ({} for other templates)."""
    if record["workload"]["template"] != "x86.conv2d":
        return {}
    n, c, h, w, k, r, s, *_, groups = record["workload"]["args"]
    if groups > 1 and groups == c == k:  # depthwise
        return {"ic_bn": largest_divisor_up_to(c, 16)}
    return {"ic_bn": largest_divisor_up_to(c // groups, 16),
            "oc_bn": largest_divisor_up_to(k // groups, 16)}


def main(paths):
    best = {}  # (template, args, target kind, features) -> (cost, line)
    for path in paths:
        with open(path) as f:
            for line in f:
                if not line.strip():
                    continue
                record = json.loads(line)
                if record["error"] != "none" or not record["costs"]:
                    continue
                if any(record["config"].get(knob) != value
                       for knob, value in default_layouts(record).items()):
                    continue
                key = (record["workload"]["template"], tuple(record["workload"]["args"]),
                       record["target"]["kind"], tuple(record["target"]["features"]))
                cost = statistics.median(record["costs"])
                if key not in best or cost < best[key][0]:
                    best[key] = (cost, json.dumps(record, separators=(",", ":")))
    for _, line in sorted(best.values(), key=lambda item: item[1]):
        print(line)


if __name__ == "__main__":
    main(sys.argv[1:])
