"""kiln against numpy.load(allow_pickle=False), both ways.

usage: differential.py KILN [--mutations N] [--verbose]

Reader: every file of cases.py goes through `kiln pack out.klnt t=FILE`
(then `kiln inspect --json` and the block's payload bytes) and through
numpy.load. A failure: kiln reads a file numpy.load refuses, the two read
different tensors (dtype, shape, bytes), kiln exits with anything but 0 or 1,
or kiln's verdict is not the one the case expects (a "refuse" case that
numpy.load reads must name a row of docs/compatibility.md).

Writer: `kiln unpack` of every valid golden case (golden/manifest.tsv) and
of blocks with hostile zero-element shapes (built with golden/generate.py's
encoder); every .npy it writes must load in numpy.load with the block's
tensor (dtype, shape, bytes), and every .bin must hold the tensor's bytes
and be one numpy.load cannot read as .npy (no NumPy dtype, or numpy.load
refuses the header numpy's own writer makes for that dtype and shape).

Ends with "N passed, N failed"; exit 1 on any failure.
"""
import argparse
import collections
import io
import json
import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "golden"))

import cases  # noqa: E402
import generate  # noqa: E402  (golden/generate.py: the project's block encoder)

NUMPY_TO_KILN = {np.dtype(v): k for k, v in cases.KILN_TO_NUMPY.items()}


class Tally:
    def __init__(self):
        self.passed = 0
        self.failures = []
        self.counts = collections.Counter()

    def fail(self, what):
        self.failures.append(what)

    def ok(self):
        self.passed += 1


def numpy_load(path):
    """(array, None) or (None, the exception's text)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return np.load(path, allow_pickle=False), None
        except Exception as e:  # numpy.load's refusal, whatever its class
            return None, "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:120] if str(e) else "")


def le_bytes(a):
    """The array's elements in C order, little-endian."""
    le = a.dtype.newbyteorder("<") if a.dtype.byteorder == ">" else a.dtype
    return np.ascontiguousarray(a, dtype=le).tobytes()


def kiln_block_tensors(kiln, block):
    """[(dtype, shape, bytes)] of a block, from kiln inspect --json and the file."""
    r = subprocess.run([kiln, "inspect", "--json", block], capture_output=True)
    if r.returncode != 0:
        raise RuntimeError("kiln inspect %s: exit %d: %s" % (block, r.returncode, r.stderr.decode(errors="replace")))
    info = json.loads(r.stdout)
    base = info["header"]["payload_base"]
    with open(block, "rb") as f:
        data = f.read()
    out = []
    for t in info["tensors"]:
        start = base + t["byte_offset"]
        out.append((t["dtype"], tuple(t["shape"]), data[start:start + t["byte_length"]]))
    return out


def same_tensor(array, tensor):
    """None when numpy's array is kiln's tensor, else what differs."""
    dtype, shape, payload = tensor
    le = array.dtype.newbyteorder("<") if array.dtype.byteorder == ">" else array.dtype
    if NUMPY_TO_KILN.get(le) != dtype:
        return "dtype: numpy %s, kiln %s" % (array.dtype.str, dtype)
    if array.shape != shape:
        return "shape: numpy %s, kiln %s" % (array.shape, shape)
    if le_bytes(array) != payload:
        return "bytes differ (%d numpy, %d kiln)" % (array.nbytes, len(payload))
    return None


def check_reader(kiln, tmp, tally, mutation_count, verbose):
    path = os.path.join(tmp, "case.npy")
    block = os.path.join(tmp, "out.klnt")
    seen = collections.Counter()
    for c in cases.reader_cases(mutation_count):
        seen[c.name] += 1
        name = c.name if seen[c.name] == 1 else "%s #%d" % (c.name, seen[c.name])
        with open(path, "wb") as f:
            f.write(c.data)
        if os.path.exists(block):
            os.unlink(block)
        array, numpy_error = numpy_load(path)
        r = subprocess.run([kiln, "pack", block, "t=" + path], capture_output=True)
        err = r.stderr.decode(errors="replace").strip()
        if r.returncode not in (0, 1) or (r.returncode == 1 and not err):
            tally.fail("%s: kiln pack exit %d (%s)" % (name, r.returncode, err))
            continue
        kiln_reads = r.returncode == 0
        numpy_reads = numpy_error is None
        if kiln_reads and not numpy_reads:
            tally.fail("%s: LOOSER: kiln reads it, numpy.load refuses it (%s)" % (name, numpy_error))
            continue
        if kiln_reads:
            (tensor,) = kiln_block_tensors(kiln, block)
            diff = same_tensor(array, tensor)
            if diff:
                tally.fail("%s: different tensors: %s" % (name, diff))
                continue
        expected = {"read": True, "refuse": False}.get(c.kiln)
        if expected is not None and expected != kiln_reads:
            tally.fail("%s: kiln %s it, the case expects it %s (kiln: %s; numpy.load: %s)" % (
                name, "reads" if kiln_reads else "refuses", "read" if expected else "refused",
                err or "-", numpy_error or "reads it"))
            continue
        if numpy_reads and not kiln_reads and c.kiln == "refuse" and c.why not in cases.STRICTER:
            tally.fail("%s: kiln refuses what numpy.load reads, with no row in docs/compatibility.md (%s)"
                       % (name, err))
            continue
        outcome = ("both read" if kiln_reads else "kiln stricter" if numpy_reads else "both refuse")
        tally.counts["reader: " + outcome] += 1
        if outcome == "kiln stricter":
            tally.counts["  stricter: " + cases.STRICTER.get(c.why, "(generated cases)")] += 1
        if verbose:
            print("ok   %s: %s%s" % (name, outcome, " (%s)" % err if outcome == "kiln stricter" else ""))
        tally.ok()


