#!/usr/bin/env python3
"""Turns kiln_bench's JSON output into the tables of docs/performance.md.

    build/default/bench/kiln_bench --benchmark_repetitions=9 \\
        --benchmark_report_aggregates_only=true --benchmark_min_time=0.2 \\
        --benchmark_format=json > bench.json
    python3 bench/report.py bench.json

Uses the median of the repetitions of each benchmark, and prints ns per
tensor at each N, the ratios of the goals, and whether each goal is met.
"""
import json
import sys
from collections import defaultdict

NAMES = ["BM_KilnValidate", "BM_KilnValidateScratch", "BM_KilnValidateShortNames", "BM_SafetensorsSimdjson",
         "BM_SafetensorsNlohmann", "BM_ScanFloor"]


def main(path):
    data = json.load(open(path))
    median = defaultdict(dict)  # name -> n -> ns
    counters = {}
    for b in data["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        name, n = b["run_name"].split("/")
        ns = b["real_time"] * {"ns": 1, "us": 1e3, "ms": 1e6}[b["time_unit"]]
        median[name][int(n)] = ns
        if name == "BM_KilnValidate":
            counters[int(n)] = b
    sizes = sorted(median["BM_KilnValidate"])
    print("| benchmark | " + " | ".join("N = %d" % n for n in sizes) + " |")
    print("|---|" + "---|" * len(sizes))
    for name in NAMES:
        if name in median:
            print("| `%s` | " % name + " | ".join(
                "%.1f ns" % (median[name][n] / n) if n in median[name] else "-"
                for n in sizes) + " |")
    print()
    print("ns per tensor, median of the repetitions. Kiln counters at each N: " + ", ".join(
        "N = %d: %d allocation(s), peak %d bytes, names %s" % (
            n, counters[n]["allocs_per_parse"], counters[n]["peak_heap_bytes"],
            "yes" if counters[n]["named"] else "no") for n in sizes))
    print()
    k = median["BM_KilnValidate"]
    rows = [
        ("simdjson / kiln at N = 10,000", median["BM_SafetensorsSimdjson"][10000] / k[10000], ">= 5"),
        ("simdjson / kiln at N = 100,000", median["BM_SafetensorsSimdjson"][100000] / k[100000], ">= 4"),
        ("nlohmann / kiln at N = 10,000", median["BM_SafetensorsNlohmann"][10000] / k[10000], ">= 50"),
        ("kiln / floor at N = 10,000", k[10000] / median["BM_ScanFloor"][10000], "<= 4"),
        ("kiln / floor at N = 100,000", k[100000] / median["BM_ScanFloor"][100000], "<= 6"),
        ("kiln ns/tensor N = 100,000 over N = 1,000", (k[100000] / 100000) / (k[1000] / 1000), "<= 2"),
    ]
    print("| goal | measured | target | met |")
    print("|---|---|---|---|")
    for label, value, target in rows:
        op, bound = target.split()
        ok = value >= float(bound) if op == ">=" else value <= float(bound)
        print("| %s | %.2f | %s | %s |" % (label, value, target, "yes" if ok else "**no**"))


if __name__ == "__main__":
    main(sys.argv[1])
