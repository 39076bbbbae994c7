"""Turning ASR segments into retrieval units.

Whisper cuts segments by time, not meaning ("...the temperature is usually between" |
"25 and 30 degrees Celsius"), so segments are raw material: words are regrouped into
sentences (a sentence may span several segments), and sentences are packed into
windows of about ``target_chars``. Windows end at sentence ends; only where a sentence
too long for one window is cut do the last few words repeat in the next window.
Overlapping whole sentences would blur neighbouring facts ("90% of UV-B" creeping
into the "100% of UV-C" unit). Without word timestamps, word times are interpolated
within their segment. Words are joined with the spacing of their segment's text, so
numbers and punctuation Whisper split into several words ("20" + ",000") read as they
were heard. With speaker labels, a change of speaker ends the sentence and the window,
so a unit never holds two voices; likewise a change of language (segments that name the
language they were heard in), so each unit has one language.

Over long stretches speech recognition often writes no sentence end at all (tiny.en
on a 20-minute recording: minutes of words without a full stop). A sentence longer
than ``max_chars`` or ``max_seconds`` is cut where the speaker paused: at the first
pause of at least ``pause`` seconds once a piece holds a quarter window of text, else
at the longest pause within a window (and there the next unit repeats a few words). A
one-sentence fact then sits in a unit of about one window, not in 400 characters of
unrelated speech that dilute its meaning. No unit spans more than ``max_seconds`` or
holds more than ``max_chars`` characters, unless it is one word. Each unit records
where its sentences (or pieces) begin, as character offsets and seconds, so a search
can seek to the sentence that matched rather than to the unit's start. A sentence that
lasts longer than ``clause_seconds`` also records where each of its clauses begins
(after a comma, semicolon, colon or dash): speech recognition runs sentences together
with a comma ("...for presentation types, G4G, the orchestra's principal violinist,
Henry Klassen, has played with them for 30 years.": 11 s, the fact said in its last
6), and the pause before the fact is then hidden in the previous word's time, so
neither a full stop nor a pause marks where the fact begins. Clause starts are places
to seek to, not cuts: the unit is built as before.

A pause never ends a sentence on a word no clause ends on (an article, a conjunction
such as "because", most prepositions: :data:`_UNFINISHED`): speech recognition writes a
full stop wherever the speaker paused ("And the reason the stratosphere begins to warm
up is because." | "Ultraviolet radiation ..."), and the question then finds the half
without the answer. Such a full stop does not end the sentence, and a cut at pauses
prefers any other pause; a question or exclamation mark still ends it ("What is it for?"),
and so does a preposition a clause strands ("let me explain where it comes from.").
Everything streams: a unit is yielded as soon as it is complete.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Final

from llama_index_video.transcription.base import Segment

SENTENCE_END: Final = re.compile(r"[.!?…]['\")\]]*$")
"""A word that ends a sentence (unless it is one no clause ends on)."""
CLAUSE_END: Final = re.compile(r"[,;:\u2013\u2014]['\")\]]*$")
"""A word that ends a clause: a comma, semicolon, colon or dash after it."""
_TRAILING = re.compile(r"[.…,;:\u2013\u2014'\")\]]+$")
_STRANDED = ("of", "to", "for", "at", "from", "with")
"""Prepositions a clause ends on only after a word of :data:`_EMBEDDED`."""
_UNFINISHED = frozenset(
    (
        *("a", "an", "the", "my", "your", "our", "their", "its"),  # articles, possessives
        *("and", "but", "or", "nor", "because", "although", "though", "whereas", "unless"),
        *("whether", "than"),  # conjunctions
        *("into", "onto", "between", "during", "among", "toward", "towards", "via", "per"),
        *_STRANDED,
    )
)
"""Words a clause cannot end on: a pause after one is the speaker thinking, not a
sentence end, whatever full stop speech recognition wrote there ("... is because." |
"ultraviolet radiation ...")."""
_EMBEDDED = frozenset(("where", "what", "which", "who", "whom", "whose", "that"))
"""Words that open a clause whose preposition may end the sentence: "let me explain
where the stratosphere comes from." is finished (a :data:`_STRANDED` preposition
after one of these, not as the sentence's first word)."""
_OPENERS = frozenset(("so", "and", "but", "well", "now", "okay", "ok"))
"""Words before a sentence's first real word, passed over to find it."""


