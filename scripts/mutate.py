#!/usr/bin/env python3
"""Mutation testing of parser/: do the tests notice when a check is wrong?

Each mutant changes one thing in parser/src or the rule list: flips a
comparison (< <=, > >=, == !=), swaps && and ||, shifts a boundary constant
by one, deletes a check (its condition becomes false), or gives a rule the
wrong error class. For each, the script rebuilds the test binaries in a
private copy of the committed tree (git archive HEAD) (with -D_GLIBCXX_ASSERTIONS, so an index past a
span's end aborts) and runs them: a failing build is "invalid", failing tests "killed",
passing tests "survived". It writes a Markdown report.

    python3 scripts/mutate.py --list               # count the mutants
    python3 scripts/mutate.py --sample 40 --seed 1 # a random sample (CI)
    python3 scripts/mutate.py --report docs/mutation.md   # all of them

Exit status 1 when the share killed (of valid mutants) is below --min-kill.
"""
import argparse
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGETS = sorted((ROOT / "parser/src").glob("*.cc")) + sorted((ROOT / "parser/src").glob("*.h"))

SWAPS = [(" <= ", " < "), (" < ", " <= "), (" >= ", " > "), (" > ", " >= "),
         (" == ", " != "), (" != ", " == "), (" && ", " || "), (" || ", " && ")]
CLASSES = ["kFrame", "kType", "kLimit", "kUtf8"]


def code_part(line):
    """The line without a // comment (string literals with // are rare here)."""
    i = line.find("//")
    return line if i < 0 else line[:i]


def mutants():
    out = []  # (file, line number, description, new line)
    for path in TARGETS:
        rel = path.relative_to(ROOT)
        lines = path.read_text().splitlines()
        for n, line in enumerate(lines, 1):
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
    rules = ROOT / "parser/include/kiln/rules.inc"
    for n, line in enumerate(rules.read_text().splitlines(), 1):
        m = re.match(r"^KILN_RULE\((\w+),\s*(\w+),", line)
        if m:
            other = CLASSES[(CLASSES.index(m.group(2)) + 1) % len(CLASSES)]
            out.append((rules.relative_to(ROOT), n, "rule %s class %s -> %s" % (
                m.group(1), m.group(2), other), line.replace(m.group(2), other, 1)))
    return out


def run(cmd, cwd, timeout):
    try:
        return subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=timeout).returncode
    except subprocess.TimeoutExpired:
        return -1


TEST_BINARIES = ["kiln_tests", "kiln_memory_tests"]


def tests_pass(build, tree):
    return all(run([str(build / "tests" / b)], tree, 300) == 0 for b in TEST_BINARIES)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--sample", type=int, default=0, help="test N random mutants (0: all)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--report", type=Path, help="write a Markdown report here")
    ap.add_argument("--min-kill", type=float, default=0.0, help="fail below this share")
    ap.add_argument("--only", action="append", default=[], metavar="FILE:TEXT:WHAT",
                    help="only mutants of lines of FILE containing TEXT whose description "
                         "contains WHAT (repeatable), e.g. to re-test survivors")
    args = ap.parse_args()
    all_mutants = mutants()
    chosen = all_mutants
    if args.only:
        def wanted(m):
            rel, n, what, _ = m
            line = (ROOT / rel).read_text().splitlines()[n - 1]
            for spec in args.only:
                f, text, desc = spec.split(":", 2)
                if str(rel).endswith(f) and text in line and desc in what:
                    return True
            return False
        chosen = [m for m in all_mutants if wanted(m)]
    if args.sample:
        chosen = random.Random(args.seed).sample(chosen, min(args.sample, len(chosen)))
    if args.list:
        for rel, n, what, _ in chosen:
            print("%s:%d %s" % (rel, n, what))
        print("%d mutants" % len(chosen))
        return 0
    work = Path(tempfile.mkdtemp(prefix="kiln-mutate-"))
    try:
        # The committed tree (HEAD), so that work in progress elsewhere in
        # the checkout cannot change the result.
        tree = work / "src"
        tree.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", "HEAD"], check=True,
                                 stdout=subprocess.PIPE).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
        build = work / "build"
        if run(["cmake", "-S", str(tree), "-B", str(build), "-G", "Ninja",
                "-DCMAKE_BUILD_TYPE=Release", "-DKILN_BUILD_BENCH=OFF", "-DKILN_BUILD_CLI=OFF",
                "-DKILN_WERROR=OFF", "-DCMAKE_CXX_FLAGS=-D_GLIBCXX_ASSERTIONS"], tree, 300) != 0:
            print("configure failed", file=sys.stderr)
            return 2
        if run(["ninja", "-C", str(build)] + TEST_BINARIES, tree, 900) != 0 or \
                not tests_pass(build, tree):
            print("the unmutated tree does not pass its tests", file=sys.stderr)
            return 2
        results = []
        for k, (rel, n, what, new_line) in enumerate(chosen, 1):
            path = tree / rel
            original = path.read_text()
            lines = original.splitlines(keepends=True)
            lines[n - 1] = new_line + "\n"
            path.write_text("".join(lines))
            t0 = time.time()
            if run(["ninja", "-C", str(build)] + TEST_BINARIES, tree, 900) != 0:
                verdict = "invalid"
            elif not tests_pass(build, tree):
                verdict = "killed"
            else:
                verdict = "survived"
            path.write_text(original)
            results.append((rel, n, what, verdict))
            print("[%d/%d] %-8s %s:%d %s (%.0fs)" % (k, len(chosen), verdict, rel, n, what,
                                                  time.time() - t0), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    valid = [r for r in results if r[3] != "invalid"]
    killed = [r for r in valid if r[3] == "killed"]
    share = len(killed) / len(valid) if valid else 1.0
    summary = "%d mutants: %d killed, %d survived, %d invalid (did not build): %.1f%% killed" % (
        len(results), len(killed), len(valid) - len(killed), len(results) - len(valid),
        100 * share)
    print(summary)
    if args.report:
        lines = ["# Mutation testing of parser/", "",
                 "Generated by `python3 scripts/mutate.py%s`." % (
                     " --sample %d --seed %d" % (args.sample, args.seed) if args.sample else ""),
                 "", summary, "", "## Survivors", ""]
        lines += ["- `%s:%d` %s" % (rel, n, what) for rel, n, what, v in results
                  if v == "survived"] or ["None."]
        args.report.write_text("\n".join(lines) + "\n")
    return 1 if share < args.min_kill else 0


if __name__ == "__main__":
    sys.exit(main())
