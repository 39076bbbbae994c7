"""Fixtures for the Gemini embedding tests: the fake API, the model wired to it, media."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from llama_index_video.embeddings.gemini import GeminiMultimodalEmbedding
from llama_index_video.media.clips import Clip, cut_clips
from tests.fakes.gemini_server import FakeGeminiServer
from tests.media.synthetic import write_audio, write_jpeg, write_video

GEMINI_ENV = (
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GEMINI_BASE_URL",
    "GOOGLE_GENAI_USE_VERTEXAI",
)
FAST = {
    "retry_initial_delay": 0.001,
    "retry_max_delay": 0.01,
    "file_poll_interval": 0.01,
    "batch_poll_interval": 0.01,
    "timeout": 5.0,
}


@pytest.fixture(params=["sync", "async"])
def mode(request: pytest.FixtureRequest) -> str:
    """Run a test through the sync API and again through the async one."""
    return str(request.param)


@pytest.fixture
def gemini(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGeminiServer]:
    """A running fake Gemini API; the developer's own Gemini settings are hidden."""
    for name in GEMINI_ENV:
        monkeypatch.delenv(name, raising=False)
    with FakeGeminiServer() as server:
        yield server


@pytest.fixture
def make_embedding(gemini: FakeGeminiServer) -> Callable[..., GeminiMultimodalEmbedding]:
    """Build a ``GeminiMultimodalEmbedding`` talking to the fake API (options override)."""

    def make(**options: object) -> GeminiMultimodalEmbedding:
        settings: dict[str, object] = {
            "api_key": gemini.api_key,
            "base_url": gemini.base_url,
            **FAST,
        }
        settings.update(options)
        return GeminiMultimodalEmbedding(**settings)

    return make


@pytest.fixture(scope="session")
def media(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Small real media: a 6 s video with a tone, audio, a JPEG and a one-page PDF."""
    folder = tmp_path_factory.mktemp("gemini media")
    return {
        "video": write_video(folder / "talk.mp4", seconds=6.0, gop=10),
        "mp3": write_audio(folder / "tone.mp3", seconds=3.0),
        "wav": write_audio(folder / "tone.wav", seconds=2.0),
        "jpeg": write_jpeg(folder / "frame.jpg"),
        "pdf": _write_pdf(folder / "page.pdf"),
    }


@pytest.fixture(scope="session")
def clips(tmp_path_factory: pytest.TempPathFactory, media: dict[str, Path]) -> list[Clip]:
    """Video clips (4 s windows) and audio clips (3 s windows) cut from the test video."""
    out = tmp_path_factory.mktemp("gemini clips")
    digest = "c" * 64
    video = list(
        cut_clips(
            media["video"], out_dir=out, content_hash=digest, max_seconds=4, overlap_seconds=1
        )
    )
    audio = list(
        cut_clips(
            media["video"],
            out_dir=out,
            content_hash=digest,
            modality="audio",
            max_seconds=3,
            overlap_seconds=0.5,
        )
    )
    return video + audio


def _write_pdf(path: Path) -> Path:
    """A minimal valid one-page PDF."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    path.write_bytes(bytes(out))
    return path
