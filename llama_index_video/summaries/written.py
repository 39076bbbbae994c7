"""A recording's summary written by a language model (Claude or Gemini), every line cited.

The model gets the chapters and, under each, its transcript units, each with its label
``[file mm:ss-mm:ss]`` and speaker; it answers one JSON object: ``overview``,
``decisions``, ``action_items`` (with ``owner`` and ``due`` when said) and
``open_questions``, each item a ``text`` and the ``cite`` label it comes from. Every
cited label is checked with :func:`~llama_index_video.summaries.summary.citation_holds`:
an item citing a moment that does not exist is dropped and counted
(:attr:`Summary.dropped_citations`), and the summary says so.

The prompt is bounded (:data:`MAX_PROMPT_CHARS`): when the transcript is longer, every
unit is cut to the same number of words, so the whole recording is still seen. The
answer is cached in the index folder (``summaries/``), keyed by the recording's content
hash, the model, the span and :data:`PROMPT_VERSION`: asking again makes no model call,
and a changed recording (a new content hash) gets a new summary.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.llms.llm import LLM

from llama_index_video import schema
from llama_index_video.errors import AnswerError
from llama_index_video.media.output import write_text
from llama_index_video.results import Chapter
from llama_index_video.store.library import TranscriptLine
from llama_index_video.summaries.summary import (
    SECTIONS,
    Summary,
    SummaryLine,
    citation_holds,
)

PROMPT_VERSION = 1
"""Bumped when the prompt changes, so cached summaries of the old prompt are not reused."""
MAX_PROMPT_CHARS = 60_000
"""The transcript part of the prompt stays under this (about 15k tokens)."""
CACHE_FOLDER = "summaries"
"""The index folder's subfolder holding written summaries."""

SYSTEM = (
    "You summarize one recorded meeting or talk from its transcript. Answer with one JSON "
    "object and nothing else, of this shape: "
    '{"overview": [{"text": "...", "cite": "[file mm:ss-mm:ss]"}], '
    '"decisions": [{"text": "...", "cite": "..."}], '
    '"action_items": [{"text": "...", "owner": "who, if said", "due": "by when, if said", '
    '"cite": "..."}], "open_questions": [{"text": "...", "cite": "..."}]}. '
    "overview: a few sentences, one or two per chapter. decisions: what was decided. "
    "action_items: what someone will do, with owner and due only when the transcript says "
    "them (else null). open_questions: what was left undecided. Every item's cite is one "
    "label copied exactly from the transcript lines it comes from. Use only what the "
    "transcript says; an empty list when there is nothing of a kind."
)
_FENCE = re.compile(r"^\s*```(?:json)?\s*|\s*```\s*$")


def written_summary(
    source: str,
    lines: Sequence[TranscriptLine],
    chapters: Sequence[Chapter],
    *,
    llm: LLM,
    cache_key: str,
    cache_dir: Path,
) -> Summary:
    """The summary ``llm`` writes of ``lines`` (in time order) under their ``chapters``,
    its citations checked; read from ``cache_dir`` when this ``cache_key`` (the
    recording's content hash and span) was summarized by this model and prompt before.

    Raises:
        AnswerError: the model failed, or its answer is not the JSON asked for.
    """
    model = f"{type(llm).__name__}:{llm.metadata.model_name}"
    digest = hashlib.sha256(f"{cache_key}|{model}|v{PROMPT_VERSION}".encode()).hexdigest()
    cached = cache_dir / CACHE_FOLDER / f"{digest[:32]}.json"
    if cached.is_file():
        return Summary.from_dict(json.loads(cached.read_text(encoding="utf-8")))
    file_name = source.replace("\\", "/").rsplit("/", 1)[-1]
    prompt = _prompt(file_name, lines, chapters)
    reply = llm.chat(
        [
            ChatMessage(role=MessageRole.SYSTEM, content=SYSTEM),
            ChatMessage(role=MessageRole.USER, content=prompt),
        ]
    )
    summary = _checked(source, file_name, reply.message.content or "", lines, model=model)
    cached.parent.mkdir(parents=True, exist_ok=True)
    write_text(cached, json.dumps(summary.to_dict(), ensure_ascii=False), sources=[])
    return summary


def _prompt(file_name: str, lines: Sequence[TranscriptLine], chapters: Sequence[Chapter]) -> str:
    """The transcript by chapter, a unit a line, cut evenly to :data:`MAX_PROMPT_CHARS`."""
    total = sum(len(u.text) + 40 for u in lines) or 1
    most_words = None
    if total > MAX_PROMPT_CHARS:
        words = sum(len(u.text.split()) for u in lines)
        most_words = max(3, int(words * MAX_PROMPT_CHARS / total / max(len(lines), 1)))
    spans = [(c.start, c.end, c.title) for c in chapters] or [(float("-inf"), float("inf"), "")]
    out = []
    for number, (start, end, title) in enumerate(spans, 1):
        inside = [u for u in lines if start <= (u.start + u.end) / 2 <= end]
        if chapters:
            out.append(f"\nChapter {number}: {title}")
        for unit in inside:
            text = " ".join(unit.text.split()[:most_words] if most_words else unit.text.split())
            who = f" {unit.speaker}:" if unit.speaker else ""
            out.append(f"{schema.moment_label(file_name, unit.start, unit.end)}{who} {text}")
    return "Transcript:\n" + "\n".join(out).strip("\n")


def _checked(
    source: str,
    file_name: str,
    answer: str,
    units: Sequence[TranscriptLine],
    *,
    model: str,
) -> Summary:
    """The model's JSON ``answer`` as a :class:`Summary`, items whose citation does not
    hold dropped and counted."""
    try:
        data = json.loads(_FENCE.sub("", answer))
    except json.JSONDecodeError as exc:
        raise AnswerError(f"{source}: the model's summary is not JSON ({exc.msg})") from exc
    if not isinstance(data, dict):
        raise AnswerError(f"{source}: the model's summary is not a JSON object")
    dropped = 0
    sections: dict[str, tuple[SummaryLine, ...]] = {}
    for name in SECTIONS:
        kept = []
        for item in data.get(name) or []:
            line = _line(item)
            if line is None or not citation_holds(line, file_name, units):
                dropped += 1
                continue
            kept.append(line)
        sections[name] = tuple(kept)
    return Summary(
        source=source,
        extractive=False,
        model=model,
        dropped_citations=dropped,
        overview=sections["overview"],
        decisions=sections["decisions"],
        action_items=sections["action_items"],
        open_questions=sections["open_questions"],
    )


def _line(item: Any) -> SummaryLine | None:
    """One JSON item as a line; None when it has no text or no readable timed label."""
    if not isinstance(item, dict) or not str(item.get("text") or "").strip():
        return None
    label = str(item.get("cite") or "").strip()
    parsed = schema.parse_label(label.strip("[]"))
    if parsed is None or parsed[1] is None:
        return None
    start = parsed[1]
    end = parsed[2] if parsed[2] is not None else start
    owner, due = item.get("owner"), item.get("due")
    return SummaryLine(
        text=" ".join(str(item["text"]).split()),
        label=label if label.startswith("[") else f"[{label}]",
        start=start,
        end=end,
        speaker=str(owner) if owner else None,
        by=str(due) if due else None,
    )
