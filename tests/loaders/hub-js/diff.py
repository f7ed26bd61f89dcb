"""kiln's safetensors reader and writer against @huggingface/hub's
parseSafetensorsMetadata (read.mjs).

usage: diff.py KILN

Reading: every boundary file of ../safetensors-rs/make_cases.py (the crate's
checks, and the Hub's: a 25,000,000-byte header, dimensions of 2^32, the
array form of an entry) goes through `kiln convert F out.klnt` and through the
Hub's parser. A failure is kiln reading a file the Hub refuses, or reading
other tensors (names, dtypes, shapes, bytes). Writing: every valid golden
block, every block read above, and arrays packed with `kiln pack` go through
`kiln convert x.klnt y.safetensors`; the Hub must read y with the block's
tensors, or kiln must refuse with exit 1 and write nothing.
Prints one line per difference and a summary; exits 1 on any failure.
"""
import json
import os
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(os.path.dirname(here)))
sys.path.insert(0, os.path.join(here, "..", "safetensors-rs"))
import kiln_tensors  # noqa: E402


def hub(paths):
    """{path: listing or None (refused), error}."""
    out = subprocess.run(["node", os.path.join(here, "read.mjs")] + paths, capture_output=True,
                         check=True, cwd=here).stdout
    result = {}
    for line in out.decode().splitlines():
        r = json.loads(line)
        result[r["file"]] = (r["listing"] if r["ok"] else None, r.get("error", ""))
    return result


def kiln_listing(kiln, block, work):
    inspect = subprocess.run([kiln, "inspect", "--json", block], capture_output=True, check=True)
    info = json.loads(inspect.stdout)
    data = open(block, "rb").read()
    base = info["header"]["payload_base"]
    lines = []
    for t in info["tensors"]:
        raw = data[base + t["byte_offset"]: base + t["byte_offset"] + t["byte_length"]]
        lines.append("tensor %s %s [%s] %016x %d" % (
            kiln_tensors.json_string(t["name"]), kiln_tensors.DTYPES.get(t["dtype"], t["dtype"]),
            ",".join(str(d) for d in t["shape"]), kiln_tensors.fnv1a(raw), len(raw)))
    return "ok\n" + "".join(line + "\n" for line in sorted(lines, key=lambda s: s.encode()))


def main():
    kiln = sys.argv[1]
    failed = passed = stricter = 0
    with tempfile.TemporaryDirectory() as work:
        cases = os.path.join(work, "cases")
        subprocess.run([sys.executable, os.path.join(here, "..", "safetensors-rs", "make_cases.py"),
                        cases], check=True)
        files = sorted(os.path.join(cases, f) for f in os.listdir(cases)
                       if f.endswith(".safetensors"))
        refs = hub(files)
        blocks = os.path.join(work, "blocks")
        os.makedirs(blocks)
        read_blocks = []
        for f in files:
            name = os.path.basename(f)[:-len(".safetensors")]
            block = os.path.join(blocks, name + ".klnt")
            conv = subprocess.run([kiln, "convert", f, block], capture_output=True)
            listing, error = refs[f]
            if conv.returncode not in (0, 1):
                print("FAIL  %s: kiln convert exited %d" % (name, conv.returncode))
                failed += 1
                continue
            if conv.returncode == 1:
                passed += 1
                if listing is not None:
                    stricter += 1
                    why = conv.stderr.decode(errors="replace").strip().splitlines()[-1]
                    print("kiln stricter: %s (the Hub reads it): %s" % (
                        name, why.replace(f + ": ", "").removeprefix("kiln convert: ")[:150]))
                continue
            read_blocks.append(block)
            if listing is None:
                print("FAIL  %s: kiln reads a file the Hub refuses: %s" % (name, error[:160]))
                failed += 1
            elif kiln_listing(kiln, block, work) != listing:
                print("FAIL  %s: kiln reads other tensors than the Hub" % name)
                failed += 1
            else:
                passed += 1

        # Writing.
        sources = []
        with open(os.path.join(root, "golden", "manifest.tsv")) as manifest:
            for line in manifest:
                if line.startswith("#"):
                    continue
                fields = line.rstrip("\n").split("\t")
                if len(fields) > 1 and fields[1] == "ok":
                    sources.append(os.path.join(root, "golden", "cases", fields[0] + ".klnt"))
        sources += read_blocks
        npy_dir = os.path.join(cases, "npy")
        for npy in sorted(os.listdir(npy_dir)):
            packed = os.path.join(blocks, "npy-" + npy[:-4] + ".klnt")
            if subprocess.run([kiln, "pack", packed, "w=" + os.path.join(npy_dir, npy)],
                              capture_output=True).returncode == 0:
                sources.append(packed)
        outs = {}
        refused = 0
        for i, block in enumerate(sources):
            out = os.path.join(work, "w%04d.safetensors" % i)
            conv = subprocess.run([kiln, "convert", block, out], capture_output=True)
            label = os.path.basename(block)
            if conv.returncode == 1:
                if os.path.exists(out):
                    print("FAIL  %s: refused, yet %s was written" % (label, out))
                    failed += 1
                else:
                    refused += 1
                    passed += 1
                    print("writer refuses: %s: %s" % (label, conv.stderr.decode(
                        errors="replace").strip().splitlines()[-1][:150]))
                continue
            if conv.returncode != 0:
                print("FAIL  %s: kiln convert to safetensors exited %d" % (label, conv.returncode))
                failed += 1
                continue
            outs[out] = block
        written = hub(sorted(outs)) if outs else {}
        for out, block in sorted(outs.items()):
            listing, error = written[out]
            if listing is None:
                print("FAIL  %s: the Hub refuses what kiln wrote: %s" % (os.path.basename(block),
                                                                          error[:160]))
                failed += 1
            elif listing != kiln_listing(kiln, block, work):
                print("FAIL  %s: the Hub reads other tensors than the block's" %
                      os.path.basename(block))
                failed += 1
            else:
                passed += 1
        print("hub: %d files read (%d kiln-stricter verdicts), %d files written and read back, "
              "%d refused by the writer" % (len(files), stricter, len(outs), refused))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
