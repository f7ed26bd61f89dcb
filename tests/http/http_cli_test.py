"""kiln validate URL and kiln inspect URL against real servers on loopback.

    python3 http_cli_test.py KILN GOLDEN_DIR golden|sparse|hostile|mutants [N] [SEED]

golden   every golden case served by nginx: validate, validate --json,
         inspect, inspect --json and inspect --map of the URL print what they
         print for the file (the name aside) and exit the same.
sparse   a sparse 10 GiB block (1,501 named tensors, the last one covering the
         hole) served by nginx: the same line as the file, and nginx sent
         under 1 MiB.
hostile  every mode of servers.Hostile: exit 2, a message naming the fault,
         nothing on stdout, within the timeouts; the well-behaved modes give
         the file's verdict. Untrusted text reaches the terminal escaped.
mutants  N mutants of the golden cases (default 1000), written to the folder
         nginx serves: `kiln validate --json URL...` equals
         `kiln validate --json FILE...` on each (verdict, class, rule, offset,
         tensor, message).

Exit 77 (ctest's SKIP_RETURN_CODE) when nginx is missing or kiln was built
without URL support.
"""

import concurrent.futures
import json
import os
import random
import re
import socket
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import servers  # noqa: E402

SKIP = 77
FAILURES = []


def fail(what):
    FAILURES.append(what)
    print("FAIL:", what, flush=True)


def run(kiln, *args, timeout=120):
    return subprocess.run([kiln, *args], capture_output=True, timeout=timeout)


def skip_if_unsupported(kiln):
    if not servers.nginx_available():
        print("skipped: no " + servers.NGINX)
        sys.exit(SKIP)
    r = run(kiln, "validate", "http://127.0.0.1:1/x.klnt")
    if b"not supported" in r.stderr:
        print("skipped: kiln was built without libcurl")
        sys.exit(SKIP)


def file_and_url(kiln, tmp, data, mode):
    """kiln validate on `data` written to a file in `tmp` and served by the
    hostile server in `mode`: (the file's run, the URL's run, the methods of
    the server's requests, whether exit and verdict agree but for the name)."""
    path = os.path.join(tmp, "f.klnt")
    with open(path, "wb") as f:
        f.write(data)
    want = run(kiln, "validate", path)
    with servers.Hostile(mode, data) as h:
        r = run(kiln, "validate", h.url)
        methods = [m for m, _, _ in h.requests]
    agree = r.returncode == want.returncode and \
        r.stdout.replace(h.url.encode(), b"<F>") == want.stdout.replace(path.encode(), b"<F>")
    return want, r, methods, agree


def same(kiln, args, path, url, what):
    """Runs kiln ARGS FILE and kiln ARGS URL; outputs equal but the name."""
    a = run(kiln, *args, path)
    b = run(kiln, *args, url)
    out_a = a.stdout.replace(path.encode(), b"<F>")
    out_b = b.stdout.replace(url.encode(), b"<F>")
    if a.returncode != b.returncode or out_a != out_b:
        fail("%s %s: file exit %d, URL exit %d\n  file: %r\n  url:  %r\n  url stderr: %r"
             % (what, " ".join(args), a.returncode, b.returncode, out_a[:400], out_b[:400],
                b.stderr[:400]))
        return False
    if a.returncode == 2:
        fail("%s %s: exit 2 for the file itself: %r" % (what, " ".join(args), a.stderr[:300]))
        return False
    return True


# ---- golden -----------------------------------------------------------------

