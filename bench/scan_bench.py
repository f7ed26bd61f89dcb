#!/usr/bin/python3
"""kiln.scan over HTTP against downloading the same files whole, on Dask.

    PYTHONPATH=build/default/python:python /usr/bin/python3 bench/scan_bench.py [N [MERGE_GAP]]

Writes N (default 10,000) generated files in a new directory under /tmp
(deleted afterwards): valid blocks of 4 to 19 float32 tensors of 1 to 16 KiB
each, about 90 KiB per file, one file in 10 with one byte of a tensor's
descriptor changed (invalid). Serves them with nginx on 127.0.0.1
(tests/http/servers.py), starts a LocalCluster of 2 worker processes (one
thread each, no dashboard), then times, after the cluster is up:

  scan      kiln.scan.scan(urls, client): HEAD, then the header and directory
            ranges of each file (kiln._http.HTTPRangeFile)
  download  the same files whole, one GET each (http.client), same cluster,
            same batches of files per task

and prints files per second and the bytes nginx sent per file (its access
log) for each. Figures: docs/performance.md.
"""

import http.client
import os
import shutil
import sys
import tempfile
import time
import urllib.parse

import numpy as np

import kiln.numpy
import kiln.scan

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "http"))
import servers  # noqa: E402


def download_batch(urls):
    """Each URL's whole body, read and dropped; returns the bytes read."""
    total = 0
    conn = None
    for url in urls:
        u = urllib.parse.urlsplit(url)
        if conn is None:
            conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
        conn.request("GET", u.path)
        r = conn.getresponse()
        while True:
            chunk = r.read(1 << 16)
            if not chunk:
                break
            total += len(chunk)
    if conn is not None:
        conn.close()
    return total


def make_corpus(root, n):
    rng = np.random.default_rng(23)
    templates = []
    for t in range(50):
        count = int(rng.integers(4, 20))
        tensors = {f"layer{t}.{j}.weight": np.full(int(rng.integers(256, 4097)), j, np.float32)
                   for j in range(count)}
        templates.append(kiln.numpy.save(tensors))
    for i in range(n):
        data = templates[i % len(templates)]
        if i % 10 == 9:
            data = bytearray(data)
            data[64 + 2] ^= 0x40  # a descriptor byte
            data = bytes(data)
        with open(os.path.join(root, f"f{i:05d}.klnt"), "wb") as f:
            f.write(data)


def main():
    import distributed

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    options = {"merge_gap": int(sys.argv[2])} if len(sys.argv) > 2 else {}
    root = tempfile.mkdtemp(prefix="kiln-scan-bench-")
    try:
        make_corpus(root, n)
        names = sorted(os.listdir(root))
        size = sum(os.path.getsize(os.path.join(root, f)) for f in names)
        print(f"{n} files, {size / n / 1024:.1f} KiB per file, {size / 2**20:.0f} MiB in all")
        with servers.Nginx(root) as web:
            urls = [web.url_for(f) for f in names]
            cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1,
                                               processes=True, dashboard_address=None,
                                               silence_logs=40)
            client = distributed.Client(cluster)
            try:
                client.submit(sum, [1]).result()  # the workers are up
                print(f"load before: {os.getloadavg()[0]:.1f}")
                mark = web.mark()
                t0, c0 = time.monotonic(), os.times()
                rows = kiln.scan.scan(urls, client, options=options)
                t1 = time.monotonic()
                sent = web.bytes_sent(mark)
                counts = {v: sum(r["verdict"] == v for r in rows)
                          for v in ("valid", "invalid", "error")}
                print(f"scan {options}:     {t1 - t0:.2f} s, {n / (t1 - t0):.0f} files/s, "
                      f"{sent / n:.0f} bytes/file sent by nginx "
                      f"({sum(r['bytes_read'] for r in rows) / n:.0f} counted by the rows), "
                      f"{counts}, load {os.getloadavg()[0]:.1f}")
                batch = max(1, min(32, n // 16))
                mark = web.mark()
                t0 = time.monotonic()
                futs = client.map(download_batch, [urls[i:i + batch]
                                                   for i in range(0, n, batch)], pure=False)
                got = sum(client.gather(futs))
                t1 = time.monotonic()
                sent = web.bytes_sent(mark)
                assert got == size, (got, size)
                print(f"download: {t1 - t0:.2f} s, {n / (t1 - t0):.0f} files/s, "
                      f"{sent / n:.0f} bytes/file sent by nginx, "
                      f"load {os.getloadavg()[0]:.1f}")
            finally:
                client.close()
                cluster.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
