"""Sources (paths and bytes-like objects), parsing, and NumPy views."""

from __future__ import annotations

import operator
import os
from typing import Dict, List, Optional, Tuple, Union

import numpy as np

from . import _kiln
from ._dtypes import NUMPY_DTYPES, RAW_WITH_SHAPE
from ._info import Key, TensorInfo, from_records
from ._ranges import is_file_object, read_exact, read_ranges

# A path, a bytes-like object, or a seekable binary file object (any object
# with seek and read or readinto: an open file, io.BytesIO, an fsspec file).
Source = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, object]

_INTP_MAX = np.iinfo(np.intp).max


def check_limit(name: str, value: Optional[int]) -> Optional[int]:
    """None, or a non-negative int (TypeError / ValueError otherwise)."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an int or None, not bool")
    value = operator.index(value)
    if value < 0 or value > 2**64 - 1:
        raise ValueError(f"{name} must be in [0, 2**64-1], got {value}")
    return value


def open_source(source: Source) -> Tuple[memoryview, object]:
    """(bytes to parse, read-only exporter for the arrays).

    A path is mapped (_kiln.Mapping); a bytes-like object is pinned
    (_kiln.Pinned holds its buffer export while any array lives, so a
    bytearray cannot be resized under a view).
    """
    if isinstance(source, (bytes, bytearray, memoryview)):
        view = memoryview(source)
        if not view.c_contiguous:
            raise ValueError("the buffer must be C-contiguous")
        if view.format != "B" or view.ndim != 1:
            view = view.cast("B")
        return view, _kiln.Pinned(view)
    if isinstance(source, (str, os.PathLike)):
        mapping = _kiln.Mapping(fs_path(source))
        return memoryview(mapping), mapping
    raise TypeError("source must be a path, a bytes-like object or a seekable binary file "
                    f"object, not {type(source).__name__}")


def fs_path(path: "Union[str, os.PathLike[str]]") -> bytes:
    """The path as the file system sees it; ValueError for an embedded NUL,
    as open() raises (the C++ side would otherwise stop at the NUL and use
    another file)."""
    encoded = os.fsencode(path)
    if b"\0" in encoded:
        raise ValueError("embedded null byte in path")
    return encoded


def _check_numpy_can_hold(info: TensorInfo, itemsize: int) -> None:
    """NumPy bounds the product of the nonzero dimensions times the item size
    by its index type; a zero-element Kiln tensor may have dimensions up to
    2^64-1 (see golden case ok-zero-dim-among-huge)."""
    extent = itemsize
    for d in info.shape:
        extent *= max(d, 1)
    if extent > _INTP_MAX:
        raise ValueError(f"tensor {info.key!r}: shape {list(info.shape)} is more than NumPy can "
                         f"index (nonzero dimensions x item size > {_INTP_MAX})")


class Block:
    """A validated block: its bytes (kept alive) and its tensor table."""

    def __init__(self, source: Source, *, max_tensors: Optional[int] = None,
                 max_block_bytes: Optional[int] = None, max_name_bytes: Optional[int] = None,
                 prefix: bool = False, merge_gap: Optional[int] = None,
                 max_range: Optional[int] = None) -> None:
        limits = (check_limit("max_tensors", max_tensors),
                  check_limit("max_block_bytes", max_block_bytes),
                  check_limit("max_name_bytes", max_name_bytes))
        merge_gap = check_limit("merge_gap", merge_gap)
        max_range = check_limit("max_range", max_range)
        self.file = None  # a file object: tensors are read from it when asked for
        self.reads = 0
        self.bytes_read = 0
        if is_file_object(source):
            # Only the ranges the rules read (kiln/_ranges.py).
            self.file, self.exporter = source, None
            header, records, self.reads, self.bytes_read = read_ranges(
                source, limits, prefix, merge_gap, max_range)
        else:
            # Only bytes and mappings are parsed with the GIL released (_kiln.parse).
            view, self.exporter = open_source(source)
            header, records = _kiln.parse(view, *limits, bool(prefix))
        self.header: dict = header
        self.infos: List[TensorInfo] = from_records(records)
        self.named = header["flags"] & _kiln.FLAG_NAMES != 0
        self.by_key: Dict[Key, TensorInfo] = {i.key: i for i in self.infos}

    def find(self, key: Key) -> TensorInfo:
        """The tensor with this name (named block) or index (any block)."""
        if isinstance(key, int) and not isinstance(key, bool):
            if 0 <= key < len(self.infos):
                return self.infos[key]
            raise KeyError(key)
        if not isinstance(key, str):
            raise TypeError(f"a tensor key is a str name or an int index, not {type(key).__name__}")
        info = self.by_key.get(key)
        if info is None:
            raise KeyError(key)
        return info

    def array(self, info: TensorInfo) -> np.ndarray:
        """A read-only NumPy view of the tensor's payload (no copy)."""
        if info.dtype in NUMPY_DTYPES or info.dtype in RAW_WITH_SHAPE:
            dtype = NUMPY_DTYPES.get(info.dtype) or RAW_WITH_SHAPE[info.dtype]
            shape = info.shape
            _check_numpy_can_hold(info, np.dtype(dtype).itemsize)
        else:  # u4, i4, f4_e2m1, opaque: the packed bytes
            dtype, shape = "u1", (info.length,)
        if self.file is not None:
            # Read now, this tensor's bytes only; the array owns a copy.
            data = bytes(read_exact(self.file, info.start, info.length, info.start + info.length))
            return np.ndarray(shape, dtype=dtype, buffer=data)
        # The array's base is the exporter, which it keeps alive; the export
        # is read-only, so the array is too and cannot be made writable.
        return np.ndarray(shape, dtype=dtype, buffer=self.exporter, offset=info.start)


def validate(source: Source, *, max_tensors: Optional[int] = None,
             max_block_bytes: Optional[int] = None, max_name_bytes: Optional[int] = None,
             prefix: bool = False, merge_gap: Optional[int] = None,
             max_range: Optional[int] = None) -> int:
    """Checks every rule; returns the block length or raises a KilnError subclass.

    source: a path (str or os.PathLike; the file is mapped), a bytes-like
    object, or a seekable binary file object (read only where the rules look:
    header, directory, uncovered payload bytes; OSError when a read fails).
    prefix=True: the block may be followed by other bytes. merge_gap and
    max_range tune a file object's reads (kiln/random_access.h).
    """
    b = Block(source, max_tensors=max_tensors, max_block_bytes=max_block_bytes,
              max_name_bytes=max_name_bytes, prefix=prefix, merge_gap=merge_gap,
              max_range=max_range)
    return int(b.header["block_length"])


def inspect(source: Source, *, max_tensors: Optional[int] = None,
            max_block_bytes: Optional[int] = None, max_name_bytes: Optional[int] = None,
            prefix: bool = False, merge_gap: Optional[int] = None,
            max_range: Optional[int] = None) -> List[TensorInfo]:
    """Validates like validate() and returns a TensorInfo per tensor, in order."""
    return Block(source, max_tensors=max_tensors, max_block_bytes=max_block_bytes,
                 max_name_bytes=max_name_bytes, prefix=prefix, merge_gap=merge_gap,
                 max_range=max_range).infos
