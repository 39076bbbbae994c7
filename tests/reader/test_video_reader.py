from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from llama_index.core.schema import ImageNode, MetadataMode, NodeRelationship, TextNode

from llama_index_video import schema
from llama_index_video.errors import TranscriptionError
from llama_index_video.ocr.base import TextBox
from llama_index_video.reader.video_reader import VideoReader
from llama_index_video.transcription.base import Segment, Transcription, TranscriptionInfo
from tests_support import CHECKOUT, HANDBOOK, OZONE, ROOT, TEAM_SYNC, RememberingTranscriber

TOLERANCE = 1.0  # tiny.en segment starts can be ~1 s early after pauses


@pytest.fixture(scope="module")
def reader(tmp_path_factory, transcriber):
    return VideoReader(
        media_dir=tmp_path_factory.mktemp("media"), transcriber=RememberingTranscriber(transcriber)
    )


@pytest.fixture(scope="module")
def ozone_nodes(reader):
    return reader.load_data(OZONE)


def _transcript(nodes):
    return [n for n in nodes if n.metadata[schema.MODALITY] == "transcript"]


def _frames(nodes):
    return [n for n in nodes if n.metadata[schema.MODALITY] == "frame"]


def test_every_sentence_is_inside_a_unit_at_its_time(ozone_nodes, timeline):
    units = _transcript(ozone_nodes)
    for sentence in timeline["ozone_explainer.mp4"]["narration"]:
        holders = [
            u
            for u in units
            if u.metadata[schema.START_S] <= sentence["start"] + TOLERANCE
            and u.metadata[schema.END_S] >= sentence["end"] - TOLERANCE
        ]
        assert holders, f"no unit spans {sentence}"


def test_unit_starts_match_the_sentences_that_open_them(ozone_nodes, timeline):
    starts = {s["start"] for s in timeline["ozone_explainer.mp4"]["narration"]}
    for unit in _transcript(ozone_nodes):
        nearest = min(starts, key=lambda s: abs(s - unit.metadata[schema.START_S]))
        assert abs(nearest - unit.metadata[schema.START_S]) <= TOLERANCE, unit.metadata


def test_the_split_answer_reaches_one_unit(ozone_nodes):
    unit = next(u for u in _transcript(ozone_nodes) if "because" in u.text)
    assert "absorbed by the ozone layer" in unit.text
    assert unit.metadata[schema.START_S] == pytest.approx(36.0, abs=TOLERANCE)
    assert unit.metadata[schema.END_S] == pytest.approx(45.0, abs=TOLERANCE)


def test_transcript_metadata_is_flat_and_citable(ozone_nodes):
    unit = _transcript(ozone_nodes)[0]
    meta = unit.metadata
    assert all(isinstance(v, (str, int, float)) for v in meta.values())
    assert meta[schema.SOURCE] == str(OZONE)
    assert meta[schema.LANGUAGE] == "en"
    start = meta[schema.START_S]
    assert meta[schema.MEDIA_URL] == f"{OZONE}#t={start:.1f}"
    assert meta[schema.LABEL].startswith("[ozone_explainer.mp4 00:0")
    embedded = unit.get_content(MetadataMode.EMBED)
    assert str(OZONE) not in embedded and schema.START_S not in embedded


def test_units_are_linked_in_order_and_to_their_source(ozone_nodes):
    units = _transcript(ozone_nodes)
    for previous, following in itertools.pairwise(units):
        assert previous.relationships[NodeRelationship.NEXT].node_id == following.node_id
        assert following.relationships[NodeRelationship.PREVIOUS].node_id == previous.node_id
    assert len({u.ref_doc_id for u in ozone_nodes}) == 1


def test_frames_are_image_nodes_by_path_including_the_flash_slide(ozone_nodes):
    frames = _frames(ozone_nodes)
    assert all(isinstance(f, ImageNode) and f.image is None for f in frames)
    assert all(f.image_path and f.metadata[schema.IMAGE_PATH] == f.image_path for f in frames)
    assert any(21.0 <= f.metadata[schema.FRAME_TIME] < 22.53 for f in frames)
    said = next(f for f in frames if f.metadata[schema.FRAME_TIME] >= 64)
    assert "Montreal Protocol" in said.text


