#!/usr/bin/env python3
"""Mutation testing: do the tests notice when a check is wrong?

The code that reads untrusted bytes is mutated: parser/ (the Kiln block),
base/ (bounded reader, checked arithmetic, UTF-8, escaping, input and output
files), formats/ (the safetensors, GGUF and .npy readers and writers),
writer/ (BlockWriter) and cli/ (the kiln command). Each mutant changes one
thing: flips a comparison (< <=, > >=, == !=), swaps && and ||, shifts a
boundary constant by one, deletes a check (its condition becomes false), or
gives a rule the wrong error class. For each, the script rebuilds, in a
private copy of the committed tree (git archive HEAD), only the test
binaries that can see the mutated folder (FOLDERS below; built with
-D_GLIBCXX_ASSERTIONS, so an index past a span's end aborts) and runs them,
each under a timeout: a failing build is "invalid", a failing, crashing or
timed-out test "killed", passing tests "survived". It writes a Markdown
report.

With --build DIR (CI: --build build/default) no private copy is made: the
mutants are applied to the checkout itself, one at a time, and DIR (a
configured and built tree of this checkout, e.g. the default preset, whose
KILN_HARDENING defines -D_GLIBCXX_ASSERTIONS) rebuilds one object and
relinks the test binaries per mutant. The files it mutates must be
unmodified (git), each is restored as soon as its mutant is judged (also on
SIGINT, SIGTERM and SIGHUP), and DIR is rebuilt from the restored sources at
the end. The test binaries' timeouts come from the times ctest recorded in
DIR (Testing/Temporary/CTestCostData.txt) when it has them. With ccache as
the compiler launcher, the mutants' objects are not stored in the cache
(CCACHE_READONLY) and a restored file's object is a cache hit.

    python3 scripts/mutate.py --list                   # count the mutants
    python3 scripts/mutate.py --sample 16 --seed 1     # a stratified sample (CI)
    python3 scripts/mutate.py --sample 100 --folder cli --folder formats
    python3 scripts/mutate.py --report /tmp/report.md  # all of them
    python3 scripts/mutate.py --build build/default --sample 16 --seed 1   # CI: in place

--sample N is stratified: each folder's mutants are shuffled (deterministic
for --seed) and the folders are drawn from in turn, so every folder chosen
gets N / folders mutants (one more for the first N % folders).

The Python tests (pytest of the Python package, scripts/conformance.py) are
not run: the pybind11 module would be a further link per mutant, and the
conformance runner calls kiln validate on the same golden cases as the
kiln_tests golden test and kiln_cli_tests.

Exit status 1 when the share killed (of valid mutants) is below --min-kill.
"""
import argparse
import io
import json
import os
import random
import signal
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# folder -> (the files mutated, the test binaries that can see the folder).
# A binary is listed when it links the folder's library or runs a program
# that does (the kiln command); "binary:filter" runs only the GoogleTest
# cases the filter names. Binaries run in this order, each stopping at its
# first failure (--gtest_fail_fast), and the mutant is killed at the first
# failing binary, so the quick ones come first.
#   parser/   kiln_tests (unit, rule, golden, fast-path, bit-flip sweeps),
#             kiln_memory_tests. The CLI tests also see the parser, but its
#             checks are all reachable from kiln_tests.
#   base/     every binary: the parser, the writer, formats/ and the command
#             all read or write through it.
#   formats/  kiln_formats_tests (readers, hostile inputs, memory bound, and
#             kiln pack/unpack/convert), kiln_safetensors_tests (the
#             safetensors reader against the crate's rules), kiln_cli_tests
#             (the command).
#   writer/   kiln_tests' writer cases (the rest of kiln_tests never calls
#             the writer: the bit-flip sweeps alone take most of its time),
#             kiln_formats_tests (pack and convert write through it),
#             kiln_cli_tests, kiln_stream_cli_tests (ingest).
#   cli/      the four binaries that run the kiln command or its code.
#   map/      kiln_map_tests (regions of valid and rejected blocks),
#             kiln_cli_map_tests (kiln inspect --map), and the C programs
#             that read the map through the C ABI.
#   capi/     the C programs (every golden case through the shared and the
#             static library, the map, the symbol list) and the conformance
#             runner on kiln_c_validate.
# An entry "ctest:REGEX=TARGET,TARGET" builds the targets and runs the ctest
# tests whose names match REGEX (C programs and scripts, which are not
# GoogleTest binaries).
CLI_TESTS = ["kiln_stream_cli_tests", "kiln_cli_race_tests", "kiln_cli_tests",
             "kiln_cli_map_tests", "kiln_formats_tests", "kiln_safetensors_tests"]
