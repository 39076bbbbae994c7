"""Searching only the moments said in some languages, by every door.

Two recordings of the same trip, one read in French and one in German (``.fr.srt`` and
``.de.srt`` sidecars over silence, so each unit's language is its subtitles'), both
naming Zermatt, the Matterhorn and 1865: a search with ``languages=`` (spelled ``fr``,
``FR``, ``fr-FR`` or ``French``, as ``ingest --language`` takes it) finds only what was
said in them, in the vector and the lexical channel alike, even where the other
language's moments match better. A language no moment is in is named with the ones the
index holds (the service's 422, the agent tool's error, the command line's note).
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import numpy as np
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from llama_index_video.agents.tool_spec import VideoToolSpec
from llama_index_video.cli.main import main
from llama_index_video.errors import MomentRequestError
from llama_index_video.index import VideoIndex
from llama_index_video.reader.video_reader import VideoReader
from llama_index_video.search.lexical import LexicalRetriever
from llama_index_video.service.address import announced, index_settings
from llama_index_video.service.app import create_app
from llama_index_video.store.folder_index import nodes_by_id
from llama_index_video.transcription.language import language_codes, unknown_languages
from tests_support import lexical_without_languages, running

SECONDS = 40
SAID = {
    "fr": [
        "Nous sommes arrivés à Zermatt en train, au pied du Matterhorn.",
        "La première ascension du Matterhorn date de 1865, par Edward Whymper.",
        "Le soir, nous avons mangé une fondue au fromage dans un petit chalet.",
        "Le lendemain, le téléphérique nous a montés au glacier.",
    ],
    "de": [
        "Wir sind mit dem Zug in Zermatt angekommen, am Fuß des Matterhorns.",
        "Die Erstbesteigung des Matterhorns war 1865, durch Edward Whymper.",
        "Am Abend haben wir in einer kleinen Hütte Käsefondue gegessen.",
        "Am nächsten Tag fuhren wir mit der Seilbahn zum Gletscher.",
    ],
}
QUESTION = "Matterhorn first ascent 1865 Whymper"
FILES = {"fr": "reise_fr.wav", "de": "reise_de.wav"}


def _srt(lines: list[str]) -> str:
    step = SECONDS // len(lines)
    return "\n".join(
        f"{n}\n00:00:{n * step - step:02d},000 --> 00:00:{n * step - 1:02d},000\n{text}\n"
        for n, text in enumerate(lines, start=1)
    )


def _two_languages(folder: Path, make_wav, embed_model) -> VideoIndex:
    for extra, (code, name) in enumerate(FILES.items()):  # two lengths: two contents
        make_wav(folder / name, np.zeros((SECONDS + extra) * 16_000, np.float32))
        (folder / name).with_suffix(f".{code}.srt").write_text(_srt(SAID[code]), "utf-8")
    made = VideoIndex(
        folder / "index",
        embed_model=embed_model,
        reader=VideoReader(media_dir=folder / "index" / "media", frames=None),
    )
    assert made.ingest([folder / name for name in FILES.values()]).ok
    return made


@pytest.fixture(scope="module")
def index(tmp_path_factory, make_wav, embed_model):
    made = _two_languages(tmp_path_factory.mktemp("two_languages"), make_wav, embed_model)
    yield made
    made.close()


def _files(hits) -> set[str]:
    return {(h["source"] if isinstance(h, dict) else h.source).rsplit("/", 1)[-1] for h in hits}


def test_a_language_keeps_only_what_was_said_in_it(index):
    assert index.search(QUESTION, top_k=8)  # the gate may keep one recording's only
    for code, name in FILES.items():
        assert _files(index.search(QUESTION, top_k=8, languages=[code])) == {name}
    written = [["French"], ["FR"], ["fr-FR"], ["fr_CA"]]
    for spelled in written:
        assert _files(index.search(QUESTION, top_k=8, languages=spelled)) == {FILES["fr"]}
    both = index.search(QUESTION, top_k=8, languages=["de", "French"])
    assert both and _files(both) <= set(FILES.values())
    assert index.search(QUESTION, languages=["ja"]) == []
    nodes = index.as_retriever(top_k=8, languages=["German"]).retrieve(QUESTION)
    assert nodes and {n.node.metadata["language"] for n in nodes} == {"de"}


def test_filters_compose_a_language_with_a_source_and_a_modality(index):
    assert index.search(QUESTION, languages=["de"], sources=[FILES["fr"]]) == []
    assert index.search(QUESTION, languages=["fr"], modalities=["ocr"]) == []
    kept = index.search(
        QUESTION, languages=["fr"], sources=[FILES["fr"]], modalities=["transcript"]
    )
    assert kept and _files(kept) == {FILES["fr"]}


def test_the_lexical_channel_reads_past_better_matches_in_other_languages(index):
    def lexical(**options):
        retriever = LexicalRetriever(
            index.lexical, lambda ids: nodes_by_id(index.index, ids), top_k=1, **options
        )
        return retriever.retrieve(_Query("Zermatt Matterhorn 1865 Whymper"))

    languages = {hit.node.metadata["language"] for hit in lexical()}
    other = ({"fr", "de"} - languages).pop()  # the language of the lesser match
    found = lexical(languages=[other])
    assert [hit.node.metadata["language"] for hit in found] == [other]
    assert lexical(languages=["ja"]) == []


def test_an_index_written_before_the_lexical_language_column_answers_and_is_repaired(
    tmp_path, make_wav, embed_model, capsys
):
    old = _two_languages(tmp_path, make_wav, embed_model)
    old.close()
    lexical_without_languages(old.path)
    opened = VideoIndex(old.path, embed_model=embed_model)
    try:
        assert opened.lexical.unlabelled() == sorted(
            r.content_hash for r in opened.manifest.files("indexed")
        )
        for code, name in FILES.items():  # right before any repair
            assert _files(opened.search(QUESTION, top_k=8, languages=[code])) == {name}
    finally:
        opened.close()
    verify = ["verify", "--index", str(old.path)]
    capsys.readouterr()
    assert main(verify) != 0
    assert "lexical index: 2 file(s) recorded without their language" in capsys.readouterr().out
    assert main([*verify, "--repair"]) == 0 and "(rebuilt)" in capsys.readouterr().out
    assert main(verify) == 0
    lexical_without_languages(old.path)  # and every ingest's clean-up repairs it too
    again = VideoIndex(old.path, embed_model=embed_model)
    try:
        assert again.ingest([tmp_path / name for name in FILES.values()]).ok  # unchanged
        assert again.lexical.unlabelled() == []
        snapshot = again.lexical.snapshot()
        assert snapshot is not None and not snapshot.unlabelled
        for code, name in FILES.items():
            assert _files(again.search(QUESTION, top_k=8, languages=[code])) == {name}
    finally:
        again.close()


class _Query:
    def __init__(self, text: str) -> None:
        self.query_str = text
        self.embedding = None


def test_the_mcp_tool_takes_a_language(index):
    from mcp import Client

    from llama_index_video.mcp.server import build_server

    async def run() -> tuple[dict, object, object]:
        async with Client(build_server(index), mode="legacy") as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            asked = {"query": QUESTION, "top_k": 8}
            german = await client.call_tool("search_moments", {**asked, "language": "German"})
            lacking = await client.call_tool("search_moments", {**asked, "language": "sv"})
        return tools["search_moments"].input_schema["properties"], german, lacking

    properties, german, lacking = asyncio.run(run())
    assert "language" in properties["language"]["description"]
    assert _files(json.loads(german.content[0].text)["moments"]) == {FILES["de"]}
    assert lacking.is_error and "its languages: German (de), French (fr)" in (
        lacking.content[0].text
    )


def test_the_service_the_agent_and_the_command_line_take_a_language(index, capsys):
    with TestClient(create_app(index), base_url="http://127.0.0.1") as client:
        french = client.get("/api/search", params={"q": QUESTION, "language": "French"})
        lacking = client.get("/api/search", params={"q": QUESTION, "language": "ja"})
        blank = client.get("/api/search", params={"q": QUESTION, "language": " , "})
        asked = {"question": "Wann wurde das Matterhorn bestiegen?", "top_k": 8}
        german = client.post("/api/ask", json={**asked, "language": "de"}).json()
        none = client.post("/api/ask", json={**asked, "language": "ja"}).json()
        streamed = client.post("/api/ask/stream", json={**asked, "language": "ja"}).text
    assert german["found"] and _files(german["hits"]) == {FILES["de"]}
    assert (none["found"], none["reason_code"], none["hits"]) == (False, "nothing_relevant", [])
    assert none["answer"].startswith("Nicht im Index gefunden")  # asked in German
    assert '"found": false' in streamed and none["answer"] in streamed
    with TestClient(
        create_app(index, answer=lambda *_: None), base_url="http://127.0.0.1"
    ) as other:
        refused = other.post("/api/ask", json={**asked, "language": "de"})
    assert refused.status_code == 422 and "takes no such filter" in refused.json()["detail"]
    assert french.status_code == 200 and _files(french.json()) == {FILES["fr"]}
    held = "its languages: German (de), French (fr)"
    assert lacking.status_code == 422
    assert (
        lacking.json()["detail"] == f"language: no moment of this index is in Japanese (ja); {held}"
    )
    assert blank.status_code == 422 and blank.json()["detail"].startswith("language: ")
    tools = VideoToolSpec(index)
    found = json.loads(tools.search_moments(QUESTION, top_k=8, language="de"))
    assert _files(found["moments"]) == {FILES["de"]}
    with pytest.raises(MomentRequestError, match=re.escape(held)):
        tools.search_moments(QUESTION, language="Japanese")
    answered = json.loads(tools.ask("Wann wurde das Matterhorn bestiegen?", language="ja"))
    assert answered["found"] is False and answered["answer"].startswith("Nicht im Index")
    folder = str(index.path)
    index.close()
    argv = ["search", QUESTION, "--top-k", "8", "--json", "--index", folder]
    # A service started before /api/search took a language would answer every language's
    # hits: a language is never asked of a running service (this one answers nothing).
    stale = FastAPI()
    stale.get("/api/search")(lambda: [])
    settings = index_settings(relevance="auto", lexical=True, chroma_url=None, collection=None)
    with running(stale) as url, announced(index.path, url, settings=settings):
        assert main([*argv, "--language", "de-CH"]) == 0
    assert _files(json.loads(capsys.readouterr().out)) == {FILES["de"]}
    assert main([*argv[:-3], "--language", "ja", "--index", folder]) == 0
    assert f"note: language: no moment of this index is in Japanese (ja); {held}" in (
        capsys.readouterr().err
    )


def test_languages_are_read_as_people_write_them():
    assert language_codes("fr, German ,PT-br, fr") == ["fr", "de", "pt"]
    with pytest.raises(ValueError, match="comma-separated"):
        language_codes(" , ")
    assert unknown_languages(["fr"], ["fr+de", "en"]) is None
    assert unknown_languages(["sv", "fr"], ["de+fr"]) == (
        "no moment of this index is in Swedish (sv); its languages: German (de), French (fr)"
    )
    assert "no moment of this index has a language" in (unknown_languages(["fr"], []) or "")
