"""TensorInfo: one tensor's descriptor, as kiln.inspect and safe_open report it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple, Union

Key = Union[str, int]  # a name in a named block, the index in an unnamed one

_SCHEMES = {1: "per_axis", 2: "grouped"}


@dataclass(frozen=True)
class QuantInfo:
    """Quantisation parameters (rules Q1..Q7)."""

    scheme: str            # "per_axis" (1) or "grouped" (2)
    axis: int              # the dimension the scales run along
    group_size: int        # indices per scale group; 0 for per_axis
    scale: Optional[Key]   # the scale tensor's key (name, or index when unnamed)
    outer: Optional[Key]   # the outer rank-0 scale tensor's key, if any


@dataclass(frozen=True)
class TensorInfo:
    """One tensor of a validated block."""

    index: int                  # descriptor index
    name: Optional[str]         # None in an unnamed block
    dtype: str                  # the Kiln dtype name: "f32", "bf16", "opaque", ...
    shape: Tuple[int, ...]
    offset: int                 # byte offset from the start of the payload region
    length: int                 # payload bytes
    layout: Optional[str]       # opaque dtype: the layout name ("ggml.q4_K")
    block_size: int             # opaque dtype: elements per block; else 0
    quant: Optional[QuantInfo]  # None when not quantised
    start: int                  # where the payload starts in the file or buffer

    @property
    def key(self) -> Key:
        """The key of this tensor in load()/safe_open(): its name, or its index."""
        return self.index if self.name is None else self.name


def from_records(records: list) -> list:
    """TensorInfo objects from the tuples of _kiln.parse."""
    names = [r[1] for r in records]

    def key(i: Optional[int]) -> Optional[Key]:
        if i is None:
            return None
        return i if names[i] is None else names[i]

    infos = []
    for (index, name, dtype, shape, offset, length, start, layout, block_size,
         scheme, axis, group_size, scale, outer) in records:
        quant = None
        if scheme:
            quant = QuantInfo(_SCHEMES.get(scheme, str(scheme)), axis, group_size,
                              key(scale), key(outer))
        infos.append(TensorInfo(index, name, dtype, tuple(shape), offset, length, layout,
                                block_size, quant, start))
    return infos
