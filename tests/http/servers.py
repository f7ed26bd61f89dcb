"""HTTP servers for tests on loopback: Debian's nginx and a hostile server.

Python 3, standard library only (run with /usr/bin/python3). Import it by
adding this folder to sys.path:

    sys.path.insert(0, "<repo>/tests/http")
    import servers

nginx
-----
    with servers.Nginx(root_dir) as web:
        web.url                  # "http://127.0.0.1:PORT" (no trailing slash)
        web.url_for("a.klnt")    # web.url + "/a.klnt" (the name percent-quoted)
        mark = web.mark()        # the number of requests logged so far
        ...                      # fetch something
        web.bytes_sent(mark)     # body bytes nginx sent since `mark`
        web.requests(mark)       # [{"method", "uri", "status", "bytes", "range"}]

Starts `/usr/sbin/nginx -c TMP/nginx.conf -p TMP` in the foreground
(`daemon off; master_process off;`, so it works as root and as another user)
on 127.0.0.1 and a free port, serving `root_dir` as static files (ETag,
Last-Modified, byte ranges and If-Range as nginx does them; no gzip). The
access log records `$body_bytes_sent` per request; bytes_sent() and
requests() wait until nginx has logged every finished request (the log line
is written just after the last byte is sent). Leaving the block stops nginx
and removes TMP. servers.nginx_available() says whether nginx is installed;
Nginx(...) raises NginxError if it cannot start.

The hostile server
------------------
    with servers.Hostile(mode, body) as bad:
        bad.url                  # "http://127.0.0.1:PORT/file.klnt"
        bad.requests             # [(method, path, {header: value})], as received

Serves `body` (bytes) at every path, answering HEAD and GET, with Range,
ETag ("v1") and Last-Modified as a well-behaved server does, except for what
`mode` changes (servers.HOSTILE_MODES lists them):

    "good"          behaves (a control for the tests)
    "ignore-range"  answers a ranged GET with 200 and the whole body
    "wrong-total"   206 whose Content-Range total is the size + 1000, from the
                    second request on (the first one tells the true size)
    "wrong-start"   206 whose Content-Range names a range other than the asked one
    "short"         206 with the asked Content-Range but one byte fewer
                    (Content-Length says so too)
    "short-close"   206 with Content-Length and Content-Range of the asked
                    range, then closes the connection one byte early
    "short-nolen"   206 with the asked Content-Range, no Content-Length,
                    one byte fewer, then the connection closes
    "long"          206 with the asked Content-Range and 16 more bytes
                    (Content-Length says so too)
    "long-nolen"    as "long" without Content-Length (the connection closes)
    "gzip"          206 with Content-Encoding: gzip and the range gzipped
    "changes"       the first request sees version 1 (ETag "v1", body);
                    later ones version 2 (ETag "v2", Last-Modified a day
                    later, body with its last byte flipped); an If-Range that
                    does not match "v2" gets 200 and the whole new body
    "changes-lm"    as "changes" but with Last-Modified only (no ETag)
    "changes-evil"  as "changes" with the ETag "v2<ESC>[2J<U+202E>xxx..." (400 x; a
                    terminal control and a bidi override: must be escaped)
    "drip"          206 headers at once, then the body one byte per second
    "stall"         206 headers at once, then nothing, for ever
    "endless"       206 with the asked Content-Range, no Content-Length,
                    then an endless body until the client goes away
    "endless-200"   200, no Content-Length, an endless body
    "redirect-once" 302 from any path but /real.klnt to /real.klnt, which
                    behaves (redirects work)
    "ows"           behaves, with optional whitespace (" \t ") after every
                    header value and header names in upper case (RFC 9110
                    5.5 and 5.1: a reader must accept both)
    "junk-number"   206 whose Content-Range total has a letter after it
                    ("bytes 0-63/292x"), from the second request on
    "zeros"         behaves, every number of Content-Length and Content-Range
                    written with leading zeros to 24 digits (1*DIGIT allows
                    them)
    "redirect-loop" 302 to another path, which redirects back, for ever
    "redirect-file" 302 to file:///etc/passwd
    "redirect-ftp"  302 to ftp://127.0.0.1:PORT/file.klnt
    "404", "429", "500"  that status on every request
    "no-size"       HEAD without Content-Length; 206 with Content-Range
    "status-space"  behaves, but every status line has two spaces before its
                    code ("HTTP/1.1  206 Partial Content"; curl reads 206)
    "status-suffix" behaves, but every status code has a letter after it
                    ("HTTP/1.1 206x Partial Content"; curl reads 206)
    "no-reason"     behaves, with an empty reason phrase ("HTTP/1.1 206 ":
                    RFC 9112 section 4 allows it)
    "page-416"      behaves; the 416 that says a file is empty carries an
                    error page of 64 KiB, the most kiln discards
    "page-416-long" as "page-416" with a page one byte longer: refused
    "etag-appears"  the first reply has no ETag, later ones have one (the same
                    Last-Modified throughout): a validator that appeared
    "two-etags"     from the second request on, two ETag headers ("v1", "v1b")
    "later-200"     from the second request on, 200 and the whole body (the
                    range ignored after the first reply honoured it)
    "later-503"     from the second request on, 503
    "later-no-range" from the second request on, 206 without Content-Range
    "later-short"   as "short" from the second request on
    "two-etags-first" two ETag headers in the first reply only
    "tight"         behaves, every header written without the space after its
                    colon ("Content-Range:bytes 0-63/200"; the space is optional)
    "later-nolen"   behaves; from the second request on, 206 without
                    Content-Length, the part delimited by closing the connection
    "colonless"     behaves, with five more header lines that are only the
                    name of a header kiln reads ("ETag", "Content-Range",
                    ...: no colon; curl refuses the reply, "Header without
                    colon", before kiln's header callback sees the line)
                    total "*" ("bytes 0-63/*")
    "trickle-bad"   206 whose Content-Range starts a byte late (as wrong-start),
                    its body then sent one byte per write, 20 ms apart, with
                    250 bytes more than the range: a reader that refused the
                    reply must stop at its first byte, not read on
    "trickle-long"  206 with the asked Content-Range and no Content-Length,
                    the part at once, then 250 bytes more, one byte per write
    "page-416-trickle" behaves; the 416 that says a file is empty carries an
                    error page of 64 KiB at once and then 250 bytes more,
                    one byte per write
    "later-empty-503" from the second request on, 503 with no body
                    (Content-Length: 0): the reply is judged by its headers
    "later-short-nolen" from the second request on, 206 without
                    Content-Length, one byte short, delimited by the close
    For the trickle modes, `trickle` says how the body ended: "cut" (the
    client went away first), "whole" (every byte was sent); trickle_end()
    waits for it.

`size` of the ranged replies is len(body). The server runs in threads; the
block stops it (open connections are closed, dripping threads end).
"""

