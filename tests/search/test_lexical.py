"""The lexical channel through every door: VideoIndex, as_retriever, the CLI, the
service, an index on a Chroma server. The recording is a long meeting with subtitles
(no speech model): a hundred near-identical sentences, one number said once, and a
phrase beside a near-miss of it."""

from __future__ import annotations

import json
import random
import shutil

import numpy as np
import pytest
from fastapi.testclient import TestClient
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine

from llama_index_video.cli.main import main
from llama_index_video.index import VideoIndex
from llama_index_video.reader.video_reader import VideoReader
from llama_index_video.search.lexical import has_phrases, parse_query
from llama_index_video.service.app import create_app
from llama_index_video.store.lexical import LEXICAL_FOLDER

NUMBER = "88213"
QUERY = f"invoice {NUMBER}"
PHRASE = "gym floor"
SECONDS_PER_CUE = 3


def _sentences() -> list[str]:
    # Neighbouring numbers: one embedding barely tells them apart, their words do.
    numbers = [str(n) for n in range(88_150, 88_260) if str(n) != NUMBER]
    random.Random(7).shuffle(numbers)
    said = [
        f"Invoice {n} was checked by the finance team and paid on the usual schedule."
        for n in numbers[:100]
    ]
    said[57] = f"Invoice {NUMBER} was checked by the finance team and paid on the usual schedule."
    said[20] = f"We carried the chairs onto the {PHRASE} before the assembly started."
    said[80] = "The floor of the gym was polished before the assembly started."
    return said


def _srt(sentences: list[str]) -> str:
    def stamp(seconds: int) -> str:
        return f"00:{seconds // 60:02d}:{seconds % 60:02d},000"

    return "\n".join(
        f"{i + 1}\n{stamp(i * SECONDS_PER_CUE)} --> {stamp((i + 1) * SECONDS_PER_CUE)}\n{text}\n"
        for i, text in enumerate(sentences)
    )


@pytest.fixture(scope="module")
def meeting(tmp_path_factory, make_wav):
    """A 5-minute silent recording with the sentences as its sidecar subtitles."""
    folder = tmp_path_factory.mktemp("meeting")
    sentences = _sentences()
    make_wav(folder / "meeting.wav", np.zeros(len(sentences) * SECONDS_PER_CUE * 16_000))
    (folder / "meeting.srt").write_text(_srt(sentences))
    return folder


def _index(path, embed_model, **options) -> VideoIndex:
    reader = VideoReader(media_dir=path / "media", ocr="off")
    return VideoIndex(path, embed_model=embed_model, reader=reader, **options)


@pytest.fixture(scope="module")
def meeting_index(tmp_path_factory, meeting, embed_model):
    folder = tmp_path_factory.mktemp("meeting_index") / "index"
    index = _index(folder, embed_model)
    assert index.ingest([meeting]).ok
    yield index
    index.close()


def _texts(hits) -> list[str]:
    return [hit.text or "" for hit in hits]


def test_a_number_said_once_ranks_first_where_search_by_meaning_misses_it(
    meeting_index, embed_model
):
    by_meaning = VideoIndex(meeting_index.path, embed_model=embed_model, lexical=False)
    try:
        missed = by_meaning.search(QUERY)
    finally:
        by_meaning.close()
    assert missed and NUMBER not in _texts(missed)[0]
    found = meeting_index.search(QUERY)
    assert NUMBER in _texts(found)[0]
    assert found[0].score is not None and found[0].score > 0


def test_a_quoted_phrase_must_appear_literally(meeting_index):
    loose = meeting_index.search(PHRASE, top_k=10)
    assert any("floor of the gym" in text for text in _texts(loose))  # a near miss
    quoted = meeting_index.search(f'find "{PHRASE}" please', top_k=10)
    assert quoted and all(has_phrases(text, [PHRASE.split()]) for text in _texts(quoted))
    assert not any("floor of the gym" in text for text in _texts(quoted))
    assert meeting_index.search(f'"{PHRASE} polished"') == []  # no such run of words


def test_parse_query_reads_straight_and_curly_quotes():
    query = parse_query('the “Gym Floor” and "20,000 chairs" or ""')
    assert query.phrases == (("gym", "floor"), ("20000", "chairs"))
    assert query.words[:3] == ("the", "gym", "floor")


def test_as_retriever_returns_the_lexical_hit_to_a_llamaindex_query_engine(meeting_index):
    retriever = meeting_index.as_retriever(top_k=3)
    assert NUMBER in retriever.retrieve(QUERY)[0].node.get_content()
    engine = RetrieverQueryEngine.from_args(retriever, llm=MockLLM())
    response = engine.query(QUERY)
    assert NUMBER in response.source_nodes[0].node.get_content()


def test_cli_search_and_ask_use_it_and_turn_it_off(meeting_index, capsys):
    folder = str(meeting_index.path)
    assert main(["search", QUERY, "--index", folder, "--json"]) == 0
    assert NUMBER in json.loads(capsys.readouterr().out)[0]["text"]
    assert main(["search", QUERY, "--index", folder, "--json", "--lexical", "off"]) == 0
    assert NUMBER not in json.loads(capsys.readouterr().out)[0]["text"]
    assert main(["ask", QUERY, "--index", folder, "--json", "--llm", "none"]) == 0
    assert NUMBER in json.loads(capsys.readouterr().out)["hits"][0]["text"]


def test_the_service_searches_by_exact_words(meeting_index):
    with TestClient(create_app(meeting_index), base_url="http://127.0.0.1") as client:
        hits = client.get("/api/search", params={"q": QUERY}).json()
    assert NUMBER in hits[0]["text"]


def test_an_index_on_a_chroma_server_keeps_its_lexical_index_in_the_folder(
    tmp_path, meeting, chroma_url, embed_model
):
    folder = tmp_path / "served"
    index = _index(folder, embed_model, chroma_url=chroma_url, collection="lexical-meeting")
    try:
        assert index.ingest([meeting]).ok
        assert (folder / LEXICAL_FOLDER).is_dir() and not (folder / "chroma").exists()
        assert NUMBER in _texts(index.search(QUERY))[0]
        shutil.rmtree(folder / LEXICAL_FOLDER)  # rebuilt from the server's rows
        check, _ = index.verify(repair=True)
        assert check.lexical is not None and not check.lexical.ok
        assert NUMBER in _texts(index.search(QUERY))[0]
    finally:
        index.close()
