"""save/load round trips through NumPy: every dtype NumPy and Kiln share,
rank 0, zero dimensions, 8 dimensions, both byte orders, non-contiguous input."""

import numpy as np
import pytest

import kiln
import kiln.numpy as kn

DTYPES = ["<f2", "<f4", "<f8", "u1", "i1", "<u2", "<i2", "<u4", "<i4", "<u8", "<i8", "?",
          "<c8", "<c16"]
KILN_NAMES = ["f16", "f32", "f64", "u8", "i8", "u16", "i16", "u32", "i32", "u64", "i64", "bool",
              "c64", "c128"]
SHAPES = [(), (0,), (3, 0), (5,), (2, 3), (2, 1, 2, 1, 2, 1, 2, 3), (1,) * 8]


def sample(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape, dtype=np.int64))
    raw = rng.integers(0, 256, size=n * np.dtype(dtype).itemsize, dtype=np.uint8)
    a = raw.view(np.dtype(dtype).newbyteorder("=")).reshape(shape)
    if np.dtype(dtype).kind == "b":
        a = raw[:n].astype(bool).reshape(shape)
    return a


@pytest.mark.parametrize("dtype,kiln_name", zip(DTYPES, KILN_NAMES))
@pytest.mark.parametrize("order", ["<", ">"])
def test_every_dtype_shape_and_byte_order(dtype, kiln_name, order):
    tensors = {}
    for i, shape in enumerate(SHAPES):
        a = sample(dtype, shape, seed=i)
        if np.dtype(dtype).itemsize > 1:
            a = a.astype(np.dtype(dtype).newbyteorder(order))
        tensors[f"t{i}"] = a
    data = kn.save(tensors)
    infos = kiln.inspect(data)
    assert [i.dtype for i in infos] == [kiln_name] * len(SHAPES)
    back = kn.load(data)
    assert list(back) == list(tensors)
    for k, a in tensors.items():
        b = back[k]
        assert b.shape == a.shape
        assert b.dtype == np.dtype(dtype)  # little-endian on the way out
        assert b.tobytes() == a.astype(np.dtype(dtype)).tobytes()  # exact bits, NaNs too


def test_big_endian_is_swapped_to_little():
    a = np.array([1, 2, 3], dtype=">u4")
    info = kiln.inspect(kn.save({"a": a}))[0]
    assert kn.save({"a": a}) == kn.save({"a": a.astype("<u4")})
    assert info.dtype == "u32" and info.length == 12


def test_complex_big_endian_swaps_each_half():
    a = np.array([1.5 - 2.25j, 3 + 4j], dtype=">c16")
    assert kn.load(kn.save({"z": a}))["z"].tolist() == a.tolist()


@pytest.mark.parametrize("make", [
    lambda a: a[::2],
    lambda a: a.T,
    lambda a: np.asfortranarray(a),
    lambda a: a[:, ::-1],
    lambda a: np.broadcast_to(a[:1], a.shape),
])
def test_non_contiguous_inputs(make):
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    a = make(base)
    back = kn.load(kn.save({"a": a}))["a"]
    assert back.flags.c_contiguous
    np.testing.assert_array_equal(back, a)


def test_dict_order_is_descriptor_order_and_canonical():
    t = {"b": np.ones(3, np.int8), "a": np.zeros((2, 2)), "c": np.float32(7)}
    data = kn.save(t)
    assert [i.name for i in kiln.inspect(data)] == ["b", "a", "c"]
    offsets = [i.offset for i in kiln.inspect(data)]
    assert offsets == [0, 64, 128]  # canonical: each payload at the next multiple of 64
    assert kn.load(data)["c"].shape == ()


def test_unnamed_block_from_a_list_has_int_keys():
    data = kn.save([np.arange(3), np.ones((2, 2), np.float16)])
    back = kn.load(data)
    assert list(back) == [0, 1]
    np.testing.assert_array_equal(back[1], np.ones((2, 2), np.float16))
    assert all(i.name is None for i in kiln.inspect(data))


def test_empty_dict_is_the_empty_block():
    data = kn.save({})
    assert len(data) == 64
    assert kn.load(data) == {}


def test_save_file_round_trip_and_replace(tmp_path):
    path = tmp_path / "m.klnt"
    kn.save_file({"w": np.arange(5)}, path)
    kn.save_file({"w": np.arange(7)}, str(path))  # replaces
    assert kn.load_file(path)["w"].tolist() == list(range(7))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.klnt"]  # no temporary left
    with pytest.raises(OSError):
        kn.save_file({"w": np.arange(5)}, tmp_path / "missing" / "m.klnt")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.klnt"]


