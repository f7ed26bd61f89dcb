"""The GGUF boundary cases of the differential suite (tests/loaders/gguf-js,
tests/loaders/gguf-cpp).

usage: gguf_cases.py OUT_DIR   (writes OUT_DIR/<case>.gguf and OUT_DIR/cases.tsv)

Each case sits on one check of a reference reader, written from the
references' own code: ggml's src/gguf.cpp (gguf_init_from_file with no_alloc
and no ggml context, as llama.cpp calls it) and ggml.c's type traits and
ggml_nbytes; @huggingface/gguf 0.4.6 (src/gguf.ts). Most come in pairs: the
last value the check lets through and the first it refuses. `expect` records
what gguf.cpp does by reading its code ("ok" or "refused"); the suites report
what the readers actually do, and fail only when kiln reads a file a reference
refuses, or reads other tensors.
"""
import os
import struct
import sys

# ggml types of ggml.c's type_traits: id -> (name, block size, bytes per block).
# Ids 4, 5, 31-33 and 36-38 are removed (block size 0 in ggml.c).
TYPES = {
    0: ("F32", 1, 4), 1: ("F16", 1, 2), 2: ("Q4_0", 32, 18), 3: ("Q4_1", 32, 20),
    6: ("Q5_0", 32, 22), 7: ("Q5_1", 32, 24), 8: ("Q8_0", 32, 34), 9: ("Q8_1", 32, 36),
    10: ("Q2_K", 256, 84), 11: ("Q3_K", 256, 110), 12: ("Q4_K", 256, 144),
    13: ("Q5_K", 256, 176), 14: ("Q6_K", 256, 210), 15: ("Q8_K", 256, 292),
    16: ("IQ2_XXS", 256, 66), 17: ("IQ2_XS", 256, 74), 18: ("IQ3_XXS", 256, 98),
    19: ("IQ1_S", 256, 50), 20: ("IQ4_NL", 32, 18), 21: ("IQ3_S", 256, 110),
    22: ("IQ2_S", 256, 82), 23: ("IQ4_XS", 256, 136), 24: ("I8", 1, 1), 25: ("I16", 1, 2),
    26: ("I32", 1, 4), 27: ("I64", 1, 8), 28: ("F64", 1, 8), 29: ("IQ1_M", 256, 56),
    30: ("BF16", 1, 2), 34: ("TQ1_0", 256, 54), 35: ("TQ2_0", 256, 66),
    39: ("MXFP4", 32, 17), 40: ("NVFP4", 64, 36), 41: ("Q1_0", 128, 18), 42: ("Q2_0", 64, 18),
}
U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 = range(13)
I64_MAX = 2**63 - 1


def u32(v):
    return struct.pack("<I", v)


def u64(v):
    return struct.pack("<Q", v)


def s(raw):
    raw = raw.encode() if isinstance(raw, str) else raw
    return u64(len(raw)) + raw


def kv(key, vtype, payload):
    """A key/value pair; payload is the value's encoded bytes."""
    return s(key) + u32(vtype) + payload


def kv_u32(key, v):
    return kv(key, U32, u32(v))


def info(name, ne, gtype, offset):
    return s(name) + u32(len(ne)) + b"".join(u64(d) for d in ne) + u32(gtype) + u64(offset)


def pad(n, a):
    return (n + a - 1) // a * a


def nbytes(ne, gtype):
    count = 1
    for d in ne:
        count *= d
    _, block, size = TYPES[gtype]
    return count // block * size


def tensor_data(index, n):
    return bytes((index * 53 + k * 37 + 11) % 256 for k in range(n))


