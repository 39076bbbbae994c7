"""Unusable subtitles fall back to speech recognition with a one-line note, bytes unquoted."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np

from llama_index_video.reader.video_reader import VideoReader
from llama_index_video.transcription.base import Segment, Transcription, TranscriptionInfo
from tests_support import TEAM_SYNC

SAID = "The release of version two point four is planned for March."


class FixedTranscriber:
    """Hears the same sentence in every chunk (this test is not about recognition)."""

    name = "fixed"

    def __init__(self) -> None:
        self.calls = 0

    def transcribe(self, audio: np.ndarray, *, source: Path | None = None) -> Transcription:
        self.calls += 1
        info = TranscriptionInfo(backend=self.name, model="fixed", language="en")
        return Transcription(info=info, segments=iter([Segment(start=1.0, end=4.0, text=SAID)]))


def test_garbage_srt_falls_back_to_speech_recognition(tmp_path):
    audio = tmp_path / "team_sync.mp3"
    shutil.copy(TEAM_SYNC, audio)
    garbage = bytes(range(256)) * 8 + os.urandom(2048)
    (tmp_path / "team_sync.srt").write_bytes(b"1\n" + garbage)
    transcriber = FixedTranscriber()
    reader = VideoReader(media_dir=tmp_path / "media", transcriber=transcriber, ocr="off")
    result = reader.read(audio)
    assert transcriber.calls >= 1
    assert any(SAID in node.get_content() for node in result.nodes)
    assert result.notes == ("not a valid SRT subtitle file: team_sync.srt; transcribed the audio",)
    assert all(ch.isprintable() for ch in result.notes[0])
