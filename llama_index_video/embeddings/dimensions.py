"""One index, one vector length.

Vectors of different lengths cannot be compared, and Chroma refuses them only at
insert time with an opaque message (or, for a query, fails deep inside the
search). Checking the stored length against the model's before embedding turns
that into a clear error naming both numbers and the way out.
"""

from __future__ import annotations

from typing import Any

from llama_index_video.errors import EmbeddingError


def stored_dimension(store: Any) -> int | None:
    """The length of the vectors already in a Chroma collection (``None`` when it is empty).

    Args:
        store: A ``chromadb`` collection, or a ``ChromaVectorStore`` (its ``client``
            is the collection).
    """
    collection = store.client if hasattr(store, "client") else store
    rows = collection.get(limit=1, include=["embeddings"])
    embeddings = rows.get("embeddings")
    if embeddings is None or len(embeddings) == 0:
        return None
    return len(embeddings[0])


def check_dimension(store: Any, dimension: int, *, model: str) -> None:
    """Refuse to mix vector lengths in one collection.

    Args:
        store: A ``chromadb`` collection or a ``ChromaVectorStore``.
        dimension: The length of the vectors ``model`` makes.
        model: The embedding model, as named in the error.

    Raises:
        EmbeddingError: the collection already holds vectors of another length.
    """
    stored = stored_dimension(store)
    if stored is not None and stored != dimension:
        collection = store.client if hasattr(store, "client") else store
        name = getattr(collection, "name", "the collection")
        raise EmbeddingError(
            f"index collection {name!r} holds {stored}-dimensional vectors but {model} makes "
            f"{dimension}-dimensional ones: use output_dimensionality={stored} (with the same "
            "model) or ingest into a new index"
        )
