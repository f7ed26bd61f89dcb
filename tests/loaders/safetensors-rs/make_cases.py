"""Writes the boundary files of the safetensors differential suite.

usage: make_cases.py OUT_DIR

One file per case, OUT_DIR/<case>.safetensors, and for the writer a few
.npy arrays, OUT_DIR/npy/<case>.npy, which run.sh packs into Kiln blocks. The cases come from the
checks of the reference reader, the safetensors crate (tensor.rs,
SafeTensors::read_metadata and Metadata::validate, at 0.6.2 and at main):
the 8-byte length N (at most 100,000,000; N + 8 bytes present), the header
(UTF-8, parsed by serde_json into HashMap<String, TensorInfo> plus
"__metadata__": Option<HashMap<String, String>>), the dtype names of each
version, the shape product (checked_mul over every dimension in order, then
times the dtype's bits, a whole number of bytes), and the data_offsets
(sorted, contiguous from 0, begin <= end, size == nbytes, last end == the
data length). The files say nothing about the expected verdict: run.sh asks
the references.
"""
import json
import os
import struct
import sys

CASES = {}


def case(name, header, data=b"", length=None, tail=b""):
    """A file: the header text (str, or bytes as they are), the data bytes."""
    h = header.encode("utf-8") if isinstance(header, str) else header
    n = len(h) if length is None else length
    CASES[name] = struct.pack("<Q", n) + h + data + tail


def entry(dtype, shape, begin, end):
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


def one(name, info, data):
    case(name, json.dumps({"t": info}, separators=(",", ":")), data)


def raw(name, text, data=b""):
    case(name, text, data)


