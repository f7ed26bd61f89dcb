"""Builds the kiln Python package offline, from Debian's packages
(python3-setuptools, python3-dev, pybind11-dev, libabsl-dev, cmake):

    python3 -m pip install --no-build-isolation .       # from the repository root
    python3 -m pip wheel --no-build-isolation --no-deps -w dist .

The extension kiln._kiln is built by the project's own CMake build (the
target kiln_python, python/CMakeLists.txt), with the same compiler flags,
warnings and hardening as the library and the command; nothing is compiled
twice or with other flags. See docs/python.md.
"""

import glob
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class CMakeExtension(Extension):
    """An extension that a CMake target builds."""

    def __init__(self, name: str, target: str) -> None:
        super().__init__(name, sources=[])
        self.target = target


class CMakeBuild(build_ext):
    """Configures the project with CMake (library and module only), builds
    the module's target and copies it where setuptools packs it."""

    def build_extension(self, ext: CMakeExtension) -> None:
        build_dir = os.path.abspath(os.path.join(self.build_temp, "cmake"))
        configure = [
            "cmake", "-S", ROOT, "-B", build_dir,
            "-DCMAKE_BUILD_TYPE=Release",
            f"-DPython3_EXECUTABLE={sys.executable}",
            "-DKILN_BUILD_PYTHON=ON",
            "-DKILN_BUILD_CLI=OFF", "-DKILN_BUILD_TESTS=OFF",
            "-DKILN_BUILD_BENCH=OFF", "-DKILN_BUILD_FUZZERS=OFF",
        ]
        if shutil.which("ninja"):
            configure += ["-G", "Ninja"]
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
        try:
            subprocess.run(configure, check=True)
            subprocess.run(["cmake", "--build", build_dir, "--target", ext.target, "-j", jobs],
                           check=True)
        except FileNotFoundError:
            sys.exit("kiln: cmake is missing (Debian: apt-get install cmake)")
        except subprocess.CalledProcessError as e:
            sys.exit(f"kiln: the CMake build failed ({e})")
        built = glob.glob(os.path.join(build_dir, "python", "kiln", "_kiln*.so"))
        if len(built) != 1:
            sys.exit(f"kiln: expected one _kiln module in {build_dir}/python/kiln, found {built}")
        destination = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(destination), exist_ok=True)
        shutil.copyfile(built[0], destination)


os.chdir(ROOT)  # setuptools wants paths relative to setup.py

setup(
    name="kiln",
    version="0.1.0",
    description="Read, check and write Kiln v2 tensor directories (NumPy)",
    packages=["kiln"],
    package_dir={"": "python"},
    python_requires=">=3.9",
    install_requires=["numpy"],
    ext_modules=[CMakeExtension("kiln._kiln", target="kiln_python")],
    cmdclass={"build_ext": CMakeBuild},
    zip_safe=False,
)
