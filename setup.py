"""Builds the kiln Python package with its C++ sources, offline, from
Debian's packages (python3-setuptools, python3-dev, pybind11-dev, libabsl-dev):

    python3 -m pip install --no-build-isolation .       # from the repository root
    python3 -m pip wheel --no-build-isolation --no-deps -w dist .

The extension kiln._kiln compiles the parser (and writer) sources itself, so
nothing needs to be built with CMake first. See docs/python.md.
"""

import glob
import os
import shlex
import subprocess
import sys

from setuptools import Extension, setup

ROOT = os.path.dirname(os.path.abspath(__file__))


def rel(*parts):
    return os.path.join(*parts)


def pybind11_include():
    """pybind11's headers: Debian's pybind11-dev puts them in /usr/include."""
    try:
        import pybind11  # python3-pybind11 or a pip install

        return [pybind11.get_include()]
    except ImportError:
        if os.path.exists("/usr/include/pybind11/pybind11.h"):
            return []  # already on the default include path
        sys.exit("kiln: pybind11's headers are missing (Debian: apt-get install pybind11-dev)")


def absl_libs():
    """Abseil's link flags, as pkg-config (libabsl-dev) gives them."""
    try:
        out = subprocess.run(["pkg-config", "--libs", "absl_str_format", "absl_strings"],
                             check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit(f"kiln: pkg-config cannot find Abseil ({e}); Debian: apt-get install libabsl-dev")
    return shlex.split(out)


def sources():
    """The module's sources, the library sources (parser/src, and base/src and
    writer/src once BlockWriter has its own library), and the stream binding
    when the library has kiln/stream.h."""
    files = sorted(glob.glob(rel("python", "src", "*.cc")))
    files = [f for f in files if not f.endswith("stream_binding.cc")]
    for lib in ("base", "parser", "writer"):
        files += sorted(glob.glob(rel(lib, "src", "*.cc")))
    macros = []
    if os.path.exists(rel(ROOT, "parser", "include", "kiln", "stream.h")):
        files.append(rel("python", "src", "stream_binding.cc"))
        macros.append(("KILN_PYTHON_HAVE_STREAM", "1"))
    return files, macros


os.chdir(ROOT)  # setuptools wants source paths relative to setup.py
files, macros = sources()
include_dirs = pybind11_include() + [
    d for lib in ("base", "parser", "writer") for d in (f"{lib}/include", f"{lib}/src")
    if os.path.isdir(d)
]

setup(
    name="kiln",
    version="0.1.0",
    description="Read, check and write Kiln v2 tensor directories (NumPy)",
    packages=["kiln"],
    package_dir={"": "python"},
    python_requires=">=3.9",
    install_requires=["numpy"],
    ext_modules=[
        Extension(
            "kiln._kiln",
            sources=files,
            include_dirs=include_dirs,
            define_macros=macros,
            language="c++",
            extra_compile_args=["-std=c++20", "-fvisibility=hidden", "-O2", "-Wall",
                                "-Wextra"],
            extra_link_args=absl_libs(),
        )
    ],
    zip_safe=False,
)
