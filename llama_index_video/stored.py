"""A stored moment as plain data, and a retrieved one with its scores.

Search reads of a stored node only its id, text, metadata, the ids it links to and its
frame's path. :class:`StoredMoment` holds exactly that, so the search pipeline
(retrieval, fusion, context, hits: :mod:`llama_index_video.search`) runs on it in a
process that never imports LlamaIndex (the command line's one-shot ``search``, see
:mod:`llama_index_video.search.one_shot`). The same pipeline runs on LlamaIndex's nodes,
which have the same attributes, behind ``VideoIndex`` and its retrievers; LlamaIndex's
``NodeWithScore`` likewise has the attributes of :class:`Scored`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Final, Protocol

from llama_index_video import schema

SOURCE: Final = "1"
PREVIOUS: Final = "2"
NEXT: Final = "3"
"""LlamaIndex's ``NodeRelationship`` values, the keys of a node's ``relationships``."""


class Moment(Protocol):
    """What search reads of a stored node: a :class:`StoredMoment` or a LlamaIndex node."""

    @property
    def node_id(self) -> str: ...

    @property
    def metadata(self) -> dict[str, Any]: ...

    @property
    def relationships(self) -> Any: ...

    def get_content(self) -> str: ...


@dataclass(frozen=True)
class Link:
    """The id of a node another links to (LlamaIndex's ``RelatedNodeInfo``, read)."""

    node_id: str


@dataclass(frozen=True)
class StoredMoment:
    """A row of the vector store: a node as search reads it.

    Attributes:
        node_id: The node's id.
        text: Its text.
        metadata: Its metadata, as stored.
        relationships: The ids it links to, by relationship (:data:`PREVIOUS`, ...).
        image_path: A frame node's picture (LlamaIndex's ``ImageNode.image_path``).
    """

    node_id: str
    text: str
    metadata: dict[str, Any]
    relationships: dict[str, Link] = field(default_factory=dict)
    image_path: str | None = None

    def get_content(self) -> str:
        """Its text (as a LlamaIndex node's ``get_content()`` without metadata)."""
        return self.text

    @property
    def ref_doc_id(self) -> str | None:
        """The id of the document it came from."""
        source = self.relationships.get(SOURCE)
        return source.node_id if source is not None else None

    def with_media_paths(self, change: Any) -> StoredMoment:
        """A copy whose frame paths are ``change(path)`` (as
        :func:`~llama_index_video.reader.nodes.with_media_paths` does for nodes)."""
        stored = self.metadata.get(schema.IMAGE_PATH)
        if not stored and not self.image_path:
            return self
        metadata = {**self.metadata, schema.IMAGE_PATH: change(str(stored))} if stored else None
        return replace(
            self,
            metadata=self.metadata if metadata is None else metadata,
            image_path=change(self.image_path) if self.image_path else None,
        )


@dataclass
class Scored:
    """A retrieved moment: its score, and the cosine similarity behind it when the score
    is a fused one (LlamaIndex's ``NodeWithScore``, or the package's ``FusedHit``)."""

    node: Any
    score: float | None = None
    similarity: float | None = None


@dataclass
class Query:
    """A query on its way through search (LlamaIndex's ``QueryBundle``, read): the text,
    and its embedding once a retriever has computed it."""

    query_str: str
    embedding: list[float] | None = None
    custom_embedding_strs: list[str] | None = None

    @property
    def embedding_strs(self) -> list[str]:
        """The texts its embedding is made of."""
        custom = self.custom_embedding_strs
        return [self.query_str] if custom is None else custom