def test_golden(kiln, golden):
    cases = os.path.join(golden, "cases")
    names = sorted(n for n in os.listdir(cases) if n.endswith(".klnt"))
    if len(names) < 100:
        fail("only %d golden cases in %s" % (len(names), cases))
    with servers.Nginx(cases) as web:
        paths = [os.path.join(cases, n) for n in names]
        urls = [web.url_for(n) for n in names]
        # validate: every case in one run, the line and the JSON form.
        for args in (["validate"], ["validate", "--json"]):
            a = run(kiln, *args, *paths)
            b = run(kiln, *args, *urls)
            out_a, out_b = a.stdout, b.stdout
            for p, u in zip(paths, urls):
                out_a = out_a.replace(p.encode(), b"<F>")
                out_b = out_b.replace(u.encode(), b"<F>")
            if a.returncode != 1 or b.returncode != a.returncode or out_a != out_b:
                la, lb = out_a.splitlines(), out_b.splitlines()
                diff = [(x, y) for x, y in zip(la, lb) if x != y][:5]
                fail("golden %s: exit %d (files) vs %d (URLs); first differences %r; stderr %r"
                     % (" ".join(args), a.returncode, b.returncode, diff, b.stderr[:300]))
        # inspect, one case at a time (two at once).
        jobs = [(args, p, u, n) for p, u, n in zip(paths, urls, names)
                for args in (["inspect"], ["inspect", "--json"], ["inspect", "--map"])]
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            list(pool.map(lambda j: same(kiln, j[0], j[1], j[2], j[3]), jobs))
        # Only GET and HEAD, each GET a single range.
        for r in web.requests():
            if r["method"] not in ("GET", "HEAD") or (r["method"] == "GET" and
                                                       not r["range"].startswith("bytes=")):
                fail("unexpected request %r" % r)
    print("golden: %d cases, validate (line, JSON) and inspect (table, JSON, map)" % len(names))


# ---- sparse 10 GiB ---------------------------------------------------------

def sparse_head(total):
    """The header and directory of a canonical named block shaped like a
    transformer's (150 layers: 4 projections of 4096 x 1536 bf16, 3 of
    1536 x 2048, 3 norms of 4096), then one u8 tensor "tail" covering the
    rest up to `total` bytes."""
    specs = []
    for layer in range(150):
        p = "l.%d." % layer
        specs += [(p + x + ".w", 16, [4096, 1536], 4096 * 1536 * 2) for x in "qkvo"]
        specs += [(p + x + ".w", 16, [1536, 2048], 1536 * 2048 * 2) for x in ("gate", "up", "down")]
        specs += [(p + x, 16, [4096], 4096 * 2) for x in ("n1", "n2", "n3")]
    n = len(specs) + 1
    heap = b"".join(s[0].encode() for s in specs) + b"tail"
    directory = 128 * n + len(heap)
    base = (64 + directory + 63) // 64 * 64
    covered = sum(s[3] for s in specs)  # every length is a multiple of 64
    tail = total - base - covered
    assert tail > 0 and tail % 1 == 0
    specs.append(("tail", 2, [tail], tail))
    b = bytearray(base)
    b[0:5] = b"KLNT\x02"
    b[5] = 0x03
    struct.pack_into("<I", b, 8, n)
    struct.pack_into("<I", b, 12, len(heap))
    struct.pack_into("<Q", b, 24, directory)
    cursor = name_off = 0
    for i, (name, dtype, shape, length) in enumerate(specs):
        d = 64 + 128 * i
        struct.pack_into("<HB", b, d, dtype, len(shape))
        struct.pack_into("<HH", b, d + 4, name_off, len(name))
        name_off += len(name)
        struct.pack_into("<H", b, d + 8, 0xFFFF)
        struct.pack_into("<H", b, d + 18, 0xFFFF)
        struct.pack_into("<II", b, d + 24, 0xFFFFFFFF, 0xFFFFFFFF)
        struct.pack_into("<QQ", b, d + 32, cursor, length)
        for k, dim in enumerate(shape):
            struct.pack_into("<Q", b, d + 48 + 8 * k, dim)
        cursor += length
    b[64 + 128 * n:64 + 128 * n + len(heap)] = heap
    struct.pack_into("<Q", b, 16, cursor)  # payload_bytes
    assert base + cursor == total
    return bytes(b)


def test_sparse(kiln, _golden):
    total = 10 << 30
    with tempfile.TemporaryDirectory(prefix="kiln-sparse-") as tmp:
        path = os.path.join(tmp, "big.klnt")
        with open(path, "wb") as f:
            f.write(sparse_head(total))
            f.truncate(total)
        with servers.Nginx(tmp) as web:
            url = web.url_for("big.klnt")
            t0 = time.monotonic()
            a = run(kiln, "validate", path)
            t1 = time.monotonic()
            mark = web.mark()
            b = run(kiln, "validate", url)
            t2 = time.monotonic()
            sent = web.bytes_sent(mark)
            n_requests = len(web.requests(mark))
            line_a = a.stdout.replace(path.encode(), b"<F>")
            line_b = b.stdout.replace(url.encode(), b"<F>")
            if a.returncode != 0 or line_a != b"<F>: ok\n":
                fail("the sparse block is not valid: %r %r" % (a.stdout, a.stderr))
            if b.returncode != a.returncode or line_a != line_b:
                fail("sparse: URL %r (exit %d, %r) vs file %r" % (line_b, b.returncode,
                                                                    b.stderr[:300], line_a))
            if sent >= 1 << 20:
                fail("sparse: nginx sent %d bytes (at least 1 MiB)" % sent)
            same(kiln, ["inspect"], path, url, "big.klnt")
            print("sparse: %d-byte file; local %.3f s; URL %.3f s, %d requests, %d bytes sent"
                  % (total, t1 - t0, t2 - t1, n_requests, sent))