CAPI_PROGRAMS = ("ctest:^(capi_golden_|capi_block_map|capi_exports_only|"
                 "conformance_kiln_c_validate$)=kiln_capi_test_shared,"
                 "kiln_capi_test_static,kiln_capi_map_test,kiln_capi_map_json_test,"
                 "kiln_c_validate,kiln_c_shared")
FOLDERS = {
    "parser": (["core/src/*.cc", "core/include/kiln/internal/*.h", "parser/src/*.cc",
                "core/include/kiln/rules.inc"],
               ["kiln_memory_tests", "kiln_tests"]),
    "base": (["base/src/*.cc", "base/include/kiln/base/*.h"],
             ["kiln_memory_tests"] + CLI_TESTS + ["kiln_tests"]),
    "formats": (["formats/src/*.cc", "formats/src/*.h", "formats/include/kiln/formats/*.h"],
                ["kiln_formats_tests", "kiln_safetensors_tests", "kiln_cli_tests"]),
    "writer": (["writer/src/*.cc", "writer/include/kiln/*.h"],
               ["kiln_tests:Writer*:WriterFile*:*WriterRequestTest*", "kiln_stream_cli_tests",
                "kiln_cli_tests", "kiln_formats_tests"]),
    "cli": (["cli/*.cc", "cli/*.h"], CLI_TESTS),
    "map": (["map/src/*.cc", "map/include/kiln/*.h"],
            ["kiln_map_tests", "kiln_cli_map_tests", CAPI_PROGRAMS]),
    "capi": (["capi/src/*.cc", "capi/src/*.h"], [CAPI_PROGRAMS, "kiln_capi_message_cut_test"]),
}


def folder_of(rel):
    return Path(rel).parts[0]


def targets(folder):
    out = []
    for pattern in FOLDERS[folder][0]:
        if not pattern.endswith(".inc"):
            out += sorted(ROOT.glob(pattern))
    return out

SWAPS = [(" <= ", " < "), (" < ", " <= "), (" >= ", " > "), (" > ", " >= "),
         (" == ", " != "), (" != ", " == "), (" && ", " || "), (" || ", " && ")]
CLASSES = ["kFrame", "kType", "kLimit", "kUtf8"]


def code_part(line):
    """The line without a // comment (string literals with // are rare here)."""
    i = line.find("//")
    return line if i < 0 else line[:i]


def mutants():
    out = []  # (file, line number, description, new line)
    for path in [p for folder in FOLDERS for p in targets(folder)]:
        rel = path.relative_to(ROOT)
        lines = path.read_text().splitlines()
        raw_end = None  # inside a raw string literal: the text that ends it
        for n, line in enumerate(lines, 1):
            if raw_end is not None:  # prose, not code: a raw string's lines
                if raw_end in line:
                    raw_end = None
                continue
            opened = re.search(r'R"([^(\s]*)\(', line)
            if opened and ")" + opened.group(1) + '"' not in line[opened.end():]:
                raw_end = ")" + opened.group(1) + '"'
            code = code_part(line)
            if code.strip().startswith(("#", "static_assert", "template")) or '"' in code:
                continue
            for old, new in SWAPS:
                start = 0
                while (i := code.find(old, start)) >= 0:
                    out.append((rel, n, "'%s' -> '%s'" % (old.strip(), new.strip()),
                                line[:i] + new + line[i + len(old):]))
                    start = i + 1
            for m in re.finditer(r"(?<![\w.])(\d+)(?![\w.])", code):
                if "[" in code[:m.start()] and "]" in code[m.end():]:
                    continue  # array sizes and indexes of fixed layouts
                v = int(m.group(1))
                out.append((rel, n, "constant %d -> %d" % (v, v + 1),
                            line[:m.start()] + str(v + 1) + line[m.end():]))
            m = re.match(r"^(\s*)if \((.*)\) (return|\{)", line)
            if m and "Check e =" not in line:
                out.append((rel, n, "check deleted (condition false)",
                            line.replace("if (", "if (false && (", 1).replace(
                                ") " + m.group(3), ")) " + m.group(3), 1)))
    rules = ROOT / "core/include/kiln/rules.inc"
    for n, line in enumerate(rules.read_text().splitlines(), 1):
        m = re.match(r"^KILN_RULE\((\w+),\s*(\w+),", line)
        if m:
            other = CLASSES[(CLASSES.index(m.group(2)) + 1) % len(CLASSES)]
            out.append((rules.relative_to(ROOT), n, "rule %s class %s -> %s" % (
                m.group(1), m.group(2), other), line.replace(m.group(2), other, 1)))
    return out


