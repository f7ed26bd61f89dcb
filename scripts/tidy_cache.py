#!/usr/bin/env python3
"""A cache of clean clang-tidy results, so that an unchanged file is not
analysed again (scripts/lint.sh, docs/ci.md).

A file's key is a SHA-256 of everything clang-tidy's verdict depends on:
clang-tidy's version, the .clang-tidy configuration, the file's compile
command (the checkout's path replaced by a placeholder) and the file as
clang's preprocessor expands it with that command, comments kept (-E -C:
every header it includes, NOLINT comments and line structure included, the
checkout's path replaced). Only clean results are recorded: a file with a
finding is analysed on every run until it is clean.

    tidy_cache.py split BUILD_DIR CACHE_DIR PENDING FILE...
        prints the files to analyse (no clean result recorded for their key)
        and writes their keys to PENDING
    tidy_cache.py record CACHE_DIR PENDING
        records PENDING's keys as clean (after clang-tidy found nothing)

The cache directory lives outside the checkout (default
~/.cache/kiln-clang-tidy); KILN_TIDY_CACHE=0 in lint.sh turns it off.
"""
import hashlib
import json
import os
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLACEHOLDER = b"@KILN_ROOT@"


def commands(build):
    """Each source's (directory, arguments) from BUILD/compile_commands.json."""
    out = {}
    for entry in json.loads((build / "compile_commands.json").read_text()):
        path = Path(entry["directory"], entry["file"]).resolve()
        args = entry.get("arguments") or shlex.split(entry["command"])
        out[str(path)] = (entry["directory"], args)
    return out


def preprocess_args(args, source):
    """The compile command as clang's preprocessor, comments kept."""
    clang = "clang" if source.endswith(".c") else "clang++"
    out = [clang]
    skip = False
    for a in args[1:]:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD") or a.startswith("-W"):
            continue  # warnings cannot change the expansion
        out.append(a)
    return out + ["-E", "-C", "-w", "-o", "-"]


def key(cmds, source, fixed):
    directory, args = cmds[source]
    expanded = subprocess.run(preprocess_args(args, source), cwd=directory,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    if expanded.returncode != 0:
        return None  # analyse it: clang-tidy will say what is wrong
    root = str(ROOT).encode()
    h = hashlib.sha256(fixed)
    h.update(" ".join(args).encode().replace(root, PLACEHOLDER))
    h.update(b"\0")
    h.update(expanded.stdout.replace(root, PLACEHOLDER))
    return h.hexdigest()


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "record":
        cache, pending = Path(sys.argv[2]), Path(sys.argv[3])
        cache.mkdir(parents=True, exist_ok=True)
        for line in pending.read_text().splitlines():
            k, _, name = line.partition(" ")
            (cache / k).write_text(name + "\n")
        return 0
    if len(sys.argv) < 5 or sys.argv[1] != "split":
        print(__doc__, file=sys.stderr)
        return 2
    build, cache, pending = Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4])
    files = [str(Path(f).resolve()) for f in sys.argv[5:]]
    version = subprocess.run(["clang-tidy", "--version"], stdout=subprocess.PIPE,
                             check=True).stdout
    fixed = version + b"\0" + (ROOT / ".clang-tidy").read_bytes() + b"\0"
    cmds = commands(build)
    known = [f for f in files if f in cmds]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        keys = dict(zip(known, pool.map(lambda f: key(cmds, f, fixed), known)))
    lines = []
    for f in files:
        k = keys.get(f)
        if k is None or not (cache / k).is_file():
            print(f)
            if k is not None:
                lines.append("%s %s" % (k, os.path.relpath(f, ROOT)))
    pending.write_text("".join(line + "\n" for line in lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
