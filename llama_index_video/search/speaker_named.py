"""Who a question asks about: "what did the designer say about the shape?" (issue 36).

A question that puts someone in the speaking part (the one who *says*, *thinks*,
*proposes*, ... something, whose *view* or *idea* it is, *according to* whom) asks what
that speaker said. :func:`named_speakers` finds which of the index's speakers (labels
and names as stored: ``SPEAKER_2``, ``Ben Okafor``, a role such as ``Industrial
Designer``) the question names there, by the whole label or by one of its words
("Ben", "designer"); a speaker named by the whole label wins over those sharing a word
of it ("Grad D" over "Grad A"). :class:`SpeakerNamedRetriever` then keeps only their transcript
units, as ``speakers=`` does; a question that names no known speaker is searched as it
is, and so is every question of an index without speaker labels. It is opt-in
(``search(by_named_speaker=True)``, ``search --by-named-speaker``): on QMSum's meetings
keeping the named speaker's turns found the answer stretch first less often than
searching everyone (``python benchmarks/meetings.py``), as the stretch often holds the
others' replies.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from llama_index_video.search.fusion import Retriever, as_query
from llama_index_video.stored import Query

_SAYS = (
    "say|says|said|think|thinks|thought|propose|proposes|proposed|suggest|suggests|"
    "suggested|want|wants|wanted|mention|mentions|mentioned|present|presents|presented|"
    "explain|explains|explained|argue|argues|argued|report|reports|reported|recommend|"
    "recommends|recommended|prefer|prefers|preferred|feel|feels|felt"
)
_VIEWS = "view|views|opinion|idea|ideas|proposal|presentation|point|concern|concerns|position"
ASKS_WHO = re.compile(rf"\b(?:{_SAYS})\b|\w's\s+(?:{_VIEWS})\b|\baccording to\b", re.IGNORECASE)
"""A question that may name a speaker at all (checked before any speaker is looked up)."""
MIN_WORD = 3
"""A label's words shorter than this ("of", a digit) never name its speaker alone."""
_NOT_NAMES = frozenset({"speaker", "the", "and", "mr", "mrs", "ms", "dr"})


def named_speakers(question: str, speakers: Callable[[], Iterable[str]]) -> list[str]:
    """The speakers (``speakers()``, called only when the question may name one) that
    ``question`` names as the one speaking, in their order."""
    if not ASKS_WHO.search(question):
        return []
    text = _plain(question)
    known = list(speakers())
    whole = [who for who in known if _speaks(text, _plain(who))]
    if whole:  # "Grad D" names Grad D, not every "Grad"
        return whole
    return [who for who in known if any(_speaks(text, call) for call in _calls(who))]


def _plain(text: str) -> str:
    """``text`` lower-cased, underscores as spaces (``SPEAKER_2`` is "speaker 2")."""
    return re.sub(r"\s+", " ", text.replace("_", " ").replace("\u2019", "'")).strip().lower()


def _calls(speaker: str) -> list[str]:
    """The words of ``speaker``'s label a question may call it by."""
    return [w for w in _plain(speaker).split() if len(w) >= MIN_WORD and w not in _NOT_NAMES]


def _speaks(text: str, call: str) -> bool:
    if not call:
        return False
    who = re.escape(call)
    return bool(
        re.search(rf"\b{who}\s+(?:\w+\s+){{0,2}}?(?:{_SAYS})\b", text)
        or re.search(rf"\b{who}(?:'s|s')\s+(?:\w+\s+)?(?:{_VIEWS})\b", text)
        or re.search(rf"\baccording to (?:the |our )?{who}\b", text)
    )


class SpeakerNamedRetriever:
    """A retriever that keeps only what the speakers a question names said.

    Args:
        build: Makes the retriever for a speaker filter (None: everyone's moments).
        speakers: The index's speakers, asked only when a question may name one.
        query: Makes of a question (a string) the query the retrievers take.
    """

    def __init__(
        self,
        build: Callable[[Sequence[str] | None], Retriever],
        speakers: Callable[[], Iterable[str]],
        *,
        query: Callable[[str], Any] = Query,
    ) -> None:
        self._build = build
        self._speakers = speakers
        self._query = query
        self._everyone = build(None)

    def __getattr__(self, name: str) -> Any:
        # What the retriever of everyone's moments shows (a FusionRetriever's channels)
        # shows through, so code that inspects as_retriever() reads it unchanged.
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._everyone, name)

    def retrieve(self, query_bundle: Any) -> Sequence[Any]:
        """The moments for a query (a string, or as the retrievers take it), best first."""
        query_bundle = as_query(query_bundle, self._query)
        named = named_speakers(query_bundle.query_str, self._speakers)
        retriever = self._build(named) if named else self._everyone
        return retriever.retrieve(query_bundle)
