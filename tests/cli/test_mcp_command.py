"""``llama-index-video mcp --print-config``: a block a desktop client can be given as is.

A client starts the server from its own working directory with its own ``PATH``; the
block must name the executable and the index by absolute paths under ``mcpServers``.
The test hands the printed block to the MCP SDK's stdio client, from another folder.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

from mcp import ClientSession, StdioServerParameters, stdio_client

from llama_index_video.cli.main import main
from tests_support import ROOT

HEAVY = ("llama_index.core", "chromadb", "llama_index_video.index")


def printed_config(capsys, *argv: str) -> dict:
    assert main(["mcp", "--print-config", *argv]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_block_names_the_executable_and_the_index_by_absolute_paths(
    capsys, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    (server,) = printed_config(capsys, "--index", "talks_index")["mcpServers"].values()
    command = Path(server["command"])
    assert command.is_absolute() and os.access(command, os.X_OK)
    index = Path(server["args"][server["args"].index("--index") + 1])
    assert index == tmp_path / "talks_index"
    http = printed_config(capsys, "--http", "--port", "9123")["mcpServers"]
    assert list(http.values()) == [{"url": "http://127.0.0.1:9123/mcp"}]


def test_a_chroma_server_and_collection_are_passed_on(capsys, tmp_path):
    block = printed_config(
        capsys,
        "--index",
        str(tmp_path),
        "--chroma-url",
        "http://127.0.0.1:8000",
        "--collection",
        "talks",
    )
    (server,) = block["mcpServers"].values()
    assert server["args"][-4:] == ["--chroma-url", "http://127.0.0.1:8000", "--collection", "talks"]


def test_printing_it_opens_nothing_heavy(tmp_path):
    code = (
        "import json, sys\n"
        "from llama_index_video.cli.main import main\n"
        f"main(['mcp', '--print-config', '--index', {str(tmp_path)!r}])\n"
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert json.loads(done.stderr.strip().splitlines()[-1]) == []


def test_the_printed_block_starts_a_server_from_another_folder(example_index, capsys, tmp_path):
    (server,) = printed_config(capsys, "--index", str(example_index.path))["mcpServers"].values()
    elsewhere = tmp_path / "client"
    elsewhere.mkdir()

    async def run() -> list[str]:
        params = StdioServerParameters(
            command=server["command"],
            args=server["args"],
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            cwd=str(elsewhere),
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return sorted(tool.name for tool in (await session.list_tools()).tools)

    assert asyncio.run(run()) == [
        "ask",
        "describe_screen",
        "export_clip",
        "list_recordings",
        "read_transcript",
        "search_moments",
        "summarize_recording",
    ]
