"""The exceptions kiln raises for a block that breaks a rule of the format.

Each carries the fields of the C++ ``kiln::Error``; ``str(e)`` is the verdict
line ``kiln validate`` prints (``Error::ToString()``). The class names avoid
the builtins: ``KilnTypeError`` is not ``TypeError``.
"""

from __future__ import annotations

from typing import Optional

__all__ = ["KilnError", "FrameError", "KilnTypeError", "LimitError", "Utf8Error"]


class KilnError(Exception):
    """A rejected block: ``error_class``, ``rule``, ``offset``, ``tensor``, ``message``."""

    def __init__(self, verdict: str, error_class: str, rule: str, offset: int,
                 tensor: Optional[int], message: str) -> None:
        super().__init__(verdict)
        self.error_class = error_class  # "FRAME", "TYPE", "LIMIT" or "UTF8"
        self.rule = rule                # "H1" .. "P2"
        self.offset = offset            # byte offset in the block
        self.tensor = tensor            # descriptor index, or None
        self.message = message          # the field and the values it held


class FrameError(KilnError):
    """FRAME: not a v2 block this reader can take (magic, version, truncation...)."""


class KilnTypeError(KilnError):
    """TYPE: framed, but the contents are inconsistent."""


class LimitError(KilnError):
    """LIMIT: arithmetic past 2^64-1, or a caller's limit exceeded."""


class Utf8Error(KilnError):
    """UTF8: a tensor or layout name is not well-formed UTF-8."""


_BY_CLASS = {"FRAME": FrameError, "TYPE": KilnTypeError, "LIMIT": LimitError, "UTF8": Utf8Error}


def class_for(error_class: str) -> type:
    """The exception class for an error class name (used by the C++ module)."""
    return _BY_CLASS.get(error_class, KilnError)
