"""The meeting of a new user's trial, as encoders the suite never reads, asked through an
installed package.

    python benchmarks/package_trial.py build DIR          # the recordings and reference.json
    python benchmarks/package_trial.py score INDEX FILE   # the questions, through VideoIndex.search
    python benchmarks/package_trial.py app INDEX FILE     # the same, as a LlamaIndex app asks
    python benchmarks/package_trial.py doors INDEX FILE   # through Claude, an agent and MCP

The meeting is :mod:`benchmarks.meeting_trial`'s (15:59 of real voices, their licences in
each piece's JSON). ``build`` writes it as :data:`FORMS`: AAC beside a still H.264 frame in
MP4 under a name with spaces and non-ASCII letters, MP3 at 8 kHz mono as a phone bridge
records, and Apple Lossless in a Core Audio file. ``score`` asks the meeting's questions of
one recording in an index and prints whether each first hit starts within 3 s of its
sentence and names the reader. ``app`` asks them as a third-party app would: the index's
``as_retriever()`` in a ``RetrieverQueryEngine`` on LlamaIndex's ``MockLLM``, its
``aretrieve``, and a ``VectorStoreIndex`` of the recording's ``VideoReader`` nodes on
``local_embedding()`` (each way's first node's ``start_s``). ``doors`` asks them through
the doors an app with a model uses, the model played by the tests' stand-in Messages API
(:mod:`tests.fakes.anthropic_server`): ``RetrieverQueryEngine`` on ``ClaudeMultimodalLLM``
(the stand-in cites the context line sharing most words with the question), a
``FunctionAgent`` with ``VideoToolSpec``'s tools (it searches once and cites the first
moment), and the ``mcp`` server over stdio with the official client (``search_moments``'s
first moment); each cited moment is right when it starts within the tolerance. Run it
with the Python of the environment the package is installed in (the stand-in needs only
the standard library); there is no baseline: the figures are the product's current state
(docs/evaluation.md, *A new user's trial: the built package*).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parents[1]))

from benchmarks.baseline import load_average
from benchmarks.meeting_trial import (
    QUESTIONS,
    TOLERANCE_SECONDS,
    ffmpeg,
    join,
    print_score,
    starts_at,
)

STILL = ("-f", "lavfi", "-i", "color=c=darkgreen:s=640x360:r=1")
FORMS: dict[str, tuple[str, ...]] = {
    "Réunion d'équipe – 7 déc.mp4": (
        *("-map", "1:a", "-map", "0:v", "-shortest"),
        *("-c:v", "libx264", "-tune", "stillimage", "-pix_fmt", "yuv420p"),
        *("-c:a", "aac", "-ar", "24000", "-b:a", "32k", "-movflags", "+faststart"),
    ),
    "standup phone 8k.mp3": ("-c:a", "libmp3lame", "-ar", "8000", "-ac", "1", "-b:a", "16k"),
    "standup.caf": ("-c:a", "alac"),
}
"""Each recording's name and the ffmpeg output options that encode it from the WAV."""


def build(folder: Path) -> None:
    """Write the meeting as each of :data:`FORMS`, and its reference, into ``folder``."""
    master = join(folder)
    for name, options in FORMS.items():
        still = STILL if "0:v" in options else ()
        ffmpeg(*still, "-i", str(master), *options, str(folder / name))
    master.unlink()


def first_starts(starts: Sequence[float | None]) -> int:
    """How many of :data:`QUESTIONS` have their first start within the tolerance."""
    return sum(
        start is not None and starts_at(start, sentence_starts)
        for (_, sentence_starts, _), start in zip(QUESTIONS, starts, strict=True)
    )


def app(index_folder: Path, recording: str) -> None:
    """Ask :data:`QUESTIONS` through LlamaIndex's own classes and print each way's count."""
    from llama_index.core import VectorStoreIndex
    from llama_index.core.llms import MockLLM
    from llama_index.core.query_engine import RetrieverQueryEngine

    from llama_index_video import VideoIndex, VideoReader, local_embedding

    def start_of(nodes: list) -> float | None:
        return nodes[0].node.metadata["start_s"] if nodes else None

    index = VideoIndex(index_folder)
    try:
        path = index.recording(recording).path
        retriever = index.as_retriever(similarity_top_k=3, sources=[recording])
        engine = RetrieverQueryEngine.from_args(retriever, llm=MockLLM())
        questions = [question for question, _, _ in QUESTIONS]
        engine_starts = [start_of(engine.query(q).source_nodes) for q in questions]

        async def retrieve_all() -> list[float | None]:
            found = await asyncio.gather(*(retriever.aretrieve(q) for q in questions))
            return [start_of(nodes) for nodes in found]

        async_starts = asyncio.run(retrieve_all())
    finally:
        index.close()
    nodes = VideoReader().load_data([path])
    own = VectorStoreIndex(nodes, embed_model=local_embedding()).as_retriever(similarity_top_k=1)
    own_starts = [start_of(own.retrieve(q)) for q in questions]
    asked = len(QUESTIONS)
    print(
        f"RetrieverQueryEngine(as_retriever(), MockLLM): {first_starts(engine_starts)} of {asked}"
    )
    print(f"as_retriever().aretrieve, gathered: {first_starts(async_starts)} of {asked}")
    print(f"VectorStoreIndex(VideoReader nodes): {first_starts(own_starts)} of {asked}")
    print(f"({TOLERANCE_SECONDS:g} s; load {load_average()})")


