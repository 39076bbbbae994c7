"""Chapters of a recording that changes language: real German, Spanish and French readings
(FLEURS, ``tests/fixtures/fleurs_languages``) joined one language after another.

The recording is the readings' real audio; what is heard in it is each reading's own
transcript in its language, at the reading's place (speech recognition of six minutes
would cost minutes and is not what is tested), with one Spanish reading heard as
Portuguese, as the language check may mishear a block of speech. The embedding is the
real (English) local model.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from llama_index_video.chapters.segment import MIN_LANGUAGE_SECONDS, TimedVector, language_starts
from llama_index_video.index import VideoIndex
from llama_index_video.media.audio import decode_audio
from llama_index_video.reader.video_reader import VideoReader
from llama_index_video.transcription.base import Segment, Transcription, TranscriptionInfo

READINGS = Path(__file__).parents[1] / "fixtures" / "fleurs_languages"
LANGUAGES = ("de", "es", "fr")
GAP_SECONDS = 1.2
MISHEARD = ("es-004.ogg", "pt")
TOLERANCE = 5.0
FUNCTION_WORDS = {"viele", "puede", "pueden", "través", "ainsi", "cela", "car", "chaque"}
"""Function words the titles held when only NLTK's lists were left out."""


class ReadingsHeard:
    """Hears each reading of the joined recording as its transcript, in its language."""

    name = "fleurs-transcripts"

    def __init__(self, segments: list[Segment]) -> None:
        self.segments = segments

    def transcribe(self, audio: np.ndarray, *, source: Path | None = None) -> Transcription:
        info = TranscriptionInfo(
            backend=self.name, model="clips.json", language=None, duration=len(audio) / 16_000
        )
        return Transcription(info=info, segments=iter(self.segments))


@pytest.fixture(scope="module")
def joined(tmp_path_factory, make_wav) -> tuple[Path, list[Segment], list[float]]:
    """The joined recording, what is heard in it, and where each language begins."""
    clips = json.loads((READINGS / "clips.json").read_text("utf-8"))["clips"]
    parts: list[np.ndarray] = []
    segments: list[Segment] = []
    changes: list[float] = []
    clips_before: list[str] = []
    at = 0.0
    for clip in (c for c in clips if c["language"] in LANGUAGES):
        if parts:
            parts.append(np.zeros(round(GAP_SECONDS * 16_000), np.float32))
            at += GAP_SECONDS
        if not clips_before or clips_before[-1] != clip["language"]:
            changes.append(at)
        clips_before.append(clip["language"])
        parts.append(decode_audio(READINGS / clip["audio"]))
        end = at + len(parts[-1]) / 16_000
        heard = MISHEARD[1] if clip["audio"] == MISHEARD[0] else clip["language"]
        segments.append(Segment(at, end, " " + clip["transcript"], language=heard))
        at = end
    folder = tmp_path_factory.mktemp("languages")
    return make_wav(folder / "languages.wav", np.concatenate(parts)), segments, changes


@pytest.fixture(scope="module")
def chapters(joined, tmp_path_factory, embed_model):
    audio, segments, _ = joined
    folder = tmp_path_factory.mktemp("languages_index")
    index = VideoIndex(
        folder,
        embed_model=embed_model,
        reader=VideoReader(
            media_dir=folder / "media", frames=None, transcriber=ReadingsHeard(segments)
        ),
    )
    try:
        assert index.ingest([audio]).ok
        yield index.chapters(audio) or []
    finally:
        index.close()


def test_each_language_is_a_chapter_from_where_it_begins(joined, chapters):
    """German 158 s, Spanish 112 s, French 110 s: shorter than a topic's chapter may be,
    and the Spanish reading heard as Portuguese is no chapter."""
    changes = joined[2]
    assert len(chapters) == len(LANGUAGES), [c.start for c in chapters]
    for chapter, change in zip(chapters, changes, strict=True):
        assert abs(chapter.start - change) <= TOLERANCE, (chapter.start, change)


def test_titles_leave_out_the_function_words_of_each_chapters_language(chapters):
    for chapter in chapters:
        assert chapter.title
        said = set(chapter.title.lower().replace(",", " ").split())
        assert not said & FUNCTION_WORDS, chapter.title


def test_a_language_heard_shorter_than_a_minute_is_no_change():
    def unit(second: float, language: str) -> TimedVector:
        return TimedVector(second, second + 9.0, (1.0,), "", language)

    german = [unit(10.0 * i, "de") for i in range(12)]
    spanish = [unit(120.0 + 10.0 * i, "es") for i in range(12)]
    brief = [unit(240.0 + 10.0 * i, "pt") for i in range(int(MIN_LANGUAGE_SECONDS // 10) - 1)]
    after = len(german) + len(spanish) + len(brief)
    units = [*german, *spanish, *brief, *(unit(10.0 * i, "es") for i in range(after, after + 12))]
    assert language_starts(units) == [len(german)]
