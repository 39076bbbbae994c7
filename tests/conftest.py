"""Shared fixtures: the example media with its ground truth, generated media, one index,
the constructed meeting's and the dialogue's indexes, the fake Anthropic API, read-only
copies of index folders; the test files collected longest first (:mod:`tests.file_order`)."""

from __future__ import annotations

import fcntl
import json
import math
import os
import shutil
import stat
import subprocess
import sys
import wave
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING

import av
import numpy as np
import pytest
from hypothesis import settings
from llama_index.core.schema import TextNode

from llama_index_video.transcription.base import Segment, Transcription, TranscriptionInfo
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.file_order import FileSeconds, longest_files_first
from tests_support import EXAMPLES

if TYPE_CHECKING:
    from llama_index.core.base.embeddings.base import BaseEmbedding

    from llama_index_video.index import VideoIndex

# No per-example deadline (Hypothesis' default is 200 ms): the properties are about
# results, and on a loaded CI machine one example of a quick test took 1.4 s and failed.
settings.register_profile("no_deadline", deadline=None)
settings.load_profile("no_deadline")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--write-file-seconds",
        action="store_true",
        help="update tests/file_seconds.json with the seconds each file's tests took",
    )


def pytest_configure(config: pytest.Config) -> None:
    is_worker = hasattr(config, "workerinput")
    if config.getoption("--write-file-seconds") and not is_worker:
        config.pluginmanager.register(FileSeconds())


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    longest_files_first(items)


@pytest.fixture(scope="session")
def timeline() -> dict:
    return json.loads((EXAMPLES / "timeline.json").read_text())["files"]


@pytest.fixture(scope="session")
def transcriber():
    """Real speech recognition (faster-whisper tiny.en): for tests about ASR only.

    What it hears differs between CPUs (``CT2_FORCE_CPU_ISA=GENERIC`` changes words), so
    tests using it compare with ``examples/timeline.json`` within a tolerance.
    """
    from llama_index_video.transcription.faster import FasterWhisperTranscriber

    return FasterWhisperTranscriber()


class ScriptTranscriber:
    """Hears what ``examples/timeline.json`` says was narrated: ASR without the CPU.

    For tests that index the example media but are not about speech recognition. The
    reader hands over each file's audio from 0 s in one chunk (the examples are far
    shorter than ``audio_chunk_seconds``); unknown files have no speech.
    """

    name = "timeline-script"

    def __init__(self, files: dict) -> None:
        self._narration = {
            name: [
                Segment(line["start"], line["end"], " " + line["text"])
                for line in entry["narration"]
            ]
            for name, entry in files.items()
        }

    def transcribe(self, audio: np.ndarray, *, source: Path | None = None) -> Transcription:
        seconds = len(audio) / 16_000
        narration = self._narration.get(source.name, []) if source is not None else []
        info = TranscriptionInfo(
            backend=self.name, model="timeline.json", language="en", duration=seconds
        )
        return Transcription(info=info, segments=iter([s for s in narration if s.start < seconds]))


@pytest.fixture(scope="session")
def script_transcriber(timeline) -> ScriptTranscriber:
    return ScriptTranscriber(timeline)


@pytest.fixture(scope="session")
def embed_model():
    from llama_index_video.embeddings.local import local_embedding

    return local_embedding()


