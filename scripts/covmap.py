#!/usr/bin/env python3
"""The coverage map for mutation testing: which ctest tests reach each line.

scripts/mutate.py runs, for each mutant, only the tests whose coverage
reaches the mutated line. This script measures that once per tree: in a
build configured with gcc's --coverage (see --configure), it runs every
ctest test alone (its command, working directory and environment as ctest
would), after removing every .gcda file of the build, and asks gcov which
lines of the mutated folders' sources the test executed (the test binary
and every program it starts, e.g. the kiln command, write their counts to
the same .gcda files). The result is a JSON map

    {"tree": <git tree hash>, "tests": [name, ...], "seconds": <cost>,
     "files": {"base/src/x.cc": {"executable": [line, ...],
                                 "reached": {"80": [test index, ...]}}}}

kept in a cache directory (KILN_MUTATION_CACHE, default
~/.cache/kiln-mutation) as covmap-<tree hash>.json, where the tree hash is
that of the commit checked out (HEAD^{tree}); a checkout with uncommitted
changes gets no cached map (its hash would not name its content).

    python3 scripts/covmap.py --configure build/mutcov   # configure the build
    ninja -C build/mutcov                                # build it
    python3 scripts/covmap.py --build build/mutcov       # measure, write the map
    python3 scripts/covmap.py --path                      # where the map is kept
    python3 scripts/covmap.py --build build/mutcov --binary kiln_tests \
        --binary kiln_memory_tests --folder core --folder parser   # a partial map
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The folders whose sources are mutated (scripts/mutate.py FOLDERS).
SOURCE_FOLDERS = ("core", "parser", "base", "formats", "writer", "map", "capi", "cli")


def cache_dir():
    return Path(os.environ.get("KILN_MUTATION_CACHE",
                               Path.home() / ".cache" / "kiln-mutation"))


def tree_hash():
    """HEAD's tree, or None when tracked files differ from it."""
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain",
                            "--untracked-files=no"], check=True, stdout=subprocess.PIPE,
                           text=True).stdout
    if dirty.strip():
        return None
    return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD^{tree}"], check=True,
                          stdout=subprocess.PIPE, text=True).stdout.strip()


def map_path(tree=None):
    tree = tree or tree_hash()
    return cache_dir() / ("covmap-%s.json" % tree) if tree else None


def load(path=None):
    """The map for this tree (or at path), or None."""
    path = path or map_path()
    if path and Path(path).is_file():
        return json.loads(Path(path).read_text())
    return None


def configure(build):
    flags = "--coverage -fprofile-abs-path"
    subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), "-G", "Ninja",
                    "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_CXX_FLAGS_RELEASE=-O1",
                    "-DCMAKE_C_FLAGS_RELEASE=-O1",
                    "-DCMAKE_CXX_FLAGS=%s -D_GLIBCXX_ASSERTIONS" % flags,
                    # __gcov_dump linked in: a test's child writes its
                    # counters before _exit (tests/support/syscall_fault.h).
                    "-DCMAKE_C_FLAGS=%s" % flags,
                    "-DCMAKE_EXE_LINKER_FLAGS=--coverage -Wl,-u,__gcov_dump",
                    "-DCMAKE_SHARED_LINKER_FLAGS=--coverage", "-DKILN_BUILD_BENCH=OFF",
                    "-DKILN_BUILD_PYTHON=OFF", "-DKILN_WERROR=OFF"], check=True)


def ctest_tests(build):
    listing = subprocess.run(["ctest", "--show-only=json-v1"], cwd=build, check=True,
                             stdout=subprocess.PIPE, text=True).stdout
    out = []
    for test in json.loads(listing).get("tests", []):
        props = {p["name"]: p["value"] for p in test.get("properties", [])}
        env = dict(os.environ)
        for kv in props.get("ENVIRONMENT", []):
            k, _, v = kv.partition("=")
            env[k] = v
        if props.get("DISABLED"):
            continue
        out.append((test["name"], test.get("command") or [],
                    props.get("WORKING_DIRECTORY", str(build)), env))
    return out


def reached_lines(gcdas, sources):
    """{source: ({executable lines}, {reached lines})} for the given .gcda
    files, only for the source paths (relative to ROOT) in `sources`."""
    out = {}
    if not gcdas:
        return out
    with tempfile.TemporaryDirectory() as tmp:
        # gcov writes nothing to the working directory with --stdout.
        text = subprocess.run(["gcov", "--json-format", "--stdout"] + [str(g) for g in gcdas],
                              cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              text=True).stdout
    for doc in text.splitlines():
        doc = doc.strip()
        if not doc.startswith("{"):
            continue
        data = json.loads(doc)
        for f in data.get("files", []):
            # Relative to the compiler's directory (ccache's CCACHE_BASEDIR makes them so).
            path = Path(data.get("current_working_directory", "/")) / f["file"]
            try:
                rel = str(path.resolve().relative_to(ROOT))
            except ValueError:
                continue
            if rel not in sources:
                continue
            exe, hit = out.setdefault(rel, (set(), set()))
            for line in f.get("lines", []):
                exe.add(line["line_number"])
                if line.get("count", 0) > 0:
                    hit.add(line["line_number"])
    return out


