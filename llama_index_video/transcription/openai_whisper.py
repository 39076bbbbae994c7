"""The reference backend: OpenAI's ``whisper`` package (PyTorch).

Slower than faster-whisper on CPU (see ``benchmarks/transcription_speed.py``) but it
loads the original ``.pt`` checkpoints, by name (downloaded by ``whisper`` on first use)
or from a file. Audio is passed as a float32 array, so no ffmpeg binary is needed.

``whisper.transcribe`` returns everything at the end, so the segments are decoded when
the returned iterator is first advanced; the language is detected up front (one encoder
pass over the first 30 s) so the info, with its probability, is available at once.
The loaded model is cached per (checkpoint, device, download folder).

A chunk of a live recording (:mod:`.recording_language`) keeps the language the
recording is settled in unless it is heard decisively in another
(:meth:`~.recording_language.RecordingLanguage.language_of`); with no VAD here, the
audio the language was heard over (up to 30 s) counts as its speech.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from llama_index_video.errors import MissingDependencyError, TranscriptionError
from llama_index_video.model_cache import ModelCache
from llama_index_video.transcription.base import (
    SAMPLE_RATE,
    Segment,
    Transcription,
    TranscriptionInfo,
    Word,
    as_mono_float32,
)
from llama_index_video.transcription.language import LanguageStretch, Probabilities
from llama_index_video.transcription.recording_language import (
    RecordingLanguage,
    recording_language,
)

if TYPE_CHECKING:
    from whisper.model import Whisper

logger = logging.getLogger(__name__)

WHISPER_TEMPERATURES = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)

_models: ModelCache[tuple[str, str, str | None], Whisper] = ModelCache()


def clear_model_cache() -> None:
    """Forget every loaded openai-whisper model."""
    _models.forget()


@dataclass(frozen=True, kw_only=True)
class OpenAIWhisperTranscriber:
    """Transcribe 16 kHz mono audio with openai-whisper.

    Attributes:
        model: A model name (``"tiny.en"``, ``"base"``, ...; downloaded on first use) or
            the path of a ``.pt`` checkpoint.
        device: A torch device such as ``"cpu"`` or ``"cuda"``; fp16 is used off the CPU.
        language: Language code such as ``"en"``; ``None`` detects it with a multilingual
            model.
        temperature: Decoding temperature, or the fallback sequence tried in turn when a
            window's output looks degenerate.
        beam_size: Beam width when sampling at temperature 0; ``None`` decodes greedily.
        condition_on_previous_text: Prompt each 30 s window with the previous text.
        word_timestamps: Also return word times.
        initial_prompt: Text that primes the vocabulary of the first window.
        download_root: Where named checkpoints are downloaded (whisper's default:
            ``~/.cache/whisper``).
    """

    name: ClassVar[str] = "openai-whisper"

    model: str | Path = "tiny.en"
    device: str = "cpu"
    language: str | None = None
    temperature: float | tuple[float, ...] = WHISPER_TEMPERATURES
    beam_size: int | None = None
    condition_on_previous_text: bool = True
    word_timestamps: bool = False
    initial_prompt: str | None = None
    download_root: Path | None = None

    def __post_init__(self) -> None:
        whisper = _import_whisper()
        if isinstance(self.model, Path) or Path(self.model).expanduser().is_file():
            if not Path(self.model).expanduser().is_file():
                raise TranscriptionError(
                    f"openai-whisper checkpoint {self.model} does not exist: pass a .pt file "
                    f"or a model name such as 'tiny.en'"
                )
        elif self.model not in whisper.available_models():
            raise TranscriptionError(
                f"unknown openai-whisper model {self.model!r}: use one of "
                f"{', '.join(whisper.available_models())} or the path of a .pt checkpoint"
            )
        if self.language is not None and self.language not in whisper.tokenizer.LANGUAGES:
            raise ValueError(
                f"language must be a Whisper language code such as 'en', got {self.language!r}"
            )
        temperatures = (
            self.temperature if isinstance(self.temperature, tuple) else (self.temperature,)
        )
        if not temperatures or any(t < 0 for t in temperatures):
            raise ValueError(f"temperature must be >= 0, got {self.temperature!r}")
        if self.beam_size is not None and self.beam_size < 1:
            raise ValueError(f"beam_size must be at least 1 or None, got {self.beam_size}")

    def transcribe(self, audio: np.ndarray, *, source: Path | None = None) -> Transcription:
        """Transcribe ``audio``; the info is ready at once, segments decode on first use.

        Args:
            audio: 16 kHz mono float32 samples.
            source: The media file the audio came from, named in error messages.

        Returns:
            The info (language and, when detected, its probability; options used) and an
            iterator of segments in time order.

        Raises:
            TranscriptionError: The model cannot be found or loaded, or decoding failed.
            MissingDependencyError: openai-whisper is not installed.
            ValueError: ``audio`` is not 1-D float samples.
        """
        whisper = _import_whisper()
        samples = as_mono_float32(audio)
        model = self._load(whisper)
        label = self._label()
        where = str(source) if source is not None else "the audio"
        if not model.is_multilingual and self.language not in (None, "en"):
            raise TranscriptionError(
                f"openai-whisper model {label!r} is English-only but language="
                f"{self.language!r} was requested: use a multilingual model such as 'base'"
            )
        duration = len(samples) / SAMPLE_RATE
        language, probability = self.language, None
        if language is None and not model.is_multilingual:
            language = "en"
        elif language is None:
            try:
                heard = _detect_language(whisper, model, samples)
            except Exception as exc:  # torch raises RuntimeError on bad devices or shapes
                raise TranscriptionError(
                    f"openai-whisper could not detect the language of {where} with model "
                    f"{label!r}: {exc}"
                ) from exc
            recording = recording_language() or RecordingLanguage()  # none: the likeliest
            language = recording.language_of(
                heard, speech_s=min(duration, whisper.audio.CHUNK_LENGTH)
            )
            probability = heard[language]
            recording.heard([LanguageStretch(0.0, duration, language, probability)])
        options: dict[str, object] = {
            "checkpoint": str(self.model),
            "device": self.device,
            "fp16": self._fp16(),
            "language": self.language,
            "temperature": self.temperature,
            "beam_size": self.beam_size,
            "condition_on_previous_text": self.condition_on_previous_text,
            "word_timestamps": self.word_timestamps,
            "initial_prompt": self.initial_prompt,
        }
        return Transcription(
            info=TranscriptionInfo(
                backend=self.name,
                model=label,
                language=language,
                language_probability=probability,
                duration=duration,
                options=options,
            ),
            segments=self._segments(whisper, model, samples, language, duration, where),
        )

    def _segments(
        self,
        whisper: ModuleType,
        model: Whisper,
        samples: np.ndarray,
        language: str,
        duration: float,
        where: str,
    ) -> Iterator[Segment]:
        if samples.size == 0:
            return
        try:
            result = whisper.transcribe(
                model,
                samples,
                verbose=None,
                language=language,
                temperature=self.temperature,
                beam_size=self.beam_size,
                condition_on_previous_text=self.condition_on_previous_text,
                word_timestamps=self.word_timestamps,
                initial_prompt=self.initial_prompt,
                fp16=self._fp16(),
            )
        except Exception as exc:  # torch and whisper raise RuntimeError/ValueError
            raise TranscriptionError(
                f"openai-whisper failed on {where} with model {self._label()!r}: {exc}"
            ) from exc
        for raw in result["segments"]:
            segment = _to_segment(raw, duration)
            if segment is not None:
                yield segment

    def _load(self, whisper: ModuleType) -> Whisper:
        reference = str(Path(self.model).expanduser()) if self._is_file() else str(self.model)
        root = str(self.download_root) if self.download_root is not None else None
        key = (reference, self.device, root)

        def load() -> Whisper:
            logger.info("Loading openai-whisper model %r on %s", reference, self.device)
            try:
                return whisper.load_model(reference, device=self.device, download_root=root)
            except Exception as exc:  # urllib, torch.load (pickle), state-dict mismatches
                raise TranscriptionError(self._load_failure(exc)) from exc

        return _models.load(key, load)

    def _load_failure(self, exc: Exception) -> str:
        if self._is_file():
            return (
                f"cannot load openai-whisper checkpoint {self.model}: {exc}; it must be a "
                f"torch file holding 'dims' and 'model_state_dict'"
            )
        return (
            f"openai-whisper model {self.model!r} is not on this machine and could not be "
            f"downloaded ({type(exc).__name__}: {exc}): connect to the internet once, pass "
            f"the path of a .pt checkpoint, or use FasterWhisperTranscriber with "
            f"pip install 'llama-index-video[offline]'"
        )

    def _is_file(self) -> bool:
        return isinstance(self.model, Path) or Path(self.model).expanduser().is_file()

    def _label(self) -> str:
        return Path(self.model).name if self._is_file() else str(self.model)

    def _fp16(self) -> bool:
        return self.device != "cpu"


def _detect_language(whisper: ModuleType, model: Whisper, samples: np.ndarray) -> Probabilities:
    """The language head's probabilities over the first 30 s (one window)."""
    mel = whisper.log_mel_spectrogram(whisper.pad_or_trim(samples), model.dims.n_mels)
    _, probabilities = model.detect_language(mel.to(model.device))
    return {str(code): float(p) for code, p in probabilities.items()}


def _to_segment(raw: Mapping[str, Any], duration: float) -> Segment | None:
    text = str(raw["text"]).strip()
    if not text:
        return None
    start = min(max(float(raw["start"]), 0.0), duration)
    end = min(max(float(raw["end"]), start), duration)
    words = tuple(
        Word(
            start=min(max(float(word["start"]), start), end),
            end=min(max(float(word["end"]), start), end),
            text=str(word["word"]).strip(),
            probability=float(word["probability"]),
        )
        for word in raw.get("words", ())
        if str(word["word"]).strip()
    )
    return Segment(start=start, end=end, text=text, words=words)


def _import_whisper() -> ModuleType:
    try:
        import whisper
    except ImportError as exc:
        raise MissingDependencyError(
            "openai-whisper", "whisper", "The openai-whisper backend"
        ) from exc
    return whisper
