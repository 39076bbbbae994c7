"""Clip nodes: a video or audio window of a recording as one retrievable node.

A :class:`~llama_index_video.reader.nodes.ClipNode` points at the clip file
(``video_resource`` or ``audio_resource``), so a multimodal embedding such as
:class:`~llama_index_video.embeddings.gemini.GeminiMultimodalEmbedding` embeds the
clip itself; its text (the window's label and what is said in it) is what a
text-only model embeds and what the LLM reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from llama_index.core.schema import MediaResource, NodeRelationship, ObjectType, RelatedNodeInfo

from llama_index_video import schema
from llama_index_video.media.clips import Clip, ClipModality
from llama_index_video.media.limits import (
    DEFAULT_WINDOWS,
    MAX_SECONDS,
    MIN_WINDOW_SECONDS,
    VIDEO_WITH_AUDIO_SECONDS,
)
from llama_index_video.reader.ids import millis, stable_id
from llama_index_video.reader.moments import SourceFile, spoken_between
from llama_index_video.reader.nodes import ClipNode
from llama_index_video.reader.units import TranscriptUnit

SPOKEN_LIMIT = 1000  # characters of transcript carried in a clip node's text


@dataclass(frozen=True, kw_only=True)
class ClipOptions:
    """Which clips the reader cuts, for a multimodal embedding to embed natively.

    Attributes:
        video_seconds: Longest video clip; None: 80 s when the video has sound (the
            safer limit for Gemini Embedding 2 with audio), else 120 s.
        video_overlap: Seconds shared by consecutive video clips.
        audio_seconds: Longest audio clip (audio files).
        audio_overlap: Seconds shared by consecutive audio clips.
    """

    video_seconds: float | None = None
    video_overlap: float = DEFAULT_WINDOWS["video"][1]
    audio_seconds: float = DEFAULT_WINDOWS["audio"][0]
    audio_overlap: float = DEFAULT_WINDOWS["audio"][1]

    def __post_init__(self) -> None:
        for name, modality in (("video_seconds", "video"), ("audio_seconds", "audio")):
            value, longest = getattr(self, name), MAX_SECONDS[modality]
            if value is not None and not MIN_WINDOW_SECONDS <= value <= longest:
                raise ValueError(
                    f"{name} must be within {MIN_WINDOW_SECONDS:g}..{longest:g} seconds, "
                    f"got {value}"
                )
        if not 0 <= self.video_overlap < (self.video_seconds or VIDEO_WITH_AUDIO_SECONDS) / 2:
            raise ValueError("video_overlap must be >= 0 and under half a clip")
        if not 0 <= self.audio_overlap < self.audio_seconds / 2:
            raise ValueError("audio_overlap must be >= 0 and under half a clip")

    def window(self, modality: ClipModality, *, has_audio: bool) -> tuple[float, float]:
        """``(max_seconds, overlap_seconds)`` for clips of this modality."""
        if modality == "audio":
            return self.audio_seconds, self.audio_overlap
        default = VIDEO_WITH_AUDIO_SECONDS if has_audio else MAX_SECONDS["video"]
        return self.video_seconds or default, self.video_overlap


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


__all__ = ["SPOKEN_LIMIT", "ClipOptions", "clip_node", "clip_nodes"]
