"""Speech in blocks, for the language check (:mod:`.language`): which utterances are
heard together, and at which pause a change of language goes.

Silero VAD finds the utterances (speech split at pauses of 300 ms or more,
:data:`~.vad.UTTERANCES`); an utterance longer than :data:`BLOCK_SPEECH_S` is cut into
pieces that long (:func:`split_utterances`), and consecutive utterances make blocks of
about :data:`BLOCK_SPEECH_S` seconds of speech (:func:`blocks_of`): the unit the check
probes and labels. A block is heard in pieces of consecutive utterances
(:func:`groups`, :data:`~.language.SURE_SPEECH_S` of speech each).

A block never spans a pause of :data:`LONG_PAUSE_S` or more: speech on either side of a
long silence is heard apart. Blocks used to run on across any pause, and on a new user's
11-minute recording of real speech (meetings, then readings in eight other languages,
5 s apart) one block held the end of a Japanese reading and the start of a Portuguese
one, heard Japanese at 0.67 and Portuguese at 0.25, so the Portuguese was transcribed as
Japanese; another held the end of a phone call and an Arabic reading, and the Arabic
went to the English and German stretches round it (``benchmarks/mixed_languages.py``).
Cut at long pauses, every reading there but a 3.6 s French one (Spanish to the head
even alone) gets its own language, with fewer calls to the head (31 -> 23 on that
file's two audio chunks). A pause of 1, 1.5, 2, 3 or 4 s gave the same languages there
(the file heard whole, before the rule for short speech below); 2 s is also where
faster-whisper's VAD ends a stretch of speech (:data:`~.vad.TRANSCRIPTION`).
Meetings pause that long too (6 times in 5 of the 14 real English excerpts of
``tests/fixtures/real_speech``, AMI meetings and a phone call). Speech between two long
pauses that holds less than :data:`MIN_BLOCK_SPEECH_S` is too little to be heard alone,
and joins the block before it (or, at the start, the block after it): heard alone, the
first 2.1 s of ``ami_trn05`` (English, then a 5.9 s pause) were French at 0.20 and
English at 0.10 to the head, and written best in Danish, so they became a Danish stretch.

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
"""A last block with less speech than this joins the block before it, and so does the
speech between two long pauses when it holds less."""
LONG_PAUSE_S: Final = 2.0
"""A pause this long or longer ends a block (see the module docstring)."""
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
    """Consecutive utterance indices holding about :data:`BLOCK_SPEECH_S` of speech each,
    none across a pause of :data:`LONG_PAUSE_S` or more unless the speech beyond it is too
    little to be heard alone; none at all when the audio holds less than
    :data:`MIN_SPEECH_S` of speech."""
    if speech(range(len(spans)), spans) < MIN_SPEECH_S * SAMPLE_RATE:
        return []
    least = MIN_BLOCK_SPEECH_S * SAMPLE_RATE
    found: list[list[int]] = []
    waiting: list[int] = []  # short speech before the first block: it joins that block
    for section in _between_long_pauses(spans):
        if speech(section, spans) < least:  # too little to be heard alone
            (found[-1] if found else waiting).extend(section)
            continue
        here = groups([*waiting, *section], spans, BLOCK_SPEECH_S)
        waiting = []
        if len(here) > 1 and speech(here[-1], spans) < least:
            here[-2].extend(here.pop())
        found.extend(here)
    return found or [waiting]


def _between_long_pauses(spans: Sequence[Span]) -> list[list[int]]:
    """Indices of ``spans``, in runs that no pause of :data:`LONG_PAUSE_S` or more splits."""
    pause = LONG_PAUSE_S * SAMPLE_RATE
    runs: list[list[int]] = []
    for index, (start, _) in enumerate(spans):
        if not runs or start - spans[index - 1][1] >= pause:
            runs.append([])
        runs[-1].append(index)
    return runs


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
