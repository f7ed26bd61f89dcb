"""kiln.validate / inspect / safe_open on seekable binary file objects: the
verdict of `kiln validate FILE` on every golden case, only the ranges the
rules read (never a covered byte with merge_gap=0), and read failures as
OSError, never as a verdict."""

import errno
import io
import os
import subprocess

import numpy as np
import pytest

import kiln
import kiln.numpy
from conftest import golden_cases, golden_path

CASES = golden_cases()


class RecordingFile(io.RawIOBase):
    """A seekable in-memory file that records every read as (offset, length)."""

    def __init__(self, data, chunk=None):
        self.data = bytes(data)
        self.pos = 0
        self.reads = []
        self.chunk = chunk  # return at most this many bytes per call

    def seekable(self):
        return True

    def readable(self):
        return True

    def seek(self, offset, whence=io.SEEK_SET):
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.pos, io.SEEK_END: len(self.data)}[whence]
        self.pos = base + offset
        return self.pos

    def tell(self):
        return self.pos

    def readinto(self, b):
        n = min(len(b), max(0, len(self.data) - self.pos))
        if self.chunk is not None:
            n = min(n, self.chunk)
        b[:n] = self.data[self.pos:self.pos + n]
        self.reads.append((self.pos, n))
        self.pos += n
        return n


@pytest.fixture(scope="module")
def cli_verdicts(kiln_binary):
    paths = [str(golden_path(name)) for name, _, _ in CASES]
    out = subprocess.run([kiln_binary, "validate", *paths], capture_output=True, text=True,
                         check=False)
    assert out.returncode in (0, 1), out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == len(CASES)
    return {name: line[len(path) + 2:] for (name, _, _), path, line in zip(CASES, paths, lines)}


def verdict_of(call):
    try:
        call()
    except kiln.KilnError as e:
        return str(e)
    return "ok"


@pytest.mark.parametrize("name", [c[0] for c in CASES])
def test_golden_file_objects(name, cli_verdicts):
    path = golden_path(name)
    data = path.read_bytes()
    want = cli_verdicts[name]
    with open(path, "rb") as f:
        assert verdict_of(lambda: kiln.validate(f)) == want
        assert f.tell() == 0  # the position is restored
    assert verdict_of(lambda: kiln.validate(io.BytesIO(data))) == want
    assert verdict_of(lambda: kiln.inspect(RecordingFile(data, chunk=7))) == want
    if want == "ok":
        assert kiln.validate(io.BytesIO(data)) == len(data)
        from_path = kiln.inspect(str(path))
        from_file = kiln.inspect(io.BytesIO(data))
        assert from_file == from_path  # start is the payload's offset in the file


def tensor_ranges(infos):
    return [(i.start, i.start + i.length) for i in infos if i.length]


@pytest.mark.parametrize("name", [c[0] for c in CASES if c[1] == "ok"])
def test_no_covered_byte_is_read(name):
    data = golden_path(name).read_bytes()
    infos = kiln.inspect(data)
    f = RecordingFile(data)
    assert kiln.inspect(f, merge_gap=0) == infos
    covered = tensor_ranges(infos)
    for offset, length in f.reads:
        assert offset + length <= len(data)
        for start, end in covered:
            assert offset + length <= start or offset >= end, (offset, length, start, end)


def test_large_block_reads_little(tmp_path):
    # 200 tensors of 64 KiB: the payload is 12.5 MiB, none of it read.
    tensors = {f"t{i}": np.full(16384, i + 1, dtype=np.float32) for i in range(200)}
    path = tmp_path / "big.klnt"
    kiln.numpy.save_file(tensors, path)
    size = path.stat().st_size
    f = RecordingFile(path.read_bytes())
    block = kiln._core.Block(f)
    assert block.header["block_length"] == size
    read = sum(n for _, n in f.reads)
    assert read == block.bytes_read
    assert read < 64 + 200 * 128 + 2000  # header, directory; the gaps are empty
    covered = tensor_ranges(block.infos)
    for offset, length in f.reads:
        for start, end in covered:
            assert offset + length <= start or offset >= end
    # safe_open on the file object reads a tensor only when asked for it.
    with kiln.safe_open(f) as g:
        before = len(f.reads)
        assert g.keys()[:2] == ["t0", "t1"]
        assert len(f.reads) == before
        t = g.get_tensor("t7")
        assert t.shape == (16384,) and float(t[0]) == 8.0 and not t.flags.writeable
        assert np.array_equal(g.get_slice("t3")[:4], np.full(4, 4, dtype=np.float32))


def test_gap_byte_is_found_without_reading_tensors():
    # Two f32[2] tensors: the gap between them holds a nonzero byte (P2).
    data = bytearray(kiln.numpy.save([np.ones(2, np.float32), np.ones(2, np.float32)]))
    base = kiln.inspect(bytes(data))[0].start
    data[base + 20] = 7
    want = verdict_of(lambda: kiln.validate(bytes(data)))
    assert want.startswith("TYPE P2 at byte")
    f = RecordingFile(data)
    assert verdict_of(lambda: kiln.validate(f, merge_gap=0)) == want


