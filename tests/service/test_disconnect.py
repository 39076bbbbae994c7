"""Clients that go away mid-request are normal: one debug line each, never a traceback."""

from __future__ import annotations

import logging
import socket
import time
import urllib.request

BODY = b'{"question": "how much ultraviolet C radiation is absorbed", "top_k": 5}'


def _drop_mid_body(service_url: str) -> None:
    host, port = service_url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(
            b"POST /api/ask HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n" % len(BODY) + BODY[:20]
        )


def test_clients_dropping_mid_body_leave_one_debug_line_each(service_url, caplog):
    with caplog.at_level(logging.DEBUG):
        for _ in range(3):
            _drop_mid_body(service_url)
        deadline = time.monotonic() + 30
        while caplog.text.count("client went away") < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        with urllib.request.urlopen(f"{service_url}/api/health", timeout=10) as response:
            assert response.status == 200
    gone = [r for r in caplog.records if "client went away" in r.getMessage()]
    assert len(gone) == 3 and all(r.levelno == logging.DEBUG for r in gone)
    assert all(r.levelno < logging.WARNING for r in caplog.records), caplog.text
    assert not any(r.exc_info for r in caplog.records)
