"""``VideoToolSpec``: a video index as tools for LlamaIndex agents (and MCP clients).

Five tools, each a method whose docstring is what the model reads: ``search_moments``,
``ask``, ``list_recordings``, ``read_transcript`` and ``describe_screen``. Every tool
returns compact JSON text: labels (``[file mm:ss-mm:ss]``, the form answers cite),
times in seconds and ``#t=`` links to the moment, and never more than
``max_result_bytes`` (4 kB by default; contexts, then long texts, then the last items
are left out first, and the result says ``"truncated": true``).

Bad input (an unknown source, times outside the recording, a span over
``max_span_seconds``, an unknown modality) is not raised into the agent's loop: the
tool returns ``{"error": "<one line>"}`` so the model can correct itself. The MCP
server (:mod:`llama_index_video.mcp`) serves the same methods and turns that object
into an MCP tool error.

The tools only read: a source is named by what the index recorded (a path, a link or
a unique file name), so no argument reaches a file the index does not list, and
messages pass through :func:`~llama_index_video.api_keys.scrub`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import wraps
from typing import TYPE_CHECKING, Any, TypeVar

from llama_index.core.tools.tool_spec.base import BaseToolSpec

from llama_index_video import schema
from llama_index_video.api_keys import scrub
from llama_index_video.errors import MomentRequestError, VideoIndexError
from llama_index_video.results import SearchHit
from llama_index_video.speakers.base import parse_speakers
from llama_index_video.store.library import (
    IndexedSource,
    check_span,
    moments_between,
    resolve_source,
    transcript,
)
from llama_index_video.store.media_paths import resolved_path

if TYPE_CHECKING:
    from llama_index.core.llms import LLM

    from llama_index_video.index import VideoIndex

DEFAULT_MAX_RESULT_BYTES = 4096
DEFAULT_MAX_SPAN_SECONDS = 600.0
MAX_TOP_K = 20
SHORT_TEXT_CHARS = 240
TOOL_NAMES = ("search_moments", "ask", "list_recordings", "read_transcript", "describe_screen")

_Tool = TypeVar("_Tool", bound=Callable[..., str])


def _reported(tool: _Tool) -> _Tool:
    """Turn the package's errors into ``{"error": ...}`` for the model to read."""

    @wraps(tool)
    def run(*args: Any, **kwargs: Any) -> str:
        try:
            return tool(*args, **kwargs)
        except (VideoIndexError, ValueError) as exc:
            return json.dumps({"error": scrub(str(exc))}, ensure_ascii=False)

    return run  # type: ignore[return-value]


