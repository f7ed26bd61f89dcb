"""Loaded arrays are read-only views into the mapping or the caller's buffer,
and keep it alive; dtypes NumPy lacks come back as raw unsigned views."""

import gc
import struct
import time

import numpy as np
import pytest

import kiln
import kiln.numpy as kn
from conftest import golden_path

GIB = 1 << 30


def test_arrays_from_a_file_are_read_only_views(tmp_path):
    path = tmp_path / "a.klnt"
    kn.save_file({"a": np.arange(10, dtype=np.int32)}, path)
    a = kn.load_file(path)["a"]
    assert not a.flags.writeable and not a.flags.owndata
    with pytest.raises(ValueError):
        a[0] = 1
    with pytest.raises(ValueError):
        a.flags.writeable = True  # the mapping itself is read-only


def test_mapping_outlives_the_file_and_the_context(tmp_path):
    path = tmp_path / "a.klnt"
    kn.save_file({"a": np.arange(1000, dtype=np.float64)}, path)
    with kiln.safe_open(path) as f:
        a = f.get_tensor("a")
        s = f.get_slice("a")[10:20]
    with pytest.raises(ValueError, match="closed"):
        f.get_tensor("a")
    path.unlink()
    del f
    gc.collect()
    assert a[999] == 999.0 and s.tolist() == list(range(10, 20))


def test_bytes_views_keep_the_bytes_alive():
    a = kn.load(bytes(kn.save({"a": np.arange(4, dtype=np.uint8)})))["a"]
    gc.collect()
    assert a.tolist() == [0, 1, 2, 3] and not a.flags.writeable


def test_bytearray_views_hold_an_export():
    buf = bytearray(kn.save({"a": np.arange(4, dtype=np.uint8)}))
    a = kn.load(buf)["a"]
    assert not a.flags.writeable
    with pytest.raises(ValueError):
        a.flags.writeable = True
    with pytest.raises(BufferError):
        buf.extend(b"x" * (1 << 20))  # cannot move while a view exists
    with pytest.raises(BufferError):
        del buf[:]
    buf[-1] = 9  # in place: the view sees it (it is a view, not a copy)
    assert a[-1] == 9
    del a
    gc.collect()
    buf.extend(b"x")  # the export is released with the last view


def test_memoryview_source_and_prefix_mode():
    block = kn.save({"a": np.arange(3, dtype=np.int16)})
    data = memoryview(block + b"trailing")
    with pytest.raises(kiln.FrameError) as e:
        kiln.validate(data)
    assert e.value.rule == "H8"
    assert kiln.validate(data, prefix=True) == len(block)


def test_dtypes_numpy_lacks_are_raw_unsigned_views():
    f = kiln.safe_open(golden_path("ok-all-dtypes"))
    by_dtype = {f.info(k).dtype: k for k in f.keys()}
    assert len(by_dtype) == 23
    expect = {"bf16": ("uint16", (3,)), "f8_e4m3fn": ("uint8", (3,)), "f8_e5m2": ("uint8", (3,)),
              "f8_e4m3fnuz": ("uint8", (3,)), "f8_e5m2fnuz": ("uint8", (3,)),
              "f8_e8m0": ("uint8", (3,)), "u4": ("uint8", (3,)), "i4": ("uint8", (3,)),
              "f4_e2m1": ("uint8", (3,)), "f32": ("float32", (3,)), "c128": ("complex128", (3,))}
    for dtype, (np_dtype, shape) in expect.items():
        info = f.info(by_dtype[dtype])
        a = f.get_tensor(by_dtype[dtype])
        assert (str(a.dtype), a.shape) == (np_dtype, shape), dtype
        assert a.nbytes == info.length
        raw = golden_path("ok-all-dtypes").read_bytes()[info.start:info.start + info.length]
        assert a.tobytes() == raw


def test_opaque_is_its_bytes_with_the_layout_in_the_info():
    f = kiln.safe_open(golden_path("ok-opaque-q4k-unnamed"))
    assert f.keys() == [0]
    info = f.info(0)
    assert (info.dtype, info.layout, info.block_size, info.shape) == ("opaque", "ggml.q4_K", 256,
                                                                      (2, 512))
    a = f.get_tensor(0)
    assert a.dtype == np.uint8 and a.shape == (576,)


def test_dimensions_numpy_cannot_index_raise_value_error():
    path = golden_path("ok-zero-dim-among-huge")
    infos = kiln.inspect(path)
    assert [i.dtype for i in infos] == ["u8", "f64", "c128", "f32"]
    with pytest.raises(ValueError, match="more than NumPy can index"):
        kn.load_file(path)
    f = kiln.safe_open(path)
    for key in f.keys()[:3]:
        with pytest.raises(ValueError, match="more than NumPy can index"):
            f.get_tensor(key)
    assert f.get_tensor(f.keys()[3]).shape == (2,)


def test_quantisation_info_names_its_scales():
    info = kiln.inspect(golden_path("ok-quant-scheme1"))[0]
    assert info.quant.scheme == "per_axis" and info.quant.axis == 0
    assert info.quant.scale == "model.layers.0.mlp.down_proj.weight_scale"
    assert info.quant.outer == "model.layers.0.mlp.down_proj.input_scale"


def rss_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def sparse_gib_file(tmp_path):
    """A valid block with one u8 [2^30] tensor whose payload is a hole."""
    small = bytearray(kn.save({"w": np.zeros(64, np.uint8)}))
    base = kiln.inspect(bytes(small))[0].start
    struct.pack_into("<Q", small, 16, GIB)       # payload_bytes
    struct.pack_into("<Q", small, 64 + 40, GIB)  # byte_length
    struct.pack_into("<Q", small, 64 + 48, GIB)  # shape[0]
    path = tmp_path / "sparse.klnt"
    with open(path, "wb") as f:
        f.write(small[:base])
        f.truncate(base + GIB)
    return path


def test_a_sparse_gib_file_loads_without_reading_its_payload(tmp_path):
    path = sparse_gib_file(tmp_path)
    before = rss_bytes()
    t0 = time.perf_counter()
    w = kn.load_file(path)["w"]
    elapsed = time.perf_counter() - t0
    grown = rss_bytes() - before
    assert w.shape == (GIB,) and w.dtype == np.uint8
    assert grown < 16 << 20, f"RSS grew by {grown} bytes"
    assert elapsed < 1.0, f"{elapsed:.3f} s"  # milliseconds in practice; loose on purpose
    assert w[GIB - 1] == 0  # the hole reads as zeros, one page