LABEL = re.compile(r"\[[^\[\]]* (\d+(?::\d\d)+)-\d+(?::\d\d)+\]")
"""A moment's label, ``[file 11:04-11:16]``; group 1 is its start."""


def cited_start(text: str) -> float | None:
    """Where the first moment cited in ``text`` starts, in seconds."""
    from llama_index_video.schema import parse_timestamp

    found = LABEL.search(text)
    return parse_timestamp(found.group(1)) if found else None


def closest_line(context: str, question: str) -> str:
    """The labelled line of ``context`` sharing most words with ``question``."""
    asked = set(re.findall(r"\w+", question.lower()))
    lines = [line for line in context.splitlines() if LABEL.search(line)]
    return max(
        lines, key=lambda line: len(asked & set(re.findall(r"\w+", line.lower()))), default=""
    )


def request_text(body: dict) -> str:
    """Every text of a Messages API request: its system prompt and turns."""
    parts = [body.get("system") or ""]
    for turn in body["messages"]:
        content = turn["content"]
        parts += (
            [content]
            if isinstance(content, str)
            else [part.get("text", "") for part in content if part.get("type") == "text"]
        )
    return "\n".join(part if isinstance(part, str) else json.dumps(part) for part in parts)


async def answered(agent: Any, question: str) -> Any:
    """The agent's answer to ``question`` (its run starts tasks: it needs a running loop)."""
    return await agent.run(user_msg=question)


def doors(index_folder: Path, recording: str) -> None:
    """Ask :data:`QUESTIONS` through Claude's query engine, an agent and MCP; print counts."""
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.query_engine import RetrieverQueryEngine
    from mcp import ClientSession, StdioServerParameters, stdio_client

    from llama_index_video import ClaudeMultimodalLLM, VideoIndex
    from llama_index_video.agents.tool_spec import VideoToolSpec
    from tests.fakes.anthropic_server import FakeAnthropicServer, text_reply, tool_reply

    questions = [question for question, _, _ in QUESTIONS]
    asking = [""]

    def cite_closest(body: dict):
        return text_reply(closest_line(request_text(body), asking[0]))

    def search_then_cite(body: dict):
        results = [
            part for turn in body["messages"] if isinstance(turn["content"], list)
            for part in turn["content"] if part.get("type") == "tool_result"
        ]  # fmt: skip
        if not results:
            return tool_reply("search_moments", query=asking[0], top_k=3)
        moments = json.loads(results[0]["content"][0]["text"]).get("moments", [])
        return text_reply(moments[0]["label"] if moments else "nothing found")

    engine_starts, agent_starts = [], []
    with FakeAnthropicServer() as claude:
        llm = ClaudeMultimodalLLM(api_key=claude.api_key, base_url=claude.url)
        index = VideoIndex(index_folder)
        try:
            retriever = index.as_retriever(similarity_top_k=3, sources=[recording])
            engine = RetrieverQueryEngine.from_args(retriever, llm=llm)
            agent = FunctionAgent(tools=VideoToolSpec(index).to_tool_list(), llm=llm)
            for question in questions:
                asking[0] = question
                claude.respond = cite_closest
                engine_starts.append(cited_start(str(engine.query(question))))
                claude.respond = search_then_cite
                answer = asyncio.run(answered(agent, question))
                agent_starts.append(cited_start(str(answer)))
        finally:
            index.close()

    server = StdioServerParameters(
        command=str(Path(sys.executable).with_name("llama-index-video")),
        args=["mcp", "--index", str(index_folder)],
    )

    async def through_mcp() -> tuple[list[str], list[float | None]]:
        async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = [tool.name for tool in (await session.list_tools()).tools]
            starts = []
            for question in questions:
                found = await session.call_tool(
                    "search_moments", {"query": question, "top_k": 1, "source": recording}
                )
                moments = json.loads(found.content[0].text).get("moments", [])
                starts.append(moments[0]["start"] if moments else None)
            return tools, starts

    tools, mcp_starts = asyncio.run(through_mcp())
    for question, *starts in zip(questions, engine_starts, agent_starts, mcp_starts, strict=True):
        print(f"{question}: query engine, agent, MCP cite {starts}")
    for door, starts in (
        ("RetrieverQueryEngine(ClaudeMultimodalLLM), cited", engine_starts),
        ("FunctionAgent(VideoToolSpec tools, Claude), cited", agent_starts),
        (f"MCP stdio ({len(tools)} tools), search_moments first", mcp_starts),
    ):
        print(f"{door}: {first_starts(starts)} of {len(QUESTIONS)}")
    print(f"({TOLERANCE_SECONDS:g} s; load {load_average()})")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("action", choices=["build", "score", "app", "doors"])
    parser.add_argument("folder", type=Path, help="build: where to write; otherwise the index")
    parser.add_argument("recording", nargs="?", help="score, app, doors: the recording's file name")
    args = parser.parse_args(argv)
    if args.action == "build":
        build(args.folder)
        print(f"wrote {', '.join(FORMS)} in {args.folder}")
        return 0
    if args.recording is None:
        parser.error(f"{args.action} needs the recording's file name")
    if args.action == "app":
        app(args.folder, args.recording)
        return 0
    if args.action == "doors":
        doors(args.folder, args.recording)
        return 0
    print_score(args.folder, args.recording)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