import contextlib
import email.utils
import gzip
import http.server
import os
import re
import shutil
import signal
import socket
import socketserver
import subprocess
import tempfile
import threading
import time
import urllib.parse

NGINX = "/usr/sbin/nginx"


def nginx_available():
    return os.access(NGINX, os.X_OK)


class NginxError(RuntimeError):
    pass


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_listening(port, proc, deadline):
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return True
        except OSError:
            time.sleep(0.02)
    return False


_NGINX_CONF = """\
daemon off;
master_process off;
worker_processes 1;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log warn;
events {{ worker_connections 256; }}
http {{
  default_type application/octet-stream;
  log_format kiln '$request_method $uri $status $body_bytes_sent "$http_range"';
  access_log {tmp}/access.log kiln;
  client_body_temp_path {tmp}/body;
  proxy_temp_path {tmp}/proxy;
  fastcgi_temp_path {tmp}/fastcgi;
  uwsgi_temp_path {tmp}/uwsgi;
  scgi_temp_path {tmp}/scgi;
  sendfile on;
  gzip off;
  keepalive_timeout 30;
  server {{
    listen 127.0.0.1:{port};
    server_name localhost;
    root {root};
    location / {{ }}
  }}
}}
"""

_LOG_LINE = re.compile(r'^(\S+) (\S+) (\d+) (\d+) "(.*)"$')


