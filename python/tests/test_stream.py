"""kiln.StreamValidator agrees with kiln.validate on every golden case, for
random chunkings."""

import random
import threading

import pytest

import kiln
from conftest import golden_cases, golden_path, run_in_threads

CASES = golden_cases()


def chunks(data, rng):
    i = 0
    while i < len(data):
        n = rng.choice([1, 2, 7, 63, 64, 65, 128, 1000, len(data)])
        yield data[i:i + n]
        i += n


def stream_verdict(data, rng, **kwargs):
    """None when the stream is accepted, else the KilnError."""
    v = kiln.StreamValidator(**kwargs)
    try:
        for c in chunks(data, rng):
            v.feed(c)
        assert v.finish() is True
        return None
    except kiln.KilnError as e:
        return e


def validate_verdict(data, **kwargs):
    try:
        kiln.validate(data, **kwargs)
        return None
    except kiln.KilnError as e:
        return e


def expected_verdict(data):
    """What the stream must say (kiln/stream.h): the verdict of validate on
    the block the header declares. Bytes past it are FRAME H8 only when that
    block is valid: a stream rejects a bad directory before it sees them
    (golden case order-h8-before-h9), so prefix mode gives the verdict."""
    return validate_verdict(data, prefix=True) or validate_verdict(data)


@pytest.mark.parametrize("name", [c[0] for c in CASES])
def test_agrees_with_validate_for_random_chunkings(name):
    data = golden_path(name).read_bytes()
    want = expected_verdict(data)
    rng = random.Random(name)
    for _ in range(5):
        got = stream_verdict(data, rng)
        if want is None:
            assert got is None, str(got)
        else:
            assert got is not None, str(want)
            assert (type(got), got.error_class, got.rule, got.offset, got.tensor) == \
                (type(want), want.error_class, want.rule, want.offset, want.tensor), \
                f"stream: {got}; validate: {want}"


def test_stops_at_the_first_rejection_and_counts_bytes():
    data = golden_path("kiln-pod-list-f32").read_bytes()
    v = kiln.StreamValidator()
    with pytest.raises(kiln.FrameError) as e:
        v.feed(data)
    assert e.value.rule == "H1"
    ok = golden_path("kiln-v2-f32").read_bytes()
    v = kiln.StreamValidator()
    assert v.feed(ok[:100]) is False
    assert v.feed(ok[100:]) is True
    assert v.consumed == len(ok)


def test_limits_and_bad_arguments():
    data = golden_path("ok-named-llama-layer").read_bytes()
    with pytest.raises(kiln.LimitError):
        v = kiln.StreamValidator(max_tensors=1)
        v.feed(data)
        v.finish()
    with pytest.raises(ValueError):
        kiln.StreamValidator(max_block_bytes=-1)
    with pytest.raises(TypeError):
        kiln.StreamValidator().feed("text")


def test_one_validator_fed_from_threads_does_not_crash():
    data = golden_path("ok-named-llama-layer").read_bytes()
    v = kiln.StreamValidator()
    lock = threading.Lock()
    pieces = iter(chunks(data, random.Random(3)))

    def work():
        while True:
            with lock:  # order matters to the stream; the validator itself is thread-safe
                c = next(pieces, None)
                if c is None:
                    return
                v.feed(c)

    run_in_threads(work, 4)
    assert v.finish() is True
