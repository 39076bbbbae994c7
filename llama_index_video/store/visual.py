"""Frames by their pixels: the index folder's second vector space, and how it is kept.

Decision: a frame's image vector (from a ``MultiModalEmbedding`` such as CLIP) lives in
its own Chroma collection, ``video_frames``, in the same database as the text
collection (``chroma/``), one row per frame node with the node's id and metadata. A
second collection because the two spaces differ in dimension and meaning: a query is
embedded by the image model's text tower and compared with frame vectors only
(text-to-image). The text index becomes LlamaIndex's ``MultiModalVectorStoreIndex``
over both stores, so the ingest code is unchanged: ``insert_nodes`` embeds every
node's text into the text store and each frame's pixels into the frame store, and
``delete_ref_doc`` clears a file from both.

Visual search is off by default (no model weights ship with any package, so it
cannot work offline out of the box); it is switched on per index folder, when it is
created (``VideoIndex(visual_model=ClipEmbedding())``, ``ingest --visual MODEL``). The
manifest records the model; later opens load the same model and refuse another one,
and an index created without frame vectors refuses to get them for only some files.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from llama_index_video._moved import moved
from llama_index_video.embeddings.identity import (
    TRANSFORMERS_CLIP,
    canonical_identity,
    embedding_identity,
)
from llama_index_video.errors import IndexCompatibilityError

if TYPE_CHECKING:
    from pathlib import Path

    from llama_index.core.embeddings import MultiModalEmbedding

FRAMES_COLLECTION = "video_frames"

VISUAL_META = "visual_embedding"
"""Manifest key of the visual model's identity; ``"none"`` when built without one."""
NO_VISUAL = "none"


def visual_model_for(
    folder: Path, recorded: str | None, given: MultiModalEmbedding | None, *, indexed: bool
) -> MultiModalEmbedding | None:
    """The visual model to open an index with, checked against what built it.

    Args:
        folder: The index folder, for messages.
        recorded: The identity the manifest records (``None``: never recorded,
            ``"none"``: built without frame vectors).
        given: The model the caller passed, if any.
        indexed: Whether the index already holds files.

    Raises:
        IndexCompatibilityError: the index was built with another visual model, or
            without frame vectors while some files are already indexed.
    """
    if recorded is None or (recorded == NO_VISUAL and not indexed):
        return given
    if recorded == NO_VISUAL:
        if given is None:
            return None
        raise IndexCompatibilityError(
            f"{folder}: built without visual search; its indexed frames have no image "
            "vectors. Ingest into a new folder to search frames by their pixels"
        )
    if given is not None:
        given_identity = embedding_identity(given)
        if canonical_identity(given_identity) != canonical_identity(recorded):
            raise IndexCompatibilityError(
                f"{folder}: frames embedded with {recorded}, opened with {given_identity}; "
                "open it with the same visual model or ingest into a new folder"
            )
        return given
    family, _, name = canonical_identity(recorded).partition(":")
    if family != TRANSFORMERS_CLIP:
        raise IndexCompatibilityError(
            f"{folder}: frames embedded with {recorded}; pass that model as visual_model"
        )
    from llama_index_video.embeddings.clip import ClipEmbedding  # only for such a folder

    return ClipEmbedding(model_name=name)


__getattr__ = moved(
    __name__, "llama_index_video.search.policy", "VISUAL_CHANNEL", "DEFAULT_VISUAL_THRESHOLDS"
)
