"""``search`` through a ``serve`` running over the same folder (issue 38: a cold search
costs seconds of imports, the service's answer milliseconds): the hits ``VideoIndex.search``
gives, printed by a process that never loads LlamaIndex or Chroma; and the folder
searched cold, with the same hits, whenever that service cannot give them."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from llama_index_video.cli.warm_search import served_search
from llama_index_video.service.address import announced, index_settings
from llama_index_video.service.app import create_app
from llama_index_video.service.guard import TOKEN_ENV
from tests.cli.test_cold_start import run_cli
from tests_support import running

DEFAULTS = {"relevance": "auto", "lexical": True, "chroma_url": None, "collection": None}
"""``VideoIndex``'s options as ``search`` and ``serve`` open a folder without flags."""
TOKEN = "a-long-enough-service-token-1234567890"


@pytest.fixture(scope="module")
def service(example_index) -> Iterator[str]:
    """The service over the example index on a loopback port (not announced)."""
    with running(create_app(example_index)) as url:
        yield url


def _printed(said: str) -> list[dict]:
    hits, _ = json.JSONDecoder().raw_decode(said)  # stdout comes first
    return hits


@pytest.mark.parametrize(
    ("query", "options"),
    [
        ("why does the stratosphere warm up", []),
        ("Which days are deploys on?", ["--modality", "text"]),
        ("recipe for sourdough bread", []),  # nothing relevant: []
    ],
)
def test_search_through_a_running_service_gives_the_api_hits_without_llama_index(
    example_index, service, query, options
):
    expected = [
        hit.to_dict()
        for hit in example_index.search(query, modalities=["text"] if options else None)
    ]
    argv = ["search", query, *options, "--json", "--index", str(example_index.path)]
    with announced(example_index.path, service, settings=index_settings(**DEFAULTS)):
        code, loaded, said = run_cli(argv)
    assert code == 0, said
    assert loaded == []  # neither llama_index.core, nor chromadb, nor the index
    assert _printed(said) == expected
    assert expected or query.startswith("recipe")


def test_a_service_with_other_settings_or_unasked_options_is_not_asked(example_index, service):
    query = "why does the stratosphere warm up"
    found = served_search(example_index.path, query, settings=DEFAULTS, top_k=3)
    assert found is None  # not announced
    other = {**DEFAULTS, "lexical": False}
    with announced(example_index.path, service, settings=index_settings(**other)):
        assert served_search(example_index.path, query, settings=DEFAULTS, top_k=3) is None
        found = served_search(example_index.path, query, settings=other, top_k=3)
        assert found == example_index.search(query, top_k=3)  # it was asked: same hits
        assert served_search(example_index.path, f" {query}", settings=other, top_k=3) is None


def test_a_service_wanting_a_token_is_asked_with_the_one_serve_reads(example_index, monkeypatch):
    query = "Who will own the migration to the new billing provider?"
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    with (
        running(create_app(example_index, token=TOKEN)) as url,
        announced(example_index.path, url, settings=index_settings(**DEFAULTS)),
    ):
        assert served_search(example_index.path, query, settings=DEFAULTS, top_k=2) is None
        monkeypatch.setenv(TOKEN_ENV, TOKEN)
        found = served_search(example_index.path, query, settings=DEFAULTS, top_k=2)
    assert found and found == example_index.search(query, top_k=2)


def test_a_service_that_stopped_answering_is_searched_past(example_index):
    with running(create_app(example_index)) as url:
        pass  # stopped: its port refuses connections now
    query = "why does the stratosphere warm up"
    with announced(example_index.path, url, settings=index_settings(**DEFAULTS)):
        assert served_search(example_index.path, query, settings=DEFAULTS, top_k=3) is None
