"""Boundary .npy files for the numpy.load differential suite.

Every case comes from a check in NumPy 1.24's numpy/lib/format.py
(read_magic, _check_version, _read_array_header with its max_header_size,
_filter_header, safe_eval, descr_to_dtype, read_array) or from what the
ndarray behind numpy.fromfile and the shape setter refuse ("array is too
big", "Maximum allowed dimension exceeded"), at the value on each side of the
boundary. A case is (name, file bytes, kiln): kiln is the verdict kiln is
meant to give, "read" or "refuse", or None when only the never-looser rule is
checked (the generated sweeps). A "refuse" case that numpy.load reads is a
deliberate difference and names its row of docs/compatibility.md in `why`.
"""
import io
import random
import struct

import numpy as np

MAX_INTP = 2**63 - 1
HEADER_LIMIT = 10000  # format._MAX_HEADER_SIZE

# kiln dtype name -> the little-endian NumPy dtype (formats/src/npy.cc).
KILN_TO_NUMPY = {
    "f16": "<f2", "f32": "<f4", "f64": "<f8", "u8": "|u1", "i8": "|i1", "u16": "<u2",
    "i16": "<i2", "u32": "<u4", "i32": "<i4", "u64": "<u8", "i64": "<i8", "bool": "|b1",
    "c64": "<c8", "c128": "<c16",
}

# The rows of docs/compatibility.md ("kiln stricter"), by key.
STRICTER = {
    "syntax": "Python syntax numpy.save never writes",
    "outside": "whitespace before '{' or other than spaces, tabs and one newline after '}'",
    "descr": "a descr whose meaning depends on the machine, or not in kiln's table",
    "dtype": "a dtype kiln does not hold",
    "fortran": "Fortran order with two or more dimensions greater than 1",
    "negative": "a negative dimension",
    "rank": "more than 8 dimensions",
    "trailing": "bytes after the data",
    "repeat": "a repeated key",
}


class Case:
    def __init__(self, name, data, kiln=None, why=None):
        self.name, self.data, self.kiln, self.why = name, bytes(data), kiln, why


def npy(header, data=b"", version=(1, 0), length=None):
    """A file with `header` (str or bytes) as its dict, no padding added."""
    if isinstance(header, str):
        header = header.encode("latin1" if version < (3, 0) else "utf8")
    n = len(header) if length is None else length
    size = struct.pack("<H" if version == (1, 0) else "<I", n & (0xFFFF if version == (1, 0) else 0xFFFFFFFF))
    return b"\x93NUMPY" + bytes(version) + size + header + data


def dict_text(shape="(3,)", descr="'<f4'", fortran="False", end=", }\n"):
    return "{'descr': %s, 'fortran_order': %s, 'shape': %s%s" % (descr, fortran, shape, end)


def saved(array, version=None):
    """The bytes numpy's own writer makes for `array`."""
    f = io.BytesIO()
    np.lib.format.write_array(f, array, version=version, allow_pickle=True)
    return f.getvalue()


def written_by_numpy():
    out = []
    rng = np.random.default_rng(7)
    for kiln_name, descr in KILN_TO_NUMPY.items():
        for order in "<>":
            d = np.dtype(descr).newbyteorder(order) if descr[0] != "|" else np.dtype(descr)
            a = (rng.standard_normal(6) * 50).astype(d).reshape(2, 3)
            for version in ((1, 0), (2, 0), (3, 0)):
                out.append(Case("numpy.save %s %s v%d" % (kiln_name, d.str, version[0]), saved(a, version), "read"))
    for shape in [(), (0,), (1,), (5,), (0, 3), (3, 0), (1, 1, 1, 1, 1, 1, 1, 1), (2, 1, 3, 1, 2)]:
        out.append(Case("numpy.save f32 shape %s" % (shape,), saved(np.ones(shape, "<f4")), "read"))
    out.append(Case("numpy.save rank 9", saved(np.zeros((1,) * 9, "<f4")), "refuse", "rank"))
    # Fortran order: the bytes equal C order when at most one dimension
    # exceeds 1, or the array is empty.
    for shape, kiln in [((4,), "read"), ((1, 4), "read"), ((4, 1, 1), "read"), ((0, 2, 3), "read"),
                        ((2, 3), "refuse"), ((2, 1, 3), "refuse")]:
        a = np.asfortranarray(np.arange(int(np.prod(shape)), dtype="<i4").reshape(shape))
        out.append(Case("numpy.save Fortran %s" % (shape,), saved(a), kiln, "fortran" if kiln == "refuse" else None))
    for name, a in [("object", np.array([1, None], dtype=object)), ("unicode", np.array(["ab"])),
                    ("bytes", np.array([b"ab"])), ("void", np.zeros(2, "V3")),
                    ("structured", np.zeros(2, [("a", "<f4"), ("b", "<i4")])),
                    ("datetime", np.array(["2024-01-01"], "M8[D]")), ("timedelta", np.zeros(2, "m8[s]")),
                    ("longdouble", np.zeros(2, np.longdouble)), ("c256", np.zeros(2, np.clongdouble))]:
        out.append(Case("numpy.save " + name, saved(a), "refuse", "dtype"))
    return out