# ---- hostile ---------------------------------------------------------------

IDLE = 2  # --idle-timeout in the hostile runs
# mode -> a piece of the message that names the fault
EXPECT = {
    "ignore-range": b"ignored the range request for bytes 0-63 (HTTP 200)\n",
    "wrong-total": b"Content-Range: bytes 64-",
    "wrong-start": b"Content-Range: bytes 1-64/",
    "short": b"announced Content-Length 63 for 64 bytes",
    "short-close": b"transfer closed",
    "short-nolen": b"sent 63 of the 64 bytes asked for bytes 0-63\n",
    "long": b"announced Content-Length 80 for 64 bytes",
    "long-nolen": b"the server sent more bytes than asked for bytes 0-63 (64 bytes asked)",
    "gzip": b"Content-Encoding: gzip",
    "changes": b'changed on the server (ETag "v1", then "v2")',
    "changes-lm": b"changed on the server (Last-Modified",
    "changes-evil": b"changed on the server (ETag",
    "drip": b"under 1024 bytes/s for 2 s (--idle-timeout)",
    "stall": b"under 1024 bytes/s for 2 s (--idle-timeout)",
    "endless": b"the server sent more bytes than asked for bytes 0-63 (64 bytes asked)",
    "endless-200": b"ignored the range request",
    "redirect-loop": b"more than 5 redirects",
    "redirect-file": b"only http:// and https:// are followed",
    "redirect-ftp": b"only http:// and https:// are followed",
    "404": b"answered HTTP 404 to a request for bytes 0-63\n",
    "429": b"answered HTTP 429 to a request for bytes 0-",
    "500": b"answered HTTP 500",
    "no-size": b"Content-Range: bytes 0-63/* for bytes 0-63",
    "junk-number": b"x for bytes 64-",
    "status-space": b"answered a status line without a status code (HTTP/1.1  206 Partial Content)"
                    b" to a request for bytes 0-",
    "status-suffix": b"answered a status line without a status code (HTTP/1.1 206x Partial "
                     b"Content) to a request for bytes 0-",
    "colonless": b"HTTP request failed: Header without colon",
    "etag-appears": b"changed on the server (a validator appeared that the first reply lacked)",
    "two-etags": b"the server sent two different etag headers",
    "later-200": b"the server ignored the range request for bytes 64-",
    "later-503": b"the server answered HTTP 503 to a request for bytes 64-",
    "later-no-range": b"the server's partial reply has no Content-Range",
    "later-short": b"the server announced Content-Length ",
    "two-etags-first": b"the server sent two different etag headers",
    "trickle-bad": b"Content-Range: bytes 1-64/",
    "later-empty-503": b"the server answered HTTP 503 to a request for bytes 64-",
    "later-short-nolen": b"bytes asked for bytes 64-",
    "trickle-long": b"the server sent more bytes than asked for bytes 0-63 (64 bytes asked)",
}
# page-416 and page-416-long differ only for an empty file (below).
BEHAVES = ("good", "redirect-once", "ows", "zeros", "no-reason", "page-416", "page-416-long",
           "tight", "later-nolen", "page-416-trickle")
# Modes whose refused reply goes on one byte per write: kiln must stop
# reading at once (curl hands it each byte alone), never read on to the end.
TRICKLES = ("trickle-bad", "trickle-long")


