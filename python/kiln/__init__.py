"""kiln: read, check and write Kiln v2 tensor directories from Python.

    import kiln, kiln.numpy
    tensors = kiln.numpy.load_file("model.klnt")   # {name: read-only ndarray view}
    kiln.numpy.save_file(tensors, "copy.klnt")
    with kiln.safe_open("model.klnt") as f:
        w = f.get_slice("w")[:, :16]

See docs/python.md.
"""

# The compiled module kiln._kiln may live in another directory named kiln on
# sys.path (a CMake build tree); extend_path makes it part of this package.
__path__ = __import__("pkgutil").extend_path(__path__, __name__)

from ._errors import FrameError, KilnError, KilnTypeError, LimitError, Utf8Error  # noqa: E402
from ._info import QuantInfo, TensorInfo  # noqa: E402
from ._core import inspect, validate  # noqa: E402
from ._safe_open import TensorSlice, safe_open  # noqa: E402
from ._stream import StreamValidator  # noqa: E402

__all__ = [
    "KilnError", "FrameError", "KilnTypeError", "LimitError", "Utf8Error",
    "TensorInfo", "QuantInfo", "TensorSlice", "inspect", "validate", "safe_open",
    "StreamValidator",
]
