"""Topic-level retrieval on the constructed meeting: a question about a topic finds the
moments of its chapter, each moment scored with its chapter's match, each hit naming
its chapter; through
``search``, ``as_retriever``, ``search --by-chapter`` and the service's
``/api/search?by_chapter=true``; the relevance gate still
judges the hits it returns."""

from __future__ import annotations

from fastapi.testclient import TestClient

from llama_index_video.cli.main import main
from llama_index_video.schema import CHAPTER
from llama_index_video.search.by_chapter import chapter_blend
from llama_index_video.search.relevance import RelevanceGate
from llama_index_video.service.app import create_app
from tests.chapters.meeting_script import TOPIC_SECONDS
from tests.chapters.test_summaries import meeting_index  # noqa: F401  (the shared fixture)

COLOURS = "What did they say about the case, its shape and its colours?"


def _in_colours(start: float | None) -> bool:
    return start is not None and 2 * TOPIC_SECONDS - 1 <= start < 3 * TOPIC_SECONDS


def test_a_moment_gains_its_chapters_match_without_losing_its_own():
    # (name, own score, chapter): chapter A matches the question far better than B
    moments = [("b1", 0.80, "B"), ("a1", 0.62, "A"), ("x", 0.70, None), ("b2", 0.50, "B")]
    chapters = {"A": 0.9, "B": 0.3}
    ordered = chapter_blend(moments, lambda m: m[1], lambda m: m[2], chapters, weight=0.2)
    # a1: 0.62 + 0.18 = 0.80 passes x (0.70) and b2, but b1 keeps first (0.80 + 0.06)
    assert [m[0] for m in ordered] == ["b1", "a1", "x", "b2"]
    unranked = chapter_blend(moments, lambda m: m[1], lambda m: m[2], {"A": 0.9}, weight=0.2)
    assert [m[0] for m in unranked] == ["b1", "a1", "x", "b2"]  # B scored as A, the lowest
    assert chapter_blend(moments, lambda m: m[1], lambda m: m[2], {}) == sorted(
        moments, key=lambda m: m[1], reverse=True
    )


def test_a_topic_question_finds_its_chapter_then_the_moments_inside(meeting_index):  # noqa: F811
    index, audio = meeting_index
    colours = index.chapters(audio)[2]
    hits = index.search(COLOURS, top_k=4, by_chapter=True)
    assert len(hits) >= 2
    assert all(_in_colours(hit.start) for hit in hits[:2])
    assert hits[0].chapter == hits[1].chapter == colours.title
    nodes = index.as_retriever(top_k=4, by_chapter=True).retrieve(COLOURS)
    assert [n.node.metadata[CHAPTER] for n in nodes[:2]] == [colours.node_id] * 2


def test_the_relevance_gate_judges_the_hits_by_chapter(meeting_index):  # noqa: F811
    index, _ = meeting_index
    before = index.relevance
    try:
        index.relevance = RelevanceGate(weight=0.0, cut=1.01)  # no cosine reaches it
        assert index.search(COLOURS, by_chapter=True) == []
        index.relevance = RelevanceGate(weight=0.0, cut=0.0)
        assert index.search(COLOURS, by_chapter=True)
    finally:
        index.relevance = before


def test_search_by_chapter_on_the_command_line(meeting_index, capsys):  # noqa: F811
    index, audio = meeting_index
    colours = index.chapters(audio)[2]
    code = main(["search", COLOURS, "--index", str(index.path), "--by-chapter", "--top-k", "3"])
    assert code == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("1. ") and f"[{colours.title}]" in first


def test_search_by_chapter_through_the_service(meeting_index):  # noqa: F811
    index, _ = meeting_index
    question = "How do we sell it to customers?"  # the marketing chapter, from 720 s
    plain = [hit.to_dict() for hit in index.search(question, top_k=3)]
    blended = [hit.to_dict() for hit in index.search(question, top_k=3, by_chapter=True)]
    assert [h["start"] for h in plain] != [h["start"] for h in blended]
    with TestClient(create_app(index), base_url="http://127.0.0.1") as client:
        served = client.get(
            "/api/search", params={"q": question, "top_k": 3, "by_chapter": "true"}
        ).json()
    assert [{k: v for k, v in h.items() if k in blended[0]} for h in served] == blended
    assert all(hit["start"] >= 3 * TOPIC_SECONDS for hit in served)
