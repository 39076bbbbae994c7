"""One index, one vector length.

Vectors of different lengths cannot be compared, and Chroma refuses them only at
insert time with an opaque message (or, for a query, fails deep inside the
search). Checking the stored length against the model's before embedding turns
that into a clear error naming both numbers and the way out.
"""

from __future__ import annotations

from typing import Any

from llama_index_video.errors import EmbeddingError


def stored_dimension(collection: Any) -> int | None:
    """The length of the vectors already in a ``chromadb`` collection (``None`` when empty)."""
    rows = collection.get(limit=1, include=["embeddings"])
    embeddings = rows.get("embeddings")
    if embeddings is None or len(embeddings) == 0:
        return None
    return len(embeddings[0])


def check_dimension(collection: Any, dimension: int, *, model: str) -> None:
    """Refuse to mix vector lengths in one collection.

    Args:
        collection: A ``chromadb`` collection.
        dimension: The length of the vectors ``model`` makes.
        model: The embedding model, as named in the error.

    Raises:
        EmbeddingError: the collection already holds vectors of another length.
    """
    stored = stored_dimension(collection)
    if stored is not None and stored != dimension:
        name = getattr(collection, "name", "the collection")
        raise EmbeddingError(
            f"index collection {name!r} holds {stored}-dimensional vectors but {model} makes "
            f"{dimension}-dimensional ones: use output_dimensionality={stored} (with the same "
            "model) or ingest into a new index"
        )
