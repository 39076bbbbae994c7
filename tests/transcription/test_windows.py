"""Whisper's windows end in pauses (issue 36): :func:`.windows.clip_timestamps`."""

from __future__ import annotations

import itertools

from llama_index_video.transcription.windows import WINDOW_SECONDS, clip_timestamps

RATE = 16_000


def _spans(*seconds: tuple[float, float]) -> list[tuple[int, int]]:
    return [(round(a * RATE), round(b * RATE)) for a, b in seconds]


def _pairs(flat: list[float]) -> list[tuple[float, float]]:
    return list(zip(flat[::2], flat[1::2], strict=True))


def test_clips_cover_the_joined_audio_end_to_end_and_end_in_pauses():
    kept = _spans((0.0, 70.0))
    # Utterances of ~9.5 s with 0.5 s pauses: 9.5-10.0, 19.5-20.0, ...
    utterances = _spans(*((10.0 * k, 10.0 * k + 9.5) for k in range(7)))
    clips = _pairs(clip_timestamps(kept, utterances))
    assert clips[0][0] == 0.0 and clips[-1][1] == 70.0
    assert all(a[1] == b[0] for a, b in itertools.pairwise(clips))  # nothing left out
    assert all(end - start <= WINDOW_SECONDS for start, end in clips)
    # Every cut but the last is in the middle of a pause: x9.75 s.
    assert [round(end % 10.0, 2) for _, end in clips[:-1]] == [9.75] * (len(clips) - 1)
    assert len(clips) == 3  # as few as fit: to 29.75, to 59.75, then the rest


def test_stretches_joined_end_to_end_are_cut_where_they_were_joined():
    kept = _spans((5.0, 25.0), (40.0, 60.0))  # 20 s + 20 s of speech, joined: 40 s
    utterances = _spans((5.0, 25.0), (40.0, 60.0))  # no pause inside either
    assert _pairs(clip_timestamps(kept, utterances)) == [(0.0, 20.0), (20.0, 40.0)]


def test_speech_with_no_pause_for_a_window_runs_to_the_next_pause():
    kept = _spans((0.0, 80.0))
    utterances = _spans((0.0, 50.0), (50.5, 80.0))  # 50 s without a pause
    assert _pairs(clip_timestamps(kept, utterances)) == [(0.0, 50.25), (50.25, 80.0)]


def test_no_speech_gives_no_clip():
    assert clip_timestamps([], []) == []
