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
import hashlib
import io
import json
import os
import random
import resource
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
#   python/   the pytest suite (python/tests) over the module. The JS glue
#             (js/src) is built by emscripten only, outside this tree: not
#             mutated here (docs/mutation.md).
# An entry "ctest:REGEX=TARGET,TARGET" builds the targets and runs the ctest
# tests whose names match REGEX (C programs and scripts, which are not
# GoogleTest binaries).
# kiln validate/inspect URL (cli/remote_file.cc) is run only by the tests
# against nginx and the hostile server (tests/http; absent from a build
# without libcurl, and then left out).
HTTP_TESTS = "ctest:^http_(sparse_10g|mutants|golden|hostile)$=kiln,kiln_fault_preload"
# Files only some of their folder's tests run: those go first (the folder's
# other tests still run before a mutant is called a survivor).
FIRST = {"cli/remote_file.cc": HTTP_TESTS, "cli/remote_file.h": HTTP_TESTS,
         # Its checker runs in the compiler only: the strings that must not compile.
         "base/include/kiln/base/format.h":
             "ctest:^format_strings_checked_when_compiled$=kiln_tests"}
CLI_TESTS = ["kiln_stream_cli_tests", "kiln_cli_race_tests", "kiln_cli_tests",
             "kiln_cli_map_tests", "kiln_formats_tests", "kiln_safetensors_tests", HTTP_TESTS]
# The Python module's C++ (python/src): its pytest suite, which drives it
# with hostile files, file objects and buffers (absent from a build without
# pybind11, and then left out: its mutants are not measured).
PYTHON_TESTS = "ctest:^python_pytest$=kiln_python,kiln"
CAPI_PROGRAMS = ("ctest:^(capi_golden_|capi_block_map|capi_exports_only|capi_ranges$|"
                 "conformance_kiln_c_validate$)=kiln_capi_test_shared,"
                 "kiln_capi_test_static,kiln_capi_map_test,kiln_capi_map_json_test,"
                 "kiln_capi_ranges_test,kiln_c_validate,kiln_c_shared")
