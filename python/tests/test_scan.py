"""kiln.scan on a real dask.distributed LocalCluster (2 worker processes):
a generated corpus (the golden cases, mutants of them, valid generated files)
served by nginx on 127.0.0.1 gets one row per file equal to `kiln validate
FILE`'s verdict, reading only the ranges the rules need (nginx's log);
every misbehaviour of the hostile server is an error row, never a verdict;
vanished and special files are error rows; the command line's table, JSON lines, escaping and exit statuses."""

import contextlib
import errno
import json
import os
import pathlib
import random
import subprocess
import sys
import time

import numpy as np
import pytest

import kiln
import kiln.numpy
import kiln.scan
from conftest import golden_cases, golden_path
from kiln import _kiln
from kiln._http import HTTPRangeFile

distributed = pytest.importorskip("distributed")
pytest.importorskip("fsspec")

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "tests" / "http"))
import servers  # noqa: E402  (tests/http/servers.py: nginx and the hostile server)

pytestmark = pytest.mark.skipif(not servers.nginx_available(), reason="nginx is not installed")

REPO = pathlib.Path(__file__).resolve().parents[2]
BIG_TENSORS = 40  # the large valid file: 40 tensors of 256 KiB


def _mutants(data, rng, count):
    out = [data[:n] for n in sorted(rng.sample(range(len(data)), min(4, len(data))))]
    out.append(data + b"\0")
    while len(out) < count and data:
        b = bytearray(data)
        for _ in range(rng.randint(1, 3)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        out.append(bytes(b))
    return out


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """A directory of files: every golden case, 3 mutants of each, valid
    generated blocks and one 10 MiB block whose tensors must not be read."""
    root = tmp_path_factory.mktemp("corpus")
    rng = random.Random(2023)
    for name, _, _ in golden_cases():
        data = golden_path(name).read_bytes()
        (root / f"{name}.klnt").write_bytes(data)
        for i, m in enumerate(_mutants(data, rng, 3)):
            (root / f"{name}.m{i}.klnt").write_bytes(m)
    for i in range(20):
        tensors = {f"t{j}": np.arange(j + i + 1, dtype=np.float32) for j in range(1 + i % 5)}
        kiln.numpy.save_file(tensors, root / f"gen{i:02d}.klnt")
    kiln.numpy.save_file({f"w{j}": np.full(65536, j + 1, np.float32) for j in range(BIG_TENSORS)},
                         root / "big.klnt")
    return root


@pytest.fixture(scope="module")
def reference(corpus, kiln_binary):
    """{file name: `kiln validate --json FILE`'s object} for every corpus file."""
    names = sorted(os.listdir(corpus))
    out = subprocess.run([kiln_binary, "validate", "--json", *[str(corpus / n) for n in names]],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 1, out.stderr  # some files are invalid, none unreadable
    objects = json.loads(out.stdout)
    assert len(objects) == len(names)
    return dict(zip(names, objects))


@pytest.fixture(scope="module")
def web(corpus):
    with servers.Nginx(corpus) as w:
        yield w


@pytest.fixture(scope="module")
def client():
    """A LocalCluster of 2 worker processes (one thread each, no dashboard)."""
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=50)
    c = distributed.Client(cluster)
    try:
        yield c
    finally:
        c.close()
        cluster.close()


def assert_rows_match(rows, reference, name_of):
    assert len(rows) == len(reference)
    seen = set()
    for row in rows:
        name = name_of(row["file"])
        seen.add(name)
        want = reference[name]
        if want["ok"]:
            assert row["verdict"] == "valid", (name, row)
            assert row["message"] is None and row["class"] is None
        else:
            assert row["verdict"] == "invalid", (name, row, want)
            got = {k: row[k] for k in ("class", "rule", "offset", "message")}
            assert got == {k: want[k] for k in ("class", "rule", "offset", "message")}, name
            assert row["tensor"] == want.get("tensor"), name
    assert seen == set(reference)


def test_scan_over_nginx_matches_the_command(corpus, reference, web, client):
    names = sorted(reference)
    urls = [web.url_for(n) for n in names]
    mark = web.mark()
    rows = kiln.scan.scan(urls, client)
    assert [r["file"] for r in rows] == urls  # one row per file, in order
    assert_rows_match(rows, reference, lambda u: u.rsplit("/", 1)[1])
    assert {r["verdict"] for r in rows} == {"valid", "invalid"}
    # The bytes the rows count are the bytes nginx sent: ranges only, each
    # within its file; the 10 MiB file's tensors were not read.
    log = web.requests(mark)
    assert sum(r["bytes"] for r in log) == sum(r["bytes_read"] for r in rows)
    assert all(r["method"] == "HEAD" or r["status"] == 206 for r in log), \
        [r for r in log if r["method"] != "HEAD" and r["status"] != 206][:3]
    sizes = {n: (corpus / n).stat().st_size for n in names}
    for row, name in zip(rows, names):
        assert row["bytes_read"] <= sizes[name]
    big = rows[names.index("big.klnt")]
    assert big["verdict"] == "valid"
    assert sizes["big.klnt"] > 10 << 20 and big["bytes_read"] < 8192
    # Compared with downloading every file whole: a fraction.
    assert sum(r["bytes_read"] for r in rows) < sum(sizes.values()) / 10


def test_scan_local_directory_and_file_urls(corpus, reference, client):
    rows = kiln.scan.scan([str(corpus)], client)
    assert_rows_match(rows, reference, os.path.basename)
    names = sorted(reference)[:40]
    urls = [(corpus / n).as_uri() for n in names]
    rows = kiln.scan.scan(urls, client, batch_size=7)
    assert [r["file"] for r in rows] == urls
    assert_rows_match(rows, {n: reference[n] for n in names}, lambda u: u.rsplit("/", 1)[1])
    # Local bytes read are the ranges only as well.
    for row, name in zip(rows, names):
        assert row["bytes_read"] <= (corpus / name).stat().st_size


def test_http_range_file_reads_only_the_structure(corpus, web):
    mark = web.mark()
    with HTTPRangeFile(web.url_for("big.klnt")) as f:
        assert kiln.validate(f) == (corpus / "big.klnt").stat().st_size
        infos = kiln.inspect(f, merge_gap=0)
    assert [i.name for i in infos] == [f"w{j}" for j in range(BIG_TENSORS)]
    log = web.requests(mark)
    ranged = [r for r in log if r["method"] == "GET"]
    assert all(r["status"] == 206 and r["range"].startswith("bytes=") for r in ranged)
    assert web.bytes_sent(mark) == f.bytes_received < 2 * 8192  # two validations


# Each misbehaviour, and what the error row says (a word of its message).
HOSTILE = {
    "ignore-range": "HTTP 200", "wrong-total": "file changed", "wrong-start": "instead",
    "short": "Content-Length", "short-close": "body ended", "short-nolen": "Content-Length",
    "long": "Content-Length", "long-nolen": "Content-Length", "changes-evil": "HTTP 200",
    "gzip": "compressed", "changes": "HTTP 200", "changes-lm": "HTTP 200",
    "drip": "timeout", "stall": "sent nothing", "endless": "Content-Length",
    "endless-200": "HTTP 200", "redirect-loop": "redirects", "redirect-file": "not http",
    "redirect-ftp": "not http", "404": "HTTP 404", "500": "HTTP 500", "no-size": "Content-Length",
    "junk-number": "Content-Range", "429": "HTTP 429",
    "status-space": "a status line without a status code: b'HTTP/1.1  200 OK'",
    "status-suffix": "a status line without a status code: b'HTTP/1.1 200x OK'",
    "two-etags": "the file changed", "two-etags-first": "HTTP 200", "later-200": "HTTP 200",
    "later-503": "HTTP 503", "later-no-range": "Content-Range None",
    "later-short": "Content-Length '63'", "later-nolen": "Content-Length None",
    "colonless": "a header line without a colon", "etag-appears": "ETag '\"v1\"', None when",
    "trickle-bad": "instead", "trickle-long": "Content-Length None",
    "later-empty-503": "HTTP 503", "later-short-nolen": "Content-Length None",
}


# The servers this reader takes as behaving: a plain one, one that redirects
# once, those whose replies are well-formed in an unusual way (ows, zeros,
# no-reason, tight) and page-416* (they differ from good only for an empty
# file).
CONTROLS = ("good", "redirect-once", "ows", "zeros", "no-reason", "page-416", "page-416-long",
            "page-416-trickle", "tight")


def test_hostile_servers_are_error_rows(client):
    assert set(HOSTILE) | set(CONTROLS) == set(servers.HOSTILE_MODES)
    data = golden_path("kiln-v2-f32").read_bytes()
    with contextlib.ExitStack() as stack:
        hosts = {m: stack.enter_context(servers.Hostile(m, data)) for m in servers.HOSTILE_MODES}
        urls = [hosts[m].url for m in servers.HOSTILE_MODES]
        rows = kiln.scan.scan(urls, client, batch_size=1,
                              options={"timeout": 3.0, "idle_timeout": 2.0})
    by_mode = dict(zip(servers.HOSTILE_MODES, rows))
    for mode in CONTROLS:
        assert by_mode.pop(mode)["verdict"] == "valid", mode
    for mode, row in by_mode.items():
        assert row["verdict"] == "error", (mode, row)
        assert row["class"] is None and row["rule"] is None
        assert HOSTILE[mode] in row["message"], (mode, row["message"])
    # A changing file is caught by If-Range: the second request carried it.
    assert hosts["changes"].requests[1][2].get("If-Range") == '"v1"'


def test_vanished_and_special_files_are_error_rows(corpus, tmp_path, client):
    gone = tmp_path / "gone.klnt"
    gone.write_bytes(golden_path("kiln-v2-f32").read_bytes())
    targets = [str(gone), str(corpus / "gen00.klnt"), "/dev/null", "/nonexistent/x.klnt"]
    os.unlink(gone)  # vanished between listing and checking
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    targets.append(str(fifo))  # never blocks: refused as a FIFO
    rows = kiln.scan.scan(targets, client)
    assert [r["verdict"] for r in rows] == ["error", "valid", "error", "error", "error"]
    assert "No such file" in rows[0]["message"]
    assert "not a regular file (a device)" in rows[2]["message"]
    assert "not a regular file (a FIFO)" in rows[4]["message"]
    assert kiln.scan.exit_status(rows) == 2


def _check_file_plugin(plugin_name, before):
    """A worker plugin (its class made here, so that cloudpickle sends it by
    value) that wraps kiln.scan.check_file on every worker, present and
    future (the nanny restarts a killed one): before(basename) runs ahead of
    each check."""
    from distributed.diagnostics.plugin import WorkerPlugin

    class Wrap(WorkerPlugin):
        name = plugin_name

        def setup(self, worker):
            import kiln.scan as scan

            real = getattr(scan.check_file, "__wrapped__", scan.check_file)

            def check_file(target, options=None):
                before(os.path.basename(target))
                return real(target, options)

            check_file.__wrapped__ = real
            scan.check_file = check_file

    return Wrap()


def _worker_killer(marker_dir):
    """Stands for a file whose check kills the process checking it, as a
    native crash or the kernel's OOM killer would: a target named
    "killer*.klnt" SIGKILLs its worker, and one named "once*.klnt" does so
    the first time only (a marker file in marker_dir remembers it across
    the restarted processes)."""

    def before(base):
        import signal

        if base.startswith("killer"):
            os.kill(os.getpid(), signal.SIGKILL)
        if base.startswith("once"):
            try:
                os.close(os.open(os.path.join(marker_dir, base),
                                 os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                pass
            else:
                os.kill(os.getpid(), signal.SIGKILL)

    return _check_file_plugin("kiln-test-killer", before)


def test_a_worker_that_dies_mid_task_is_that_files_error_row(corpus, reference, tmp_path):
    """A file whose check kills its worker gets an error row naming the death;
    the files that shared its batch or its dying worker get their verdicts;
    a file whose worker died once, by chance, is judged when checked again;
    the scan finishes. The scheduler here calls a task KilledWorker at its
    first death (allowed-failures 0) to keep the test short; the default (3
    retries) takes the same path later."""
    import dask

    data = (corpus / "gen00.klnt").read_bytes()
    (tmp_path / "killer.klnt").write_bytes(data)
    (tmp_path / "once.klnt").write_bytes(data)
    markers = tmp_path / "markers"
    markers.mkdir()
    names = sorted(reference)[:24]
    targets = [str(corpus / n) for n in names]
    targets[5:5] = [str(tmp_path / "killer.klnt")]
    targets[17:17] = [str(tmp_path / "once.klnt")]
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=None, silence_logs=50)
        c = distributed.Client(cluster)
        try:
            c.register_worker_plugin(_worker_killer(str(markers)))
            rows = kiln.scan.scan(targets, c, batch_size=4)
        finally:
            c.close()
            cluster.close()
    assert [r["file"] for r in rows] == targets  # one row per file, in order
    killer = rows.pop(5)
    assert killer["verdict"] == "error", killer
    assert "the worker checking this file died (KilledWorker)" in killer["message"]
    assert killer["class"] is None and killer["rule"] is None and killer["bytes_read"] == 0
    once = rows.pop(16)
    assert os.path.exists(markers / "once.klnt")  # its worker did die once
    assert once["verdict"] == "valid", once
    assert_rows_match(rows, {n: reference[n] for n in names}, os.path.basename)
    assert kiln.scan.exit_status([killer]) == 2


def _worker_sleeper(marker_dir):
    """Checking a file named "slow*.klnt" first leaves a marker in
    marker_dir, then sleeps a minute."""

    def before(base):
        if base.startswith("slow"):
            open(os.path.join(marker_dir, base), "w").close()
            time.sleep(60)

    return _check_file_plugin("kiln-test-sleeper", before)


def test_a_scheduler_killed_mid_scan_ends_it_with_error_rows(corpus, reference, tmp_path):
    """The scheduler process dies (SIGKILL) while a file is being checked,
    its worker still up: the client keeps its last view of the cluster (one
    worker), but no task can run for it any more. The scan returns within
    no_worker_timeout (and the client's reconnection attempts), any file
    judged before with its verdict, the rest with error rows."""
    import signal
    import threading

    names = sorted(reference)[:4]
    targets = [str(corpus / n) for n in names]
    slow = tmp_path / "slow.klnt"
    slow.write_bytes((corpus / names[0]).read_bytes())
    targets.append(str(slow))
    markers = tmp_path / "markers"
    markers.mkdir()
    info = tmp_path / "scheduler.json"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    sched = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler",
                              "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                              "--scheduler-file", str(info)], **quiet)
    worker = None
    c = None
    out = {}

    def run():
        try:
            out["rows"] = kiln.scan.scan(targets, c, batch_size=1, no_worker_timeout=2)
        except BaseException as e:  # noqa: BLE001 (reported by the assertions below)
            out["error"] = e

    try:
        deadline = time.monotonic() + 60
        while not info.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        worker = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker",
                                   "--scheduler-file", str(info), "--nthreads", "1",
                                   "--no-dashboard", "--no-nanny"], **quiet)
        c = distributed.Client(scheduler_file=str(info), timeout=30)
        c.wait_for_workers(1, timeout=60)
        c.register_worker_plugin(_worker_sleeper(str(markers)))
        t = threading.Thread(target=run, daemon=True)
        t.start()
        while not (markers / "slow.klnt").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert (markers / "slow.klnt").exists(), "the slow file's check never started"
        assert len(c.scheduler_info()["workers"]) == 1
        sched.send_signal(signal.SIGKILL)
        t.join(timeout=120)
        assert not t.is_alive(), "scan still waits after its scheduler died"
    finally:
        for p in (sched, worker):
            if p is not None:
                p.kill()
                p.wait()
        if c is not None:
            c.close(timeout=5)
    assert "error" not in out, out.get("error")
    rows = out["rows"]
    assert [r["file"] for r in rows] == targets
    lost = "no worker on the cluster for 2 s"
    for name, row in zip(names, rows):
        if row["verdict"] == "error":  # not reached before the scheduler died
            assert row["message"].startswith(lost), row
        else:  # judged before: its verdict
            assert_rows_match([row], {name: reference[name]}, os.path.basename)
    assert rows[-1]["verdict"] == "error"
    assert rows[-1]["message"].startswith(lost), rows[-1]


