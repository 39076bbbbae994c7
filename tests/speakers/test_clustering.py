"""Clustering voice embeddings: the count is estimated, or given."""

from __future__ import annotations

import numpy as np
import pytest

from llama_index_video.speakers.clustering import cluster_speakers, silhouette


def _voices(centres: int, per_voice: int, spread: float, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    axes = rng.normal(size=(centres, 64))
    rows = [axis + rng.normal(scale=spread, size=(per_voice, 64)) for axis in axes]
    return np.concatenate(rows)


@pytest.mark.parametrize("voices", [2, 3, 5])
def test_the_number_of_voices_is_estimated(voices):
    labels = cluster_speakers(_voices(voices, 12, spread=0.3))
    assert len(set(labels)) == voices
    for voice in range(voices):  # each voice's windows share one label
        assert len(set(labels[voice * 12 : (voice + 1) * 12])) == 1


def test_one_voice_stays_one_speaker():
    rng = np.random.default_rng(1)
    one = rng.normal(size=64) + rng.normal(scale=0.15, size=(30, 64))
    assert set(cluster_speakers(one)) == {0}


def test_a_given_count_is_used_and_capped():
    embeddings = _voices(3, 6, spread=0.3)
    assert len(set(cluster_speakers(embeddings, num_speakers=2))) == 2
    assert len(set(cluster_speakers(embeddings[:2], num_speakers=5))) == 2
    assert list(cluster_speakers(embeddings[:1])) == [0]


def test_silhouette_scores_a_clean_split_high_and_a_mixed_one_low():
    distances = np.array([[0, 0.1, 1, 1], [0.1, 0, 1, 1], [1, 1, 0, 0.1], [1, 1, 0.1, 0]])
    assert silhouette(distances, np.array([0, 0, 1, 1])) == pytest.approx(0.9)
    assert silhouette(distances, np.array([0, 1, 0, 1])) < 0
    assert silhouette(distances, np.zeros(4, dtype=int)) == 0.0


def test_one_odd_window_is_not_a_speaker():
    rng = np.random.default_rng(2)
    one = rng.normal(size=64) + rng.normal(scale=0.15, size=(30, 64))
    odd = rng.normal(size=(1, 64))
    assert set(cluster_speakers(np.concatenate([one, odd]))) == {0}
