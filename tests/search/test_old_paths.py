"""The search wing's names stay importable from their old modules for one release."""

from __future__ import annotations

import importlib

import pytest

MOVED = [
    ("llama_index_video.store.retriever", "llama_index_video.search.retriever", "VideoRetriever"),
    ("llama_index_video.store.fusion", "llama_index_video.search.fusion", "FusionRetriever"),
    ("llama_index_video.store.fusion", "llama_index_video.search.fusion", "Channel"),
    ("llama_index_video.answering.search", "llama_index_video.search.searcher", "VideoSearcher"),
    ("llama_index_video.answering.search", "llama_index_video.search.searcher", "hit_from_node"),
    (
        "llama_index_video.answering.relevance",
        "llama_index_video.search.relevance",
        "RelevanceGate",
    ),
    ("llama_index_video.index", "llama_index_video.search.policy", "DEFAULT_WEIGHTS"),
    ("llama_index_video.index", "llama_index_video.search.policy", "STANDOUT_GATES"),
    ("llama_index_video.store.visual", "llama_index_video.search.policy", "VISUAL_CHANNEL"),
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
