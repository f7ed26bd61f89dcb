"""Validating a corpus as Dask tasks: one row per file, reading only the structure.

    python -m kiln.scan URL-OR-DIR ... [--scheduler ADDR] [--json] [--workers N]

    import kiln.scan
    rows = kiln.scan.scan(["/data/models", "http://host/a.klnt"])   # LocalCluster
    rows = kiln.scan.scan(urls, client=distributed.Client("tcp://sched:8786"))
    print(kiln.scan.format_table(rows))

Each file is opened and validated by random access (kiln/_ranges.py: the
header, the directory region and the payload bytes no tensor covers), on a
dask.distributed worker: local paths and file:// URLs as regular files
(refusing FIFOs and devices, as the command does), http:// and https:// URLs
through kiln._http.HTTPRangeFile (strict range requests), and any other URL
fsspec opens (s3://, memory://, zip://..., chained URLs) through fsspec with
cache_type="none", so only the asked ranges are fetched. Every file gets one
row (ROW_FIELDS): verdict "valid", "invalid" (class, rule, offset, tensor and
message of the KilnError: `kiln validate FILE`'s verdict) or "error" (the file
could not be read: missing, a failing or misbehaving server, a worker that
died while checking it); the scan always finishes. See docs/python.md.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import io
import logging
import os
import stat
import sys
import time
from typing import Callable, Dict, Iterable, List, Optional

from . import _kiln
from ._errors import KilnError

__all__ = ["ROW_FIELDS", "expand", "check_file", "check_batch", "scan", "format_table",
           "format_json_line", "exit_status", "main"]

ROW_FIELDS = ("file", "verdict", "class", "rule", "offset", "tensor", "message", "bytes_read")

EXIT_OK, EXIT_INVALID, EXIT_ERROR = 0, 1, 2


# -- Expanding the arguments -------------------------------------------------

def _is_url(target: str) -> bool:
    return "://" in target or "::" in target


def expand(paths: Iterable[str]) -> List[str]:
    """The files to check, in order: a local directory becomes its regular
    files (recursively, sorted, symbolic links to directories not followed);
    a URL of a file system fsspec can list (not HTTP) that names a directory
    becomes its files; anything else is taken as one file (whether it exists
    is the task's business: a missing file is an error row)."""
    out: List[str] = []
    for p in paths:
        p = os.fspath(p)
        if not _is_url(p):
            if os.path.isdir(p):
                for root, dirs, files in os.walk(p):
                    dirs.sort()
                    for name in sorted(files):
                        full = os.path.join(root, name)
                        if os.path.isfile(full):
                            out.append(full)
            else:
                out.append(p)
            continue
        scheme = p.split("://", 1)[0].lower()
        if scheme in ("http", "https"):
            out.append(p)
            continue
        import fsspec  # listing other file systems

        fs, path = fsspec.core.url_to_fs(p)
        if fs.isdir(path):
            protocol = fs.protocol if isinstance(fs.protocol, str) else fs.protocol[0]
            out.extend(f"{protocol}://{f}" for f in sorted(fs.find(path)))
        else:
            out.append(p)
    return out


# -- One file, on a worker ---------------------------------------------------

class _Counted(io.RawIOBase):
    """A file object that counts the bytes its reads return."""

    def __init__(self, f) -> None:
        super().__init__()
        self._f = f
        self.bytes_read = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        s = getattr(self._f, "seekable", None)
        return True if s is None else bool(s())

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self._f.seek(offset, whence)

    def tell(self) -> int:
        return self._f.tell()

    def readinto(self, b) -> Optional[int]:
        readinto = getattr(self._f, "readinto", None)
        if readinto is not None:
            n = readinto(b)
        else:
            view = memoryview(b).cast("B")
            data = self._f.read(len(view))
            if data is None:
                return None
            if len(data) > len(view):
                raise OSError(errno.EIO, f"read({len(view)}) returned {len(data)} bytes")
            n = len(data)
            view[:n] = data
        if n:
            self.bytes_read += n
        return n


def _open_local(path: str):
    """A regular file, opened without blocking (a FIFO, device or directory is
    refused with OSError, as `kiln validate` refuses them)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = ("a directory" if stat.S_ISDIR(st.st_mode) else
                    "a FIFO" if stat.S_ISFIFO(st.st_mode) else
                    "a socket" if stat.S_ISSOCK(st.st_mode) else "a device")
            raise OSError(errno.EINVAL, f"not a regular file ({kind})")
        return os.fdopen(fd, "rb", buffering=0)
    except BaseException:
        os.close(fd)
        raise


def _open(target: str, options: dict):
    """(file object, object to close) for a target."""
    if not _is_url(target):
        f = _open_local(target)
        return f, f
    scheme = target.split("://", 1)[0].lower()
    if scheme in ("http", "https"):
        from ._http import HTTPRangeFile

        f = HTTPRangeFile(target, timeout=options.get("timeout", 60.0),
                          idle_timeout=options.get("idle_timeout", 20.0))
        return f, f
    import fsspec
    from fsspec.implementations.local import LocalFileSystem

    fs, path = fsspec.core.url_to_fs(target)
    if isinstance(fs, LocalFileSystem):
        f = _open_local(path)
        return f, f
    f = fs.open(path, "rb", cache_type="none", block_size=options.get("block_size", _kiln.DEFAULT_MAX_RANGE))
    return f, f


def _row(target: str, verdict: str, bytes_read: int, error: Optional[BaseException] = None,
         message: Optional[str] = None) -> dict:
    row = dict.fromkeys(ROW_FIELDS)
    row.update(file=target, verdict=verdict, bytes_read=bytes_read)
    if isinstance(error, KilnError):
        row.update({"class": error.error_class, "rule": error.rule, "offset": error.offset,
                    "tensor": error.tensor, "message": error.message})
    elif message is not None:
        row["message"] = message
    return row


def _describe(e: BaseException) -> str:
    text = str(e)
    name = type(e).__name__
    if isinstance(e, OSError) and e.errno == errno.EIO and type(e) is OSError:
        return e.strerror or text
    return f"{name}: {text}" if text else name


def check_file(target: str, options: Optional[dict] = None) -> dict:
    """Validates one file by random access; returns its row. Never raises for
    a file or a server (an error row instead); a worker that dies is the
    caller's to report (scan does)."""
    from ._ranges import read_ranges

    options = options or {}
    counted = None
    try:
        f, closer = _open(target, options)
        try:
            counted = _Counted(f)
            read_ranges(counted, (options.get("max_tensors"), options.get("max_block_bytes"),
                                  options.get("max_name_bytes")),
                        bool(options.get("prefix", False)), options.get("merge_gap"))
        finally:
            closer.close()
    except KilnError as e:
        return _row(target, "invalid", counted.bytes_read if counted else 0, error=e)
    except Exception as e:  # noqa: BLE001 (an unreadable file is a row, not a failed scan)
        return _row(target, "error", counted.bytes_read if counted else 0, message=_describe(e))
    return _row(target, "valid", counted.bytes_read)


def check_batch(targets: List[str], options: Optional[dict] = None) -> List[dict]:
    """check_file for each target: one Dask task's work."""
    return [check_file(t, options) for t in targets]


# -- The scan ----------------------------------------------------------------

_MAX_ATTEMPTS = 3  # tasks per file that fail for other reasons than its worker dying


def _is_killed_worker(e: BaseException) -> bool:
    from distributed.scheduler import KilledWorker

    return isinstance(e, KilledWorker)


def _describe_task_failure(e: BaseException) -> str:
    if _is_killed_worker(e):
        return ("the worker checking this file died (KilledWorker): the file was not "
                "judged")
    return f"the task failed: {_describe(e)}"


# How long a scan waits while the cluster has no worker at all before the
# files not yet judged become error rows. A worker that dies is restarted by
# its nanny within seconds; a cluster left with none (every nanny gone, or
# a scheduler whose workers never came) would otherwise make the scan wait
# for ever.
NO_WORKER_TIMEOUT = 120.0


class _WorkerWatch:
    """Tells when the cluster has had no worker for `limit` seconds (asks
    the client's view of the scheduler at most once a second)."""

    def __init__(self, client, limit: float) -> None:
        self._client = client
        self._limit = limit
        self._since: Optional[float] = None
        self._checked = float("-inf")

    def lost(self) -> bool:
        now = time.monotonic()
        if now - self._checked < 1.0:
            return False
        # A look older than 2 s (results kept arriving in between, so nobody
        # asked): its zero says nothing of now, the clock starts again.
        if now - self._checked > 2.0:
            self._since = None
        self._checked = now
        count = 0
        # A client no longer running (its scheduler gone) keeps its last
        # view of the workers: no worker can run a task for it.
        if getattr(self._client, "status", "running") == "running":
            try:
                count = len(self._client.scheduler_info().get("workers", {}))
            except Exception:  # noqa: BLE001 (the scheduler is gone too: no worker either)
                count = 0
        if count:
            self._since = None
            return False
        if self._since is None:
            self._since = now
        return now - self._since >= self._limit


def _lost_text(limit: float) -> str:
    return (f"no worker on the cluster for {limit:g} s (every worker died or none "
            f"joined): the file was not judged")


class _ClusterLost(Exception):
    pass


def _result_unless_lost(fut, watch: _WorkerWatch):
    """fut.result(), or _ClusterLost once the cluster has had no worker for
    the watch's limit."""
    from distributed import wait

    while True:
        try:
            wait([fut], timeout=0.5)
        except (TimeoutError, asyncio.TimeoutError):  # one class from Python 3.11 on
            pass
        if fut.done():
            return fut.result()
        if watch.lost():
            fut.cancel()
            raise _ClusterLost()


def scan(paths: Iterable[str], client=None, *, workers: Optional[int] = None,
         batch_size: Optional[int] = None, options: Optional[dict] = None,
         on_row: Optional[Callable[[dict, int, int], None]] = None,
         no_worker_timeout: float = NO_WORKER_TIMEOUT) -> List[dict]:
    """Validates every file of `paths` (expand()) as Dask tasks; returns one
    row per file (ROW_FIELDS), in the order of expand().

    client: a distributed.Client (any scheduler); None starts a LocalCluster
    of `workers` processes (default: one per core), one thread each, no
    dashboard, closed afterwards. Files go to tasks in batches of
    `batch_size` (default: enough for 8 tasks per worker, at most 32 files);
    a batch whose task fails (its worker died: KilledWorker) is re-run one
    file per task, and a file whose own task then dies with its worker is
    run once more alone on the cluster (the scheduler also fails the other
    tasks on a dying worker), so only the file that kills a worker gets the
    error row. A task that fails otherwise (a result lost with a worker) is
    re-run, at most 3 times per file.
    options: merge_gap, timeout (s, per HTTP request), idle_timeout (s),
    max_tensors, max_block_bytes, max_name_bytes, prefix, block_size
    (fsspec). on_row(row, done, total) is called as rows arrive.
    no_worker_timeout: once the cluster has had no worker for this many
    seconds, every file not yet judged gets an error row and the scan ends.
    """
    if not no_worker_timeout > 0:
        raise ValueError("no_worker_timeout must be positive")
    from distributed import as_completed

    targets = expand(paths)
    rows: List[Optional[dict]] = [None] * len(targets)
    if not targets:
        return []
    options = dict(options or {})
    own = None
    if client is None:
        from distributed import Client, LocalCluster

        n = workers or os.cpu_count() or 1
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                               dashboard_address=None, silence_logs=logging.ERROR)
        own = (Client(cluster), cluster)
        client = own[0]
    try:
        nworkers = max(1, len(client.scheduler_info().get("workers", {})) or (workers or 1))
        if batch_size is None:
            batch_size = max(1, min(32, len(targets) // (8 * nworkers)))
        done = 0
        tag = f"{os.getpid():x}-{id(rows):x}"
        attempts: Dict[int, int] = {}
        suspects: List[int] = []  # files whose task died with its worker

        def finish(i: int, row: dict) -> None:
            nonlocal done
            rows[i] = row
            done += 1
            if on_row is not None:
                on_row(row, done, len(targets))

        def submit_one(i: int, phase: str = "one"):
            # A client that lost its scheduler cannot take a task: wait for it
            # to reconnect, or for the watch to call the cluster lost.
            while getattr(client, "status", "running") != "running":
                if watch.lost():
                    raise _ClusterLost()
                time.sleep(0.1)
            attempts[i] = attempts.get(i, 0) + 1
            return client.submit(check_file, targets[i], options, pure=False,
                                 key=f"kiln-scan-{tag}-{phase}-{i}-{attempts[i]}")

        pending: Dict[object, List[int]] = {}
        live: Dict[object, object] = {}  # the futures of pending, to cancel if the cluster is lost
        futures = []
        for start in range(0, len(targets), batch_size):
            idx = list(range(start, min(start + batch_size, len(targets))))
            fut = client.submit(check_batch, [targets[i] for i in idx], options, pure=False,
                                key=f"kiln-scan-{tag}-batch-{start}")
            pending[fut.key] = idx
            live[fut.key] = fut
            futures.append(fut)
        # Results are fetched as each task ends (with_results), while the
        # worker that holds them is most likely alive.
        seq = as_completed(futures, with_results=True, raise_errors=False)
        futures.clear()  # a finished task's result is dropped once it is a row
        watch = _WorkerWatch(client, no_worker_timeout)

        def completed():
            # as_completed's iterator, but one that gives up on a cluster
            # that has had no worker for no_worker_timeout seconds.
            while not seq.is_empty():
                ready = seq.next_batch(block=False)
                if ready:
                    yield from ready
                elif watch.lost():
                    last = seq.next_batch(block=False)  # one that came meanwhile
                    if not last:
                        return
                    yield from last
                else:
                    time.sleep(0.02)

        gave_up = False
        try:
            for fut, result in completed():
                idx = pending.pop(fut.key)
                live.pop(fut.key, None)
                if fut.status != "finished":
                    # An erred future's result here is (type, exception, traceback).
                    e = (result if isinstance(result, BaseException) else
                         result[1] if isinstance(result, tuple) and len(result) == 3 else
                         RuntimeError(f"the task ended {fut.status}"))
                    if len(idx) > 1:  # find the file that failed: one task each
                        for i in idx:
                            single = submit_one(i)
                            pending[single.key] = [i]
                            live[single.key] = single
                            seq.add(single)
                    elif _is_killed_worker(e):
                        # Every task assigned to a dying worker ends so, not only
                        # the one that killed it: checked again alone, below.
                        suspects.append(idx[0])
                    elif attempts.get(idx[0], 0) < _MAX_ATTEMPTS:  # a result lost with its worker
                        single = submit_one(idx[0])
                        pending[single.key] = idx
                        live[single.key] = single
                        seq.add(single)
                    else:
                        finish(idx[0], _row(targets[idx[0]], "error", 0,
                                            message=_describe_task_failure(e)))
                    continue
                for i, row in zip(idx, result if isinstance(result, list) else [result]):
                    finish(i, row)
        except _ClusterLost:  # a task could not be resubmitted
            gave_up = True
        # Alone on the cluster, a file whose task dies with its worker is the
        # file that kills it.
        lost = gave_up or bool(pending)  # the loop above gave up with tasks outstanding
        # So that they do not run later on a client of the caller's (with no
        # scheduler left there is nothing to cancel, and asking would wait).
        if lost and getattr(client, "status", "running") == "running":
            try:
                client.cancel(list(live.values()))
            except Exception:  # noqa: BLE001 (a lost scheduler: nothing left to cancel)
                pass
        live.clear()
        seq.clear()
        for i in suspects:
            attempts[i] = 0
            while not lost:
                try:
                    fut = submit_one(i, "alone")
                    row = _result_unless_lost(fut, watch)
                except _ClusterLost:
                    lost = True
                    break
                except Exception as e:  # noqa: BLE001
                    if _is_killed_worker(e) or attempts[i] >= _MAX_ATTEMPTS:
                        row = _row(targets[i], "error", 0, message=_describe_task_failure(e))
                    else:
                        continue
                finish(i, row)
                break
        for i, row in enumerate(rows):
            if row is None:  # only when the cluster was lost
                finish(i, _row(targets[i], "error", 0, message=_lost_text(no_worker_timeout)))
    finally:
        if own is not None:
            own[0].close()
            own[1].close()
    return [r for r in rows if r is not None]


# -- Reports -----------------------------------------------------------------

def verdict_text(row: dict) -> str:
    """'ok', the `kiln validate` verdict line, or the error (escaped)."""
    if row["verdict"] == "valid":
        return "ok"
    if row["verdict"] == "invalid":
        # The library's message, as `kiln validate` prints it (names in it
        # are already escaped by the C++ side).
        tensor = "" if row["tensor"] is None else f" (tensor {row['tensor']})"
        return f"{row['class']} {row['rule']} at byte {row['offset']}{tensor}: {row['message']}"
    return "error: " + _kiln.escape(row["message"] or "")


def format_table(rows: List[dict]) -> str:
    """A text table: verdict, bytes read, file (escaped for the terminal),
    then 'ok', the verdict line or the error."""
    width = max([len("bytes_read")] + [len(str(r["bytes_read"])) for r in rows])
    lines = [f"{'verdict':<8} {'bytes_read':>{width}}  file: result"]
    for r in rows:
        lines.append(f"{r['verdict']:<8} {r['bytes_read']:>{width}}  "
                     f"{_kiln.escape(r['file'])}: {verdict_text(r)}")
    return "\n".join(lines) + "\n"


def _json_value(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v)
    return '"' + _kiln.json_escape(str(v)) + '"'


def format_json_line(row: dict) -> str:
    """One JSON object, the strings escaped as `kiln validate --json` does."""
    return "{" + ", ".join(f'"{k}": {_json_value(row[k])}' for k in ROW_FIELDS) + "}"


def exit_status(rows: List[dict]) -> int:
    """0 all valid, 1 some invalid, 2 some error (as `kiln validate`)."""
    if any(r["verdict"] == "error" for r in rows):
        return EXIT_ERROR
    if any(r["verdict"] == "invalid" for r in rows):
        return EXIT_INVALID
    return EXIT_OK


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m kiln.scan",
        description="Validate many Kiln files (local paths, directories, fsspec URLs) as Dask "
                    "tasks, reading only their structure. Exit status: 0 all valid, 1 some "
                    "invalid, 2 an I/O or usage error.")
    parser.add_argument("paths", nargs="+", metavar="URL-OR-DIR")
    parser.add_argument("--scheduler", metavar="ADDR",
                        help="a dask.distributed scheduler (default: a LocalCluster)")
    parser.add_argument("--workers", type=int, metavar="N",
                        help="LocalCluster worker processes (default: one per core)")
    parser.add_argument("--batch", type=int, metavar="N", help="files per task")
    parser.add_argument("--json", action="store_true", help="JSON lines, one object per file")
    parser.add_argument("--timeout", type=float, default=60.0, metavar="S",
                        help="HTTP: seconds per request (default 60)")
    parser.add_argument("--idle-timeout", type=float, default=20.0, metavar="S",
                        help="HTTP: seconds a server may stay silent (default 20)")
    parser.add_argument("--merge-gap", type=int, metavar="BYTES",
                        help="read two wanted ranges this close as one (default 64 KiB)")
    parser.add_argument("--no-worker-timeout", type=float, default=NO_WORKER_TIMEOUT,
                        metavar="S",
                        help="give the files not yet judged error rows once the cluster has "
                             f"had no worker for S seconds (default {NO_WORKER_TIMEOUT:g})")
    args = parser.parse_args(argv)
    for name in ("workers", "batch"):
        value = getattr(args, name)
        if value is not None and value < 1:
            parser.error(f"--{name} must be at least 1")
    if args.scheduler and args.workers:
        parser.error("--workers starts a LocalCluster; it does not go with --scheduler")
    if not (args.timeout > 0 and args.idle_timeout > 0 and args.no_worker_timeout > 0):
        parser.error("--timeout, --idle-timeout and --no-worker-timeout must be positive")
    if args.merge_gap is not None and args.merge_gap < 0:
        parser.error("--merge-gap must be non-negative")

    progress = sys.stderr.isatty()

    def on_row(row: dict, done: int, total: int) -> None:
        if progress:
            sys.stderr.write(f"\rkiln.scan: {done}/{total} files")
            sys.stderr.flush()

    options = {"timeout": args.timeout, "idle_timeout": args.idle_timeout,
               "merge_gap": args.merge_gap}
    started = time.monotonic()
    try:
        client = None
        if args.scheduler:
            from distributed import Client

            client = Client(args.scheduler)
        try:
            rows = scan(args.paths, client, workers=args.workers, batch_size=args.batch,
                        options=options, on_row=on_row,
                        no_worker_timeout=args.no_worker_timeout)
        finally:
            if client is not None:
                client.close()
    except KeyboardInterrupt:
        raise
    except Exception as e:  # noqa: BLE001 (no cluster, no listing: a usage or I/O error)
        if progress:
            sys.stderr.write("\n")
        sys.stderr.write("kiln.scan: " + _kiln.escape(_describe(e)) + "\n")
        return EXIT_ERROR
    elapsed = time.monotonic() - started
    if progress:
        sys.stderr.write("\n")
    try:
        if args.json:
            sys.stdout.write("".join(format_json_line(r) + "\n" for r in rows))
        else:
            sys.stdout.write(format_table(rows))
        sys.stdout.flush()
    except OSError as e:
        sys.stderr.write(f"kiln.scan: the report could not be written: {e.strerror}\n")
        return EXIT_ERROR
    counts = {v: sum(r["verdict"] == v for r in rows) for v in ("valid", "invalid", "error")}
    total_read = sum(r["bytes_read"] for r in rows)
    sys.stderr.write(f"kiln.scan: {len(rows)} files: {counts['valid']} valid, "
                     f"{counts['invalid']} invalid, {counts['error']} errors; "
                     f"{total_read} bytes read in {elapsed:.1f} s\n")
    return exit_status(rows)


if __name__ == "__main__":
    # Run as `python -m kiln.scan`: call the imported module's main, so the
    # tasks refer to kiln.scan's functions (pickled by name), not __main__'s.
    from kiln import scan as _scan

    sys.exit(_scan.main())
