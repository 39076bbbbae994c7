"""openai-whisper in a live recording (:mod:`.transcription.recording_language`): a chunk
not heard decisively in a language keeps the one the recording is settled in.

A tiny randomly initialised multilingual checkpoint hears every language at about 1 %:
never decisively, so the chunk keeps the recording's language, and alone it takes the
likeliest."""

from __future__ import annotations

from pathlib import Path

from llama_index_video.transcription.recording_language import RecordingLanguage, heard_in

from .conftest import Clip
from .test_openai_whisper import CLIP_S, ENGLISH_VOCAB, _checkpoint, _fast


def test_a_chunk_heard_vaguely_keeps_the_recordings_language(
    tmp_path: Path, narration: Clip
) -> None:
    transcriber = _fast(_checkpoint(tmp_path / "tiny-random.pt", ENGLISH_VOCAB + 1))
    audio = narration.audio[: 16_000 * CLIP_S]
    alone = transcriber.transcribe(audio).info
    assert alone.language_probability is not None and alone.language_probability < 0.5
    settled = "es" if alone.language != "es" else "de"
    recording = RecordingLanguage(settled)
    with heard_in(recording):
        carried = transcriber.transcribe(audio).info
    assert carried.language == settled
    assert carried.language_probability is not None and carried.language_probability < 0.5
    assert recording.settled == settled
