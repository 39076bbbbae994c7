"""What a summary is: an overview, decisions, action items and open questions, each line
cited to the moment it comes from; and the check that a citation holds.

A citation holds when its label names the summarised file and its stretch overlaps a
stored transcript unit of that file (:func:`citation_holds`): a summary never points
at a moment that does not exist.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from llama_index_video import schema
from llama_index_video.store.library import TranscriptLine

SECTIONS = ("overview", "decisions", "action_items", "open_questions")
"""A summary's sections, in the order it shows them."""


@dataclass(frozen=True)
class SummaryLine:
    """One line of a summary and the moment it cites.

    Attributes:
        text: What the line says.
        label: Its citation, ``[file mm:ss-mm:ss]``.
        start: Start of the cited stretch, seconds.
        end: End of the cited stretch, seconds.
        speaker: For an action item, who said it (a speaker label or name), if known.
        by: For an action item, by when, as said (``by Friday``), if said.
    """

    text: str
    label: str
    start: float
    end: float
    speaker: str | None = None
    by: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "label": self.label,
            "start": self.start,
            "end": self.end,
            **({"speaker": self.speaker} if self.speaker else {}),
            **({"by": self.by} if self.by else {}),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SummaryLine:
        """The line :meth:`to_dict` gave."""
        return cls(
            text=data["text"],
            label=data["label"],
            start=float(data["start"]),
            end=float(data["end"]),
            speaker=data.get("speaker"),
            by=data.get("by"),
        )


@dataclass(frozen=True)
class Summary:
    """A recording's summary; ``extractive`` when no language model wrote it, else
    ``model`` names the model and ``dropped_citations`` counts the items it wrote whose
    citation pointed at no stored moment (left out). ``start`` and ``end`` (seconds) are
    the stretch summarised when one was asked for, both None for the whole recording;
    ``end`` alone is None for an open end the index cannot place (a recording whose
    length it never stored, with nothing said after ``start``)."""

    source: str
    extractive: bool
    overview: tuple[SummaryLine, ...]
    decisions: tuple[SummaryLine, ...]
    action_items: tuple[SummaryLine, ...]
    open_questions: tuple[SummaryLine, ...]
    model: str | None = None
    dropped_citations: int = 0
    note: str | None = None
    """Why sections are empty that a reader may expect filled (a recording read as no
    conversation), or None."""
    start: float | None = None
    end: float | None = None

    def sections(self) -> dict[str, tuple[SummaryLine, ...]]:
        return {
            "overview": self.overview,
            "decisions": self.decisions,
            "action_items": self.action_items,
            "open_questions": self.open_questions,
        }

    @property
    def span(self) -> str | None:
        """The stretch summarised as ``mm:ss-mm:ss`` (``mm:ss-end`` for an open end the
        index cannot place), None for the whole recording."""
        if self.start is None:
            return None
        end = "end" if self.end is None else schema.format_timestamp(self.end)
        return f"{schema.format_timestamp(self.start)}-{end}"

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape ``summarize --json`` prints."""
        return {
            "source": self.source,
            **({"start": self.start, "end": self.end} if self.start is not None else {}),
            "extractive": self.extractive,
            **(
                {"model": self.model, "dropped_citations": self.dropped_citations}
                if self.model
                else {}
            ),
            **{name: [line.to_dict() for line in lines] for name, lines in self.sections().items()},
            **({"note": self.note} if self.note else {}),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Summary:
        """The summary :meth:`to_dict` gave (a cached written summary)."""
        lines = {
            name: tuple(SummaryLine.from_dict(line) for line in data.get(name, []))
            for name in SECTIONS
        }
        return cls(
            source=data["source"],
            extractive=bool(data["extractive"]),
            model=data.get("model"),
            dropped_citations=int(data.get("dropped_citations", 0)),
            note=data.get("note"),
            start=data.get("start"),
            end=data.get("end"),
            **lines,
        )

    def to_text(self) -> str:
        """The summary for reading: a heading per section, a line per item with its label."""
        kind = " (extractive: the recording's own sentences)" if self.extractive else ""
        if self.model:
            kind = f" (written by {self.model})"
        span = f" {self.span}" if self.span else ""
        out = [f"Summary of {self.source}{span}{kind}"]
        if self.note:
            out.append(f"({self.note})")
        if self.dropped_citations:
            out.append(
                f"({self.dropped_citations} item(s) the model wrote cited no stored moment "
                "and were left out)"
            )
        for name, lines in self.sections().items():
            out.append(f"\n{name.replace('_', ' ').capitalize()}:")
            if not lines:
                out.append("  (none found)")
            for line in lines:
                who = (
                    f" ({line.speaker}{', ' + line.by if line.by else ''})" if line.speaker else ""
                )
                out.append(f"  - {line.text}{who} {line.label}")
        return "\n".join(out)


def citation_holds(line: SummaryLine, file_name: str, units: Sequence[TranscriptLine]) -> bool:
    """Whether ``line``'s label names ``file_name`` and its stretch overlaps a unit."""
    parsed = schema.parse_label(line.label.strip("[]"))
    if parsed is None or parsed[0] != file_name or parsed[1] is None:
        return False
    start = parsed[1]
    end = parsed[2] if parsed[2] is not None else start
    # Labels show whole seconds: a unit overlaps when it meets the stretch within one.
    return any(u.start < end + 1 and start < u.end + 1 for u in units)
