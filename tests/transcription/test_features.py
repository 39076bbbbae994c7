"""Whisper's features computed in pieces are the features computed at once."""

from __future__ import annotations

import numpy as np
import pytest

from llama_index_video.media.audio import decode_audio
from llama_index_video.transcription.features import PIECE_FRAMES, PiecewiseFeatures
from llama_index_video.transcription.openmp import import_faster_whisper
from tests_support import OZONE

# Through the package's import, which sets how CTranslate2's threads wait first.
FeatureExtractor = import_faster_whisper().feature_extractor.FeatureExtractor


@pytest.fixture(scope="module")
def speech() -> np.ndarray:
    samples = decode_audio(OZONE)
    assert len(samples) > 2 * PIECE_FRAMES * 160  # more than two pieces
    return samples


@pytest.mark.parametrize("extra", [0, 1, 159, 160, 161])
def test_pieces_give_the_features_of_the_whole(speech, extra):
    # Lengths around a piece boundary and a hop, and the whole recording.
    for length in (PIECE_FRAMES * 160 + extra, 2 * PIECE_FRAMES * 160 + extra, len(speech)):
        whole = FeatureExtractor(feature_size=80)(speech[:length])
        pieces = PiecewiseFeatures(FeatureExtractor(feature_size=80))(speech[:length])
        assert pieces.shape == whole.shape and pieces.dtype == whole.dtype
        assert np.abs(pieces - whole).max() < 1e-5


def test_the_model_reads_the_extractor_it_wraps(speech):
    extractor = FeatureExtractor(feature_size=80)
    pieces = PiecewiseFeatures(extractor)
    assert pieces.nb_max_frames == extractor.nb_max_frames == 3000
    pieces(speech, chunk_length=60)  # as faster-whisper's transcribe passes it
    assert extractor.nb_max_frames == pieces.nb_max_frames == 6000
