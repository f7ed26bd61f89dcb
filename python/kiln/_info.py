"""TensorInfo: one tensor's descriptor, as kiln.inspect and safe_open report it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple, Union

from . import _kiln

Key = Union[str, int]  # a name in a named block, the index in an unnamed one

_SCHEMES = {_kiln.QUANT_PER_AXIS: "per_axis", _kiln.QUANT_GROUPED: "grouped"}


@dataclass(frozen=True)
class QuantInfo:
    """Quantisation parameters (rules Q1..Q7)."""

    scheme: str            # "per_axis" or "grouped"
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
    """TensorInfo objects from the _kiln.TensorRecords of _kiln.parse."""
    names = [r.name for r in records]

    def key(i: Optional[int]) -> Optional[Key]:
        if i is None:
            return None
        return i if names[i] is None else names[i]

    infos = []
    for r in records:
        quant = None
        if r.scheme:
            quant = QuantInfo(_SCHEMES.get(r.scheme, str(r.scheme)), r.axis, r.group_size,
                              key(r.scale_index), key(r.outer_index))
        infos.append(TensorInfo(r.index, r.name, r.dtype, tuple(r.shape), r.offset, r.length,
                                r.layout, r.block_size, quant, r.start))
    return infos
