"""Hostile inputs raise KilnError (or the usual TypeError/ValueError/OSError);
none crashes the interpreter. The arrays of a valid block stay inside it."""

import os
import random
import struct

import numpy as np
import pytest

import kiln
import kiln.numpy as kn
from conftest import golden_cases, golden_path, run_in_threads

OK_CASES = [name for name, expect, _ in golden_cases() if expect == "ok"]


def load_checked(data):
    """Loads, and checks that every view lies inside the buffer."""
    try:
        arrays = kn.load(data)
    except ValueError as e:  # NumPy cannot index some zero-element shapes
        assert "NumPy can" in str(e)
        return
    for a in arrays.values():
        assert a.nbytes <= len(data)
        a.tobytes()  # reads every byte of the view


@pytest.mark.parametrize("name", OK_CASES)
def test_every_truncation_is_frame(name):
    data = golden_path(name).read_bytes()
    for n in range(len(data)):
        with pytest.raises(kiln.FrameError) as e:
            kn.load(data[:n])
        assert e.value.offset <= len(data)


def test_random_mutations_raise_or_load():
    rng = random.Random(12)
    seeds = [golden_path(n).read_bytes() for n in OK_CASES]
    for _ in range(3000):
        data = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(data))
            data[i] = rng.randrange(256)
        try:
            load_checked(bytes(data))
        except kiln.KilnError as e:
            assert e.rule and e.error_class in ("FRAME", "TYPE", "LIMIT", "UTF8")


def test_huge_counts_raise_before_allocating():
    header = bytearray(golden_path("kiln-v2-empty").read_bytes())
    struct.pack_into("<IIQQ", header, 8, 0xFFFFFFFF, 0xFFFFFFFF, 2**64 - 1,
                     0xFFFFFFFF * 128 + 0xFFFFFFFF)
    with pytest.raises(kiln.KilnError):
        kn.load(bytes(header))


def test_bad_utf8_name_is_utf8_error():
    data = bytearray(kn.save({"ab": np.zeros(1, np.uint8)}))
    heap = 64 + 128
    assert data[heap:heap + 2] == b"ab"
    data[heap] = 0xC0  # an overlong lead byte
    with pytest.raises(kiln.Utf8Error) as e:
        kn.load(bytes(data))
    assert e.value.tensor == 0


def test_caller_limits_are_limit_h7():
    data = kn.save({"a": np.zeros(1), "b": np.zeros(1)})
    for kwargs in ({"max_tensors": 1}, {"max_block_bytes": len(data) - 1},
                   {"max_name_bytes": 1}):
        with pytest.raises(kiln.LimitError) as e:
            kiln.validate(data, **kwargs)
        assert e.value.rule == "H7"
    assert kiln.validate(data, max_tensors=2, max_block_bytes=len(data), max_name_bytes=2)


@pytest.mark.parametrize("kwargs,exc", [
    ({"max_tensors": -1}, ValueError), ({"max_tensors": 2**64}, ValueError),
    ({"max_tensors": "3"}, TypeError), ({"max_tensors": 1.5}, TypeError),
    ({"max_block_bytes": True}, TypeError),
])
def test_bad_limits_are_type_or_value_errors(kwargs, exc):
    with pytest.raises(exc):
        kiln.validate(b"", **kwargs)


def test_bad_sources():
    with pytest.raises(TypeError):
        kiln.validate(12)
    with pytest.raises(ValueError):
        kiln.validate(memoryview(bytes(256))[::2])
    with pytest.raises(FileNotFoundError):
        kiln.validate("/nonexistent/x.klnt")
    with pytest.raises(OSError):
        kiln.validate("/")  # a directory is not a regular file
    with pytest.raises(kiln.FrameError):
        kiln.validate(golden_path("kiln-pod-list-f32"))


def test_special_files_are_refused_without_blocking(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="not a regular file"):
        kn.load_file(fifo)  # O_NONBLOCK: the open does not wait for a writer
    with pytest.raises(OSError, match="not a regular file"):
        kn.load_file("/dev/null")


def test_empty_file_is_frame(tmp_path):
    path = tmp_path / "empty.klnt"
    path.write_bytes(b"")
    with pytest.raises(kiln.FrameError) as e:
        kn.load_file(path)
    assert (e.value.rule, e.value.offset) == ("H1", 0)


def test_keys_and_missing_tensors():
    f = kiln.safe_open(golden_path("ok-named-llama-layer"))
    with pytest.raises(KeyError):
        f.get_tensor("nope")
    with pytest.raises(KeyError):
        f.get_tensor(len(f))
    with pytest.raises(TypeError):
        f.get_tensor(1.0)
    assert f.get_tensor(0).shape == f.get_tensor(f.keys()[0]).shape


def test_threads_share_a_file_and_objects(tmp_path):
    path = tmp_path / "t.klnt"
    kn.save_file({f"t{i}": np.full(100, i, np.int32) for i in range(50)}, path)
    f = kiln.safe_open(path)

    def work():
        for _ in range(20):
            d = kn.load_file(path)
            assert all(int(d[f"t{i}"][99]) == i for i in range(50))
            assert int(f.get_tensor("t7")[0]) == 7
            kn.load(kn.save({"x": np.arange(1000)}))

    run_in_threads(work, 8)


def test_path_with_a_nul_byte_is_value_error(tmp_path):
    # Before the fix the C++ side stopped at the NUL: validate("x.klnt\0y")
    # checked x.klnt, and save_file to "a\0b" wrote "a".
    good = tmp_path / "x.klnt"
    kiln.numpy.save_file({"w": np.zeros(2, np.float32)}, good)
    for call in (lambda p: kiln.validate(p), lambda p: kiln.inspect(p),
                 lambda p: kiln.numpy.load_file(p), lambda p: kiln.safe_open(p)):
        with pytest.raises(ValueError, match="null byte"):
            call(str(good) + "\0y")
    with pytest.raises(ValueError, match="null byte"):
        kiln.numpy.save_file({"w": np.zeros(2, np.float32)}, str(tmp_path / "a") + "\0b")
    assert not (tmp_path / "a").exists()