def test_a_cluster_without_workers_ends_the_scan_with_error_rows(corpus, reference):
    """A scheduler with no worker (none joined, or every one died and none
    came back) cannot run a task: after no_worker_timeout seconds without a
    worker every file gets an error row that says so, and scan returns."""
    names = sorted(reference)[:5]
    targets = [str(corpus / n) for n in names]
    cluster = distributed.LocalCluster(n_workers=0, processes=True, dashboard_address=None,
                                       silence_logs=50)
    c = distributed.Client(cluster)
    try:
        started = time.monotonic()
        rows = kiln.scan.scan(targets, c, batch_size=2, no_worker_timeout=2)
        waited = time.monotonic() - started
    finally:
        c.close()
        cluster.close()
    assert [r["file"] for r in rows] == targets
    for row in rows:
        assert row["verdict"] == "error", row
        assert row["message"] == ("no worker on the cluster for 2 s (every worker died or "
                                  "none joined): the file was not judged"), row
        assert row["bytes_read"] == 0
    assert waited >= 2
    assert kiln.scan.exit_status(rows) == 2
    with pytest.raises(ValueError):
        kiln.scan.scan(targets, c, no_worker_timeout=0)


def run_cli(*args, env_extra=None):
    env = dict(os.environ)
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "kiln.scan", *args], capture_output=True,
                          text=True, check=False, env=env, timeout=300)


