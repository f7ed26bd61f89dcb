"""Runs the GGUF boundary cases (gguf_cases.py) through kiln and through one
reference reader, and compares.

usage: gguf_diff.py KILN {js|py|cpp} READER_COMMAND...

READER_COMMAND is called once with every case file appended: for `js`,
tests/loaders/gguf-js/read.mjs (one JSON line per file); for `py`,
tests/loaders/gguf-py/read.py (the same lines, with each tensor's name in hex
and its size in bytes); for `cpp`, the gguf-cpp driver
(tests/loaders/gguf-cpp/driver.cc). kiln reads a file when
`kiln convert F.gguf F.klnt` exits 0 and refuses it when it exits 1.

A case fails when kiln reads a file the reference refuses, or when both read
it and the tensors differ: names, ggml types, dimensions, or bytes (kiln's
stored payload against the file's bytes where the reference places the
tensor). kiln refusing a file the reference reads is "kiln stricter", listed
in docs/compatibility.md. Prints one line per case, then `N passed, N failed`.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gguf_cases  # noqa: E402

KILN_DTYPES = {"f32": 0, "f16": 1, "i8": 24, "i16": 25, "i32": 26, "i64": 27, "f64": 28,
               "bf16": 30}
TYPE_BY_NAME = {name: tid for tid, (name, _, _) in gguf_cases.TYPES.items()}


def run_reference(kind, command, paths):
    """{path: None (refused) or (data_offset, [(name bytes, type, ne list, offset, nbytes)])}."""
    out = subprocess.run(command + paths, capture_output=True, check=True).stdout
    result = {}
    if kind in ("js", "py"):
        for line in out.decode().splitlines():
            r = json.loads(line)
            result[r["file"]] = None if not r["ok"] else (
                int(r["data_offset"]),
                [(bytes.fromhex(t["name_hex"]) if "name_hex" in t else t["name"].encode(),
                  t["type"], [int(d) for d in t["ne"]], int(t["offset"]),
                  int(t["nbytes"]) if "nbytes" in t else None)
                 for t in r["tensors"]])
        return result
    current = None
    for line in out.split(b"\n"):
        if not line:
            continue
        fields = line.split(b"\t")
        if fields[0]:
            path = fields[0].decode()
            result[path] = current = None if fields[1] == b"refused" else (int(fields[2]), [])
            continue
        _, name, gtype, ne, offset, size = fields
        current[1].append((bytes.fromhex(name.decode()), int(gtype),
                           [int(d) for d in ne.split(b",")], int(offset), int(size)))
    return result


def run_kiln(kiln, path, work):
    """None (refused) or (klnt bytes, inspect JSON); raises on anything else."""
    out = os.path.join(work, "out.klnt")
    conv = subprocess.run([kiln, "convert", path, out], capture_output=True)
    if conv.returncode == 1:
        message = conv.stderr.decode(errors="replace").strip().splitlines()[-1]
        return None, message.replace(path + ": ", "").removeprefix("kiln convert: ")
    if conv.returncode != 0:
        raise RuntimeError("kiln convert exited %d: %s" % (conv.returncode, conv.stderr[-300:]))
    inspect = subprocess.run([kiln, "inspect", "--json", out], capture_output=True, check=True)
    with open(out, "rb") as f:
        return (f.read(), json.loads(inspect.stdout)), ""


def compare(kind, gguf, kiln_read, ref):
    """Empty when kiln's tensors are the reference's; else what differs."""
    block, listing = kiln_read
    tensors = listing["tensors"]
    base = listing["header"]["payload_base"]
    data_offset, ref_tensors = ref
    if len(tensors) != len(ref_tensors):
        return "kiln has %d tensors, the reference %d" % (len(tensors), len(ref_tensors))
    for k, (name, gtype, ne, offset, size) in zip(tensors, ref_tensors):
        if (k["name"] or "").encode() != name:  # null: an unnamed block
            return "tensor name %r, the reference %r" % (k["name"], name)
        kiln_type = (KILN_DTYPES.get(k["dtype"]) if k["dtype"] != "opaque" else
                     TYPE_BY_NAME.get((k["layout"] or "").removeprefix("ggml.").upper()))
        if kiln_type != gtype:
            return "tensor %r: kiln type %s/%s, the reference %d" % (name, k["dtype"], k["layout"],
                                                                    gtype)
        kiln_ne = list(reversed(k["shape"]))
        if kind == "cpp":
            kiln_ne += [1] * (4 - len(kiln_ne))
        if kiln_ne != ne:
            return "tensor %r: kiln ne %s, the reference %s" % (name, kiln_ne, ne)
        length = k["byte_length"]
        if size is not None and size != length:
            return "tensor %r: kiln %d bytes, the reference %d" % (name, length, size)
        at = data_offset + offset
        stored = block[base + k["byte_offset"]:base + k["byte_offset"] + length]
        if gguf[at:at + length] != stored or len(stored) != length:
            return "tensor %r: kiln's bytes are not the file's at %d" % (name, at)
    return ""


def main():
    kiln, kind, command = sys.argv[1], sys.argv[2], sys.argv[3:]
    passed = failed = stricter = 0
    with tempfile.TemporaryDirectory() as work:
        cases = gguf_cases.cases()
        paths = []
        for name, _, _, raw in cases:
            paths.append(os.path.join(work, name + ".gguf"))
            with open(paths[-1], "wb") as f:
                f.write(raw)
        refs = run_reference(kind, command, paths)
        for (name, expect, why, raw), path in zip(cases, paths):
            ref = refs.get(path, "missing")
            if ref == "missing":
                print("FAIL  %-28s the reference printed nothing for it" % name)
                failed += 1
                continue
            kiln_read, kiln_error = run_kiln(kiln, path, work)
            ref_word = "reads" if ref is not None else "refuses"
            note = "" if kind != "cpp" or (ref is not None) == (expect == "ok") else \
                " (NOT what gguf.cpp does by its code: %s)" % expect
            if kiln_read is None:
                stricter += ref is not None
                print("ok    %-28s reference %s, kiln refuses: %s%s" % (
                    name, ref_word, kiln_error[:110], note))
                passed += 1
            elif ref is None:
                print("FAIL  %-28s kiln reads a file the reference refuses (%s)%s" % (name, why, note))
                failed += 1
            else:
                diff = compare(kind, raw, kiln_read, ref)
                if diff:
                    print("FAIL  %-28s %s" % (name, diff))
                    failed += 1
                else:
                    print("ok    %-28s both read it, same tensors%s" % (name, note))
                    passed += 1
    print("%d cases: kiln stricter in %d" % (passed + failed, stricter))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
