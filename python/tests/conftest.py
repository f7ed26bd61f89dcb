"""Shared fixtures: the golden cases and the kiln command they are compared with.

ctest sets KILN_GOLDEN_DIR and KILN_BINARY (python/CMakeLists.txt); run by
hand, the golden directory defaults to the repository's.
"""

import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
GOLDEN = pathlib.Path(os.environ.get("KILN_GOLDEN_DIR", REPO / "golden"))


def golden_cases():
    """(name, expect, rule) for every case of golden/manifest.tsv."""
    cases = []
    for line in (GOLDEN / "manifest.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        if not line or line.startswith("#"):
            continue
        name, expect, rule, _ = line.split("\t", 3)
        cases.append((name, expect, rule))
    return cases


def golden_path(name):
    return GOLDEN / "cases" / f"{name}.klnt"


@pytest.fixture(scope="session")
def kiln_binary():
    path = os.environ.get("KILN_BINARY")
    if not path:
        pytest.skip("KILN_BINARY is not set (ctest sets it to the built kiln command)")
    return path


def run_in_threads(work, count):
    """Runs work() in `count` threads at once; re-raises the first failure."""
    import threading

    errors = []

    def guarded():
        try:
            work()
        except BaseException as e:  # noqa: BLE001 (re-raised in the caller's thread)
            errors.append(e)

    threads = [threading.Thread(target=guarded) for _ in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
