"""Recordings that are not in English, and transcripts that loop: what the reader indexes.

Speech is synthetic (espeak-ng) except the English LibriVox reading; ASR text is never
compared exactly.
"""

from __future__ import annotations

import logging
from pathlib import Path

import chromadb
import pytest
from llama_index.vector_stores.chroma import ChromaVectorStore

from llama_index_video import schema
from llama_index_video.reader import moments
from llama_index_video.reader.units import build_units
from llama_index_video.reader.video_reader import VideoReader
from llama_index_video.transcription import FasterWhisperTranscriber
from llama_index_video.transcription.base import Segment, Word
from tests_support import needs_base

SPEECH = Path(__file__).resolve().parents[1] / "fixtures" / "speech"


def _looping_transcript() -> list[Segment]:
    """What tiny.en wrote for 9 s of Spanish, and worse: the same phrase over and over,
    words of no length, and segments repeating the same span."""
    phrase = "We are going to have a great day and we are going to have a great day."
    words = tuple(Word(start=3.2, end=3.2, text=w) for w in phrase.split())
    return [
        Segment(start=0.0, end=9.7, text=phrase, words=words),
        Segment(start=0.0, end=9.7, text=phrase, words=words),
        *[Segment(start=3.2, end=3.2, text=phrase, words=words)] * 5,
    ]


def test_a_looping_transcript_gives_unique_ids_that_chroma_takes(tmp_path: Path) -> None:
    units = list(build_units(_looping_transcript()))
    spans = {(u.start, u.end) for u in units}
    assert len(units) > len(spans)  # several units share a span: the ids' old key collides
    source = moments.SourceFile(SPEECH / "sales_es.ogg", "f" * 64)
    nodes = moments.transcript_nodes(source, units, language="en", note=None)
    ids = [node.node_id for node in nodes]
    assert len(set(ids)) == len(ids)
    again = moments.transcript_nodes(source, units, language="en", note=None)
    assert [node.node_id for node in again] == ids  # still deterministic
    for node in nodes:
        node.embedding = [1.0, 0.0, 0.0]
    client = chromadb.PersistentClient(path=str(tmp_path / "chroma"))
    store = ChromaVectorStore(chroma_collection=client.get_or_create_collection("loop"))
    assert store.add(nodes) == ids


@needs_base
def test_non_english_speech_with_no_multilingual_model_allowed_fails_that_file_only(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    reader = VideoReader(
        media_dir=tmp_path,
        transcriber=FasterWhisperTranscriber(multilingual_model=None),
        frames=None,
        ocr="off",
    )
    spanish, english = SPEECH / "sales_es.ogg", SPEECH / "librivox_en.flac"
    with caplog.at_level(logging.WARNING, logger="llama_index_video"):
        nodes = list(reader.lazy_load_data([spanish, english]))
    assert nodes and {n.metadata[schema.FILE_NAME] for n in nodes} == {english.name}
    assert {n.metadata[schema.LANGUAGE] for n in nodes} == {"en"}
    skipped = [r.getMessage() for r in caplog.records if "skipped" in r.getMessage()]
    assert len(skipped) == 1 and "\n" not in skipped[0]
    assert str(spanish) in skipped[0] and "Spanish (es)" in skipped[0]
    assert "pip install" in skipped[0]


@needs_base
def test_units_are_labelled_with_the_language_they_were_heard_in(tmp_path: Path) -> None:
    reader = VideoReader(media_dir=tmp_path, frames=None, ocr="off")
    nodes = reader.read(SPEECH / "mixed_en_de.ogg").nodes
    languages = [(n.metadata[schema.START_S], n.metadata[schema.LANGUAGE]) for n in nodes]
    assert [code for _, code in sorted(languages)] == sorted(
        (code for _, code in languages), key=["en", "de"].index
    )
    assert {code for _, code in languages} == {"en", "de"}
    assert len({n.node_id for n in nodes}) == len(nodes)
