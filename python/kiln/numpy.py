"""NumPy arrays to and from Kiln blocks, in the shape of safetensors.numpy.

    load_file(path) / load(data) -> {key: read-only ndarray view}
    save_file(tensors, path) / save(tensors) -> bytes

Keys are the tensor names; in an unnamed block (no names at all) they are the
descriptor indices 0, 1, ... as ints, so a key is an int exactly when the
block is unnamed. See docs/python.md for the dtype table.
"""

from __future__ import annotations

import os
from typing import Dict, Mapping, Optional, Sequence, Union

import numpy as np

from . import _kiln
from ._core import Block, Source, fs_path
from ._dtypes import KILN_DTYPES
from ._info import Key

__all__ = ["load_file", "load", "save_file", "save"]

_MAX_RANK = _kiln.MAX_RANK

Tensors = Union[Mapping[str, np.ndarray], Sequence[np.ndarray]]


def _load(source: Source) -> Dict[Key, np.ndarray]:
    block = Block(source)
    return {info.key: block.array(info) for info in block.infos}


def load_file(path: Union[str, "os.PathLike[str]"]) -> Dict[Key, np.ndarray]:
    """Maps the file and returns {key: read-only view}; raises KilnError, OSError."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be str or os.PathLike, not {type(path).__name__}")
    return _load(path)


def load(data: Union[bytes, bytearray, memoryview]) -> Dict[Key, np.ndarray]:
    """{key: read-only view into data}; the views keep data alive and exported."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"data must be bytes, bytearray or memoryview, not {type(data).__name__}")
    return _load(data)


def _kiln_dtype(key: Key, a: np.ndarray) -> str:
    le = a.dtype.newbyteorder("<") if a.dtype.byteorder == ">" else a.dtype
    if le.fields is not None or le.subdtype is not None:
        raise TypeError(f"tensor {key!r}: structured dtype {a.dtype} has no Kiln dtype")
    name = KILN_DTYPES.get(le)
    if name is None:
        raise TypeError(f"tensor {key!r}: dtype {a.dtype} has no Kiln dtype "
                        f"(Kiln holds {', '.join(sorted(set(KILN_DTYPES.values())))})")
    return name


def _entry(key: Key, name: bytes, value: object) -> tuple:
    if isinstance(value, np.generic):  # a NumPy scalar: a rank-0 tensor
        value = np.asarray(value)
    if not isinstance(value, np.ndarray):
        raise TypeError(f"tensor {key!r}: expected a numpy.ndarray, not {type(value).__name__}")
    dtype = _kiln_dtype(key, value)
    if value.ndim > _MAX_RANK:
        raise ValueError(f"tensor {key!r}: {value.ndim} dimensions, Kiln holds at most {_MAX_RANK}")
    # Little-endian and C-contiguous; a copy only when the array is neither.
    data = np.ascontiguousarray(value, dtype=value.dtype.newbyteorder("<"))
    return (name, dtype, list(value.shape), data)


def _name_bytes(position: int, name: object) -> tuple:
    """(the name as an exact str, its UTF-8 bytes) for the dict's key at position.

    A name is its characters: a str subclass is read as the str it holds, and
    none of its methods (encode, __len__, __repr__, ...) is called, so a
    subclass can neither change the bytes written nor fail in an unforeseen
    way. type() is asked, not isinstance(), which a __class__ property fools.
    """
    if not issubclass(type(name), str):
        raise TypeError(f"tensor {position}: tensor names must be str, "
                        f"not {type(name).__name__}")
    text = str.__str__(name)  # the characters, as an exact str
    if not text:
        raise ValueError(f"tensor {position}: tensor names must not be empty "
                         "(pass a list for an unnamed block)")
    try:
        return text, text.encode("utf-8")
    except UnicodeEncodeError as e:  # a lone surrogate: not UTF-8 (rule N4)
        raise ValueError(f"tensor {text!r}: the name is not UTF-8 "
                         f"({e.reason} at character {e.start})") from None


def _entries(tensors: Tensors) -> list:
    if isinstance(tensors, Mapping):
        entries = []
        for position, (name, value) in enumerate(tensors.items()):
            text, encoded = _name_bytes(position, name)
            entries.append(_entry(text, encoded, value))
        return entries
    if isinstance(tensors, (list, tuple)):
        return [_entry(i, b"", v) for i, v in enumerate(tensors)]
    raise TypeError("tensors must be a dict {name: ndarray} or a list of ndarrays (unnamed)")


def save(tensors: Tensors, metadata: Optional[dict] = None) -> bytes:
    """The canonical block of these tensors, as bytes.

    tensors: {name: ndarray} (a named block, in the dict's order) or a list of
    ndarrays (an unnamed block). metadata must be None: Kiln has no place for it.
    """
    _no_metadata(metadata)
    return _kiln.write(_entries(tensors))


def save_file(tensors: Tensors, path: Union[str, "os.PathLike[str]"],
              metadata: Optional[dict] = None) -> None:
    """Writes the canonical block to path: a temporary file in the same directory,
    then a rename, so a failure leaves no half-written file."""
    _no_metadata(metadata)
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be str or os.PathLike, not {type(path).__name__}")
    _kiln.write(_entries(tensors), fs_path(path))


def _no_metadata(metadata: Optional[dict]) -> None:
    if metadata:
        raise ValueError("Kiln has no place for metadata; pass metadata=None")