def built_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]
) -> Path:
    """The folder ``name``, made by ``build`` once per run, not once per worker: the
    first xdist worker to ask builds it in the run's shared temporary folder, holding a
    lock the others wait on. Read it or copy it; never change it (the others read it too).
    """
    own = tmp_path_factory.getbasetemp()
    shared = own.parent if os.environ.get("PYTEST_XDIST_WORKER") else own
    folder, built = shared / name, shared / f"{name}.built"
    with (shared / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not built.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            build(folder)
            built.touch()
    return folder


def _example_index(
    folder: Path, transcriber: ScriptTranscriber, embed_model: BaseEmbedding
) -> VideoIndex:
    from llama_index_video.index import VideoIndex
    from llama_index_video.reader.video_reader import VideoReader

    reader = VideoReader(media_dir=folder / "media", transcriber=transcriber)
    return VideoIndex(folder, embed_model=embed_model, reader=reader)


@pytest.fixture(scope="session")
def example_index(tmp_path_factory, script_transcriber, embed_model):
    """One Chroma index over every example file, shared by read-only tests: ingested
    once per run, each worker opening its own copy.

    Its transcripts are the narration script, so no test built on it depends on what
    speech recognition hears on this CPU.
    """

    def ingest(folder: Path) -> None:
        index = _example_index(folder, script_transcriber, embed_model)
        try:
            report = index.ingest([EXAMPLES])
            assert report.ok, report
        finally:
            index.close()

    built = built_once(tmp_path_factory, "example_index", ingest)
    folder = tmp_path_factory.mktemp("example_index")
    shutil.copytree(built, folder, dirs_exist_ok=True)
    index = _example_index(folder, script_transcriber, embed_model)
    yield index
    index.close()


@pytest.fixture
def talk_transcript() -> TextNode:
    """A transcript node shaped like the reader's: [talk.mp4 01:34-01:41]."""
    return TextNode(
        text="We train with cross-entropy.",
        metadata={
            "source": "/media/talk.mp4",
            "file_name": "talk.mp4",
            "modality": "transcript",
            "start_s": 94.9,
            "end_s": 101.2,
            "label": "[talk.mp4 01:34-01:41]",
            "media_url": "/media/talk.mp4#t=94.9",
        },
    )


ANTHROPIC_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_LOG")


@pytest.fixture
def fake_anthropic(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropicServer]:
    """A running fake Messages API; the developer's own Anthropic settings are hidden."""
    for name in ANTHROPIC_ENV:
        monkeypatch.delenv(name, raising=False)
    with FakeAnthropicServer() as server:
        yield server


VideoWriter = Callable[..., Path]


@pytest.fixture(scope="session")
def make_video() -> VideoWriter:
    """Write a small H.264 video of solid-colour scenes, optionally with a tone."""

    def write(
        path: Path,
        scenes: Sequence[tuple[float, tuple[int, int, int]]],
        *,
        fps: int = 10,
        size: tuple[int, int] = (160, 90),
        tone: bool = True,
    ) -> Path:
        duration = sum(seconds for seconds, _ in scenes)
        with av.open(str(path), "w") as out:
            video = out.add_stream("libx264", rate=fps)
            video.width, video.height = size
            video.pix_fmt = "yuv420p"
            audio = out.add_stream("aac", rate=16000) if tone else None
            if audio is not None:
                audio.layout = "mono"
            index = 0
            for seconds, colour in scenes:
                pixels = np.zeros((size[1], size[0], 3), np.uint8)
                pixels[:] = colour
                for _ in range(round(seconds * fps)):
                    frame = av.VideoFrame.from_ndarray(pixels, format="rgb24")
                    frame.pts = index
                    index += 1
                    out.mux(video.encode(frame))
            out.mux(video.encode())
            if audio is not None:
                rate = 16000
                t = np.arange(int(duration * rate)) / rate
                samples = (0.2 * np.sin(2 * math.pi * 440 * t)).astype(np.float32)
                for start in range(0, len(samples), 1024):
                    chunk = av.AudioFrame.from_ndarray(
                        samples[None, start : start + 1024], format="flt", layout="mono"
                    )
                    chunk.sample_rate = rate
                    chunk.pts = start
                    chunk.time_base = Fraction(1, rate)
                    out.mux(audio.encode(chunk))
                out.mux(audio.encode())
        return path

    return write


@pytest.fixture(scope="session")
def make_wav() -> Callable[[Path, np.ndarray], Path]:
    """Write 16 kHz mono float samples as a 16-bit WAV file."""

    def write(path: Path, samples: np.ndarray) -> Path:
        with wave.open(str(path), "wb") as handle:
            handle.setnchannels(1)
            handle.setsampwidth(2)
            handle.setframerate(16000)
            handle.writeframes((np.clip(samples, -1, 1) * 32767).astype("<i2").tobytes())
        return path

    return write


@pytest.fixture(scope="session")
def built_meeting(tmp_path_factory, make_wav, embed_model) -> tuple[Path, Path]:
    """The constructed 16-minute meeting of four topics (:mod:`tests.chapters.meeting_script`:
    silence with its subtitle file) and an index folder of it with its chapters, ingested
    once per run (:func:`built_once`) for every module that reads it: (the audio, the
    index folder).

    Open a copy (:func:`meeting_copy`), never the folder itself; the rows name the audio
    where it is, so it stays there.
    """
    from tests.chapters.meeting_script import length, write_srt
    from tests.chapters.test_chapters_ingest import _index

    def ingest(folder: Path) -> None:
        audio = make_wav(folder / "meeting.wav", np.zeros(int(length() * 16_000), np.float32))
        write_srt(folder / "meeting.srt")
        index = _index(folder / "index", embed_model)
        try:
            assert index.ingest([audio]).ok
        finally:
            index.close()

    folder = built_once(tmp_path_factory, "meeting", ingest)
    return folder / "meeting.wav", folder / "index"


@pytest.fixture(scope="module")
def meeting_copy(tmp_path_factory, built_meeting) -> tuple[Path, Path]:
    """This module's own copy of :func:`built_meeting`'s index folder: (the audio, the copy)."""
    audio, index = built_meeting
    copy = tmp_path_factory.mktemp("meeting_copy") / "index"
    shutil.copytree(index, copy)
    return audio, copy


@pytest.fixture(scope="session")
def built_dialogue(tmp_path_factory, embed_model) -> Path:
    """A folder with the three-voice dialogue (``tests/fixtures/speech/dialogue.*``) and
    ``index/``, its index with Resemblyzer's speaker labels, made once per run
    (:func:`built_once`) for every module that reads it; each test names speakers in a
    copy."""
    from llama_index_video.index import VideoIndex
    from llama_index_video.reader.video_reader import VideoReader
    from llama_index_video.speakers.resemblyzer_diarizer import ResemblyzerDiarizer
    from tests.store.test_speaker_names import SPEECH

    def ingest(folder: Path) -> None:
        for suffix in (".ogg", ".srt"):
            shutil.copy(SPEECH / f"dialogue{suffix}", folder / f"dialogue{suffix}")
        path = folder / "index"
        reader = VideoReader(
            media_dir=path / "media", diarizer=ResemblyzerDiarizer(), frames=None, ocr="off"
        )
        index = VideoIndex(path, embed_model=embed_model, reader=reader)
        try:
            assert index.ingest([folder / "dialogue.ogg"]).ok
        finally:
            index.close()

    return built_once(tmp_path_factory, "named", ingest)


@pytest.fixture(scope="session")
def chroma_url(tmp_path_factory) -> Iterator[str]:
    """A real ``chroma run`` server on a free loopback port, stopped after the session."""
    from real_servers import chroma_server

    with chroma_server(tmp_path_factory.mktemp("chroma_server")) as url:
        yield url


@pytest.fixture
def subtitled_media(tmp_path) -> Path:
    """The ozone video with its sidecar subtitles, and the handbook: no speech model needed."""
    from tests_support import subtitled_media_in

    return subtitled_media_in(tmp_path)


@pytest.fixture
def tmpfs(tmp_path) -> Iterator[Callable[[str, str], Path]]:
    """Mount real tmpfs file systems for a test: ``tmpfs("disk", "size=16m")`` (mount
    options: a tiny disk, ``ro``), unmounted after it. Mounting needs root (CI runs as
    root); elsewhere the test is skipped, saying why."""
    mounted: list[Path] = []

    def mount(name: str, options: str) -> Path:
        folder = tmp_path / name
        folder.mkdir()
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)],
            capture_output=True,
            check=False,
        )
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
        mounted.append(folder)
        return folder

    yield mount
    for folder in mounted:
        subprocess.run(["umount", "-l", str(folder)], check=False)