def file(kvs=(), tensors=(), version=3, align=32, n_tensors=None, n_kv=None, offsets=None,
         data=None, cut=None, tail=b"", magic=b"GGUF"):
    """A GGUF file. tensors: (name, ne, type); offsets default to gguf.cpp's
    rule (each size padded to `align`, in file order) and data to those
    tensors' bytes laid out by it; cut keeps only the first `cut` bytes."""
    kvs = list(kvs)
    head = magic + u32(version)
    head += u64(len(tensors) if n_tensors is None else n_tensors)
    head += u64(len(kvs) if n_kv is None else n_kv)
    head += b"".join(kvs)
    layout = []
    infos = []
    running = 0  # gguf.cpp's running size of the data section
    for i, (name, ne, gtype) in enumerate(tensors):
        infos.append(info(name, ne, gtype, running if offsets is None else offsets[i]))
        size = nbytes(ne, gtype) if gtype in TYPES else 0
        running += pad(size, align)
        if data is None:
            raw = tensor_data(i, size)
            layout.append(raw + b"\0" * (pad(size, align) - size))
    head += b"".join(infos)
    head += b"\0" * (pad(len(head), align) - len(head))
    out = head + (b"".join(layout) if data is None else data) + tail
    return out if cut is None else out[:cut]


def cases():
    """(name, gguf.cpp by its code: "ok" or "refused", why, bytes)."""
    c = []

    def add(name, expect, why, raw):
        c.append((name, expect, why, raw))

    basic = [("tok.f32", [3, 2], 0), ("norm.f16", [8], 1), ("blk.0.q4_0", [64, 2], 2),
             ("blk.0.q8_0", [32, 3], 8)]
    meta = [kv("general.architecture", STRING, s("llama")), kv("test.i32", I32, u32(5)),
            kv("test.tokens", ARRAY, u32(STRING) + u64(2) + s("a") + s("bc")),
            kv("test.bool", BOOL, b"\x02"), kv("test.empty", ARRAY, u32(U8) + u64(0))]

    # -- files every reader reads
    add("ok-basic", "ok", "four tensors, padded to 32", file(meta, basic))
    add("ok-version-2", "ok", "version 2", file(meta, basic, version=2))
    add("ok-alignment-64", "ok", "general.alignment 64",
        file([kv_u32("general.alignment", 64)] + meta, basic, align=64))
    add("ok-alignment-1", "ok", "general.alignment 1 (2^0)",
        file([kv_u32("general.alignment", 1)], basic, align=1))
    add("ok-alignment-2^30", "ok", "general.alignment 2^30, no tensors",
        file([kv_u32("general.alignment", 2**30)]))
    add("ok-no-tensors", "ok", "no tensors", file(meta))
    add("ok-no-tensors-unpadded", "ok",
        "no tensors and no padding: gguf.cpp seeks to the data only when there are tensors",
        file(meta, cut=24 + sum(len(k) for k in meta)))
    add("ok-every-type", "ok",
        "one tensor of every type ggml has but Q8_1 and Q2_0 (gguf-py's, below), a row of one "
        "block each",
        file([], [("t%d" % t, [TYPES[t][1], 2], t) for t in sorted(TYPES) if t not in (9, 42)]))
    add("ok-new-types-40-41", "ok", "NVFP4, Q1_0 (ggml ids 40, 41)",
        file([], [("nv", [128], 40), ("q1", [256, 2], 41)]))
    add("ok-scalar", "ok", "n_dims 0", file([], [("s", [], 0)]))
    add("ok-4-dims", "ok", "4 dimensions (GGML_MAX_DIMS)", file([], [("w", [2, 3, 2, 2], 0)]))
    add("ok-zero-size-in-place", "ok", "a tensor of no bytes at its place in the sequence",
        file([], [("a", [4], 0), ("z", [0, 5], 0), ("b", [4], 0)]))
    add("ok-zero-size-last", "ok", "a tensor of no bytes last, at the end of the data",
        file([], [("a", [4], 0), ("z", [3, 0], 0)]))
    add("ok-dim-2^32-zero-size", "ok", "a dimension of 2^32 beside a 0",
        file([], [("z", [0, 2**32], 0)]))
    add("ok-name-63", "ok", "a 63-byte name", file([], [("n" * 63, [4], 0)]))
    add("ok-name-utf8", "ok", "a UTF-8 name", file([], [("caf\u00e9.\u03c9", [4], 0)]))
    add("ok-trailing-bytes", "ok", "bytes after the data", file([], basic, tail=b"junk" * 9))
    add("ok-last-padding-missing", "ok",
        "the last tensor's padding is absent: no_alloc reads no data",
        file([], [("a", [3], 0)], cut=64 + 12))
    add("ok-value-string-1000000", "ok",
        "a 1,000,000-byte string value across @huggingface/gguf's 2,000,000-byte chunks",
        file([kv("pad1", STRING, s(b"p" * 700_000)), kv("pad2", STRING, s(b"p" * 700_000)),
              kv("big", STRING, s(b"v" * 1_000_000)),
              kv("after", U8, b"\1")], basic))
    add("ok-key-65535", "ok", "a 65,535-byte key across a chunk boundary",
        file([kv("pad1", STRING, s(b"p" * 850_000)), kv("pad2", STRING, s(b"p" * 850_000)),
              kv(b"k" * 65535, U8, b"\1"),
              kv("after", U8, b"\1")], basic))
    add("ok-array-1000000", "ok", "an array of 1,000,000 u8",
        file([kv("arr", ARRAY, u32(U8) + u64(1_000_000) + b"\7" * 1_000_000)], basic))

    # -- the header: gguf.cpp's checks
    add("magic", "refused", "magic GGUX", file(meta, basic, magic=b"GGUX"))
    add("version-0", "refused", "version 0", file(meta, basic, version=0))
    add("version-1", "refused", "GGUFv1 is no longer supported", file(meta, basic, version=1))
    add("version-4", "refused", "version above GGUF_VERSION 3", file(meta, basic, version=4))
    add("version-big-endian", "refused", "version 0x03000000 ((v & 0xFFFF) == 0)",
        file(meta, basic, version=0x03000000))
    add("version-0x10000", "refused", "version 0x00010000 ((v & 0xFFFF) == 0)",
        file(meta, basic, version=0x10000))
    add("truncated-counts", "refused", "the file ends inside n_kv", file(cut=20))
    add("tensor-count-negative", "refused", "n_tensors 2^63 (negative as int64)",
        file(meta, basic, n_tensors=2**63))
    add("tensor-count-more", "refused", "n_tensors one more than there are",
        file(meta, basic, n_tensors=5))
    add("kv-count-negative", "refused", "n_kv 2^64-1", file(meta, basic, n_kv=2**64 - 1))
    add("kv-count-more", "refused", "n_kv one more than there are", file(meta, [], n_kv=6))

    # -- key/value pairs
    add("key-empty", "refused", "an empty key", file([kv("", U8, b"\1")], basic))
    add("key-repeated", "refused", "a key twice", file(meta + [meta[1]], basic))
    add("key-past-end", "refused", "a key longer than the file",
        file([u64(1000) + b"abc"], [], cut=40))
    add("value-type-13", "refused", "value type 13", file([kv("k", 13, b"\0" * 8)], basic))
    add("value-type-negative", "refused", "value type -1",
        file([kv("k", 0xFFFFFFFF, b"\0" * 8)], basic))
    add("array-of-arrays", "refused", "an array whose elements are arrays",
        file([kv("k", ARRAY, u32(ARRAY) + u64(0))], basic))
    add("array-element-type-13", "refused", "array element type 13",
        file([kv("k", ARRAY, u32(13) + u64(0))], basic))
    add("array-past-end", "refused", "an array of 2^40 u32",
        file([kv("k", ARRAY, u32(U32) + u64(2**40))], [], cut=60))
    add("string-array-past-end", "refused", "2^40 strings",
        file([kv("k", ARRAY, u32(STRING) + u64(2**40))], [], cut=60))
    add("string-past-end", "refused", "a string value longer than the file",
        file([kv("k", STRING, u64(10**6) + b"x")], [], cut=60))
    add("value-truncated", "refused", "a u64 value cut", file([kv("k", U64, b"\1\2")], [], cut=41))

    # -- general.alignment
    al = lambda payload, vtype=U32: file([kv("general.alignment", vtype, payload)], basic)
    add("alignment-0", "refused", "general.alignment 0", al(u32(0)))
    add("alignment-48", "refused", "general.alignment 48, not a power of 2", al(u32(48)))
    add("alignment-u64", "refused", "general.alignment of type u64", al(u64(32), U64))
    add("alignment-i32", "refused", "general.alignment of type i32", al(u32(32), I32))
    add("alignment-array", "refused", "general.alignment an array of one u32",
        al(u32(U32) + u64(1) + u32(32), ARRAY))
    add("alignment-2^31", "ok", "general.alignment 2^31, no tensors",
        file([kv_u32("general.alignment", 2**31)]))

    # -- tensor infos
    add("name-64", "refused", "a 64-byte name (GGML_MAX_NAME)", file([], [("n" * 64, [4], 0)]))
    add("name-nul", "ok", "a NUL inside a name: gguf.cpp names the tensor \"a\"",
        file([], [(b"a\0b", [4], 0)]))
    add("name-nul-repeat", "refused", "\"a\" and \"a\\0b\": the same C name twice",
        file([], [("a", [4], 0), (b"a\0b", [4], 0)]))
    add("name-repeated", "refused", "a name twice", file([], [("a", [4], 0), ("a", [4], 0)]))
    add("name-empty", "ok", "an empty name", file([], [("", [4], 0)]))
    add("n-dims-5", "refused", "5 dimensions (GGML_MAX_DIMS 4)",
        file([], [("w", [1, 1, 1, 1, 4], 0)]))
    add("n-dims-9", "refused", "9 dimensions", file([], [("w", [1] * 8 + [4], 0)]))
    add("ne-negative", "refused", "ne[1] = 2^63 (negative)", file([], [("w", [4, 2**63], 0)], data=b"\0" * 64))
    add("ne-2^64-1", "refused", "ne[0] = 2^64-1 (-1)", file([], [("w", [2**64 - 1], 0)], data=b"\0" * 64))
    add("ne-int64-max-1d", "refused", "ne[0] = INT64_MAX: INT64_MAX/ne[1] <= ne[0]",
        file([], [("w", [I64_MAX], 0)], data=b""))
    add("ne-product-int64", "refused",
        "F32 ne = [2^31, 2^31, 2]: ggml_nelements wraps to -2^63, which skips the element "
        "test; the byte-size test refuses it (2^63 elements of 4 bytes)",
        file([], [("w", [2**31, 2**31, 2], 0)], data=b""))
    add("ne-product-wraps-to-0", "ok",
        "ne = [2^32, 2^32]: ggml_nelements wraps to 0, so gguf.cpp skips its overflow check",
        file([], [("w", [2**32, 2**32], 0)], data=b""))
    add("ne-product-wraps-negative-i8", "ok",
        "I8 ne = [2^32, 2^31]: ggml_nelements wraps to -2^63, which skips the element test, "
        "and 2^63 bytes pass the byte-size test (SIZE_MAX/1); ggml_nbytes is 2^63",
        file([], [("w", [2**32, 2**31], 24)], data=b""))
    add("ne-product-wraps-negative-i16", "refused",
        "I16 ne = [2^32, 2^31]: the same wrap; the byte-size test refuses 2^63 elements of "
        "2 bytes (2^63 > SIZE_MAX/2)",
        file([], [("w", [2**32, 2**31], 25)], data=b""))
    add("type-43", "refused", "ggml type 43 (GGML_TYPE_COUNT)", file([], [("w", [4], 43)]))
    add("type-negative", "refused", "ggml type -1", file([], [("w", [4], 0xFFFFFFFF)]))
    for removed in (4, 5, 31, 33, 36, 38):
        add("type-removed-%d" % removed, "refused", "ggml type %d (block size 0)" % removed,
            file([], [("w", [32], removed)], data=b"\0" * 64))
    add("row-not-blocks", "refused", "Q4_0 with ne[0] = 33", file([], [("w", [33], 2)],
                                                                   data=b"\0" * 64))
    add("row-not-blocks-k", "refused", "Q4_K with ne[0] = 128", file([], [("w", [128, 2], 12)],
                                                                      data=b"\0" * 512))
    add("info-truncated", "refused", "the file ends inside a tensor info",
        file([], [("w", [4], 0)], cut=24 + 8 + 1 + 4 + 4))

    # -- the data layout
    two = [("a", [4], 0), ("b", [4], 0)]
    add("offset-first-nonzero", "refused", "the first tensor at 32",
        file([], two, offsets=[32, 64], data=b"\0" * 96))
    add("offset-gap", "refused", "a gap of 32 before the second tensor",
        file([], two, offsets=[0, 64], data=b"\0" * 96))
    add("offset-reordered", "refused", "the second tensor's bytes first",
        file([], two, offsets=[32, 0], data=b"\0" * 64))
    add("offset-overlap", "refused", "both tensors at 0", file([], two, offsets=[0, 0]))
    add("offset-misaligned", "refused", "the second tensor at 16 (its unpadded end)",
        file([], two, offsets=[0, 16], data=b"\0" * 64))
    add("offset-zero-size-parked", "refused", "a tensor of no bytes at offset 4096",
        file([], [("a", [4], 0), ("z", [0], 0)], offsets=[0, 4096]))
    add("offset-zero-size-early", "refused", "a tensor of no bytes at 0, after one of 32 bytes",
        file([], [("a", [8], 0), ("z", [0], 0), ("b", [4], 0)], offsets=[0, 0, 0]))
    add("offset-huge", "refused", "an offset of 2^64-32",
        file([], [("a", [4], 0)], offsets=[2**64 - 32]))
    add("data-start-past-eof", "refused",
        "one tensor of no bytes; the data section (padded to 4096) starts past the end",
        file([kv_u32("general.alignment", 4096)], [("z", [0], 0)], cut=100))
    add("data-start-at-eof", "ok",
        "one tensor of no bytes; the data section starts exactly at the end of the file",
        file([], [("z", [0], 0)]))
    add("data-truncated", "ok", "the last tensor's bytes cut: no_alloc reads no data",
        file([], two)[:-20])
    add("data-absent", "ok", "no data section at all after the padding",
        file([], [("a", [4], 0)], data=b""))

    # -- @huggingface/gguf's bounds (gguf.cpp reads these)
    add("js-kv-count-100001", "ok", "100,001 key/value pairs",
        file([kv("k%d" % i, U8, b"\0") for i in range(100_001)], basic))
    add("js-array-1000001", "ok", "an array of 1,000,001 u8",
        file([kv("arr", ARRAY, u32(U8) + u64(1_000_001) + b"\7" * 1_000_001)], basic))
    add("js-string-1000001", "ok", "a 1,000,001-byte string value",
        file([kv("big", STRING, s(b"v" * 1_000_001))], basic))
    add("js-key-2^20", "ok", "a 1 MiB key across a chunk boundary",
        file([kv("pad1", STRING, s(b"p" * 700_000)), kv("pad2", STRING, s(b"p" * 700_000)),
              kv(b"k" * 2**20, U8, b"\1")], basic))
    add("js-dim-2^32+1", "ok", "a dimension of 2^32+1 beside a 0",
        file([], [("z", [0, 2**32 + 1], 0)]))
    add("js-header-48000001", "ok", "a header of more than 48,000,000 bytes",
        file([kv("s%02d" % i, STRING, s(b"x" * 1_000_000)) for i in range(48)], basic))
    add("js-name-bom", "ok", "a name that starts with U+FEFF",
        file([], [("\ufeffw", [4], 0)]))
    add("js-name-not-utf8", "ok", "a name that is not UTF-8", file([], [(b"w\xff", [4], 0)]))
    add("js-key-bom-alignment", "ok",
        "general.alignment 32 and U+FEFF general.alignment 64 (one key to a TextDecoder)",
        file([kv_u32("general.alignment", 32), kv_u32("\ufeffgeneral.alignment", 64)], basic))
    add("key-nul-alignment", "ok",
        "\"general.alignment\\0x\" u32 64: gguf.cpp finds it by strcmp and starts the data at "
        "192, not 160", file([kv_u32(b"general.alignment\0x", 64)], basic[:2], align=64))
    add("js-key-not-utf8", "ok", "a key that is not UTF-8", file([kv(b"k\xc0", U8, b"\1")], basic))
    # -- gguf-py's (GGUFReader, llama.cpp gguf-py/gguf/gguf_reader.py): a numpy
    # array over each tensor; numpy refuses itemsize x the nonzero dimensions
    # above 2^63-1, even empty. gguf.cpp reads all of these.
    add("py-zero-2^32-2^32", "ok", "ne [0, 2^32, 2^32]: numpy cannot reshape it",
        file([], [("z", [0, 2**32, 2**32], 0)]))
    add("py-2^32-2^32-zero", "ok", "ne [2^32, 2^32, 0]: numpy cannot reshape it",
        file([], [("z", [2**32, 2**32, 0], 0)]))
    add("py-i8-nonzero-2^63-2", "ok", "I8, nonzero dimensions 2^63-2",
        file([], [("z", [2147483647, 2147483649, 2, 0], 24)]))
    add("py-i8-nonzero-2^63-1", "ok", "I8, nonzero dimensions 2^63-1",
        file([], [("z", [1532540863, 47388607, 127, 0], 24)]))
    add("py-i8-nonzero-2^63", "ok", "I8, nonzero dimensions 2^63",
        file([], [("z", [2**31, 2**31, 2, 0], 24)]))
    add("py-f32-nonzero-2^61", "ok", "F32 (4 bytes), nonzero dimensions 2^61",
        file([], [("z", [0, 2**31, 2**30], 0)]))
    add("py-f32-nonzero-2^61-2^31", "ok", "F32 (4 bytes), nonzero dimensions 2^61-2^31",
        file([], [("z", [0, 2**31, 2**30 - 1], 0)]))
    add("py-q4_0-bytes-over", "ok", "Q4_0 as bytes: ne[0] 2^32 is 2^27 * 18 bytes, times 2^32",
        file([], [("z", [2**32, 0, 2**32], 2)]))
    add("py-q4_0-bytes-under", "ok", "Q4_0 as bytes: 2^27 * 18 bytes times 2^31",
        file([], [("z", [2**32, 0, 2**31], 2)]))
    add("py-q8_1", "ok", "Q8_1 of 64 elements: gguf-py sizes its blocks at 40 bytes, ggml 36",
        file([], [("q", [64], 9), ("f", [4], 0)]))
    add("py-q8_1-last", "ok", "Q8_1 last, its data ending where 36-byte blocks end",
        file([], [("f", [4], 0), ("q", [32, 3], 9)])[:-20])
    add("py-q8_1-empty", "ok", "Q8_1 with no element", file([], [("q", [32, 0], 9)]))
    add("py-q2_0", "ok", "Q2_0 (42): unknown to gguf-py", file([], [("q", [64], 42)]))
    add("py-bf16-scalar", "ok", "BF16 of no dimensions: gguf-py has no row to turn into bytes",
        file([], [("s", [], 30)]))
    add("py-bf16-one", "ok", "BF16 of one element", file([], [("s", [1], 30)]))
    add("kiln-tensor-count-65536", "ok", "65,536 tensors of no bytes",
        file([], [("t%d" % i, [0], 0) for i in range(65536)]))
    return c


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "cases.tsv"), "w") as manifest:
        for name, expect, why, raw in cases():
            with open(os.path.join(out, name + ".gguf"), "wb") as f:
                f.write(raw)
            manifest.write("%s\t%s\t%s\n" % (name, expect, why))


if __name__ == "__main__":
    main()
