#!/usr/bin/python3
"""kiln.numpy.load_file against NumPy's own formats, on the same arrays.

    PYTHONPATH=build/default/python:python /usr/bin/python3 bench/python_load_bench.py [DIR]

Writes, in DIR (default: a new directory under /tmp, deleted afterwards),
1,500 float32 tensors of about 1 GiB in all as one .klnt file, one
uncompressed .npz (numpy.savez) and one .npy per tensor, then times, best of
REPEATS runs, with the page cache warm (every file was just written):

  kiln      kiln.numpy.load_file(path): every array a view into the mapping
  npz       numpy.load(path.npz) and every member read: {k: f[k] for k in f}
  npy-mmap  numpy.load(p, mmap_mode="r") for each of the 1,500 .npy files

and kiln again on 1,500 tensors of 4,097 elements (24 MiB in all; like the
big ones, each payload leaves a gap before the next 64-byte boundary, whose
zero bytes rule P2 reads), to show that the load time depends on the tensor
count, not on the payload size. kiln.validate alone is timed too.
Figures: docs/performance.md.
"""

import os
import shutil
import sys
import tempfile
import time

import numpy as np

import kiln
import kiln.numpy as kn

TENSORS = 1500
TOTAL_BYTES = 1 << 30
REPEATS = 5


def best(fn, repeats=REPEATS):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
        del out
    return min(times)


def make_arrays(per_tensor_elems):
    rng = np.random.default_rng(0)
    return {f"model.layers.{i // 9}.w{i % 9}": rng.standard_normal(per_tensor_elems,
                                                                  dtype=np.float32)
            for i in range(TENSORS)}


def write_all(arrays, d):
    kiln_path = os.path.join(d, "model.klnt")
    kn.save_file(arrays, kiln_path)
    npz_path = os.path.join(d, "model.npz")
    np.savez(npz_path, **arrays)
    npy_dir = os.path.join(d, "npy")
    os.mkdir(npy_dir)
    npy_paths = {}
    for i, (k, a) in enumerate(arrays.items()):
        npy_paths[k] = os.path.join(npy_dir, f"{i}.npy")
        np.save(npy_paths[k], a)
    return kiln_path, npz_path, npy_paths


def load_npz(path):
    with np.load(path) as f:
        return {k: f[k] for k in f.files}


def main():
    base = sys.argv[1] if len(sys.argv) > 1 else None
    d = tempfile.mkdtemp(prefix="kiln-bench-", dir=base)
    try:
        arrays = make_arrays(TOTAL_BYTES // 4 // TENSORS)
        payload = sum(a.nbytes for a in arrays.values())
        kiln_path, npz_path, npy_paths = write_all(arrays, d)
        del arrays
        loaded = kn.load_file(kiln_path)
        assert len(loaded) == TENSORS
        np.testing.assert_array_equal(loaded["model.layers.3.w4"],
                                      np.load(npy_paths["model.layers.3.w4"]))
        del loaded
        t_kiln = best(lambda: kn.load_file(kiln_path))
        t_validate = best(lambda: kiln.validate(kiln_path))
        t_npz = best(lambda: load_npz(npz_path), repeats=3)
        t_npy = best(lambda: {k: np.load(p, mmap_mode="r") for k, p in npy_paths.items()})
        os.unlink(kiln_path)
        small_path = os.path.join(d, "small.klnt")
        kn.save_file(make_arrays(4097), small_path)
        t_small = best(lambda: kn.load_file(small_path))
    finally:
        shutil.rmtree(d)
    print(f"{TENSORS} float32 tensors, {payload / 2**30:.3f} GiB of payload, best of "
          f"{REPEATS} (npz: 3), page cache warm")
    print(f"{'method':<36}{'time (ms)':>12}{'/ kiln load':>18}")
    for name, t in (("kiln.numpy.load_file", t_kiln), ("kiln.validate (no arrays)", t_validate),
                    ("numpy.load .npz (all members)", t_npz),
                    ("numpy.load mmap_mode=r, 1,500 .npy", t_npy),
                    ("kiln.numpy.load_file, 24 MiB file", t_small)):
        print(f"{name:<36}{t * 1e3:>12.2f}{t / t_kiln:>18.2f}")


if __name__ == "__main__":
    main()
