"""A seekable file object over HTTP range requests, strict about the answers.

kiln.scan reads http:// and https:// URLs through HTTPRangeFile rather than
fsspec's HTTP file: fsspec takes a 200 answer to a ranged request (a server
that ignores Range) and keeps the first bytes of the whole body, trusts the
body's length, decompresses what the server compressed and never compares
two answers, so a misbehaving server would get a verdict on the wrong bytes.
Here every such answer is OSError(EIO), never bytes:

- the size is the Content-Length of a HEAD (Accept-Encoding: identity),
  after at most `max_redirects` redirects, each to http:// or https://;
- each read is one GET with `Range: bytes=A-B`, `Accept-Encoding: identity`
  and `If-Range` (the strong ETag, else Last-Modified), and its answer must
  be 206 with `Content-Range: bytes A-B/SIZE`, a Content-Length of exactly
  B-A+1, no Content-Encoding other than identity, and the ETag and
  Last-Modified the HEAD gave, or none where it gave none (a file replaced
  between two requests is caught, never read as a mix of two versions);
- a reply with a header line that has no colon is refused (http.client
  would drop the headers after it);
- every request has a deadline (`timeout` seconds, headers and body), and a
  server silent for `idle_timeout` seconds is given up; a body is read only
  up to its declared length (an endless body costs nothing past it).

TLS certificates are verified (the default SSL context). Standard library
only; one keep-alive connection per file object.
"""

from __future__ import annotations

import errno
import http.client
import io
import re
import socket
import ssl
import threading
import time
import urllib.parse
from typing import Optional

__all__ = ["HTTPRangeFile"]

_CONTENT_RANGE = re.compile(r"^bytes ([0-9]+)-([0-9]+)/([0-9]+)$")
_REDIRECTS = (301, 302, 303, 307, 308)


def _field(resp: http.client.HTTPResponse, name: str) -> Optional[str]:
    """A header's value without the optional whitespace around it (RFC 9110
    section 5.5: it is not part of the value); None when absent. Names are
    matched without regard to case (section 5.1)."""
    value = resp.getheader(name)
    return None if value is None else value.strip(" \t")


def _encoding(resp: http.client.HTTPResponse) -> Optional[str]:
    """The reply's Content-Encoding when it is not identity (the bytes
    would not be the file's), else None."""
    encoding = _field(resp, "Content-Encoding")
    return None if encoding is None or encoding.strip().lower() == "identity" else encoding


def _decimal(value: Optional[str]) -> bool:
    """ASCII digits only: str.isdigit() also takes '\u00b2' (a header byte
    0xB2 read as Latin-1), which int() then refuses."""
    return value is not None and value.isascii() and value.isdigit()


def _eio(message: str) -> OSError:
    return OSError(errno.EIO, message)


# RFC 9112 section 4: HTTP-version SP 3DIGIT [SP reason-phrase] CRLF (an
# empty reason, or none, is taken; whitespace at the end of the line too).
_STATUS_LINE = re.compile(rb"(HTTP/[0-9]\.[0-9]) ([0-9]{3})(?: ([^\r\n]*))?\r?\n")
_MAX_STATUS_LINE = http.client._MAXLINE  # http.client's own bound on a header line


class _StrictResponse(http.client.HTTPResponse):
    """http.client splits the status line on runs of whitespace, so it reads
    "HTTP/1.1  206" (two spaces) as 206; this response refuses every line
    that is not of the RFC's shape (BadStatusLine, an I/O error), as
    `kiln validate URL` does (cli/remote_file.h, HttpStatusCode)."""

    def _read_status(self):  # http.client's hook: (version, status, reason)
        line = self.fp.readline(_MAX_STATUS_LINE + 1)
        if len(line) > _MAX_STATUS_LINE:
            raise http.client.LineTooLong("status line")
        if not line:
            raise http.client.RemoteDisconnected("the server closed the connection "
                                                 "without an answer")
        m = _STATUS_LINE.fullmatch(line)
        if m is None:
            raise http.client.BadStatusLine("a status line without a status code: %r"
                                            % line.rstrip(b"\r\n")[:160])
        reason = (m.group(3) or b"").decode("iso-8859-1").rstrip(" \t")
        return m.group(1).decode("ascii"), int(m.group(2)), reason

    def begin(self):
        """http.client ends the header section at the first line that is not
        a header (no colon) and drops, without an error, every header after
        it: a Content-Encoding or ETag there would go unseen. Such a reply is
        refused, as curl refuses it for `kiln validate URL`."""
        super().begin()
        if self.msg.defects:
            raise http.client.HTTPException(
                "a header line without a colon (%s)" % type(self.msg.defects[0]).__name__)


