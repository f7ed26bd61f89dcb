"""Prints the tensors of a Kiln block the way the reference driver prints a
safetensors file's: "ok", then one line per tensor, sorted,
  tensor <name as JSON> <safetensors dtype> [<shape>] <FNV-1a 64, hex> <bytes>

usage: kiln_tensors.py BLOCK.klnt INSPECT.json
INSPECT.json is `kiln inspect --json BLOCK.klnt`; the bytes are read from the
block at payload_base + byte_offset.
"""
import json
import sys

DTYPES = {"f64": "F64", "f32": "F32", "f16": "F16", "bf16": "BF16", "i64": "I64", "i32": "I32",
          "i16": "I16", "i8": "I8", "u64": "U64", "u32": "U32", "u16": "U16", "u8": "U8",
          "bool": "BOOL", "f8_e4m3fn": "F8_E4M3", "f8_e5m2": "F8_E5M2", "f8_e8m0": "F8_E8M0",
          "f8_e4m3fnuz": "F8_E4M3FNUZ", "f8_e5m2fnuz": "F8_E5M2FNUZ", "c64": "C64",
          "f4_e2m1": "F4"}


def fnv1a(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def json_string(s):
    out = '"'
    for c in s:
        if c == '"':
            out += '\\"'
        elif c == "\\":
            out += "\\\\"
        elif ord(c) < 0x20 or ord(c) == 0x7F:
            out += "\\u%04x" % ord(c)
        else:
            out += c
    return out + '"'


def main():
    block = open(sys.argv[1], "rb").read()
    info = json.load(open(sys.argv[2], encoding="utf-8"))
    base = info["header"]["payload_base"]
    lines = []
    for t in info["tensors"]:
        data = block[base + t["byte_offset"]: base + t["byte_offset"] + t["byte_length"]]
        lines.append("tensor %s %s [%s] %016x %d" % (
            json_string(t["name"]), DTYPES.get(t["dtype"], t["dtype"]),
            ",".join(str(d) for d in t["shape"]), fnv1a(data), len(data)))
    sys.stdout.write("ok\n" + "".join(line + "\n" for line in sorted(lines)))


if __name__ == "__main__":
    main()
