"""The previous offline speaker backend: Resemblyzer voice embeddings, clustered.

Kept as a lighter option (``--diarizer resemblyzer``): it tells distinct synthetic
voices apart, but not two women on one phone line (45.9 % diarization error where
CAM++ makes 0.9 %, docs/evaluation.md); :mod:`.campplus_diarizer` is the default.

Resemblyzer's pretrained speaker encoder ships inside its wheel, so this works with
no network. WebRTC's VAD finds the speech; each stretch of speech is embedded as
overlapping 1.6 s partial windows (Resemblyzer's own unit), the windows of the whole
file are clustered (:mod:`.clustering`), and each stretch is cut where the label of
its windows changes. Only the embeddings (256 floats per window) are kept between
chunks, so memory stays small for long recordings.

The encoder runs on one torch thread by default: its small LSTM batches gain little
from more, and on a busy 2-core machine two threads spinning against other work made
the same file ~15x slower (see docs/benchmarks.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from llama_index_video.errors import DiarizationError, MissingDependencyError
from llama_index_video.media.audio import SAMPLE_RATE, AudioChunk
from llama_index_video.model_cache import ModelCache
from llama_index_video.speakers.base import (
    SpeakerTurn,
    Stretch,
    check_speaker_counts,
    cut_stretches,
    failures_named,
    merge_pieces,
    name_in_order,
)
from llama_index_video.speakers.campplus import torch_threads
from llama_index_video.speakers.clustering import cluster_speakers

if TYPE_CHECKING:
    from resemblyzer import VoiceEncoder

_VAD_FRAME_S = 0.03

_encoders: ModelCache[str, VoiceEncoder] = ModelCache()


class ResemblyzerDiarizer:
    """Speaker turns from Resemblyzer embeddings of VAD-trimmed speech.

    Args:
        num_speakers: How many speakers there are, if known; None estimates it.
        max_speakers: The most speakers to consider when estimating.
        partials_per_second: Embedding windows per second of speech (time resolution
            against cost).
        vad_aggressiveness: WebRTC VAD mode, 0 (keeps most) to 3 (keeps least).
        min_speech: Stretches of speech shorter than this (seconds) are ignored.
        min_silence: Pauses shorter than this (seconds) do not split a stretch.
        device: Torch device of the encoder.
        threads: Torch CPU threads while embedding (restored afterwards; torch's
            setting is process-wide, so do not diarize concurrently with other torch
            work that sets it).
    """

    def __init__(
        self,
        *,
        num_speakers: int | None = None,
        max_speakers: int = 8,
        partials_per_second: float = 2.0,
        vad_aggressiveness: int = 2,
        min_speech: float = 0.3,
        min_silence: float = 0.3,
        device: str = "cpu",
        threads: int = 1,
    ) -> None:
        check_speaker_counts(num_speakers, max_speakers, threads)
        if not 0.5 <= partials_per_second <= 16:
            raise ValueError(f"partials_per_second must be 0.5-16, got {partials_per_second}")
        if vad_aggressiveness not in (0, 1, 2, 3):
            raise ValueError(f"vad_aggressiveness must be 0-3, got {vad_aggressiveness}")
        if min_speech <= 0 or min_silence <= 0:
            raise ValueError("min_speech and min_silence must be > 0")
        self.num_speakers = num_speakers
        self.max_speakers = max_speakers
        self.partials_per_second = partials_per_second
        self.vad_aggressiveness = vad_aggressiveness
        self.min_speech = min_speech
        self.min_silence = min_silence
        self.device = device
        self.threads = threads

    @property
    def name(self) -> str:
        return "resemblyzer"

    def diarize(
        self, chunks: Iterable[AudioChunk], *, source: Path | None = None
    ) -> list[SpeakerTurn]:
        """Who spoke when; see the module docstring for how."""
        encoder = _encoder(self.device)
        with failures_named("resemblyzer", source), torch_threads(self.threads):
            embeddings, centres, stretches = self._embed(encoder, chunks)
        if not embeddings:
            return []
        labels = cluster_speakers(
            np.array(embeddings), num_speakers=self.num_speakers, max_speakers=self.max_speakers
        )
        labels = _smooth(labels, stretches)
        return name_in_order(merge_pieces(cut_stretches(stretches, centres, labels)))

    def _embed(
        self, encoder: VoiceEncoder, chunks: Iterable[AudioChunk]
    ) -> tuple[list[np.ndarray], list[float], list[Stretch]]:
        """Window embeddings, their centre times, and each stretch's window range."""
        embeddings: list[np.ndarray] = []
        centres: list[float] = []
        stretches: list[Stretch] = []  # start, end, first, last window
        for chunk in chunks:
            for start, end in self.speech(chunk):
                first_sample = round((start - chunk.start) * SAMPLE_RATE)
                samples = chunk.samples[first_sample : round((end - chunk.start) * SAMPLE_RATE)]
                _, partials, slices = encoder.embed_utterance(
                    samples, return_partials=True, rate=self.partials_per_second
                )
                first = len(embeddings)
                for partial, window in zip(partials, slices, strict=True):
                    embeddings.append(partial)
                    middle = (window.start + min(window.stop, len(samples))) / 2
                    centres.append(start + middle / SAMPLE_RATE)
                stretches.append((start, end, first, len(embeddings)))
        return embeddings, centres, stretches

    def speech(self, chunk: AudioChunk) -> list[tuple[float, float]]:
        """Stretches of speech in ``chunk`` as ``(start, end)`` on the source timeline."""
        return speech_stretches(
            chunk,
            aggressiveness=self.vad_aggressiveness,
            min_speech=self.min_speech,
            min_silence=self.min_silence,
        )


