"""One hit shape at every door: ``search --json``, the service, the agent tools and MCP
all give :meth:`SearchHit.to_dict` (the service adds its URLs, agents and MCP read the
compact form), so a script or a model reads the same keys with the same meanings."""

from __future__ import annotations

import asyncio
import json
from dataclasses import fields

from fastapi.testclient import TestClient

from llama_index_video.agents import VideoToolSpec
from llama_index_video.cli.main import main
from llama_index_video.mcp.server import build_server
from llama_index_video.results import SearchHit
from llama_index_video.service.app import create_app

QUERY = "who will own the billing provider migration"
HIT_KEYS = {f.name for f in fields(SearchHit)}
SERVICE_URLS = {"media_url", "media_type", "frame_url"}


def test_every_door_gives_the_one_hit_shape(example_index, capsys):
    hits = example_index.search(QUERY, top_k=3)
    assert hits
    wire = [hit.to_dict() for hit in hits]

    assert (
        main(["search", QUERY, "--top-k", "3", "--json", "--index", str(example_index.path)]) == 0
    )
    assert json.loads(capsys.readouterr().out) == wire

    with TestClient(create_app(example_index), base_url="http://127.0.0.1") as client:
        served = client.get("/api/search", params={"q": QUERY, "top_k": 3}).json()
    assert [{k: v for k, v in hit.items() if k not in SERVICE_URLS} for hit in served] == wire
    assert all(set(hit) == HIT_KEYS | SERVICE_URLS for hit in served)

    compact = [hit.to_dict(compact=True) for hit in hits]
    tool = VideoToolSpec(example_index, max_result_bytes=100_000)
    assert json.loads(tool.search_moments(QUERY, top_k=3))["moments"] == compact
    assert all(set(moment) <= HIT_KEYS and "url" in moment for moment in compact)

    server = build_server(example_index, max_result_bytes=100_000)
    result = asyncio.run(server.call_tool("search_moments", {"query": QUERY, "top_k": 3}))
    assert not result.is_error
    assert json.loads(result.content[0].text)["moments"] == compact
