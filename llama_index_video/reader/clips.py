"""Clip nodes: a video or audio window of a recording as one retrievable node.

A :class:`~llama_index_video.reader.nodes.ClipNode` points at the clip file
(``video_resource`` or ``audio_resource``), so a multimodal embedding such as
:class:`~llama_index_video.embeddings.gemini.GeminiMultimodalEmbedding` embeds the
clip itself; its text (the window's label and what is said in it) is what a
text-only model embeds and what the LLM reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from llama_index.core.schema import MediaResource, NodeRelationship, ObjectType, RelatedNodeInfo

from llama_index_video import schema
from llama_index_video.media.clips import Clip
from llama_index_video.reader.ids import millis, stable_id
from llama_index_video.reader.moments import SourceFile, spoken_between
from llama_index_video.reader.nodes import ClipNode
from llama_index_video.reader.units import TranscriptUnit

SPOKEN_LIMIT = 1000  # characters of transcript carried in a clip node's text


def clip_node(
    source: SourceFile, clip: Clip, *, spoken: str = "", note: str | None = None
) -> ClipNode:
    """One node for one clip, with flat metadata and a deterministic id.

    Args:
        source: The recording the clip was cut from.
        clip: The clip (from :func:`~llama_index_video.media.clips.cut_clips`).
        spoken: Transcript text within the clip's window, if any.
        note: A caveat for the reader of the node (e.g. "auto-generated captions").

    Returns:
        A :class:`ClipNode` with metadata ``source``, ``file_name``,
        ``content_hash``, ``modality`` (``video``/``audio``), ``start_s``, ``end_s``,
        ``time``, ``label`` and ``media_url`` (``file#t=start,end``); its id is a
        function of the file's content, the modality and the window.
    """
    metadata = source.timed_metadata(clip.modality, clip.start, clip.end)
    metadata[schema.MEDIA_URL] = schema.media_fragment_url(str(source.path), clip.start, clip.end)
    if note:
        metadata[schema.NOTE] = note
    kind = "Video" if clip.modality == "video" else "Audio"
    window = f"{schema.format_timestamp(clip.start)}-{schema.format_timestamp(clip.end)}"
    text = f"{kind} clip {window}" + (f"\nSaid: {spoken}" if spoken else "")
    resource = MediaResource(path=clip.path, mimetype=clip.mimetype)
    node = ClipNode(
        id_=stable_id(source.content_hash, clip.modality, millis(clip.start), millis(clip.end)),
        text_resource=MediaResource(text=text),
        video_resource=resource if clip.modality == "video" else None,
        audio_resource=resource if clip.modality == "audio" else None,
        excluded_embed_metadata_keys=list(schema.EMBED_EXCLUDED_KEYS),
        excluded_llm_metadata_keys=list(schema.LLM_EXCLUDED_KEYS),
        relationships={
            NodeRelationship.SOURCE: RelatedNodeInfo(
                node_id=source.doc_id,
                node_type=ObjectType.DOCUMENT,
                metadata={schema.SOURCE: str(source.path)},
            )
        },
    )
    # Assigned, not passed: mypy sees only the field's alias (``extra_info``) in __init__.
    node.metadata = metadata
    return node


def clip_nodes(
    source: SourceFile,
    clips: Iterable[Clip],
    *,
    units: Sequence[TranscriptUnit] = (),
    note: str | None = None,
) -> Iterator[ClipNode]:
    """Nodes for ``clips`` (lazily), each carrying the transcript spoken in its window.

    Args:
        source: The recording the clips were cut from.
        clips: Clips of that recording, e.g. ``cut_clips(source.path, ...)``.
        units: Transcript units of the recording, to put what is said in each
            clip into its text (at most ``SPOKEN_LIMIT`` characters).
        note: A caveat copied into every node's metadata.
    """
    for clip in clips:
        spoken = spoken_between(units, clip.start, clip.end, SPOKEN_LIMIT) if units else ""
        yield clip_node(source, clip, spoken=spoken, note=note)


__all__ = ["SPOKEN_LIMIT", "clip_node", "clip_nodes"]