def speech_stretches(
    chunk: AudioChunk, *, aggressiveness: int, min_speech: float, min_silence: float
) -> list[tuple[float, float]]:
    """WebRTC VAD over 30 ms frames; pauses under ``min_silence`` bridged."""
    vad = _vad_module().Vad(aggressiveness)
    frame = round(_VAD_FRAME_S * SAMPLE_RATE)
    pcm = (np.clip(chunk.samples, -1.0, 1.0) * 32767).astype(np.int16)
    stretches: list[tuple[float, float]] = []
    opened: float | None = None
    last_speech = 0.0
    for offset in range(0, len(pcm) - frame + 1, frame):
        if not vad.is_speech(pcm[offset : offset + frame].tobytes(), SAMPLE_RATE):
            continue
        at = chunk.start + offset / SAMPLE_RATE
        if opened is not None and at - last_speech > min_silence:
            stretches.append((opened, last_speech))
            opened = None
        if opened is None:
            opened = at
        last_speech = at + _VAD_FRAME_S
    if opened is not None:
        stretches.append((opened, last_speech))
    return [(s, e) for s, e in stretches if e - s >= min_speech]


def _smooth(labels: np.ndarray, stretches: list[Stretch]) -> np.ndarray:
    """Inside a stretch, a lone window whose neighbours agree takes their label.

    One noisy window is no turn; a short stretch of its own (a "yes") keeps its label.
    """
    smoothed = labels.copy()
    for _, _, first, last in stretches:
        for i in range(first + 1, last - 1):
            if labels[i - 1] == labels[i + 1] != labels[i]:
                smoothed[i] = labels[i - 1]
    return smoothed


def _vad_module() -> Any:
    try:
        import webrtcvad
    except ImportError as exc:
        raise MissingDependencyError(
            "webrtcvad-wheels", "speakers", "Finding speech for speaker labels"
        ) from exc
    return webrtcvad


def _encoder(device: str) -> VoiceEncoder:
    """Resemblyzer's encoder, loaded once per device from the weights in its wheel."""

    def load() -> VoiceEncoder:
        try:
            from resemblyzer import VoiceEncoder
        except ImportError as exc:
            raise MissingDependencyError(
                "resemblyzer", "speakers", "Speaker labels with Resemblyzer"
            ) from exc
        try:
            return VoiceEncoder(device, verbose=False)
        except Exception as exc:
            raise DiarizationError(
                f"resemblyzer: cannot load the voice encoder on {device} "
                f"({type(exc).__name__}: {exc})"
            ) from exc

    return _encoders.load(device, load)
