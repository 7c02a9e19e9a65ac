#!/usr/bin/env python3
"""Keeps one record per workload of tuning records (JSON lines from `loom tune`): the point
`loom compile` would take, ranked as autotune::RankMeasuredConfigs ranks them (points
measured more than once, by a tuning run's confirmation, by the median of their runs, ahead
of points measured once), among those in the default's channel blocks (what `loom compile`
takes, keeping layouts). The record kept is the point's run at its median. This is what Loom
ships in src/autotune/records/ (one file per benchmark model). The default blocks are
computed here as topi/x86's DefaultConv2DNCHWcConfig computes them; the test
ShippedRecords.AreThisVersionsAndFitTheirTemplates checks that they agree.

    python3 scripts/distill_records.py tune.jsonl > src/autotune/records/resnet50.jsonl
"""
import json
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


def upper_median(values):
    return sorted(values)[len(values) // 2]


def main(paths):
    runs = {}  # (template, args, target kind, features) -> {config: [(cost, line)]}
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
                config = json.dumps(record["config"], sort_keys=True)
                cost = upper_median(record["costs"])
                line = json.dumps(record, separators=(",", ":"))
                runs.setdefault(key, {}).setdefault(config, []).append((cost, line))
    kept = []
    for points in runs.values():
        def rank(item):
            measured = item[1]
            return (len(measured) == 1, upper_median([cost for cost, _ in measured]))
        _, measured = min(points.items(), key=rank)
        median = upper_median([cost for cost, _ in measured])
        kept.append(next(line for cost, line in measured if cost == median))
    for line in sorted(kept):
        print(line)


if __name__ == "__main__":
    main(sys.argv[1:])