@dataclass(frozen=True)
class TranscriptUnit:
    """A retrieval unit: consecutive speech from ``start`` to ``end`` seconds.

    ``sentences`` holds ``(character offset in text, start in seconds)`` of each
    sentence or run-on piece the unit holds, the first at offset 0.
    """

    start: float
    end: float
    text: str
    speaker: str | None = None
    language: str | None = None
    sentences: tuple[tuple[int, float], ...] = ()


SpeakerAt = Callable[[float, float], "str | None"]
"""Who spoke during ``(start, end)`` seconds, or None if unknown."""


@dataclass(frozen=True, kw_only=True)
class UnitOptions:
    """How segments are regrouped.

    Attributes:
        target_chars: A window closes once it reaches this many characters.
        max_chars: No sentence piece, and no unit, is longer than this (a sentence
            longer is cut at its pauses).
        overlap_words: Words repeated at the start of the next window when a long
            sentence is cut mid-way, not at a pause (at most a third of the window).
        max_gap: A silence longer than this (seconds) always ends a window, even
            mid-sentence, so a unit never spans minutes of nothing.
        max_seconds: No unit spans longer than this (seconds).
        pause: A silence between words at least this long (seconds) ends a piece of a
            sentence too long for one window, as a full stop would.
        clause_seconds: A sentence (or piece) lasting longer than this (seconds) also
            records where its clauses begin, for a search to seek to.
    """

    target_chars: int = 160
    max_chars: int = 240
    overlap_words: int = 6
    max_gap: float = 8.0
    max_seconds: float = 15.0
    pause: float = 0.4
    clause_seconds: float = 6.0

    def __post_init__(self) -> None:
        if self.target_chars < 20:
            raise ValueError(f"target_chars must be >= 20, got {self.target_chars}")
        if self.max_chars < self.target_chars:
            raise ValueError("max_chars must be >= target_chars")
        if self.overlap_words < 0:
            raise ValueError(f"overlap_words must be >= 0, got {self.overlap_words}")
        if self.max_gap <= 0:
            raise ValueError(f"max_gap must be > 0, got {self.max_gap}")
        if self.max_seconds <= 0:
            raise ValueError(f"max_seconds must be > 0, got {self.max_seconds}")
        if self.pause <= 0:
            raise ValueError(f"pause must be > 0, got {self.pause}")
        if self.clause_seconds <= 0:
            raise ValueError(f"clause_seconds must be > 0, got {self.clause_seconds}")


@dataclass(frozen=True)
class _Token:
    start: float
    end: float
    text: str
    glued: bool = False  # follows the previous token with no space ("20" ",000")
    speaker: str | None = None
    language: str | None = None


@dataclass(frozen=True)
class _Piece:
    """A sentence, or a piece of one; ``cut`` if it was cut mid-way with no pause."""

    tokens: list[_Token]
    cut: bool = False