def test_hostile(kiln, golden):
    missing = set(servers.HOSTILE_MODES) - set(EXPECT) - set(BEHAVES)
    if missing:
        fail("hostile modes without a test: %s" % sorted(missing))
    cases = os.path.join(golden, "cases")
    # A valid block and a rejected one, each longer than the 64-byte header,
    # so the faults hit a ranged GET after the HEAD.
    for name in ("kiln-v2-f32.klnt", "q7-outer-self.klnt"):
        path = os.path.join(cases, name)
        if not os.path.exists(path):
            fail("missing golden case " + name)
            continue
        with open(path, "rb") as f:
            body = f.read()
        want = run(kiln, "validate", path)
        want_line = want.stdout.replace(path.encode(), b"<F>")
        for mode in servers.HOSTILE_MODES:
            for cmd in (["validate"], ["inspect"]):
                # A server per run: "changes" changes after its first request.
                with servers.Hostile(mode, body) as bad:
                    t0 = time.monotonic()
                    # A trickle is 50 bytes/s: under curl's low-speed limit, which
                    # would stop a kiln that reads on before the trickle ends.
                    idle = 10 if mode in TRICKLES else IDLE
                    r = run(kiln, *cmd, "--idle-timeout", str(idle), bad.url, timeout=60)
                    took = time.monotonic() - t0
                    trickle = bad.trickle_end() if mode in TRICKLES else None
                what = "%s %s %s" % (name, mode, cmd[0])
                if mode in TRICKLES and trickle != "cut":
                    fail("%s: the trickled body ended %r: kiln read on after it refused the "
                         "reply" % (what, trickle))
                if mode in BEHAVES:
                    if cmd == ["validate"] and (r.returncode != want.returncode or
                                                r.stdout.replace(bad.url.encode(), b"<F>")
                                                != want_line):
                        fail("%s: %r (exit %d), file: %r" % (what, r.stdout, r.returncode,
                                                              want_line))
                    continue
                if r.returncode != 2 or r.stdout != b"":
                    fail("%s: exit %d, stdout %r (a verdict on a bad server)"
                         % (what, r.returncode, r.stdout[:200]))
                if not r.stderr.startswith(b"kiln: " + bad.url.encode() + b": "):
                    fail("%s: stderr %r" % (what, r.stderr[:300]))
                if EXPECT[mode] not in r.stderr:
                    fail("%s: stderr %r lacks %r" % (what, r.stderr[:300], EXPECT[mode]))
                short = re.search(rb"sent ([0-9]+) of the ([0-9]+) bytes asked for bytes 64-([0-9]+)\n",
                                  r.stderr)
                if mode == "later-short-nolen" and not (
                        short and int(short[1]) + 1 == int(short[2]) == int(short[3]) - 63):
                    fail("%s: stderr %r does not say one byte of the range was missing"
                         % (what, r.stderr))
                if mode in ("wrong-total", "junk-number") and \
                        not r.stderr.endswith(b" (the size it gave first)\n"):
                    fail("%s: stderr %r does not end with the size it gave" % (what, r.stderr))
                limit = IDLE + 3 if mode in ("drip", "stall") else 5
                if took > limit:
                    fail("%s: took %.1f s (limit %d)" % (what, took, limit))
    # --idle-timeout 1, the smallest: a stalled reply is given up on too.
    with servers.Hostile("stall", body) as bad:
        r = run(kiln, "validate", "--idle-timeout", "1", bad.url, timeout=60)
    if r.returncode != 2 or b"under 1024 bytes/s for 1 s (--idle-timeout)" not in r.stderr:
        fail("stall, --idle-timeout 1: exit %d %r" % (r.returncode, r.stderr[:300]))
    # An empty file (416 with bytes */0) and a 10-byte one (206 bytes 0-9/10):
    # the size comes from the first reply; the verdict is the file's.
    with tempfile.TemporaryDirectory(prefix="kiln-short-") as tmp:
        for body in (b"", body[:10]):
            want, r, statuses, agree = file_and_url(kiln, tmp, body, "good")
            if not agree or want.returncode != 1:
                fail("%d-byte file: URL %r (exit %d, %r), file %r" % (
                    len(body), r.stdout, r.returncode, r.stderr, want.stdout))
            if statuses != ["GET"]:
                fail("%d-byte file: requests %r, want one GET" % (len(body), statuses))
        # The empty file's 416 with an error page: a page of 64 KiB is
        # discarded and the verdict is the file's; one byte more is refused.
        # A page that goes on one byte per write past 64 KiB: the same, and
        # kiln stops at the first byte too many.
        for mode in ("page-416", "page-416-long", "page-416-trickle"):
            with servers.Hostile(mode, b"") as h:
                r = run(kiln, "validate", h.url)
                trickle = h.trickle_end() if mode == "page-416-trickle" else "cut"
            if mode == "page-416":
                ok = r.returncode == 1 and b"FRAME H1 at byte 0: buffer holds 0 bytes" in r.stdout
            else:
                ok = r.returncode == 2 and not r.stdout and trickle == "cut" and \
                    b"the server's error page goes on past 64 KiB" in r.stderr
            if not ok:
                fail("empty file, %s: exit %d %r %r (trickle: %r)" % (mode, r.returncode, r.stdout,
                                                                     r.stderr, trickle))
    # A connection refused: exit 2 at once.
    with servers.Hostile("good", b"") as h:
        closed = h.url  # nothing listens there once the block ends
    r = run(kiln, "validate", closed)
    if r.returncode != 2 or r.stdout or b"HTTP request failed" not in r.stderr:
        fail("refused connection: exit %d %r %r" % (r.returncode, r.stdout, r.stderr))
    # Untrusted text escaped: control and bidi characters in the URL, and in
    # a server's header (an ETag) never reach the terminal raw.
    url = closed.replace("file.klnt", "\x1b[31mred\u202e.klnt")
    r = run(kiln, "validate", url)
    if r.returncode != 2 or r.stdout or b"\x1b" in r.stderr or "\u202e".encode() in r.stderr:
        fail("escaping the URL: exit %d %r %r" % (r.returncode, r.stdout, r.stderr))
    if b"\\x1b[31mred\\u{202e}" not in r.stderr.lower():
        fail("the URL is not shown escaped: %r" % r.stderr)
    with open(os.path.join(cases, "kiln-v2-f32.klnt"), "rb") as f:
        body = f.read()
    with servers.Hostile("changes-evil", body) as bad:
        r = run(kiln, "validate", bad.url)
    if r.returncode != 2 or b"\x1b" in r.stderr or "\u202e".encode() in r.stderr:
        fail("escaping an ETag: exit %d %r" % (r.returncode, r.stderr))
    # Its first 160 bytes, escaped ('"v2', ESC, '[2J', U+202E's 3 bytes: 10,
    # then 150 of the 400 x's), and "..." for the cut.
    if b'then "v2\\x1b[2j\\u{202e}' + b"x" * 150 + b"..." not in r.stderr.lower() \
            or b"x" * 151 in r.stderr:
        fail("the ETag is not shown escaped and cut at 160 bytes: %r" % r.stderr)
    # A URL of a scheme other than http/https is a local file name.
    r = run(kiln, "validate", "ftp://127.0.0.1/x.klnt")
    if r.returncode != 2 or b"ftp" not in r.stderr:
        fail("ftp URL: %d %r" % (r.returncode, r.stderr))
    test_faults(kiln, body)
    test_requests(kiln, golden)
    print("hostile: %d modes x 2 blocks x 2 commands" % len(servers.HOSTILE_MODES))


