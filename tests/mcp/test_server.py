"""The MCP server, driven by the official SDK's client over stdio and streamable HTTP,
and through LlamaIndex's MCP client (llama-index-tools-mcp) into a FunctionAgent."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import av
import httpx2
import pytest
import webvtt
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.llms.openai import OpenAI
from llama_index.tools.mcp import BasicMCPClient, McpToolSpec
from mcp import Client, ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from PIL import Image

from llama_index_video.agents import VideoToolSpec
from llama_index_video.cli.main import main
from llama_index_video.mcp.server import build_server
from llama_index_video.store.transcript_export import TRANSCRIPT_FORMATS
from tests.agents.test_tool_spec import cited_times
from tests.agents.two_step import QUESTION, play_openai
from tests.chapters.test_summaries import meeting_index  # noqa: F401  (the shared fixture)
from tests.fakes.openai_server import FakeOpenAIServer
from tests_support import ROOT
from tests_support import TEAM_SYNC as TEAM_SYNC_PATH

TOKEN = "a-long-enough-test-token-123"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
INGEST = (sys.executable, "-m", "llama_index_video.cli.main", "ingest")


def stdio(folder) -> StdioServerParameters:
    """A stdio server over the index folder ``folder``, started by the client."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "llama_index_video.cli.main", "mcp", "--index", str(folder)],
        env=ENV,
    )


def server_command(index, *extra: str) -> list[str]:
    return ["-m", "llama_index_video.cli.main", "mcp", "--index", str(index.path), *extra]


async def exercise(session: ClientSession) -> dict:
    await session.initialize()
    tools = await session.list_tools()
    found = await session.call_tool(
        "search_moments", {"query": "who owns the billing provider migration", "top_k": 2}
    )
    bad = await session.call_tool(
        "read_transcript", {"source": "/etc/passwd", "start": 0, "end": 3}
    )
    screen = await session.call_tool(
        "describe_screen", {"source": "ozone_explainer.mp4", "time": "00:03"}
    )
    resources = await session.list_resources()
    uri = next(str(r.uri) for r in resources.resources if str(r.uri).endswith("team_sync.mp3"))
    text = await session.read_resource(uri)
    templates = await session.list_resource_templates()
    vtt = await session.read_resource("transcript://team_sync.mp3/vtt")
    clip = await session.call_tool(
        "export_clip", {"source": "team_sync.mp3", "start": "00:05", "end": 15}
    )
    return {
        "clip": clip,
        "templates": {str(t.uri_template): t.mime_type for t in templates.resource_templates},
        "vtt": vtt.contents[0],
        "tools": {t.name: t for t in tools.tools},
        "found": json.loads(found.content[0].text),
        "found_error": found.is_error,
        "bad": (bad.is_error, bad.content[0].text),
        "transcript": text.contents[0].text,
        "screen": screen.content,
    }


def check(seen: dict) -> None:
    assert set(seen["tools"]) == {
        "search_moments",
        "ask",
        "list_recordings",
        "read_transcript",
        "describe_screen",
        "summarize_recording",
        "export_clip",
    }
    writes = {name for name, t in seen["tools"].items() if not t.annotations.read_only_hint}
    assert writes == {"export_clip"}
    assert "read around a moment" in seen["tools"]["read_transcript"].description
    # each parameter carries its description from the tool's docstring, as for agents
    for tool in seen["tools"].values():
        for name, parameter in tool.input_schema["properties"].items():
            assert parameter.get("description"), f"{tool.name}.{name} has no description"
    start = seen["tools"]["read_transcript"].input_schema["properties"]["start"]
    assert "mm:ss" in start["description"]
    # describe_screen: its JSON, then the frame itself for a vision model
    said, frame = seen["screen"]
    assert json.loads(said.text)["frame_time"] <= 3.0
    assert frame.type == "image" and frame.mime_type == "image/jpeg"
    image = Image.open(io.BytesIO(base64.b64decode(frame.data)))
    assert image.format == "JPEG" and image.width >= 320
    assert not seen["found_error"]
    assert seen["found"]["moments"][0]["label"] == "[team_sync.mp3 00:14-00:24]"
    assert 0.5 < seen["found"]["moments"][0]["confidence"] <= 1.0
    is_error, message = seen["bad"]
    assert is_error and "unknown source" in message and "\n" not in message
    assert seen["transcript"].startswith("[team_sync.mp3 00:01-00:09] Good morning everyone")
    assert seen["templates"]["transcript://{name}/srt"] == "application/x-subrip"
    assert set(seen["templates"]) >= {f"transcript://{{name}}/{f}" for f in TRANSCRIPT_FORMATS}
    assert seen["vtt"].mime_type == "text/vtt"
    cues = webvtt.from_string(seen["vtt"].text).captions
    assert cues[0].text.startswith("Good morning everyone") and 0.5 < cues[0].start_in_seconds < 2
    check_clip(seen["clip"])


