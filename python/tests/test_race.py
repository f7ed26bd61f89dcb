"""Finding F4: a read-only memoryview of a bytearray that another thread
changes, and a mapped file that is rewritten while it is parsed. kiln.inspect
must return only values that passed the rules (the parse holds the GIL for any
buffer that is not bytes or a mapping; a mapping's directory is its own
copy)."""

import os
import sys
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


def make_block():
    return kiln.numpy.save({f"t{i}": np.array([1.0, -2.0], np.float32) for i in range(COUNT)})


def unchecked_values(source, put, seconds=2):
    """Inspects source while a thread flips the last descriptor's shape[0] and
    byte_length between valid and hostile values with put(value, at); returns
    the (shape, length) results that were never valid."""
    stop = False

    def flip():
        while not stop:
            put(2**61, SHAPE_AT)
            put(2**62, LENGTH_AT)
            put(2, SHAPE_AT)
            put(8, LENGTH_AT)

    writer = threading.Thread(target=flip)
    writer.start()
    unchecked = []
    end = time.monotonic() + seconds
    try:
        while time.monotonic() < end and not unchecked:
            try:
                t = kiln.inspect(source)[LAST]
            except kiln.KilnError:
                continue
            if t.shape != (2,) or t.length != 8:
                unchecked.append((t.shape, t.length))
    finally:
        stop = True
        writer.join()
    return unchecked


def test_readonly_view_of_a_changing_bytearray_returns_checked_values():
    buf = bytearray(make_block())
    view = memoryview(buf).toreadonly()
    assert unchecked_values(view, lambda v, at: struct.pack_into("<Q", buf, at, v)) == []


def test_mapped_file_rewritten_while_parsed_returns_checked_values(tmp_path):
    path = tmp_path / "race.klnt"
    path.write_bytes(make_block())
    fd = os.open(path, os.O_RDWR)
    try:
        # A crash (the old double fetch) kills the test run.
        def put(v, at):
            os.pwrite(fd, struct.pack("<Q", v), at)

        assert unchecked_values(str(path), put) == []
    finally:
        os.close(fd)



def test_buffer_changed_while_the_table_is_built_is_not_seen():
    """The deterministic form of the race above: the garbage collector runs
    Python code (its callbacks) at the containers the binding allocates, and
    that code makes the last descriptor hostile, at the k-th collection for
    each k in turn. A change before the parse is a rejection; a change after
    the verdict must not reach the table (a decode per tensor after the parse
    would read it)."""
    import gc

    from kiln import _kiln

    threshold = gc.get_threshold()
    after_verdict = 0
    block = make_block()
    for k in range(1, 40):
        buf = bytearray(block)
        view = memoryview(buf).toreadonly()
        seen = []

        def change(phase, _info, buf=buf, seen=seen, k=k):
            if phase == "start":
                seen.append(True)
                if len(seen) == k:
                    struct.pack_into("<Q", buf, SHAPE_AT, 2**61)
                    struct.pack_into("<Q", buf, LENGTH_AT, 2**62)

        gc.collect()
        gc.callbacks.append(change)
        gc.set_threshold(1)
        try:
            _header, records = _kiln.parse(view, None, None, None, False)
        except kiln.KilnError:
            continue  # changed before the rules read it
        finally:
            gc.set_threshold(*threshold)
            gc.callbacks.remove(change)
        if len(seen) < k:
            break  # no collection left to change the bytes in
        after_verdict += 1
        assert (records[LAST].shape, records[LAST].length) == ((2,), 8), k
    assert after_verdict > 0, "no change landed while the table was built"


def other_thread_ran(source, rounds, until_seen=False):
    """Validates source `rounds` times; returns in how many of them another
    Python thread ran meanwhile. The switch interval is an hour, so that
    thread can take the GIL only while the call has released it."""
    counter = [0]
    stop = threading.Event()

    def count():
        while not stop.is_set():
            counter[0] += 1
            time.sleep(0)  # gives the GIL back at once

    old = sys.getswitchinterval()
    thread = threading.Thread(target=count)
    thread.start()
    seen = 0
    try:
        sys.setswitchinterval(3600)
        # A wait for the GIL that the other thread began before the switch
        # interval changed still asks for a switch after the old interval
        # (5 ms), at any bytecode of this loop, which would count as a
        # release by the call. Letting it run once here makes its next wait
        # the new interval's.
        time.sleep(0.05)
        for _ in range(rounds):
            before = counter[0]
            kiln.validate(source)
            if counter[0] != before:
                seen += 1
                if until_seen:
                    break
    finally:
        sys.setswitchinterval(old)
        stop.set()
        thread.join()
    return seen


def test_the_gil_is_released_for_bytes_and_held_for_a_bytearray():
    # docs/python.md, "Threads and the GIL": bytes cannot change, so other
    # threads run while they are parsed; a bytearray (or a read-only view of
    # one) could be changed by them, so it is parsed with the GIL held.
    block = kiln.numpy.save({f"t{i}": np.zeros(2, np.float32) for i in range(8000)})
    # The probe works: the other thread runs during some call. It needs a
    # core for that, which a loaded machine gives late; up to 5,000 calls
    # (it stops at the first, usually within a few).
    assert other_thread_ran(block, 5000, until_seen=True) == 1
    assert other_thread_ran(memoryview(block), 5000, until_seen=True) == 1
    held = bytearray(block)
    assert other_thread_ran(held, 10) == 0
    assert other_thread_ran(memoryview(held).toreadonly(), 10) == 0
