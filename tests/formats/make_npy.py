"""Writes .npy fixtures with NumPy for the kiln pack/unpack tests.

usage: make_npy.py GOOD_DIR BAD_DIR

GOOD_DIR receives arrays kiln must pack (one file per array, the file stem
is the tensor name); BAD_DIR receives arrays it must refuse. Run with
Debian's /usr/bin/python3 and python3-numpy.
"""
import os
import sys

import numpy as np


def good_arrays():
    rng = np.random.default_rng(7)
    return {
        "f32_2x3": (np.arange(6, dtype="<f4").reshape(2, 3) * 1.5),
        "f64_scalar": np.array(-2.25, dtype="<f8"),
        "f16_4": np.array([1.0, -0.5, 65504.0, np.inf], dtype="<f2"),
        "u8_5": np.array([0, 1, 127, 128, 255], dtype="|u1"),
        "i8_5": np.array([-128, -1, 0, 1, 127], dtype="|i1"),
        "u16_3": np.array([0, 1, 65535], dtype="<u2"),
        "i16_2x2x2": np.arange(-4, 4, dtype="<i2").reshape(2, 2, 2),
        "u32_2": np.array([0, 4294967295], dtype="<u4"),
        "i64_3": np.array([-(2**63), 0, 2**63 - 1], dtype="<i8"),
        "u64_2": np.array([2**64 - 1, 12345], dtype="<u8"),
        "bool_4": np.array([True, False, True, True]),
        "c64_2": np.array([1 + 2j, -3.5 - 0.25j], dtype="<c8"),
        "c128_2": np.array([1e300 + 1j, -1j], dtype="<c16"),
        "f32_empty": np.zeros((0, 4), dtype="<f4"),
        "f32_rank5": rng.standard_normal((2, 1, 3, 1, 2)).astype("<f4"),
        # Big-endian data: kiln byte-swaps it to little-endian.
        "be_i32_5": np.array([1, -2, 3, 2**31 - 1, -(2**31)], dtype=">i4"),
        "be_f64_2x2": np.array([[1.5, -2.0], [1e-300, 3.0]], dtype=">f8"),
        "be_c64_2": np.array([1 + 2j, 3 - 4j], dtype=">c8"),
        "be_u16_3": np.array([1, 256, 65534], dtype=">u2"),
        # Fortran order of a vector is the same bytes as C order.
        "fortran_vector": np.asfortranarray(np.arange(4, dtype="<f4")),
    }


def bad_arrays():
    return {
        "object": np.array([1, "a", None], dtype=object),
        "fortran_2x3": np.asfortranarray(np.arange(6, dtype="<f4").reshape(2, 3)),
        "unicode": np.array(["ab", "c"]),
        "bytes": np.array([b"ab", b"c"]),
        "structured": np.zeros(2, dtype=[("a", "<f4"), ("b", "<i4")]),
        "datetime": np.array(["2024-01-01"], dtype="M8[D]"),
        "void": np.zeros(2, dtype="V3"),
    }


def main():
    good, bad = sys.argv[1], sys.argv[2]
    os.makedirs(good, exist_ok=True)
    os.makedirs(bad, exist_ok=True)
    for name, a in good_arrays().items():
        np.save(os.path.join(good, name + ".npy"), a)
    # The other header versions: 2.0 (4-byte header length), 3.0 (UTF-8).
    for version in ((2, 0), (3, 0)):
        path = os.path.join(good, "v%d_i16.npy" % version[0])
        with open(path, "wb") as f:
            np.lib.format.write_array(f, np.arange(7, dtype="<i2"), version=version)
    for name, a in bad_arrays().items():
        np.save(os.path.join(bad, name + ".npy"), a, allow_pickle=True)


if __name__ == "__main__":
    main()
