"""benchmarks/long_decodings.py: the seek recipe's one clip, put in place and taken away;
the resumed recipe's carried prompt and seams."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import numpy as np
import pytest

from benchmarks.long_decodings import (
    PROMPT_RESET_ON_TEMPERATURE,
    PROMPT_TOKENS,
    AlteredFeatures,
    aligned,
    carried_prompt,
    defaults_model,
    file_floor,
    resumed_in_chunks,
    seek_windows,
    whole_speech,
)
from benchmarks.long_real_speech import load_recording
from benchmarks.long_transcripts import spoken_words
from benchmarks.scoring import error_rate
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


def _written(temperature: float, *tokens: int) -> SimpleNamespace:
    return SimpleNamespace(temperature=temperature, tokens=list(tokens))


def test_the_carried_prompt_is_what_one_decode_holds_since_its_last_reset():
    assert carried_prompt([1, 2], [_written(0.0, 3), _written(0.2, 4)]) == [1, 2, 3, 4]
    hot = _written(PROMPT_RESET_ON_TEMPERATURE + 0.1, 5)
    assert carried_prompt([1, 2], [_written(0.0, 3), hot, _written(0.0, 6)]) == [6]
    assert carried_prompt([1], [hot]) == []
    long = carried_prompt([], [_written(0.0, *range(300))])
    assert long == list(range(300 - PROMPT_TOKENS, 300))


def test_a_reading_heard_in_resumed_chunks_is_heard_as_in_one_piece(tmp_path):
    """Real speech (LJ Speech's reader, the first 80 s) in 35 s chunks: each chunk resumes
    at the window the one before was cut in, so nothing is written twice or left out at a
    seam, and the words are as right as in one piece."""
    import soundfile

    from llama_index_video.media.audio import SAMPLE_RATE, decode_audio

    audio, turns = load_recording("lj_reader")
    said = [turn for turn in turns if turn.end < 80.0]
    cut = tmp_path / "reading.wav"
    samples = decode_audio(audio)[: round((said[-1].end + 0.25) * SAMPLE_RATE)]
    soundfile.write(cut, samples, SAMPLE_RATE)
    material = SimpleNamespace(audio=cut)
    whole = resumed_in_chunks(material, 1_000.0, resume=False)  # type: ignore[arg-type]
    resumed = resumed_in_chunks(material, 35.0, resume=True)  # type: ignore[arg-type]
    assert all(a.end <= b.start + 0.5 for a, b in itertools.pairwise(resumed))
    reference = spoken_words(" ".join(turn.text for turn in said))
    in_one_piece = error_rate(reference, spoken_words(" ".join(h.text for h in whole)))
    in_chunks = error_rate(reference, spoken_words(" ".join(h.text for h in resumed)))
    assert in_chunks <= in_one_piece + 0.03


def test_a_quieter_chunk_floored_at_the_files_floor_has_the_files_features(tmp_path):
    """Whisper clamps features 8 log10 units below the loudest of what it is given: a chunk
    quieter than the file keeps detail one decode of the file does not see, unless it is
    floored at the file's floor (the resumed+floor recipe)."""
    import soundfile
    from faster_whisper.feature_extractor import FeatureExtractor

    from llama_index_video.media.audio import SAMPLE_RATE, decode_audio, iter_audio_chunks

    audio, _ = load_recording("lj_reader")
    speech = decode_audio(audio)[: 20 * SAMPLE_RATE]
    recording = tmp_path / "loud_then_quiet.wav"
    soundfile.write(recording, np.concatenate([speech, speech * 0.01]), SAMPLE_RATE)
    extractor = FeatureExtractor()
    whole = extractor(decode_audio(recording))
    _, quiet = iter_audio_chunks(recording, chunk_seconds=25.0)
    first = round(quiet.start * SAMPLE_RATE / extractor.hop_length) + 5  # off the STFT edge
    frames = slice(first, first + 1_000)
    own = extractor(quiet.samples)[:, 5:1_005]
    floored = AlteredFeatures(
        extractor,
        lambda f: np.maximum(f, file_floor(SimpleNamespace(audio=recording), 25.0, extractor)),
    )(quiet.samples)[:, 5:1_005]
    assert not np.allclose(own, whole[:, frames], atol=1e-4)
    assert np.allclose(floored, whole[:, frames], atol=1e-4)
    assert floored.shape == own.shape and AlteredFeatures(extractor, abs).hop_length == 160


def test_word_times_found_afterwards_keep_the_defaults_text_and_their_windows_times():
    """Real speech (LJ Speech's reader, the first 75 s: three windows or more) decoded
    with faster-whisper's defaults, then aligned: every word of the text is found, in
    order, inside its segment, and the first window's words carry the times word
    timestamps give while decoding (after it, those move the windows)."""
    from llama_index_video.media.audio import SAMPLE_RATE, decode_audio

    audio, _ = load_recording("lj_reader")
    samples = decode_audio(audio)[: 75 * SAMPLE_RATE]
    model = defaults_model()
    segments, info = model.transcribe(samples)
    plain = list(segments)
    found = aligned(model, samples, plain, info.language)
    assert len({segment.seek for segment in plain}) >= 3
    assert len(found) == len(plain)
    for segment, words in zip(plain, found, strict=True):
        assert "".join(word["word"] for word in words) == segment.text
        assert segment.start - 0.5 <= words[0]["start"] <= words[-1]["end"] <= segment.end + 0.5
    asked = next(iter(model.transcribe(samples, word_timestamps=True)[0]))
    first = [(w.word, round(w.start, 2), round(w.end, 2)) for w in asked.words or ()]
    assert first == [(w["word"], round(w["start"], 2), round(w["end"], 2)) for w in found[0]]
