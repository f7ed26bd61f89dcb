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
    names = {}  # (n, kind) -> ns per tensor, BM_KilnNames
    counters = {}
    scratch_allocs = {}
    others = {}  # run_name -> ns per run: benchmarks outside the tables below
    for b in data["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        parts = b["run_name"].split("/")
        ns = b["real_time"] * {"ns": 1, "us": 1e3, "ms": 1e6}[b["time_unit"]]
        if parts[0] == "BM_KilnNames":
            n, kind = int(parts[1]), int(parts[2])
            names[(n, kind)] = ns / n
            continue
        if len(parts) != 2 or parts[0] not in NAMES:
            others[b["run_name"]] = ns
            continue
        name, n = parts
        median[name][int(n)] = ns
        if name == "BM_KilnValidate":
            counters[int(n)] = b
        if name == "BM_KilnValidateScratch":
            scratch_allocs[int(n)] = b["allocs_per_parse"]
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
    if names:
        print("| names (BM_KilnNames) | unnamed | named | named / unnamed |")
        print("|---|---|---|---|")
        for n, kind, label in ((10000, 1, "10,000 short names"), (1500, 2, "1,500 realistic names")):
            print("| %s | %.1f ns | %.1f ns | %.2f |" % (label, names[(n, 0)], names[(n, kind)],
                                                      names[(n, kind)] / names[(n, 0)]))
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
    if names:
        rows += [
            ("named / unnamed, 10,000 short names", names[(10000, 1)] / names[(10000, 0)], "<= 1.5"),
            ("named / unnamed, 1,500 realistic names", names[(1500, 2)] / names[(1500, 0)], "<= 1.5"),
            ("unnamed / floor at N = 10,000", names[(10000, 0)] / (median["BM_ScanFloor"][10000] / 10000),
             "<= 4"),
        ]
    rows += [
        ("allocations per named parse (N = 1,000), no scratch", counters[1000]["allocs_per_parse"], "<= 1"),
        ("allocations per parse with scratch (max over N)", max(scratch_allocs.values()), "<= 0"),
    ]
    if others:
        print("| other benchmark | median per run |")
        print("|---|---|")
        for name in sorted(others):
            print("| `%s` | %.1f us |" % (name, others[name] / 1e3))
        print()
    print("| goal | measured | target | met |")
    print("|---|---|---|---|")
    for label, value, target in rows:
        op, bound = target.split()
        ok = value >= float(bound) if op == ">=" else value <= float(bound)
        print("| %s | %.2f | %s | %s |" % (label, value, target, "yes" if ok else "**no**"))


if __name__ == "__main__":
    main(sys.argv[1])