def check_clip(result) -> None:
    """export_clip's JSON names a clip of the moment asked; a resource link points at it."""
    assert not result.is_error, result.content
    said, link = result.content
    clip = json.loads(said.text)
    path = Path(clip["path"])
    assert path.parent.name == "exports" and path.name == "team_sync_0005-0015.mp3"
    assert link.type == "resource_link" and link.uri == path.as_uri()
    assert link.mime_type == "audio/mpeg" and link.size == path.stat().st_size > 0
    assert 4.0 <= clip["start"] <= 5.0 and clip["end"] == pytest.approx(15.0, abs=0.1)
    with av.open(str(path)) as media:
        assert float(media.duration / av.time_base) == pytest.approx(15.0 - clip["start"], abs=0.3)


BAD_CALLS = [
    ("read_transcript", {"source": "team_sync.mp3", "start": "nan", "end": 5}, "not a time"),
    ("read_transcript", {"source": "team_sync.mp3", "start": 0, "end": "inf"}, "not a time"),
    ("read_transcript", {"source": "team_sync.mp3", "start": 45, "end": 95}, "after the end"),
    ("describe_screen", {"source": "team_sync.mp3", "time": "1e309"}, "not a time"),
    ("describe_screen", {"source": "nowhere.mp4", "time": 3}, "unknown source"),
    ("search_moments", {"query": "cache", "modality": "smell"}, "choose from"),
    ("search_moments", {"query": "cache", "source": "nowhere.mp4"}, "unknown source"),
]


@pytest.fixture(scope="module")
def stdio_session(example_index, tmp_path_factory) -> tuple[dict, list, MCPError, str]:
    """One stdio server over the example index, started by the SDK's client (a server
    process costs about 4 CPU s): :func:`exercise`'s results, then the results of
    :data:`BAD_CALLS` and of reading an unknown recording's transcript, and the
    server's stderr."""
    folder = tmp_path_factory.mktemp("stdio")
    exports = ["--export-dir", str(folder / "exports")]

    async def run(errlog) -> tuple[dict, list, MCPError]:
        params = StdioServerParameters(
            command=sys.executable, args=server_command(example_index, *exports), env=ENV
        )
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            seen = await exercise(session)
            results = [await session.call_tool(name, arguments) for name, arguments, _ in BAD_CALLS]
            with pytest.raises(MCPError) as refused:
                await session.read_resource("transcript://nowhere.mp4")
            return seen, results, refused.value

    log = folder / "server-stderr.txt"
    with log.open("w") as errlog:
        seen, results, resource_error = asyncio.run(run(errlog))
    return seen, results, resource_error, log.read_text()


def test_stdio_with_the_sdk_client(stdio_session):
    seen, *_ = stdio_session
    check(seen)


