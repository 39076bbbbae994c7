"""Nodes and LlamaIndex indexes whose media paths an index folder stores relative to it.

The paths themselves (how a folder stores one, where a stored one resolves) are
:mod:`llama_index_video.store.media_paths`; this module applies them to nodes: a node's
stored and resolved copies, and the LlamaIndex indexes that store every node they embed
in that form.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from llama_index.core import VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.indices import MultiModalVectorStoreIndex
from llama_index.core.schema import BaseNode, TransformComponent

from llama_index_video.reader.nodes import with_media_paths
from llama_index_video.store.media_paths import resolved_path, stored_path


def stored_node(node: BaseNode, folder: Path) -> BaseNode:
    """A copy of ``node`` with its media paths as ``folder`` stores them."""
    return with_media_paths(node, lambda path: stored_path(path, folder))


def resolved_node(node: BaseNode, folder: Path) -> BaseNode:
    """A copy of a stored ``node`` with its media paths resolved against ``folder``."""
    return with_media_paths(node, lambda path: resolved_path(path, folder))


class _StoresRelativePaths:
    """Turns embedded nodes into their stored form on their way to the vector store.

    LlamaIndex embeds in ``_get_node_with_embedding`` and hands the copies it returns
    to the vector store: the one point where every node has been embedded (by the
    text and, for frames, the visual model) and is not stored yet.
    """

    folder: Path

    def _get_node_with_embedding(
        self, nodes: Sequence[BaseNode], *args: Any, **kwargs: Any
    ) -> list[BaseNode]:
        embedded = super()._get_node_with_embedding(nodes, *args, **kwargs)  # type: ignore[misc]
        return [stored_node(node, self.folder) for node in embedded]

    async def _aget_node_with_embedding(
        self, nodes: Sequence[BaseNode], *args: Any, **kwargs: Any
    ) -> list[BaseNode]:
        embedded = await super()._aget_node_with_embedding(nodes, *args, **kwargs)  # type: ignore[misc]
        return [stored_node(node, self.folder) for node in embedded]


class FolderVectorStoreIndex(_StoresRelativePaths, VectorStoreIndex):
    """A ``VectorStoreIndex`` storing media paths relative to the index ``folder``."""

    def __init__(self, *args: Any, folder: Path, **kwargs: Any) -> None:
        self.folder = folder
        super().__init__(*args, **kwargs)


class FolderMultiModalVectorStoreIndex(_StoresRelativePaths, MultiModalVectorStoreIndex):
    """A ``MultiModalVectorStoreIndex`` storing media paths relative to the index ``folder``."""

    def __init__(self, *args: Any, folder: Path, **kwargs: Any) -> None:
        self.folder = folder
        super().__init__(*args, **kwargs)


def embedding_only(embed_model: BaseEmbedding) -> list[TransformComponent]:
    """What a LlamaIndex index of ours does to a document inserted into it: embed it.

    Moments reach the index as the nodes the reader made (``insert_nodes``), never as
    documents to split. Left unset (or empty, which LlamaIndex treats the same), an
    index takes ``Settings.transformations``, whose default ``SentenceSplitter`` loads
    tiktoken's GPT-2 encoding: 0.15 s and 44 MB on every open, for nothing.
    """
    return [embed_model]


def nodes_by_id(index: VectorStoreIndex, ids: list[str]) -> list[BaseNode]:
    """The nodes of ``ids`` from the index's vector store, or, for a store that keeps only
    vectors (``SimpleVectorStore``), from its docstore; missing ones left out."""
    store = index.vector_store
    if store.stores_text:
        return list(store.get_nodes(ids))
    return list(index.docstore.get_nodes(ids, raise_error=False))