class ShortFile(RecordingFile):
    """Claims a size (seek to the end) larger than the bytes it has."""

    def __init__(self, data, claimed):
        super().__init__(data)
        self.claimed = claimed

    def seek(self, offset, whence=io.SEEK_SET):
        if whence == io.SEEK_END:
            self.pos = self.claimed + offset
            return self.pos
        return super().seek(offset, whence)


def test_short_read_is_oserror():
    data = golden_path("kiln-v2-f32").read_bytes()
    # The file says 200 bytes but delivers 100: an I/O error, not FRAME H8.
    with pytest.raises(OSError) as info:
        kiln.validate(ShortFile(data[:100], 200))
    assert info.value.errno == errno.EIO
    assert not isinstance(info.value, kiln.KilnError)
    assert "file ended at byte 100" in str(info.value)


def test_read_returning_fewer_bytes_each_call_is_fine():
    data = golden_path("kiln-v2-f32").read_bytes()
    assert kiln.validate(RecordingFile(data, chunk=1)) == len(data)


class RaisingFile(RecordingFile):
    def __init__(self, data, fail_at):
        super().__init__(data)
        self.fail_at = fail_at

    def readinto(self, b):
        if len(self.reads) == self.fail_at:
            raise OSError(errno.ECONNRESET, "connection reset")
        return super().readinto(b)


@pytest.mark.parametrize("fail_at", [0, 1, 2])
def test_raising_read_propagates(fail_at):
    data = kiln.numpy.save({"a": np.ones(3, np.float32), "b": np.ones(5, np.float32)})
    with pytest.raises(ConnectionResetError):
        kiln.validate(RaisingFile(data, fail_at), merge_gap=0)


class ReadOnlyFile:
    """Only seek, tell and read (no readinto), read returning bytes."""

    def __init__(self, data):
        self._f = io.BytesIO(data)

    def seek(self, *a):
        return self._f.seek(*a)

    def tell(self):
        return self._f.tell()

    def read(self, n=-1):
        return self._f.read(n)


def test_read_only_file_object():
    data = golden_path("kiln-v2-f32").read_bytes()
    assert kiln.validate(ReadOnlyFile(data)) == len(data)
    bad = bytearray(data)
    bad[64] = 8
    with pytest.raises(kiln.KilnTypeError):
        kiln.validate(ReadOnlyFile(bytes(bad)))


def test_not_seekable():
    class Pipe(io.RawIOBase):
        def readable(self):
            return True

        def seekable(self):
            return False

    with pytest.raises(io.UnsupportedOperation):
        kiln.validate(Pipe())
    with pytest.raises(OSError):
        kiln.validate(Pipe())


def test_non_blocking_none_is_oserror():
    class Nothing(RecordingFile):
        def readinto(self, b):
            return None

    with pytest.raises(OSError) as info:
        kiln.validate(Nothing(b"KLNT" + bytes(60)))
    assert info.value.errno == errno.EIO


def test_fsspec_memory_and_local(tmp_path):
    fsspec = pytest.importorskip("fsspec")
    data = kiln.numpy.save({"w": np.arange(6, dtype=np.float32)})
    mem = fsspec.filesystem("memory")
    mem.pipe("/kiln-test/w.klnt", data)
    with mem.open("/kiln-test/w.klnt", "rb") as f:
        assert kiln.validate(f) == len(data)
    path = tmp_path / "w.klnt"
    path.write_bytes(data + b"\0")
    with fsspec.open(str(path), "rb") as f:
        with pytest.raises(kiln.FrameError) as info:
            kiln.validate(f)
    assert str(info.value) == f"FRAME H8 at byte {len(data)}: 1 trailing bytes after the " \
                              f"{len(data)}-byte block"
    with fsspec.open(str(path), "rb") as f:
        assert kiln.validate(f, prefix=True) == len(data)


