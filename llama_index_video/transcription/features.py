"""Whisper's log-Mel features of a long stretch, computed in pieces.

faster-whisper computes the features of everything it is given in one go: the short-time
Fourier transform of a 10-minute chunk is a 201 x 60,000 complex matrix with float64
intermediates, about 420 MB at its peak for features that take 19 MB. That peak set the
ingest's peak memory on long recordings (1.1-1.2 GB whatever the length, 626 MB of it
this step alone). :class:`PiecewiseFeatures` stands in for the model's extractor and
computes the same features 30 s of frames at a time: each frame sees exactly the samples
it saw before (the signal is padded once, as the extractor pads it), and the one global
step, the clamp to 8 below the loudest value, runs over the whole result afterwards.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

PIECE_FRAMES: Final = 3000
"""Frames computed at a time (30 s at Whisper's 10 ms hop)."""


class PiecewiseFeatures:
    """faster-whisper's ``FeatureExtractor``, with the same output computed in pieces.

    Every attribute but the call is the wrapped extractor's, so the model reads its
    frame counts and sampling rate as before.
    """

    def __init__(self, extractor: Any) -> None:
        self._extractor = extractor

    def __getattr__(self, name: str) -> Any:
        return getattr(self._extractor, name)

    def __call__(
        self, waveform: np.ndarray, padding: int = 160, chunk_length: int | None = None
    ) -> np.ndarray:
        extractor = self._extractor
        hop, n_fft = int(extractor.hop_length), int(extractor.n_fft)
        if len(waveform) <= PIECE_FRAMES * hop:
            return np.asarray(extractor(waveform, padding=padding, chunk_length=chunk_length))
        if chunk_length is not None:  # what the extractor's own call records
            extractor.n_samples = chunk_length * extractor.sampling_rate
            extractor.nb_max_frames = extractor.n_samples // hop
        samples = waveform.astype(np.float32, copy=False)
        if padding:
            samples = np.pad(samples, (0, padding))
        padded = np.pad(samples, (n_fft // 2, n_fft // 2), mode="reflect")
        frames = (len(padded) - n_fft) // hop  # the extractor drops the last one
        window = np.hanning(n_fft + 1)[:-1].astype("float32")
        filters = extractor.mel_filters
        mel: np.ndarray | None = None
        for first in range(0, frames, PIECE_FRAMES):
            last = min(first + PIECE_FRAMES, frames)
            piece = padded[first * hop : (last - 1) * hop + n_fft]
            spectrum = extractor.stft(
                piece, n_fft, hop, window=window, center=False, return_complex=True
            ).astype("complex64")
            power = filters @ (np.abs(spectrum) ** 2)
            if mel is None:
                mel = np.empty((power.shape[0], frames), dtype=power.dtype)
            mel[:, first:last] = power
        assert mel is not None  # frames > PIECE_FRAMES here
        log_spec = np.log10(np.clip(mel, a_min=1e-10, a_max=None))
        log_spec = np.maximum(log_spec, log_spec.max() - 8.0)
        return (log_spec + 4.0) / 4.0
