"""``VideoToolSpec``: a video index as tools for LlamaIndex agents (and MCP clients).

Six tools, each a method whose docstring is what the model reads: ``search_moments``,
``ask``, ``list_recordings``, ``read_transcript``, ``describe_screen`` and
``summarize_recording``; with an ``export_dir``, a seventh, ``export_clip``, cuts a
moment into a file there (named by :func:`~llama_index_video.recordings.moment_file_name`,
written by the facade's ``cut``: never onto a recording, never half-written). Every tool
returns compact JSON text: hits and citations in their compact wire form
(:meth:`~llama_index_video.results.SearchHit.to_dict`: labels ``[file mm:ss-mm:ss]``,
the form answers cite, times in seconds, ``url`` with the ``#t=`` of the moment), and
never more than ``max_result_bytes`` (4 kB by default; contexts, then long texts, then
the last items are left out first, and the result says ``"truncated": true``).

Everything a tool asks of one recording goes through the index's facade
(:class:`~llama_index_video.recordings.Recordings`). The methods take arguments as a
model sends them in JSON and check their types (LlamaIndex's ``FunctionTool`` does
not): a wrong type, an unknown source, a time that is not one (``nan`` and ``inf``
included), times outside the recording, a span over ``max_span_seconds`` or an unknown
modality raise :class:`~llama_index_video.errors.MomentRequestError` in one line. The
tools :meth:`VideoToolSpec.to_tool_list` hands an agent return the package's errors as
``{"error": "<one line>"}`` instead, so the model can correct itself; the MCP server
(:mod:`llama_index_video.mcp`) calls the methods and turns the errors into MCP errors.

The tools only read, but for ``export_clip``, which writes only into ``export_dir`` under
a name of its own making: a source is named by what the index recorded (a path, a link
or a unique file name), so no argument reaches a file the index does not list, and
messages pass through :func:`~llama_index_video.api_keys.scrub`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llama_index.core.tools.function_tool import FunctionTool
from llama_index.core.tools.tool_spec.base import SPEC_FUNCTION_TYPE, BaseToolSpec
from llama_index.core.tools.types import ToolMetadata

from llama_index_video import schema
from llama_index_video.api_keys import scrub
from llama_index_video.errors import MomentRequestError, VideoIndexError
from llama_index_video.recordings import MAX_MOMENT_SECONDS, moment_file_name
from llama_index_video.results import compacted
from llama_index_video.search.searcher import filters_unmet
from llama_index_video.speakers.base import parse_speakers
from llama_index_video.transcription.language import language_codes

if TYPE_CHECKING:
    from llama_index.core.llms import LLM

    from llama_index_video.index import VideoIndex
    from llama_index_video.store.recording_names import IndexedSource

DEFAULT_MAX_RESULT_BYTES = 4096
MAX_TOP_K = 20
SHORT_TEXT_CHARS = 240
TOOL_NAMES = (
    "search_moments",
    "ask",
    "list_recordings",
    "read_transcript",
    "describe_screen",
    "summarize_recording",
)
EXPORT_TOOL = "export_clip"
"""The tool that writes a file, offered only with an ``export_dir``."""


def reported(tool: Callable[..., str]) -> Callable[..., str]:
    """``tool`` returning the package's errors as ``{"error": ...}`` for a model to read."""

    @wraps(tool)
    def run(*args: Any, **kwargs: Any) -> str:
        try:
            return tool(*args, **kwargs)
        except VideoIndexError as exc:
            return json.dumps({"error": scrub(str(exc))}, ensure_ascii=False)

    return run


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
        max_span_seconds: The longest span ``read_transcript`` reads (and
            ``export_clip`` cuts) at once.
        export_dir: Where ``export_clip`` writes clips (made when the first is written);
            None leaves the tool out.
        page_url: The page of a ``serve`` over this index (``http://127.0.0.1:8000``),
            or a function saying where it is now (None: not running), asked at each
            call: moments then link to the page's deep link
            (:func:`~llama_index_video.service.address.page_link`), not to the file.
    """

    spec_functions = list(TOOL_NAMES)  # noqa: RUF012 - BaseToolSpec declares it so

    def __init__(
        self,
        index: VideoIndex,
        *,
        llm: LLM | None = None,
        max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES,
        max_span_seconds: float = MAX_MOMENT_SECONDS,
        export_dir: str | Path | None = None,
        page_url: str | Callable[[], str | None] | None = None,
    ) -> None:
        if max_result_bytes < 512:
            raise ValueError("max_result_bytes must be at least 512")
        if not max_span_seconds > 0 or not math.isfinite(max_span_seconds):
            raise ValueError("max_span_seconds must be a finite number > 0")
        self.index = index
        self.llm = llm
        self.max_result_bytes = max_result_bytes
        self.max_span_seconds = max_span_seconds
        self.export_dir = None if export_dir is None else Path(export_dir)
        self.page_url = page_url
        if self.export_dir is not None:
            self.spec_functions = [*TOOL_NAMES, EXPORT_TOOL]

    def to_tool_list(
        self,
        spec_functions: list[SPEC_FUNCTION_TYPE] | None = None,
        func_to_metadata_mapping: dict[str, ToolMetadata] | None = None,
    ) -> list[FunctionTool]:
        """The tools for an agent: each returns ``{"error": ...}`` for the package's errors
        (bad arguments included) instead of raising into the agent's loop."""
        tools = super().to_tool_list(spec_functions, func_to_metadata_mapping)
        return [
            FunctionTool.from_defaults(fn=reported(tool.fn), tool_metadata=tool.metadata)
            for tool in tools
        ]

    def search_moments(
        self,
        query: str,
        top_k: int = 5,
        source: str | None = None,
        speaker: str | None = None,
        modality: str | None = None,
        by_chapter: bool = False,
        language: str | None = None,
    ) -> str:
        """Find the moments of the indexed recordings that match a query, best first.

        Use it first to locate where something is said or shown. Each moment has a
        label to cite, start/end seconds, the text, a url that plays it, and the
        speech around it (context). Then read_transcript reads more around a moment.

        Args:
            query (str): What to look for, in plain words.
            top_k (int): How many moments to return (1-20, default 5).
            source (str): Only this recording (a name as list_recordings shows it).
            speaker (str): Only what this speaker said: a label (SPEAKER_1) or a name.
            modality (str): Comma-separated: transcript, ocr (screen text), frame, text.
            by_chapter (bool): True for a topic question: moments scored by their chapter too.
            language (str): Only what was said in these languages, comma-separated
                (fr, de; list_recordings gives each recording's).
        """
        query = _text(query, "query")
        count = _top_k(top_k)
        chosen = _parsed(schema.parse_modalities, _text(modality, "modality", optional=True))
        speakers = _parsed(parse_speakers, _text(speaker, "speaker", optional=True))
        languages = _parsed(language_codes, _text(language, "language", optional=True))
        named = _text(source, "source", optional=True)
        hits = self.index.search(
            query,
            top_k=count,
            modalities=chosen,
            speakers=speakers,
            sources=[named] if named else None,
            languages=languages,
            by_chapter=_flag(by_chapter, "by_chapter"),
        )
        payload: dict[str, Any] = {
            "query": query,
            "moments": self._linked([hit.to_dict(compact=True) for hit in hits]),
        }
        if not hits:
            unmet = filters_unmet(self.index.library(), speakers=speakers, languages=languages)
            if unmet:
                raise MomentRequestError(f"{unmet}; name one of them or none")
            payload["note"] = "nothing relevant found; try other words or list_recordings"
        return _fit(payload, "moments", self.max_result_bytes)

    def ask(
        self,
        question: str,
        top_k: int = 5,
        language: str | None = None,
        speaker: str | None = None,
    ) -> str:
        """Answer a question from the recordings, with the moments it cites.

        Args:
            question (str): The question, in plain words.
            top_k (int): How many moments to consider (1-20, default 5).
            language (str): Only from what was said in these languages, comma-separated
                (fr, de).
            speaker (str): Only from what this speaker said: a label (SPEAKER_1) or a
                name (for "what did Ana say about ...").
        """
        from llama_index_video.answering.answerer import AskOptions

        speakers = _parsed(parse_speakers, _text(speaker, "speaker", optional=True))
        languages = _parsed(language_codes, _text(language, "language", optional=True))
        answer = self.index.ask(
            _text(question, "question"),
            llm=self.llm,
            options=AskOptions(top_k=_top_k(top_k)),
            languages=languages,
            speakers=speakers,
        )
        payload = {
            "answer": answer.text,
            "found": answer.found,
            "citations": self._linked([c.to_dict(compact=True) for c in answer.citations]),
        }
        return _fit(payload, "citations", self.max_result_bytes)

    def list_recordings(self) -> str:
        """List the indexed recordings and documents: name, length, what they hold.

        Use the names it gives as the source of the other tools.
        """
        recordings = [
            compacted(
                {
                    "source": entry.source,
                    "duration": entry.duration,
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

    def read_transcript(self, source: str, start: float | str, end: float | str) -> str:
        """Read what was said in a recording between two times, line by line.

        Use it after search_moments to read around a moment (e.g. 30 s before and
        after it); a span running past either end is read up to that end. Times are
        seconds (94.5) or mm:ss (01:34).

        Args:
            source (str): The recording, as search_moments or list_recordings names it.
            start (str): Where to start reading: seconds or mm:ss.
            end (str): Where to stop reading: seconds or mm:ss.
        """
        recording = self.index.recording(_text(source, "source"))
        asked = _time(start, recording), _time(end, recording)
        begin, finish = _within(recording, *asked)
        lines = self.index.transcript(
            recording, start=begin, end=finish, max_seconds=self.max_span_seconds
        )
        payload: dict[str, Any] = {
            "source": recording.source,
            "label": schema.moment_label(recording.name, begin, finish),
            "url": self._link(recording, begin, finish),
            "lines": [
                compacted(
                    {
                        "label": schema.moment_label(recording.name, line.start, line.end),
                        "start": line.start,
                        "end": line.end,
                        "speaker": line.speaker,
                        "text": line.text,
                    }
                )
                for line in lines
            ],
        }
        notes = []
        if (begin, finish) != asked:
            length = recording.duration
            long = f" ({schema.format_timestamp(length)} long)" if length is not None else ""
            notes.append(
                f"the span asked for runs past the recording{long}; "
                f"read {schema.format_timestamp(begin)}-{schema.format_timestamp(finish)}"
            )
        if not lines:
            notes.append("nothing was said in this span")
        if notes:
            payload["note"] = "; ".join(notes)
        return _fit(payload, "lines", self.max_result_bytes)

    def describe_screen(self, source: str, time: float | str) -> str:
        """Say what is on screen in a video at a time: the frame image's path and the
        text read from the screen (slides, captions), plus what was being said.

        Args:
            source (str): The recording, as search_moments or list_recordings names it.
            time (str): The moment: seconds (94.5) or mm:ss (01:34).
        """
        recording = self.index.recording(_text(source, "source"))
        screen = self.index.screen(recording, _time(time, recording))
        payload = compacted(
            {
                "source": recording.source,
                "label": schema.moment_label(recording.name, screen.at, None),
                "url": self._link(recording, screen.at),
                "frame_path": screen.frame_path,
                "frame_time": screen.frame_time,
                "on_screen": screen.on_screen,
                "said": screen.said,
            }
        )
        if screen.frame_path is None:
            payload["note"] = "no frame of this recording covers this time (audio, or no frames)"
        return _fit(payload, "on_screen", self.max_result_bytes)

    def summarize_recording(
        self, source: str, start: float | str | None = None, end: float | str | None = None
    ) -> str:
        """List a recording's chapters (its topics, in order) and summarize it: an
        overview, the decisions, the action items (who said them, by when) and open
        questions, every line with its label to cite. With start and/or end, only that
        part of it ("minutes 10 to 20": start 10:00, end 20:00).

        Use it for questions about a whole meeting or lecture, or a part of one ("what
        was decided?", "what are the action items?"); then read_transcript around a line
        for more.

        Args:
            source (str): The recording, as search_moments or list_recordings names it.
            start (str): Summarize from this time only: seconds or mm:ss (default: the start).
            end (str): Summarize up to this time only: seconds or mm:ss (default: the end).
        """
        recording = self.index.recording(_text(source, "source"))
        begin = None if start is None else _time(start, recording)
        finish = None if end is None else _time(end, recording)
        summary = self.index.summarize(recording, start=begin, end=finish)
        items: list[dict[str, Any]] = [
            {"section": "chapter", "label": c.label, "text": c.title}
            for c in self.index.chapters(recording, start=begin, end=finish)
        ]
        for section, lines in summary.sections().items():
            items.extend(
                compacted(
                    {
                        "section": section,
                        "label": line.label,
                        "text": line.text,
                        "speaker": line.speaker,
                        "by": line.by,
                    }
                )
                for line in lines
            )
        payload = compacted(
            {
                "source": recording.source,
                "span": summary.span,
                "start": summary.start,
                "end": summary.end,
                "extractive": summary.extractive,
                "items": items,
                "note": summary.note or None,  # why there are no decisions (one voice)
            }
        )
        return _fit(payload, "items", self.max_result_bytes)

    def export_clip(self, source: str, start: float | str, end: float | str) -> str:
        """Cut a moment of a recording into a file to play or share, and give its path.

        Use it when the user wants the moment itself (a clip to send or watch), after
        search_moments found it. Audio stays audio; video becomes MP4. A clip copied
        without re-encoding may start up to a second early, at a keyframe.

        Args:
            source (str): The recording, as search_moments or list_recordings names it.
            start (str): Where the clip starts: seconds or mm:ss.
            end (str): Where the clip ends: seconds or mm:ss.
        """
        if self.export_dir is None:
            raise MomentRequestError(
                "export_clip writes nowhere: give VideoToolSpec an export_dir to turn it on"
            )
        recording = self.index.recording(_text(source, "source"))
        begin, finish = _time(start, recording), _time(end, recording)
        self.export_dir.mkdir(parents=True, exist_ok=True)
        output = self.export_dir / moment_file_name(recording, begin, finish)
        cut = self.index.cut(recording, begin, finish, output, max_seconds=self.max_span_seconds)
        payload = {
            "source": recording.source,
            "label": schema.moment_label(recording.name, cut.start, cut.end),
            "path": str(cut.path.resolve()),
            "start": cut.start,
            "end": cut.end,
            "method": cut.method,
        }
        return _compact(compacted(payload))

    def _page(self) -> str | None:
        return self.page_url() if callable(self.page_url) else self.page_url

    def _link(self, recording: IndexedSource, start: float, end: float | None = None) -> str:
        """Where a click plays ``recording`` from ``start``: the page, or the file."""
        from llama_index_video.service.address import page_link

        page = self._page()
        if page is None:
            return schema.media_fragment_url(recording.path, start)
        return page_link(page, recording.source, start, end)

    def _linked(self, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Compact hits or citations, each timed one's ``url`` the page's deep link when
        a page is known."""
        from llama_index_video.service.address import page_link

        page = self._page()
        if page is None:
            return items
        return [
            {**item, "url": page_link(page, item["source"], item["start"], item.get("end"))}
            if item.get("start") is not None
            else item
            for item in items
        ]


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


def _text(value: Any, name: str, *, optional: bool = False) -> str:
    """A text argument as a model sent it; "" for an optional one left out (null)."""
    if value is None and optional:
        return ""
    if isinstance(value, str) and (optional or value.strip()):
        return value
    given = "blank text" if isinstance(value, str) else f"{type(value).__name__} {value!r}"
    raise MomentRequestError(f"{name}: give text, not {given[:60]}")


def _flag(value: Any, name: str) -> bool:
    """A yes/no argument as a model sent it: true or false (also "true" or "false")."""
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    if not isinstance(value, bool):
        raise MomentRequestError(f"{name}: give true or false, not {value!r}"[:80])
    return value


def _top_k(value: Any) -> int:
    """``top_k`` as a model sent it (a whole number, also as 5.0 or "5"), kept in 1-20."""
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool):
        raise MomentRequestError(f"top_k: give a whole number from 1 to {MAX_TOP_K}, not {value!r}")
    return max(1, min(MAX_TOP_K, value))


def _parsed(parse: Callable[[str], list[str]], text: str) -> list[str] | None:
    """``parse(text)`` (the CLI's parser of the same option), None for no text."""
    if not text:
        return None
    try:
        return parse(text)
    except ValueError as exc:
        raise MomentRequestError(f"{text!r}: {exc}") from exc


def _time(value: Any, recording: IndexedSource) -> float:
    try:
        return schema.parse_time(value, negative=True)  # _within keeps it from 0 s
    except ValueError as exc:
        raise MomentRequestError(f"{recording.name}: {exc}") from exc


def _within(recording: IndexedSource, start: float, end: float) -> tuple[float, float]:
    """``start``-``end`` kept inside the recording where the span overlaps it (a model
    reading 30 s around a moment near either end); a span wholly outside it, reversed
    or not finite is left as it is, for the facade to refuse in one line."""
    length = recording.duration
    if not (math.isfinite(start) and math.isfinite(end)) or end <= 0 or start >= end:
        return start, end
    if length is None:
        return max(0.0, start), end
    if start >= length:
        return start, end
    return max(0.0, start), min(end, length)