class VideoToolSpec(BaseToolSpec):
    """The tools of a :class:`~llama_index_video.index.VideoIndex` for an agent.

    Example::

        from llama_index.core.agent.workflow import FunctionAgent
        agent = FunctionAgent(tools=VideoToolSpec(index).to_tool_list(), llm=llm)

    Args:
        index: An open index (it is only read).
        llm: Writes the ``ask`` tool's answers; None answers extractively (the best
            moments), which is often what an agent wants: it writes the answer itself.
        max_result_bytes: The longest tool result, in UTF-8 bytes.
        max_span_seconds: The longest span ``read_transcript`` reads at once.
    """

    spec_functions = list(TOOL_NAMES)  # noqa: RUF012 - BaseToolSpec declares it so

    def __init__(
        self,
        index: VideoIndex,
        *,
        llm: LLM | None = None,
        max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES,
        max_span_seconds: float = DEFAULT_MAX_SPAN_SECONDS,
    ) -> None:
        if max_result_bytes < 512:
            raise ValueError("max_result_bytes must be at least 512")
        if max_span_seconds <= 0:
            raise ValueError("max_span_seconds must be > 0")
        self.index = index
        self.llm = llm
        self.max_result_bytes = max_result_bytes
        self.max_span_seconds = max_span_seconds

    @_reported
    def search_moments(
        self,
        query: str,
        top_k: int = 5,
        source: str | None = None,
        speaker: str | None = None,
        modality: str | None = None,
    ) -> str:
        """Find the moments of the indexed recordings that match a query, best first.

        Use it first to locate where something is said or shown. Each moment has a
        label to cite, start/end seconds, the text, a link that plays it, and the
        speech around it (context). Then read_transcript reads more around a moment.

        Args:
            query (str): What to look for, in plain words.
            top_k (int): How many moments to return (1-20, default 5).
            source (str): Only this recording (a name as list_recordings shows it).
            speaker (str): Only what this speaker said, e.g. SPEAKER_1.
            modality (str): Comma-separated: transcript, ocr (screen text), frame, text.
        """
        top_k = _bounded_top_k(top_k)
        chosen = schema.parse_modalities(modality) if modality else None
        speakers = parse_speakers(speaker) if speaker else None
        wanted = resolve_source(self.index.manifest, source) if source else None
        hits = self.index.search(
            query,
            top_k=min(100, top_k * 5) if wanted else top_k,
            modalities=chosen,
            speakers=speakers,
        )
        if wanted is not None:
            hits = [h for h in hits if wanted.path in (h.source_path, h.source)][:top_k]
        payload: dict[str, Any] = {"query": query, "moments": [_moment(h) for h in hits]}
        if not hits:
            payload["note"] = "nothing relevant found; try other words or list_recordings"
        return _fit(payload, "moments", self.max_result_bytes)

    @_reported
    def ask(self, question: str, top_k: int = 5) -> str:
        """Answer a question from the recordings, with the moments it cites.

        Args:
            question (str): The question, in plain words.
            top_k (int): How many moments to consider (1-20, default 5).
        """
        from llama_index_video.answering.answerer import AskOptions

        answer = self.index.ask(
            question, llm=self.llm, options=AskOptions(top_k=_bounded_top_k(top_k))
        )
        citations = [
            _without_none(
                {
                    "label": c.label,
                    "source": c.source,
                    "start": _rounded(c.start),
                    "end": _rounded(c.end),
                    "link": c.url,
                }
            )
            for c in answer.citations
        ]
        payload = {"answer": answer.text, "found": answer.found, "citations": citations}
        return _fit(payload, "citations", self.max_result_bytes)

    @_reported
    def list_recordings(self) -> str:
        """List the indexed recordings and documents: name, length, what they hold.

        Use the names it gives as the source of the other tools.
        """
        recordings = [
            _without_none(
                {
                    "source": entry.source,
                    "duration": _rounded(entry.duration),
                    "length": schema.format_timestamp(entry.duration)
                    if entry.duration is not None
                    else None,
                    "status": entry.status,
                    "moments": entry.moments or None,
                    "language": entry.language,
                    "speakers": entry.speakers or None,
                }
            )
            for entry in self.index.library()
        ]
        return _fit({"recordings": recordings}, "recordings", self.max_result_bytes)

    @_reported
    def read_transcript(self, source: str, start: float | str, end: float | str) -> str:
        """Read what was said in a recording between two times, line by line.

        Use it after search_moments to read around a moment (e.g. 30 s before and
        after it). Times are seconds (94.5) or mm:ss (01:34).

        Args:
            source (str): The recording, as search_moments or list_recordings names it.
            start (str): Where to start reading: seconds or mm:ss.
            end (str): Where to stop reading: seconds or mm:ss.
        """
        recording = resolve_source(self.index.manifest, source)
        begin, finish = _seconds(start, recording), _seconds(end, recording)
        check_span(recording, begin, finish, max_seconds=self.max_span_seconds)
        lines = transcript(self.index.vector_store, recording.content_hash, start=begin, end=finish)
        payload: dict[str, Any] = {
            "source": recording.source,
            "label": schema.moment_label(recording.name, begin, finish),
            "link": schema.media_fragment_url(recording.path, begin),
            "lines": [
                _without_none(
                    {
                        "label": schema.moment_label(recording.name, line.start, line.end),
                        "start": _rounded(line.start),
                        "end": _rounded(line.end),
                        "speaker": line.speaker,
                        "text": line.text,
                    }
                )
                for line in lines
            ],
        }
        if not lines:
            payload["note"] = "nothing was said in this span"
        return _fit(payload, "lines", self.max_result_bytes)

    @_reported
    def describe_screen(self, source: str, time: float | str) -> str:
        """Say what is on screen in a video at a time: the frame image's path and the
        text read from the screen (slides, captions), plus what was being said.

        Args:
            source (str): The recording, as search_moments or list_recordings names it.
            time (str): The moment: seconds (94.5) or mm:ss (01:34).
        """
        recording = resolve_source(self.index.manifest, source)
        at = _seconds(time, recording)
        check_span(recording, at, at + 1e-3)
        nodes = moments_between(
            self.index.vector_store,
            recording.content_hash,
            at,
            at,
            ("frame", "ocr", "transcript"),
        )
        by_kind: dict[str, list[Any]] = {"frame": [], "ocr": [], "transcript": []}
        for node in sorted(nodes, key=lambda n: float(n.metadata[schema.START_S])):
            by_kind[str(node.metadata[schema.MODALITY])].append(node)
        frame = by_kind["frame"][-1] if by_kind["frame"] else None
        payload = _without_none(
            {
                "source": recording.source,
                "label": schema.moment_label(recording.name, at, None),
                "link": schema.media_fragment_url(recording.path, at),
                "frame_path": resolved_path(str(frame.metadata[schema.IMAGE_PATH]), self.index.path)
                if frame is not None
                else None,
                "frame_time": _rounded(frame.metadata.get(schema.FRAME_TIME))
                if frame is not None
                else None,
                "on_screen": [n.get_content() for n in by_kind["ocr"]],
                "said": " ".join(n.get_content() for n in by_kind["transcript"]) or None,
            }
        )
        if frame is None:
            payload["note"] = "no frame of this recording covers this time (audio, or no frames)"
        return _fit(payload, "on_screen", self.max_result_bytes)


