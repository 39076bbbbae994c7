from __future__ import annotations

import copy
import pickle
from pathlib import Path

from llama_index.core.schema import MediaResource, MetadataMode, TextNode

from llama_index_video import schema
from llama_index_video.reader.nodes import ClipNode, FrameNode, MediaText, with_media_paths


def test_frame_embed_text_carries_the_image_and_nothing_else_does():
    node = FrameNode(text="On screen: ALTITUDE (km)", image_path="/media/f.jpg")
    embedded = node.get_content(MetadataMode.EMBED)
    assert isinstance(embedded, MediaText) and embedded == "On screen: ALTITUDE (km)"
    assert embedded.media_path == Path("/media/f.jpg") and embedded.mimetype == "image/jpeg"
    assert type(node.get_content(MetadataMode.LLM)) is str


def test_clip_embed_text_carries_the_clip():
    node = ClipNode(
        text_resource=MediaResource(text="clip 00:00-02:00"),
        audio_resource=MediaResource(path=Path("/media/c.mp3"), mimetype="audio/mpeg"),
    )
    embedded = node.get_content(MetadataMode.EMBED)
    assert isinstance(embedded, MediaText) and embedded.modality == "audio"


def test_media_text_survives_copy_and_pickle():
    text = MediaText("x", media_path=Path("/a.jpg"), mimetype="image/jpeg", modality="frame")
    for clone in (copy.copy(text), copy.deepcopy(text), pickle.loads(pickle.dumps(text))):
        assert clone == "x" and clone.media_path == Path("/a.jpg") and clone.modality == "frame"


def test_nodes_serialise_as_their_llamaindex_base_types():
    assert FrameNode.class_name() == "ImageNode"
    assert ClipNode.class_name() == "Node"


def moved(path: str) -> str:
    return path.replace("/scratch/", "/index/media/")


def test_the_media_paths_of_a_frame_and_its_ocr_unit_change_and_nothing_else():
    metadata = {schema.IMAGE_PATH: "/scratch/f.jpg", schema.SOURCE: "/scratch/talk.mp4"}
    frame = FrameNode(text="slide", image_path="/scratch/f.jpg", metadata=metadata)
    ocr = TextNode(text="ALTITUDE", metadata=dict(metadata))
    for node in (frame, ocr):
        changed = with_media_paths(node, moved)
        assert changed.metadata[schema.IMAGE_PATH] == "/index/media/f.jpg"
        # The input file is not a media path, even when it looks like one.
        assert changed.metadata[schema.SOURCE] == "/scratch/talk.mp4"
        assert node.metadata[schema.IMAGE_PATH] == "/scratch/f.jpg"  # the original is untouched
    assert with_media_paths(frame, moved).image_path == "/index/media/f.jpg"


def test_the_media_path_of_a_clip_changes_and_a_transcript_unit_is_returned_as_it_is():
    clip = ClipNode(
        text_resource=MediaResource(text="clip"),
        video_resource=MediaResource(path=Path("/scratch/c.mp4"), mimetype="video/mp4"),
    )
    changed = with_media_paths(clip, moved)
    assert changed.video_resource.path == Path("/index/media/c.mp4")
    assert clip.video_resource.path == Path("/scratch/c.mp4")
    unit = TextNode(text="said", metadata={schema.SOURCE: "/scratch/talk.mp4"})
    assert with_media_paths(unit, moved) is unit
