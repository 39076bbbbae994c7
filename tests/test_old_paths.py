"""Moved and renamed public names stay importable from their old homes for one release."""

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
    ("llama_index_video.store.links", "llama_index_video.store.inputs", "ingest_inputs"),
    (
        "llama_index_video.reader.pipeline",
        "llama_index_video.reader.ingestion_pipeline",
        "VideoNodeParser",
    ),
    (
        "llama_index_video.transcription.engine",
        "llama_index_video.transcription.openmp",
        "import_faster_whisper",
    ),
    ("llama_index_video.answering.engine", "llama_index_video.answering.answerer", "VideoAnswerer"),
    ("llama_index_video.answering.engine", "llama_index_video.answering.answerer", "AskOptions"),
]
RENAMED = [
    ("llama_index_video.search.searcher", "Moment", "llama_index_video.search.searcher.Finding"),
    ("llama_index_video.answering.search", "Moment", "llama_index_video.search.searcher.Finding"),
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


@pytest.mark.parametrize(("old", "name", "new"), RENAMED)
def test_a_renamed_name_warns_naming_the_new_one(old, name, new):
    home, _, new_name = new.rpartition(".")
    with pytest.warns(DeprecationWarning, match=new):
        moved = getattr(importlib.import_module(old), name)
    assert moved is getattr(importlib.import_module(home), new_name)


def test_the_searchers_moments_method_is_findings():
    from llama_index.core.retrievers import BaseRetriever

    from llama_index_video.search.searcher import VideoSearcher

    class Nothing(BaseRetriever):
        def _retrieve(self, query_bundle):
            return []

    with pytest.warns(DeprecationWarning, match="findings"):
        assert VideoSearcher(retriever=Nothing()).moments("q") == []
