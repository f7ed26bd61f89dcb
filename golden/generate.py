#!/usr/bin/env python3
"""Generate the Kiln v2 tensor directory golden cases.

Writes ``cases/<case>.klnt`` (one binary block per case) and ``manifest.tsv``
into the output directory (default: the folder holding this script). The
output is deterministic: running the script twice gives identical bytes.

The format rules (ids H1..P2, error classes FRAME/TYPE/LIMIT/UTF8 and the
order in which checks run) are encoded below; nothing outside this file is
read at run time. The script is organised in four parts:

1. format constants (dtype table, rule classes, field offsets);
2. a small encoder: ``Header``, ``Descriptor`` and ``build_block``;
3. where an error points: the byte offset and tensor a negative case must
   report, derived from how the case is built (docs/spec.md section 7.11);
4. the cases, grouped by rule, each starting from a valid block and breaking
   exactly one thing (ordering cases break exactly two).

The generator does not check its cases with a checker of its own: kiln
(tests/parser/golden_test.cc) and the independent reference checker in
fuzz/reference (tests/fuzz/reference_test.cc) are checked against the manifest,
and any other implementation can be with scripts/conformance.py.

Usage:  python3 golden/generate.py [--out DIR]
"""

from __future__ import annotations

import argparse
import re
import struct
import sys
from dataclasses import dataclass, field as dataclass_field, replace
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple, Union

# ---------------------------------------------------------------------------
# 1. Format constants
# ---------------------------------------------------------------------------

MAGIC = b"KLNT"
VERSION = 2
HEADER_SIZE = 64
DESCRIPTOR_SIZE = 128
ALIGN = 64

# (field, struct code) in byte order: the pack formats and the field offsets
# that error offsets point at both come from these two tables.
HEADER_LAYOUT = [
    ("magic", "4s"), ("version", "B"), ("flags", "B"), ("reserved6", "2s"),
    ("tensor_count", "I"), ("name_bytes", "I"), ("payload_bytes", "Q"),
    ("directory_bytes", "Q"), ("reserved32", "32s"),
]
DESCRIPTOR_LAYOUT = [
    ("dtype", "H"), ("rank", "B"), ("reserved3", "B"), ("name_off", "H"), ("name_len", "H"),
    ("layout_off", "H"), ("layout_len", "H"), ("block_size", "I"), ("quant_scheme", "H"),
    ("quant_axis", "H"), ("group_size", "I"), ("scale_index", "I"), ("outer_index", "I"),
    ("byte_offset", "Q"), ("byte_length", "Q"), ("shape", "8Q"), ("reserved_tail", "16s"),
]


def _offsets(layout: List[Tuple[str, str]]) -> Dict[str, int]:
    out, at = {}, 0
    for name, code in layout:
        out[name] = at
        at += struct.calcsize("<" + code)
    return out


HEADER_FORMAT = "<" + "".join(code for _, code in HEADER_LAYOUT)
DESCRIPTOR_FORMAT = "<" + "".join(code for _, code in DESCRIPTOR_LAYOUT)
HEADER_FIELD = _offsets(HEADER_LAYOUT)
DESCRIPTOR_FIELD = _offsets(DESCRIPTOR_LAYOUT)
assert struct.calcsize(HEADER_FORMAT) == HEADER_SIZE
assert struct.calcsize(DESCRIPTOR_FORMAT) == DESCRIPTOR_SIZE

FLAG_NAMES = 0x01
FLAG_LITTLE_ENDIAN = 0x02

U16_NONE = 0xFFFF
U32_NONE = 0xFFFFFFFF
U64_MAX = 2**64 - 1

OPAQUE = 0x8000

# name -> (code, bits). Codes follow ONNX TensorProto numbering.
DTYPES: Dict[str, Tuple[int, int]] = {
    "f32": (1, 32),
    "u8": (2, 8),
    "i8": (3, 8),
    "u16": (4, 16),
    "i16": (5, 16),
    "i32": (6, 32),
    "i64": (7, 64),
    "bool": (9, 8),
    "f16": (10, 16),
    "f64": (11, 64),
    "u32": (12, 32),
    "u64": (13, 64),
    "c64": (14, 64),
    "c128": (15, 128),
    "bf16": (16, 16),
    "f8_e4m3fn": (17, 8),
    "f8_e4m3fnuz": (18, 8),
    "f8_e5m2": (19, 8),
    "f8_e5m2fnuz": (20, 8),
    "u4": (21, 4),
    "i4": (22, 4),
    "f4_e2m1": (23, 4),
    "f8_e8m0": (24, 8),
}
DTYPE_CODE = {name: code for name, (code, _) in DTYPES.items()}
DTYPE_BITS = {code: bits for _, (code, bits) in DTYPES.items()}
SCALE_DTYPES = {DTYPE_CODE[n] for n in ("f16", "bf16", "f32", "f64", "f8_e4m3fn", "f8_e8m0")}

RULE_CLASS: Dict[str, str] = {
    "H1": "FRAME", "H2": "FRAME", "H3": "FRAME", "H4": "FRAME", "H5": "FRAME",
    "H6": "TYPE", "H7": "LIMIT", "H8": "FRAME", "H9": "TYPE", "L1": "TYPE",
    "D1": "TYPE", "D2": "TYPE", "D3": "FRAME", "D4": "TYPE", "D5": "LIMIT",
    "D6": "LIMIT", "D7": "TYPE", "D8": "LIMIT", "D9": "TYPE", "D10": "TYPE",
    "N1": "TYPE", "N2": "TYPE", "O1": "TYPE", "O2": "TYPE", "O3": "TYPE",
    "Q1": "TYPE", "Q2": "TYPE", "Q3": "TYPE", "Q4": "TYPE",
    "N3": "TYPE", "N4": "UTF8", "N5": "TYPE",
    "Q5": "TYPE", "Q6": "TYPE", "Q7": "TYPE",
    "P1": "TYPE", "P2": "TYPE",
}
# Every rule id, in checking order. Each must have at least one negative case.
RULE_ORDER: List[str] = list(RULE_CLASS)

# The empty directory exactly as the seed text prints it.
SEED_EMPTY_HEX = "4b4c4e5402020000" + "00" * 56
# 1.0 and -2.0 as little-endian f32, the payload of kiln-v2-f32.
F32_PAIR = bytes.fromhex("0000803f000000c0")
# The same two floats as a Frozen list (u32 count, then the floats).
POD_LIST_F32 = bytes.fromhex("02000000" "0000803f" "000000c0")

# 2^64 - 1 = 3 * 5 * 17 * 257 * 641 * 65537 * 6700417 (Fermat factors).
SHAPE_2_64_MINUS_1 = (3, 5, 17, 257, 641, 65537, 6700417)

# Payload regions larger than this are not materialised (header-only cases).
MATERIALISE_LIMIT = 1 << 20


def align64(n: int) -> int:
    return (n + ALIGN - 1) & ~(ALIGN - 1)


# ---------------------------------------------------------------------------
# 2. Encoder
# ---------------------------------------------------------------------------

NameLike = Union[str, bytes, None]


def _raw(name: NameLike) -> Optional[bytes]:
    if name is None:
        return None
    return name.encode("utf-8") if isinstance(name, str) else bytes(name)


@dataclass
class Header:
    """The 64-byte header. ``None`` fields are computed by build_block."""

    magic: bytes = MAGIC
    version: int = VERSION
    flags: Optional[int] = None
    reserved6: bytes = bytes(2)
    tensor_count: Optional[int] = None
    name_bytes: Optional[int] = None
    payload_bytes: Optional[int] = None
    directory_bytes: Optional[int] = None
    reserved32: bytes = bytes(32)

    def pack(self) -> bytes:
        return struct.pack(
            HEADER_FORMAT,
            self.magic, self.version, self.flags, self.reserved6,
            self.tensor_count, self.name_bytes, self.payload_bytes,
            self.directory_bytes, self.reserved32,
        )


@dataclass
class Descriptor:
    """One tensor. The defaults give a valid unnamed f32 vector of shape [2].

    ``None`` fields are computed by build_block: rank from the shape, name
    and layout offsets from the natural heap, byte_length from the dtype and
    element count, byte_offset from the payload placement. Setting a field
    explicitly overrides the computed value (that is how cases break rules).
    """

    dtype: int = DTYPE_CODE["f32"]
    shape: Sequence[int] = (2,)
    name: NameLike = None
    layout: NameLike = None
    block_size: int = 0
    block_bytes: int = 0  # generator only: bytes per opaque block
    quant_scheme: int = 0
    quant_axis: int = U16_NONE
    group_size: int = 0
    scale_index: int = U32_NONE
    outer_index: int = U32_NONE
    byte_offset: Optional[int] = None
    byte_length: Optional[int] = None
    data: Optional[bytes] = None  # payload bytes; None = generated sample
    rank: Optional[int] = None
    slots: Optional[Sequence[int]] = None  # raw 8 shape slots
    name_off: Optional[int] = None
    name_len: Optional[int] = None
    layout_off: Optional[int] = None
    layout_len: Optional[int] = None
    reserved3: int = 0
    reserved_tail: bytes = bytes(16)

    def resolved_rank(self) -> int:
        return len(self.shape) if self.rank is None else self.rank

    def resolved_slots(self) -> List[int]:
        if self.slots is not None:
            s = list(self.slots)
        else:
            s = list(self.shape)
        assert len(s) <= 8, "more than 8 shape slots"
        return s + [0] * (8 - len(s))


