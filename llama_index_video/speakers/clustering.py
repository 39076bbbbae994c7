"""Grouping voice embeddings into speakers, with the number of speakers given or estimated.

:func:`cluster_windows` serves CAM++ window embeddings (:mod:`.campplus_diarizer`).
Many windows (a recording of more than ~20 s of speech) are split by spectral
clustering: each window keeps its few most similar neighbours, and the number of
speakers is where the graph Laplacian's eigenvalues jump most. Few windows are split
by average-linkage clustering at a fixed similarity. Then, when the count is
estimated, a group of windows too small to be a speaker (under ~2 s of speech: a
laugh, a cough, a window straddling two voices) joins the nearest real one, and two
groups whose centroids are as alike as one voice's are merged. A given count is
used as it is. Measured on real recordings in docs/evaluation.md.

:func:`cluster_speakers` serves Resemblyzer's embeddings:
average-linkage agglomerative clustering on cosine distance, tried for every count
from 2 to ``max_speakers``; the count with the best mean silhouette wins. One
speaker is chosen instead when even the best split leaves clusters whose centroids
are as alike as windows of one voice usually are (``same_speaker_similarity``):
silhouettes cannot score a single cluster, so that case needs its own test. A split
that sets apart fewer than ``min_windows`` windows is not considered: one odd window
(a cough, a clipped word) is not a speaker, though a speaker who only ever says one
short word is then merged into another.
Everything here is a pure function of the embeddings. SciPy comes with the
``speakers`` extra; without it, importing this module (and so either diarizer) is the
one-line missing-extra error, not a traceback.
"""

from __future__ import annotations

import numpy as np

from llama_index_video.errors import MissingDependencyError

try:
    from scipy.cluster.hierarchy import fcluster, linkage
    from scipy.cluster.vq import kmeans2
except ImportError as exc:
    raise MissingDependencyError("scipy", "speakers", "Speaker labels") from exc

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


# CAM++ window embeddings (1 s windows): two groups of one voice have centroids ~0.8-0.9
# alike, of two voices ~0.5-0.7 (0.7 for two women on one phone line).
MERGE_SIMILARITY = 0.8
# Average-linkage threshold for few windows: windows of one voice are ~0.45-0.8 alike
# (0.45 against 0.4 found the third voice of one more AMI excerpt, and no extra ones).
LINKAGE_SIMILARITY = 0.45
SPECTRAL_WINDOWS = 40  # from this many windows on, spectral clustering
_NEIGHBOURS = 6
_MOST_WINDOWS = 1200  # spectral clustering's eigen-decomposition grows as the cube


MAX_SPEAKERS = 16
"""The most voices :func:`cluster_windows` estimates. At 8, a new user's 13.8 minutes of
ten real LibriSpeech readers taking turns got 7 labels (two men, and three women, each
under one), 0.72 of the speech under its label's main voice; at 12 or 16, 10 labels and
0.999. The 15 real recordings of ``benchmarks/diarization.py`` get the same counts and
error at 8, 12 and 16 (2 to 4 voices each)."""


def cluster_windows(
    embeddings: np.ndarray,
    *,
    num_speakers: int | None = None,
    max_speakers: int = MAX_SPEAKERS,
    min_speakers: int = 1,
    min_windows: int = 4,
    merge_similarity: float = MERGE_SIMILARITY,
    linkage_similarity: float = LINKAGE_SIMILARITY,
) -> np.ndarray:
    """A cluster number (0-based) per row of unit-length ``embeddings``.

    Args:
        embeddings: One unit-length voice embedding per row, in time order.
        num_speakers: The number of speakers if known: exactly that many clusters
            (or one per row when there are fewer rows).
        max_speakers: The most speakers to consider when estimating.
        min_speakers: When estimating, the fewest speakers there are known to be (a
            floor heard another way, :func:`.segmentation.speaker_floor`): an estimate
            under it is replaced by a split into that many.
        min_windows: When estimating, the fewest windows a speaker needs.
        merge_similarity: When estimating, clusters whose centroids are at least this
            alike are merged.
        linkage_similarity: Average-linkage threshold when there are few windows.
    """
    count = len(embeddings)
    if count < 2 or num_speakers == 1:
        return np.zeros(count, dtype=int)
    if num_speakers is not None:
        return _split(embeddings, min(num_speakers, count), max_speakers, linkage_similarity)
    labels = _split(embeddings, None, max_speakers, linkage_similarity)
    labels = _absorb_small(embeddings, labels, min_windows)
    labels = _merge_alike(embeddings, labels, merge_similarity)
    least = min(min_speakers, max_speakers, count)
    if labels.max() + 1 < least:
        return _split(embeddings, least, max_speakers, linkage_similarity)
    return labels