def numpy_refuses_header(dtype, shape):
    """Whether numpy.load refuses the .npy numpy's own writer makes for an
    empty array of this dtype and shape."""
    f = io.BytesIO()
    np.lib.format.write_array_header_1_0(f, {"descr": dtype, "fortran_order": False, "shape": tuple(shape)})
    with tempfile.NamedTemporaryFile(suffix=".npy") as t:
        t.write(f.getvalue())
        t.flush()
        return numpy_load(t.name)[1] is not None


def check_unpacked(kiln, block, out, name, tally):
    """Unpacks `block` into `out` and checks every file against the block."""
    r = subprocess.run([kiln, "unpack", block, out], capture_output=True)
    if r.returncode != 0:
        tally.fail("unpack %s: exit %d: %s" % (name, r.returncode, r.stderr.decode(errors="replace")))
        return
    tensors = kiln_block_tensors(kiln, block)
    with open(os.path.join(out, "index.tsv"), encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t") for line in f][1:]
    if len(rows) != len(tensors):
        tally.fail("unpack %s: %d index rows for %d tensors" % (name, len(rows), len(tensors)))
        return
    for row in rows:
        i, file = int(row[0]), row[2]
        dtype, shape, payload = tensors[i]
        where = "unpack %s tensor %d (%s %s, %s)" % (name, i, dtype, list(shape), file)
        path = os.path.join(out, file)
        if file.endswith(".npy"):
            array, error = numpy_load(path)
            if error:
                tally.fail("%s: numpy.load refuses what unpack wrote: %s" % (where, error))
                continue
            diff = same_tensor(array, tensors[i])
            if diff:
                tally.fail("%s: %s" % (where, diff))
                continue
            tally.counts["unpack: .npy, numpy.load reads the same tensor"] += 1
        else:
            with open(path, "rb") as f:
                if f.read() != payload:
                    tally.fail("%s: .bin bytes differ from the tensor's" % where)
                    continue
            descr = cases.KILN_TO_NUMPY.get(dtype)
            if descr is not None and not numpy_refuses_header(descr, shape):
                tally.fail("%s: written as .bin, but numpy.load reads such an .npy" % where)
                continue
            tally.counts["unpack: .bin, " + ("NumPy has no such dtype" if descr is None
                                             else "numpy.load refuses the shape")] += 1
        tally.ok()


def hostile_blocks():
    """(name, block bytes): zero-element tensors at NumPy's size limits."""
    out = []
    max_intp = cases.MAX_INTP
    for kiln_name, descr in cases.KILN_TO_NUMPY.items():
        size = np.dtype(descr).itemsize
        edge = max_intp // size
        shapes = [(0, edge), (0, edge + 1), (edge + 1, 0), (0, 2**63), (2**64 - 1, 0), (0, 2**63 - 1),
                  (2**32, 2**32, 0), (0, 2**31, 2**32 // size), (0, 2**31, 2**32 // size - 1),
                  (0,) + (2**63 - 1,) * 7, (1, 0, 1)]
        ts = [generate.T(kiln_name, shape, name="%s_%d" % (kiln_name, k), data=b"") for k, shape in enumerate(shapes)]
        out.append((kiln_name + " hostile shapes", generate.build_block(ts)))
    # Non-empty neighbours and dtypes NumPy lacks, in one block.
    ts = [generate.T("u8", (3, 0, 2**63)), generate.T("f32", (2, 3)), generate.T("bf16", (2,)),
          generate.T("u4", (0, 2**64 - 1)), generate.T("c128", ()), generate.T("bool", (4,))]
    out.append(("mixed", generate.build_block(ts)))
    return out


def check_writer(kiln, tmp, tally):
    manifest = os.path.join(ROOT, "golden", "manifest.tsv")
    with open(manifest, encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t") for line in f if line.strip() and not line.startswith("#")]
    valid = [r[0] for r in rows[1:] if r[1] == "ok"]
    for k, case in enumerate(valid):
        check_unpacked(kiln, os.path.join(ROOT, "golden", "cases", case + ".klnt"),
                       os.path.join(tmp, "golden-%d" % k), case, tally)
    for k, (name, data) in enumerate(hostile_blocks()):
        block = os.path.join(tmp, "hostile-%d.klnt" % k)
        with open(block, "wb") as f:
            f.write(data)
        v = subprocess.run([kiln, "validate", block], capture_output=True)
        if v.returncode != 0:
            tally.fail("hostile block %s: not a valid block: %s" % (name, v.stdout.decode(errors="replace")))
            continue
        check_unpacked(kiln, block, os.path.join(tmp, "hostile-%d" % k), name, tally)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("kiln")
    p.add_argument("--mutations", type=int, default=int(os.environ.get("KILN_NUMPY_MUTATIONS", "600")))
    p.add_argument("--verbose", action="store_true")
    a = p.parse_args()
    print("reference: numpy.load(allow_pickle=False), NumPy %s" % np.__version__)
    tally = Tally()
    with tempfile.TemporaryDirectory(prefix="kiln-numpy-") as tmp:
        check_reader(a.kiln, tmp, tally, a.mutations, a.verbose)
        check_writer(a.kiln, tmp, tally)
    for key in sorted(tally.counts):
        print("%6d  %s" % (tally.counts[key], key))
    for f in tally.failures:
        print("FAIL " + f)
    print("%d passed, %d failed" % (tally.passed, len(tally.failures)))
    return 1 if tally.failures else 0


if __name__ == "__main__":
    sys.exit(main())
