"""Media and frames: seekable with HTTP Range, and nothing but indexed files is ever sent."""

from __future__ import annotations

import hashlib
import os
import socket
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from llama_index_video.index import VideoIndex
from llama_index_video.service.app import create_app
from llama_index_video.service.media import recording_media_type
from llama_index_video.store.manifest import PathRecord
from tests.service.conftest import LOOPBACK, running
from tests_support import HANDBOOK, OZONE, TEAM_SYNC, sound_only_copy


def _hash(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- Range requests on the example index -------------------------------------------------


def test_a_whole_video_says_it_accepts_ranges(client):
    response = client.get(f"/media/{_hash(OZONE)}")
    assert response.status_code == 200
    assert response.headers["accept-ranges"] == "bytes"
    assert response.headers["content-type"] == "video/mp4"
    assert response.content == OZONE.read_bytes()


@pytest.mark.parametrize(
    ("header", "first", "last"),
    [("bytes=1000-1999", 1000, 1999), ("bytes=-500", None, None), ("bytes=500000-", 500000, None)],
)
def test_a_range_gets_206_with_exactly_those_bytes(client, header, first, last):
    data = OZONE.read_bytes()
    size = len(data)
    if first is None:
        first, last = size - 500, size - 1
    last = size - 1 if last is None else last
    response = client.get(f"/media/{_hash(OZONE)}", headers={"Range": header})
    assert response.status_code == 206
    assert response.headers["content-range"] == f"bytes {first}-{last}/{size}"
    assert response.content == data[first : last + 1]


def test_a_range_beyond_the_end_is_416(client):
    response = client.get(f"/media/{_hash(OZONE)}", headers={"Range": "bytes=99999999-"})
    assert response.status_code == 416


def test_head_and_audio(client):
    response = client.head(f"/media/{_hash(TEAM_SYNC)}")
    assert response.status_code == 200
    assert response.headers["content-type"] == "audio/mpeg"
    assert int(response.headers["content-length"]) == TEAM_SYNC.stat().st_size


def test_an_indexed_text_document_is_not_media(client):
    assert client.get(f"/media/{_hash(HANDBOOK)}").status_code == 404


def test_frames_of_hits_are_served_as_jpeg(client):
    hits = client.get("/api/search", params={"q": "ozone hole over Antarctica"}).json()
    frame = client.get(hits[0]["frame_url"])
    assert frame.status_code == 200
    assert frame.headers["content-type"] == "image/jpeg"
    assert frame.content[:3] == b"\xff\xd8\xff"


# --- Only indexed files: a hand-made manifest over files in tmp_path ----------------------


@pytest.fixture
def tiny(tmp_path, embed_model):
    """An index whose manifest lists one video, one frame and one failed file."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.mp4").write_bytes(b"not yours")
    videos = tmp_path / "videos"
    videos.mkdir()
    index = VideoIndex(tmp_path / "index", embed_model=embed_model)
    files = {}
    for name, status in [("talk.mp4", "indexed"), ("broken.mp4", "failed")]:
        path = videos / name
        path.write_bytes(name.encode() * 1000)
        digest = _hash(path)
        index.manifest.set_file(digest, status)
        stat = path.stat()
        index.manifest.set_path(
            PathRecord(str(path.resolve()), name, digest, stat.st_size, stat.st_mtime_ns)
        )
        files[name] = (path, digest)
    frames = tmp_path / "index" / "media" / "frames"
    frames.mkdir(parents=True)
    talk_hash = files["talk.mp4"][1]
    (frames / f"{talk_hash[:16]}_000001000.jpg").write_bytes(b"\xff\xd8\xff frame")
    (frames / f"{files['broken.mp4'][1][:16]}_000001000.jpg").write_bytes(b"\xff\xd8\xff")
    yield index, files, outside, frames
    index.close()


def _get(index, url, **options):
    with TestClient(create_app(index), base_url=LOOPBACK) as client:
        return client.get(url, **options)


def test_an_indexed_file_is_served_by_its_content_hash(tiny):
    index, files, _, _ = tiny
    path, digest = files["talk.mp4"]
    response = _get(index, f"/media/{digest}")
    assert response.status_code == 200
    assert response.content == path.read_bytes()


@pytest.mark.parametrize(
    "media_id",
    [
        "0" * 64,  # not in the index
        "talk.mp4",  # a name is not an id
        "A" * 64,  # ids are lower-case hex
    ],
)
def test_unknown_ids_are_404(tiny, media_id):
    assert _get(tiny[0], f"/media/{media_id}").status_code == 404


def test_a_file_that_failed_to_index_is_not_served(tiny):
    index, files, *_ = tiny
    digest = files["broken.mp4"][1]
    assert _get(index, f"/media/{digest}").status_code == 404
    assert _get(index, f"/frames/{digest[:16]}_000001000.jpg").status_code == 404


def test_a_file_replaced_by_a_symlink_after_ingest_is_not_followed(tiny):
    index, files, outside, _ = tiny
    path, digest = files["talk.mp4"]
    path.unlink()
    (outside / "secret.mp4").write_bytes(b"x" * len(b"talk.mp4" * 1000))  # same size
    path.symlink_to(outside / "secret.mp4")
    assert _get(index, f"/media/{digest}").status_code == 404


def test_a_file_changed_or_deleted_after_ingest_is_not_served(tiny):
    index, files, _, _ = tiny
    path, digest = files["talk.mp4"]
    path.write_bytes(b"changed")
    assert _get(index, f"/media/{digest}").status_code == 404
    path.unlink()
    assert _get(index, f"/media/{digest}").status_code == 404


def test_a_frame_is_served_only_from_the_frames_folder(tiny):
    index, files, outside, frames = tiny
    prefix = files["talk.mp4"][1][:16]
    assert _get(index, f"/frames/{prefix}_000001000.jpg").status_code == 200
    (frames / f"{prefix}_000002000.jpg").symlink_to(outside / "secret.mp4")
    assert _get(index, f"/frames/{prefix}_000002000.jpg").status_code == 404
    (frames / "notes.jpg").write_bytes(b"\xff\xd8\xff")
    assert _get(index, "/frames/notes.jpg").status_code == 404


def test_links_point_only_at_what_can_be_served(tiny):
    index, files, _, frames = tiny
    catalog = create_app(index).state.live._catalog
    prefix = files["talk.mp4"][1][:16]
    links = catalog.urls("talk.mp4", str(frames / f"{prefix}_000001000.jpg"))
    assert links.media_url == "/media/" + files["talk.mp4"][1]
    assert links.frame_url == f"/frames/{prefix}_000001000.jpg"
    assert catalog.urls("broken.mp4", None).media_url is None
    assert catalog.urls("elsewhere.mp4", "/etc/passwd").frame_url is None


def test_the_urls_of_many_hits_check_each_file_and_frame_once(tiny, monkeypatch):
    index, files, _, frames = tiny
    catalog = create_app(index).state.live._catalog
    frame = str(frames / f"{files['talk.mp4'][1][:16]}_000001000.jpg")
    hits = [
        ("talk.mp4", frame, None),
        ("talk.mp4", None, None),
        ("broken.mp4", None, None),
        ("talk.mp4", frame, None),
        ("elsewhere.mp4", "/etc/passwd", None),
    ]
    expected = [catalog.urls(*hit) for hit in hits]
    checked: list[str] = []
    for name in ("media", "frame"):
        check = getattr(catalog, name)
        monkeypatch.setattr(
            catalog, name, lambda key, check=check: checked.append(key) or check(key)
        )
    assert catalog.urls_of(hits) == expected
    assert len(checked) >= 3 and sorted(checked) == sorted(set(checked))  # each one once


TRAVERSALS = [
    "/media/../../../../etc/passwd",
    "/media/..%2F..%2F..%2F..%2Fetc%2Fpasswd",
    "/media/%2Fetc%2Fpasswd",
    "/media//etc/passwd",
    "/frames/../manifest.sqlite",
    "/frames/..%2F..%2Fmanifest.sqlite",
    "/frames/%2E%2E%2Fmanifest.sqlite",
    "/frames/%2Fetc%2Fpasswd",
    "/static/../app.py",
    "/static/..%2Fapp.py",
    "/static/%2Fetc%2Fpasswd",
    "/static//etc/passwd",
    "/../../../../etc/passwd",
    "/%2E%2E/%2E%2E/etc/passwd",
]


@pytest.mark.parametrize("target", TRAVERSALS)
def test_traversal_and_absolute_paths_are_404_on_the_wire(tiny, target):
    index, *_ = tiny
    with running(create_app(index)) as url:
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            sock.sendall(
                f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode()
            )
            reply = b""
            while chunk := sock.recv(65536):
                reply += chunk
    status = int(reply.split(b" ", 2)[1])
    assert status == 404, reply[:200]
    assert b"root:" not in reply


def test_the_index_folder_itself_is_never_served(tiny):
    index, *_ = tiny
    for name in os.listdir(index.path):
        assert _get(index, f"/static/{name}").status_code == 404
        assert _get(index, f"/{name}").status_code == 404


def _send_while(path, change, headers=()):
    """Send ``path`` with :class:`OpenedFileResponse`, calling ``change()`` once the
    headers are out; returns (status, headers, body)."""
    import anyio

    from llama_index_video.service.media import OpenedFileResponse

    sent: dict = {"body": b""}

    async def send(message):
        if message["type"] == "http.response.start":
            sent["status"], sent["headers"] = message["status"], dict(message["headers"])
            change()
        else:
            sent["body"] += message.get("body", b"")

    async def receive():
        await anyio.sleep(3600)

    scope = {
        "type": "http",
        "method": "GET",
        "headers": [(k.encode(), v.encode()) for k, v in headers],
        "asgi": {"spec_version": "2.4"},
    }
    response = OpenedFileResponse(path, media_type="image/jpeg", headers={})
    anyio.run(response, scope, receive, send)
    return sent["status"], sent["headers"], sent["body"]


@pytest.mark.parametrize("how", ["replaced", "grown in place"])
def test_a_file_changed_while_sent_is_sent_as_it_was_opened(tmp_path, how):
    frame = tmp_path / "0123456789abcdef_000001000.jpg"
    before = os.urandom(300_000)
    frame.write_bytes(before)

    def change():
        if how == "replaced":  # as ingest writes a frame: a new file renamed over it
            new = tmp_path / "new.jpg"
            new.write_bytes(os.urandom(500_000))
            new.replace(frame)
        else:
            with frame.open("ab") as handle:
                handle.write(os.urandom(200_000))

    status, headers, body = _send_while(frame, change)
    assert status == 200
    assert int(headers[b"content-length"]) == len(body) == len(before)
    assert body == before

    opened = frame.read_bytes()
    status, headers, body = _send_while(frame, change, [("range", "bytes=100-")])
    assert status == 206 and int(headers[b"content-length"]) == len(body)
    assert body == opened[100:]


@pytest.mark.parametrize(
    ("name", "sent_as"),
    [
        ("talk.mp4", "video/mp4"),
        ("team_sync.mp3", "audio/mpeg"),
        ("broadcast.ts", "video/mp2t"),  # not Qt's translation file
        ("camcorder.m2ts", "video/mp2t"),
        ("phone.3gp", "video/3gpp"),  # a video player, not the audio one
        ("talk.wmv", "video/x-ms-wmv"),
        ("call.wma", "audio/x-ms-wma"),
        ("memo.amr", "audio/AMR"),
        ("music.mka", "audio/x-matroska"),
        ("voice.caf", "audio/x-caf"),
        ("notes.md", None),
    ],
)
def test_each_kind_of_recording_is_sent_as_a_video_or_audio_type(name, sent_as):
    assert recording_media_type(Path(name)) == sent_as


@pytest.mark.parametrize(
    ("name", "sent_as"),
    [
        ("standup.webm", "audio/webm"),
        ("standup.mkv", "audio/x-matroska"),
        ("standup.mp4", "audio/mp4"),
        ("standup.mov", "audio/mp4"),
    ],
)
def test_a_video_container_holding_sound_alone_is_sent_as_audio(tmp_path, name, sent_as):
    recording = sound_only_copy(TEAM_SYNC, tmp_path / name)

    assert recording_media_type(recording) == sent_as
    assert recording_media_type(OZONE) == "video/mp4"  # sound and pictures: a video
