"""Writes a GGUF v3 file with nothing but Python's struct.

usage: write_gguf.py OUT DATA_DIR

An independent writer for the kiln tests, following the GGUF layout of
llama.cpp's gguf.md: magic "GGUF", u32 version 3, u64 tensor_count, u64
metadata_kv_count, the key/value pairs, the tensor infos (name, u32 n_dims,
u64 dims innermost first, u32 ggml type, u64 offset), padding to
general.alignment, then the tensor data, each tensor at the offset ggml's
gguf.cpp requires: the sizes of the tensors before it, each padded to the
alignment.
The quantised tensors hold fake block bytes. DATA_DIR/<name>.bin receives
each tensor's bytes, for the test to compare with what kiln stored.
"""
import os
import struct
import sys

ALIGNMENT = 64
U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 = range(13)
SCALAR = {U8: "B", I8: "b", U16: "H", I16: "h", U32: "I", I32: "i", F32: "f",
          BOOL: "?", U64: "Q", I64: "q", F64: "d"}


def string(s):
    raw = s.encode("utf-8")
    return struct.pack("<Q", len(raw)) + raw


def value(vtype, v):
    if vtype == STRING:
        return string(v)
    if vtype == ARRAY:
        etype, items = v
        return struct.pack("<IQ", etype, len(items)) + b"".join(value(etype, i) for i in items)
    return struct.pack("<" + SCALAR[vtype], v)


METADATA = [
    ("general.architecture", STRING, "llama"),
    ("general.alignment", U32, ALIGNMENT),
    ("test.u8", U8, 7),
    ("test.i32", I32, -5),
    ("test.f32", F32, 0.5),
    ("test.bool", BOOL, True),
    ("test.u64", U64, 2**40),
    ("test.f64", F64, -1.25),
    ("test.tokens", ARRAY, (STRING, ["a", "b", "c"])),
    ("test.ints", ARRAY, (I16, [1, -2, 3])),  # gguf.cpp refuses arrays of arrays
]

# (name, ggml type, dims innermost first, bytes per block, elements per block)
TENSORS = [
    ("tok.f32", 0, [3, 2], 4, 1),
    ("norm.f16", 1, [8], 2, 1),
    ("blk.0.q4_0", 2, [64, 2], 18, 32),
    ("blk.0.q8_0", 8, [32, 3], 34, 32),
]


def tensor_bytes(index, dims, type_size, block_size):
    count = 1
    for d in dims:
        count *= d
    size = count // block_size * type_size
    return bytes((index * 53 + k * 37 + 11) % 256 for k in range(size))


def main():
    out, data_dir = sys.argv[1], sys.argv[2]
    os.makedirs(data_dir, exist_ok=True)
    head = b"GGUF" + struct.pack("<IQQ", 3, len(TENSORS), len(METADATA))
    for key, vtype, v in METADATA:
        head += string(key) + struct.pack("<I", vtype) + value(vtype, v)
    data = b""
    infos = b""
    for i, (name, gtype, dims, type_size, block_size) in enumerate(TENSORS):
        raw = tensor_bytes(i, dims, type_size, block_size)
        data += b"\0" * ((ALIGNMENT - len(data) % ALIGNMENT) % ALIGNMENT)
        infos += string(name) + struct.pack("<I", len(dims))
        infos += b"".join(struct.pack("<Q", d) for d in dims)
        infos += struct.pack("<IQ", gtype, len(data))
        data += raw
        with open(os.path.join(data_dir, name + ".bin"), "wb") as f:
            f.write(raw)
    head += infos
    head += b"\0" * ((ALIGNMENT - len(head) % ALIGNMENT) % ALIGNMENT)
    with open(out, "wb") as f:
        f.write(head + data)


if __name__ == "__main__":
    main()
