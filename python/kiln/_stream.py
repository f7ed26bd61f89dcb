"""kiln.StreamValidator: check a block as its bytes arrive (an upload)."""

from __future__ import annotations

from typing import Optional, Union

from . import _kiln
from ._core import check_limit

Chunk = Union[bytes, bytearray, memoryview]


class StreamValidator:
    """feed() chunks in order; stops at the first rejection.

    feed(chunk) -> True when the block is complete, False when more bytes are
    needed; raises the KilnError subclass (FrameError, ...) at the first
    rejection. finish() at the end of the stream: True, or the error (a block
    cut short is FRAME). consumed: bytes of the stream taken so far.
    Safe to share between threads (calls are serialised).
    """

    def __init__(self, *, max_tensors: Optional[int] = None,
                 max_block_bytes: Optional[int] = None, max_name_bytes: Optional[int] = None,
                 prefix: bool = False) -> None:
        self._v = _kiln.StreamValidator(check_limit("max_tensors", max_tensors),
                                        check_limit("max_block_bytes", max_block_bytes),
                                        check_limit("max_name_bytes", max_name_bytes),
                                        bool(prefix))

    def feed(self, chunk: Chunk) -> bool:
        if not isinstance(chunk, (bytes, bytearray, memoryview)):
            raise TypeError(f"chunk must be bytes-like, not {type(chunk).__name__}")
        return bool(self._v.feed(chunk))

    def finish(self) -> bool:
        return bool(self._v.finish())

    @property
    def consumed(self) -> int:
        """Bytes of the stream taken so far (up to the deciding byte)."""
        return int(self._v.consumed)

    @property
    def used(self) -> int:
        """Bytes of the last feed()'s chunk that were taken (prefix mode: the
        rest belongs to what follows the block)."""
        return int(self._v.used)
