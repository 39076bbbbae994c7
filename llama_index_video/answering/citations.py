"""Citations as data, and the check that an answer cites only what was retrieved.

The model is shown each retrieved moment under its label (``[talk.mp4 01:34-01:41]``,
``[talk.mp4 01:36]`` for a frame, ``[notes.md]`` for a document) and asked to cite
those labels. :func:`check_citations` finds the labels it wrote and matches each to
a retrieved moment: the same file (by name, or the only file whose moments fit when
the model wrote something vague like ``[VIDEO at 02:14]``) and a time that overlaps
the moment within a tolerance, since labels show whole seconds. A label that matches
nothing retrieved is reported as unverified, and can be stripped or flagged.

Everything here is a pure function of its inputs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import TYPE_CHECKING

from llama_index_video import schema
from llama_index_video._moved import moved
from llama_index_video.schema import parse_timestamp  # its home; still importable from here

if TYPE_CHECKING:
    from llama_index_video.results import Citation

DEFAULT_TOLERANCE_S = 2.0
UNVERIFIED_MARK = " (unverified)"

# A bracket not followed by "(" (that would be a Markdown link), on one line.
_BRACKET = re.compile(r"\[([^\[\]\n]{1,300})\](?!\()")
_FILE_LIKE = re.compile(r"\.(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{1,5}$")  # ".mp4", not ".2"


@dataclass(frozen=True)
class CitedLabel:
    """One label as the model wrote it, and the retrieved moment it matched.

    Attributes:
        text: The label as written, in brackets (one piece of a ``[a; b]`` group).
        span: ``(start, end)`` character offsets of the whole bracket in the answer.
        citation: The matching retrieved moment, or None if the label is unverified.
    """

    text: str
    span: tuple[int, int]
    citation: Citation | None


@dataclass(frozen=True)
class CheckedAnswer:
    """An answer with every label it cites checked against the retrieved moments.

    Attributes:
        text: The answer as the model wrote it.
        labels: Each cited label in order of appearance.
    """

    text: str
    labels: tuple[CitedLabel, ...]

    @property
    def citations(self) -> tuple[Citation, ...]:
        """The verified citations, each once, in order of first mention."""
        found = (label.citation for label in self.labels if label.citation is not None)
        return tuple(dict.fromkeys(found))

    @property
    def unverified(self) -> tuple[str, ...]:
        """Labels that match nothing retrieved, each once, as written."""
        return tuple(dict.fromkeys(lb.text for lb in self.labels if lb.citation is None))

    def strip_unverified(self) -> str:
        """The answer without its unverified labels (and the space before each)."""
        return self._rewrite(lambda label: "")

    def flag_unverified(self, mark: str = UNVERIFIED_MARK) -> str:
        """The answer with ``mark`` written inside each unverified label."""
        return self._rewrite(lambda label: f"{label[1:-1]}{mark}")

    def _rewrite(self, unverified: Callable[[str], str]) -> str:
        groups: dict[tuple[int, int], list[str]] = {}
        for label in self.labels:
            kept = label.text[1:-1] if label.citation is not None else unverified(label.text)
            groups.setdefault(label.span, []).append(kept)
        out: list[str] = []
        position = 0
        for (start, end), pieces in groups.items():
            body = "; ".join(piece for piece in pieces if piece)
            before = self.text[position:start]
            out.append(before + f"[{body}]" if body else before.rstrip(" \t"))
            position = end
        out.append(self.text[position:])
        return "".join(out)


def check_citations(
    answer: str,
    retrieved: Sequence[Citation],
    *,
    tolerance_s: float = DEFAULT_TOLERANCE_S,
) -> CheckedAnswer:
    """Find the labels an answer cites and match each to a retrieved moment.

    Recognised: ``[file 01:34-01:41]``, ``[file 01:34]``, ``[file]``, ``h:mm:ss``
    times, en dashes or "to", ``[file, 01:34]``, ``[file at 01:34]``, several labels
    in one bracket separated by ``;``, and labels without a real file name
    (``[VIDEO at 02:14]``, ``[02:14]``) when the time fits moments of only one file.
    Brackets that are neither timed nor name a file (``[1]``, ``[sic]``) and Markdown
    links are not labels.

    Args:
        answer: The model's answer.
        retrieved: The moments the model was shown, most relevant first.
        tolerance_s: Seconds a cited time may fall outside a moment and still match.

    Returns:
        The answer with each label and its matching moment (or None).

    Raises:
        ValueError: ``tolerance_s`` is negative.
    """
    if tolerance_s < 0:
        raise ValueError(f"tolerance_s must be >= 0, got {tolerance_s}")
    labels: list[CitedLabel] = []
    for bracket in _BRACKET.finditer(answer):
        for piece in bracket.group(1).split(";"):
            parsed = _parse_piece(piece, retrieved)
            if parsed is None:
                continue
            file, start, end = parsed
            citation = _match(file, start, end, retrieved, tolerance_s)
            text = f"[{piece.strip()}]"
            labels.append(CitedLabel(text=text, span=bracket.span(), citation=citation))
    return CheckedAnswer(text=answer, labels=tuple(labels))


def _parse_piece(
    piece: str, retrieved: Sequence[Citation]
) -> tuple[str, float | None, float | None] | None:
    """A label, unless it is an untimed bracket naming no file (``[1]``, ``[sic]``)."""
    parsed = schema.parse_label(piece)
    if parsed is None:
        return None
    file, start, _ = parsed
    if start is None and not (_FILE_LIKE.search(file) or _named(file, retrieved)):
        return None
    return parsed


def _same_file(file: str, moment: Citation) -> bool:
    wanted = file.casefold()
    names = (moment.file_name, PurePath(moment.source).name, PurePath(moment.file_name).stem)
    return any(wanted == name.casefold() for name in names)


def _named(file: str, retrieved: Sequence[Citation]) -> list[Citation]:
    return [moment for moment in retrieved if file and _same_file(file, moment)]


def _match(
    file: str,
    start: float | None,
    end: float | None,
    retrieved: Sequence[Citation],
    tolerance: float,
) -> Citation | None:
    named = _named(file, retrieved)
    if not named and (start is None or _FILE_LIKE.search(file)):
        return None  # names a file that was not retrieved
    if start is None:
        return named[0]  # [file] alone: the most relevant moment of that file
    untimed = [moment for moment in named if moment.start is None]
    if untimed:
        return untimed[0]  # a time on a document: the document still is the source
    cited_end = start if end is None else max(start, end)
    fits = [
        moment
        for moment in (named or retrieved)
        if moment.start is not None
        and start <= (moment.end if moment.end is not None else moment.start) + tolerance
        and cited_end >= moment.start - tolerance
    ]
    if not named and len({moment.source for moment in fits}) > 1:
        return None  # "[VIDEO at 02:14]" fits moments of several files: ambiguous

    def distance(moment: Citation) -> tuple[float, float]:
        # Compared as the labels show them (whole seconds), so a label the model copied
        # matches its own moment, not a longer one that starts a fraction closer.
        shown_end = moment.end if moment.end is not None else moment.start
        return (
            abs(_as_labelled(moment.start or 0.0) - start),
            abs(_as_labelled(shown_end or 0.0) - cited_end),
        )

    return min(fits, key=distance, default=None)


def _as_labelled(seconds: float) -> float:
    return parse_timestamp(schema.format_timestamp(seconds))


__getattr__ = moved(__name__, "llama_index_video.results", "Citation")