def test_requests(kiln, golden):
    """What kiln asks for: every request after the first carries If-Range
    (the strong ETag, else the Last-Modified date: changes-lm has no ETag),
    and goes where a redirect ended (the 302 is followed once). A server
    that ignores Range is taken at its word for a file of at most the 64
    bytes asked (a 200 with the whole file), whose verdict is the file's;
    one more byte is refused."""
    with open(os.path.join(golden, "cases", "kiln-v2-f32.klnt"), "rb") as f:
        body = f.read()
    for mode, want in (("good", '"v1"'), ("changes-lm", servers._DATE_V1),
                       ("redirect-once", '"v1"')):
        with servers.Hostile(mode, body) as h:
            r = run(kiln, "validate", h.url)
            log = list(h.requests)
        later = log[2:] if mode == "redirect-once" else log[1:]
        if mode != "changes-lm" and r.returncode != 0:
            fail("%s: exit %d %r" % (mode, r.returncode, r.stderr[:300]))
        if not later or any(headers.get("If-Range") != want for _, _, headers in later):
            fail("%s: If-Range of the later requests %r, want %r"
                 % (mode, [headers.get("If-Range") for _, _, headers in later], want))
        if mode == "redirect-once" and [p for _, p, _ in log[1:]] != ["/real.klnt"] * (len(log) - 1):
            fail("redirect-once: requests %r (the redirect followed more than once)"
                 % [p for _, p, _ in log])
    with tempfile.TemporaryDirectory(prefix="kiln-whole-") as tmp:
        for size in (10, 64, 65):
            want, r, _, agree = file_and_url(kiln, tmp, body[:size], "ignore-range")
            if size <= 64:
                ok = agree
            else:
                ok = r.returncode == 2 and not r.stdout and EXPECT["ignore-range"] in r.stderr
            if not ok:
                fail("a %d-byte file, Range ignored: exit %d %r %r (file: %r)"
                     % (size, r.returncode, r.stdout, r.stderr[:300], want.stdout))
    # The second header list (If-Range) cannot be made: out of memory.
    with servers.Hostile("good", body) as h:
        r = faulted(kiln, ["validate", h.url], KILN_TEST_FAIL="curl_slist_append:2:12")
    if r is not None and (r.returncode != 2 or r.stdout or
                          not r.stderr.endswith(b": out of memory\n")):
        fail("If-Range out of memory: exit %d %r %r" % (r.returncode, r.stdout, r.stderr[:300]))


