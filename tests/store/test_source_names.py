"""Every door names a recording by a path that resolves from anywhere.

A file ingested by a relative path (``ingest media`` in ``a/``) is named by its absolute
path where it is now, in search hits, citations, the library and the tools that take
a recording back: through the CLI run from another directory, ``/api/search`` and
``/api/library``, the MCP server and the agents' tools. Before, each gave the path as
typed (``media/ozone_explainer.mp4``), which resolves only in ``a/``.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from mcp import Client

from benchmarks.fault_injection import here
from llama_index_video.agents import VideoToolSpec
from llama_index_video.index import VideoIndex
from llama_index_video.mcp.server import build_server
from llama_index_video.service.app import create_app
from tests.store.test_media_paths import _cli
from tests_support import OZONE, OZONE_SRT

QUESTION = "Why does the temperature rise with altitude in the stratosphere?"


@pytest.fixture(scope="module")
def relative(tmp_path_factory, embed_model) -> Iterator[tuple[VideoIndex, Path, Path]]:
    """An index of ``media/ozone_explainer.mp4`` ingested from ``a/`` as typed there, open
    while the working directory is ``b/``; the index, the video and ``b/``."""
    root = tmp_path_factory.mktemp("relative")
    media, elsewhere = root / "a" / "media", root / "b"
    media.mkdir(parents=True)
    elsewhere.mkdir()
    shutil.copy(OZONE, media)
    shutil.copy(OZONE_SRT, media)
    ingested = here("ingest", "media", "--index", "idx", "--ocr", "off", "--quiet", cwd=root / "a")
    assert ingested.returncode == 0, ingested.stderr
    previous = Path.cwd()
    os.chdir(elsewhere)
    index = VideoIndex(root / "a" / "idx", embed_model=embed_model)
    try:
        yield index, media / OZONE.name, elsewhere
    finally:
        index.close()
        os.chdir(previous)


def test_the_cli_names_it_by_its_absolute_path_from_another_directory(relative):
    _, video, elsewhere = relative

    def cli(*argv: str) -> str:
        done = _cli(*argv, "--index", "../a/idx", cwd=elsewhere)
        assert done.returncode == 0, done.stderr
        return done.stdout

    hits = json.loads(cli("search", QUESTION, "--json"))
    assert hits and {(h["source"], h["source_path"]) for h in hits} == {(str(video), str(video))}
    asked = json.loads(cli("ask", QUESTION, "--json", "--llm", "none"))
    assert asked["citations"] and {c["source"] for c in asked["citations"]} == {str(video)}
    listed = json.loads(cli("list", "--json"))
    assert [entry["source"] for entry in listed] == [str(video)]
    assert f"indexed  {video}\n" in cli("list")
    # What a hit names is what the tools that take a recording take back.
    lines = cli("transcript", hits[0]["source"], "--format", "txt")
    assert "ozone" in lines.lower()


def test_the_service_names_it_by_its_absolute_path(relative):
    index, video, _ = relative
    with TestClient(create_app(index), base_url="http://127.0.0.1") as client:
        found = client.get("/api/search", params={"q": QUESTION}).json()
        library = client.get("/api/library").json()
        transcript = client.get("/api/transcript", params={"source": found[0]["source"]})
    assert found and {hit["source"] for hit in found} == {str(video)}
    assert all(hit["media_url"] for hit in found)
    assert [entry["source"] for entry in library] == [str(video)]
    assert transcript.status_code == 200 and transcript.json()


def test_mcp_and_the_agents_tools_name_it_by_its_absolute_path(relative):
    index, video, _ = relative
    tools = VideoToolSpec(index)
    moments = json.loads(tools.search_moments(QUESTION, top_k=3))["moments"]
    assert moments and {m["source"] for m in moments} == {str(video)}
    listed = json.loads(tools.list_recordings())["recordings"]
    assert [r["source"] for r in listed] == [str(video)]
    read = json.loads(tools.read_transcript(moments[0]["source"], 30, 50))
    assert read["source"] == str(video) and read["lines"]

    async def run() -> tuple[dict, dict]:
        async with Client(build_server(index), mode="legacy") as client:
            found = await client.call_tool("search_moments", {"query": QUESTION, "top_k": 3})
            source = json.loads(found.content[0].text)["moments"][0]["source"]
            summary = await client.call_tool("summarize_recording", {"source": source})
        return json.loads(found.content[0].text), json.loads(summary.content[0].text)

    found, summary = asyncio.run(run())
    assert {m["source"] for m in found["moments"]} == {str(video)}
    assert summary["source"] == str(video)
