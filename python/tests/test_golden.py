"""Every golden case: kiln.validate agrees with `kiln validate` on the verdict,
class, rule, offset and tensor, for a path and for bytes."""

import re
import subprocess

import pytest

import kiln
from conftest import golden_cases, golden_path

CASES = golden_cases()
VERDICT = re.compile(r"^(FRAME|TYPE|LIMIT|UTF8) (\w+) at byte (\d+)(?: \(tensor (\d+)\))?: ")
CLASSES = {"FRAME": kiln.FrameError, "TYPE": kiln.KilnTypeError, "LIMIT": kiln.LimitError,
           "UTF8": kiln.Utf8Error}


def test_manifest_is_not_empty():
    assert len(CASES) > 100


@pytest.fixture(scope="module")
def cli_verdicts(kiln_binary):
    """The verdict `kiln validate` prints for each case, in one run."""
    paths = [str(golden_path(name)) for name, _, _ in CASES]
    out = subprocess.run([kiln_binary, "validate", *paths], capture_output=True, text=True,
                         check=False)
    assert out.returncode in (0, 1), out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == len(CASES)
    verdicts = {}
    for (name, _, _), path, line in zip(CASES, paths, lines):
        assert line.startswith(path + ": ")
        verdicts[name] = line[len(path) + 2:]
    return verdicts


@pytest.mark.parametrize("name,expect,rule", CASES, ids=[c[0] for c in CASES])
def test_golden_case(name, expect, rule, cli_verdicts):
    verdict = cli_verdicts[name]
    path = golden_path(name)
    for source in (str(path), path.read_bytes()):
        if verdict == "ok":
            assert expect == "ok"
            assert kiln.validate(source) == path.stat().st_size
            continue
        m = VERDICT.match(verdict)
        assert m, verdict
        with pytest.raises(kiln.KilnError) as info:
            kiln.validate(source)
        e = info.value
        assert type(e) is CLASSES[m.group(1)]
        assert str(e) == verdict
        assert (e.error_class, e.rule, e.offset) == (m.group(1), m.group(2), int(m.group(3)))
        assert e.tensor == (int(m.group(4)) if m.group(4) else None)
        assert (e.error_class, e.rule) == (expect, rule)
        assert verdict.endswith(": " + e.message)
