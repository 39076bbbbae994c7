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
Everything streams: a unit is yielded as soon as it is complete.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace

from llama_index_video.transcription.base import Segment

_SENTENCE_END = re.compile(r"[.!?…]['\")\]]*$")


@dataclass(frozen=True)
class TranscriptUnit:
    """A retrieval unit: consecutive speech from ``start`` to ``end`` seconds."""

    start: float
    end: float
    text: str
    speaker: str | None = None
    language: str | None = None


SpeakerAt = Callable[[float, float], "str | None"]
"""Who spoke during ``(start, end)`` seconds, or None if unknown."""


@dataclass(frozen=True, kw_only=True)
class UnitOptions:
    """How segments are regrouped.

    Attributes:
        target_chars: A window closes once it reaches this many characters.
        max_chars: A single sentence longer than this is cut at word boundaries.
        overlap_words: Words repeated at the start of the next window when a long
            sentence is cut mid-way (at most a third of the window).
        max_gap: A silence longer than this (seconds) always ends a window, even
            mid-sentence, so a unit never spans minutes of nothing.
    """

    target_chars: int = 160
    max_chars: int = 400
    overlap_words: int = 6
    max_gap: float = 8.0

    def __post_init__(self) -> None:
        if self.target_chars < 20:
            raise ValueError(f"target_chars must be >= 20, got {self.target_chars}")
        if self.max_chars < self.target_chars:
            raise ValueError("max_chars must be >= target_chars")
        if self.overlap_words < 0:
            raise ValueError(f"overlap_words must be >= 0, got {self.overlap_words}")
        if self.max_gap <= 0:
            raise ValueError(f"max_gap must be > 0, got {self.max_gap}")


@dataclass(frozen=True)
class _Token:
    start: float
    end: float
    text: str
    glued: bool = False  # follows the previous token with no space ("20" ",000")
    speaker: str | None = None
    language: str | None = None


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
    fresh = 0  # tokens in the window that are not overlap from the previous one

    def close(*, mid_sentence: bool) -> Iterator[TranscriptUnit]:
        nonlocal window, fresh
        if fresh:
            yield _unit(window)
        keep = min(options.overlap_words, len(window) // 3) if mid_sentence and fresh else 0
        window = window[-keep:] if keep else []
        fresh = 0

    def add_sentence(tokens: list[_Token]) -> Iterator[TranscriptUnit]:
        nonlocal fresh
        pieces = list(_cut_long(tokens, options.max_chars))
        for index, piece in enumerate(pieces):
            if fresh and _length(window) + _length(piece) > options.target_chars:
                yield from close(mid_sentence=index > 0)
            window.extend(piece)
            fresh += len(piece)
            if _length(window) >= options.target_chars:
                yield from close(mid_sentence=index < len(pieces) - 1)

    sentence: list[_Token] = []
    previous: _Token | None = None
    for token in _tokens(segments, speaker_at):
        if previous is not None and (
            token.start - previous.end > options.max_gap
            or token.speaker != previous.speaker
            or token.language != previous.language
        ):
            yield from add_sentence(sentence)
            sentence = []
            yield from close(mid_sentence=False)
        sentence.append(token)
        previous = token
        if _SENTENCE_END.search(token.text):
            yield from add_sentence(sentence)
            sentence = []
    yield from add_sentence(sentence)
    yield from close(mid_sentence=False)


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


def _cut_long(tokens: list[_Token], max_chars: int) -> Iterator[list[_Token]]:
    piece: list[_Token] = []
    for token in tokens:
        if piece and _length([*piece, token]) > max_chars:
            yield piece
            piece = []
        piece.append(token)
    if piece:
        yield piece


def _length(tokens: list[_Token]) -> int:
    return len(_joined(tokens))


def _joined(tokens: list[_Token]) -> str:
    return "".join(
        t.text if index == 0 or t.glued else " " + t.text for index, t in enumerate(tokens)
    )


def _unit(tokens: list[_Token]) -> TranscriptUnit:
    return TranscriptUnit(
        start=round(tokens[0].start, 3),
        end=round(max(t.end for t in tokens), 3),
        text=_joined(tokens),
        speaker=tokens[-1].speaker,
        language=tokens[-1].language,
    )