@pytest.fixture
def spawn() -> Iterator[Callable[..., subprocess.Popen[str]]]:
    """Start Python code or the command line in processes of their own; killed after."""
    started: list[subprocess.Popen[str]] = []

    def spawn_(*argv: str, code: str | None = None, **options) -> subprocess.Popen[str]:
        command = ["-c", code] if code else ["-m", "llama_index_video.cli.main", *argv]
        process = subprocess.Popen(
            [sys.executable, *command],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            **options,
        )
        started.append(process)
        return process

    yield spawn_
    for process in started:
        if process.poll() is None:
            process.kill()
        process.communicate()


class ReadOnlyCopies:
    """Copies of index folders that this test's processes may read but not write.

    Where file permissions bind this process (any user but root, or root without
    ``CAP_DAC_OVERRIDE``), a copy whose write permissions were removed (EACCES, as for
    another user's folder); as root, a read-only bind mount (writes fail with EROFS, as
    on a read-only share). Either way the files are really read-only for the process:
    no mocking. ``scripts/test.sh`` runs the read-only tests both ways as root.
    """

    def __init__(self, workdir: Path) -> None:
        self._workdir = workdir
        self._sources: dict[Path, Path] = {}

    def __call__(self, folder: Path) -> Path:
        """A read-only copy of ``folder`` (skips where root may not mount)."""
        copy = self._workdir / f"copy{len(self._sources)}"
        shutil.copytree(folder, copy)
        if _permissions_bind(self._workdir):
            _set_writable(copy, False)
            self._sources[copy] = copy
            return copy
        mounted = self._workdir / f"share{len(self._sources)}"
        mounted.mkdir()
        self._sources[mounted] = copy
        for command in (
            ["mount", "--bind", str(copy), str(mounted)],
            ["mount", "-o", "remount,bind,ro", str(mounted)],
        ):
            done = subprocess.run(command, capture_output=True, check=False)
            if done.returncode != 0:
                pytest.skip(f"cannot make a read-only mount here: {done.stderr.decode().strip()}")
        return mounted

    @contextmanager
    def owner(self, copy: Path) -> Iterator[Path]:
        """The read-only ``copy`` as its owner sees it: writable while the block runs.

        The bind mount's source (the mount stays read-only), or the copy itself with its
        write permissions back until the block ends.
        """
        source = self._sources[copy]
        if source != copy:
            yield source
            return
        _set_writable(copy, True)
        try:
            yield copy
        finally:
            _set_writable(copy, False)

    def close(self) -> None:
        for copy, source in self._sources.items():
            if source == copy:
                _set_writable(copy, True)
            else:
                subprocess.run(["umount", "-l", str(copy)], check=False)