def _split(
    embeddings: np.ndarray, k: int | None, max_speakers: int, linkage_similarity: float
) -> np.ndarray:
    count = len(embeddings)
    if count < SPECTRAL_WINDOWS:
        tree = linkage(embeddings, method="average", metric="cosine")
        if k is not None:
            return _labels(tree, k)
        return _dense(_labels_below(tree, 1.0 - linkage_similarity))
    if count <= _MOST_WINDOWS:
        return spectral(embeddings, k=k, max_speakers=max_speakers)
    # Too many windows for one eigen-decomposition: split an even sample, then give
    # every window the cluster of the nearest centroid.
    sample = embeddings[np.linspace(0, count - 1, _MOST_WINDOWS).round().astype(int)]
    labels = spectral(sample, k=k, max_speakers=max_speakers)
    return _nearest(embeddings, _centroids(sample, labels))


def spectral(embeddings: np.ndarray, *, k: int | None, max_speakers: int) -> np.ndarray:
    """Spectral clustering on a nearest-neighbour graph of cosine similarities.

    ``k`` None: the count is where the Laplacian's eigenvalue gap is widest.
    """
    count = len(embeddings)
    similarity = embeddings @ embeddings.T
    keep = min(count - 1, max(_NEIGHBOURS, count // 50))
    nearest = np.argsort(-similarity, axis=1)[:, : keep + 1]
    affinity = np.zeros_like(similarity)
    rows = np.arange(count)[:, None]
    affinity[rows, nearest] = similarity[rows, nearest]
    affinity = np.maximum(0.5 * (affinity + affinity.T), 0.0)
    np.fill_diagonal(affinity, 0.0)
    laplacian = np.diag(affinity.sum(axis=1)) - affinity
    values, vectors = np.linalg.eigh(laplacian)
    if k is None:
        top = min(max_speakers, count - 1)
        k = int(np.argmax(np.diff(values[: top + 1]))) + 1
    if k <= 1:
        return np.zeros(count, dtype=int)
    points = vectors[:, :k]
    best: np.ndarray | None = None
    best_inertia = np.inf
    for seed in range(5):  # k-means from a few seeded starts; the tightest wins
        centres, labels = kmeans2(points, k, minit="++", seed=seed)
        inertia = float(((points - centres[labels]) ** 2).sum())
        if len(np.unique(labels)) == k and inertia < best_inertia:
            best, best_inertia = labels, inertia
    if best is None:  # k-means kept losing a cluster: fall back to linkage on the points
        best = _labels(linkage(points, method="ward"), k)
    return np.asarray(best, dtype=int)


def _absorb_small(embeddings: np.ndarray, labels: np.ndarray, min_windows: int) -> np.ndarray:
    sizes = np.bincount(labels)
    major = np.flatnonzero(sizes >= min_windows)
    if len(major) <= 1:
        return np.zeros(len(labels), dtype=int)
    small = sizes[labels] < min_windows
    centroids = _centroids(embeddings, labels)[major]
    relabelled = labels.copy()
    relabelled[small] = major[np.argmax(embeddings[small] @ centroids.T, axis=1)]
    return _dense(relabelled)


def _merge_alike(embeddings: np.ndarray, labels: np.ndarray, threshold: float) -> np.ndarray:
    labels = labels.copy()
    for _ in range(int(labels.max()) + 1):  # each pass merges two clusters or stops
        if labels.max() == 0:
            break
        centroids = _centroids(embeddings, labels)
        similarity = centroids @ centroids.T
        np.fill_diagonal(similarity, -2.0)
        first, second = np.unravel_index(int(np.argmax(similarity)), similarity.shape)
        if similarity[first, second] < threshold:
            break
        labels[labels == second] = first
        labels = _dense(labels)
    return labels


def _centroids(embeddings: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Unit-length mean embedding of each cluster 0..max(labels)."""
    centroids = np.array([embeddings[labels == c].mean(axis=0) for c in range(labels.max() + 1)])
    return centroids / np.maximum(np.linalg.norm(centroids, axis=1, keepdims=True), 1e-12)


def _nearest(embeddings: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    return np.asarray(np.argmax(embeddings @ centroids.T, axis=1), dtype=int)


def _labels_below(tree: np.ndarray, distance: float) -> np.ndarray:
    return np.asarray(fcluster(tree, distance, criterion="distance"), dtype=int) - 1


def _dense(labels: np.ndarray) -> np.ndarray:
    """Labels renumbered 0..n-1 in order of first appearance."""
    order = {label: index for index, label in enumerate(dict.fromkeys(labels.tolist()))}
    return np.array([order[label] for label in labels.tolist()], dtype=int)