FOLDERS = {
    "core": (["core/src/*.cc", "core/internal/kiln/internal/*.h", "core/include/kiln/rules.inc"],
             ["kiln_memory_tests", "kiln_tests"]),
    "parser": (["parser/src/*.cc"], ["kiln_memory_tests", "kiln_tests"]),
    "base": (["base/src/*.cc", "base/include/kiln/base/*.h"],
             ["kiln_memory_tests", "kiln_tests"] + CLI_TESTS),
    "formats": (["formats/src/*.cc", "formats/src/*.h", "formats/include/kiln/formats/*.h"],
                ["kiln_formats_tests", "kiln_safetensors_tests", "kiln_cli_tests"]),
    "writer": (["writer/src/*.cc", "writer/include/kiln/*.h"],
               ["kiln_tests:Writer*:WriterFile*:*WriterRequestTest*", "kiln_stream_cli_tests",
                "kiln_cli_tests", "kiln_formats_tests"]),
    "cli": (["cli/*.cc", "cli/*.h"], CLI_TESTS),
    "map": (["map/src/*.cc", "map/include/kiln/*.h"],
            ["kiln_map_tests", "kiln_cli_map_tests", CAPI_PROGRAMS]),
    "capi": (["capi/src/*.cc", "capi/src/*.h"], [CAPI_PROGRAMS, "kiln_capi_message_cut_test"]),
    "python": (["python/src/*.cc", "python/src/*.h"], [PYTHON_TESTS]),
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
    """The line's code: a // comment cut off, /* */ comments and character
    literals blanked (same length, so columns still index the line). Lines
    with string literals are not mutated at all (mutants())."""
    line = re.sub(r"/\*.*?\*/", lambda m: " " * len(m.group(0)), line)
    line = re.sub(r"'(\\.|[^'\\])'", lambda m: " " * len(m.group(0)), line)
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
                    out.append((rel, n, "'%s' -> '%s' @%d" % (old.strip(), new.strip(), i + 2),
                                line[:i] + new + line[i + len(old):]))
                    start = i + 1
            for m in re.finditer(r"(?<![\w.])(\d+)(?![\w.])", code):
                if "[" in code[:m.start()] and "]" in code[m.end():]:
                    continue  # array sizes and indexes of fixed layouts
                v = int(m.group(1))
                out.append((rel, n, "constant %d -> %d @%d" % (v, v + 1, m.start() + 1),
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
        except BaseException:  # stopped (a signal): the command stops too
            os.killpg(p.pid, signal.SIGKILL)
            raise


def test_command(build, entry):
    if entry.startswith("ctest:"):
        regex = entry[len("ctest:"):].partition("=")[0]
        return ["ctest", "--test-dir", str(build), "-R", regex, "--stop-on-failure",
                "--no-tests=error", "-j", str(os.cpu_count() or 1)]
    name, _, only = entry.partition(":")
    return [str(test_binary(build, name)), "--gtest_fail_fast"] + (
        ["--gtest_filter=" + only] if only else [])


def test_binary(build, name):
    """A GoogleTest binary of the build: build/tests/NAME, or the one
    build/tests/*/NAME (tests/capi puts its binaries in their own folder)."""
    direct = build / "tests" / name
    found = ([direct] if direct.exists() else []) + sorted((build / "tests").glob("*/" + name))
    if len(found) > 1:  # a stale copy beside the fresh one: which ran would be chance
        raise SystemExit(f"mutate.py: more than one test binary named {name}: "
                         + ", ".join(str(p) for p in found))
    return found[0] if found else direct


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


def header_dependents(build, tree):
    """{header relative to the tree: [objects relative to build]}: every
    object whose last compile read the header (ninja's deps log). A mutated
    header is compiled into each of them, wherever it lives: a header of
    core/ that only map/ includes is map/'s code too."""
    text = subprocess.run(["ninja", "-C", str(build), "-t", "deps"], check=True,
                          stdout=subprocess.PIPE, text=True).stdout
    return parse_deps(text, build, tree)


def parse_deps(text, build, tree):
    """`ninja -t deps` output -> {header relative to tree: [objects]}."""
    out, obj = {}, None
    for line in text.splitlines():
        if not line.startswith(" "):
            obj = line.partition(":")[0] if line.strip() else None
            continue
        if obj is None:
            continue
        try:
            rel = (build / line.strip()).resolve().relative_to(tree.resolve())
        except ValueError:
            continue  # a system header
        if rel.suffix in (".h", ".inc"):
            out.setdefault(str(rel), []).append(obj)
    return out


def entries_of(rel, dependents, present):
    """The test entries that can see a mutant of rel: its folder's, and for
    a header those of every folder that compiles it; entries whose tests
    this build lacks (ctest tests of an optional feature) are left out."""
    out = list(FOLDERS[folder_of(rel)][1])
    if str(rel) in FIRST:
        out = [FIRST[str(rel)]] + [e for e in out if e != FIRST[str(rel)]]
    if not str(rel).endswith(".cc"):
        for obj in dependents.get(str(rel), []):
            for e in FOLDERS.get(Path(obj).parts[0], ((), ()))[1]:
                if e not in out:
                    out.append(e)
    return [e for e in out if present(e)]


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


# --- the coverage map, the tests it selects, and who killed a mutant -------------

LEDGER = ROOT / "mutation" / "ledger.tsv"
LEDGER_COLUMNS = ["file", "line", "operator", "hash", "result", "detail", "tests", "commit"]


def git(*args):
    return subprocess.run(["git", "-C", str(ROOT)] + list(args), check=True,
                          stdout=subprocess.PIPE, text=True).stdout.strip()


def context_hash(lines, n, what):
    """The mutant's identity: its operator and the seven lines around it
    (whitespace stripped), so that it survives lines moving but not a change
    of the code it sits in."""
    around = [ln.strip() for ln in lines[max(0, n - 4):n + 3]]
    return hashlib.sha1(("\n".join(around) + "\n" + what).encode()).hexdigest()[:12]


def tests_hash():
    """What the tests are made of: tests/ and golden/ as committed, and any
    change to them not committed yet (edited, deleted or new files), so that
    a survivor measured with other tests than the checkout's never stands."""
    parts = [git("rev-parse", "HEAD:" + d) for d in ("tests", "golden")]
    changed = git("diff", "HEAD", "--", "tests", "golden")
    new = git("ls-files", "--others", "--exclude-standard", "--", "tests", "golden").split()
    if changed or new:
        h = hashlib.sha1(changed.encode())
        for rel in sorted(new):
            h.update(rel.encode() + b"\0" + (ROOT / rel).read_bytes())
        parts.append(h.hexdigest())
    return hashlib.sha1(" ".join(parts).encode()).hexdigest()[:12]


def read_ledger(path):
    rows = {}
    if path.is_file():
        for line in path.read_text().splitlines():
            if not line or line.startswith("#") or line.startswith("file\t"):
                continue
            cols = line.split("\t")
            if len(cols) != len(LEDGER_COLUMNS):
                continue
            row = dict(zip(LEDGER_COLUMNS, cols))
            rows[(row["file"], row["operator"], row["hash"])] = row
    return rows


def ledger_commit(path):
    """The commit of the ledger's last recorded run (its '# commit' line)."""
    if path.is_file():
        for line in path.read_text().splitlines():
            if line.startswith("# commit "):
                return line.split()[2]
    return None


def write_ledger(path, rows, population_keys, commit):
    """Rows of mutants that still exist (population_keys: key -> the mutant's
    line now), sorted by file and line; a row whose code moved takes its
    line now."""
    kept = [dict(r, line=str(population_keys[k])) for k, r in rows.items()
            if k in population_keys]
    kept.sort(key=lambda r: (r["file"], int(r["line"]), r["operator"]))
    counts = {}
    for r in kept:
        counts[r["result"]] = counts.get(r["result"], 0) + 1
    head = ["# Mutation ledger: one line per mutant that scripts/mutate.py --ledger measured.",
            "# result: killed (detail: the first test that failed), equivalent (detail: why",
            "# no input can tell, written by a person who read it), survived (detail: the",
            "# test that would kill it, when known), no-coverage (no test reaches the line),",
            "# invalid (the mutant does not build), pending (on a line changed before the",
            "# ledger's commit, not measured yet: named, so that the gate's base could move;",
            "# any run that chooses it measures it). hash: operator + the 7 lines around it;",
            "# tests: the tests/ and golden/ trees it was measured with.",
            "# commit %s" % commit,
            "# " + ", ".join("%s %d" % kv for kv in sorted(counts.items())),
            "\t".join(LEDGER_COLUMNS)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(head + ["\t".join(r[c] for c in LEDGER_COLUMNS)
                                      for r in kept]) + "\n")


def ctest_listing(build):
    """ctest name -> (command, working directory)."""
    listing = subprocess.run(["ctest", "--show-only=json-v1"], cwd=build, check=True,
                             stdout=subprocess.PIPE, text=True).stdout
    out = {}
    for test in json.loads(listing).get("tests", []):
        props = {p["name"]: p["value"] for p in test.get("properties", [])}
        out[test["name"]] = (test.get("command") or [], props.get("WORKING_DIRECTORY",
                                                                    str(build)))
    return out


class Coverage:
    """Line -> ctest tests, from scripts/covmap.py's map. A map made on
    another tree is used only for the files whose content it was made from
    (and then a mutant it lets survive is confirmed by the folder's tests)."""

    def __init__(self, data, exact):
        self.data = data
        self.exact = exact
        blobs = data.get("blobs", {})
        partial = set(data.get("binaries") or [])
        self.files = {}
        for rel, entry in data["files"].items():
            if partial and not set(build_targets(FOLDERS[folder_of(rel)][1])) <= partial:
                continue  # a partial map: some of the folder's tests were not measured
            if exact or (blobs.get(rel) and blobs[rel] == current_blob(rel)):
                self.files[rel] = (set(entry["executable"]),
                                   {int(k): v for k, v in entry["reached"].items()})

    def tests(self, rel, n, text=""):
        """The tests reaching line n of rel ([] none), or None (not mapped).
        A line gcov does not list takes its neighbours' tests (the rest of a
        statement that starts above it), unless it starts in the first
        column (`text`, the line): a declaration at namespace scope (a
        constant, a default argument) has effect wherever it is used, so it
        is tested by its folder's whole list."""
        if str(rel) not in self.files:
            return None
        exe, reached = self.files[str(rel)]
        if n not in exe and text[:1] not in ("", " ", "\t", "}", "#"):
            return None
        lines = [n] if n in exe else [
            max((x for x in exe if x < n), default=None),
            min((x for x in exe if x > n), default=None)]
        names = set()
        for x in lines:
            if x is not None:
                names.update(self.data["tests"][i] for i in reached.get(x, []))
        if not names and not str(rel).endswith(".cc"):
            return None  # a header's line may be reached only inlined into a test
        return sorted(names)


_SOURCES = {}


def source_line(tree, rel, n):
    """Line n of rel as the tree holds it unmutated: each file read once
    (the run restores a mutated file before it asks again)."""
    key = (str(tree), str(rel))
    if key not in _SOURCES:
        _SOURCES[key] = (Path(tree) / rel).read_text().splitlines()
    return _SOURCES[key][n - 1]


_BLOBS = {}


def current_blob(rel):
    if not _BLOBS:
        for line in git("ls-files", "-s").splitlines():
            meta, _, path = line.partition("\t")
            _BLOBS[path] = meta.split()[1]
    return _BLOBS.get(rel)


def load_coverage(spec):
    sys.path.insert(0, str(ROOT / "scripts"))
    import covmap
    if spec == "off":
        return None
    if spec != "auto":
        return Coverage(json.loads(Path(spec).read_text()), exact=False)
    data = covmap.load()
    if data:
        return Coverage(data, exact=True)
    # The newest map of another tree, for the files that have not changed.
    maps = sorted(covmap.cache_dir().glob("covmap-*.json"), key=lambda p: p.stat().st_mtime)
    return Coverage(json.loads(maps[-1].read_text()), exact=False) if maps else None


# Not exit statuses (a process killed by signal N returns -N).
TIMED_OUT_WAITING = -1000  # the machine was busy: worth a second, longer chance
TIMED_OUT_SPINNING = -1001  # it had a core and used it: a loop, killed at once


def timeout_kind(cpu_seconds, wall_seconds):
    """A test binary that ran out its time while it held a core for at least
    half of it was computing, not waiting for a loaded machine: a mutant that
    loops (a loop bound or a cursor that no longer moves). A second chance at
    three times the time would only cost minutes. One that was mostly off the
    CPU (a machine busy with builds, or a wait) gets the second chance."""
    return TIMED_OUT_SPINNING if cpu_seconds >= 0.5 * wall_seconds else TIMED_OUT_WAITING


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def group_cpu(pgid):
    """CPU seconds used so far by the processes of process group `pgid` and
    the children they reaped. A test binary's kiln child that loops is
    killed with its group, never reaped by this process: RUSAGE_CHILDREN
    alone would call its timeout a wait and give it a second, longer run."""
    ticks = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        # After the name: state ppid pgrp ...; utime stime cutime cstime are
        # the 14th to 17th fields of the whole line (proc(5)).
        if len(fields) > 14 and int(fields[2]) == pgid:
            ticks += sum(int(f) for f in fields[11:15])
    return ticks / os.sysconf("SC_CLK_TCK")


def run_capture(cmd, cwd, timeout, env=None):
    """(exit status, or TIMED_OUT_WAITING / TIMED_OUT_SPINNING, output)."""
    with tempfile.TemporaryFile() as out:
        with subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                              stdin=subprocess.DEVNULL, start_new_session=True,
                              env=env) as p:
            cpu0, t0 = children_cpu(), time.time()
            try:
                rc = p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                in_group = group_cpu(p.pid)  # before the kill: its members are gone after
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()  # its CPU time (and what it waited for) is counted now
                rc = timeout_kind(max(in_group, children_cpu() - cpu0), time.time() - t0)
            except BaseException:  # stopped (a signal): the tests stop too
                os.killpg(p.pid, signal.SIGKILL)
                raise
        out.seek(0)
        return rc, out.read().decode(errors="replace")


def killer_of(output, fallback, rc=1):
    """The test a failed run names: GoogleTest's first FAILED line, else the
    test it was running when it crashed or hung, else ctest's list. A
    parameterized test's FAILED line goes on ", where GetParam() = ...": the
    name stops before the comma (a name with it is in no test listing, so the
    kill would never stand in a later run)."""
    m = re.search(r"^\[  FAILED  \] ([^\s,]+)", output, re.M)
    if m:
        return m.group(1)
    runs = re.findall(r"^\[ RUN      \] (\S+)", output, re.M)
    if runs:
        return runs[-1] + (" (timed out)" if rc in (TIMED_OUT_WAITING, TIMED_OUT_SPINNING)
                           else " (crashed)")
    m = re.search(r"^\s*\d+ - (\S+) \(", output, re.M)
    if m:
        return m.group(1)
    return fallback


class CostModel:
    """How long a mutant will take, so that --budget starts no sample mutant
    that would end past it (it is named as not measured, and the next one
    that fits runs): its objects to rebuild (a header's every dependent object,
    else one) times the build seconds per object this run has measured so
    far (PRIOR_OBJECT_SECONDS before its first build), plus its first test's
    time on the unmutated tree (the time of a mutant that test kills; a
    survivor runs them all and may end past the budget). A header mutant that
    rebuilds forty objects is not started in the last seconds of the budget,
    to run minutes past it."""
    PRIOR_OBJECT_SECONDS = 4.0

    def __init__(self):
        self.build_seconds = 0.0
        self.objects = 0

    def per_object(self):
        return self.build_seconds / self.objects if self.objects else self.PRIOR_OBJECT_SECONDS

    def estimate(self, objects, test_seconds):
        return max(1, objects) * self.per_object() + test_seconds

    def observe(self, objects, build_seconds):
        self.build_seconds += build_seconds
        self.objects += max(1, objects)


class DoesNotBuild(Exception):
    """A mutant the targets of its next tests cannot be built from."""


class Runner:
    """Runs a mutant's tests, quickest first, until one fails. `prepare`
    (targets -> bool), when given, builds each step's targets just before
    the step runs, so that a mutant killed by its first tests never waits
    for the binaries of the others (a header's includers in other folders,
    the Python module); DoesNotBuild when they cannot be built."""

    def __init__(self, build, tree, timeout_factor, test_costs, listing):
        self.build, self.tree = build, tree
        self.factor = timeout_factor
        self.costs = test_costs
        self.listing = listing

    def plan(self, names):
        """[(cost, command, label, targets)] for ctest names, gtest ones
        grouped by binary, quickest first; and the build targets they all
        need."""
        gtest, other, targets, other_targets = {}, [], set(), set()
        for name in names:
            command, _ = self.listing.get(name, ([], None))
            if not command:
                continue
            exe = Path(command[0])
            if any(a.startswith("--gtest_filter=") for a in command):
                gtest.setdefault(str(exe), []).append(command)
                targets.add(exe.name)
            else:
                other.append(name)
                if self.build in exe.parents:
                    other_targets.add(exe.name)
                else:  # scripts: they run the kiln command or the C validator
                    other_targets.update(["kiln", "kiln_c_validate"])
        targets |= other_targets
        steps = []
        for exe, commands in gtest.items():
            filters = [a[len("--gtest_filter="):] for c in commands for a in c
                       if a.startswith("--gtest_filter=")]
            cost = sum(self.costs.get(f, 1.0) for f in filters)
            steps.append((cost, [exe, "--gtest_fail_fast", "--gtest_also_run_disabled_tests",
                                 "--gtest_filter=" + ":".join(filters)], Path(exe).name,
                          [Path(exe).name]))
        if other:
            cost = sum(self.costs.get(n, 1.0) for n in other)
            steps.append((cost, ["ctest", "--test-dir", str(self.build), "--stop-on-failure",
                                 "-R", "^(" + "|".join(re.escape(n) for n in other) + ")$"],
                          "ctest", sorted(other_targets)))
        steps.sort(key=lambda s: s[0])
        return steps, sorted(targets)

    def run_names(self, names, prepare=None):
        """None when every test passes, else the killing test."""
        steps, _ = self.plan(names)
        for cost, cmd, label, targets in steps:
            if prepare and not prepare(targets):
                raise DoesNotBuild(label)
            cwd = self.build / "tests" if label != "ctest" else self.tree
            timeout = max(30.0, self.factor * cost)
            rc, output = run_capture(cmd, cwd, timeout)
            if rc == TIMED_OUT_WAITING:  # a loaded machine: a second chance, three times as long
                rc, output = run_capture(cmd, cwd, 3 * timeout)
            if rc != 0:
                return killer_of(output, label, rc)
        return None

    def run_entries(self, entries, timeouts, prepare=None):
        for e in entries:
            if prepare and not prepare(build_targets([e])):
                raise DoesNotBuild(e)
            rc, output = run_capture(test_command(self.build, e), self.tree, timeouts[e])
            if rc == TIMED_OUT_WAITING:  # a loaded machine: a second chance, three times as long
                rc, output = run_capture(test_command(self.build, e), self.tree,
                                         3 * timeouts[e])
            if rc != 0:
                return killer_of(output, binary(e), rc)
        return None


def changed_lines(base):
    """{file: {line numbers}} changed in the checkout since base."""
    diff = git("diff", "-U0", base, "--")
    out, current = {}, None
    for line in diff.splitlines():
        if line.startswith("+++ "):
            current = line[6:] if line.startswith("+++ b/") else None
        elif line.startswith("@@") and current:
            m = re.match(r"@@ -\S+ \+(\d+)(?:,(\d+))? @@", line)
            start, count = int(m.group(1)), int(m.group(2) or 1)
            out.setdefault(current, set()).update(range(start, start + count))
    return out


def reusable(row, listing, tests_now):
    """Whether a ledger row still stands: an equivalence or an invalid
    mutant always (the hash covers its code), a kill while the killing test
    exists, a survivor while the tests are those it survived; a pending
    mutant never (it was not measured: any run that chooses it measures it)."""
    if row["result"] == "pending":
        return False
    if row["result"] in ("equivalent", "invalid"):
        return True
    if row["result"] == "killed":
        return row["detail"].split(" ")[0] in listed_names(listing) or row["detail"] in (
            [Path(c[0]).name for c, _ in listing.values() if c] + ["ctest"])
    return row["tests"] == tests_now


def ledger_choice(row, listing, tests_now, retest=False, unmeasured=False, fresh=False):
    """What a run does with a chosen mutant and its ledger row (or None):
    "run" it, "reuse" the row (reported, not run), or "skip" it (--unmeasured:
    a measured mutant is neither run nor reported). `fresh`: a mutant of the
    gate's random sample, which is measured on this tree whatever the ledger
    says (the figure is measured, not looked up), but a person's reading of
    an equivalence and a mutant that does not build, which a run cannot
    overturn but by a kill, stand."""
    if row and unmeasured and row["result"] != "pending":
        return "skip"
    if fresh and not (row and row["result"] in ("equivalent", "invalid")):
        return "run"
    if row and not retest and reusable(row, listing, tests_now):
        return "reuse"
    return "run"


_LISTED = {}


def listed_names(listing):
    """The tests a ctest listing holds, by the name GoogleTest reports when
    one fails: gtest_discover_tests names a parameterized test
    "Suite/Test.Name/Case  # GetParam() = ...", the FAILED line
    "Suite/Test.Name/Case"."""
    key = id(listing)
    if key not in _LISTED or _LISTED[key][0] is not listing:
        _LISTED[key] = (listing, {name.split("  # GetParam() = ")[0] for name in listing})
    return _LISTED[key][1]


def summary_table(all_mutants, path):
    """Per folder: the population, and the ledger's results for the mutants
    that still exist (same hash)."""
    rows = read_ledger(path)
    texts = {}
    print("| folder | mutants | measured | killed | equivalent | survived (no coverage) "
          "| invalid | killed of non-equivalent | pending |")
    print("|---|---|---|---|---|---|---|---|---|")
    for folder in FOLDERS:
        ms = [m for m in all_mutants if folder_of(m[0]) == folder]
        got = []
        for rel, n, what, _ in ms:
            if rel not in texts:
                texts[rel] = (ROOT / rel).read_text().splitlines()
            row = rows.get((str(rel), what, context_hash(texts[rel], n, what)))
            if row:
                got.append(row["result"])
        pending = got.count("pending")
        got = [g for g in got if g != "pending"]
        k, e, i = got.count("killed"), got.count("equivalent"), got.count("invalid")
        nc = got.count("no-coverage")
        s = got.count("survived") + nc
        rate = "%.1f%%" % (100.0 * k / (k + s)) if k + s else "-"
        print("| %s/ | %d | %d | %d | %d | %d (%d) | %d | %s | %d |" % (
            folder, len(ms), len(got), k, e, s, nc, i, rate, pending))
    print("\nledger %s, commit %s" % (path.relative_to(ROOT) if path.is_relative_to(ROOT)
                                      else path, ledger_commit(path)))
    return 0


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
    ap.add_argument("--only", action="append", default=[], metavar="FILE:LINE or FILE:TEXT:WHAT",
                    help="only mutants of line LINE of FILE, or of lines of FILE containing "
                         "TEXT (which may contain ':') whose description contains WHAT "
                         "(repeatable), e.g. to re-test survivors")
    ap.add_argument("--coverage", default="auto", metavar="auto|off|MAP",
                    help="run for each mutant only the tests whose coverage reaches its line "
                         "(scripts/covmap.py; auto: this tree's cached map, else the newest "
                         "cached map for the files it was made from; --build only)")
    ap.add_argument("--confirm", action="store_true",
                    help="a mutant the coverage-selected tests let survive is run against its "
                         "folder's whole list of tests before it is called a survivor")
    ap.add_argument("--ledger", type=Path, nargs="?", const=LEDGER,
                    help="skip mutants the ledger (default mutation/ledger.tsv) records as "
                         "still standing, and record the results in it")
    ap.add_argument("--retest", action="store_true", help="with --ledger: run every mutant")
    ap.add_argument("--unmeasured", action="store_true",
                    help="with --ledger: only the mutants it lacks or holds as pending (a "
                         "survivor is not run again for tests added since it survived)")
    ap.add_argument("--budget", type=float, default=0.0, metavar="SECONDS",
                    help="start no mutant after this many seconds (0: no limit); those left "
                         "are listed as not measured (the gate's mutants run first)")
    ap.add_argument("--changed", metavar="BASE", nargs="?", const="ledger",
                    help="the gate: every mutant on lines changed since BASE (default: the "
                         "ledger's commit) must be killed or recorded equivalent; --sample N "
                         "adds N mutants of the rest drawn with a seed from HEAD, reported "
                         "and held to --min-kill")
    ap.add_argument("--record-pending", action="store_true",
                    help="with --changed --ledger: record every gate mutant the ledger lacks as "
                         "pending (not measured) and move the ledger's commit to HEAD")
    ap.add_argument("--summary", action="store_true",
                    help="print the ledger's results per folder (a Markdown table) and stop")
    args = ap.parse_args()
    all_mutants = mutants()
    if args.summary:
        return summary_table(all_mutants, args.ledger or LEDGER)
    chosen = all_mutants
    if args.folder:
        chosen = [m for m in chosen if folder_of(m[0]) in args.folder]
    if args.only:
        def wanted(m):
            rel, n, what, _ = m
            line = (ROOT / rel).read_text().splitlines()[n - 1]
            for spec in args.only:
                f, _, rest = spec.partition(":")
                if not str(rel).endswith(f):
                    continue
                if rest.isdigit():
                    if n == int(rest):
                        return True
                    continue
                text, sep, desc = rest.rpartition(":")
                if not sep:
                    text, desc = rest, ""
                if text in line and desc in what:
                    return True
            return False
        chosen = [m for m in chosen if wanted(m)]
    gate = []
    fresh = set()  # the gate's sample: measured on this tree, not read from the ledger
    if args.changed:
        base = ledger_commit(args.ledger or LEDGER) if args.changed == "ledger" else args.changed
        if not base:
            print("--changed: the ledger names no commit; the last commit's changes instead",
                  file=sys.stderr)
            base = "HEAD~1"
        try:
            lines = changed_lines(base)
        except subprocess.CalledProcessError:
            print("--changed: %s is not in this history; the last commit's changes instead"
                  % base, file=sys.stderr)
            base = "HEAD~1"
            lines = changed_lines(base)
        gate = [m for m in chosen if m[1] in lines.get(str(m[0]), ())]
        rest = [m for m in chosen if m not in gate]
        args.seed = int(git("rev-parse", "HEAD")[:8], 16)
        sample = stratified(rest, args.sample, args.seed) if args.sample else []
        print("gate: %d mutants on the lines changed since %s; sample: %d of the other %d "
              "(seed %d, from HEAD)" % (len(gate), base[:12], len(sample), len(rest),
                                        args.seed), flush=True)
        chosen = gate + sample
        fresh.update(sample)
        args.confirm = True
    elif args.sample:
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
    texts = {}

    def lines_of(rel):
        if rel not in texts:
            texts[rel] = (ROOT / rel).read_text().splitlines()
        return texts[rel]
    keys = {m: (str(m[0]), m[2], context_hash(lines_of(m[0]), m[1], m[2])) for m in chosen}
    population = []

    def population_keys():
        if not population:
            population.append({(str(m[0]), m[2], context_hash(lines_of(m[0]), m[1], m[2])): m[1]
                               for m in all_mutants})
        return population[0]
    ledger_path = args.ledger
    rows = read_ledger(ledger_path) if ledger_path else {}
    if args.changed and not ledger_path:
        rows = read_ledger(LEDGER)
    tests_now = tests_hash()
    head = git("rev-parse", "HEAD")
    # The ledger's commit is the gate's base: every mutant on a line changed
    # before it is recorded. It moves to HEAD only when a run measured all of
    # them (the gate's every mutant, or the whole population), so a run the
    # budget or a signal cut short leaves the rest in the next gate.
    base_commit = (ledger_commit(ledger_path) if ledger_path else None) or head[:12]
    complete = []  # [True] once such a run has measured its last mutant
    whole = args.changed == "ledger" or not (args.changed or args.sample or args.folder
                                             or args.only or args.unmeasured)
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
        coverage = load_coverage(args.coverage)
        if coverage:
            print("coverage map: %s tree %s, %d files" % (
                "this" if coverage.exact else "another", (coverage.data.get("tree") or "with changes")[:12],
                len(coverage.files)), flush=True)
    else:
        work = args.work or Path(tempfile.mkdtemp(prefix="kiln-mutate-"))
        tree = work / "src"
        build = work / "build"
        coverage = None
    results = []  # (rel, n, what, verdict, detail, recorded)
    unmeasured = []
    model = CostModel()
    gate_set = {(m[0], m[1], m[2]) for m in gate}
    started = time.time()
    mutated = None  # (path, original text) while a mutant is applied
    for s in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, on_signal)
    binaries = build_targets(needed)
    built_targets = set(binaries)
    listing = {}
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
        listing = ctest_listing(build)
        dependents = header_dependents(build, tree)

        def present(entry):
            if not entry.startswith("ctest:"):
                return True
            regex = re.compile(entry[len("ctest:"):].partition("=")[0])
            return any(regex.search(name) for name in listing)
        timeouts = {}
        costs, test_costs = ctest_costs(build) if in_place else ({}, {})
        runner = Runner(build, tree, args.timeout, test_costs, listing)
        todo = []
        for m in chosen:
            row = rows.get(keys[m])
            choice = ledger_choice(row, listing, tests_now, args.retest, args.unmeasured,
                                   fresh=m in fresh)
            if choice == "reuse":
                results.append((m[0], m[1], m[2], row["result"], row["detail"], True))
            elif choice == "run":
                todo.append(m)
        if len(todo) < len(chosen):
            print("%d of %d mutants stand as the ledger records them" % (
                len(chosen) - len(todo), len(chosen)), flush=True)
        if args.record_pending and args.changed and ledger_path:
            for m in todo:
                rows[keys[m]] = {
                    "file": str(m[0]), "line": str(m[1]), "operator": m[2], "hash": keys[m][2],
                    "result": "pending", "detail": "changed since %s, not measured yet" % base[:12],
                    "tests": tests_now, "commit": head[:12]}
            print("%d mutants recorded as pending (not measured)" % len(todo), flush=True)
            todo = []
        # Folder lists are needed without a map, for files it lacks, and to confirm.
        folder_needed = []
        for rel, n, _, _ in todo:
            if coverage is None or args.confirm or coverage.tests(
                    rel, n, source_line(tree, rel, n)) is None:
                for e in entries_of(rel, dependents, present):
                    if e not in folder_needed:
                        folder_needed.append(e)
        # A header's other folders' binaries, built before their baseline.
        extra = sorted(set(build_targets(folder_needed)) - built_targets)
        if extra and run(["ninja", "-C", str(build)] + extra, tree, 3600) != 0:
            print("the unmutated tree does not build %s" % " ".join(extra), file=sys.stderr)
            return 2
        built_targets.update(extra)
        for e in folder_needed:
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
        print("baseline: %.0fs (build%s; %s)" % (time.time() - started, "".join(
            ", %s %.0fs" % (e, timeouts[e] / args.timeout) for e in folder_needed),
            "times from ctest" if costs else "times measured"), flush=True)
        # The mutants' objects are not worth keeping in a compiler cache.
        mutant_env = dict(os.environ, CCACHE_READONLY="1")
        for k, (rel, n, what, new_line) in enumerate(todo, 1):
            if args.budget and time.time() - started > args.budget:
                unmeasured.extend(todo[k - 1:])
                print("budget of %.0fs spent: %d mutants not measured" % (
                    args.budget, len(todo) - k + 1), flush=True)
                break
            entries = entries_of(rel, dependents, present)
            if not entries:  # this build has none of the tests that see the file
                unmeasured.append((rel, n, what, new_line))
                print("[%d/%d] not measured %s:%d %s -- this build has no test of it" % (
                    k, len(todo), rel, n, what), flush=True)
                continue
            selected = coverage.tests(rel, n, source_line(tree, rel, n)) if coverage else None
            objects = len(dependents.get(str(rel), [])) if rel.suffix in (".h", ".inc") else 1
            if args.budget and (rel, n, what) not in gate_set and (
                    selected != [] or args.confirm):
                # Its first test's time: a mutant that test kills ends then
                # (most do); a survivor runs the rest too and may end past.
                # No map, or no test reaching the line under --confirm: the
                # folder's first binary, on the unmutated tree.
                steps = runner.plan(selected)[0] if selected else []
                test_seconds = steps[0][0] if steps else timeouts.get(entries[0], 0.0) / args.timeout
                guess = model.estimate(objects, test_seconds)
                if time.time() - started + guess > args.budget:
                    # Named, not measured; a cheaper mutant after it may still fit.
                    unmeasured.append((rel, n, what, new_line))
                    print("[%d/%d] not measured %s:%d %s -- about %.0fs, past the budget of "
                          "%.0fs" % (k, len(todo), rel, n, what, guess, args.budget), flush=True)
                    continue
            path = tree / rel
            original = path.read_text()
            t0 = time.time()
            if selected == [] and not args.confirm:
                verdict, detail = "no-coverage", "no test reaches the line"
            else:
                if selected is not None:
                    _, build_list = runner.plan(selected)
                else:
                    build_list = build_targets(entries)
                if args.confirm and selected is not None:
                    build_list = sorted(set(build_list) | set(build_targets(entries)))
                # Every object that compiles a mutated header: a mutant that
                # breaks one of them (a static_assert) does not build.
                build_list = sorted(set(build_list) | set(dependents.get(str(rel), [])))
                built_targets.update(build_list)
                lines = original.splitlines(keepends=True)
                lines[n - 1] = new_line + "\n"
                mutated = (path, original)
                path.write_text("".join(lines))
                build_seconds = [0.0]

                def prepare(targets):
                    # Built in stages: each step's binaries just before it runs.
                    t_build = time.time()
                    ok = run(["ninja", "-C", str(build)] + sorted(targets), tree, 1800,
                             env=mutant_env) == 0
                    build_seconds[0] += time.time() - t_build
                    return ok
                try:
                    killer = runner.run_names(selected, prepare) if selected is not None else \
                        runner.run_entries(entries, timeouts, prepare)
                    if killer is None and selected is not None and args.confirm:
                        killer = runner.run_entries(entries, timeouts, prepare)
                        if killer:
                            killer += " (outside the coverage map)"
                    # A survivor (so far): every includer must build, the
                    # ones no test ran included, or it is invalid. A kill
                    # ends the mutant without them: its test told it apart.
                    if killer is None and not prepare(build_list):
                        raise DoesNotBuild("the includers")
                    if killer:
                        verdict, detail = "killed", killer
                    elif selected == []:
                        verdict, detail = "no-coverage", "no test reaches the line"
                    else:
                        verdict, detail = "survived", ""
                except DoesNotBuild:
                    verdict, detail = "invalid", "does not build"
                model.observe(objects, build_seconds[0])
                path.write_text(original)
                mutated = None
            results.append((rel, n, what, verdict, detail, False))
            old = rows.get(keys[(rel, n, what, new_line)])
            if old and old["result"] == "equivalent" and verdict != "killed":
                verdict, detail = "equivalent", old["detail"]  # a person's reading stands
            if ledger_path:
                rows[keys[(rel, n, what, new_line)]] = {
                    "file": str(rel), "line": str(n), "operator": what,
                    "hash": keys[(rel, n, what, new_line)][2], "result": verdict,
                    "detail": detail, "tests": tests_now, "commit": head[:12]}
                # Written after every mutant, so that a stopped run keeps its results.
                write_ledger(ledger_path, rows, population_keys(), base_commit)
            print("[%d/%d] %-11s %s:%d %s%s (%.0fs)" % (
                k, len(todo), verdict, rel, n, what, (" -- " + detail) if detail else "",
                time.time() - t0), flush=True)
        if whole and not unmeasured:
            complete.append(True)
    except (Interrupted, KeyboardInterrupt) as e:
        print("mutation run stopped: %s" % (e or "interrupted"), file=sys.stderr)
        return 2
    finally:
        if mutated:
            mutated[0].write_text(mutated[1])
        if in_place:
            # The build tree back to the restored sources (cache hits with ccache).
            if run(["ninja", "-C", str(build)] + sorted(built_targets), tree, 3600) != 0:
                print("rebuilding %s from the restored sources failed" % build, file=sys.stderr)
        elif not args.work:
            shutil.rmtree(work, ignore_errors=True)
        if ledger_path and (results or complete):
            write_ledger(ledger_path, rows, population_keys(),
                         head[:12] if complete else base_commit)

    def count(rs):
        v = [r for r in rs if r[3] != "invalid"]
        k = [r for r in v if r[3] == "killed"]
        e = [r for r in v if r[3] == "equivalent"]
        nc = [r for r in v if r[3] == "no-coverage"]
        judged = len(v) - len(e)
        return ("%d mutants: %d killed, %d equivalent, %d survived (%d of them reached by no "
                "test), %d invalid (did not build): %.1f%% of non-equivalent killed") % (
            len(rs), len(k), len(e), judged - len(k), len(nc), len(rs) - len(v),
            100 * (len(k) / judged if judged else 1.0))
    sample_results = [r for r in results if (r[0], r[1], r[2]) not in
                      {(m[0], m[1], m[2]) for m in gate}]
    summary = count(sample_results)
    per_folder = ["%s/: %s" % (f, count([r for r in sample_results if folder_of(r[0]) == f]))
                  for f in FOLDERS if any(folder_of(r[0]) == f for r in sample_results)]
    for line in per_folder:
        print("  " + line)
    print(("sample: " if gate else "") + summary)
    failed_gate = []
    if args.changed:
        gate_keys = {(m[0], m[1], m[2]) for m in gate}
        gate_results = [r for r in results if (r[0], r[1], r[2]) in gate_keys]
        failed_gate = [r for r in gate_results if r[3] in ("survived", "no-coverage")]
        print("gate: %s" % count(gate_results))
        for m in unmeasured:
            if m in gate:
                print("  not measured (--budget): %s:%d %s" % (m[0], m[1], m[2]))
        for r in failed_gate:
            print("  not killed, not recorded equivalent: %s:%d %s (%s)" % (
                r[0], r[1], r[2], r[3]))
    print("time: %.0fs" % (time.time() - started))
    if args.report:
        lines = ["# Mutation testing", "",
                 "Generated by `python3 scripts/mutate.py%s%s`." % (
                     " --sample %d --seed %d" % (args.sample, args.seed) if args.sample else "",
                     "".join(" --folder " + f for f in args.folder)),
                 "", summary, ""] + ["- " + line for line in per_folder] + [
                 "", "## Survivors", ""]
        lines += ["- `%s:%d` %s" % (r[0], r[1], r[2]) for r in results
                  if r[3] in ("survived", "no-coverage")] or ["None."]
        args.report.write_text("\n".join(lines) + "\n")
    valid = [r for r in sample_results if r[3] not in ("invalid", "equivalent")]
    share = len([r for r in valid if r[3] == "killed"]) / len(valid) if valid else 1.0
    if failed_gate:
        return 1
    return 1 if share < args.min_kill else 0


if __name__ == "__main__":
    sys.exit(main())