def build_units(
    segments: Iterable[Segment],
    options: UnitOptions | None = None,
    *,
    speaker_at: SpeakerAt | None = None,
) -> Iterator[TranscriptUnit]:
    """Regroup ``segments`` into sentence-aware windows, overlapping where cut mid-sentence.

    ``speaker_at`` labels each word; a new speaker always starts a new unit.
    """
    options = options or UnitOptions()
    window: list[_Token] = []
    starts: list[int] = []  # indices in the window where a sentence or piece begins
    fresh = 0  # tokens in the window that are not overlap from the previous one
    last_cut = False  # the window ends mid-sentence, where no pause was

    def close(*, carry: bool) -> Iterator[TranscriptUnit]:
        nonlocal window, starts, fresh
        if fresh:
            yield _unit(window, starts)
        keep = min(options.overlap_words, len(window) // 3) if carry and fresh else 0
        window = window[-keep:] if keep else []
        starts = [0] if keep else []
        fresh = 0

    def add(piece: _Piece) -> Iterator[TranscriptUnit]:
        nonlocal window, starts, fresh, last_cut
        tokens = piece.tokens
        if fresh and not _fits(window + tokens, options.target_chars, options.max_seconds):
            yield from close(carry=last_cut)
        if not fresh:  # carried overlap goes first where it does not break the caps
            while window and not _fits(window + tokens, options.max_chars, options.max_seconds):
                window = window[1:]
            starts = [0] if window else []
        starts.append(len(window))
        starts.extend(len(window) + at for at in _clause_starts(tokens, options.clause_seconds))
        window.extend(tokens)
        fresh += len(tokens)
        last_cut = piece.cut
        if _length(window) >= options.target_chars:
            yield from close(carry=piece.cut)

    for piece in _pieces(_tokens(segments, speaker_at), options):
        if piece is _BREAK:
            yield from close(carry=False)
        else:
            yield from add(piece)
    yield from close(carry=False)


_BREAK = _Piece([])
"""A silence longer than ``max_gap`` or a new speaker: the window ends."""


def _pieces(tokens: Iterable[_Token], options: UnitOptions) -> Iterator[_Piece]:
    """Sentences, with those too long for a window cut at pauses, and breaks between."""
    sentence: list[_Token] = []
    chars = 0  # _length(sentence), kept as it grows
    previous: _Token | None = None
    for token in tokens:
        if previous is not None and (
            token.start - previous.end > options.max_gap
            or token.speaker != previous.speaker
            or token.language != previous.language
        ):
            yield from _cut(sentence, options)
            sentence, chars = [], 0
            yield _BREAK
        chars += len(token.text) + (1 if sentence and not token.glued else 0)
        sentence.append(token)
        previous = token
        if SENTENCE_END.search(token.text) and not _unfinished(token, sentence):
            yield from _cut(sentence, options)
            sentence, chars = [], 0
        elif len(sentence) > 1 and (
            chars > options.max_chars or token.end - sentence[0].start > options.max_seconds
        ):
            pieces = list(_cut(sentence, options))
            yield from pieces[:-1]
            sentence = pieces[-1].tokens
            chars = _length(sentence)
    yield from _cut(sentence, options)


def _cut(sentence: list[_Token], options: UnitOptions) -> Iterator[_Piece]:
    """``sentence`` in pieces within the caps, the last piece uncut.

    A sentence within ``max_chars`` and ``max_seconds`` stays whole. Each cut goes at
    the first pause of at least ``pause`` seconds after a quarter window of text, else
    at the longest pause within a window (a ``cut`` piece: the next window repeats its
    last words). Every cut leaves a non-empty head and tail, so this ends.
    """
    rest = sentence
    while not _fits(rest, options.max_chars, options.max_seconds):
        at, paused = _cut_point(rest, options)
        yield _Piece(rest[:at], cut=not paused)
        rest = rest[at:]
    if rest:
        yield _Piece(rest)


def _cut_point(tokens: list[_Token], options: UnitOptions) -> tuple[int, bool]:
    """Where to cut ``tokens`` (1..len-1) and whether the speaker paused there.

    The head is kept within a window and two thirds of ``max_seconds``, so the words
    the next unit repeats still fit its caps.
    """
    shortest = options.target_chars // 4
    longest = options.max_seconds * 2 / 3
    # (long enough, ends a clause, gap, position)
    best: tuple[bool, bool, float, int] = (False, False, -1.0, 1)
    length = len(tokens[0].text)  # of the head, tokens[:at]
    for at in range(1, len(tokens)):
        too_long = length > options.target_chars
        if at > 1 and (too_long or tokens[at - 1].end - tokens[0].start > longest):
            break
        gap = tokens[at].start - tokens[at - 1].end
        finished = not _unfinished(tokens[at - 1], tokens[:at])
        if length >= shortest and finished and gap >= options.pause:
            return at, True
        best = max(best, (length >= shortest, finished, gap, at))
        length += len(tokens[at].text) + (0 if tokens[at].glued else 1)
    return best[3], best[2] >= options.pause


def _unfinished(token: _Token, sentence: Sequence[_Token]) -> bool:
    """Whether ``token``, the last of ``sentence`` so far, is a word no clause ends on
    (:data:`_UNFINISHED`), so speech after it completes it; a question or exclamation
    mark says otherwise, and so does a clause that strands its preposition ("... where
    it comes from.", :data:`_EMBEDDED`)."""
    if token.text.endswith(("?", "!")):
        return False
    word = _bare(token)
    if word not in _UNFINISHED:
        return False
    if word not in _STRANDED:
        return True
    words = [_bare(t) for t in sentence[:-1]]
    first = next((i for i, w in enumerate(words) if w not in _OPENERS), len(words))
    return not any(w in _EMBEDDED for w in words[first + 1 :])


def _bare(token: _Token) -> str:
    return _TRAILING.sub("", token.text).casefold()


def _clause_starts(tokens: list[_Token], longer_than: float) -> Iterator[int]:
    """Where the clauses of a sentence lasting longer than ``longer_than`` seconds begin
    (indices of words after a comma, semicolon, colon or dash; none for a shorter one)."""
    if len(tokens) < 2 or tokens[-1].end - tokens[0].start <= longer_than:
        return
    for at in range(1, len(tokens)):
        if not tokens[at].glued and CLAUSE_END.search(tokens[at - 1].text):
            yield at


def _fits(tokens: list[_Token], max_chars: int, max_seconds: float) -> bool:
    return len(tokens) <= 1 or (
        _length(tokens) <= max_chars and tokens[-1].end - tokens[0].start <= max_seconds
    )


def _tokens(segments: Iterable[Segment], speaker_at: SpeakerAt | None) -> Iterator[_Token]:
    for token in _timed_words(segments):
        if speaker_at is not None:
            yield replace(token, speaker=speaker_at(token.start, token.end))
        else:
            yield token


def _timed_words(segments: Iterable[Segment]) -> Iterator[_Token]:
    for segment in segments:
        if segment.words:
            yield from _word_tokens(segment)
            continue
        pieces = segment.text.split()
        total = sum(len(p) + 1 for p in pieces)
        span = max(0.0, segment.end - segment.start)
        offset = 0
        for piece in pieces:
            start = segment.start + span * offset / total
            offset += len(piece) + 1
            yield _Token(
                start, segment.start + span * offset / total, piece, language=segment.language
            )


def _word_tokens(segment: Segment) -> Iterator[_Token]:
    """The segment's words, each glued to the previous one where the segment's text has no space.

    Backends strip the leading space Whisper puts on each word token, so the segment's
    text is what still says whether ",000" continues "20"; a word not found there (a
    backend whose words differ from its text) is spaced.
    """
    cursor = 0
    first = True
    for word in segment.words:
        text = word.text.strip()
        if not text:
            continue
        found = segment.text.find(text, cursor)
        glued = not first and found > 0 and found == cursor and not word.text[:1].isspace()
        if found >= 0:
            cursor = found + len(text)
        first = False
        yield _Token(word.start, word.end, text, glued=glued, language=segment.language)


def _length(tokens: list[_Token]) -> int:
    return len(_joined(tokens))


def _joined(tokens: list[_Token]) -> str:
    return "".join(
        t.text if index == 0 or t.glued else " " + t.text for index, t in enumerate(tokens)
    )


def _unit(tokens: list[_Token], starts: list[int]) -> TranscriptUnit:
    sentences = []
    for index in sorted(set(starts)):
        if index < len(tokens):
            offset = (
                0 if index == 0 else _length(tokens[:index]) + (0 if tokens[index].glued else 1)
            )
            sentences.append((offset, round(tokens[index].start, 3)))
    return TranscriptUnit(
        start=round(tokens[0].start, 3),
        end=round(max(t.end for t in tokens), 3),
        text=_joined(tokens),
        speaker=tokens[-1].speaker,
        language=tokens[-1].language,
        sentences=tuple(sentences),
    )
