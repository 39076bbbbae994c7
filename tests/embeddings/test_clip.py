"""ClipEmbedding and visual search, on a tiny randomly initialised CLIP built here.

No CLIP weights can be downloaded in the test environment, so these tests check the
code path (shapes, normalisation, what is embedded as an image, storage in Chroma,
fusion, the index folder's record of the model), not the quality of the matches.
"""

from __future__ import annotations

import asyncio
import json
import sys
from io import BytesIO

import numpy as np
import pytest
from llama_index.core.schema import MetadataMode

from llama_index_video import schema
from llama_index_video.embeddings.clip import ClipEmbedding
from llama_index_video.errors import EmbeddingError, IndexCompatibilityError, MissingDependencyError
from llama_index_video.index import VideoIndex
from llama_index_video.reader.video_reader import VideoReader
from llama_index_video.search.lexical import LEXICAL_CHANNEL
from llama_index_video.search.policy import VISUAL_CHANNEL
from llama_index_video.store.media_paths import resolved_path
from llama_index_video.store.visual import FRAMES_COLLECTION, VISUAL_META

DIMENSION = 16


def build_tiny_clip(folder, seed: int = 0):
    """Save a 1-layer CLIP with a character-level tokenizer and a 32 px image processor."""
    import torch
    from transformers import CLIPConfig, CLIPModel, CLIPProcessor, CLIPTokenizer
    from transformers.models.clip import CLIPImageProcessorPil

    folder.mkdir(parents=True, exist_ok=True)
    vocab = {"<|startoftext|>": 0, "<|endoftext|>": 1}
    for char in "abcdefghijklmnopqrstuvwxyz0123456789":
        vocab[char] = len(vocab)
        vocab[char + "</w>"] = len(vocab)
    (folder / "vocab.json").write_text(json.dumps(vocab))
    (folder / "merges.txt").write_text("#version: 0.2\n")
    tokenizer = CLIPTokenizer(str(folder / "vocab.json"), str(folder / "merges.txt"))
    small = {"hidden_size": 32, "intermediate_size": 37, "num_hidden_layers": 1}
    config = CLIPConfig(
        text_config={
            **small,
            "vocab_size": len(vocab),
            "num_attention_heads": 2,
            "max_position_embeddings": 77,
            "bos_token_id": 0,
            "eos_token_id": 1,
            "pad_token_id": 1,
        },
        vision_config={**small, "image_size": 32, "patch_size": 8, "num_attention_heads": 2},
        projection_dim=DIMENSION,
    )
    torch.manual_seed(seed)
    images = CLIPImageProcessorPil(
        size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}
    )
    CLIPModel(config).save_pretrained(folder)
    CLIPProcessor(image_processor=images, tokenizer=tokenizer).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def tiny_clip(tmp_path_factory):
    return build_tiny_clip(tmp_path_factory.mktemp("clip") / "tiny")


@pytest.fixture(scope="module")
def clip(tiny_clip):
    return ClipEmbedding(model_name=str(tiny_clip))


@pytest.fixture(scope="module")
def slides_video(tmp_path_factory, make_video):
    """Three silent scenes: frames only, no speech to transcribe."""
    scenes = [(2.0, (220, 40, 40)), (2.0, (40, 200, 60)), (2.0, (40, 80, 220))]
    return make_video(tmp_path_factory.mktemp("video") / "slides.mp4", scenes, tone=False)


def norm(vector) -> float:
    return float(np.linalg.norm(np.asarray(vector)))


def test_text_and_query_vectors_are_normalised_and_alike(clip):
    text = clip.get_text_embedding("the slide with the database diagram")
    query = clip.get_query_embedding("the slide with the database diagram")
    assert len(text) == DIMENSION and norm(text) == pytest.approx(1.0, abs=1e-5)
    assert query == pytest.approx(text, abs=1e-6)
    assert asyncio.run(clip.aget_query_embedding("p99 latency")) == pytest.approx(
        clip.get_query_embedding("p99 latency"), abs=1e-6
    )