def test_mutants_match_the_buffer_verdict():
    # 10,000+ mutants of the golden cases (truncations, appended bytes,
    # random overwrites): a file object gives the verdict of the same bytes
    # parsed whole (Parse, which `kiln validate FILE` runs).
    import random

    rng = random.Random(23)
    count = 0
    for name, _, _ in CASES:
        data = golden_path(name).read_bytes()
        mutants = [data[:n] for n in range(0, len(data), max(1, len(data) // 24))]
        mutants += [data + b"\0", data + b"\xff" * 3]
        for _ in range(50):
            b = bytearray(data)
            for _ in range(rng.randint(1, 4)):
                if b:
                    b[rng.randrange(len(b))] = rng.randrange(256)
            mutants.append(bytes(b))
        for m in mutants:
            count += 1
            assert verdict_of(lambda: kiln.validate(io.BytesIO(m))) == \
                verdict_of(lambda: kiln.validate(m)), (name, len(m))
    assert count >= 10_000


# A file whose size changes between the size query and the reads: an I/O
# error (OSError EIO), never a verdict on bytes of two different lengths.

class LongerThanItSays(RecordingFile):
    """seek(0, SEEK_END) reports `claimed` bytes; reads serve all of data."""

    def __init__(self, data, claimed):
        super().__init__(data)
        self.claimed = claimed

    def seek(self, offset, whence=io.SEEK_SET):
        if whence == io.SEEK_END:
            self.pos = self.claimed + offset
            return self.pos
        return super().seek(offset, whence)


def valid_block():
    return kiln.numpy.save({"a": np.ones(3, np.float32), "b": np.arange(5, dtype=np.int16)})


def test_file_longer_than_its_reported_size_is_oserror():
    # The first len(data) bytes are a valid block, but the object serves
    # more: its size is not what it said.
    data = valid_block()
    with pytest.raises(OSError) as info:
        kiln.validate(LongerThanItSays(data + b"\0" * 10, len(data)))
    assert info.value.errno == errno.EIO and not isinstance(info.value, kiln.KilnError)
    assert "bytes past its size" in str(info.value)
    # Also when the bytes it reports make a verdict (FRAME H8 on a cut block).
    with pytest.raises(OSError):
        kiln.validate(LongerThanItSays(data, len(data) - 2))


class ChangesAfterFirstRead(RecordingFile):
    """After the first read, the data becomes `after` (grown or truncated)."""

    def __init__(self, data, after):
        super().__init__(data)
        self.after = after

    def readinto(self, b):
        n = super().readinto(b)
        if len(self.reads) == 1:
            self.data = self.after
        return n


@pytest.mark.parametrize("change", ["grow", "grow-valid", "truncate", "truncate-header"])
def test_size_changing_while_read_is_oserror(change):
    data = valid_block()
    after = {"grow": data + b"\0" * 100, "grow-valid": data + data,
             "truncate": data[:-1], "truncate-header": data[:70]}[change]
    f = ChangesAfterFirstRead(data, after)
    with pytest.raises(OSError) as info:
        kiln.validate(f)
    assert info.value.errno == errno.EIO and not isinstance(info.value, kiln.KilnError)
    # An invalid block too: the verdict (a bad dtype) is not given.
    bad = bytearray(data)
    bad[64] = 0xEE
    f = ChangesAfterFirstRead(bytes(bad), bytes(bad) + b"\0" if change.startswith("grow")
                              else bytes(bad)[:-1])
    with pytest.raises(OSError):
        kiln.validate(f)


@pytest.mark.parametrize("change", ["grow", "truncate"])
def test_real_file_changing_while_read_is_oserror(tmp_path, change):
    data = valid_block()
    path = tmp_path / "f.klnt"
    path.write_bytes(data)

    class Hook(io.FileIO):
        """A real file that another writer changes after kiln's first read."""

        reads = 0

        def readinto(self, b):
            n = super().readinto(b)
            Hook.reads += 1
            if Hook.reads == 1:
                if change == "grow":
                    with open(path, "ab") as w:
                        w.write(b"\0" * 4096)
                else:
                    os.truncate(path, len(data) - 8)
            return n

    with Hook(path, "rb") as f:
        with pytest.raises(OSError) as info:
            kiln.validate(f)
    assert info.value.errno == errno.EIO and not isinstance(info.value, kiln.KilnError)
    with open(path, "rb") as f:  # the file as it is now has a verdict of its own
        if change == "grow":
            with pytest.raises(kiln.FrameError):
                kiln.validate(f)


def drive(v, data):
    """Answers every range the validator wants from data; returns how many."""
    n = 0
    while (want := v.next_range()) is not None:
        offset, length = want
        v.provide(data[offset:offset + length])
        n += 1
    return n


@pytest.mark.parametrize("valid", [True, False])
def test_a_range_nobody_asked_for_is_refused(valid):
    # The validator under kiln.validate: once it has its verdict it wants no
    # range, and bytes offered then are refused without touching the verdict
    # (never written into a buffer that is not there).
    from kiln import _kiln
    data = valid_block()
    if not valid:
        data = b"X" + data[1:]  # not the magic: FRAME H1
    v = _kiln.RangeValidator(len(data), None, None, None, False,
                             _kiln.DEFAULT_MERGE_GAP, _kiln.DEFAULT_MAX_RANGE)
    assert drive(v, data) >= 1
    reads, bytes_read = v.reads, v.bytes_read

    def verdict():
        try:
            header, records = v.result()
            return ("ok", header["tensor_count"], [r.name for r in records])
        except kiln.KilnError as e:
            return ("error", e.rule, str(e))

    before = verdict()
    assert before[0] == ("ok" if valid else "error")
    for chunk in (b"x", b"", data):
        with pytest.raises(ValueError, match="no range is wanted"):
            v.provide(chunk)
    assert v.next_range() is None
    assert (v.reads, v.bytes_read) == (reads, bytes_read)
    assert verdict() == before


def test_a_range_of_the_wrong_length_is_oserror():
    from kiln import _kiln
    data = valid_block()
    v = _kiln.RangeValidator(len(data), None, None, None, False,
                             _kiln.DEFAULT_MERGE_GAP, _kiln.DEFAULT_MAX_RANGE)
    offset, length = v.next_range()
    with pytest.raises(OSError) as info:
        v.provide(data[offset:offset + length - 1])
    assert info.value.errno == errno.EIO
    assert v.next_range() is None
    with pytest.raises(OSError):
        v.result()