def test_search_moments_by_chapter_through_the_sdk_client(meeting_index):  # noqa: F811
    index, _ = meeting_index
    question = {"query": "How do we sell it to customers?", "top_k": 3}

    async def run() -> tuple[dict, list[dict]]:
        async with Client(build_server(index), mode="legacy") as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            results = [
                await client.call_tool("search_moments", {**question, **flag})
                for flag in ({}, {"by_chapter": True}, {"by_chapter": "maybe"})
            ]
        return tools["search_moments"].input_schema["properties"], results

    properties, (plain, blended, bad) = asyncio.run(run())
    assert properties["by_chapter"]["type"] == "boolean"
    assert "chapter" in properties["by_chapter"]["description"]
    assert not plain.is_error and not blended.is_error
    assert json.loads(blended.content[0].text) == json.loads(
        VideoToolSpec(index).search_moments(**question, by_chapter=True)
    )
    moments = json.loads(blended.content[0].text)["moments"]
    assert moments != json.loads(plain.content[0].text)["moments"]
    assert all(moment["chapter"] for moment in moments)
    assert bad.is_error and "by_chapter" in bad.content[0].text  # the SDK checks the type


def test_errors_reach_the_client_in_one_line_and_no_traceback_the_log(stdio_session):
    _, results, resource_error, log = stdio_session
    for result, (name, _, says) in zip(results, BAD_CALLS, strict=True):
        text = result.content[0].text
        assert result.is_error and says in text and "\n" not in text, (name, text)
    assert "nowhere.mp4: unknown source" in resource_error.error.message
    assert resource_error.error.code == -32602  # invalid params: no such recording
    assert "Traceback" not in log


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def http_server(example_index, tmp_path_factory):
    port = free_port()
    exports = ["--export-dir", str(tmp_path_factory.mktemp("http") / "exports")]
    process = subprocess.Popen(
        [sys.executable, *server_command(example_index, "--http", "--port", str(port), *exports)],
        env={**ENV, "LLAMA_INDEX_VIDEO_TOKEN": TOKEN},
        stderr=subprocess.PIPE,
        text=True,
    )
    # 240 s, as for serve: at load 30 on 2 cores it had not started after 60 s, and the
    # tests then failed on a refused connection
    deadline = time.monotonic() + 240
    while True:
        if process.poll() is not None:
            pytest.fail(process.stderr.read())
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                break
        if time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"the MCP server did not listen on port {port} within 240 s")
        time.sleep(0.2)
    yield f"http://127.0.0.1:{port}/mcp"
    process.terminate()
    process.wait(timeout=10)


def test_http_with_the_sdk_client_and_the_token(http_server):
    async def run(token: str) -> dict:
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            httpx2.AsyncClient(headers=headers) as client,
            streamable_http_client(http_server, http_client=client) as (read, write),
            ClientSession(read, write) as session,
        ):
            return await exercise(session)

    check(asyncio.run(run(TOKEN)))
    refused = httpx2.post(http_server, json={}, headers={"Authorization": "Bearer wrong"})
    assert refused.status_code == 401


def test_through_llama_index_mcp_client_into_a_function_agent(http_server):
    client = BasicMCPClient(http_server, headers={"Authorization": f"Bearer {TOKEN}"})

    async def run(server: FakeOpenAIServer) -> str:
        tools = await McpToolSpec(client=client).to_tool_list_async()
        llm = OpenAI(model="gpt-4o", api_key=server.api_key, api_base=server.url, max_retries=0)
        agent = FunctionAgent(tools=tools, llm=llm)
        return str(await agent.run(user_msg=QUESTION))

    with FakeOpenAIServer(lambda body: play_openai(_tool_texts(body))) as server:
        answer = asyncio.run(run(server))
    assert "dedicated cluster" in answer and "[checkout_deep_dive.mp4 00:46-00:55]" in answer
    assert "tail latency" in answer and "[checkout_deep_dive.mp4 00:31-00:39]" in answer


def _tool_texts(body: dict) -> dict:
    """McpToolSpec hands the agent the whole CallToolResult; the model reads its text."""
    messages = []
    for message in body["messages"]:
        if message["role"] == "tool" and not message["content"].startswith("{"):
            start = message["content"].index("text='") + len("text='")
            end = message["content"].index("', annotations")
            message = {**message, "content": message["content"][start:end]}
        messages.append(message)
    return {**body, "messages": messages}


