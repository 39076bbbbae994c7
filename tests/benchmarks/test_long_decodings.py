"""benchmarks/long_decodings.py: the seek recipe's one clip, put in place and taken away."""

from __future__ import annotations

import pytest

from benchmarks.long_decodings import seek_windows, whole_speech
from llama_index_video.transcription import faster_decoding
from llama_index_video.transcription.windows import clip_timestamps


def test_the_seek_recipe_hands_faster_whisper_all_of_the_speech_as_one_clip():
    kept = [(0, 16_000), (48_000, 80_000)]  # 1 s and 2 s of speech, 2 s apart
    utterances = [(0, 16_000), (48_000, 60_000), (70_000, 80_000)]
    assert whole_speech(kept, utterances) == [0.0, 3.0]
    assert clip_timestamps(kept, utterances)[-1] == 3.0  # the same audio, cut at pauses


def test_the_seek_windows_are_put_back_as_they_were_even_when_decoding_fails():
    with seek_windows():
        assert faster_decoding.clip_timestamps is whole_speech
    assert faster_decoding.clip_timestamps is clip_timestamps
    with pytest.raises(RuntimeError), seek_windows():
        raise RuntimeError("decoding failed")
    assert faster_decoding.clip_timestamps is clip_timestamps
