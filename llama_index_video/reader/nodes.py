"""Node types for moments in media, and how media reaches a multimodal embedding.

LlamaIndex embeds a node through ``node.get_content(MetadataMode.EMBED)`` and hands
only that string to the embedding model (``VectorStoreIndex``, ``IngestionPipeline``).
So that a multimodal model can embed the pixels or the clip instead, frame and clip
nodes return a :class:`MediaText`: a ``str`` (text-only models embed the description
as usual) that also carries a reference to the media file. A model never reads a file
because some text said so: only a ``MediaText`` created by these nodes carries a path.
"""

from __future__ import annotations

from pathlib import Path

from llama_index.core.schema import ImageNode, MetadataMode, Node


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
