"""Nodes an embedding could not embed yet, kept whole in the manifest until a later
ingest retries them (:class:`~llama_index_video.store.manifest.PendingNode`)."""

from __future__ import annotations

from llama_index.core.schema import BaseNode, ImageNode, Node, TextNode

from llama_index_video import schema
from llama_index_video.store.manifest import PendingNode

_NODE_TYPES: dict[str, type[BaseNode]] = {
    cls.class_name(): cls for cls in (TextNode, ImageNode, Node)
}


def pending_node(node: BaseNode, error: str) -> PendingNode:
    """``node`` as the manifest keeps it, with why it could not be embedded."""
    return PendingNode(
        node_id=node.node_id,
        content_hash=str(node.metadata.get(schema.CONTENT_HASH, "")),
        node_type=node.class_name(),
        node_json=node.to_json(),
        error=error,
    )


def node_from_json(node_type: str, node_json: str) -> BaseNode:
    """A pending node back, as the class it was stored from."""
    return _NODE_TYPES.get(node_type, TextNode).from_json(node_json)


def pending_reason(items: list[PendingNode]) -> str:
    """The first failure, shortened: enough to tell a quota from a bad file."""
    return items[0].error[:160] if items else "unknown error"
