"""Result types: one way to build a citation, JSON shapes, and the old import paths."""

from __future__ import annotations

import importlib
import json
from dataclasses import replace

import pytest

import llama_index_video
from llama_index_video.results import Answer, Citation, ContextSpan, SearchHit

HIT = SearchHit(
    source="/media/talk.mp4",
    modality="transcript",
    start=94.9,
    end=101.2,
    score=0.61,
    text="We train with cross-entropy.",
    label="[talk.mp4 01:34-01:41]",
    url="/media/talk.mp4#t=94.9",
    frame_path="/idx/f96.jpg",
    frame_time=96.0,
    context=[
        ContextSpan(88.0, 94.8, "First the data.", "[talk.mp4 01:28-01:34]"),
        ContextSpan(94.9, 101.2, "We train with cross-entropy.", "[talk.mp4 01:34-01:41]"),
        ContextSpan(96.0, 99.0, "LOSS = CE", "[talk.mp4 01:36-01:39]", "ocr"),
    ],
)


def test_a_hit_cites_itself_as_its_node_does(talk_transcript):
    assert HIT.citation == replace(Citation.from_node(talk_transcript), frame_path="/idx/f96.jpg")


def test_a_hit_cites_each_unit_of_its_context_with_the_label_it_was_shown():
    cited = HIT.citations()
    assert cited[0] == HIT.citation
    assert [c.label for c in cited[1:]] == [unit.label for unit in HIT.context]
    assert [c.modality for c in cited[1:]] == ["transcript", "transcript", "ocr"]
    assert all(c.source == HIT.source and c.url.startswith(HIT.source + "#t=") for c in cited)


def test_a_moved_file_is_cited_where_it_is_now(talk_transcript):
    citation = Citation.from_node(talk_transcript, source="/archive/talk.mp4")
    assert citation.source == "/archive/talk.mp4"
    assert citation.url == "/archive/talk.mp4#t=94.9"  # the stored link points at the old place
    assert citation.label == "[talk.mp4 01:34-01:41]"


def test_citation_at_derives_what_is_missing():
    assert Citation.at("/d/notes.md", None, modality="text") == Citation(
        "/d/notes.md", "notes.md", None, None, "[notes.md]", "/d/notes.md", None, "text"
    )
    frame = Citation.at("/m/a.mp4", 130.0, modality="frame", frame_path="/f.jpg")
    assert (frame.label, frame.url) == ("[a.mp4 02:10]", "/m/a.mp4#t=130.0")


def test_json_shapes():
    hit = HIT.to_dict()
    assert hit["context"][2] == {
        "start": 96.0,
        "end": 99.0,
        "text": "LOSS = CE",
        "label": "[talk.mp4 01:36-01:39]",
        "modality": "ocr",
        "speaker": None,
    }
    answer = Answer("Why?", "Because [talk.mp4 01:34-01:41].", [HIT.citation], [HIT]).to_dict()
    assert hit["confidence"] is None  # no calibration behind this hit
    assert set(answer) == {
        "question",
        "answer",
        "found",
        "reason",
        "reason_code",
        "model",
        "citations",
        "unverified_citations",
        "hits",
    }
    assert answer["citations"][0] == {
        "source": "/media/talk.mp4",
        "start": 94.9,
        "end": 101.2,
        "label": "[talk.mp4 01:34-01:41]",
        "url": "/media/talk.mp4#t=94.9",
        "frame_path": "/idx/f96.jpg",
        "modality": "transcript",
        "speaker": None,
        "site_url": None,
        "source_path": None,
    }


def test_a_hit_read_back_from_its_json_is_the_same_hit():
    wire = json.loads(json.dumps(HIT.to_dict()))
    assert SearchHit.from_dict(wire) == HIT
    served = {**wire, "media_url": "/media/ab12", "frame_url": None}  # the service's links
    assert SearchHit.from_dict(served) == HIT
    with pytest.raises(TypeError):
        SearchHit.from_dict({key: value for key, value in wire.items() if key != "label"})


def test_the_compact_form_is_the_same_keys_without_nulls_rounded():
    hit = replace(HIT, start=94.94, score=0.61234, site_url=None, source_path="/media/talk.mp4")
    full, compact = hit.to_dict(), hit.to_dict(compact=True)
    assert set(compact) == {k for k, v in full.items() if v is not None} - {"source_path"}
    assert compact["start"] == 94.9 and compact["score"] == 0.612 and compact["url"] == hit.url
    assert compact["context"][2] == {"label": "[talk.mp4 01:36-01:39]", "text": "LOSS = CE"}
    cited = hit.citation.to_dict(compact=True)
    assert cited == {
        k: v for k, v in hit.citation.to_dict().items() if v is not None and k != "source_path"
    } | {"start": 94.9}


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("llama_index_video.answering.search", "SearchHit"),
        ("llama_index_video.answering.search", "ContextSpan"),
        ("llama_index_video.answering.extractive", "Answer"),
        ("llama_index_video.answering.citations", "Citation"),
    ],
)
def test_old_import_paths_still_work_with_a_deprecation_warning(module, name):
    with pytest.warns(DeprecationWarning, match=f"llama_index_video.results.{name}"):
        moved = getattr(importlib.import_module(module), name)
    assert moved is getattr(llama_index_video, name)


def test_unknown_names_are_still_attribute_errors():
    search = importlib.import_module("llama_index_video.answering.search")
    with pytest.raises(AttributeError):
        search.NoSuchThing  # noqa: B018