class Nginx:
    """Debian's nginx serving `root` on 127.0.0.1 (see the module's doc)."""

    def __init__(self, root, start_timeout=10.0):
        self.root = os.path.abspath(root)
        self.start_timeout = start_timeout
        self.url = None
        self._tmp = None
        self._proc = None

    def __enter__(self):
        if not nginx_available():
            raise NginxError(NGINX + " is not installed")
        self._tmp = tempfile.mkdtemp(prefix="kiln-nginx-")
        try:
            for _ in range(5):  # the port may be taken between probe and bind
                port = _free_port()
                conf = os.path.join(self._tmp, "nginx.conf")
                with open(conf, "w") as f:
                    f.write(_NGINX_CONF.format(tmp=self._tmp, port=port, root=self.root))
                open(os.path.join(self._tmp, "access.log"), "w").close()
                self._proc = subprocess.Popen(
                    [NGINX, "-c", conf, "-p", self._tmp + "/"],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE)
                deadline = time.monotonic() + self.start_timeout
                if _wait_listening(port, self._proc, deadline):
                    self.url = "http://127.0.0.1:%d" % port
                    return self
                self._stop()
            raise NginxError("nginx did not start: " + self._error_log())
        except BaseException:
            self._stop()
            shutil.rmtree(self._tmp, ignore_errors=True)
            raise

    def __exit__(self, *exc):
        self._stop()
        shutil.rmtree(self._tmp, ignore_errors=True)
        return False

    def _stop(self):
        p, self._proc = self._proc, None
        if p is None:
            return
        if p.poll() is None:
            p.send_signal(signal.SIGQUIT)  # graceful: finish logging
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        if p.stderr:
            p.stderr.close()

    def _error_log(self):
        try:
            with open(os.path.join(self._tmp, "error.log"), errors="replace") as f:
                return f.read()[-2000:]
        except OSError:
            return ""

    def url_for(self, name):
        return self.url + "/" + urllib.parse.quote(name)

    def _read_log(self):
        out = []
        with open(os.path.join(self._tmp, "access.log"), errors="replace") as f:
            for line in f:
                m = _LOG_LINE.match(line.rstrip("\n"))
                if m:
                    out.append({"method": m.group(1), "uri": m.group(2),
                                "status": int(m.group(3)), "bytes": int(m.group(4)),
                                "range": m.group(5)})
        return out

    def _settled_log(self):
        # nginx logs a request once its last byte is sent; a client may see
        # that byte first. Wait until two reads 50 ms apart agree.
        last = self._read_log()
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            time.sleep(0.05)
            now = self._read_log()
            if len(now) == len(last):
                return now
            last = now
        return last

    def mark(self):
        return len(self._settled_log())

    def requests(self, since=0):
        return self._settled_log()[since:]

    def bytes_sent(self, since=0):
        return sum(r["bytes"] for r in self.requests(since))


# ---- The hostile server ----------------------------------------------------