def test_frames_are_embedded_as_images_whichever_way_they_come(clip, tiny_clip, tmp_path):
    from PIL import Image

    from llama_index_video.reader.nodes import FrameNode

    path = tmp_path / "frame.jpg"
    Image.new("RGB", (64, 36), (200, 30, 30)).save(path)
    by_path = clip.get_image_embedding(str(path))
    assert len(by_path) == DIMENSION and norm(by_path) == pytest.approx(1.0, abs=1e-5)
    assert clip.get_image_embedding(BytesIO(path.read_bytes())) == pytest.approx(by_path, abs=1e-6)
    frame = FrameNode(text="On screen: orders", image_path=str(path))
    media_text = frame.get_content(MetadataMode.EMBED)
    [as_image, as_text] = clip.get_text_embedding_batch([media_text, "On screen: orders"])
    assert as_image == pytest.approx(by_path, abs=1e-6)
    assert as_text == pytest.approx(clip.get_text_embedding("On screen: orders"), abs=1e-6)
    assert as_text != pytest.approx(as_image, abs=1e-3)


def test_a_folder_without_a_model_is_an_embedding_error(tmp_path):
    empty = tmp_path / "empty_model"
    empty.mkdir()
    with pytest.raises(EmbeddingError, match="cannot be loaded"):
        ClipEmbedding(model_name=str(empty)).get_text_embedding("x")


def test_a_broken_frame_is_an_embedding_error(clip, tmp_path):
    broken = tmp_path / "broken.jpg"
    broken.write_bytes(b"not a jpeg")
    with pytest.raises(EmbeddingError, match=r"broken\.jpg"):
        clip.get_image_embedding(str(broken))


def test_missing_transformers_names_the_visual_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", None)
    with pytest.raises(MissingDependencyError, match=r"llama-index-video\[visual\]"):
        ClipEmbedding()


@pytest.fixture(scope="module")
def visual_index(tmp_path_factory, clip, embed_model, slides_video):
    folder = tmp_path_factory.mktemp("visual_index")
    reader = VideoReader(media_dir=folder / "media", ocr="off")
    index = VideoIndex(
        folder, embed_model=embed_model, reader=reader, visual_model=clip, visual_threshold=None
    )
    report = index.ingest([slides_video])
    assert report.ok, report
    yield index
    index.close()


def test_frames_get_image_vectors_in_their_own_chroma_collection(visual_index, clip):
    frames = visual_index.frame_store.get_nodes(None)
    texts = visual_index.vector_store.get_nodes(None)
    frame_ids = {n.node_id for n in texts if n.metadata[schema.MODALITY] == "frame"}
    assert len(frames) == 3 and {n.node_id for n in frames} == frame_ids
    rows = visual_index.frame_store._collection.get(include=["embeddings"])
    assert np.asarray(rows["embeddings"]).shape == (3, DIMENSION)
    assert visual_index.frame_store._collection.name == FRAMES_COLLECTION
    first = frames[0]
    stored_path = first.metadata[schema.IMAGE_PATH]
    assert stored_path.startswith("media/frames/")  # the store keeps it relative to the folder
    expected = clip.get_image_embedding(resolved_path(stored_path, visual_index.path))
    stored = rows["embeddings"][rows["ids"].index(first.node_id)]
    assert np.asarray(stored) == pytest.approx(expected, abs=1e-5)


def test_visual_hits_are_fused_with_their_text_to_image_similarity(visual_index, clip):
    retriever = visual_index.as_retriever(top_k=3, modalities=["frame"])
    assert [c.name for c in retriever.channels] == ["frame", LEXICAL_CHANNEL, VISUAL_CHANNEL]
    visual = next(c for c in retriever.channels if c.name == VISUAL_CHANNEL)
    query = "a green slide"
    seen = visual.retriever.retrieve(query)
    assert len(seen) == 3 and all(h.node.metadata[schema.MODALITY] == "frame" for h in seen)
    vector = np.asarray(clip.get_query_embedding(query))
    for hit in seen:
        image = np.asarray(clip.get_image_embedding(hit.node.metadata[schema.IMAGE_PATH]))
        assert hit.score == pytest.approx(float(vector @ image), abs=1e-4)
    fused = retriever.retrieve(query)
    assert {h.node.node_id for h in fused} == {h.node.node_id for h in seen}
    spoken = visual_index.as_retriever(modalities=["transcript"])
    assert [c.name for c in spoken.channels] == ["transcript", LEXICAL_CHANNEL]


