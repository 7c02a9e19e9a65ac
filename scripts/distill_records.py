#!/usr/bin/env python3
"""Keeps the fastest successful record of each workload of tuning records (JSON lines from
`loom tune`): what Loom ships in src/autotune/records/ (one file per benchmark model).

    python3 scripts/distill_records.py tune.jsonl > src/autotune/records/resnet50.jsonl
"""
import json
import statistics
import sys


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
                key = (record["workload"]["template"], tuple(record["workload"]["args"]),
                       record["target"]["kind"], tuple(record["target"]["features"]))
                cost = statistics.median(record["costs"])
                if key not in best or cost < best[key][0]:
                    best[key] = (cost, json.dumps(record, separators=(",", ":")))
    for _, line in sorted(best.values(), key=lambda item: item[1]):
        print(line)


if __name__ == "__main__":
    main(sys.argv[1:])
