"""``--relevance`` on search, ask and serve: the gate the index answers through."""

from __future__ import annotations

import json
import shutil

import pytest

from llama_index_video.cli.main import main
from tests_support import OZONE, OZONE_SRT

# Near the ozone video's topic, but nothing in it says how thick the layer is: above the
# similarity threshold, turned away by the standout gate.
NEAR_TOPIC = "How thick is the ozone layer over the Arctic?"
ANSWERABLE = "How many countries signed the Montreal Protocol?"


@pytest.fixture(scope="module")
def subtitled_index(tmp_path_factory):
    """The ozone video with its sidecar subtitles: no speech recognition, no OCR."""
    media = tmp_path_factory.mktemp("relevance_media")
    shutil.copy(OZONE, media / OZONE.name)
    shutil.copy(OZONE_SRT, media / OZONE_SRT.name)
    folder = media.parent / "relevance_index"
    assert main(["ingest", str(media), "--index", str(folder), "--quiet", "--ocr", "off"]) == 0
    return folder


def search(capsys, folder, query, *options):
    assert main(["search", query, "--index", str(folder), "--json", *options]) == 0
    return json.loads(capsys.readouterr().out)


def test_search_relevance_standout_turns_away_a_near_topic_question(capsys, subtitled_index):
    assert search(capsys, subtitled_index, NEAR_TOPIC, "--relevance", "off")
    assert search(capsys, subtitled_index, NEAR_TOPIC, "--relevance", "standout") == []
    assert search(capsys, subtitled_index, ANSWERABLE, "--relevance", "standout")


def test_ask_relevance_standout_says_not_found(capsys, subtitled_index):
    argv = ["ask", NEAR_TOPIC, "--index", str(subtitled_index), "--json", "--llm", "none"]
    assert main([*argv, "--relevance", "off"]) == 0
    assert json.loads(capsys.readouterr().out)["found"] is True
    assert main([*argv, "--relevance", "standout"]) == 0
    assert json.loads(capsys.readouterr().out)["found"] is False


def test_serve_relevance_standout_gates_the_service(subtitled_index, monkeypatch):
    import uvicorn
    from fastapi.testclient import TestClient

    found: dict[str, list] = {}

    def run(app, **_options):  # in place of binding a port: query the app it was given
        with TestClient(app, base_url="http://127.0.0.1:8000") as client:
            for query in (NEAR_TOPIC, ANSWERABLE):
                found[query] = client.get("/api/search", params={"q": query}).json()

    monkeypatch.setattr(uvicorn, "run", run)
    argv = ["serve", "--index", str(subtitled_index), "--llm", "none"]
    assert main([*argv, "--relevance", "standout"]) == 0
    assert found[NEAR_TOPIC] == [] and found[ANSWERABLE]
    assert main([*argv, "--relevance", "off"]) == 0
    assert found[NEAR_TOPIC]


def test_an_unknown_relevance_is_a_usage_error():
    with pytest.raises(SystemExit) as exited:
        main(["search", "q", "--relevance", "strict"])
    assert exited.value.code == 2