@pytest.fixture
def read_only_copy(tmp_path) -> Iterator[ReadOnlyCopies]:
    """Makes read-only copies of index folders (see :class:`ReadOnlyCopies`)."""
    copies = ReadOnlyCopies(tmp_path)
    yield copies
    copies.close()


def _set_writable(folder: Path, writable: bool) -> None:
    for path in [folder, *folder.rglob("*")]:
        mode = path.stat().st_mode
        path.chmod(
            mode | stat.S_IWUSR
            if writable
            else mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
        )


def _permissions_bind(workdir: Path) -> bool:
    """Whether this process is refused writing into a folder without write permission."""
    probe = workdir / "permission-probe"
    probe.mkdir()
    probe.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        (probe / "file").touch()
    except PermissionError:
        return True
    finally:
        probe.chmod(stat.S_IRWXU)
        shutil.rmtree(probe)
    return False


@pytest.fixture
def probes(monkeypatch) -> Counter[str]:
    """How many times each file (by name) is probed, by any module of the package."""
    import llama_index_video.index  # noqa: F401  (its modules are patched too)
    import llama_index_video.media.probe as media_probe

    counts: Counter[str] = Counter()
    real = media_probe.probe

    def counting(path: str | Path) -> media_probe.MediaInfo:
        counts[Path(path).name] += 1
        return real(path)

    for module in list(sys.modules.values()):
        name = getattr(module, "__name__", "")
        if name.startswith("llama_index_video") and getattr(module, "probe", None) is real:
            monkeypatch.setattr(module, "probe", counting)
    return counts
