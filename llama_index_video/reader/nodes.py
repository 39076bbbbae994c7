"""Node types for moments in media, and how media reaches a multimodal embedding.

LlamaIndex embeds a node through ``node.get_content(MetadataMode.EMBED)`` and hands
only that string to the embedding model (``VectorStoreIndex``, ``IngestionPipeline``).
So that a multimodal model can embed the pixels or the clip instead, frame and clip
nodes return a :class:`MediaText`: a ``str`` (text-only models embed the description
as usual) that also carries a reference to the media file. A model never reads a file
because some text said so: only a ``MediaText`` created by these nodes carries a path.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Final

from llama_index.core.schema import BaseNode, ImageNode, MetadataMode, Node

from llama_index_video import schema

MEDIA_RESOURCES: Final = ("image_resource", "audio_resource", "video_resource")
"""The ``Node`` resources that can hold a media file's path."""


class MediaText(str):
    """The embedding text of a media node, carrying the media it describes."""

    media_path: Path
    mimetype: str
    modality: str

    def __new__(cls, text: str, *, media_path: Path, mimetype: str, modality: str) -> MediaText:
        obj = super().__new__(cls, text)
        obj.media_path = media_path
        obj.mimetype = mimetype
        obj.modality = modality
        return obj

    def __reduce__(self) -> tuple[object, ...]:
        # Keyword-only __new__: copy and pickle need to be told how to rebuild.
        return _media_text, (str(self), self.media_path, self.mimetype, self.modality)


def _media_text(text: str, media_path: Path, mimetype: str, modality: str) -> MediaText:
    return MediaText(text, media_path=media_path, mimetype=mimetype, modality=modality)


class FrameNode(ImageNode):
    """A sampled video frame, stored by path (never base64 in metadata).

    It keeps ``ImageNode``'s ``class_name`` on purpose: vector stores rebuild nodes by
    that name, so a frame comes back from Chroma as a plain ``ImageNode``.
    """

    def get_content(self, metadata_mode: MetadataMode = MetadataMode.NONE) -> str:
        """The node's text; for the embedding model (``MetadataMode.EMBED``) a text that
        also carries the frame, so that a multimodal model embeds the picture."""
        content = super().get_content(metadata_mode)
        if metadata_mode is MetadataMode.EMBED and self.image_path:
            return MediaText(
                content,
                media_path=Path(self.image_path),
                mimetype=self.image_mimetype or "image/jpeg",
                modality="frame",
            )
        return content


class ClipNode(Node):
    """A video or audio clip (``video_resource`` / ``audio_resource``) with a text description.

    Serialised as LlamaIndex's ``Node``, for the same reason as :class:`FrameNode`.
    """

    def get_content(self, metadata_mode: MetadataMode = MetadataMode.NONE) -> str:
        """The node's text; for the embedding model (``MetadataMode.EMBED``) a text that
        also carries the clip, so that a multimodal model embeds the video or audio."""
        content = super().get_content(metadata_mode)
        resource = self.video_resource or self.audio_resource
        if metadata_mode is MetadataMode.EMBED and resource is not None and resource.path:
            return MediaText(
                content,
                media_path=Path(resource.path),
                mimetype=resource.mimetype or "application/octet-stream",
                modality="video" if self.video_resource is not None else "audio",
            )
        return content


def with_media_paths(node: BaseNode, change: Callable[[str], str]) -> BaseNode:
    """A copy of ``node`` whose media paths are ``change(path)``; ``node`` is untouched.

    The copy shares nothing it changes with ``node`` (a shallow ``model_copy`` would
    share the metadata dict and the resources), so the node LlamaIndex goes on to embed
    as an image keeps the paths its embedding reads. A node without media paths (a
    transcript unit) is returned as it is.

    The media paths of a node are written down here once: the ``image_path`` metadata
    (frames and the ``ocr`` units read from them), an ``ImageNode``'s ``image_path``,
    and the path of each media resource (clips). Other metadata (``source``, the input
    file) is not a media path, whatever its value.
    """
    resources = [getattr(node, name, None) for name in MEDIA_RESOURCES]
    has_paths = (
        node.metadata.get(schema.IMAGE_PATH)
        or getattr(node, "image_path", None)
        or any(r is not None and r.path is not None for r in resources)
    )
    if not has_paths:
        return node
    copy = node.model_copy()
    if node.metadata.get(schema.IMAGE_PATH):
        copy.metadata = {
            **node.metadata,
            schema.IMAGE_PATH: change(str(node.metadata[schema.IMAGE_PATH])),
        }
    if isinstance(copy, ImageNode) and copy.image_path:
        copy.image_path = change(copy.image_path)
    if isinstance(copy, Node):
        for name in MEDIA_RESOURCES:
            resource = getattr(copy, name)
            if resource is not None and resource.path is not None:
                moved = resource.model_copy(update={"path": Path(change(str(resource.path)))})
                setattr(copy, name, moved)
    return copy
