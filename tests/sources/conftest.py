"""A local web server with media, pages and every kind of bad link (loopback only)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler

import pytest

from tests.fakes.loopback import LoopbackHTTP
from tests_support import ROOT, SUBTITLES

SPEECH = ROOT / "tests" / "fixtures" / "speech"
TALK = (SPEECH / "subtitled.mkv").read_bytes()  # a cue track inside: no speech recognition
CLIP = (SPEECH / "subtitled.mp4").read_bytes()
LECTURE = (SUBTITLES / "with_subtitle_stream.mkv").read_bytes()  # video, speech, subtitles
CAPTIONS = b"WEBVTT\n\n00:00:01.000 --> 00:00:03.000\nCaptions from the site about penguins\n"
PAGE = b"""<!doctype html><html><head><title>A talk</title></head><body>
<video controls src="/media/clip.mp4">
  <track kind="subtitles" srclang="en" label="English" src="/media/clip.vtt">
</video></body></html>"""
EMPTY_PAGE = b"<!doctype html><html><body><p>No recordings here.</p></body></html>"


class Site:
    """What the handler serves, and what it was asked."""

    def __init__(self) -> None:
        self.drops_left = 0  # responses of /media/talk.mkv cut off half-way
        self.ranges: list[str | None] = []
        self.lock = threading.Lock()


class Handler(BaseHTTPRequestHandler):
    site: Site

    def log_message(self, *args):  # keep test output clean
        pass

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if path == "/media/talk.mkv":
            return self._media(TALK, "video/x-matroska")
        if path == "/media/clip.mp4":
            return self._send(200, CLIP, "video/mp4")
        if path == "/media/lecture.mkv":
            return self._send(200, LECTURE, "video/x-matroska")
        if path == "/media/clip.vtt":
            return self._send(200, CAPTIONS, "text/vtt")
        if path == "/page.html":
            return self._send(200, PAGE, "text/html; charset=utf-8")
        if path.endswith("/empty.html"):  # under any folder: links that hold "401" or "login"
            return self._send(200, EMPTY_PAGE, "text/html; charset=utf-8")
        if path == "/private.html":
            return self._send(403, b"Forbidden", "text/plain")
        if path == "/loop":
            self.send_response(302)
            self.send_header("Location", "/loop")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        return self._send(404, b"Not Found", "text/plain")

    def _media(self, body: bytes, kind: str) -> None:
        wanted = self.headers.get("Range")
        with self.site.lock:
            self.site.ranges.append(wanted)
            drop = self.site.drops_left > 0
            if drop:
                self.site.drops_left -= 1
        start = int(wanted.removeprefix("bytes=").split("-")[0]) if wanted else 0
        self.send_response(206 if wanted else 200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body) - start))
        if wanted:
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        self.end_headers()
        part = body[start:]
        if drop:  # a dropped connection: half the bytes, then the socket closes
            self.wfile.write(part[: len(part) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(part)

    def _send(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def site():
    state = Site()
    handler = type("SiteHandler", (Handler,), {"site": state})
    server = LoopbackHTTP(handler)
    server.start()
    state.url = server.url
    yield state
    server.stop()
