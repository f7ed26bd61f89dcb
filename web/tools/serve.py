"""Serves web/ on 127.0.0.1 (static files only) and prints the page's address.

python3's http.server, with the JavaScript module types set explicitly (a
machine without /etc/mime.types would serve .mjs as a download, and a browser
refuses to run a module of that type).

Usage: serve.py [PORT]   (default 8000; 0 picks a free port)
"""
import functools
import http.server
import pathlib
import sys


class Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".js": "text/javascript",
        ".mjs": "text/javascript",
        ".css": "text/css",
        ".svg": "image/svg+xml",
        ".html": "text/html; charset=utf-8",
    }


def main() -> int:
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8000
    web = pathlib.Path(__file__).resolve().parent.parent
    handler = functools.partial(Handler, directory=str(web))
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as server:
        print(f"the page: http://127.0.0.1:{server.server_address[1]}/  (Ctrl-C stops the server)", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