class HTTPRangeFile(io.RawIOBase):
    """A read-only, seekable file: `url`'s body, read by strict range requests."""

    def __init__(self, url: str, *, timeout: float = 60.0, idle_timeout: float = 20.0,
                 max_redirects: int = 5, context: Optional[ssl.SSLContext] = None) -> None:
        super().__init__()
        self.url = url
        self.timeout = float(timeout)
        self.idle_timeout = float(idle_timeout)
        self.max_redirects = max_redirects
        self.context = context
        self.requests = 0       # HTTP requests made
        self.bytes_received = 0  # body bytes received (the ranges' bytes)
        self._conn: Optional[http.client.HTTPConnection] = None
        self._origin: Optional[tuple] = None
        self._pos = 0
        self._etag: Optional[str] = None
        self._last_modified: Optional[str] = None
        self.size = self._head()

    # -- io.RawIOBase -------------------------------------------------------

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self.size}[whence]
        if base + offset < 0:
            raise ValueError("negative seek position")
        self._pos = base + offset
        return self._pos

    def readinto(self, b) -> int:
        view = memoryview(b).cast("B")
        if self._pos >= self.size or not len(view):
            return 0
        n = min(len(view), self.size - self._pos)
        self._get_range(self._pos, n, view[:n])
        self._pos += n
        return n

    def close(self) -> None:
        self._disconnect()
        super().close()

    # -- HTTP ---------------------------------------------------------------

    def _disconnect(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

    def _connection(self, parts: urllib.parse.SplitResult) -> http.client.HTTPConnection:
        origin = (parts.scheme, parts.hostname, parts.port)
        if self._conn is not None and self._origin == origin:
            return self._conn
        self._disconnect()
        if parts.scheme == "https":
            ctx = self.context or ssl.create_default_context()
            conn = http.client.HTTPSConnection(parts.hostname, parts.port,
                                               timeout=self.idle_timeout, context=ctx)
        else:
            conn = http.client.HTTPConnection(parts.hostname, parts.port,
                                              timeout=self.idle_timeout)
        conn.response_class = _StrictResponse
        self._conn, self._origin = conn, origin
        return conn

    def _exchange(self, method: str, url: str, headers: dict) -> http.client.HTTPResponse:
        """One request, up to its response's headers, within self.timeout (a
        watchdog shuts the socket down: a server dripping its headers cannot
        hold the caller). The caller reads the body."""
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise _eio(f"not an http:// or https:// URL: {url}")
        target = parts.path or "/"
        if parts.query:
            target += "?" + parts.query
        conn = self._connection(parts)
        self.requests += 1
        timed_out = threading.Event()

        def expire() -> None:
            timed_out.set()
            sock = conn.sock
            if sock is not None:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

        watchdog = threading.Timer(self.timeout, expire)
        watchdog.daemon = True
        watchdog.start()
        try:
            conn.request(method, target, headers=headers)
            return conn.getresponse()
        except (OSError, http.client.HTTPException) as e:
            self._disconnect()
            if timed_out.is_set():
                raise _eio(f"{method} {url}: no complete answer within {self.timeout:g} s "
                           "(timeout)") from None
            if isinstance(e, socket.timeout):
                raise _eio(f"{method} {url}: the server sent nothing for "
                           f"{self.idle_timeout:g} s") from None
            raise _eio(f"{method} {url}: {type(e).__name__}: {e}") from None
        finally:
            watchdog.cancel()

    def _head(self) -> int:
        url = self.url
        for _ in range(self.max_redirects + 1):
            resp = self._exchange("HEAD", url, {"Accept-Encoding": "identity"})
            resp.read()  # a HEAD has no body; keeps the connection usable
            if resp.status in _REDIRECTS:
                location = _field(resp, "Location")
                if not location:
                    raise _eio(f"HEAD {url}: {resp.status} without a Location")
                url = urllib.parse.urljoin(url, location)
                if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
                    raise _eio(f"HEAD {self.url}: redirected to a URL that is not http:// or "
                               f"https://: {url}")
                continue
            if resp.status != 200:
                raise _eio(f"HEAD {url}: HTTP {resp.status} {resp.reason}")
            length = _field(resp, "Content-Length")
            if not _decimal(length):
                raise _eio(f"HEAD {url}: no Content-Length (the size is needed)")
            encoding = _encoding(resp)
            if encoding is not None:
                raise _eio(f"HEAD {url}: Content-Encoding {encoding}")
            self.url = url
            self._etag = _field(resp, "ETag")
            self._last_modified = _field(resp, "Last-Modified")
            return int(length)
        raise _eio(f"HEAD {self.url}: more than {self.max_redirects} redirects")

    def _get_range(self, offset: int, length: int, into: memoryview) -> None:
        last = offset + length - 1
        headers = {"Range": f"bytes={offset}-{last}", "Accept-Encoding": "identity"}
        if self._etag and not self._etag.startswith("W/"):
            headers["If-Range"] = self._etag
        elif self._last_modified:
            headers["If-Range"] = self._last_modified
        where = f"GET {self.url} bytes {offset}-{last}"
        deadline = time.monotonic() + self.timeout
        resp = self._exchange("GET", self.url, headers)
        try:
            self._check(resp, offset, last, where)
            done = 0
            while done < length:
                if time.monotonic() > deadline:
                    raise _eio(f"{where}: the body took more than {self.timeout:g} s (timeout)")
                chunk = resp.read1(length - done)
                if not chunk:
                    raise _eio(f"{where}: the body ended after {done} of {length} bytes")
                into[done:done + len(chunk)] = chunk
                done += len(chunk)
                self.bytes_received += len(chunk)
            resp.read()  # nothing is left (Content-Length): marks the response done
            if resp.will_close:
                self._disconnect()
        except (OSError, http.client.HTTPException, ValueError) as e:
            self._disconnect()
            if isinstance(e, OSError) and e.errno == errno.EIO:
                raise
            if isinstance(e, socket.timeout):
                raise _eio(f"{where}: the server sent nothing for {self.idle_timeout:g} s") \
                    from None
            raise _eio(f"{where}: {type(e).__name__}: {e}") from None

    def _check(self, resp, offset: int, last: int, where: str) -> None:
        """OSError(EIO) unless the answer is exactly the asked range of the
        file the HEAD described."""
        if resp.status != 206:
            hint = (" (the server ignores Range, or the file changed: If-Range)"
                    if resp.status == 200 else "")
            raise _eio(f"{where}: HTTP {resp.status} {resp.reason}{hint}")
        encoding = _encoding(resp)
        if encoding is not None:
            raise _eio(f"{where}: the server compressed the range (Content-Encoding "
                       f"{encoding})")
        m = _CONTENT_RANGE.match(_field(resp, "Content-Range") or "")
        if not m:
            raise _eio(f"{where}: Content-Range {_field(resp, 'Content-Range')!r} is not "
                       f"bytes {offset}-{last}/{self.size}")
        first, end, total = (int(g) for g in m.groups())
        if (first, end) != (offset, last):
            raise _eio(f"{where}: the server sent bytes {first}-{end} instead")
        if total != self.size:
            raise _eio(f"{where}: the file has {total} bytes now, {self.size} when it was "
                       "opened (the file changed)")
        length = _field(resp, "Content-Length")
        if not _decimal(length) or int(length) != last - offset + 1:
            raise _eio(f"{where}: Content-Length {length!r}, expected {last - offset + 1}")
        # A validator that appeared, vanished or changed since the HEAD: the
        # HEAD and this reply may describe two versions of the file.
        for name, was in (("ETag", self._etag), ("Last-Modified", self._last_modified)):
            now = _field(resp, name)
            if now != was:
                raise _eio(f"{where}: {name} {now!r}, {was!r} when the file was opened "
                           "(the file changed)")