def faulted(kiln, args, **variables):
    """kiln ARGS with tests/support/fault_preload.cc preloaded (its path in
    KILN_FAULT_PRELOAD, set by ctest) and its variables set."""
    preload = os.environ.get("KILN_FAULT_PRELOAD")
    if not preload or not os.path.exists(preload):
        fail("KILN_FAULT_PRELOAD names no library: %r" % preload)
        return None
    asan = os.environ.get("ASAN_OPTIONS", "")
    env = dict(os.environ, LD_PRELOAD=preload, **variables,
               ASAN_OPTIONS=(asan + ":" if asan else "") + "verify_asan_link_order=0")
    return subprocess.run([kiln, *args], capture_output=True, timeout=60, env=env)


def test_faults(kiln, body):
    """What only a fault placed in kiln's process shows: every curl handle
    and header list kiln makes is freed, whatever the server did (a leak the
    default build cannot see otherwise); curl_easy_init and the header list's
    allocation failing are I/O errors; a connection that never completes
    (a listening socket whose queue is full drops the handshake) is given
    up after --idle-timeout seconds, and the message says so."""
    with tempfile.TemporaryDirectory(prefix="kiln-faults-") as tmp:
        ledger = os.path.join(tmp, "ledger")
        for mode in ("good", "404", "changes", "ignore-range", "short-close"):
            for cmd in ("validate", "inspect"):
                if os.path.exists(ledger):
                    os.remove(ledger)
                with servers.Hostile(mode, body) as h:
                    r = faulted(kiln, [cmd, "--idle-timeout", str(IDLE), h.url],
                                KILN_TEST_CURL_LEDGER=ledger)
                if r is None:
                    return
                want = 0 if mode == "good" else 2
                got = open(ledger).read() if os.path.exists(ledger) else None
                if r.returncode != want or got != "easy 1 1\nslist 1 1\n":
                    fail("%s %s: exit %d, curl handles and lists made and freed %r (want 1 "
                         "each): %r" % (mode, cmd, r.returncode, got, r.stderr[:300]))
    for fault, says in (("curl_easy_init:1:12", b"cannot start an HTTP client "
                                                b"(curl_easy_init failed)\n"),
                        ("curl_slist_append:1:12", b": out of memory\n")):
        with servers.Hostile("good", body) as h:
            r = faulted(kiln, ["validate", h.url], KILN_TEST_FAIL=fault)
        if r.returncode != 2 or r.stdout or not r.stderr.endswith(says):
            fail("%s: exit %d %r %r" % (fault, r.returncode, r.stdout, r.stderr[:300]))
    # A listening socket with a backlog of 0 takes one connection into its
    # queue; while nobody accepts it, the kernel drops the next handshakes.
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        port = listener.getsockname()[1]
        queued = []
        for _ in range(3):
            c = socket.socket()
            c.setblocking(False)
            c.connect_ex(("127.0.0.1", port))
            queued.append(c)
        time.sleep(0.2)
        t0 = time.monotonic()
        r = run(kiln, "validate", "--idle-timeout", "1", "http://127.0.0.1:%d/x.klnt" % port,
                timeout=60)
        took = time.monotonic() - t0
        for c in queued:
            c.close()
    if r.returncode != 2 or r.stdout or b": timed out (connect timeout 1 s): " not in r.stderr \
            or took > 10:
        fail("a connect that never completes, --idle-timeout 1: exit %d in %.1f s, %r"
             % (r.returncode, took, r.stderr[:300]))