def source_files():
    files = subprocess.run(["git", "-C", str(ROOT), "ls-files", "--"] + [
        f + "/" for f in SOURCE_FOLDERS], check=True, stdout=subprocess.PIPE,
        text=True).stdout.split()
    return {f for f in files if f.endswith((".cc", ".h", ".inc"))}


def measure(build, timeout, only=None, verbose=False, binaries=(), folders=SOURCE_FOLDERS):
    build = build.resolve()
    # The library objects only (their sources are the ones mutated): gcov on
    # the test binaries' own objects would cost far more than it tells. Code
    # of a header that only a test object inlines is not seen; mutate.py
    # runs a header's whole folder of tests when the map has none for it.
    gcnos = sorted(g for f in folders for g in (build / f).rglob("*.gcno"))
    if not gcnos:
        sys.exit("%s has no .gcno files: configure it with --configure and build it" % build)
    gcdas = [g.with_suffix(".gcda") for g in gcnos]
    sources = {f for f in source_files() if f.split("/")[0] in folders}
    tests = ctest_tests(build)
    if only:
        tests = [t for t in tests if only in t[0]]
    if binaries:  # a partial map: only these test binaries' tests
        tests = [t for t in tests if t[1] and Path(t[1][0]).name in binaries]
    names = []
    files = {}
    failed = []
    started = time.time()
    for k, (name, command, cwd, env) in enumerate(tests):
        for g in gcdas:
            try:
                g.unlink()
            except FileNotFoundError:
                pass
        t0 = time.time()
        try:
            rc = subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                                timeout=timeout, start_new_session=True).returncode
        except subprocess.TimeoutExpired:
            rc = -1
        except OSError:
            rc = -2
        if rc != 0:
            failed.append(name)
        t1 = time.time()
        index = len(names)
        names.append(name)
        for rel, (exe, hit) in reached_lines([g for g in gcdas if g.exists()],
                                             sources).items():
            entry = files.setdefault(rel, {"executable": set(), "reached": {}})
            entry["executable"] |= exe
            for line in hit:
                entry["reached"].setdefault(line, []).append(index)
        if verbose:
            print("[%d/%d] %s: test %.1fs, gcov %.1fs%s" % (
                k + 1, len(tests), name, t1 - t0, time.time() - t1,
                "" if rc == 0 else " (exit %d)" % rc), flush=True)
    blobs = {}
    for line in subprocess.run(["git", "-C", str(ROOT), "ls-files", "-s"], check=True,
                               stdout=subprocess.PIPE, text=True).stdout.splitlines():
        meta, _, path = line.partition("\t")
        if path in sources:
            blobs[path] = meta.split()[1]
    out = {"tree": tree_hash(), "build": str(build), "tests": names, "failed": failed,
           "blobs": blobs, "binaries": sorted(binaries), "folders": sorted(folders),
           "seconds": round(time.time() - started, 1),
           "files": {rel: {"executable": sorted(e["executable"]),
                           "reached": {str(n): t for n, t in sorted(e["reached"].items())}}
                     for rel, e in sorted(files.items())}}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configure", type=Path, metavar="DIR",
                    help="configure a gcc --coverage build in DIR and stop")
    ap.add_argument("--build", type=Path, metavar="DIR", help="the built coverage build")
    ap.add_argument("--out", type=Path, help="write the map here (default: the cache)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per test")
    ap.add_argument("--only", help="only the tests whose name contains this (trying it out)")
    ap.add_argument("--binary", action="append", default=[],
                    help="only the tests of this test binary (repeatable): a partial map, "
                         "which mutate.py uses only for the folders whose tests all live in "
                         "these binaries")
    ap.add_argument("--folder", action="append", default=[], choices=SOURCE_FOLDERS,
                    help="only these folders' lines (repeatable; gcov reads fewer objects)")
    ap.add_argument("--path", action="store_true", help="print where this tree's map is kept")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    if args.path:
        print(map_path() or "(uncommitted changes: no cached map)")
        return 0
    if args.configure:
        configure(args.configure)
        return 0
    if not args.build:
        ap.error("--build DIR (or --configure DIR, --path)")
    result = measure(args.build, args.timeout, args.only, args.verbose, tuple(args.binary),
                     tuple(args.folder) or SOURCE_FOLDERS)
    out = args.out or map_path(result["tree"])
    if out is None:
        sys.exit("the checkout has uncommitted changes: give --out")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, separators=(",", ":")))
    lines = sum(len(f["reached"]) for f in result["files"].values())
    print("%d tests (%d failed in the coverage build), %d source lines reached, %.0fs: %s" % (
        len(result["tests"]), len(result["failed"]), lines, result["seconds"], out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
