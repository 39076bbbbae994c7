"""Grouping voice embeddings into speakers when the number of speakers is unknown.

Average-linkage agglomerative clustering on cosine distance, tried for every count
from 2 to ``max_speakers``; the count with the best mean silhouette wins. One
speaker is chosen instead when even the best split leaves clusters whose centroids
are as alike as windows of one voice usually are (``same_speaker_similarity``):
silhouettes cannot score a single cluster, so that case needs its own test. A split
that sets apart fewer than ``min_windows`` windows is not considered: one odd window
(a cough, a clipped word) is not a speaker, though a speaker who only ever says one
short word is then merged into another.
Everything here is a pure function of the embeddings.
"""

from __future__ import annotations

import numpy as np
from scipy.cluster.hierarchy import fcluster, linkage

# Cosine similarity of two cluster centroids above which they are taken for one voice;
# Resemblyzer's partial embeddings of one voice are ~0.85-0.9 alike, of two ~0.5-0.75.
SAME_SPEAKER_SIMILARITY = 0.8


def cluster_speakers(
    embeddings: np.ndarray,
    *,
    num_speakers: int | None = None,
    max_speakers: int = 8,
    same_speaker_similarity: float = SAME_SPEAKER_SIMILARITY,
    min_windows: int = 2,
) -> np.ndarray:
    """A cluster number (0-based) per row of ``embeddings``.

    Args:
        embeddings: One voice embedding per row.
        num_speakers: The number of speakers if known (capped at the number of rows).
        max_speakers: The most speakers to consider when estimating.
        same_speaker_similarity: Centroid similarity above which a split is rejected.
        min_windows: The fewest windows a speaker needs when the count is estimated.
    """
    count = len(embeddings)
    if count < 2 or num_speakers == 1:
        return np.zeros(count, dtype=int)
    normalised = embeddings / np.linalg.norm(embeddings, axis=1, keepdims=True)
    tree = linkage(normalised, method="average", metric="cosine")
    if num_speakers is not None:
        return _labels(tree, min(num_speakers, count))
    distances = np.clip(1.0 - normalised @ normalised.T, 0.0, 2.0)
    best_labels, best_score = np.zeros(count, dtype=int), -1.0
    for k in range(2, min(max_speakers, count - 1) + 1):
        labels = _labels(tree, k)
        if np.bincount(labels).min() < min_windows:
            continue
        score = silhouette(distances, labels)
        if score > best_score:
            best_labels, best_score = labels, score
    if best_score < 0 or _closest_centroids(normalised, best_labels) > same_speaker_similarity:
        return np.zeros(count, dtype=int)
    return best_labels


def silhouette(distances: np.ndarray, labels: np.ndarray) -> float:
    """Mean silhouette of ``labels`` given pairwise ``distances`` (0 for a lone point)."""
    clusters = np.unique(labels)
    if len(clusters) < 2:
        return 0.0
    scores = np.zeros(len(labels))
    for i, own in enumerate(labels):
        same = labels == own
        if same.sum() < 2:
            continue
        inner = distances[i, same].sum() / (same.sum() - 1)
        outer = min(distances[i, labels == other].mean() for other in clusters if other != own)
        scores[i] = (outer - inner) / max(inner, outer, 1e-12)
    return float(scores.mean())


def _labels(tree: np.ndarray, k: int) -> np.ndarray:
    return np.asarray(fcluster(tree, k, criterion="maxclust"), dtype=int) - 1


def _closest_centroids(normalised: np.ndarray, labels: np.ndarray) -> float:
    """The highest cosine similarity between two cluster centroids."""
    centroids = np.array([normalised[labels == c].mean(axis=0) for c in np.unique(labels)])
    centroids /= np.linalg.norm(centroids, axis=1, keepdims=True)
    similarity = centroids @ centroids.T
    np.fill_diagonal(similarity, -1.0)
    return float(similarity.max())