def _moment(hit: SearchHit) -> dict[str, Any]:
    context = [
        _without_none({"label": unit.label or None, "speaker": unit.speaker, "text": unit.text})
        for unit in hit.context
    ]
    return _without_none(
        {
            "label": hit.label,
            "source": hit.source,
            "start": _rounded(hit.start),
            "end": _rounded(hit.end),
            "modality": hit.modality,
            "speaker": hit.speaker,
            "score": None if hit.score is None else round(hit.score, 3),
            "confidence": None if hit.confidence is None else round(hit.confidence, 3),
            "text": hit.text,
            "link": hit.url,
            "frame_path": hit.frame_path,
            "context": context or None,
        }
    )


def _fit(payload: dict[str, Any], items: str, limit: int) -> str:
    """``payload`` as JSON of at most ``limit`` bytes: contexts go first, then long texts
    are shortened, then the last items are left out; each step marks it truncated."""

    def fits() -> bool:
        return len(_compact(payload).encode()) <= limit

    if fits():
        return _compact(payload)
    payload["truncated"] = True
    listed: list[Any] = payload[items]
    for item in listed:
        if isinstance(item, dict):
            item.pop("context", None)
    if fits():
        return _compact(payload)
    listed[:] = [_shortened(item) for item in listed]
    omitted = 0
    while listed and not fits():  # ends: one item fewer each time
        listed.pop()
        omitted += 1
        payload["omitted"] = omitted
    if not fits():  # a long answer or note: shorten the top-level texts too
        payload.update({key: _shortened(value) for key, value in payload.items()})
    return _compact(payload)


def _compact(payload: dict[str, Any]) -> str:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def _shortened(item: Any) -> Any:
    if isinstance(item, str):
        return item if len(item) <= SHORT_TEXT_CHARS else item[:SHORT_TEXT_CHARS] + "…"
    if isinstance(item, dict) and isinstance(item.get("text"), str):
        return {**item, "text": _shortened(item["text"])}
    return item


def _seconds(value: float | str, recording: IndexedSource) -> float:
    if isinstance(value, int | float):
        return float(value)
    try:
        return schema.parse_timestamp(str(value))
    except ValueError as exc:
        raise MomentRequestError(
            f"{recording.name}: {value!r} is not a time; give seconds (94.5) or mm:ss (01:34)"
        ) from exc


def _bounded_top_k(top_k: int) -> int:
    return max(1, min(MAX_TOP_K, int(top_k)))


def _rounded(value: Any) -> float | None:
    return None if value is None or value == "" else round(float(value), 1)


def _without_none(item: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in item.items() if value is not None}