def fortran():
    """fortran_order True: numpy sets shape[::-1] and transposes."""
    out = []
    for shape, kiln in [("()", "read"), ("(3,)", "read"), ("(1, 3)", "read"), ("(3, 1)", "read"),
                        ("(1, 3, 1)", "read"), ("(0, 2, 3)", "read"), ("(2, 0)", "read"), ("(2, 3, 0, 4)", "read"),
                        ("(2, 3)", "refuse"), ("(2, 1, 2)", "refuse"), ("(0, 2305843009213693951)", "read"), ("(2305843009213693952, 0)", "refuse")]:
        n = 1
        for d in eval(shape):
            n *= d
        data = bytes(range(4 * n)) if n < 64 else b""
        stricter = kiln == "refuse" and "0" not in shape  # numpy reads these two
        out.append(Case("Fortran %s" % shape, npy(dict_text(shape, "'<f4'", "True"), data), kiln,
                        "fortran" if stricter else None))
    return out


def magic_and_version():
    good = npy(dict_text(), b"\0" * 12)
    out = [Case("valid v1", good, "read")]
    out.append(Case("bad magic", b"\x93NUMPZ" + good[6:], "refuse"))
    out.append(Case("zip magic", b"PK\x03\x04" + good[4:], "refuse"))
    for n in range(0, 10):
        out.append(Case("first %d bytes" % n, good[:n], "refuse"))
    for major, minor in [(0, 0), (1, 1), (2, 1), (3, 1), (4, 0), (255, 0), (1, 255)]:
        out.append(Case("version %d.%d" % (major, minor), good[:6] + bytes([major, minor]) + good[8:], "refuse"))
    for version in ((2, 0), (3, 0)):
        out.append(Case("v%d" % version[0], npy(dict_text(), b"\0" * 12, version), "read"))
    # The header length field: past the end, short of the dict, 0.
    h = dict_text()
    # One short: the dict's newline becomes a 13th data byte.
    out.append(Case("header length -1", npy(h, b"\0" * 12, length=len(h) - 1), "refuse", "trailing"))
    for delta in (1, 1000):
        out.append(Case("header length %+d" % delta, npy(h, b"\0" * 12, length=len(h) + delta), "refuse"))
    out.append(Case("header length 0", npy(b"", b""), "refuse"))
    out.append(Case("v2 header length 2^32-1", npy(h, b"", (2, 0), length=2**32 - 1), "refuse"))
    return out


def header_limit():
    """max_header_size: the decoded header may have 10,000 characters."""
    out = []
    for version in ((1, 0), (2, 0), (3, 0)):
        for n in (HEADER_LIMIT - 1, HEADER_LIMIT, HEADER_LIMIT + 1, 65535):
            text = dict_text(end=", }")
            text += " " * (n - len(text) - 1) + "\n"
            out.append(Case("v%d header of %d bytes" % (version[0], n), npy(text, b"\0" * 12, version),
                            "read" if n <= HEADER_LIMIT else "refuse"))
    # UTF-8 (version 3.0): 10,000 characters in more bytes. kiln reads only
    # ASCII headers; numpy counts characters.
    text = dict_text(end=", }")
    text += " " * (HEADER_LIMIT - len(text) - 101) + "# " + "\u00e9" * 98 + "\n"
    out.append(Case("v3 header of 10,000 characters, 10,098 bytes", npy(text, b"\0" * 12, (3, 0)), "refuse", "syntax"))
    out.append(Case("v3 header, invalid UTF-8", npy(dict_text(end=", } \xff\n").encode("latin1"), b"\0" * 12, (3, 0)), "refuse"))
    out.append(Case("v1 header, latin1 NBSP after }", npy(dict_text(end=", }\xa0\n"), b"\0" * 12), "refuse"))
    return out