def element_count(rank: int, slots: Sequence[int]) -> int:
    """Exact element count (may exceed 2^64 - 1; callers decide)."""
    if rank == 0:
        return 1
    dims = list(slots[:rank])
    if any(d == 0 for d in dims):
        return 0
    count = 1
    for d in dims:
        count *= d
    return count


def natural_length(d: Descriptor) -> int:
    """byte_length a valid block would store for ``d``."""
    count = element_count(d.resolved_rank(), d.resolved_slots())
    if d.dtype == OPAQUE:
        return (count // d.block_size) * d.block_bytes
    bits = DTYPE_BITS[d.dtype]
    size = (count * bits + 7) // 8
    assert size <= U64_MAX, "size overflows: give byte_length explicitly"
    return size


def resolved_length(d: Descriptor) -> int:
    if d.byte_length is not None:
        return d.byte_length
    if d.data is not None:
        return len(d.data)
    return natural_length(d)


def _pattern(length: int, seed: int) -> bytes:
    """Deterministic nonzero filler bytes."""
    return bytes(((seed * 73 + k * 29 + 11) % 255) + 1 for k in range(length))


def sample_payload(d: Descriptor, length: int, seed: int) -> bytes:
    """Plausible payload bytes for ``d`` (exactly ``length`` bytes)."""
    if d.dtype not in DTYPE_BITS:
        return _pattern(length, seed)
    try:
        if natural_length(d) != length:
            return _pattern(length, seed)
    except AssertionError:
        return _pattern(length, seed)
    count = element_count(d.resolved_rank(), d.resolved_slots())
    values = [((k * 5 + seed * 3) % 17 - 8) / 4.0 for k in range(count)]
    code = d.dtype
    if code == DTYPE_CODE["bool"]:
        return bytes((k + seed) % 2 for k in range(count))
    if DTYPE_BITS[code] == 4:
        nibbles = [(k * 3 + seed) & 0xF for k in range(count)]
        if count % 2:
            nibbles.append(0)  # unused high nibble of the last byte
        return bytes(lo | (hi << 4) for lo, hi in zip(nibbles[0::2], nibbles[1::2]))
    if code == DTYPE_CODE["f32"]:
        return struct.pack("<%df" % count, *values)
    if code == DTYPE_CODE["f64"]:
        return struct.pack("<%dd" % count, *values)
    if code == DTYPE_CODE["f16"]:
        return struct.pack("<%de" % count, *values)
    if code == DTYPE_CODE["bf16"]:
        return b"".join(struct.pack("<f", v)[2:] for v in values)
    if code == DTYPE_CODE["c64"]:
        return struct.pack("<%df" % (2 * count), *[x for v in values for x in (v, -v / 2)])
    if code == DTYPE_CODE["c128"]:
        return struct.pack("<%dd" % (2 * count), *[x for v in values for x in (v, -v / 2)])
    if code == DTYPE_CODE["f8_e8m0"]:
        return bytes(124 + (k + seed) % 7 for k in range(count))  # 2^-3 .. 2^3
    return _pattern(length, seed)


def build_block(
    tensors: Sequence[Descriptor] = (),
    *,
    heap: Optional[bytes] = None,
    order: Optional[Sequence[int]] = None,
    gaps: Optional[Dict[int, int]] = None,
    tail: int = 0,
    pad_pokes: Optional[Dict[int, int]] = None,
    payload_pokes: Optional[Dict[int, int]] = None,
    trailing: bytes = b"",
    truncate: Optional[int] = None,
    **header_fields,
) -> bytes:
    """Encode a block.

    Computed unless overridden: flags (little-endian bit, plus the name bit
    when any tensor has a name), tensor_count, name_bytes, directory_bytes,
    payload_bytes, every descriptor's name/layout offsets and lengths, the
    byte lengths and the payload placement.

    heap:          explicit name heap (default: tensor names in descriptor
                   order, then layout names in descriptor order).
    order:         descriptor indices in the order their payloads are stored
                   (default: descriptor order). Each payload starts at the
                   next multiple of 64. Zero-length tensors default to
                   byte_offset 0; explicit byte_offsets are kept as given.
    gaps:          {index: extra zero bytes (a multiple of 64) before it}.
    tail:          zero bytes after the last payload, inside payload_bytes.
    pad_pokes:     {index into the pad: byte} written into the padding.
    payload_pokes: {payload offset: byte} written into the payload region.
    trailing:      bytes appended after the block.
    truncate:      cut the file to this many bytes.
    header_fields: any Header field to override (flags=..., ...).
    """
    ts = [replace(t) for t in tensors]
    n = len(ts)

    # Name heap: tensor names in descriptor order, then layout names.
    cursor = 0
    parts: List[bytes] = []
    for t in ts:
        raw = _raw(t.name)
        if raw is None:
            t.name_off = U16_NONE if t.name_off is None else t.name_off
            t.name_len = 0 if t.name_len is None else t.name_len
        else:
            t.name_off = cursor if t.name_off is None else t.name_off
            t.name_len = len(raw) if t.name_len is None else t.name_len
            parts.append(raw)
            cursor += len(raw)
    for t in ts:
        raw = _raw(t.layout)
        if raw is None:
            t.layout_off = U16_NONE if t.layout_off is None else t.layout_off
            t.layout_len = 0 if t.layout_len is None else t.layout_len
        else:
            t.layout_off = cursor if t.layout_off is None else t.layout_off
            t.layout_len = len(raw) if t.layout_len is None else t.layout_len
            parts.append(raw)
            cursor += len(raw)
    if heap is None:
        heap = b"".join(parts)

    # Payload placement.
    lengths = [resolved_length(t) for t in ts]
    offsets: List[Optional[int]] = [t.byte_offset for t in ts]
    gaps = gaps or {}
    order = list(range(n)) if order is None else list(order)
    assert sorted(order) == list(range(n)), "order must list every descriptor once"
    pos = 0
    for i in order:
        if offsets[i] is not None:
            continue
        if lengths[i] == 0:
            offsets[i] = 0
            continue
        assert gaps.get(i, 0) % ALIGN == 0
        pos = align64(pos) + gaps.get(i, 0)
        offsets[i] = pos
        pos += lengths[i]
    ends = [o + l for o, l in zip(offsets, lengths) if o + l < 2**40]
    natural_payload = max(ends, default=0) + tail

    flags = FLAG_LITTLE_ENDIAN | (FLAG_NAMES if any(t.name is not None for t in ts) else 0)
    h = Header(**header_fields)
    if h.flags is None:
        h.flags = flags
    if h.tensor_count is None:
        h.tensor_count = n
    if h.name_bytes is None:
        h.name_bytes = len(heap)
    if h.directory_bytes is None:
        h.directory_bytes = n * DESCRIPTOR_SIZE + len(heap)
    if h.payload_bytes is None:
        h.payload_bytes = natural_payload

    out = bytearray(h.pack())
    layout = {"heap_start": HEADER_SIZE + n * DESCRIPTOR_SIZE}
    for t, off, length in zip(ts, offsets, lengths):
        out += struct.pack(
            DESCRIPTOR_FORMAT,
            t.dtype, t.resolved_rank(), t.reserved3,
            t.name_off, t.name_len, t.layout_off, t.layout_len,
            t.block_size, t.quant_scheme, t.quant_axis, t.group_size,
            t.scale_index, t.outer_index, off, length,
            *t.resolved_slots(), t.reserved_tail,
        )
    out += heap
    layout["pad_start"] = len(out)

    # Padding: from the end of the heap (as laid out) to the next multiple of 64.
    pad = bytearray(align64(len(out)) - len(out))
    for k, v in (pad_pokes or {}).items():
        pad[k] = v
    out += pad
    layout["payload_base"] = len(out)
    layout["block_length"] = len(out) + h.payload_bytes

    # Payload region.
    region_len = h.payload_bytes if h.payload_bytes <= MATERIALISE_LIMIT else 0
    region = bytearray(region_len)
    for i, (t, off, length) in enumerate(zip(ts, offsets, lengths)):
        if length and off + length <= region_len:
            data = t.data if t.data is not None and len(t.data) == length else sample_payload(t, length, i)
            region[off:off + length] = data
    for k, v in (payload_pokes or {}).items():
        region[k] = v
    out += region

    out += trailing
    if truncate is not None:
        out = out[:truncate]
    return Block(out, **layout)


class Block(bytes):
    """A built block's bytes, plus where its regions start as it was laid out
    (header_fields overrides aside): heap_start, pad_start, payload_base and
    block_length (payload_base + the header's payload_bytes)."""

    def __new__(cls, data: bytes, **layout: int) -> "Block":
        block = super().__new__(cls, data)
        for key, value in layout.items():
            setattr(block, key, value)
        return block


def T(dtype: Union[str, int] = "f32", shape: Sequence[int] = (2,), name: NameLike = None, **kw) -> Descriptor:
    """A tensor of a table dtype (by name) or of a raw dtype code."""
    code = DTYPE_CODE[dtype] if isinstance(dtype, str) else dtype
    return Descriptor(dtype=code, shape=tuple(shape), name=name, **kw)


def OP(shape: Sequence[int], layout: NameLike = "ggml.q4_K", block_size: int = 256,
       block_bytes: int = 144, name: NameLike = None, **kw) -> Descriptor:
    """An opaque tensor (ggml.q4_K: 256 elements in a 144-byte block)."""
    return Descriptor(dtype=OPAQUE, shape=tuple(shape), name=name, layout=layout,
                      block_size=block_size, block_bytes=block_bytes, **kw)


def f32_pair(**kw) -> Descriptor:
    """The tensor of kiln-v2-f32: f32 [2] holding 1.0 and -2.0."""
    return T("f32", (2,), data=F32_PAIR, **kw)


def tail_bytes(index: int, value: int) -> bytes:
    """Descriptor bytes 112..127 with descriptor byte ``index`` set."""
    b = bytearray(16)
    b[index - 112] = value
    return bytes(b)


# ---------------------------------------------------------------------------
# 3. Where an error points (docs/spec.md 7.11)
# ---------------------------------------------------------------------------
#
# Each negative case names the byte offset and the tensor index (or none) a
# reader must report with its rule. These helpers compute them from the
# field tables above and from how build_block laid the case out; nothing runs
# a checker. Each returns a function of the case's bytes.

Where = Callable[[bytes], Tuple[int, Optional[int]]]


def byte(offset: int, tensor: Optional[int] = None) -> Where:
    """A fixed offset from the start of the block."""
    return lambda data: (offset, tensor)


def header(name: str) -> Where:
    """A header field (no tensor)."""
    return byte(HEADER_FIELD[name])


def field(i: int, name: str, k: int = 0) -> Where:
    """Byte k of field ``name`` of descriptor i; the error names tensor i."""
    return byte(HEADER_SIZE + DESCRIPTOR_SIZE * i + DESCRIPTOR_FIELD[name] + k, i)


def slot(i: int, k: int) -> Where:
    """Shape slot k of descriptor i."""
    return field(i, "shape", 8 * k)


def truncated() -> Where:
    """A short buffer: the buffer length, where the missing bytes start."""
    return lambda data: (len(data), None)


def block_end() -> Where:
    """Trailing bytes: block_length, where the extra bytes start."""
    return lambda data: (data.block_length, None)


def pad(k: int) -> Where:
    """Padding byte k (counted from the end of the heap)."""
    return lambda data: (data.pad_start + k, None)


def heap(k: int, tensor: Optional[int] = None) -> Where:
    """Heap byte k; a UTF-8 error names the tensor whose slice holds it."""
    return lambda data: (data.heap_start + k, tensor)


def payload(k: int) -> Where:
    """Payload byte k (relative to payload_base)."""
    return lambda data: (data.payload_base + k, None)


# ---------------------------------------------------------------------------
# 4. Cases
# ---------------------------------------------------------------------------


@dataclass
class Case:
    name: str
    expect: str
    rule: str
    description: str
    data: bytes
    offset: Optional[int] = None  # negative cases: the byte the error points at
    tensor: Optional[int] = None  # and the descriptor it names, if any

    def columns(self) -> Tuple[str, ...]:
        def show(v: Optional[int]) -> str:
            return "-" if v is None else str(v)
        return (self.name, self.expect, self.rule, show(self.offset), show(self.tensor),
                self.description)


@dataclass
class Golden:
    """Collects the manifest rows (section headings and cases) in order."""

    rows: List[Union[str, Case]] = dataclass_field(default_factory=list)

    def section(self, title: str) -> None:
        self.rows.append(title)

    def ok(self, name: str, description: str, data: bytes) -> None:
        self.rows.append(Case(name, "ok", "-", description, data))

    def bad(self, name: str, rule: str, description: str, data: bytes, *, at: Where) -> None:
        offset, tensor = at(data)
        self.rows.append(Case(name, RULE_CLASS[rule], rule, description, data, offset, tensor))

    @property
    def cases(self) -> List[Case]:
        return [r for r in self.rows if isinstance(r, Case)]


# Reusable valid blocks -------------------------------------------------------

def quant_scheme1() -> List[Descriptor]:
    """i8 [4,16] per-row (axis 0) scheme 1, f16 [4] scale, f32 scalar outer."""
    return [
        T("i8", (4, 16), "model.layers.0.mlp.down_proj.weight",
          quant_scheme=1, quant_axis=0, scale_index=1, outer_index=2),
        T("f16", (4,), "model.layers.0.mlp.down_proj.weight_scale"),
        T("f32", (), "model.layers.0.mlp.down_proj.input_scale"),
    ]


def quant_scheme2() -> List[Descriptor]:
    """i4 [4,70] scheme 2 along axis 1 in groups of 32, f8_e8m0 [4,3] scale."""
    return [
        T("i4", (4, 70), "model.layers.0.self_attn.o_proj.weight",
          quant_scheme=2, quant_axis=1, group_size=32, scale_index=1, outer_index=2),
        T("f8_e8m0", (4, 3), "model.layers.0.self_attn.o_proj.weight_scale"),
        T("f32", (), "model.layers.0.self_attn.o_proj.weight_scale_2"),
    ]


def with_(ts: List[Descriptor], i: int, **kw) -> List[Descriptor]:
    ts = list(ts)
    ts[i] = replace(ts[i], **kw)
    return ts


LLAMA_NAMES = [
    ("model.embed_tokens.weight", "bf16", (16, 8)),
    ("model.layers.0.input_layernorm.weight", "f32", (8,)),
    ("model.layers.0.attn.q_proj.weight", "bf16", (8, 8)),
    ("model.layers.0.attn.k_proj.weight", "bf16", (4, 8)),
    ("model.layers.0.attn.v_proj.weight", "bf16", (4, 8)),
    ("model.layers.0.attn.o_proj.weight", "bf16", (8, 8)),
    ("model.layers.0.mlp.gate_proj.weight", "bf16", (16, 8)),
    ("model.norm.weight", "f32", (8,)),
    ("lm_head.weight", "bf16", (16, 8)),
]


def seed_cases(g: Golden) -> None:
    g.section("the three cases the seed text names")
    empty = build_block([])
    assert empty.hex() == SEED_EMPTY_HEX
    g.ok("kiln-v2-empty", "the 64-byte empty directory from the seed: flags 0x02, every length zero", empty)
    f32 = build_block([f32_pair()])
    assert len(f32) == 200
    g.ok("kiln-v2-f32", "one unnamed f32 vector of shape [2] holding 1.0 and -2.0: 64 header + 128 descriptor + 8 payload = 200 bytes", f32)
    g.bad("kiln-pod-list-f32", "H1", "the 12-byte Frozen list 02000000 0000803f 000000c0 (same two floats): first 4 bytes are not KLNT", POD_LIST_F32,
          at=byte(0))


def ok_cases(g: Golden) -> None:
    g.section("valid blocks")
    g.ok("ok-named-llama-layer",
         "9 named bf16/f32 tensors with realistic names (model.embed_tokens.weight, model.layers.0.attn.q_proj.weight, ...), flags 0x03",
         build_block([T(dt, shape, name) for name, dt, shape in LLAMA_NAMES]))
    g.ok("ok-names-multibyte-utf8",
         "named tensors with Greek (2-byte), CJK (3-byte), emoji and math-script (4-byte only) UTF-8 names",
         build_block([
             T("f32", (2,), "βάρος.γραμμικό.α"),
             T("f16", (3,), "权重.注意力.查询"),
             T("f32", (4,), "🔥.bias"),
             T("u8", (5,), "𝔀𝓮𝓲𝓰𝓱𝓽"),
         ]))
    boundary = ["a\u007f", "\u0080", "\u07ff", "\u0800", "\ud7ff", "\ue000", "\ufffd", "\uffff",
                "\U00010000", "\U0010ffff"]
    g.ok("ok-name-utf8-boundaries",
         "10 u8 [1] tensors named by boundary code points U+007F U+0080 U+07FF U+0800 U+D7FF U+E000 U+FFFD U+FFFF U+10000 U+10FFFF (all well-formed)",
         build_block([T("u8", (1,), nm) for nm in boundary]))
    g.ok("ok-names-distinct-raw-bytes",
         "names unique as raw bytes though alike: cafe-acute NFC (c3 a9) vs NFD (65 cc 81), W vs w, a vs a.b",
         build_block([
             T("f32", (2,), "caf\u00e9"), T("f32", (2,), "cafe\u0301"),
             T("f32", (2,), "W"), T("f32", (2,), "w"),
             T("f32", (2,), "a"), T("f32", (2,), "a.b"),
         ]))
    g.ok("ok-all-dtypes",
         "24 named tensors, one of every non-opaque dtype (shape [3]; 4-bit dtypes shape [5] = 3 bytes by ceil)",
         build_block([T(dt, (5,) if bits == 4 else (3,), "dtype." + dt) for dt, (_, bits) in DTYPES.items()]))
    g.ok("ok-4bit-odd-counts",
         "4-bit dtypes with odd counts: u4 [1] = 1 byte, i4 [3,3] = 5 bytes, f4_e2m1 [7] = 4 bytes, u4 rank 0 = 1 byte",
         build_block([T("u4", (1,)), T("i4", (3, 3)), T("f4_e2m1", (7,)), T("u4", ())]))
    g.ok("ok-rank0-scalars",
         "rank-0 scalars (count 1, all shape slots 0): f32 4 bytes, f64 8 bytes, bf16 2 bytes, bool 1 byte",
         build_block([T("f32", ()), T("f64", ()), T("bf16", ()), T("bool", ())]))
    g.ok("ok-rank8",
         "rank 8: u8 [2,1,2,1,2,1,2,3] = 48 bytes and f16 [1,1,1,1,1,1,1,1] = 2 bytes",
         build_block([T("u8", (2, 1, 2, 1, 2, 1, 2, 3)), T("f16", (1,) * 8)]))
    g.ok("ok-zero-dims",
         "only zero-element tensors: f32 [0], f32 [3,0], i4 [0,5], u8 rank 8 [4,4,4,0,4,4,4,4]; all byte_length 0 at offset 0, payload_bytes 0",
         build_block([T("f32", (0,)), T("f32", (3, 0)), T("i4", (0, 5)), T("u8", (4, 4, 4, 0, 4, 4, 4, 4))]))
    g.ok("ok-zero-dim-among-huge",
         "zero dimension among huge ones counts 0: u8 [2^40,0,2^40], f64 [2^63,2^63,0] (partial product 2^126 before the 0), c128 [2^63 x7, 0]; byte_length 0; plus f32 [2]",
         build_block([
             T("u8", (2**40, 0, 2**40)), T("f64", (2**63, 2**63, 0)),
             T("c128", (2**63,) * 7 + (0,)), f32_pair(),
         ]))
    g.ok("ok-opaque-q4k-unnamed",
         "unnamed opaque tensor dtype 0x8000 layout ggml.q4_K block_size 256 shape [2,512] = 4 blocks x 144 = 576 bytes; flags 0x02, heap holds only the layout name",
         build_block([OP((2, 512))]))
    g.ok("ok-opaque-repeated-layout",
         "named: two ggml.q4_K tensors ([2,512] 576 bytes, [1,512] 288 bytes; the layout name is stored twice), a ggml.q8_0 [2,64] (block 32, 4 x 34 bytes) and an f32; heap = 4 names then 3 layouts",
         build_block([
             OP((2, 512), name="blk.0.attn_q.weight"),
             OP((1, 512), name="blk.0.attn_k.weight"),
             OP((2, 64), "ggml.q8_0", 32, 34, name="blk.0.attn_v.weight"),
             T("f32", (8,), "blk.0.attn_norm.weight"),
         ]))
    g.ok("ok-opaque-zero-elements",
         "opaque ggml.q4_K shape [0,256] block_size 256: 0 blocks, byte_length 0; plus f32 [2]",
         build_block([OP((0, 256)), f32_pair()]))
    g.ok("ok-quant-scheme1",
         "scheme 1: i8 [4,16] axis 0, scale_index 1 = f16 [4], outer_index 2 = f32 rank 0; named",
         build_block(quant_scheme1()))
    g.ok("ok-quant-scheme1-axis1",
         "scheme 1: u8 [3,5] axis 1, scale bf16 [5] at index 1, outer_index 0xFFFFFFFF",
         build_block([T("u8", (3, 5), quant_scheme=1, quant_axis=1, scale_index=1), T("bf16", (5,))]))
    g.ok("ok-quant-scheme2-ceil",
         "scheme 2: i4 [4,70] (140 bytes) axis 1 group_size 32, scale f8_e8m0 [4,3] (ceil 70/32 = 3), outer f32 rank 0; named",
         build_block(quant_scheme2()))
    g.ok("ok-quant-scheme2-variants",
         "scheme 2: u8 [5,6] axis 0 group_size 32 > dim, scale f32 [1,6]; i8 [2,3,64] axis 2 group 16, scale bf16 [2,3,4]",
         build_block([
             T("u8", (5, 6), quant_scheme=2, quant_axis=0, group_size=32, scale_index=1),
             T("f32", (1, 6)),
             T("i8", (2, 3, 64), quant_scheme=2, quant_axis=2, group_size=16, scale_index=3),
             T("bf16", (2, 3, 4)),
         ]))
    scale_dts = ["f16", "bf16", "f32", "f64", "f8_e4m3fn", "f8_e8m0"]
    weights = [T("i8", (2, 4), quant_scheme=1, quant_axis=0, scale_index=6 + k, outer_index=12 + k)
               for k in range(6)]
    scales = [T(dt, (2,)) for dt in scale_dts]
    outers = [T(scale_dts[(k + 2) % 6], ()) for k in range(6)]
    g.ok("ok-quant-scale-dtypes",
         "six scheme-1 i8 [2,4] weights (0..5), scales [2] at 6..11 of f16 bf16 f32 f64 f8_e4m3fn f8_e8m0, rank-0 outers at 12..17 of f32 f64 f8_e4m3fn f8_e8m0 f16 bf16",
         build_block(weights + scales + outers))
    g.ok("ok-quant-shared-scale-before-weight",
         "scale f16 [4] at index 0 and outer bf16 rank 0 at index 1 shared by two scheme-1 weights i8 [4,8] and u8 [4,3] (axis 0) at 2 and 3",
         build_block([
             T("f16", (4,)), T("bf16", ()),
             T("i8", (4, 8), quant_scheme=1, quant_axis=0, scale_index=0, outer_index=1),
             T("u8", (4, 3), quant_scheme=1, quant_axis=0, scale_index=0, outer_index=1),
         ]))
    g.ok("ok-payload-out-of-order",
         "3 tensors f32 [4], f16 [8], u8 [10] stored in payload order 2,0,1: offsets 64, 128, 0",
         build_block([T("f32", (4,)), T("f16", (8,)), T("u8", (10,))], order=[2, 0, 1]))
    g.ok("ok-payload-wide-gaps-and-tail",
         "f32 [2] at 128 (128 zero bytes before it), f32 [3] at 384 (gap 136..384 zero), 100-byte zero tail: payload_bytes 496",
         build_block([T("f32", (2,)), T("f32", (3,))], gaps={0: 128, 1: 192}, tail=100))
    g.ok("ok-zero-length-inside-range",
         "f32 [32] at [0,128); zero-length f32 [0] at offset 64 and u8 [0,4] at offset 0 lie inside it (legal); f32 [2] at 128",
         build_block([T("f32", (32,)), T("f32", (0,), byte_offset=64), T("u8", (0, 4), byte_offset=0), f32_pair()]))
    g.ok("ok-zero-length-at-payload-end",
         "f32 [16] at [0,64), zero-length f32 [0] at byte_offset 64 == payload_bytes 64",
         build_block([T("f32", (16,)), T("f32", (0,), byte_offset=64)]))
    g.ok("ok-wide-pad",
         "one tensor named w: heap ends at 193, 63 zero pad bytes up to payload_base 256",
         build_block([T("f32", (2,), "w")]))
    boundary_name = "model.layers.31.self_attn.rotary_emb.inv_freq.cached_tables.bf16"
    assert len(boundary_name.encode()) == 64, len(boundary_name.encode())
    g.ok("ok-heap-ends-on-boundary",
         "one tensor with a 64-byte name: heap ends at 256 = payload_base, pad length 0",
         build_block([T("bf16", (4,), boundary_name)]))
    g.ok("ok-empty-with-zero-payload",
         "tensor_count 0, payload_bytes 64, the 64 payload bytes all zero (uncovered, zero): 128-byte block",
         build_block([], tail=64))


def header_cases(g: Golden) -> None:
    g.section("header: H1..H9, L1")
    empty = build_block([])
    f32 = build_block([f32_pair()])
    g.bad("h1-empty-buffer", "H1", "a zero-byte buffer", b"",
          at=byte(0))
    g.bad("h1-byte-swapped-magic", "H1", "64-byte empty header whose magic is TNLK (byte-swapped)", b"TNLK" + empty[4:],
          at=byte(0))
    g.bad("h1-gguf", "H1", "a 24-byte GGUF v3 header (magic GGUF, version 3, 0 tensors, 0 metadata)",
          b"GGUF" + struct.pack("<IQQ", 3, 0, 0),
          at=byte(0))
    g.bad("h2-version-1", "H2", "64-byte empty header with version byte 1", build_block([], version=1),
          at=header("version"))
    g.bad("h2-version-3", "H2", "64-byte empty header with version byte 3", build_block([], version=3),
          at=header("version"))
    g.bad("h2-no-version-byte", "H2", "4-byte buffer KLNT: there is no byte 4", MAGIC,
          at=truncated())
    g.bad("h3-header-63-bytes", "H3", "the empty header cut to 63 bytes", empty[:63],
          at=truncated())
    g.bad("h3-header-5-bytes", "H3", "5-byte buffer KLNT 02", MAGIC + b"\x02",
          at=truncated())
    g.bad("h4-unknown-flag-bit2", "H4", "empty directory with flags 0x06 (bit 2 is unknown)", build_block([], flags=0x06),
          at=header("flags"))
    g.bad("h4-little-endian-clear", "H4", "empty directory with flags 0x00 (little-endian bit clear)", build_block([], flags=0x00),
          at=header("flags"))
    g.bad("h4-flag-bit7", "H4", "kiln-v2-f32 with flags 0x82 (bit 7 is unknown)", build_block([f32_pair()], flags=0x82),
          at=header("flags"))
    g.bad("h5-reserved-byte6", "H5", "kiln-v2-f32 with header byte 6 = 0x01", build_block([f32_pair()], reserved6=b"\x01\x00"),
          at=byte(6))
    g.bad("h5-reserved-byte63", "H5", "kiln-v2-f32 with header byte 63 = 0xff", build_block([f32_pair()], reserved32=bytes(31) + b"\xff"),
          at=byte(63))
    g.bad("h6-directory-bytes-zero", "H6", "kiln-v2-f32 with directory_bytes 0 (count 1 x 128 + 0 = 128)", build_block([f32_pair()], directory_bytes=0),
          at=header("directory_bytes"))
    g.bad("h6-directory-bytes-without-heap", "H6",
          "one tensor named weight, name_bytes 6, directory_bytes 128 (must be 134)",
          build_block([T("f32", (2,), "weight")], directory_bytes=128),
          at=header("directory_bytes"))
    g.bad("h7-payload-bytes-max", "H7",
          "empty directory with payload_bytes 2^64-1: block_length 64 + 2^64-1 overflows (64-byte file)",
          build_block([], payload_bytes=U64_MAX),
          at=header("payload_bytes"))
    g.bad("h7-block-length-exactly-2-64", "H7",
          "one f32 [2] tensor, payload_base 192, payload_bytes 2^64-192: block_length is exactly 2^64 (192-byte file)",
          build_block([f32_pair()], payload_bytes=2**64 - 192),
          at=header("payload_bytes"))
    g.bad("h8-block-length-2-64-minus-1", "H8",
          "one f32 [2] tensor, payload_base 192, payload_bytes 2^64-193: block_length 2^64-1 fits, but the file is 192 bytes",
          build_block([f32_pair()], payload_bytes=2**64 - 193),
          at=truncated())
    g.bad("h8-truncated-payload", "H8", "kiln-v2-f32 missing its last payload byte (199 of 200 bytes)", f32[:199],
          at=truncated())
    g.bad("h8-trailing-byte", "H8", "kiln-v2-f32 followed by one extra 0x00 byte (201 bytes, whole-buffer mode)", f32 + b"\x00",
          at=byte(len(f32)))
    g.bad("h8-missing-descriptor", "H8",
          "header of kiln-v2-f32 only (count 1, directory_bytes 128, payload_bytes 8): 64 of 200 bytes", f32[:64],
          at=truncated())
    g.bad("h8-four-billion-tensors", "H8",
          "header claims tensor_count 4000000000 with consistent directory_bytes 512000000000: block_length 512000000064, file is 64 bytes",
          build_block([], tensor_count=4_000_000_000, directory_bytes=512_000_000_000),
          at=truncated())
    g.bad("h9-empty-with-name-flag", "H9", "tensor_count 0 with flags 0x03 (name flag set)", build_block([], flags=0x03),
          at=header("flags"))
    g.bad("l1-pad-first-byte", "L1", "one tensor named w (heap ends at 193): pad byte at offset 193 = 0x01",
          build_block([T("f32", (2,), "w")], pad_pokes={0: 0x01}),
          at=pad(0))
    g.bad("l1-pad-last-byte", "L1", "one tensor named w (heap ends at 193): pad byte at offset 255 = 0x20",
          build_block([T("f32", (2,), "w")], pad_pokes={62: 0x20}),
          at=pad(62))


def descriptor_cases(g: Golden) -> None:
    g.section("descriptor: D1..D10")
    for code, why in [(0, "0x0000"), (25, "0x0019, one past f8_e8m0"), (0x8001, "0x8001, one past opaque")]:
        g.bad("d1-dtype-%x" % code if code > 255 else "d1-dtype-%d" % code, "D1",
              "descriptor 0 dtype %d (%s) is not in the dtype table; byte_length 8" % (code, why),
              build_block([T(code, (2,), data=F32_PAIR)]),
          at=field(0, "dtype"))
    g.bad("d1-dtype-8-descriptor-1", "D1", "descriptor 1 dtype 8 is not in the dtype table (descriptor 0 is a valid f32 [2])",
          build_block([f32_pair(), T(8, (2,), data=F32_PAIR)]),
          at=field(1, "dtype"))
    g.bad("d2-rank-9", "D2", "f32 with rank 9 (shape slots 2,1,1,1,1,1,1,1)",
          build_block([f32_pair(rank=9, slots=(2, 1, 1, 1, 1, 1, 1, 1))]),
          at=field(0, "rank"))
    g.bad("d2-rank-255", "D2", "f32 with rank 255 (shape slots 2,0,...)",
          build_block([f32_pair(rank=255, slots=(2,))]),
          at=field(0, "rank"))
    g.bad("d3-reserved-byte3", "D3", "kiln-v2-f32 with descriptor byte 3 = 0x01", build_block([f32_pair(reserved3=1)]),
          at=field(0, "reserved3"))
    g.bad("d3-reserved-byte127", "D3", "kiln-v2-f32 with descriptor byte 127 = 0x80", build_block([f32_pair(reserved_tail=tail_bytes(127, 0x80))]),
          at=field(0, "reserved_tail", 15))
    g.bad("d4-slot-past-rank", "D4", "f32 rank 1 with shape slots [2,3,0,...]: slot 1 = 3 is at/after rank",
          build_block([f32_pair(slots=(2, 3))]),
          at=slot(0, 1))
    g.bad("d4-scalar-slot0", "D4", "f32 rank 0 (byte_length 4) with shape slot 0 = 1",
          build_block([T("f32", (), slots=(1,))]),
          at=slot(0, 0))
    g.bad("d5-count-2-64", "D5", "u8 shape [2^32,2^32]: element count exactly 2^64; byte_length 0",
          build_block([T("u8", (2**32, 2**32), byte_length=0)]),
          at=slot(0, 1))
    g.bad("d5-rank8-256-u4", "D5", "u4 rank 8 shape [256 x8]: count 2^64 (a 4-bit dtype still fails D5); byte_length 0",
          build_block([T("u4", (256,) * 8, byte_length=0)]),
          at=slot(0, 7))
    g.bad("d5-opaque-count-overflow", "D5", "opaque ggml.q4_K shape [2^63,2]: count 2^64 (D5 applies to opaque); byte_length 144",
          build_block([OP((2**63, 2), byte_length=144)]),
          at=slot(0, 1))
    g.bad("d6-f16-count-2-63", "D6", "f16 shape [2^63]: count fits, size 2^64 bytes does not; byte_length 0",
          build_block([T("f16", (2**63,), byte_length=0)]),
          at=slot(0, 0))
    g.bad("d6-f32-count-2-62", "D6", "f32 shape [2^31,2^31]: size 2^64 bytes; byte_length 0",
          build_block([T("f32", (2**31, 2**31), byte_length=0)]),
          at=slot(0, 0))
    g.bad("d7-byte-length-short", "D7", "f32 [2] with byte_length 4 (size is 8)",
          build_block([T("f32", (2,), byte_length=4)]),
          at=field(0, "byte_length"))
    g.bad("d7-u4-odd-floor", "D7", "u4 [3] with byte_length 1 (size is ceil(12/8) = 2)",
          build_block([T("u4", (3,), byte_length=1)]),
          at=field(0, "byte_length"))
    g.bad("d7-zero-count-nonzero-length", "D7", "f32 [0,4] (count 0) with byte_length 64",
          build_block([T("f32", (0, 4), byte_length=64)]),
          at=field(0, "byte_length"))
    g.bad("d7-count-2-64-minus-1-u8", "D7",
          "u8 shape [3,5,17,257,641,65537,6700417]: count 2^64-1 and size 2^64-1 fit (D5, D6 pass); byte_length 0",
          build_block([T("u8", SHAPE_2_64_MINUS_1, byte_length=0)]),
          at=field(0, "byte_length"))
    g.bad("d7-i4-count-2-64-minus-1-floor", "D7",
          "i4 count 2^64-1 (shape [3,5,17,257,641,65537,6700417]): size ceil = 2^63 fits (no D6); byte_length 2^63-1 (floor)",
          build_block([T("i4", SHAPE_2_64_MINUS_1, byte_length=2**63 - 1)]),
          at=field(0, "byte_length"))
    g.bad("d8-end-exactly-2-64", "D8", "f32 [16] byte_length 64 at byte_offset 2^64-64: end is exactly 2^64",
          build_block([T("f32", (16,), byte_offset=2**64 - 64)]),
          at=field(0, "byte_length"))
    g.bad("d9-end-2-64-minus-1", "D9", "u8 [127] at byte_offset 2^64-128: end 2^64-1 fits (no D8) but exceeds payload_bytes 0",
          build_block([T("u8", (127,), byte_offset=2**64 - 128)]),
          at=field(0, "byte_length"))
    g.bad("d9-count-2-64-minus-1-bool", "D9",
          "bool shape [3,5,17,257,641,65537,6700417]: count and size 2^64-1, byte_length 2^64-1 at offset 0 > payload_bytes 0",
          build_block([T("bool", SHAPE_2_64_MINUS_1, byte_offset=0)]),
          at=field(0, "byte_length"))
    g.bad("d9-u4-count-2-64-minus-1", "D9",
          "u4 count 2^64-1 (shape [3,5,17,257,641,65537,6700417]): size 2^63 (no D6), byte_length 2^63 > payload_bytes 0",
          build_block([T("u4", SHAPE_2_64_MINUS_1, byte_offset=0)]),
          at=field(0, "byte_length"))
    g.bad("d9-length-past-payload", "D9", "f32 [4] byte_length 16 at offset 0 with payload_bytes 8",
          build_block([T("f32", (4,))], payload_bytes=8),
          at=field(0, "byte_length"))
    g.bad("d9-zero-length-past-end", "D9", "f32 [2] at 0 (payload_bytes 8) and zero-length f32 [0] at byte_offset 64 > 8",
          build_block([f32_pair(), T("f32", (0,), byte_offset=64)], payload_bytes=8),
          at=field(1, "byte_length"))
    g.bad("d10-offset-8", "D10", "f32 [2] at byte_offset 8 (payload_bytes 16, bytes 0..7 zero)",
          build_block([f32_pair(byte_offset=8)]),
          at=field(0, "byte_offset"))
    g.bad("d10-zero-length-offset-32", "D10", "f32 [16] at [0,64) and zero-length f32 [0] at byte_offset 32 (not a multiple of 64)",
          build_block([T("f32", (16,)), T("f32", (0,), byte_offset=32)]),
          at=field(1, "byte_offset"))


def name_opaque_quant_cases(g: Golden) -> None:
    g.section("descriptor: N1, N2, O1..O3, Q1..Q4")
    g.bad("n1-named-without-flag", "N1", "flags 0x02 but the tensor has name_off 0 name_len 6 (heap weight)",
          build_block([T("f32", (2,), "weight")], flags=0x02),
          at=field(0, "name_off"))
    g.bad("n1-name-off-zero", "N1", "flags 0x02, unnamed tensor with name_off 0 (not 0xffff) and name_len 0",
          build_block([f32_pair(name_off=0)]),
          at=field(0, "name_off"))
    g.bad("n2-one-tensor-unnamed", "N2", "flags 0x03, descriptor 0 named a.weight, descriptor 1 unnamed (0xffff, 0)",
          build_block([T("f32", (2,), "a.weight"), f32_pair()]),
          at=field(1, "name_off"))
    g.bad("n2-name-len-zero", "N2", "flags 0x03, the only tensor has name_off 0 and name_len 0 (empty name), name_bytes 0",
          build_block([f32_pair(name=b"")]),
          at=field(0, "name_len"))
    g.bad("n2-name-off-ffff", "N2", "flags 0x03, name_off 0xffff with name_len 6 (heap weight)",
          build_block([f32_pair(name="weight", name_off=U16_NONE)]),
          at=field(0, "name_off"))
    g.bad("o1-block-size", "O1", "f32 [2] with block_size 32", build_block([f32_pair(block_size=32)]),
          at=field(0, "block_size"))
    g.bad("o1-layout-name", "O1", "f32 [2] with layout_off 0 layout_len 9 (heap ggml.q4_K)",
          build_block([f32_pair(layout="ggml.q4_K")]),
          at=field(0, "layout_off"))
    g.bad("o2-block-size-zero", "O2", "opaque ggml.q4_K [2,512] byte_length 576 with block_size 0",
          build_block([OP((2, 512), block_size=0, byte_length=576)]),
          at=field(0, "block_size"))
    g.bad("o2-layout-len-zero", "O2", "opaque [2,512] block_size 256 with layout_off 0 layout_len 0 (empty heap)",
          build_block([OP((2, 512), layout=None, layout_off=0, layout_len=0)]),
          at=field(0, "layout_len"))
    g.bad("o2-layout-off-ffff", "O2", "opaque [2,512] with layout_off 0xffff layout_len 9 (heap ggml.q4_K)",
          build_block([OP((2, 512), layout_off=U16_NONE)]),
          at=field(0, "layout_off"))
    g.bad("o2-quant-scheme-1", "O2", "opaque [2,512] with quant_scheme 1 axis 0 scale_index 1 (f16 [2])",
          build_block([OP((2, 512), quant_scheme=1, quant_axis=0, scale_index=1), T("f16", (2,))]),
          at=field(0, "quant_scheme"))
    g.bad("o3-count-not-multiple", "O3", "opaque ggml.q4_K shape [300] block_size 256 (300 % 256 = 44), byte_length 144",
          build_block([OP((300,), byte_length=144)]),
          at=field(0, "block_size"))
    g.bad("o3-zero-blocks-nonzero-length", "O3", "opaque shape [0,256] (0 blocks) with byte_length 64",
          build_block([OP((0, 256), byte_length=64)]),
          at=field(0, "byte_length"))
    g.bad("o3-length-not-multiple-of-blocks", "O3", "opaque [2,512] = 4 blocks with byte_length 577 (577 % 4 = 1)",
          build_block([OP((2, 512), byte_length=577)]),
          at=field(0, "byte_length"))
    g.bad("o3-blocks-zero-length", "O3", "opaque [2,512] = 4 blocks with byte_length 0",
          build_block([OP((2, 512), byte_length=0)]),
          at=field(0, "byte_length"))
    g.bad("q1-scheme-3", "Q1", "ok-quant-scheme1 with descriptor 0 quant_scheme 3",
          build_block(with_(quant_scheme1(), 0, quant_scheme=3)),
          at=field(0, "quant_scheme"))
    g.bad("q2-axis-set", "Q2", "scheme 0 f32 [2] with quant_axis 0", build_block([f32_pair(quant_axis=0)]),
          at=field(0, "quant_axis"))
    g.bad("q2-group-size-set", "Q2", "scheme 0 f32 [2] with group_size 32", build_block([f32_pair(group_size=32)]),
          at=field(0, "group_size"))
    g.bad("q2-scale-index-set", "Q2", "scheme 0 f32 [2] with scale_index 1 (a valid f16 [2])",
          build_block([f32_pair(scale_index=1), T("f16", (2,))]),
          at=field(0, "scale_index"))
    g.bad("q2-outer-index-set", "Q2", "scheme 0 f32 [2] with outer_index 1 (a valid f32 rank 0)",
          build_block([f32_pair(outer_index=1), T("f32", ())]),
          at=field(0, "outer_index"))
    g.bad("q3-scalar-quantised", "Q3", "scheme 1 on a rank-0 i8 (axis 0, scale f16 [1])",
          build_block([T("i8", (), quant_scheme=1, quant_axis=0, scale_index=1), T("f16", (1,))]),
          at=field(0, "quant_axis"))
    g.bad("q3-axis-equals-rank", "Q3", "ok-quant-scheme1 with quant_axis 2 on the rank-2 weight",
          build_block(with_(quant_scheme1(), 0, quant_axis=2)),
          at=field(0, "quant_axis"))
    g.bad("q4-scheme1-group-size", "Q4", "ok-quant-scheme1 with group_size 32 on the scheme-1 weight",
          build_block(with_(quant_scheme1(), 0, group_size=32)),
          at=field(0, "group_size"))
    g.bad("q4-scheme2-group-zero", "Q4", "ok-quant-scheme2-ceil with group_size 0 on the scheme-2 weight",
          build_block(with_(quant_scheme2(), 0, group_size=0)),
          at=field(0, "group_size"))


def heap_cases(g: Golden) -> None:
    g.section("name heap: N3, N4, N5")
    two = [T("f32", (2,), "alpha"), T("f32", (2,), "beta")]
    g.bad("n3-hole", "N3", "heap alpha _ beta (10 bytes): beta at name_off 6 leaves a 1-byte hole at 5",
          build_block(with_(two, 1, name_off=6), heap=b"alpha_beta"),
          at=field(1, "name_off"))
    g.bad("n3-hole-at-start", "N3", "heap _weight (7 bytes): the only name starts at name_off 1, not 0",
          build_block([T("f32", (2,), "weight", name_off=1)], heap=b"_weight"),
          at=field(0, "name_off"))
    g.bad("n3-reordered", "N3", "heap betaalpha: descriptor 0 alpha at name_off 4, descriptor 1 beta at 0",
          build_block([T("f32", (2,), "alpha", name_off=4), T("f32", (2,), "beta", name_off=0)], heap=b"betaalpha"),
          at=field(0, "name_off"))
    g.bad("n3-slice-past-name-bytes", "N3", "heap weight (name_bytes 6), name_off 0 name_len 7 ends past it",
          build_block([T("f32", (2,), "weight", name_len=7)]),
          at=field(0, "name_off"))
    g.bad("n3-layout-before-name", "N3",
          "named opaque tensor: heap is ggml.q4_K then blk.0.ffn_down.weight (layout name at 0, tensor name at 9)",
          build_block([OP((2, 512), name="blk.0.ffn_down.weight", name_off=9, layout_off=0)],
                      heap=b"ggml.q4_Kblk.0.ffn_down.weight"),
          at=field(0, "name_off"))
    g.bad("n3-extra-byte", "N3", "heap alphabeta plus one 0x00 byte: name_bytes 10, slices end at 9",
          build_block(two, heap=b"alphabeta\x00"),
          at=heap(9))
    g.bad("n3-hole-before-layouts", "N3",
          "named opaque tensor: heap blk.0.ffn_down.weight, one 0x00 byte, ggml.q4_K; the layout name starts at 22, the names end at 21 (the layout names tile the rest of the heap on their own)",
          build_block([OP((2, 512), name="blk.0.ffn_down.weight", layout_off=22)],
                      heap=b"blk.0.ffn_down.weight\x00ggml.q4_K"),
          at=field(0, "layout_off"))
    g.bad("n3-layouts-overlap-names", "N3",
          "named opaque tensor: heap blk.0.ffn_down.weightggml.q4_K but layout_off 20 (one byte back into the name), layout_len 10",
          build_block([OP((2, 512), name="blk.0.ffn_down.weight", layout_off=20, layout_len=10)],
                      heap=b"blk.0.ffn_down.weightggml.q4_K"),
          at=field(0, "layout_off"))
    g.bad("n3-hole-between-layouts", "N3",
          "two unnamed opaque tensors: heap ggml.q4_K, one 0x00 byte, ggml.q4_K; the second layout name starts at 10, not 9",
          build_block([OP((2, 512)), OP((1, 512), layout_off=10)], heap=b"ggml.q4_K\x00ggml.q4_K"),
          at=field(1, "layout_off"))
    g.bad("n3-shared-layout-slice", "N3",
          "two unnamed opaque ggml.q4_K tensors both at layout_off 0 len 9 over a 9-byte heap (repeats must be stored twice)",
          build_block([OP((2, 512)), OP((1, 512), layout_off=0)], heap=b"ggml.q4_K"),
          at=field(1, "layout_off"))
    g.bad("n4-overlong-c0-80", "N4", "tensor name 77 c0 80 (overlong NUL)", build_block([T("f32", (2,), b"w\xc0\x80")]),
          at=heap(1, tensor=0))
    g.bad("n4-surrogate-ed-a0-80", "N4", "tensor name 77 ed a0 80 (surrogate U+D800)", build_block([T("f32", (2,), b"w\xed\xa0\x80")]),
          at=heap(1, tensor=0))
    g.bad("n4-above-max-f4-90-80-80", "N4", "tensor name 77 f4 90 80 80 (U+110000, above U+10FFFF)",
          build_block([T("f32", (2,), b"w\xf4\x90\x80\x80")]),
          at=heap(1, tensor=0))
    g.bad("n4-truncated-sequence", "N4", "descriptor 1 name 77 e2 82 (3-byte sequence cut after 2 bytes)",
          build_block([T("f32", (2,), "model.norm.weight"), T("f32", (2,), b"w\xe2\x82")]),
          at=heap(len("model.norm.weight") + 1, tensor=1))
    g.bad("n4-lone-continuation", "N4", "tensor name 80 61 62 63 (continuation byte with no lead)",
          build_block([T("f32", (2,), b"\x80abc")]),
          at=heap(0, tensor=0))
    g.bad("n4-split-across-names", "N4",
          "names 77 e2 82 and ac 78: the heap as a whole is valid (w EURO x) but each name alone is not",
          build_block([T("f32", (2,), b"w\xe2\x82"), T("f32", (2,), b"\xacx")]),
          at=heap(1, tensor=0))
    g.bad("n4-layout-bad-byte", "N4", "unnamed opaque tensor whose layout name is ggml.q4_ ff (byte 0xff)",
          build_block([OP((2, 512), layout=b"ggml.q4_\xff")]),
          at=heap(len("ggml.q4_"), tensor=0))
    g.bad("n5-duplicate-names", "N5", "descriptors 0 and 1 are both named model.norm.weight",
          build_block([T("f32", (8,), "model.norm.weight"), T("f32", (8,), "model.norm.weight")]),
          at=field(1, "name_off"))
    g.bad("n5-duplicate-far-apart", "N5", "4 tensors; descriptors 0 and 3 are both named lm_head.weight",
          build_block([T("bf16", (4,), "lm_head.weight"), T("f32", (2,), "model.norm.weight"),
                       T("f32", (2,), "model.embed_tokens.weight"), T("bf16", (4,), "lm_head.weight")]),
          at=field(3, "name_off"))


def scale_cases(g: Golden) -> None:
    g.section("scales: Q5, Q6, Q7")
    q1, q2 = quant_scheme1(), quant_scheme2()
    g.bad("q5-scale-index-out-of-range", "Q5", "ok-quant-scheme1 with scale_index 3 == tensor_count",
          build_block(with_(q1, 0, scale_index=3)),
          at=field(0, "scale_index"))
    g.bad("q5-scale-index-self", "Q5", "ok-quant-scheme1 with descriptor 0 scale_index 0 (itself)",
          build_block(with_(q1, 0, scale_index=0)),
          at=field(0, "scale_index"))
    g.bad("q5-scale-quantised", "Q5",
          "ok-quant-scheme1 whose scale (f16 [4]) is itself scheme 1 axis 0 with its own valid f32 [4] scale at index 3",
          build_block(with_(q1, 1, quant_scheme=1, quant_axis=0, scale_index=3)
                      + [T("f32", (4,), "model.layers.0.mlp.down_proj.weight_scale_scale")]),
          at=field(0, "scale_index"))
    g.bad("q5-scale-dtype-i8", "Q5", "ok-quant-scheme1 with the scale tensor of dtype i8 [4] (not a scale dtype)",
          build_block(with_(q1, 1, dtype=DTYPE_CODE["i8"])),
          at=field(0, "scale_index"))
    g.bad("q6-scheme1-wrong-length", "Q6", "scheme 1 on i8 [4,16] axis 0 with scale f16 [5] (must be [4])",
          build_block(with_(q1, 1, shape=(5,))),
          at=field(0, "scale_index"))
    g.bad("q6-scheme1-rank2-scale", "Q6", "scheme 1 on i8 [4,16] axis 0 with scale f16 [4,1] (must be rank 1)",
          build_block(with_(q1, 1, shape=(4, 1))),
          at=field(0, "scale_index"))
    g.bad("q6-scheme2-floor", "Q6", "scheme 2 on i4 [4,70] axis 1 group 32 with scale [4,2] (floor; must be [4,3])",
          build_block(with_(q2, 1, shape=(4, 2))),
          at=field(0, "scale_index"))
    g.bad("q6-scheme2-other-dim", "Q6", "scheme 2 on i4 [4,70] axis 1 group 32 with scale [5,3] (dim 0 must be 4)",
          build_block(with_(q2, 1, shape=(5, 3))),
          at=field(0, "scale_index"))
    g.bad("q7-outer-self", "Q7", "ok-quant-scheme1 with descriptor 0 outer_index 0 (itself)",
          build_block(with_(q1, 0, outer_index=0)),
          at=field(0, "outer_index"))
    g.bad("q7-outer-not-rank0", "Q7", "ok-quant-scheme1 with the outer scale f32 of shape [1] (rank 1, not 0)",
          build_block(with_(q1, 2, shape=(1,))),
          at=field(0, "outer_index"))
    g.bad("q7-outer-out-of-range", "Q7", "ok-quant-scheme1 with outer_index 3 == tensor_count",
          build_block(with_(q1, 0, outer_index=3)),
          at=field(0, "outer_index"))
    g.bad("q7-outer-dtype-i32", "Q7", "ok-quant-scheme1 with the rank-0 outer scale of dtype i32 (not a scale dtype)",
          build_block(with_(q1, 2, dtype=DTYPE_CODE["i32"])),
          at=field(0, "outer_index"))


def payload_cases(g: Golden) -> None:
    g.section("payload region: P1, P2")
    g.bad("p1-overlap-identical", "P1", "two f32 [2] tensors both at [0,8)",
          build_block([f32_pair(), f32_pair(byte_offset=0)]),
          at=field(1, "byte_offset"))
    g.bad("p1-overlap-partial", "P1", "f32 [32] at [0,128) and f32 [16] at [64,128)",
          build_block([T("f32", (32,)), T("f32", (16,), byte_offset=64)]),
          at=field(1, "byte_offset"))
    g.bad("p2-gap-byte", "P2", "f32 [2] at [0,8) and [64,72): gap byte at payload offset 20 = 0x01",
          build_block([f32_pair(), f32_pair()], payload_pokes={20: 0x01}),
          at=payload(20))
    g.bad("p2-tail-byte", "P2", "f32 [2] at [0,8) with a 56-byte tail: tail byte at payload offset 63 = 0xff",
          build_block([f32_pair()], tail=56, payload_pokes={63: 0xFF}),
          at=payload(63))
    g.bad("p2-leading-gap-byte", "P2", "f32 [2] stored at [64,72): leading gap byte at payload offset 0 = 0x01",
          build_block([f32_pair()], gaps={0: 64}, payload_pokes={0: 0x01}),
          at=payload(0))


def ordering_cases(g: Golden) -> None:
    g.section("ordering: two defects, the first in checking order is reported")
    g.bad("order-h2-before-h3", "H2", "5-byte buffer KLNT 03: bad version (H2) and short header (H3)", MAGIC + b"\x03",
          at=header("version"))
    g.bad("order-h4-before-h6", "H4", "empty directory, flags 0x06 (H4) and directory_bytes 128 (H6)",
          build_block([], flags=0x06, directory_bytes=128),
          at=header("flags"))
    g.bad("order-h6-before-h8", "H6", "kiln-v2-f32 with directory_bytes 0 (H6) cut to 100 bytes (H8): TYPE before FRAME",
          build_block([f32_pair()], directory_bytes=0, truncate=100),
          at=header("directory_bytes"))
    g.bad("order-h7-before-h9", "H7", "tensor_count 0, flags 0x03 (H9) and payload_bytes 2^64-1 (H7)",
          build_block([], flags=0x03, payload_bytes=U64_MAX),
          at=header("payload_bytes"))
    g.bad("order-h8-before-h9", "H8", "tensor_count 0, flags 0x03 (H9) and one trailing 0x00 byte (H8)",
          build_block([], flags=0x03, trailing=b"\x00"),
          at=block_end())
    g.bad("order-l1-before-d1", "L1", "tensor named w with dtype 8 (D1) and pad byte 193 = 0x01 (L1)",
          build_block([T(8, (2,), "w", data=F32_PAIR)], pad_pokes={0: 0x01}),
          at=pad(0))
    g.bad("order-d1-before-d3-same-descriptor", "D1", "descriptor 0 dtype 8 (D1, TYPE) and byte 3 = 0x01 (D3, FRAME)",
          build_block([T(8, (2,), data=F32_PAIR, reserved3=1)]),
          at=field(0, "dtype"))
    g.bad("order-d3-desc0-before-d1-desc1", "D3", "descriptor 0 byte 3 = 0x01 (D3) and descriptor 1 dtype 8 (D1)",
          build_block([f32_pair(reserved3=1), T(8, (2,), data=F32_PAIR)]),
          at=field(0, "reserved3"))
    g.bad("order-o1-desc0-before-d3-desc1", "O1", "descriptor 0 f32 block_size 32 (O1) and descriptor 1 byte 127 = 0x01 (D3)",
          build_block([f32_pair(block_size=32), f32_pair(reserved_tail=tail_bytes(127, 1))]),
          at=field(0, "block_size"))
    g.bad("order-d4-before-d5", "D4",
          "u8 rank 1 with shape slots [1,2^32,2^32]: slots past rank (D4); multiplying all slots would give 2^64 (D5)",
          build_block([T("u8", (1,), slots=(1, 2**32, 2**32))]),
          at=slot(0, 1))
    g.bad("order-d7-desc0-before-d5-desc1", "D7", "descriptor 0 f32 [2] byte_length 4 (D7) and descriptor 1 u8 [2^32,2^32] (D5)",
          build_block([T("f32", (2,), byte_length=4), T("u8", (2**32, 2**32), byte_length=0)]),
          at=field(0, "byte_length"))
    g.bad("order-d8-before-d9-same-descriptor", "D8",
          "u8 [128] at byte_offset 2^64-64: end 2^64+64 overflows (D8) and is past payload_bytes 0 (D9)",
          build_block([T("u8", (128,), byte_offset=2**64 - 64)]),
          at=field(0, "byte_length"))
    g.bad("order-d9-desc0-before-d8-desc1", "D9",
          "descriptor 0 f32 [4] ends at 16 > payload_bytes 8 (D9); descriptor 1 f32 [16] at 2^64-64 ends at 2^64 (D8)",
          build_block([T("f32", (4,)), T("f32", (16,), byte_offset=2**64 - 64)], payload_bytes=8),
          at=field(0, "byte_length"))
    g.bad("order-o2-before-q1", "O2", "opaque [2,512] with quant_scheme 3: O2 requires scheme 0 before Q1 sees it",
          build_block([OP((2, 512), quant_scheme=3)]),
          at=field(0, "quant_scheme"))
    g.bad("order-d10-desc1-before-n4", "D10",
          "descriptor 0 name 62 61 64 ff (N4); descriptor 1 zero-length at byte_offset 32 (D10): descriptors before the heap",
          build_block([T("f32", (16,), b"bad\xff"), T("f32", (0,), "ok", byte_offset=32)]),
          at=field(1, "byte_offset"))
    g.bad("order-q1-desc1-before-n3", "Q1", "heap alpha_beta with a hole (N3) and descriptor 1 quant_scheme 3 (Q1)",
          build_block([T("f32", (2,), "alpha"), T("f32", (2,), "beta", name_off=6, quant_scheme=3)], heap=b"alpha_beta"),
          at=field(1, "quant_scheme"))
    g.bad("order-n3-before-n4", "N3", "reordered heap be ff t + alpha (N3) where descriptor 1's name be ff t is bad UTF-8 (N4)",
          build_block([T("f32", (2,), "alpha", name_off=4), T("f32", (2,), b"be\xfft", name_off=0)], heap=b"be\xfftalpha"),
          at=field(0, "name_off"))
    g.bad("order-n4-before-n5", "N4", "names dup, 62 61 64 ff, dup: descriptors 0 and 2 duplicate (N5), descriptor 1 bad UTF-8 (N4)",
          build_block([T("f32", (2,), "dup"), T("f32", (2,), b"bad\xff"), T("f32", (2,), "dup")]),
          at=heap(len("dup") + len("bad"), tensor=1))
    g.bad("order-n5-before-q5", "N5", "ok-quant-scheme1 with scale_index 0 (Q5) and the scale renamed to the weight's name (N5)",
          build_block(with_(with_(quant_scheme1(), 0, scale_index=0), 1, name="model.layers.0.mlp.down_proj.weight")),
          at=field(1, "name_off"))
    g.bad("order-q5-before-q7-same-descriptor", "Q5", "ok-quant-scheme1 with scale_index 0 (Q5) and outer_index 0 (Q7)",
          build_block(with_(quant_scheme1(), 0, scale_index=0, outer_index=0)),
          at=field(0, "scale_index"))
    g.bad("order-q6-before-q7-same-descriptor", "Q6", "ok-quant-scheme1 with scale f16 [5] (Q6) and outer_index 0 (Q7)",
          build_block(with_(with_(quant_scheme1(), 1, shape=(5,)), 0, outer_index=0)),
          at=field(0, "scale_index"))
    g.bad("order-q5-before-p1", "Q5", "ok-quant-scheme1 with scale_index 0 (Q5) and the scale payload at [0,8) inside the weight's [0,64) (P1)",
          build_block(with_(with_(quant_scheme1(), 0, scale_index=0), 1, byte_offset=0)),
          at=field(0, "scale_index"))
    g.bad("order-p1-before-p2", "P1", "two f32 [2] both at [64,72) (P1) and payload byte 0 = 0x01 in the leading gap (P2)",
          build_block([f32_pair(byte_offset=64), f32_pair(byte_offset=64)], payload_pokes={0: 0x01}),
          at=field(1, "byte_offset"))


def all_cases() -> Golden:
    g = Golden()
    seed_cases(g)
    ok_cases(g)
    header_cases(g)
    descriptor_cases(g)
    name_opaque_quant_cases(g)
    heap_cases(g)
    scale_cases(g)
    payload_cases(g)
    ordering_cases(g)
    return g


# ---------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------

MANIFEST_COLUMNS = ("case", "expect", "rule", "offset", "tensor", "description")
CASE_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


def validate(g: Golden) -> List[str]:
    problems: List[str] = []
    seen = set()
    for c in g.cases:
        if not CASE_NAME.match(c.name):
            problems.append("%s: bad case name" % c.name)
        if c.name in seen:
            problems.append("%s: duplicate case name" % c.name)
        seen.add(c.name)
        if not c.description.isascii() or "\t" in c.description or "\n" in c.description:
            problems.append("%s: description must be one ASCII line without tabs" % c.name)
        if c.expect != "ok" and c.offset is None:
            problems.append("%s: a negative case needs an offset" % c.name)
    covered = {c.rule for c in g.cases if c.expect != "ok"}
    for rule in RULE_ORDER:
        if rule not in covered:
            problems.append("rule %s has no negative case" % rule)
    return problems


def write(g: Golden, out: Path) -> None:
    cases_dir = out / "cases"
    cases_dir.mkdir(parents=True, exist_ok=True)
    wanted = {c.name + ".klnt" for c in g.cases}
    for old in sorted(cases_dir.glob("*.klnt")):
        if old.name not in wanted:
            old.unlink()
    for c in g.cases:
        (cases_dir / (c.name + ".klnt")).write_bytes(c.data)
    lines = ["\t".join(MANIFEST_COLUMNS)]
    for r in g.rows:
        if isinstance(r, str):
            lines.append("# " + r)
        else:
            lines.append("\t".join(r.columns()))
    (out / "manifest.tsv").write_bytes(("\n".join(lines) + "\n").encode("ascii"))


def summary(g: Golden) -> str:
    cases = g.cases
    ok = sum(1 for c in cases if c.expect == "ok")
    per_rule = {rule: 0 for rule in RULE_ORDER}
    for c in cases:
        if c.expect != "ok":
            per_rule[c.rule] += 1
    lines = ["%d cases: %d ok, %d negative" % (len(cases), ok, len(cases) - ok)]
    lines.append("negative cases per rule: " + " ".join("%s=%d" % kv for kv in per_rule.items()))
    return "\n".join(lines)


def check_up_to_date(g, committed: Path) -> List[str]:
    """Regenerates into a temporary folder and compares with `committed`."""
    import filecmp
    import tempfile
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp)
        write(g, fresh)
        if (fresh / "manifest.tsv").read_bytes() != (committed / "manifest.tsv").read_bytes():
            problems.append("manifest.tsv differs from the generator's output")
        want = sorted(p.name for p in (fresh / "cases").iterdir())
        have = sorted(p.name for p in (committed / "cases").iterdir())
        if want != have:
            problems.append("case files differ: missing %s, extra %s" % (
                sorted(set(want) - set(have)), sorted(set(have) - set(want))))
        for name in sorted(set(want) & set(have)):
            if not filecmp.cmp(fresh / "cases" / name, committed / "cases" / name, shallow=False):
                problems.append("cases/%s differs from the generator's output" % name)
    return problems


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description="Generate the Kiln v2 tensor directory golden cases.")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent,
                        help="output directory (default: the folder holding this script)")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; fail unless the committed files are exactly what "
                             "the generator writes")
    args = parser.parse_args(argv)
    g = all_cases()
    problems = validate(g)
    if args.check:
        problems += check_up_to_date(g, Path(__file__).resolve().parent)
        for p in problems:
            print("error: " + p, file=sys.stderr)
        print("golden files: %s" % ("out of date" if problems else "up to date"))
        return 1 if problems else 0
    write(g, args.out)
    print(summary(g))
    for p in problems:
        print("error: " + p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