HOSTILE_MODES = (
    "good", "ignore-range", "wrong-total", "wrong-start", "short", "short-close", "short-nolen",
    "long", "long-nolen",
    "gzip", "changes", "changes-lm", "changes-evil", "drip", "stall", "endless", "endless-200",
    "redirect-once", "redirect-loop", "redirect-file", "redirect-ftp", "404", "429", "500",
    "no-size", "ows", "zeros", "junk-number", "status-space", "status-suffix", "no-reason",
    "colonless", "page-416", "page-416-long", "etag-appears", "two-etags",
    "later-200", "later-503", "later-no-range", "later-short", "two-etags-first", "tight",
    "later-nolen", "trickle-bad", "trickle-long", "page-416-trickle", "later-empty-503",
    "later-short-nolen",
)
TRICKLE_BYTES = 250  # the bytes past what a trickle mode's reply may hold

_RANGE = re.compile(r"^bytes=(\d+)-(\d*)$")
_DATE_V1 = email.utils.formatdate(1_700_000_000, usegmt=True)
_DATE_V2 = email.utils.formatdate(1_700_086_400, usegmt=True)


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, owner):
        self.owner = owner
        super().__init__(("127.0.0.1", 0), _Handler)


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "hostile/1"

    def log_message(self, *args):  # quiet
        pass

    def do_HEAD(self):
        self._answer(head=True)

    def do_GET(self):
        self._answer(head=False)

    def _send(self, status, headers, body=b"", head=False):
        mode = self.server.owner.mode
        if mode == "status-space":  # the line's version field, then its separator
            self.protocol_version = "HTTP/1.1 "
            self.send_response(status)
            self.protocol_version = "HTTP/1.1"
        elif mode == "status-suffix":  # send_response, with a letter after the code
            self.log_request(status)
            if not hasattr(self, "_headers_buffer"):
                self._headers_buffer = []
            self._headers_buffer.append(b"HTTP/1.1 %dx %s\r\n"
                                        % (status, self.responses[status][0].encode()))
            self.send_header("Server", self.version_string())
            self.send_header("Date", self.date_time_string())
        elif mode == "no-reason":
            self.send_response(status, "")
        else:
            self.send_response(status)
        ows = self.server.owner.mode == "ows"
        if self.server.owner.mode == "zeros":
            headers = [(k, re.sub(r"[0-9]+", lambda d: d.group(0).zfill(24), v)
                        if k in ("Content-Length", "Content-Range") else v) for k, v in headers]
        for k, v in headers:
            if mode == "tight":  # no space after the colon (RFC 9110 5.6.3: OWS is optional)
                self._headers_buffer.append(("%s:%s\r\n" % (k, v)).encode("latin-1"))
                continue
            self.send_header(k.upper() if ows else k, v + " \t " if ows else v)
        if mode == "colonless":  # lines that are only the names of headers kiln reads
            for name in (b"ETag", b"Last-Modified", b"Content-Range", b"Content-Length",
                         b"Content-Encoding"):
                self._headers_buffer.append(name + b"\r\n")
        self.end_headers()
        if not head and body:
            self.wfile.write(body)
        self.wfile.flush()

    def _answer(self, head):
        owner = self.server.owner
        with owner.lock:
            owner.requests.append((self.command, self.path, dict(self.headers.items())))
            n = len(owner.requests)
        mode = owner.mode
        body = owner.body
        etag, date = '"v1"', _DATE_V1
        if mode in ("changes", "changes-lm", "changes-evil") and n > 1:
            body = owner.body[:-1] + bytes([owner.body[-1] ^ 0xFF]) if owner.body else b"x"
            etag, date = '"v2"', _DATE_V2
            if mode == "changes-evil":  # header text goes out as latin-1: UTF-8 bytes
                # and long: kiln shows at most 160 bytes of a server's text.
                etag = '"v2\x1b[2J' + "\u202e".encode().decode("latin-1") + "x" * 400 + '"'
        validators = [("Last-Modified", date)]
        if mode != "changes-lm" and not (mode == "etag-appears" and n == 1):
            validators.append(("ETag", etag))
        if (mode == "two-etags" and n > 1) or (mode == "two-etags-first" and n == 1):
            validators.append(("ETag", '"v1b"'))
        size = len(body)

        if mode in ("404", "429", "500"):
            text = b"no\n"
            return self._send(int(mode), [("Content-Length", str(len(text)))], text, head)
        if mode == "redirect-once" and self.path != "/real.klnt":
            return self._send(302, [("Location", "/real.klnt"), ("Content-Length", "0")],
                              head=True)
        if mode == "redirect-loop":
            to = "/b" if self.path != "/b" else "/a"
            return self._send(302, [("Location", to), ("Content-Length", "0")], head=True)
        if mode == "redirect-file":
            return self._send(302, [("Location", "file:///etc/passwd"), ("Content-Length", "0")],
                              head=True)
        if mode == "redirect-ftp":
            port = self.server.server_address[1]
            return self._send(302, [("Location", "ftp://127.0.0.1:%d/file.klnt" % port),
                                    ("Content-Length", "0")], head=True)

        common = [("Accept-Ranges", "bytes")] + validators
        if head:
            if mode == "no-size":
                return self._send(200, common, head=True)
            return self._send(200, common + [("Content-Length", str(size))], head=True)

        want = self.headers.get("Range")
        m = _RANGE.match(want or "")
        if_range = self.headers.get("If-Range")
        stale = if_range is not None and if_range not in (etag, date)
        if mode == "endless-200":
            self._send(200, common + [("Connection", "close")])
            return self._endless()
        if not m or mode == "ignore-range" or stale or (mode == "changes-lm" and stale) or \
                (mode == "later-200" and n > 1):
            return self._send(200, common + [("Content-Length", str(size))], body)
        if mode == "later-empty-503" and n > 1:
            return self._send(503, [("Content-Length", "0")], head=True)
        if mode == "later-503" and n > 1:
            text = b"busy\n"
            return self._send(503, [("Content-Length", str(len(text)))], text)
        first = int(m.group(1))
        last = int(m.group(2)) if m.group(2) else size - 1
        last = min(last, size - 1)
        if first > last:
            if mode in ("page-416", "page-416-long"):
                page = b"x" * (65536 if mode == "page-416" else 65537)
                return self._send(416, [("Content-Range", "bytes */%d" % size),
                                        ("Content-Length", str(len(page)))], page)
            if mode == "page-416-trickle":
                page = b"x" * 65536
                self._send(416, [("Content-Range", "bytes */%d" % size),
                                 ("Content-Length", str(len(page) + TRICKLE_BYTES))], page)
                return self._trickle(b"x" * TRICKLE_BYTES)
            return self._send(416, [("Content-Range", "bytes */%d" % size),
                                    ("Content-Length", "0")], head=True)
        part = body[first:last + 1]
        total = str(size)
        cr_first, cr_last = first, last
        extra = []
        if mode == "wrong-total" and n > 1:
            total = str(size + 1000)
        elif mode == "junk-number" and n > 1:
            total = str(size) + "x"
        elif mode in ("wrong-start", "trickle-bad"):
            cr_first, cr_last = first + 1, last + 1
        elif mode == "no-size":
            total = "*"
        elif mode in ("short", "short-nolen") or (mode == "later-short" and n > 1):
            part = part[:-1]
        elif mode in ("long", "long-nolen"):
            part = part + b"\0" * 16
        elif mode == "gzip":
            part = gzip.compress(part)
            extra = [("Content-Encoding", "gzip")]
        cr = ("Content-Range", "bytes %d-%d/%s" % (cr_first, cr_last, total))
        if mode == "later-no-range" and n > 1:
            return self._send(206, common + [("Content-Length", str(len(part)))], part)
        if mode in ("drip", "stall", "endless"):
            self._send(206, common + [cr, ("Connection", "close")]
                       + ([("Content-Length", str(len(part)))] if mode != "endless" else []))
            if mode == "endless":
                return self._endless()
            return self._drip(part, mode == "stall")
        if mode == "trickle-bad":
            self._send(206, common + [cr, ("Content-Length", str(len(part) + TRICKLE_BYTES))])
            return self._trickle(part + b"\0" * TRICKLE_BYTES)
        if mode == "trickle-long":
            self._send(206, common + [cr, ("Connection", "close")], part)
            return self._trickle(b"\0" * TRICKLE_BYTES)
        if mode == "later-short-nolen" and n > 1:  # a byte short, delimited by the close
            self._send(206, common + [cr, ("Connection", "close")], part[:-1])
            self.close_connection = True
            return None
        if mode == "later-nolen" and n > 1:  # the whole part, delimited by the close
            self._send(206, common + [cr, ("Connection", "close")], part)
            self.close_connection = True
            return None
        if mode in ("short-nolen", "long-nolen"):
            self._send(206, common + [cr, ("Connection", "close")], part)
            self.close_connection = True
            return None
        if mode == "short-close":
            self._send(206, common + [cr, ("Content-Length", str(len(part))),
                                      ("Connection", "close")], part[:-1])
            self.close_connection = True
            return None
        return self._send(206, common + extra + [cr, ("Content-Length", str(len(part)))], part)

    def _endless(self):
        self.close_connection = True
        chunk = b"\0" * 65536
        try:
            while not self.server.owner.stopping.is_set():
                self.wfile.write(chunk)
        except OSError:
            pass

    def _trickle(self, data):
        """One byte per write, 20 ms apart (a client that is waiting for it
        sees each byte alone, even on a busy machine), whether or not the
        server is stopping (at most about 6 s: a client that reads on is what
        is measured);
        the owner's `trickle` says how it ended."""
        self.close_connection = True
        owner = self.server.owner
        how = "whole"
        try:
            for b in data:  # the pause first: the byte never joins what came before
                time.sleep(0.02)
                self.wfile.write(bytes([b]))
                self.wfile.flush()
        except OSError:
            how = "cut"
        with owner.lock:
            owner.trickle = how
        owner.trickled.set()

    def _drip(self, part, stall):
        self.close_connection = True
        stopping = self.server.owner.stopping
        try:
            for b in part:
                if stall:
                    while not stopping.wait(1.0):
                        pass
                    return
                if stopping.wait(1.0):
                    return
                self.wfile.write(bytes([b]))
                self.wfile.flush()
        except OSError:
            pass


