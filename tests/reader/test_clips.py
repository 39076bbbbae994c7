"""Clip nodes: flat metadata, deterministic ids, media reaching a multimodal embedding."""

from __future__ import annotations

from pathlib import Path

import pytest
from llama_index.core.schema import MetadataMode, NodeRelationship

from llama_index_video import schema
from llama_index_video.media.clips import Clip, cut_clips
from llama_index_video.reader.clips import SPOKEN_LIMIT, ClipOptions, clip_node, clip_nodes
from llama_index_video.reader.ids import content_hash, document_id
from llama_index_video.reader.moments import SourceFile
from llama_index_video.reader.nodes import ClipNode, MediaText
from llama_index_video.reader.units import TranscriptUnit
from llama_index_video.reader.video_reader import VideoReader
from tests.media.synthetic import write_video
from tests.reader.test_subtitle_coverage import Counting

HASH = "ab" * 32


def make_clip(modality: str = "video", start: float = 110.0, end: float = 230.0) -> Clip:
    suffix = "mp4" if modality == "video" else "mp3"
    return Clip(
        source=Path("/media/talk.mp4"),
        start=start,
        end=end,
        path=Path(f"/clips/{modality}-{start}.{suffix}"),
        modality=modality,  # type: ignore[arg-type]
        mimetype="video/mp4" if modality == "video" else "audio/mp3",
        content_hash=HASH,
    )


SOURCE = SourceFile(Path("/media/talk.mp4"), HASH)


def test_metadata_is_flat_and_locates_the_moment():
    node = clip_node(SOURCE, make_clip())
    assert node.metadata == {
        "source": "/media/talk.mp4",
        "file_name": "talk.mp4",
        "content_hash": HASH,
        "modality": "video",
        "start_s": 110.0,
        "end_s": 230.0,
        "time": "01:50",
        "label": "[talk.mp4 01:50-03:50]",
        "media_url": "/media/talk.mp4#t=110.0,230.0",
    }
    assert all(isinstance(v, str | int | float) for v in node.metadata.values())
    assert node.ref_doc_id == document_id(HASH)
    assert node.relationships[NodeRelationship.SOURCE].metadata == {"source": "/media/talk.mp4"}


def test_ids_are_deterministic_and_distinct_per_modality_and_window():
    first = clip_node(SOURCE, make_clip("video")).node_id
    moved = SourceFile(Path("/elsewhere/moved.mp4"), HASH)
    assert clip_node(SOURCE, make_clip("video")).node_id == first
    assert clip_node(moved, make_clip("video")).node_id == first  # same content, same id
    audio = clip_node(SOURCE, make_clip("audio")).node_id
    shifted = clip_node(SOURCE, make_clip("video", start=111.0)).node_id
    assert len({first, audio, shifted}) == 3


@pytest.mark.parametrize(("modality", "mimetype"), [("video", "video/mp4"), ("audio", "audio/mp3")])
def test_the_embedding_text_carries_the_clip(modality, mimetype):
    node = clip_node(SOURCE, make_clip(modality), spoken="the ozone hole")
    assert isinstance(node, ClipNode)
    resource = node.video_resource if modality == "video" else node.audio_resource
    assert resource is not None and resource.mimetype == mimetype
    embed_text = node.get_content(MetadataMode.EMBED)
    assert isinstance(embed_text, MediaText)
    assert (embed_text.media_path, embed_text.mimetype, embed_text.modality) == (
        resource.path,
        mimetype,
        modality,
    )
    assert embed_text.startswith(f"{modality.capitalize()} clip 01:50-03:50")
    assert "Said: the ozone hole" in embed_text
    for key in ("source", "start_s", "media_url", "content_hash"):
        assert key not in embed_text  # locators are not embedded
    assert "[talk.mp4 01:50-03:50]" in node.get_content(MetadataMode.LLM)


def test_clip_nodes_carry_what_is_said_in_each_window():
    units = [
        TranscriptUnit(100.0, 115.0, "Before and into the clip."),
        TranscriptUnit(150.0, 160.0, "Inside it."),
        TranscriptUnit(240.0, 250.0, "After it."),
    ]
    (node,) = clip_nodes(SOURCE, [make_clip()], units=units, note="auto captions")
    text = node.get_content()
    assert "Said: Before and into the clip. Inside it." in text
    assert "After it." not in text
    assert node.metadata[schema.NOTE] == "auto captions"
    long = [TranscriptUnit(120.0, 121.0, "word " * 1000)]
    (node,) = clip_nodes(SOURCE, [make_clip()], units=long)
    assert len(node.get_content()) < SPOKEN_LIMIT + 60


def test_nodes_from_real_clips(tmp_path):
    video = write_video(tmp_path / "talk.mp4", seconds=5.0, gop=10)
    source = SourceFile(video, content_hash(video))
    clips = cut_clips(
        video, out_dir=tmp_path / "clips", content_hash=source.content_hash, max_seconds=3
    )
    nodes = list(clip_nodes(source, clips))  # the second window starts on the 2 s keyframe
    assert [(n.metadata["start_s"], n.metadata["end_s"]) for n in nodes] == [
        (0.0, 3.0),
        (2.0, 5.0),
    ]
    assert all(Path(n.video_resource.path).is_file() for n in nodes)
    assert len({n.node_id for n in nodes}) == 2


def test_a_video_read_with_clips_is_probed_once(tmp_path, probes):
    video = write_video(tmp_path / "talk.mp4", seconds=12.0, gop=10)
    options = ClipOptions(video_seconds=5, video_overlap=1)
    reader = VideoReader(
        media_dir=tmp_path / "media", transcriber=Counting(), frames=None, clips=options
    )

    clips = [n for n in reader.read(video).nodes if isinstance(n, ClipNode)]

    assert clips[0].metadata["start_s"] == 0.0
    assert clips[-1].metadata["end_s"] == pytest.approx(12.0, abs=0.1)
    assert probes == {video.name: 1}  # not again to decode its audio or cut its clips
