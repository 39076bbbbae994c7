"""Moved and renamed public names stay importable from their old homes for one release."""

from __future__ import annotations

import importlib

import pytest

MOVED = [
    ("llama_index_video.store.retriever", "llama_index_video.search.retriever", "VideoRetriever"),
    ("llama_index_video.store.fusion", "llama_index_video.search.fusion", "FusionRetriever"),
    ("llama_index_video.store.fusion", "llama_index_video.search.fusion", "Channel"),
    ("llama_index_video.answering.search", "llama_index_video.search.searcher", "hit_from_node"),
    ("llama_index_video.index", "llama_index_video.search.policy", "DEFAULT_WEIGHTS"),
    ("llama_index_video.store.visual", "llama_index_video.search.policy", "VISUAL_CHANNEL"),
    ("llama_index_video.answering.engine", "llama_index_video.answering.answerer", "VideoAnswerer"),
    ("llama_index_video.answering.engine", "llama_index_video.answering.answerer", "AskOptions"),
]
# Moved after 0.1.0 and never released from their old place: no shim for them.
NEVER_RELEASED = [
    ("llama_index_video.search.searcher", "Moment"),
    ("llama_index_video.answering.search", "VideoSearcher"),
    ("llama_index_video.answering.search", "Moment"),
    ("llama_index_video.answering.engine", "make_reranker"),
    ("llama_index_video.store.retriever", "cosine_from_chroma"),
    ("llama_index_video.store.fusion", "RankedRetriever"),
    ("llama_index_video.index", "STANDOUT_GATES"),
    ("llama_index_video.index", "DEFAULT_GATES"),
    ("llama_index_video.embeddings.spec", "embeds_clips"),
    ("llama_index_video.embeddings.spec", "GEMINI_CLASS_NAME"),
]
NEVER_RELEASED_MODULES = [
    "llama_index_video.store.links",
    "llama_index_video.answering.relevance",
    "llama_index_video.reader.pipeline",
    "llama_index_video.transcription.engine",
]


@pytest.mark.parametrize(("old", "home", "name"), MOVED)
def test_an_old_path_warns_naming_the_new_one_and_gives_the_same_object(old, home, name):
    with pytest.warns(DeprecationWarning, match=f"{home}.{name}"):
        moved = getattr(importlib.import_module(old), name)
    assert moved is getattr(importlib.import_module(home), name)


@pytest.mark.parametrize("old", sorted({old for old, _, _ in MOVED}))
def test_a_name_that_never_lived_there_is_still_an_attribute_error(old):
    with pytest.raises(AttributeError, match="NoSuchThing"):
        importlib.import_module(old).NoSuchThing  # noqa: B018


@pytest.mark.parametrize(("old", "name"), NEVER_RELEASED)
def test_a_name_0_1_0_never_had_there_is_not_forwarded(old, name):
    with pytest.raises(AttributeError, match=name):
        getattr(importlib.import_module(old), name)


@pytest.mark.parametrize("old", NEVER_RELEASED_MODULES)
def test_a_module_0_1_0_never_had_is_gone(old):
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(old)


def test_the_searcher_has_no_moments_method_0_1_0_never_had():
    from llama_index_video.search.searcher import VideoSearcher

    assert not hasattr(VideoSearcher, "moments") and hasattr(VideoSearcher, "findings")