def test_the_frames_channel_keeps_to_the_version_read(visual_index):
    """While another process's writer is at work, an index reads one version's files
    (``SearchPolicy.version``): the text channels kept their vector queries to them,
    the frames' channel did not, so frames of a file outside the version (the writer's
    new ones) were ranked, crowding the version's own out, and dropped after."""
    from dataclasses import replace

    [slides] = [record.content_hash for record in visual_index.manifest.files("indexed")]
    policy = visual_index.search_policy()

    def frames(version: set[str]) -> list[str]:
        kept = replace(policy, version=lambda **_: version).retriever(top_k=3, modalities=["frame"])
        visual = next(c for c in kept.channels if c.name == VISUAL_CHANNEL)
        return [h.node.metadata[schema.CONTENT_HASH] for h in visual.retriever.retrieve("slide")]

    assert frames({slides}) == [slides] * 3
    assert frames({"another-version"}) == []


def test_the_folder_remembers_its_visual_model(visual_index, embed_model, tiny_clip, tmp_path):
    again = VideoIndex(visual_index.path, embed_model=embed_model)
    assert isinstance(again.visual_model, ClipEmbedding)
    assert again.visual_model.model_name == str(tiny_clip)
    assert VISUAL_CHANNEL in [c.name for c in again.as_retriever().channels]
    again.close()
    other = ClipEmbedding(model_name=str(build_tiny_clip(tmp_path / "other", seed=1)))
    with pytest.raises(IndexCompatibilityError, match="frames embedded with"):
        VideoIndex(visual_index.path, embed_model=embed_model, visual_model=other)


def test_an_index_built_without_visual_search_refuses_it_later(
    tmp_path, clip, embed_model, slides_video
):
    reader = VideoReader(media_dir=tmp_path / "media", ocr="off")
    plain = VideoIndex(tmp_path, embed_model=embed_model, reader=reader)
    assert plain.ingest([slides_video]).ok
    assert VISUAL_CHANNEL not in [c.name for c in plain.as_retriever().channels]
    plain.close()
    with pytest.raises(IndexCompatibilityError, match="without visual search"):
        VideoIndex(tmp_path, embed_model=embed_model, visual_model=clip)


def test_ingest_visual_from_the_command_line(tmp_path, tiny_clip, slides_video, embed_model):
    from llama_index_video.cli.main import main

    folder = tmp_path / "index"
    args = ["ingest", str(slides_video), "--index", str(folder), "--quiet"]
    assert main([*args, "--visual", str(tiny_clip), "--ocr", "off"]) == 0
    index = VideoIndex(folder, embed_model=embed_model)
    assert index.visual_identity == f"transformers-clip:{tiny_clip}"
    assert len(index.frame_store.get_nodes(None)) == 3
    index.close()


def test_an_index_recorded_by_0_1_0_reopens_with_its_visual_model(
    visual_index, embed_model, tiny_clip
):
    assert ClipEmbedding.class_name() != "ClipEmbedding"  # LlamaIndex's own CLIP's id
    recorded = visual_index.manifest.get_meta(VISUAL_META)
    assert recorded == f"transformers-clip:{tiny_clip}"
    visual_index.manifest.set_meta(VISUAL_META, f"ClipEmbedding:{tiny_clip}")  # as 0.1.0 wrote
    try:
        again = VideoIndex(visual_index.path, embed_model=embed_model)
        assert isinstance(again.visual_model, ClipEmbedding)
        assert again.visual_model.model_name == str(tiny_clip)
        again.close()
        given = ClipEmbedding(model_name=str(tiny_clip))
        VideoIndex(visual_index.path, embed_model=embed_model, visual_model=given).close()
    finally:
        visual_index.manifest.set_meta(VISUAL_META, recorded)
