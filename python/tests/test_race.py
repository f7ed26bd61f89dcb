"""Finding F4: a read-only memoryview of a bytearray that another thread
changes. kiln.inspect must return only values that passed the rules (the
parse holds the GIL for any buffer that is not bytes or a mapping)."""

import struct
import threading
import time

import numpy as np

import kiln
import kiln.numpy

COUNT = 5000
LAST = COUNT - 1
LENGTH_AT = 64 + 128 * LAST + 40  # the last descriptor's byte_length
SHAPE_AT = 64 + 128 * LAST + 48  # and its shape[0]


def test_readonly_view_of_a_changing_bytearray_returns_checked_values():
    block = kiln.numpy.save({f"t{i}": np.array([1.0, -2.0], np.float32) for i in range(COUNT)})
    buf = bytearray(block)
    view = memoryview(buf).toreadonly()
    stop = False

    def flip():
        while not stop:
            struct.pack_into("<Q", buf, SHAPE_AT, 2**61)
            struct.pack_into("<Q", buf, LENGTH_AT, 2**62)
            struct.pack_into("<Q", buf, SHAPE_AT, 2)
            struct.pack_into("<Q", buf, LENGTH_AT, 8)

    writer = threading.Thread(target=flip)
    writer.start()
    unchecked = []
    end = time.monotonic() + 3
    try:
        while time.monotonic() < end and not unchecked:
            try:
                t = kiln.inspect(view)[LAST]
            except kiln.KilnError:
                continue
            if t.shape != (2,) or t.length != 8:
                unchecked.append((t.shape, t.length))
    finally:
        stop = True
        writer.join()
    assert unchecked == []
