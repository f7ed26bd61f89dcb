"""Checks, with NumPy, what `kiln unpack` wrote against the original arrays.

usage: check_npy.py ORIGINAL_DIR UNPACK_DIR

Reads UNPACK_DIR/index.tsv; each row's tensor name is the stem of a file in
ORIGINAL_DIR. Every original must appear once, load back with np.load, and
be equal (np.array_equal) with the same shape and the same dtype in
little-endian byte order. Exits 1 and prints the differences otherwise.
"""
import os
import sys

import numpy as np


def main():
    original_dir, unpack_dir = sys.argv[1], sys.argv[2]
    with open(os.path.join(unpack_dir, "index.tsv"), encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t") for line in f]
    header, rows = rows[0], rows[1:]
    col = {name: i for i, name in enumerate(header)}
    errors = []
    seen = set()
    for row in rows:
        name, file_name = row[col["name"]], row[col["file"]]
        seen.add(name)
        want = np.load(os.path.join(original_dir, name + ".npy"))
        got = np.load(os.path.join(unpack_dir, file_name))
        if got.dtype.byteorder not in "<|=":
            errors.append("%s: unpacked dtype %s is not little-endian" % (name, got.dtype.str))
        if got.dtype != want.dtype.newbyteorder("<") and got.dtype != want.dtype:
            errors.append("%s: dtype %s, want %s" % (name, got.dtype.str, want.dtype.str))
        if got.shape != want.shape:
            errors.append("%s: shape %s, want %s" % (name, got.shape, want.shape))
        elif not np.array_equal(got, want):
            errors.append("%s: values differ: %r vs %r" % (name, got, want))
    originals = {f[:-4] for f in os.listdir(original_dir) if f.endswith(".npy")}
    for missing in sorted(originals - seen):
        errors.append("%s: not in index.tsv" % missing)
    for e in errors:
        print(e)
    if errors:
        sys.exit(1)
    print("ok: %d arrays equal" % len(rows))


if __name__ == "__main__":
    main()