BITS = {"BOOL": 8, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6, "U8": 8, "I8": 8, "F8_E5M2": 8,
        "F8_E4M3": 8, "F8_E8M0": 8, "F8_E4M3FNUZ": 8, "F8_E5M2FNUZ": 8, "I16": 16, "U16": 16,
        "F16": 16, "BF16": 16, "I32": 32, "U32": 32, "F32": 32, "C64": 64, "F64": 64, "I64": 64,
        "U64": 64}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)

    # Every dtype name of either version, in a shape of 4 elements, and names
    # that neither version knows.
    for dtype, bits in BITS.items():
        size = 4 * bits // 8
        one("dtype-" + dtype, entry(dtype, [4], 0, size), bytes(range(size)))
    one("dtype-F4-odd-count", entry("F4", [3], 0, 1), b"\x12")
    one("dtype-F6_E2M3-5-elements", entry("F6_E2M3", [5], 0, 3), b"abc")
    one("dtype-F6_E3M2-4-elements", entry("F6_E3M2", [2, 2], 0, 3), b"abc")
    for dtype in ["f32", "F8_E4M3FN", "C128", "F128", "U4", "I4", "Q4_0", ""]:
        one("dtype-unknown-" + (dtype or "empty"), entry(dtype, [1], 0, 4), b"\0" * 4)

    # The header length and the bytes around the header.
    raw("plain", '{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}', b"\1" * 8)
    raw("empty-header-object", "{}")
    raw("empty-header-object-with-data", "{}", b"\0")
    case("header-length-zero", "")
    case("header-length-past-file", "{}", length=10)
    case("header-length-100000001", "{}", length=100_000_001)
    case("header-length-2^64-1", "{}", length=2**64 - 1)
    CASES["file-of-7-bytes"] = b"\2\0\0\0\0\0\0"
    CASES["file-of-8-bytes"] = b"\0" * 8
    for ws, label in [(" ", "space"), ("\t", "tab"), ("\n", "newline"), ("\r", "cr"),
                      ("\x0b", "vtab"), ("\x0c", "formfeed"), ("\x00", "nul"),
                      ("\u00a0", "nbsp"), ("\ufeff", "bom")]:
        raw("leading-" + label, ws + '{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', b"x")
        raw("trailing-" + label, '{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}' + ws, b"x")
    raw("padded-8-spaces", '{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}' + " " * 8, b"x")
    case("header-invalid-utf8-in-padding",
         b'{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}\xff', b"x")
    raw("header-two-objects", '{}{}')
    raw("header-top-level-array", '[]')
    raw("header-top-level-null", 'null')
    raw("header-top-level-string", '"x"')

    # The tensor entry: object, array (serde reads a struct from a sequence),
    # fields missing, repeated, unknown, reordered, escaped.
    raw("entry-array", '{"a":["U8",[2],[0,2]]}', b"xy")
    raw("entry-array-2", '{"a":["U8",[2]]}', b"xy")
    raw("entry-array-4", '{"a":["U8",[2],[0,2],1]}', b"xy")
    raw("entry-array-empty", '{"a":[]}', b"xy")
    raw("entry-array-wrong-order", '{"a":[[2],"U8",[0,2]]}', b"xy")
    raw("entry-null", '{"a":null}')
    raw("entry-string", '{"a":"U8"}')
    raw("entry-empty-object", '{"a":{}}')
    raw("entry-missing-dtype", '{"a":{"shape":[1],"data_offsets":[0,1]}}', b"x")
    raw("entry-missing-shape", '{"a":{"dtype":"U8","data_offsets":[0,1]}}', b"x")
    raw("entry-missing-offsets", '{"a":{"dtype":"U8","shape":[1]}}', b"x")
    raw("entry-repeated-dtype", '{"a":{"dtype":"U8","dtype":"U8","shape":[1],"data_offsets":[0,1]}}', b"x")
    raw("entry-unknown-field", '{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"x":1}}', b"x")
    raw("entry-unknown-field-nested",
        '{"a":{"x":{"y":[1,{"z":null}]},"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', b"x")
    raw("entry-fields-reordered", '{"a":{"data_offsets":[0,1],"shape":[1],"dtype":"U8"}}', b"x")
    raw("entry-escaped-field-names",
        '{"a":{"d\\u0074ype":"U8","sha\\u0070e":[1],"data_offsets":[0,1]}}', b"x")
    raw("entry-escaped-dtype", '{"a":{"dtype":"U\\u0038","shape":[1],"data_offsets":[0,1]}}', b"x")
    raw("entry-dtype-as-map", '{"a":{"dtype":{"U8":null},"shape":[1],"data_offsets":[0,1]}}', b"x")
    raw("entry-dtype-as-number", '{"a":{"dtype":3,"shape":[1],"data_offsets":[0,1]}}', b"x")
    raw("entry-dtype-lowercase", '{"a":{"dtype":"u8","shape":[1],"data_offsets":[0,1]}}', b"x")
    raw("entry-shape-null", '{"a":{"dtype":"U8","shape":null,"data_offsets":[0,1]}}', b"x")
    raw("entry-offsets-3", '{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1,1]}}', b"x")
    raw("entry-offsets-1", '{"a":{"dtype":"U8","shape":[1],"data_offsets":[1]}}', b"x")
    raw("entry-offsets-map", '{"a":{"dtype":"U8","shape":[1],"data_offsets":{"0":0,"1":1}}}', b"x")

    # Keys: duplicates, escapes, the metadata key.
    raw("duplicate-tensor", '{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},'
        '"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', b"x")
    raw("duplicate-tensor-different", '{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},'
        '"a":{"dtype":"I8","shape":[2],"data_offsets":[0,2]}}', b"xy")
    raw("duplicate-tensor-escaped", '{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},'
        '"\\u0061":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', b"x")
    raw("duplicate-metadata-object", '{"__metadata__":{"k":"v"},"__metadata__":{"k":"w"}}')
    raw("duplicate-metadata-key", '{"__metadata__":{"k":"v","k":"w"}}')
    raw("duplicate-metadata-key-escaped", '{"__metadata__":{"k":"v","\\u006b":"w"}}')
    raw("metadata-escaped-key-name", '{"__metad\\u0061ta__":{"k":"v"}}')
    raw("metadata-null", '{"__metadata__":null}')
    raw("metadata-empty", '{"__metadata__":{}}')
    raw("metadata-number-value", '{"__metadata__":{"k":1}}')
    raw("metadata-null-value", '{"__metadata__":{"k":null}}')
    raw("metadata-array", '{"__metadata__":["k","v"]}')
    raw("metadata-string", '{"__metadata__":"kv"}')
    raw("metadata-nested", '{"__metadata__":{"k":{"a":"b"}}}')
    raw("metadata-as-tensor", '{"__metadata__":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', b"x")
    raw("metadata-escapes", '{"__metadata__":{"\\n\\t\\"\\\\\\/\\b\\f\\r\\u00e9\\ud83d\\ude00":"\\u0000"}}')
    raw("metadata-after-tensors", '{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},'
        '"__metadata__":{"k":"v"}}', b"x")
    raw("name-empty", '{"":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', b"x")
    raw("name-nul", '{"\\u0000":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', b"x")
    raw("name-controls", '{"\\u0001\\n\\u007f":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', b"x")
    raw("name-raw-control", '{"a\x01":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', b"x")
    raw("name-raw-del", '{"a\x7f":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', b"x")
    raw("name-unicode", '{"\u00fc\U0001F600/../x":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', b"x")
    raw("name-surrogate-pair", '{"\\ud83d\\ude00":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', b"x")
    raw("name-lone-high-surrogate", '{"\\ud800":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', b"x")
    raw("name-lone-low-surrogate", '{"\\udc00":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', b"x")
    raw("name-high-then-high", '{"\\ud800\\ud800":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', b"x")
    raw("name-high-then-letter", '{"\\ud800\\u0041":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', b"x")
    raw("name-bad-escape", '{"\\x41":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', b"x")
    raw("name-short-hex", '{"\\u41":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', b"x")
    raw("name-uppercase-hex", '{"\\u00C9":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', b"x")
    case("name-invalid-utf8", b'{"\xc3\x28":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', b"x")
    case("name-overlong-utf8", b'{"\xc0\xaf":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', b"x")
    case("name-utf8-surrogate", b'{"\xed\xa0\x80":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', b"x")
    raw("name-65535-bytes", json.dumps({"n" * 65535: entry("U8", [1], 0, 1)}), b"x")
    raw("name-65536-bytes", json.dumps({"n" * 65536: entry("U8", [1], 0, 1)}), b"x")
    raw("name-escaped-long", json.dumps({"\u00e9" * 3000: entry("U8", [1], 0, 1)}), b"x")

    # Shapes: rank, numbers, the product.
    raw("shape-scalar", '{"a":{"dtype":"F32","shape":[],"data_offsets":[0,4]}}', b"abcd")
    raw("shape-rank-8", '{"a":{"dtype":"U8","shape":[1,1,1,1,1,1,1,1],"data_offsets":[0,1]}}', b"x")
    raw("shape-rank-9", '{"a":{"dtype":"U8","shape":[1,1,1,1,1,1,1,1,1],"data_offsets":[0,1]}}', b"x")
    raw("shape-rank-9-zero", '{"a":{"dtype":"U8","shape":[1,1,1,1,1,1,1,1,0],"data_offsets":[0,0]}}')
    raw("shape-negative", '{"a":{"dtype":"U8","shape":[-1],"data_offsets":[0,1]}}', b"x")
    raw("shape-minus-zero", '{"a":{"dtype":"U8","shape":[-0],"data_offsets":[0,0]}}')
    raw("shape-float", '{"a":{"dtype":"U8","shape":[1.0],"data_offsets":[0,1]}}', b"x")
    raw("shape-exponent", '{"a":{"dtype":"U8","shape":[1e0],"data_offsets":[0,1]}}', b"x")
    raw("shape-leading-zero", '{"a":{"dtype":"U8","shape":[01],"data_offsets":[0,1]}}', b"x")
    raw("shape-plus", '{"a":{"dtype":"U8","shape":[+1],"data_offsets":[0,1]}}', b"x")
    raw("shape-string", '{"a":{"dtype":"U8","shape":["1"],"data_offsets":[0,1]}}', b"x")
    raw("shape-2^64-1-then-0", '{"a":{"dtype":"U8","shape":[18446744073709551615,0],"data_offsets":[0,0]}}')
    raw("shape-2^64", '{"a":{"dtype":"U8","shape":[18446744073709551616,0],"data_offsets":[0,0]}}')
    raw("shape-0-2^40-2^40", '{"a":{"dtype":"U8","shape":[0,1099511627776,1099511627776],"data_offsets":[0,0]}}')
    raw("shape-2^40-2^40-0", '{"a":{"dtype":"U8","shape":[1099511627776,1099511627776,0],"data_offsets":[0,0]}}')
    raw("shape-2^32-2^32-0", '{"a":{"dtype":"U8","shape":[4294967296,4294967296,0],"data_offsets":[0,0]}}')
    raw("shape-2^32-2^32-1-0", '{"a":{"dtype":"U8","shape":[4294967295,4294967297,0],"data_offsets":[0,0]}}')
    raw("shape-2^61-U8-bits-overflow", '{"a":{"dtype":"U8","shape":[2305843009213693952],"data_offsets":[0,0]}}')
    raw("shape-2^61-1-U8", '{"a":{"dtype":"U8","shape":[2305843009213693951],"data_offsets":[0,1]}}', b"x")
    raw("shape-2^62-F4", '{"a":{"dtype":"F4","shape":[4611686018427387904],"data_offsets":[0,1]}}', b"x")
    raw("shape-whitespace", '{ "a" : { "dtype" : "U8" , "shape" : [ 1 , 2 ] , "data_offsets" : [ 0 , 2 ] } }', b"xy")

    # @huggingface/hub's bounds (parse-safetensors-metadata.ts, 2.17.5): a
    # header of at most 25,000,000 bytes, dimensions of at most 2^32, the
    # object form of an entry; and a tensor named __proto__, whose entry it
    # does not check (its omit() drops the key when it copies the header).
    small = '{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}'
    for n in (24_999_999, 25_000_000, 25_000_001):
        raw("hub-header-%d" % n, small + " " * (n - len(small)), b"x")
    raw("hub-dim-2^32-then-0", '{"a":{"dtype":"U8","shape":[4294967296,0],"data_offsets":[0,0]}}')
    raw("hub-dim-0-then-2^32+1", '{"a":{"dtype":"U8","shape":[0,4294967297],"data_offsets":[0,0]}}')
    raw("hub-dim-2^32-2^32-0-f32", '{"a":{"dtype":"F32","shape":[0,4294967296,4294967296],"data_offsets":[0,0]}}')
    raw("hub-name-proto", '{"__proto__":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}', b"xy")
    raw("hub-name-proto-dim-2^40", '{"__proto__":{"dtype":"U8","shape":[1099511627776,0],"data_offsets":[0,0]}}')

    # data_offsets.
    raw("offsets-unsorted-in-text", '{"b":{"dtype":"U8","shape":[2],"data_offsets":[2,4]},'
        '"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}', b"abcd")
    raw("offsets-gap", '{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},'
        '"b":{"dtype":"U8","shape":[2],"data_offsets":[3,5]}}', b"abcde")
    raw("offsets-overlap", '{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},'
        '"b":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}}', b"abc")
    raw("offsets-same-range", '{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},'
        '"b":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}', b"ab")
    raw("offsets-not-from-zero", '{"a":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}}', b"abc")
    raw("offsets-begin-after-end", '{"a":{"dtype":"U8","shape":[0],"data_offsets":[2,0]}}', b"ab")
    raw("offsets-size-mismatch", '{"a":{"dtype":"U16","shape":[2],"data_offsets":[0,2]}}', b"ab")
    raw("offsets-trailing-data", '{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}', b"abc")
    raw("offsets-past-data", '{"a":{"dtype":"U8","shape":[3],"data_offsets":[0,3]}}', b"ab")
    raw("offsets-zero-size-several", '{"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},'
        '"b":{"dtype":"F32","shape":[2,0],"data_offsets":[0,0]},'
        '"c":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},'
        '"d":{"dtype":"U8","shape":[0],"data_offsets":[1,1]}}', b"x")
    raw("offsets-zero-size-at-end", '{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},'
        '"b":{"dtype":"U8","shape":[0],"data_offsets":[1,1]}}', b"x")
    raw("offsets-zero-size-past-end", '{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},'
        '"b":{"dtype":"U8","shape":[0],"data_offsets":[2,2]}}', b"x")
    raw("offsets-2^64-1", '{"a":{"dtype":"U8","shape":[0],"data_offsets":[18446744073709551615,18446744073709551615]}}')
    raw("offsets-wrap-sum", '{"a":{"dtype":"U8","shape":[2305843009213693951],"data_offsets":[0,2305843009213693951]},'
        '"b":{"dtype":"U8","shape":[2305843009213693951],"data_offsets":[2305843009213693951,4611686018427387902]}}', b"x")

    # JSON syntax around the structure.
    raw("syntax-trailing-comma", '{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},}', b"x")
    raw("syntax-trailing-comma-in-entry", '{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1],}}', b"x")
    raw("syntax-trailing-comma-in-shape", '{"a":{"dtype":"U8","shape":[1,],"data_offsets":[0,1]}}', b"x")
    raw("syntax-single-quotes", "{'a':{'dtype':'U8','shape':[1],'data_offsets':[0,1]}}", b"x")
    raw("syntax-comment", '{/*c*/"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}', b"x")
    raw("syntax-unterminated", '{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}', b"x")
    raw("syntax-text-after", '{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}} x', b"x")
    raw("syntax-nul-after", '{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}\0', b"x")

    for name, data in CASES.items():
        with open(os.path.join(out, name + ".safetensors"), "wb") as f:
            f.write(data)

    # For the writer: .npy arrays that `kiln pack` turns into blocks a
    # safetensors file may not be able to hold (OUT_DIR/npy/<case>.npy).
    os.makedirs(os.path.join(out, "npy"), exist_ok=True)
    for name, descr, shape, data in [
            ("shape-2^40-2^40-0", "|u1", (2**40, 2**40, 0), b""),   # Kiln: empty; the crate: overflow
            ("shape-2^32-2^32-0-f4", "<f4", (2**32, 2**32, 0), b""),
            ("shape-0-2^40-2^40", "|u1", (0, 2**40, 2**40), b""),
            ("shape-2^64-1-0", "|u1", (2**64 - 1, 0), b""),
            ("shape-0-2^32", "|u1", (0, 2**32), b""),          # the Hub's largest dimension
            ("shape-0-2^32+1", "|u1", (0, 2**32 + 1), b""),
            ("shape-rank-8", "<i2", (1, 2, 1, 2, 1, 1, 1, 1), bytes(8)),
            ("scalar-f8", "<f8", (), bytes(range(8))),
            ("complex64", "<c8", (2,), bytes(16))]:
        d = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (
            descr, "(" + ", ".join(str(x) for x in shape) + ("," if len(shape) == 1 else "") + ")")
        d += " " * ((64 - (10 + len(d) + 1) % 64) % 64) + "\n"
        with open(os.path.join(out, "npy", name + ".npy"), "wb") as f:
            f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d)) + d.encode() + data)


if __name__ == "__main__":
    main()
