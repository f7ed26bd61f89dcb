#!/usr/bin/python3
"""Conformance runner: any Kiln v2 validator against the golden cases.

Runs COMMAND on every case of golden/manifest.tsv and compares what it
prints with the manifest: the verdict (ok or rejected), and for a rejected
case the error class, the rule id, the byte offset and the tensor index.
It reports the agreement per case and in total, and exits 0 only when every
case agrees on all four. Python 3 standard library only. docs/conformance.md
describes the protocol a validator follows.

    scripts/conformance.py [options] -- COMMAND [ARG...]

COMMAND ARG... FILE is run once per case (or once for all cases with
--batch, FILE... appended) and must print, for each file, one line in the
`kiln validate` form:

    FILE: ok
    FILE: CLASS RULE at byte N (tensor I): message
    FILE: CLASS RULE at byte N: message          (no tensor)

or, with --json, the `kiln validate --json` array of objects with the keys
file, ok, class, rule, offset and tensor (tensor absent when none).
Exit statuses 0 and 1 are verdicts; any other status, a timeout or an
unreadable line counts as a disagreement for that case.

Examples:
    scripts/conformance.py -- build/default/cli/kiln validate
    scripts/conformance.py --json --batch -- build/default/cli/kiln validate --json
    scripts/conformance.py -- ./my-port-validator
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
MANIFEST_COLUMNS = ["case", "expect", "rule", "offset", "tensor", "description"]
FIELDS = ("verdict", "class", "rule", "offset", "tensor")
# What follows "FILE: " in the line form.
VERDICT_RE = re.compile(
    r"^(?:(?P<ok>ok)|(?P<cls>[A-Z0-9]+) (?P<rule>[A-Z]+[0-9]+) at byte (?P<offset>[0-9]+)"
    r"(?: \(tensor (?P<tensor>[0-9]+)\))?: .*)$")


@dataclass
class Verdict:
    """ok, or the class, rule, offset and tensor of a rejection. error: why
    the output could not be read (a disagreement on every field)."""

    ok: bool = False
    error_class: str = ""
    rule: str = ""
    offset: Optional[int] = None
    tensor: Optional[int] = None
    error: str = ""


@dataclass
class Case:
    name: str
    want: Verdict
    path: Path


def load_manifest(golden: Path) -> List[Case]:
    lines = (golden / "manifest.tsv").read_text(encoding="ascii").splitlines()
    rows = [line for line in lines if line and not line.startswith("#")]
    if not rows or rows[0].split("\t") != MANIFEST_COLUMNS:
        raise SystemExit("conformance: %s/manifest.tsv: the header is not %s"
                         % (golden, "\\t".join(MANIFEST_COLUMNS)))
    cases = []
    for row in rows[1:]:
        name, expect, rule, offset, tensor, _ = row.split("\t")
        if expect == "ok":
            want = Verdict(ok=True)
        else:
            want = Verdict(False, expect, rule, int(offset),
                           None if tensor == "-" else int(tensor))
        cases.append(Case(name, want, golden / "cases" / (name + ".klnt")))
    return cases


def parse_line(text: str) -> Verdict:
    m = VERDICT_RE.match(text)
    if not m:
        return Verdict(error="unreadable verdict %r" % text[:120])
    if m.group("ok"):
        return Verdict(ok=True)
    tensor = m.group("tensor")
    return Verdict(False, m.group("cls"), m.group("rule"), int(m.group("offset")),
                   None if tensor is None else int(tensor))


def parse_lines(stdout: str, paths: Sequence[str]) -> Dict[str, Verdict]:
    """The verdict of each path from 'FILE: ...' lines (matched by prefix, so
    a path may contain ': ')."""
    out: Dict[str, Verdict] = {}
    for line in stdout.splitlines():
        for p in paths:
            if line.startswith(p + ": ") and p not in out:
                out[p] = parse_line(line[len(p) + 2:])
                break
    return out


def parse_json(stdout: str, paths: Sequence[str]) -> Dict[str, Verdict]:
    try:
        items = json.loads(stdout)
    except ValueError as e:
        return {p: Verdict(error="output is not JSON: %s" % e) for p in paths}
    out: Dict[str, Verdict] = {}
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict) or item.get("file") not in paths:
            continue
        if item.get("ok") is True:
            out[item["file"]] = Verdict(ok=True)
        elif isinstance(item.get("offset"), int) and "class" in item and "rule" in item:
            tensor = item.get("tensor")
            out[item["file"]] = Verdict(False, str(item["class"]), str(item["rule"]),
                                        item["offset"], tensor if isinstance(tensor, int) else None)
        else:
            out[item["file"]] = Verdict(error="unreadable JSON verdict %r" % item)
    return out


def run(command: Sequence[str], paths: Sequence[str], use_json: bool,
        timeout: float) -> Dict[str, Verdict]:
    try:
        done = subprocess.run(list(command) + list(paths), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        return {p: Verdict(error="command failed: %s" % e) for p in paths}
    if done.returncode not in (0, 1):
        why = "exit status %d: %s" % (done.returncode,
                                      done.stderr.decode("utf-8", "replace").strip()[:200])
        return {p: Verdict(error=why) for p in paths}
    stdout = done.stdout.decode("utf-8", "replace")
    got = parse_json(stdout, paths) if use_json else parse_lines(stdout, paths)
    for p in paths:
        got.setdefault(p, Verdict(error="no verdict printed for this file"))
    return got


def compare(want: Verdict, got: Verdict) -> Dict[str, bool]:
    """Agreement on each field. A wrong verdict (or unreadable output) is a
    disagreement on every field; for a valid case only the verdict counts."""
    if got.error or got.ok != want.ok:
        return {f: False for f in FIELDS}
    if want.ok:
        return {f: True for f in FIELDS}
    return {
        "verdict": not got.ok,
        "class": got.error_class == want.error_class,
        "rule": got.rule == want.rule,
        "offset": got.offset == want.offset,
        "tensor": got.tensor == want.tensor,
    }


def show(v: Verdict) -> str:
    if v.error:
        return v.error
    if v.ok:
        return "ok"
    tensor = "" if v.tensor is None else " (tensor %d)" % v.tensor
    return "%s %s at byte %d%s" % (v.error_class, v.rule, v.offset, tensor)


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(
        description="Run a Kiln v2 validator over the golden cases and report agreement.",
        usage="%(prog)s [options] -- COMMAND [ARG...]")
    ap.add_argument("--golden", type=Path, default=GOLDEN,
                    help="the golden folder (manifest.tsv and cases/); default: %(default)s")
    ap.add_argument("--json", action="store_true",
                    help="read the `kiln validate --json` array instead of lines")
    ap.add_argument("--batch", action="store_true",
                    help="run COMMAND once with every case file appended")
    ap.add_argument("--timeout", type=float, default=60.0,
                    help="seconds per run of COMMAND (default %(default)s)")
    ap.add_argument("--verbose", action="store_true", help="print every case, not just mismatches")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="the validator and its arguments")
    args = ap.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        ap.error("give the validator after --")

    cases = load_manifest(args.golden)
    paths = [str(c.path) for c in cases]
    if args.batch:
        got = run(command, paths, args.json, args.timeout)
    else:
        got = {}
        for p in paths:
            got.update(run(command, [p], args.json, args.timeout))

    totals = {f: 0 for f in FIELDS}
    agreeing = 0
    for c in cases:
        g = got[str(c.path)]
        fields = compare(c.want, g)
        for f, same in fields.items():
            totals[f] += same
        if all(fields.values()):
            agreeing += 1
            if args.verbose:
                print("agree     %s: %s" % (c.name, show(g)))
        else:
            wrong = ",".join(f for f, same in fields.items() if not same)
            print("DISAGREE  %s: want %s, got %s [%s]" % (c.name, show(c.want), show(g), wrong))
    n = len(cases)
    print("fields agreeing: " + ", ".join("%s %d/%d" % (f, totals[f], n) for f in FIELDS))
    print("cases agreeing on verdict, class, rule, offset and tensor: %d/%d (%.1f%%)"
          % (agreeing, n, 100.0 * agreeing / n if n else 0.0))
    return 0 if n and agreeing == n else 1


if __name__ == "__main__":
    sys.exit(main())
