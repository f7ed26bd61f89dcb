"""The one table of Kiln dtypes and the NumPy dtypes that view them.

Reading (kiln.numpy.load, safe_open) views a tensor as NUMPY_DTYPES or
RAW_WITH_SHAPE gives; writing (kiln.numpy.save) takes the NumPy dtypes of
NUMPY_DTYPES back to their Kiln names (KILN_DTYPES, the same table turned
round). See docs/python.md.
"""

from __future__ import annotations

from typing import Dict

import numpy as np

# Kiln dtypes NumPy has, as little-endian NumPy dtypes.
NUMPY_DTYPES: Dict[str, str] = {
    "f16": "<f2", "f32": "<f4", "f64": "<f8",
    "u8": "u1", "i8": "i1", "u16": "<u2", "i16": "<i2",
    "u32": "<u4", "i32": "<i4", "u64": "<u8", "i64": "<i8",
    "bool": "?", "c64": "<c8", "c128": "<c16",
}
# Dtypes NumPy lacks, with the element width that keeps the shape: raw views.
RAW_WITH_SHAPE: Dict[str, str] = {
    "bf16": "<u2", "f8_e4m3fn": "u1", "f8_e4m3fnuz": "u1",
    "f8_e5m2": "u1", "f8_e5m2fnuz": "u1", "f8_e8m0": "u1",
}
# Packed 4-bit and opaque tensors: a 1-D uint8 view of byte_length bytes.

# NumPy dtype (little-endian form) -> Kiln dtype name: NUMPY_DTYPES turned round.
KILN_DTYPES: Dict[np.dtype, str] = {np.dtype(v): k for k, v in NUMPY_DTYPES.items()}
assert len(KILN_DTYPES) == len(NUMPY_DTYPES), "two Kiln dtypes with one NumPy dtype"