def test_non_loopback_without_a_token_is_one_line(example_index, capsys, monkeypatch):
    monkeypatch.delenv("LLAMA_INDEX_VIDEO_TOKEN", raising=False)
    code = main(["mcp", "--http", "--host", "0.0.0.0", "--index", str(example_index.path)])
    err = capsys.readouterr().err
    assert code == 2 and "refusing to listen on 0.0.0.0 without a token" in err
    assert err.count("\n") == 1


def test_a_recording_ingested_while_it_runs_is_listed(
    example_index, tmp_path, script_transcriber, embed_model
):
    from llama_index_video.index import VideoIndex
    from llama_index_video.reader.video_reader import VideoReader
    from tests_support import TEAM_SYNC

    folder = tmp_path / "index"
    shutil.copytree(example_index.path, folder)
    writer = VideoIndex(
        folder,
        embed_model=embed_model,
        reader=VideoReader(media_dir=folder / "media", transcriber=script_transcriber),
    )
    try:
        assert writer.remove(str(TEAM_SYNC)) > 0

        async def run() -> tuple[set[str], set[str], str]:
            async with (
                stdio_client(stdio(folder)) as (read, write),
                ClientSession(read, write) as s,
            ):
                await s.initialize()
                before = {str(r.uri) for r in (await s.list_resources()).resources}
                report = await asyncio.to_thread(writer.ingest, [TEAM_SYNC])
                assert report.ok, report
                after = {str(r.uri) for r in (await s.list_resources()).resources}
                text = await s.read_resource("transcript://team_sync.mp3")
                return before, after, text.contents[0].text

        before, after, text = asyncio.run(run())
    finally:
        writer.close()
    assert "transcript://team_sync.mp3" not in before
    assert after - before == {"transcript://team_sync.mp3"}
    assert text.startswith("[team_sync.mp3 00:01-00:09] Good morning everyone")


def test_a_file_replaced_while_the_server_runs_leaves_its_searches_whole(tmp_path):
    """The server reads a copy of each finished version: a filtered search failed with
    chromadb's 'Error finding id' once an ingest had replaced a file (the server's loaded
    vector index did not know the rows the writer added to the shared folder). After the
    writer, the new edition is searched."""
    manual = tmp_path / "manual.md"

    def edition(name: str) -> None:
        manual.write_text(
            "\n\n".join(
                f"## Valve {n}\n\nIn the {name} edition, valve {n} is checked every "
                f"{n % 9 + 1} days."
                for n in range(300)
            )
        )

    index = tmp_path / "index"
    edition("first")
    assert main(["ingest", str(manual), "--index", str(index), "--quiet"]) == 0
    search = {"query": "how often is valve 12 checked", "top_k": 3, "modality": "text,transcript"}

    async def run() -> list:
        async with (
            stdio_client(stdio(index)) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            before = await session.call_tool("search_moments", search)
            edition("second")
            ingest = await asyncio.to_thread(
                subprocess.run,
                [*INGEST, str(manual), "--index", str(index), "--quiet"],
                env=ENV,
                capture_output=True,
                text=True,
                timeout=600,
            )
            assert ingest.returncode == 0, ingest.stderr
            after = await session.call_tool("search_moments", search)
            return [before, after]

    for answer, edition_searched in zip(asyncio.run(run()), ("first", "second"), strict=True):
        assert not answer.is_error, answer.content[0].text
        hits = json.loads(answer.content[0].text)["moments"]
        assert hits and all(f"{edition_searched} edition" in h["text"] for h in hits), hits


def test_while_serve_runs_over_the_folder_moments_link_to_its_page(example_index, tmp_path):
    """A real ``serve`` over a copy of the index announces its page; the MCP server
    started before it links moments there while it runs, and to files once it stops."""
    folder = tmp_path / "index"
    shutil.copytree(example_index.path, folder)
    port = free_port()

    async def search(session: ClientSession) -> str:
        found = await session.call_tool(
            "search_moments", {"query": "who owns the billing provider migration", "top_k": 1}
        )
        return json.loads(found.content[0].text)["moments"][0]["url"]

    async def run() -> list[str]:
        urls = []
        async with stdio_client(stdio(folder)) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            urls.append(await search(s))
            service = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "llama_index_video.cli.main",
                    "serve",
                    "--index",
                    str(folder),
                    "--port",
                    str(port),
                    "--llm",
                    "none",
                ],
                env=ENV,
                stderr=subprocess.PIPE,
                text=True,
            )
            try:
                deadline = time.monotonic() + 120
                while not _answers(port):  # ends: a deadline
                    assert service.poll() is None, service.stderr.read()
                    assert time.monotonic() < deadline, "serve never answered"
                    await asyncio.sleep(0.2)
                urls.append(await search(s))
            finally:
                service.terminate()
                service.wait(timeout=30)
            urls.append(await search(s))
        return urls

    before, during, after = asyncio.run(run())
    assert before.startswith(str(TEAM_SYNC_PATH)) and "#t=" in before
    assert during.startswith(f"http://127.0.0.1:{port}/#source=") and "&t=14" in during
    assert after == before and not (folder / "service.json").exists()