@pytest.mark.parametrize("value,exc,words", [
    (np.array(["a"]), TypeError, "has no Kiln dtype"),
    (np.array([b"a"]), TypeError, "has no Kiln dtype"),
    (np.array([object()]), TypeError, "has no Kiln dtype"),
    (np.zeros(2, dtype=[("x", "<f4")]), TypeError, "structured"),
    (np.array(["2020-01-01"], dtype="datetime64[D]"), TypeError, "has no Kiln dtype"),
    (np.zeros((1,) * 9), ValueError, "at most 8"),
    ([1, 2, 3], TypeError, "numpy.ndarray"),
])
def test_what_kiln_cannot_hold(value, exc, words):
    with pytest.raises(exc, match=words):
        kn.save({"x": value})


def test_float128_refused():
    if not hasattr(np, "longdouble") or np.dtype(np.longdouble).itemsize == 8:
        pytest.skip("no extended long double here")
    with pytest.raises(TypeError, match="has no Kiln dtype"):
        kn.save({"x": np.zeros(2, np.longdouble)})


def test_bad_names():
    with pytest.raises(TypeError, match="names must be str"):
        kn.save({1: np.zeros(1)})
    with pytest.raises(TypeError, match=r"^tensor 1: tensor names must be str, not bytes$"):
        kn.save({"a": np.zeros(1), b"b": np.zeros(1)})
    with pytest.raises(ValueError, match="must not be empty"):
        kn.save({"": np.zeros(1)})
    with pytest.raises(ValueError, match=r"^tensor 'a\\ud800': the name is not UTF-8 "
                                         r"\(surrogates not allowed at character 1\)$"):
        kn.save({"a\ud800": np.zeros(1)})
    with pytest.raises(kiln.LimitError) as e:  # name_len is a u16
        kn.save({"n" * 70000: np.zeros(1)})
    assert e.value.rule == "H7"


def test_metadata_and_bad_arguments():
    with pytest.raises(ValueError, match="metadata"):
        kn.save({"a": np.zeros(1)}, metadata={"k": "v"})
    with pytest.raises(TypeError):
        kn.save("not tensors")
    with pytest.raises(TypeError):
        kn.save_file({}, 3)
    with pytest.raises(TypeError):
        kn.load_file(b"/bytes/are/data/not/a/path")
    with pytest.raises(TypeError):
        kn.load("a str is a path, not data")


class _EncodeReturnsInt(str):
    def encode(self, *args, **kwargs):
        return 7


class _EncodeLies(str):
    def encode(self, *args, **kwargs):
        return b"other"


class _EveryMethodLies(str):
    def encode(self, *args, **kwargs):
        raise AssertionError("encode called")

    def __len__(self):
        return 0

    def __bool__(self):
        return False

    def __str__(self):
        return "other"

    def __repr__(self):
        raise AssertionError("__repr__ called")


@pytest.mark.parametrize("cls", [_EncodeReturnsInt, _EncodeLies, _EveryMethodLies])
def test_str_subclass_names_are_their_characters(cls, tmp_path):
    """A str subclass is the str it holds: none of its methods is called (a
    subclass whose encode returned an int made save raise pybind11's bare
    RuntimeError, one whose encode lied wrote another name)."""
    name = cls("w.\u00e9")
    out = tmp_path / "s.klnt"
    kn.save_file({name: np.arange(3, dtype=np.uint8)}, out)
    for blob in (kn.save({name: np.arange(3, dtype=np.uint8)}), out.read_bytes()):
        back = kn.load(blob)
        assert list(back) == ["w.\u00e9"]
        assert type(list(back)[0]) is str
        np.testing.assert_array_equal(back["w.\u00e9"], [0, 1, 2])
    # Errors about the tensor name it by its characters, not by its __repr__.
    with pytest.raises(TypeError, match=r"^tensor 'w\.\u00e9': expected a numpy.ndarray"):
        kn.save({name: [1, 2]})


def test_str_enum_names_are_their_values():
    import enum

    class Names(str, enum.Enum):
        W = "model.weight"

    assert list(kn.load(kn.save({Names.W: np.zeros(1)}))) == ["model.weight"]


def test_a_name_that_only_claims_to_be_a_str_is_refused():
    class Impostor:
        __class__ = property(lambda self: str)  # fools isinstance(), not type()

    assert isinstance(Impostor(), str)
    with pytest.raises(TypeError, match=r"^tensor 1: tensor names must be str, not Impostor$"):
        kn.save({"a": np.zeros(1), Impostor(): np.zeros(1)})


def test_write_module_refuses_a_name_that_is_not_bytes():
    """kiln._kiln.write (the package's C++ side) takes UTF-8 bytes: a str, a
    bytes subclass or anything else is a TypeError naming the entry, never
    pybind11's RuntimeError."""
    from kiln import _kiln

    class B(bytes):
        pass

    data = np.zeros(1, dtype=np.uint8)
    for bad in ("w", B(b"w"), 7, None):
        with pytest.raises(TypeError, match=r"^tensor 1: the name must be bytes, not "):
            _kiln.write([(b"a", "u8", [1], data), (bad, "u8", [1], data)])
    assert kn.load(_kiln.write([(b"w", "u8", [1], data)]))["w"].tolist() == [0]
