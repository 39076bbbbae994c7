"""Speech in blocks, for the language check (:mod:`.language`): which utterances are
heard together, and at which pause a change of language goes.

Silero VAD finds the utterances (speech split at pauses of 300 ms or more,
:data:`~.vad.UTTERANCES`); an utterance longer than :data:`BLOCK_SPEECH_S` is cut into
pieces that long (:func:`split_utterances`), and consecutive utterances make blocks of
about :data:`BLOCK_SPEECH_S` seconds of speech (:func:`blocks_of`): the unit the check
probes and labels. A block is heard in pieces of consecutive utterances
(:func:`groups`, :data:`~.language.SURE_SPEECH_S` of speech each).

Between two neighbouring blocks that disagree, the change is placed at the pause that
puts the most seconds of speech on the side each utterance sounds like
(:func:`change_at`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from llama_index_video.transcription.base import SAMPLE_RATE
from llama_index_video.transcription.vad import Span

BLOCK_SPEECH_S: Final = 6.0
"""Seconds of speech in one block (an utterance longer than this is cut)."""
MIN_BLOCK_SPEECH_S: Final = 3.0
"""A last block with less speech than this joins the block before it."""
MIN_SPEECH_S: Final = 1.0
"""Audio with less speech than this is not probed: there is nothing to identify."""


def split_utterances(utterances: Sequence[Span]) -> list[Span]:
    """The utterances, each longer than :data:`BLOCK_SPEECH_S` cut into pieces that long."""
    size = round(BLOCK_SPEECH_S * SAMPLE_RATE)
    return [
        (offset, min(offset + size, end))
        for start, end in utterances
        for offset in range(start, end, size)
    ]


def blocks_of(spans: Sequence[Span]) -> list[list[int]]:
    """Consecutive utterance indices holding about :data:`BLOCK_SPEECH_S` of speech each."""
    found = groups(range(len(spans)), spans, BLOCK_SPEECH_S)
    if len(found) > 1 and speech(found[-1], spans) < MIN_BLOCK_SPEECH_S * SAMPLE_RATE:
        found[-2].extend(found.pop())
    total = speech(range(len(spans)), spans)
    return found if total >= MIN_SPEECH_S * SAMPLE_RATE else []


def groups(indices: Iterable[int], spans: Sequence[Span], seconds: float) -> list[list[int]]:
    """Consecutive ``indices`` of ``spans``, grouped until each group holds ``seconds`` of
    speech (the last group may hold less): a block's utterances, a probe's pieces."""
    grouped: list[list[int]] = []
    group: list[int] = []
    filled = 0
    for index in indices:
        group.append(index)
        filled += spans[index][1] - spans[index][0]
        if filled >= seconds * SAMPLE_RATE:
            grouped.append(group)
            group, filled = [], 0
    if group:
        grouped.append(group)
    return grouped


def speech(indices: Iterable[int], spans: Sequence[Span]) -> int:
    """Samples of speech in the ``spans`` at ``indices``."""
    return sum(spans[index][1] - spans[index][0] for index in indices)


def change_at(spans: Sequence[Span], around: list[int], later: list[bool]) -> float:
    """Seconds mid-way through the pause, between utterances ``around`` (indices into
    ``spans``), that puts the most speech on its side: ``later[i]`` says utterance
    ``around[i]`` sounds like the language after the change."""

    def agreement(cut: int) -> int:
        return sum(
            spans[i][1] - spans[i][0]
            for position, i in enumerate(around)
            if later[position] == (position >= cut)
        )

    if len(around) < 2:
        return spans[around[-1]][1] / SAMPLE_RATE
    cut = max(range(1, len(around)), key=agreement)
    return (spans[around[cut - 1]][1] + spans[around[cut]][0]) / 2 / SAMPLE_RATE
