"""Clustering voice embeddings: the count is estimated, or given."""

from __future__ import annotations

import numpy as np
import pytest

from llama_index_video.speakers.clustering import cluster_speakers, cluster_windows, silhouette


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


def _unit_voices(centres: int, per_voice: list[int] | int, spread: float, seed: int = 0):
    """Unit-length embeddings around ``centres`` random directions, in 192 dimensions."""
    rng = np.random.default_rng(seed)
    sizes = per_voice if isinstance(per_voice, list) else [per_voice] * centres
    axes = rng.normal(size=(centres, 192))
    rows = [
        axis + rng.normal(scale=spread, size=(size, 192))
        for axis, size in zip(axes, sizes, strict=True)
    ]
    points = np.concatenate(rows)
    return points / np.linalg.norm(points, axis=1, keepdims=True)


@pytest.mark.parametrize("voices", [2, 3, 4, 6])
@pytest.mark.parametrize("per_voice", [8, 30])  # linkage below 40 windows, spectral above
def test_cluster_windows_estimates_two_to_six_voices(voices, per_voice):
    labels = cluster_windows(_unit_voices(voices, per_voice, spread=0.08))
    assert len(set(labels)) == voices
    for voice in range(voices):
        assert len(set(labels[voice * per_voice : (voice + 1) * per_voice])) == 1


@pytest.mark.parametrize("count", [1, 2, 3, 5])
def test_cluster_windows_honours_a_given_count_exactly(count):
    one_voice = _unit_voices(1, 50, spread=0.08)
    assert len(set(cluster_windows(one_voice, num_speakers=count))) == count
    few = _unit_voices(2, 6, spread=0.08)
    assert len(set(cluster_windows(few, num_speakers=count))) == count
    assert len(set(cluster_windows(few[:2], num_speakers=count))) == min(count, 2)


def test_cluster_windows_keeps_one_voice_one_speaker_and_folds_in_a_stray():
    for size in (5, 45, 200):
        assert set(cluster_windows(_unit_voices(1, size, spread=0.08))) == {0}
    # a voice heard for under min_windows windows joins the nearest speaker
    labels = cluster_windows(_unit_voices(3, [30, 30, 2], spread=0.08))
    assert len(set(labels)) == 2


def test_cluster_windows_merges_halves_of_one_voice():
    rng = np.random.default_rng(3)
    axis = rng.normal(size=192)
    # two tight groups whose centroids are ~0.9 alike: one voice in two moods
    shifted = axis + 0.35 * rng.normal(size=192)
    rows = [c + rng.normal(scale=0.05, size=(25, 192)) for c in (axis, shifted)]
    points = np.concatenate(rows)
    points /= np.linalg.norm(points, axis=1, keepdims=True)
    assert set(cluster_windows(points)) == {0}
    assert len(set(cluster_windows(points, num_speakers=2))) == 2


def test_cluster_windows_raises_an_estimate_to_a_floor_and_no_further():
    one_voice = _unit_voices(1, 45, spread=0.08)
    assert len(set(cluster_windows(one_voice, min_speakers=2))) == 2
    three = _unit_voices(3, 12, spread=0.08)
    assert len(set(cluster_windows(three, min_speakers=2))) == 3  # above the floor: kept
    assert len(set(cluster_windows(one_voice, min_speakers=5, max_speakers=3))) == 3
    assert len(set(cluster_windows(one_voice[:2], min_speakers=4))) == 2
