"""The part every fake API shares: an HTTP server on a free 127.0.0.1 port, in a thread."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class LoopbackHTTP:
    """A ``ThreadingHTTPServer`` on 127.0.0.1 served from a daemon thread.

    ``closing`` is set on :meth:`stop`, so a handler sleeping to simulate a slow reply
    (``closing.wait(delay)``) wakes up instead of holding the shutdown.
    """

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.closing = threading.Event()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.httpd.block_on_close = False
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self.closing.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(timeout=5)


def echoed(headers: dict[str, str]) -> str:
    """Request headers as a careless server quotes them back, credentials first."""

    def credential_last(name: str) -> bool:
        return not ("key" in name or "authorization" in name)

    return repr({name: headers[name] for name in sorted(headers, key=credential_last)})