def _answers(port: int) -> bool:
    try:
        return httpx2.get(f"http://127.0.0.1:{port}/api/health", timeout=5).status_code == 200
    except httpx2.TransportError:
        return False


def test_service_url_links_moments_to_that_page(example_index):
    async def run() -> str:
        params = StdioServerParameters(
            command=sys.executable,
            args=server_command(example_index, "--service-url", "https://videos.example.org"),
            env=ENV,
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            found = await s.call_tool(
                "read_transcript", {"source": "team_sync.mp3", "start": 10, "end": 20}
            )
            return json.loads(found.content[0].text)["url"]

    assert asyncio.run(run()).startswith("https://videos.example.org/#source=")


def test_the_transcript_resource_says_who_spoke(built_dialogue, tmp_path, embed_model):
    # A meeting's transcript resource gave every line without its speaker (the /txt
    # export had them): a client reading it could not tell who said what.
    from llama_index_video.index import VideoIndex

    shutil.copytree(built_dialogue, tmp_path / "named")
    folder = tmp_path / "named" / "index"
    index = VideoIndex(folder, embed_model=embed_model)
    try:
        index.name_speaker("dialogue.ogg", "SPEAKER_2", "Ben Okafor")
        said = {line.start: line.speaker for line in index.transcript("dialogue.ogg")}
    finally:
        index.close()

    async def run() -> str:
        async with stdio_client(stdio(folder)) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            return (await s.read_resource("transcript://dialogue.ogg")).contents[0].text

    lines = asyncio.run(run()).splitlines()
    assert len(lines) == len(said) >= 3
    assert {"Ben Okafor", "SPEAKER_1"} <= set(said.values())
    for line, speaker in zip(lines, said.values(), strict=True):
        assert line.split("] ", 1)[1].startswith(f"{speaker}: ")


def test_summarize_recording_of_a_span_through_the_sdk_client(meeting_index):  # noqa: F811
    index, audio = meeting_index

    async def run() -> tuple[dict, list]:
        async with Client(build_server(index), mode="legacy") as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            results = [
                await client.call_tool("summarize_recording", {"source": audio.name, **span})
                for span in (
                    {"start": "4:00", "end": "8:00"},
                    {"start": 480, "end": 240},
                    {"start": "4:00", "end": "59:00"},
                )
            ]
        return tools["summarize_recording"].input_schema["properties"], results

    properties, (part, reversed_span, beyond) = asyncio.run(run())
    assert {"start", "end"} <= set(properties) and "mm:ss" in properties["start"]["description"]
    assert not part.is_error
    found = json.loads(part.content[0].text)
    assert (found["span"], found["start"], found["end"]) == ("04:00-08:00", 240.0, 480.0)
    cited = cited_times(found)
    assert cited and all(start < 480 and end > 240 for start, end in cited)
    assert any("charging dock quotes" in item["text"] for item in found["items"])
    for result, says in ((reversed_span, "give start < end"), (beyond, "after the end")):
        message = result.content[0].text
        assert result.is_error and says in message and "\n" not in message