class Hostile:
    """The hostile server on 127.0.0.1 (see the module's doc)."""

    def __init__(self, mode, body):
        if mode not in HOSTILE_MODES:
            raise ValueError("unknown mode " + repr(mode))
        self.mode = mode
        self.body = bytes(body)
        self.requests = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.trickle = None
        self.trickled = threading.Event()
        self.url = None
        self._server = None
        self._thread = None

    def trickle_end(self, timeout=15):
        """How a trickle mode's body ended ("cut" or "whole"), once it has;
        None if no trickle ended within `timeout` seconds."""
        self.trickled.wait(timeout)
        with self.lock:
            return self.trickle

    def __enter__(self):
        self._server = _Server(self)
        port = self._server.server_address[1]
        self.url = "http://127.0.0.1:%d/file.klnt" % port
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
        return False


if __name__ == "__main__":  # a quick look: python3 servers.py MODE FILE
    import sys
    if len(sys.argv) == 3 and sys.argv[1] == "nginx":
        with Nginx(sys.argv[2]) as web:
            print(web.url, flush=True)
            with contextlib.suppress(KeyboardInterrupt):
                while True:
                    time.sleep(1)
    elif len(sys.argv) == 3:
        with open(sys.argv[2], "rb") as f:
            data = f.read()
        with Hostile(sys.argv[1], data) as h:
            print(h.url, flush=True)
            with contextlib.suppress(KeyboardInterrupt):
                while True:
                    time.sleep(1)
    else:
        sys.exit("usage: servers.py nginx DIR | servers.py MODE FILE")