def run(cmd, cwd, timeout, env=None):
    """The exit status, or -1 on timeout. The command runs in its own process
    group, killed whole on timeout (a test binary's kiln children too)."""
    with subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          start_new_session=True, env=env) as p:
        try:
            return p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            return -1


def test_command(build, entry):
    if entry.startswith("ctest:"):
        regex = entry[len("ctest:"):].partition("=")[0]
        return ["ctest", "--test-dir", str(build), "-R", regex, "--stop-on-failure",
                "--no-tests=error"]
    name, _, only = entry.partition(":")
    return [str(build / "tests" / name), "--gtest_fail_fast"] + (
        ["--gtest_filter=" + only] if only else [])


def tests_pass(build, tree, entries, timeouts):
    return all(run(test_command(build, e), tree, timeouts[e]) == 0 for e in entries)


def build_targets(entries):
    """The targets a list of test entries needs built."""
    out = set()
    for e in entries:
        if e.startswith("ctest:"):
            out.update(e.partition("=")[2].split(","))
        else:
            out.add(e.partition(":")[0])
    return sorted(out)


def binary(entry):
    return entry.partition(":")[0]


def prepare_tree(tree):
    """The committed tree (HEAD) in `tree`, so that work in progress in the
    checkout cannot change the result. A file already there with the same
    bytes is left alone (and so is its object in a kept build)."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "HEAD"], check=True,
                             stdout=subprocess.PIPE).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        for member in tar.getmembers():
            path = tree / member.name
            if member.isdir():
                path.mkdir(parents=True, exist_ok=True)
            elif member.isfile():
                data = tar.extractfile(member).read()
                if not path.is_file() or path.read_bytes() != data:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_bytes(data)
                    path.chmod(member.mode)


class Interrupted(Exception):
    pass


def on_signal(signum, _frame):
    raise Interrupted("signal %d" % signum)


def ctest_costs(build):
    """Seconds per ctest test and per test binary (summed over its tests),
    from the costs ctest recorded in `build` (empty when it has none)."""
    cost_file = build / "Testing" / "Temporary" / "CTestCostData.txt"
    if not cost_file.is_file():
        return {}, {}
    costs = {}
    for line in cost_file.read_text().splitlines():
        parts = line.split()
        if len(parts) == 3:
            try:
                costs[parts[0]] = float(parts[2])
            except ValueError:
                pass
    listing = subprocess.run(["ctest", "--show-only=json-v1"], cwd=build, check=True,
                             stdout=subprocess.PIPE, text=True).stdout
    per_binary = {}
    for test in json.loads(listing).get("tests", []):
        command = test.get("command") or []
        if command and test["name"] in costs:
            name = Path(command[0]).name
            per_binary[name] = per_binary.get(name, 0.0) + costs[test["name"]]
    return per_binary, costs


def stratified(chosen, n, seed):
    """n mutants drawn from the folders in turn, each folder's shuffled."""
    rng = random.Random(seed)
    pools = []
    for folder in FOLDERS:
        pool = [m for m in chosen if folder_of(m[0]) == folder]
        rng.shuffle(pool)
        if pool:
            pools.append(pool)
    out = []
    while len(out) < n and any(pools):
        for pool in pools:
            if pool and len(out) < n:
                out.append(pool.pop(0))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--sample", type=int, default=0,
                    help="test N mutants, spread over the folders (0: all)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--folder", action="append", default=[], choices=list(FOLDERS),
                    help="only this folder's mutants (repeatable; default: all folders)")
    ap.add_argument("--timeout", type=float, default=10.0,
                    help="a test binary is stopped (and the mutant killed) after this many "
                         "times its time on the unmutated tree (at least 30 s)")
    ap.add_argument("--work", type=Path,
                    help="keep the tree and build here (default: a temporary directory, "
                         "removed); a later run with the same --work rebuilds only what "
                         "changed")
    ap.add_argument("--build", type=Path,
                    help="mutate the checkout in place and rebuild this configured, built "
                         "tree of it (e.g. build/default) instead of a private copy")
    ap.add_argument("--report", type=Path, help="write a Markdown report here")
    ap.add_argument("--min-kill", type=float, default=0.0, help="fail below this share")
    ap.add_argument("--only", action="append", default=[], metavar="FILE:TEXT:WHAT",
                    help="only mutants of lines of FILE containing TEXT whose description "
                         "contains WHAT (repeatable), e.g. to re-test survivors")
    args = ap.parse_args()
    all_mutants = mutants()
    chosen = all_mutants
    if args.folder:
        chosen = [m for m in chosen if folder_of(m[0]) in args.folder]
    if args.only:
        def wanted(m):
            rel, n, what, _ = m
            line = (ROOT / rel).read_text().splitlines()[n - 1]
            for spec in args.only:
                f, _, rest = spec.partition(":")
                text, _, desc = rest.rpartition(":")
                if str(rel).endswith(f) and text in line and desc in what:
                    return True
            return False
        chosen = [m for m in chosen if wanted(m)]
    if args.sample:
        chosen = stratified(chosen, args.sample, args.seed)
    if args.list:
        for rel, n, what, _ in chosen:
            print("%s:%d %s" % (rel, n, what))
        for folder in FOLDERS:
            count = sum(1 for m in chosen if folder_of(m[0]) == folder)
            if count:
                print("%s: %d" % (folder, count))
        print("%d mutants" % len(chosen))
        return 0
    # The test runs the chosen mutants need, in a fixed order.
    needed = []
    for rel, _, _, _ in chosen:
        for e in FOLDERS[folder_of(rel)][1]:
            if e not in needed:
                needed.append(e)
    cli = any(binary(e) in CLI_TESTS for e in needed)
    in_place = args.build is not None
    if in_place:
        build = args.build.resolve()
        tree = ROOT
        if not (build / "build.ninja").is_file():
            print("--build %s: not a configured Ninja build tree" % args.build, file=sys.stderr)
            return 2
        files = sorted({str(rel) for rel, _, _, _ in chosen})
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--"] + files,
                               check=True, stdout=subprocess.PIPE, text=True).stdout
        if dirty.strip():
            print("--build mutates the checkout, and these files have changes (commit or "
                  "stash them, or run without --build):\n" + dirty, file=sys.stderr)
            return 2
        work = None
    else:
        work = args.work or Path(tempfile.mkdtemp(prefix="kiln-mutate-"))
        tree = work / "src"
        build = work / "build"
    results = []
    started = time.time()
    mutated = None  # (path, original text) while a mutant is applied
    for s in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, on_signal)
    binaries = build_targets(needed)
    try:
        if not in_place:
            tree.mkdir(parents=True, exist_ok=True)
            prepare_tree(tree)
            if run(["cmake", "-S", str(tree), "-B", str(build), "-G", "Ninja",
                    "-DCMAKE_BUILD_TYPE=Release", "-DKILN_BUILD_BENCH=OFF",
                    "-DKILN_BUILD_PYTHON=OFF", "-DKILN_BUILD_CLI=%s" % ("ON" if cli else "OFF"),
                    "-DKILN_WERROR=OFF", "-DCMAKE_CXX_FLAGS=-D_GLIBCXX_ASSERTIONS"], tree,
                   300) != 0:
                print("configure failed", file=sys.stderr)
                return 2
        if run(["ninja", "-C", str(build)] + binaries, tree, 3600) != 0:
            print("the unmutated tree does not build", file=sys.stderr)
            return 2
        timeouts = {}
        costs, test_costs = ctest_costs(build) if in_place else ({}, {})
        for e in needed:
            if e.startswith("ctest:"):
                regex = re.compile(e[len("ctest:"):].partition("=")[0])
                known = [c for name, c in test_costs.items() if regex.search(name)]
                if known:
                    timeouts[e] = max(30.0, args.timeout * sum(known))
                    continue
            elif binary(e) in costs:
                timeouts[e] = max(30.0, args.timeout * costs[binary(e)])
                continue
            t0 = time.time()
            if run(test_command(build, e), tree, 1200) != 0:
                print("the unmutated tree does not pass %s" % e, file=sys.stderr)
                return 2
            timeouts[e] = max(30.0, args.timeout * (time.time() - t0))
        print("baseline: %.0fs (build and %s; %s)" % (time.time() - started, ", ".join(
            "%s %.0fs" % (e, timeouts[e] / args.timeout) for e in needed),
            "times from ctest" if costs else "times measured"), flush=True)
        # The mutants' objects are not worth keeping in a compiler cache.
        mutant_env = dict(os.environ, CCACHE_READONLY="1")
        for k, (rel, n, what, new_line) in enumerate(chosen, 1):
            entries = FOLDERS[folder_of(rel)][1]
            path = tree / rel
            original = path.read_text()
            lines = original.splitlines(keepends=True)
            lines[n - 1] = new_line + "\n"
            mutated = (path, original)
            path.write_text("".join(lines))
            t0 = time.time()
            if run(["ninja", "-C", str(build)] + build_targets(entries), tree,
                   1800, env=mutant_env) != 0:
                verdict = "invalid"
            elif not tests_pass(build, tree, entries, timeouts):
                verdict = "killed"
            else:
                verdict = "survived"
            path.write_text(original)
            mutated = None
            results.append((rel, n, what, verdict))
            print("[%d/%d] %-8s %s:%d %s (%.0fs)" % (k, len(chosen), verdict, rel, n, what,
                                                  time.time() - t0), flush=True)
    except (Interrupted, KeyboardInterrupt) as e:
        print("mutation run stopped: %s" % (e or "interrupted"), file=sys.stderr)
        return 2
    finally:
        if mutated:
            mutated[0].write_text(mutated[1])
        if in_place:
            # The build tree back to the restored sources (cache hits with ccache).
            if run(["ninja", "-C", str(build)] + binaries, tree, 3600) != 0:
                print("rebuilding %s from the restored sources failed" % build, file=sys.stderr)
        elif not args.work:
            shutil.rmtree(work, ignore_errors=True)
    valid = [r for r in results if r[3] != "invalid"]
    killed = [r for r in valid if r[3] == "killed"]
    share = len(killed) / len(valid) if valid else 1.0

    def count(rs):
        v = [r for r in rs if r[3] != "invalid"]
        k = [r for r in v if r[3] == "killed"]
        return "%d mutants: %d killed, %d survived, %d invalid (did not build): %.1f%% killed" % (
            len(rs), len(k), len(v) - len(k), len(rs) - len(v),
            100 * (len(k) / len(v) if v else 1.0))
    summary = count(results)
    per_folder = ["%s/: %s" % (f, count([r for r in results if folder_of(r[0]) == f]))
                  for f in FOLDERS if any(folder_of(r[0]) == f for r in results)]
    for line in per_folder:
        print("  " + line)
    print(summary)
    print("time: %.0fs" % (time.time() - started))
    if args.report:
        lines = ["# Mutation testing", "",
                 "Generated by `python3 scripts/mutate.py%s%s`." % (
                     " --sample %d --seed %d" % (args.sample, args.seed) if args.sample else "",
                     "".join(" --folder " + f for f in args.folder)),
                 "", summary, ""] + ["- " + line for line in per_folder] + [
                 "", "## Survivors", ""]
        lines += ["- `%s:%d` %s" % (rel, n, what) for rel, n, what, v in results
                  if v == "survived"] or ["None."]
        args.report.write_text("\n".join(lines) + "\n")
    return 1 if share < args.min_kill else 0


if __name__ == "__main__":
    sys.exit(main())
