"""The scoring of benchmarks/live_languages.py: which chunks are wrong, when a join is heard."""

from __future__ import annotations

from pathlib import Path

from benchmarks.live_languages import Heard, Recording, score
from llama_index_video.transcription.language import LanguageStretch

JOINED = Recording(Path("en>de.wav"), ((0.0, "en"), (45.0, "de")))


def test_a_chunk_across_the_join_may_hold_either_language_and_the_switch_is_timed() -> None:
    heard = Heard()
    across = [LanguageStretch(0.0, 16.0, "en", 0.9), LanguageStretch(16.0, 30.0, "de", 0.9)]
    score(heard, JOINED, 30.0, across)
    score(heard, JOINED, 60.0, [LanguageStretch(0.0, 30.0, "de", 0.9)])
    assert (heard.chunks, heard.wrong, heard.wrong_after, heard.switch) == (2, 0, 0, 1.0)


def test_a_chunk_after_the_join_in_the_old_language_is_wrong() -> None:
    heard = Heard()
    score(heard, JOINED, 50.0, [LanguageStretch(0.0, 10.0, "en", 0.4)])
    score(heard, JOINED, 0.0, [LanguageStretch(0.0, 10.0, "fr", 0.2)])
    assert (heard.wrong, heard.wrong_after, heard.switch) == (2, 1, None)
