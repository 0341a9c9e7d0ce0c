"""A loopback forward that adds `Authorization: Bearer TOKEN` to every request, for clients that
cannot send one (the conformance suite's server scenarios): the gateway keeps refusing
unauthenticated requests (401), and these clients still reach it as a configured caller.

    python bearer_forward.py UPSTREAM_URL TOKEN ADDR_FILE

Listens on 127.0.0.1 (a free port), writes HOST:PORT to ADDR_FILE once listening, and forwards
each request (method, path, body, end-to-end headers) to UPSTREAM_URL's host and port,
answering with the upstream's status, headers and body. A request that already carries an
Authorization header is refused with 400 (the forward would hide it). An upstream that cannot
be reached within the timeout is answered 502. Stdlib only."""

import http.client
import os
import sys
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TIMEOUT = float(os.environ.get("MRTR_GW_FORWARD_TIMEOUT", "60"))
MAX_BODY = 1 << 20
HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te",
              "trailer", "upgrade", "host", "content-length", "authorization"}


def make_handler(upstream: urllib.parse.SplitResult, token: str):
    class Forward(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):  # to stderr, one line per request
            sys.stderr.write("forward: " + (fmt % args) + "\n")

        def _answer(self, status: int, headers, body: bytes) -> None:
            self.send_response(status)
            for k, v in headers:
                if k.lower() not in HOP_BY_HOP:
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _forward(self) -> None:
            if self.headers.get("Authorization") is not None:
                self._answer(400, [("Content-Type", "text/plain")],
                             b"the forward adds the credential itself")
                return
            length = int(self.headers.get("Content-Length") or 0)
            if length < 0 or length > MAX_BODY:
                self._answer(413, [("Content-Type", "text/plain")], b"body too large")
                return
            body = self.rfile.read(length) if length else None
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
            headers["Authorization"] = f"Bearer {token}"
            headers["Connection"] = "close"
            conn = http.client.HTTPConnection(upstream.hostname, upstream.port, timeout=TIMEOUT)
            try:
                conn.request(self.command, self.path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read(MAX_BODY + 1)
                self._answer(resp.status, resp.getheaders(), data)
            except (OSError, http.client.HTTPException) as e:
                self._answer(502, [("Content-Type", "text/plain")],
                             f"upstream unreachable: {e!r}".encode())
            finally:
                conn.close()

        do_POST = do_GET = do_DELETE = _forward

    return Forward


def main() -> None:
    url, token, addr_file = sys.argv[1:4]
    upstream = urllib.parse.urlsplit(url)
    if upstream.scheme != "http" or upstream.hostname != "127.0.0.1" or not upstream.port:
        sys.exit(f"forward: upstream must be http://127.0.0.1:PORT/..., got {url}")
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(upstream, token))
    server.daemon_threads = True
    host, port = server.server_address[:2]
    tmp = addr_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(f"{host}:{port}\n")
    os.replace(tmp, addr_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
