"""The scoring of benchmarks/live_languages.py: which chunks are wrong, when a join is
heard, what a restart costs."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from benchmarks.live_languages import Chunk, Heard, Recording, after_restart, score
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


def test_a_restart_is_counted_until_the_restarted_run_is_settled_as_the_recording_was() -> None:
    english = Recording(Path("meeting.wav"), ((0.0, "en"),))
    silence = np.zeros(10)
    sure, unsure = LanguageStretch(0.0, 10.0, "en", 0.9), LanguageStretch(0.0, 10.0, "fr", 0.2)
    chunks = [
        Chunk(0.0, silence, None, (sure,), (sure,)),
        Chunk(10.0, silence, "en", (unsure,), (sure,)),  # French alone, English carried
        Chunk(20.0, silence, "en", (sure,), (sure,)),
        Chunk(30.0, silence, "en", (sure,), (sure,)),
    ]

    def heard_with(samples: np.ndarray, settled: str | None) -> tuple[LanguageStretch, ...]:
        raise AssertionError("a restarted run is unsettled until it hears English at 0.9")

    heard = [after_restart(english, chunks, first, heard_with) for first in (1, 2, 3)]
    # before 10 s, 2 chunks until settled again (1 wrong once the language is lost)
    assert [(r.chunks, r.lost, r.kept) for r in heard] == [(2, 1, 0), (1, 0, 0), (1, 0, 0)]