# ---- mutants ---------------------------------------------------------------

def mutate(rng, data):
    b = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        op = rng.random()
        if op < 0.45 and b:  # a byte, mostly in the header and directory
            hot = min(len(b), 64 + 128 * 4)
            i = rng.randrange(hot) if rng.random() < 0.8 else rng.randrange(len(b))
            b[i] = rng.randrange(256)
        elif op < 0.65 and len(b) >= 8:  # a whole field, to an edge value
            i = rng.randrange(0, len(b) - 7) & ~7 if rng.random() < 0.7 else rng.randrange(len(b) - 7)
            v = rng.choice([0, 1, 63, 64, 65, len(b), len(b) - 1, len(b) + 1, 0xFFFF, 2**32 - 1,
                            2**63, 2**64 - 1, rng.randrange(2**64)])
            width = rng.choice([1, 2, 4, 8])
            b[i:i + width] = (v % (1 << (8 * width))).to_bytes(width, "little")
        elif op < 0.8:  # cut
            del b[rng.randrange(len(b) + 1):]
        elif op < 0.9:  # extend (H8), zeros or noise
            extra = rng.randint(1, 200)
            b += bytes(extra) if rng.random() < 0.5 else rng.randbytes(extra)
        elif b:  # a payload byte set (P2 in a gap, or a covered byte)
            i = rng.randrange(len(b))
            b[i] = rng.randrange(1, 256)
    return bytes(b)


def test_mutants(kiln, golden, count=1000, seed=23):
    cases = os.path.join(golden, "cases")
    seeds = []
    for n in sorted(os.listdir(cases)):
        with open(os.path.join(cases, n), "rb") as f:
            seeds.append(f.read())
    rng = random.Random(seed)
    rejected = 0
    with tempfile.TemporaryDirectory(prefix="kiln-mutants-") as tmp:
        names = []
        for i in range(count):
            name = "m%05d.klnt" % i
            with open(os.path.join(tmp, name), "wb") as f:
                f.write(mutate(rng, rng.choice(seeds)))
            names.append(name)
        t0 = time.monotonic()
        with servers.Nginx(tmp) as web:
            for at in range(0, count, 500):
                batch = names[at:at + 500]
                paths = [os.path.join(tmp, n) for n in batch]
                urls = [web.url_for(n) for n in batch]
                a = run(kiln, "validate", "--json", *paths, timeout=600)
                b = run(kiln, "validate", "--json", *urls, timeout=600)
                if a.returncode == 2 or b.returncode != a.returncode:
                    fail("mutants %d..: exit %d (file) vs %d (URL): %r" % (
                        at, a.returncode, b.returncode, b.stderr[:300]))
                ja, jb = json.loads(a.stdout), json.loads(b.stdout)
                if len(ja) != len(batch) or len(jb) != len(batch):
                    fail("mutants %d..: %d / %d rows" % (at, len(ja), len(jb)))
                    continue
                for name, x, y in zip(batch, ja, jb):
                    x.pop("file"), y.pop("file")
                    rejected += not x["ok"]
                    if x != y:
                        fail("mutant %s: file %r, URL %r" % (name, x, y))
        took = time.monotonic() - t0
    if rejected == 0 or rejected == count:
        fail("the mutants are all %s: the comparison proves little"
             % ("valid" if rejected == 0 else "rejected"))
    print("mutants: %d (%d rejected), file and URL agree; %.1f s" % (count, rejected, took))


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    kiln, golden, what = sys.argv[1], sys.argv[2], sys.argv[3]
    skip_if_unsupported(kiln)
    if what == "golden":
        test_golden(kiln, golden)
    elif what == "sparse":
        test_sparse(kiln, golden)
    elif what == "hostile":
        test_hostile(kiln, golden)
    elif what == "mutants":
        count = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
        seed = int(sys.argv[5]) if len(sys.argv) > 5 else 23
        test_mutants(kiln, golden, count, seed)
    else:
        sys.exit(__doc__)
    if FAILURES:
        print("%d failures" % len(FAILURES))
        sys.exit(1)


if __name__ == "__main__":
    main()
