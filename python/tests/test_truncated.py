"""A mapped file truncated by another process while kiln reads it (finding:
SIGBUS). The calls kiln itself runs on a mapping raise OSError instead of
killing the interpreter. Each case runs in a child interpreter, so that the
death by SIGBUS it guards against fails the test instead of ending pytest."""

import os
import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent(
    """
    import os, sys
    import numpy as np
    import kiln, kiln.numpy
    from kiln import _kiln

    path, how = sys.argv[1], sys.argv[2]
    # Two tensors of 8 MiB + 1 bytes: the padding after each is a gap that
    # validation reads (rule P2), far past the header.
    big = np.ones(8 * 1024 * 1024 + 1, np.uint8)
    kiln.numpy.save_file({"a": big, "b": big}, path)
    mapping = _kiln.Mapping(os.fsencode(path))
    os.truncate(path, 1024 * 1024)  # another process cuts the file
    try:
        if how == "validate":
            kiln.validate(memoryview(mapping))
        elif how == "inspect":
            kiln.inspect(memoryview(mapping))
        elif how == "stream":
            v = kiln.StreamValidator()
            v.feed(memoryview(mapping))
            v.finish()
    except OSError as e:
        print("OSError", e.errno, e)
        sys.exit(0)
    print("no error")
    sys.exit(3)
    """
)


@pytest.mark.parametrize("how", ["validate", "inspect", "stream"])
def test_truncated_mapping_raises_oserror(tmp_path, how):
    if how == "stream":
        import kiln

        if not hasattr(kiln, "StreamValidator"):
            pytest.skip("this build has no StreamValidator")
    r = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path / "m.klnt"), how],
        capture_output=True,
        text=True,
        env=os.environ,
        timeout=120,
    )
    assert r.returncode == 0, f"status {r.returncode}: {r.stdout} {r.stderr}"
    assert "OSError 5" in r.stdout and "truncated while it was read" in r.stdout, r.stdout