def test_ids_are_stable_across_reads_and_moves(reader, ozone_nodes, tmp_path):
    moved = tmp_path / "renamed talk.mp4"
    shutil.copy(OZONE, moved)
    again = reader.load_data(moved)
    assert [n.node_id for n in again] == [n.node_id for n in ozone_nodes]
    assert again[0].metadata[schema.SOURCE] == str(moved)


def test_audio_files_give_transcript_only(reader, timeline):
    nodes = reader.load_data(TEAM_SYNC)
    assert nodes and all(n.metadata[schema.MODALITY] == "transcript" for n in nodes)
    first = timeline["team_sync.mp3"]["narration"][0]
    assert nodes[0].metadata[schema.START_S] == pytest.approx(first["start"], abs=TOLERANCE)


def test_text_files_go_through_llamaindex_splitters(reader):
    nodes = reader.load_data(HANDBOOK)
    assert nodes and all(isinstance(n, TextNode) for n in nodes)
    assert all(n.metadata[schema.MODALITY] == "text" for n in nodes)
    assert all(schema.START_S not in n.metadata for n in nodes)
    assert "Tuesdays" in " ".join(n.text for n in nodes)
    assert nodes[0].metadata[schema.LABEL] == "[handbook.md]"


def test_subtitles_are_used_instead_of_speech_recognition(tmp_path, transcriber, timeline):
    from tests_support import SUBTITLES

    video = tmp_path / "talk.mp4"
    shutil.copy(OZONE, video)
    shutil.copy(SUBTITLES / "ozone_explainer.srt", tmp_path / "talk.srt")

    class Refusing:
        name = "refusing"

        def transcribe(self, audio, *, source=None):
            raise AssertionError("speech recognition must not run when subtitles exist")

    reader = VideoReader(media_dir=tmp_path / "media", transcriber=Refusing(), frames=None)
    nodes = reader.load_data(video)
    text = " ".join(n.text for n in nodes)
    assert "Halley Bay" in text  # the subtitles' spelling, not Whisper's
    first = timeline["ozone_explainer.mp4"]["narration"][0]
    assert nodes[0].metadata[schema.START_S] == pytest.approx(first["start"], abs=0.01)
    assert "subtitles" in nodes[0].metadata[schema.NOTE]


def test_empty_subtitles_fall_back_to_speech_recognition(tmp_path, transcriber):
    video = tmp_path / "talk.mp4"
    # its first 10 s ("ozone" is said at 1-4 s): hearing all 80 s took 5 CPU s more
    cut = ["ffmpeg", "-nostdin", "-loglevel", "error", "-i", str(OZONE), "-t", "10", "-c", "copy"]
    subprocess.run([*cut, str(video)], check=True)
    (tmp_path / "talk.vtt").write_text("WEBVTT\n\n")
    reader = VideoReader(media_dir=tmp_path / "media", transcriber=transcriber, frames=None)
    nodes = reader.load_data(video)
    assert nodes and "ozone" in " ".join(n.text for n in nodes).lower()
    assert schema.NOTE not in nodes[0].metadata


class _SignallingOcr:
    """Finds one line of text in any frame and says when it was first asked."""

    name = "signalling"

    def __init__(self) -> None:
        self.asked = threading.Event()

    def detect(self, image: Path) -> list[TextBox]:
        self.asked.set()
        return [TextBox("On screen", 0.99, left=10, top=10, width=200, height=30)]


