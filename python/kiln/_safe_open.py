"""safe_open: lazy access to one file's tensors, like safetensors.safe_open."""

from __future__ import annotations

import os
from typing import Iterator, List, Optional, Tuple, Union

import numpy as np

from ._core import Block
from ._info import Key, TensorInfo
from ._ranges import is_file_object

__all__ = ["safe_open", "TensorSlice"]


class TensorSlice:
    """One tensor, not materialised: get_shape(), get_dtype(), and [...] for a view."""

    def __init__(self, block: Block, info: TensorInfo) -> None:
        self._block = block
        self.info = info

    def get_shape(self) -> List[int]:
        return list(self.info.shape)

    def get_dtype(self) -> str:
        """The Kiln dtype name ("f32", "bf16", ...)."""
        return self.info.dtype

    def __getitem__(self, index: object) -> np.ndarray:
        # Basic indexing of a read-only view is a view: only the pages the
        # caller then reads are touched.
        return self._block.array(self.info)[index]


class safe_open:  # noqa: N801 (the safetensors name)
    """Maps and validates a file; tensors are views made only when asked for.

    A seekable binary file object is validated by reading only what the rules
    read; get_tensor / get_slice then read that tensor's bytes (a copy).

        with kiln.safe_open("model.klnt") as f:
            for k in f.keys():
                info = f.info(k)           # TensorInfo
                t = f.get_tensor(k)        # read-only view
    """

    def __init__(self, path: Union[str, "os.PathLike[str]", object],
                 framework: Optional[str] = "np", *, max_tensors: Optional[int] = None,
                 max_block_bytes: Optional[int] = None, max_name_bytes: Optional[int] = None,
                 merge_gap: Optional[int] = None, max_range: Optional[int] = None) -> None:
        if framework not in (None, "np", "numpy"):
            raise ValueError(f"framework {framework!r}: kiln returns NumPy arrays ('np')")
        if not isinstance(path, (str, os.PathLike)) and not is_file_object(path):
            raise TypeError("path must be str, os.PathLike or a seekable binary file object, "
                            f"not {type(path).__name__}")
        self._block: Optional[Block] = Block(path, max_tensors=max_tensors,
                                             max_block_bytes=max_block_bytes,
                                             max_name_bytes=max_name_bytes,
                                             merge_gap=merge_gap, max_range=max_range)

    def _open(self) -> Block:
        block = self._block
        if block is None:
            raise ValueError("safe_open: the file is closed")
        return block

    def __enter__(self) -> "safe_open":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Drops the mapping; arrays already returned keep it alive."""
        self._block = None

    def keys(self) -> List[Key]:
        """Names in descriptor order; indices (ints) in an unnamed block."""
        return [i.key for i in self._open().infos]

    def __iter__(self) -> Iterator[Key]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self._open().infos)

    def __contains__(self, key: object) -> bool:
        return key in self._open().by_key

    def metadata(self) -> None:
        """Kiln blocks hold no metadata (for code written for safetensors)."""
        return None

    def info(self, key: Key) -> TensorInfo:
        return self._open().find(key)

    def infos(self) -> List[TensorInfo]:
        return list(self._open().infos)

    def header(self) -> dict:
        return dict(self._open().header)

    def get_tensor(self, key: Key) -> np.ndarray:
        block = self._open()
        return block.array(block.find(key))

    def get_slice(self, key: Key) -> TensorSlice:
        block = self._open()
        return TensorSlice(block, block.find(key))

    def shape(self, key: Key) -> Tuple[int, ...]:
        return self._open().find(key).shape
