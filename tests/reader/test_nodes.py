from __future__ import annotations

import copy
import pickle
from pathlib import Path

from llama_index.core.schema import MediaResource, MetadataMode

from llama_index_video.reader.nodes import ClipNode, FrameNode, MediaText


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
