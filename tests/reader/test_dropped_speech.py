"""Speech a transcriber leaves out is reported per file, with its time span (issue 36).

A transcriber lists what it dropped (``Transcription.dropped``, a repetition loop that
decoding again did not mend); reading turns it into a note on the file's timeline, which
ingest's per-file outcome (printed by the CLI, in its JSON) and the manifest carry.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from llama_index_video.schema import format_timestamp
from llama_index_video.transcription.base import (
    DroppedSpeech,
    Segment,
    Transcription,
    TranscriptionInfo,
)

CHUNK_SECONDS = 30.0


class LoopingTranscriber:
    """Hears one sentence at 1 s of every chunk and drops 5-8 s of it as a loop."""

    name = "looping"

    def transcribe(self, audio: np.ndarray, *, source: Path | None = None) -> Transcription:
        info = TranscriptionInfo(
            backend=self.name, model="script", language="en", duration=len(audio) / 16_000
        )
        return Transcription(
            info=info,
            segments=iter([Segment(1.0, 4.0, "The pump keeps the pond water moving.")]),
            dropped=[DroppedSpeech(5.0, 8.0, "its text repeats itself")],
        )


def test_dropped_speech_is_in_the_files_outcome_with_its_span(tmp_path, make_wav, embed_model):
    from llama_index_video.index import VideoIndex
    from llama_index_video.reader.video_reader import VideoReader

    seconds = np.arange(45 * 16_000) / 16_000
    source = make_wav(tmp_path / "pond.wav", 0.1 * np.sin(2 * np.pi * 220 * seconds))
    reader = VideoReader(
        media_dir=tmp_path / "media",
        transcriber=LoopingTranscriber(),
        audio_chunk_seconds=CHUNK_SECONDS,
    )
    chunks = reader.speech_chunks(source)
    assert chunks is not None
    starts = [chunk.start for chunk in chunks]
    assert len(starts) == 2
    index = VideoIndex(tmp_path / "index", embed_model=embed_model, reader=reader)
    try:
        report = index.ingest([source])
        (record,) = index.manifest.files()
    finally:
        index.close()

    (outcome,) = report.files
    assert outcome.outcome == "indexed"
    spans = [f"00:{5 + start:02.0f}-00:{8 + start:02.0f}" for start in starts]
    assert f"speech at {spans[0]}, {spans[1]} left out of the transcript" in outcome.reason
    assert spans[1] in record.notes


def test_the_note_says_why_each_span_is_missing():
    from llama_index_video.reader.speech import dropped_note
    from llama_index_video.transcription.skips import UNHEARD

    note = dropped_note(
        [
            DroppedSpeech(549.0, 554.0, "its text repeats itself"),
            DroppedSpeech(648.5, 671.8, UNHEARD),
        ]
    )
    assert "speech at 09:09-09:14 left out of the transcript: the model wrote a repetition" in note
    assert f"speech at 10:48-11:11 left out of the transcript: {UNHEARD}" in note


class StillLoopingTranscriber:
    """Writes a repetition loop over 5-8 s of every chunk that every remedy writes again,
    so the real :func:`~llama_index_video.transcription.loops.mend` drops it (and warns),
    and leaves 10-14 s of speech unheard after it, which the real
    :func:`~llama_index_video.transcription.skips.heard` decodes again (8-15 s) and drops
    (and warns): both on the chunk's own timeline, as a transcriber is given a chunk."""

    name = "still-looping"

    def transcribe(self, audio: np.ndarray, *, source: Path | None = None) -> Transcription:
        from llama_index_video.transcription.loops import loop_reason, mend
        from llama_index_video.transcription.skips import heard

        dropped: list[DroppedSpeech] = []
        loop = Segment(5.0, 8.0, "la la la " * 30)
        reason = loop_reason(loop)
        assert reason is not None

        def segments() -> Iterator[Segment]:
            yield Segment(1.0, 4.0, "The pump keeps the pond water moving.")
            mend(loop, reason, _looping, where=str(source), model="m", into=dropped)
            yield from heard(
                [],
                since=8.0,
                until=15.0,
                speech=lambda start, end: max(0.0, min(end, 14.0) - max(start, 10.0)),
                redecode=lambda start, end, remedy: [],
                where=str(source),
                into=dropped,
            )

        info = TranscriptionInfo(backend=self.name, model="m", language="en")
        return Transcription(info=info, segments=segments(), dropped=dropped)


def _looping(start: float, end: float, remedy: object) -> list[Segment]:
    return [Segment(start, end, "la la la " * 30)]


def test_the_warnings_name_the_files_times_in_a_later_chunk(tmp_path, make_wav, caplog):
    # The trial: a span dropped at 10:05 of a file was warned as 00:05, its time within
    # the second 600 s chunk (the ingest line was right); chunks of 30 s here.
    from llama_index_video.reader.video_reader import VideoReader

    caplog.set_level(logging.INFO, logger="llama_index_video.transcription")
    seconds = np.arange(45 * 16_000) / 16_000
    source = make_wav(tmp_path / "pond.wav", 0.1 * np.sin(2 * np.pi * 220 * seconds))
    reader = VideoReader(
        media_dir=tmp_path / "media",
        transcriber=StillLoopingTranscriber(),
        audio_chunk_seconds=CHUNK_SECONDS,
    )
    chunks = reader.speech_chunks(source)
    assert chunks is not None
    second = [chunk.start for chunk in chunks][1]
    assert second >= 20.0

    notes = reader.read(source).notes

    def span(start: float, end: float) -> str:
        return f"{format_timestamp(start)}-{format_timestamp(end)}"

    loop, unheard = span(5.0 + second, 8.0 + second), span(8.0 + second, 15.0 + second)
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(f"dropped what model 'm' wrote for {loop}" in m for m in warned), warned
    assert any(f"4.0 s of speech at {unheard} left out" in m for m in warned), warned
    assert any(f"{span(5.0, 8.0)}, {loop}" in note for note in notes), notes  # as the note