def test_command_line_table_json_and_exit_status(tmp_path, client):
    address = client.scheduler.address
    ok = tmp_path / "ok"
    ok.mkdir()
    data = golden_path("kiln-v2-f32").read_bytes()
    (ok / "a.klnt").write_bytes(data)
    evil = "b\x1b[31m\u202e\n.klnt"  # an escape sequence, a bidi control, a newline
    (ok / evil).write_bytes(data)
    out = run_cli(str(ok), "--scheduler", address)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].split()[:2] == ["verdict", "bytes_read"]
    assert len(lines) == 3 and all(line.startswith("valid") for line in lines[1:])
    assert any(line.endswith(f"{ok}/a.klnt: ok") for line in lines)
    escaped = _kiln.escape(str(ok / evil))
    assert "\\x1b[31m\\u{202e}\\x0a.klnt" in escaped
    assert any(escaped + ": ok" in line for line in lines)
    assert "\x1b" not in out.stdout and "\u202e" not in out.stdout
    assert "2 files: 2 valid, 0 invalid, 0 errors" in out.stderr

    bad = bytearray(data)
    bad[4] = 3
    (ok / "c.klnt").write_bytes(bytes(bad))
    out = run_cli(str(ok), "--scheduler", address, "--json")
    assert out.returncode == 1, out.stderr
    objects = [json.loads(line) for line in out.stdout.splitlines()]
    assert [o["verdict"] for o in objects] == ["valid", "valid", "invalid"]
    assert os.path.basename(objects[1]["file"]) == evil  # the name comes back exactly
    assert "\\u001b" in out.stdout and "\\u202e" in out.stdout
    c = objects[2]
    assert (c["class"], c["rule"], c["offset"]) == ("FRAME", "H2", 4)
    assert str(pytest.raises(kiln.KilnError, kiln.validate, bytes(bad)).value) == \
        f"FRAME H2 at byte 4: {c['message']}"

    out = run_cli(str(ok / "a.klnt"), str(tmp_path / "missing.klnt"), "--scheduler", address)
    assert out.returncode == 2
    assert "error: FileNotFoundError: [Errno 2] No such file or directory" in out.stdout
    assert run_cli("--workers", "0", str(ok)).returncode == 2  # usage
    for bad in ("0", "-1", "nan"):
        out = run_cli("--no-worker-timeout", bad, str(ok))
        assert out.returncode == 2 and "--no-worker-timeout must be positive" in out.stderr
    assert run_cli("--scheduler", "tcp://127.0.0.1:1", "--timeout", "1", str(ok),
                   env_extra={"DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "2s"}
                   ).returncode == 2  # no scheduler there


def test_command_line_starts_its_own_local_cluster(tmp_path):
    (tmp_path / "a.klnt").write_bytes(golden_path("kiln-v2-f32").read_bytes())
    out = run_cli(str(tmp_path), "--workers", "1", "--json")
    assert out.returncode == 0, out.stderr
    row = json.loads(out.stdout)
    assert row["verdict"] == "valid" and row["bytes_read"] > 0


def test_escape_bindings():
    assert _kiln.escape("a\\b\x1b\u202e\udce9") == "a\\\\b\\x1b\\u{202e}\\xe9"
    assert _kiln.json_escape("\"\x01\u2028é\udce9") == '\\"\\u0001\\u2028é\\udce9'
    assert _kiln.escape(b"\xff") == "\\xff"
    with pytest.raises(TypeError):
        _kiln.escape(3)


def test_a_content_length_of_non_ascii_digits_is_eio_not_a_crash():
    """A header is read as Latin-1, so byte 0xB2 is '\u00b2', which
    str.isdigit() takes for a digit and int() refuses: the reader must call
    it a misbehaving server (OSError EIO), not raise ValueError."""
    import http.server
    import threading

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_HEAD(self):
            self.send_response(200)
            self.send_header("Content-Length", "\u00b2\u00b3")
            self.end_headers()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with pytest.raises(OSError) as e:
            HTTPRangeFile("http://127.0.0.1:%d/x.klnt" % server.server_address[1])
        assert e.value.errno == errno.EIO
        assert "Content-Length" in str(e.value)
    finally:
        server.shutdown()
        server.server_close()
