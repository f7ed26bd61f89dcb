"""The Python examples of docs/python.md and README.md run unchanged."""

import re

import pytest

from conftest import REPO

DOCS = ["docs/python.md", "README.md"]


def python_blocks(path):
    text = (REPO / path).read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


@pytest.mark.parametrize("path", DOCS)
def test_examples_run(path, tmp_path, monkeypatch, capsys):
    blocks = python_blocks(path)
    assert blocks, f"{path} has no Python example"
    monkeypatch.chdir(tmp_path)
    scope = {}
    for code in blocks:  # in order, in one namespace, like a reader in one session
        exec(compile(code, path, "exec"), scope)  # noqa: S102 (our own docs)
    if path == "docs/python.md":
        out = capsys.readouterr().out
        assert "FRAME H2 at byte 4: version is 3, expected 2" in out
        assert "[2, 3] f32" in out
