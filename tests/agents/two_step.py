"""A two-step question for agents, and the model that answers it by reading tool results.

The model is played by a function of the request each stand-in API receives
(tests/fakes): it searches, reads the transcript before the best moment, then answers
citing both, so the answer is only right when the tools are.
"""

from __future__ import annotations

import asyncio
import json

from llama_index.core.agent.workflow import FunctionAgent

from tests.fakes.anthropic_server import Reply, text_reply
from tests.fakes.anthropic_server import tool_reply as claude_tool_reply
from tests.fakes.openai_server import ChatReply, tool_reply
from tests_support import CHECKOUT

QUESTION = "What did they decide about the cache, and what problem was raised just before?"


def next_step(results: list[dict]) -> tuple[str, dict] | str:
    """A model that searches, reads what came before the best moment, then answers.

    ``results`` are the tool results so far; the step is a tool call (name,
    arguments) or the answer text.
    """
    if not results:
        return "search_moments", {"query": "decision to move the cache", "top_k": 3}
    decision = results[0]["moments"][0]
    if len(results) == 1:
        start = decision["start"]
        return "read_transcript", {"source": decision["source"], "start": start - 20, "end": start}
    before = [line for line in results[1]["lines"] if line["start"] < decision["start"]][-1]
    return f"{decision['text']} {decision['label']} Just before: {before['text']} {before['label']}"


def play_openai(body: dict) -> ChatReply:
    step = next_step([json.loads(m["content"]) for m in body["messages"] if m["role"] == "tool"])
    return ChatReply(text=step) if isinstance(step, str) else tool_reply(step[0], **step[1])


def claude_parts(messages: list[dict], role: str, kind: str) -> list[dict]:
    """The ``kind`` content blocks of ``role``'s turns in a Messages API request."""
    return [
        part
        for turn in messages
        if turn["role"] == role and isinstance(turn["content"], list)
        for part in turn["content"]
        if part["type"] == kind
    ]


def play_claude(body: dict) -> Reply:
    results = claude_parts(body["messages"], "user", "tool_result")
    step = next_step([json.loads(part["content"][0]["text"]) for part in results])
    return text_reply(step) if isinstance(step, str) else claude_tool_reply(step[0], **step[1])


def run_agent(agent: FunctionAgent) -> str:
    """The agent's answer to :data:`QUESTION`."""

    async def run() -> str:
        return str(await agent.run(user_msg=QUESTION))

    return asyncio.run(run())


def check_two_step_answer(answer: str, calls: list[tuple[str, dict]], offered: set[str]) -> None:
    assert "dedicated cluster" in answer and "[checkout_deep_dive.mp4 00:46-00:55]" in answer
    assert "tail latency" in answer and "[checkout_deep_dive.mp4 00:31-00:39]" in answer
    assert [name for name, _ in calls] == ["search_moments", "read_transcript"]
    assert calls[1][1]["source"] == str(CHECKOUT)
    assert {"search_moments", "read_transcript", "describe_screen"} <= offered
