"""Writes a safetensors file with nothing but Python's json and struct.

usage: write_safetensors.py OUT [--metadata]

An independent writer for the kiln tests, following the published layout:
an unsigned 64-bit little-endian header length N, N bytes of UTF-8 JSON
(padded with spaces to a multiple of 8, as the reference writer does), then
the tensors' bytes back to back. Each tensor entry has the keys dtype, shape
and data_offsets in that order; __metadata__, when asked for, comes first.
Tensors are written in the order listed below (not sorted), which is the
order kiln keeps.
"""
import json
import struct
import sys


def tensors():
    def pack(fmt, values):
        return struct.pack("<%d%s" % (len(values), fmt), *values)

    return [
        ("embed.weight", "F32", [4, 3], pack("f", [i * 0.25 - 1 for i in range(12)])),
        ("layer.0.bias", "F16", [3], pack("e", [1.0, -2.0, 0.5])),
        ("ids", "I64", [2, 2], pack("q", [-(2**63), -1, 0, 2**63 - 1])),
        ("mask", "BOOL", [5], bytes([1, 0, 1, 1, 0])),
        ("scalar", "F64", [], pack("d", [3.5])),
        ("bf", "BF16", [2], bytes([0x80, 0x3F, 0x00, 0xC0])),
        ("empty", "U8", [0, 3], b""),
        ("counts", "U16", [3], pack("H", [1, 2, 65535])),
        ("tiny", "I8", [4], pack("b", [-128, -1, 0, 127])),
        ("f8", "F8_E4M3", [2], bytes([0x38, 0xB8])),
        ('name with "quotes", \\ and \u00fc', "I32", [1], pack("i", [-7])),
    ]


def main():
    out = sys.argv[1]
    header = {}
    if "--metadata" in sys.argv[2:]:
        header["__metadata__"] = {"format": "pt", "note": "n" * 300, "tab\there": "x\ny"}
    data = b""
    for name, dtype, shape, raw in tensors():
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(out, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


if __name__ == "__main__":
    main()