@dataclass
class _WaitingTranscriber:
    """Hears one sentence, once frames are being read (or fails, when told to)."""

    ocr: _SignallingOcr
    fail: bool = False
    saw_frames_read: bool = False
    name = "waiting"

    def transcribe(self, audio: np.ndarray, *, source: Path | None = None) -> Transcription:
        self.saw_frames_read = self.ocr.asked.wait(timeout=60)
        if self.fail:
            raise TranscriptionError(f"cannot transcribe {source}")
        info = TranscriptionInfo(backend=self.name, model="none", language="en")
        return Transcription(info, iter([Segment(1.0, 4.0, "Ozone absorbs ultraviolet light.")]))


def test_frames_are_read_while_speech_is_transcribed(tmp_path):
    ocr = _SignallingOcr()
    transcriber = _WaitingTranscriber(ocr)
    reader = VideoReader(media_dir=tmp_path, transcriber=transcriber, use_subtitles=False, ocr=ocr)
    nodes = reader.load_data(OZONE)
    assert transcriber.saw_frames_read
    frames = _frames(nodes)
    assert frames and all("On screen" in n.text for n in frames)
    assert "Ozone absorbs" in frames[0].text  # frame nodes still carry what was said
    assert [n.text for n in _transcript(nodes)] == ["Ozone absorbs ultraviolet light."]


def test_a_failed_transcription_raises_once_the_frame_reader_is_joined(tmp_path):
    ocr = _SignallingOcr()
    reader = VideoReader(
        media_dir=tmp_path,
        transcriber=_WaitingTranscriber(ocr, fail=True),
        use_subtitles=False,
        ocr=ocr,
    )
    with pytest.raises(TranscriptionError, match="cannot transcribe"):
        reader.read(OZONE)
    assert not [t for t in threading.enumerate() if t.name.startswith("screen")]


# In a fresh process: which threads are alive when CTranslate2 is first imported.
_THREADS_AT_ENGINE_IMPORT = """
import sys, tempfile, threading
from pathlib import Path

seen = []


class Spy:
    def find_spec(self, name, path=None, target=None):
        if name == "ctranslate2" and not seen:
            seen.append(sorted(t.name for t in threading.enumerate()))


sys.meta_path.insert(0, Spy())
from llama_index_video.reader.video_reader import VideoReader

reader = VideoReader(media_dir=tempfile.mkdtemp(), use_subtitles=False, ocr="off")
assert reader.load_data(Path(sys.argv[1]))
print(seen)
"""


def test_the_default_speech_engine_loads_before_the_screen_thread_starts(tmp_path, make_video):
    pytest.importorskip("faster_whisper", reason="the [local] extra is not installed")
    # a picture and a sound, 3 s: what makes a screen thread, without 80 s of speech to hear
    video = make_video(tmp_path / "scene.mp4", [(3.0, (40, 90, 160))])
    done = subprocess.run(
        [sys.executable, "-c", _THREADS_AT_ENGINE_IMPORT, str(video)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert done.stdout.strip() == "[['MainThread']]"


class _Listening:
    """A diarizer that hears every chunk it is given and names no speaker."""

    name = "listening"

    def __init__(self) -> None:
        self.heard_until: dict[str, float] = {}

    def diarize(self, chunks, *, source=None):
        for chunk in chunks:
            self.heard_until[source.name] = chunk.end
        return []


def test_ingest_probes_each_file_once(tmp_path, script_transcriber, embed_model, probes, timeline):
    from llama_index_video.index import VideoIndex

    diarizer = _Listening()
    reader = VideoReader(
        media_dir=tmp_path / "index" / "media", transcriber=script_transcriber, diarizer=diarizer
    )
    index = VideoIndex(tmp_path / "index", embed_model=embed_model, reader=reader)
    try:
        report = index.ingest([CHECKOUT, TEAM_SYNC])
    finally:
        index.close()

    assert report.ok, report
    assert probes == {CHECKOUT.name: 1, TEAM_SYNC.name: 1}  # not again to transcribe or diarize
    # The sound heard (transcribed, then diarized) still ends where each file does.
    ends = {name: timeline[name]["duration"] for name in (CHECKOUT.name, TEAM_SYNC.name)}
    assert diarizer.heard_until == pytest.approx(ends, abs=0.1)