def longs():
    """_filter_header drops an L after a number in versions 1.0 and 2.0 only."""
    out = []
    for version in ((1, 0), (2, 0), (3, 0)):
        ok = "read" if version <= (2, 0) else "refuse"
        v = version[0]
        out.append(Case("v%d (3L,)" % v, npy(dict_text("(3L,)"), b"\0" * 12, version), ok))
        out.append(Case("v%d (0L, 2L)" % v, npy(dict_text("(0L, 2L)"), b"", version), ok))
        out.append(Case("v%d (3 L,)" % v, npy(dict_text("(3 L,)"), b"\0" * 12, version), "refuse", "syntax"))
        out.append(Case("v%d (3l,)" % v, npy(dict_text("(3l,)"), b"\0" * 12, version), "refuse"))
        out.append(Case("v%d (3LL,)" % v, npy(dict_text("(3LL,)"), b"\0" * 12, version), "refuse"))
        out.append(Case("v%d 'fortran_order': FalseL" % v, npy(dict_text(fortran="FalseL"), b"\0" * 12, version), "refuse"))
    return out


def shapes():
    """numpy.multiply.reduce(shape, dtype=int64), then the shape setter:
    each dimension below 2^63, itemsize x the nonzero dimensions <= 2^63-1."""
    out = []
    for descr, size in [("|u1", 1), ("<u2", 2), ("<f4", 4), ("<f8", 8), ("<c16", 16)]:
        edge = MAX_INTP // size
        for shape in [(0, edge), (0, edge + 1), (edge, 0), (edge + 1, 0), (0, 2**63), (2**63, 0),
                      (2**64 - 1, 0), (0, 2**64), (0, 2**31, 2**32 // size), (0, 2**31, 2**32 // size - 1),
                      (2**40, 2**40, 0), (0, 2**40, 2**40), (0,) * 8, (0, 1, 2, 3, 4, 5, 6, edge // 720)]:
            fits = size * int(np.prod([d for d in shape if d], dtype=object) if any(shape) else 1) <= MAX_INTP
            out.append(Case("%s %s" % (descr, shape), npy(dict_text(str(shape), "'%s'" % descr), b""),
                            "read" if fits else "refuse"))
    # Arrays with elements: the data must be there, and nothing after it.
    out.append(Case("(3,) data short by 1", npy(dict_text(), b"\0" * 11), "refuse"))
    out.append(Case("(3,) data long by 1", npy(dict_text(), b"\0" * 13), "refuse", "trailing"))
    out.append(Case("(0,) with a data byte", npy(dict_text("(0,)"), b"\0"), "refuse", "trailing"))
    out.append(Case("() scalar", npy(dict_text("()"), b"\0" * 4), "read"))
    out.append(Case("() scalar, no data", npy(dict_text("()"), b""), "refuse"))
    out.append(Case("(2^32, 2^32) product wraps to 0", npy(dict_text("(4294967296, 4294967296)", "'|u1'"), b""), "refuse"))
    out.append(Case("(2^62, 4) product wraps to 0", npy(dict_text("(4611686018427387904, 4)", "'|u1'"), b""), "refuse"))
    out.append(Case("(2^40,) data absent", npy(dict_text("(1099511627776,)", "'|u1'"), b""), "refuse"))
    for shape, kiln, why in [("(-1,)", "refuse", "negative"), ("(0, -1)", "refuse", None), ("(-0,)", "refuse", "syntax"),
                             ("(True,)", "refuse", None), ("(3.0,)", "refuse", None), ("[3]", "refuse", None),
                             ("(3)", "refuse", None), ("((3,),)", "refuse", None), ("(0x3,)", "refuse", "syntax"),
                             ("(0_3,)", "refuse", "syntax"), ("(+3,)", "refuse", "syntax"), ("(03,)", "refuse", None),
                             ("(00,)", "refuse", "syntax"), ("(3,,)", "refuse", None), ("(,)", "refuse", None),
                             ("(3 ,)", "read", None), ("( 3, )", "read", None), ("(1, 3)", "read", None),
                             ("(1, 3,)", "read", None), ("(1,1,1,1,1,1,1,3)", "read", None),
                             ("(1,1,1,1,1,1,1,1,3)", "refuse", "rank"), ("(3, None)", "refuse", None),
                             ("(9" + "9" * 30 + ",)", "refuse", None)]:
        out.append(Case("shape " + shape, npy(dict_text(shape), b"\0" * 12), kiln, why))
    return out


def keys_and_values():
    out = []
    d = b"\0" * 12
    for text, kiln, why in [
        ("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}", "read", None),
        ("{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (3,)}", "read", None),
        ("{'shape': (3,), 'fortran_order': False, 'descr': '<f4'}", "read", None),
        ("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'shape': (3,)}", "refuse", "repeat"),
        ("{'descr': '<i4', 'descr': '<f4', 'fortran_order': False, 'shape': (3,)}", "refuse", "repeat"),
        ("{'descr': '<f4', 'fortran_order': False}", "refuse", None),
        ("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'x': 0}", "refuse", None),
        ("{'descr': '<f4', 'fortran_order': False, 'Shape': (3,)}", "refuse", None),
        ("{u'descr': '<f4', 'fortran_order': False, 'shape': (3,)}", "refuse", "syntax"),
        ("{r'descr': '<f4', 'fortran_order': False, 'shape': (3,)}", "refuse", "syntax"),
        ("{b'descr': '<f4', 'fortran_order': False, 'shape': (3,)}", "refuse", None),
        ("{'''descr''': '<f4', 'fortran_order': False, 'shape': (3,)}", "refuse", "syntax"),
        ("{'des' 'cr': '<f4', 'fortran_order': False, 'shape': (3,)}", "refuse", "syntax"),
        ("{'d\\x65scr': '<f4', 'fortran_order': False, 'shape': (3,)}", "refuse", "syntax"),
        ("{'descr': '<f4', 'fortran_order': 0, 'shape': (3,)}", "refuse", None),
        ("{'descr': '<f4', 'fortran_order': None, 'shape': (3,)}", "refuse", None),
        ("{'descr': '<f4', 'fortran_order': 'False', 'shape': (3,)}", "refuse", None),
        ("{'descr': '<f4', 'fortran_order': false, 'shape': (3,)}", "refuse", None),
        ("{'descr': '<f4', 'fortran_order': (False), 'shape': (3,)}", "refuse", "syntax"),
        ("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)} # note", "refuse", "syntax"),
        ("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)};", "refuse", None),
        ("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}}", "refuse", None),
        ("{'descr': '<f4', 'fortran_order': False, 'shape': (3,),,}", "refuse", None),
        ("{,}", "refuse", None),
        ("{}", "refuse", None),
        ("dict(descr='<f4', fortran_order=False, shape=(3,))", "refuse", None),
        ("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)", "refuse", None),
        ("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}\0", "refuse", None),
        ("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)\\\n}", "refuse", "syntax"),
        ("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}\n\n", "refuse", "outside"),
        ("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}\r\n", "refuse", "outside"),
        ("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}  \t \n", "read", None),
        (" {'descr': '<f4', 'fortran_order': False, 'shape': (3,)}", "refuse", "outside"),
        ("\n{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}", "refuse", "outside"),
        ("{\x0c'descr': '<f4', 'fortran_order': False, 'shape': (3,)}", "refuse", "syntax"),
        ("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}\x0b", "refuse", None),
    ]:
        for version in ((1, 0), (3, 0)):
            out.append(Case("v%d %r" % (version[0], text), npy(text, d, version), kiln, why))
    return out


def descrs():
    """descr_to_dtype(str) is numpy.dtype(str): kiln reads the explicit forms of its table."""
    out = []
    kiln_forms = {("<", c) for c in ("f2", "f4", "f8", "u2", "i2", "u4", "i4", "u8", "i8", "c8", "c16")}
    kiln_forms |= {(">", c) for _, c in set(kiln_forms)}
    kiln_forms |= {(o, c) for o in "|<>" for c in ("u1", "i1", "b1")}
    codes = ["f2", "f4", "f8", "f16", "u1", "i1", "u2", "i2", "u4", "i4", "u8", "i8", "b1", "c8", "c16", "c32",
             "?", "e", "f", "d", "g", "b", "B", "h", "H", "i", "I", "l", "L", "q", "Q", "F", "D", "V4", "S3",
             "U2", "O", "M8[D]", "m8[s]", "M8", "f3", "i16", "u0", "b2", "c4"]
    for order in ["<", ">", "|", "=", ""]:
        for code in codes:
            descr = order + code
            size = 0
            try:
                size = np.dtype(descr).itemsize
            except Exception:
                pass
            kiln = "read" if (order, code) in kiln_forms else "refuse"
            out.append(Case("descr %r" % descr, npy(dict_text("(2,)", repr(descr)), b"\0" * (2 * max(size, 1))),
                            kiln, "descr" if kiln == "refuse" else None))
    for descr in ["float32", "int8", "bool", "complex64", "'<f4'", "<f4 ", " <f4", "<F4", ""]:
        out.append(Case("descr %r" % descr, npy(dict_text("(2,)", repr(descr)), b"\0" * 8), "refuse", "descr"))
    for descr in ["[('', '<f4')]", "[('a', '<f4')]", "('<f4', (2,))", "('<f4', ())", "['<f4']", "None", "4"]:
        out.append(Case("descr " + descr, npy(dict_text("(2,)", descr), b"\0" * 16), "refuse", "dtype"))
    return out


# The token boundaries of NumPy's dict, for the whitespace matrix.
TOKENS = ["{", "'descr'", ":", "'<f4'", ",", "'fortran_order'", ":", "False", ",", "'shape'", ":", "(",
          "3", ",", ")", ",", "}"]
SPACES = [" ", "\t", "\n", "\r", "\r\n", "\n ", "\n\t", " \n", "\x0c", "\x0b", "\n\n", "  \t"]


def whitespace():
    out = []
    for pos in range(len(TOKENS) + 1):
        for ws in SPACES:
            text = "".join(TOKENS[:pos]) + ws + "".join(TOKENS[pos:])
            for version in ((1, 0), (2, 0), (3, 0)):
                out.append(Case("v%d whitespace %r at %d" % (version[0], ws, pos), npy(text, b"\0" * 12, version)))
    return out


ALPHABET = b" \t\n\r\x0c{}()[],:'\"L0123456789-+_xeTrueFalsN#\\\x00\x80\xa0\xc3\xa9\xff<>|=fiucb?OUV"


def split(file):
    """(version, header, data) of a well-formed file."""
    version = (file[6], file[7])
    width = 2 if version == (1, 0) else 4
    n = int.from_bytes(file[8:8 + width], "little")
    return version, file[8 + width:8 + width + n], file[8 + width + n:]


def mutations(count, seed):
    """Random edits of valid files: header bytes, version, length field, data."""
    rng = random.Random(seed)
    seeds = [saved(np.arange(3, dtype="<f4")), saved(np.zeros((0, 2), "|u1"), (2, 0)),
             saved(np.arange(4, dtype=">i2").reshape(2, 2), (3, 0)), saved(np.array(1.5, "<c16")),
             npy(dict_text("(3L,)"), b"\0" * 12), npy(dict_text("(0, 9223372036854775807)", "'|u1'"), b""),
             saved(np.asfortranarray(np.zeros((1, 3), "<f8")))]
    out = []
    for k in range(count):
        version, header, data = split(rng.choice(seeds))
        header = bytearray(header)
        for _ in range(rng.randint(1, 3)):
            op = rng.random()
            at = rng.randrange(0, len(header) + 1)
            if op < 0.4:
                header.insert(at, rng.choice(ALPHABET))
            elif op < 0.65 and at < len(header):
                del header[at]
            elif op < 0.9 and at < len(header):
                header[at] = rng.choice(ALPHABET)
            elif op < 0.95:
                version = rng.choice([(1, 0), (2, 0), (3, 0)])
            else:
                data = data + bytes(rng.randint(1, 16)) if rng.random() < 0.5 else data[:-rng.randint(1, 4)]
        length = None if rng.random() < 0.9 else len(header) + rng.choice([-2, -1, 1, 2])
        out.append(Case("mutation %d" % k, npy(bytes(header), data, version, max(length or 0, 0) if length is not None else None)))
    return out


def reader_cases(mutation_count=600, seed=20261202):
    return (written_by_numpy() + fortran() + magic_and_version() + header_limit() + longs() + shapes()
            + keys_and_values() + descrs() + whitespace() + mutations(mutation_count, seed))
