"""Scoring speaker labels: diarization error rate, speaker count, unit purity, questions.

Pure functions, unit-tested in tests/benchmarks/test_speaker_scoring.py; run by
benchmarks/diarization.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.optimize import linear_sum_assignment

Turn = tuple[float, float, str]  # start, end, speaker
_STEP = 0.01  # seconds per scoring frame


@dataclass(frozen=True)
class DiarizationScore:
    """Seconds of reference speech scored, and the error parts as fractions of them."""

    speech: float
    missed: float
    false_alarm: float
    confusion: float

    @property
    def error_rate(self) -> float:
        return self.missed + self.false_alarm + self.confusion


def diarization_error_rate(
    reference: Sequence[Turn], hypothesis: Sequence[Turn], *, collar: float = 0.25
) -> DiarizationScore:
    """DER on a 10 ms grid, hypothesis speakers mapped one-to-one to maximise agreement.

    ``collar`` seconds either side of every reference boundary are not scored, as in
    the NIST definition; overlapping reference speech is scored by its first speaker.
    """
    ref, hyp, ref_names, hyp_names = _grids(reference, hypothesis)
    scored = np.ones(len(ref), dtype=bool)
    for start, stop, _ in reference:
        for edge in (start, stop):
            scored[max(0, int((edge - collar) / _STEP)) : int((edge + collar) / _STEP) + 1] = False
    ref, hyp = ref[scored], hyp[scored]
    mapping = _best_mapping(ref, hyp, len(ref_names), len(hyp_names))
    mapped = np.array([mapping.get(r, -2) for r in range(len(ref_names))] + [-2])
    speech = float(np.sum(ref >= 0))
    if not speech:
        return DiarizationScore(0.0, 0.0, 0.0, 0.0)
    missed = np.sum((ref >= 0) & (hyp < 0))
    false_alarm = np.sum((ref < 0) & (hyp >= 0))
    confusion = np.sum((ref >= 0) & (hyp >= 0) & (mapped[ref] != hyp))
    return DiarizationScore(
        speech * _STEP, missed / speech, false_alarm / speech, confusion / speech
    )


def speaker_mapping(reference: Sequence[Turn], hypothesis: Sequence[Turn]) -> dict[str, str]:
    """Hypothesis speaker -> reference speaker, one-to-one, maximising the time they agree.

    Hypothesis speakers left over (more of them than reference speakers) are absent.
    """
    ref, hyp, ref_names, hyp_names = _grids(reference, hypothesis)
    mapping = _best_mapping(ref, hyp, len(ref_names), len(hyp_names))
    return {hyp_names[h]: ref_names[r] for r, h in mapping.items()}


def _best_mapping(ref: np.ndarray, hyp: np.ndarray, refs: int, hyps: int) -> dict[int, int]:
    """Reference index -> hypothesis index (Hungarian assignment on agreeing frames)."""
    if not refs or not hyps:
        return {}
    agreement = np.zeros((refs, hyps))
    np.add.at(agreement, (ref[(ref >= 0) & (hyp >= 0)], hyp[(ref >= 0) & (hyp >= 0)]), 1)
    rows, cols = linear_sum_assignment(-agreement)
    return {int(r): int(c) for r, c in zip(rows, cols, strict=True)}


def speaker_count(reference: Sequence[Turn], *, min_seconds: float = 2.0) -> int:
    """Speakers heard for at least ``min_seconds`` in all.

    A voice heard for a second in a meeting excerpt (a "yeah" across the table) cannot
    be told apart by any embedding, so the count a diarizer should find leaves it out.
    """
    seconds: dict[str, float] = {}
    for start, end, name in reference:
        seconds[name] = seconds.get(name, 0.0) + max(0.0, end - start)
    return sum(total >= min_seconds for total in seconds.values())


@dataclass(frozen=True)
class UnitPurity:
    """How well transcript units keep to one voice, judged word by word.

    Each word belongs to the reference speakers talking at its middle (both, in an
    overlap); a unit's main speaker is the one most of its words belong to.
    ``purity``: the share of all units' words that belong to their unit's main speaker.
    ``pure_units``: the share of units whose words are at least 90 % their main
    speaker's. ``labelled_right``: the share of units whose label maps (as in the
    DER) to their main speaker. Words said where the reference has no speech, and units
    with no such words, are not counted.
    """

    units: int
    purity: float
    pure_units: float
    labelled_right: float


def unit_purity(
    reference: Sequence[Turn],
    units: Sequence[tuple[float, float, str | None]],
    words: Sequence[tuple[float, float]],
    mapping: dict[str, str] | None = None,
) -> UnitPurity:
    """Score ``units`` (start, end, label) made of ``words`` (start, end) against the turns.

    A word is in a unit when its middle lies within the unit's span.
    """
    mapping = mapping or {}
    kept = own = pure = right = counted = 0
    for start, end, label in units:
        voices: list[set[str]] = []
        for word_start, word_end in words:
            middle = (word_start + word_end) / 2
            if start <= middle <= end:
                speaking = {name for a, b, name in reference if a <= middle <= b}
                if speaking:
                    voices.append(speaking)
        if not voices:
            continue
        names = {name for speaking in voices for name in speaking}
        main = max(sorted(names), key=lambda name: sum(name in v for v in voices))
        mine = sum(main in speaking for speaking in voices)
        counted += 1
        kept += len(voices)
        own += mine
        pure += mine >= 0.9 * len(voices)
        right += label is not None and mapping.get(label) == main
    if not counted:
        return UnitPurity(0, 0.0, 0.0, 0.0)
    return UnitPurity(counted, own / kept, pure / counted, right / counted)


def read_rttm(path: str | Path) -> list[Turn]:
    """The turns of an RTTM file (``SPEAKER uri channel start duration ... name ...``)."""
    turns = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        fields = line.split()
        if len(fields) >= 8 and fields[0] == "SPEAKER":
            start, duration = float(fields[3]), float(fields[4])
            turns.append((start, start + duration, fields[7]))
    return turns


def _grids(
    reference: Sequence[Turn], hypothesis: Sequence[Turn]
) -> tuple[np.ndarray, np.ndarray, list[str], list[str]]:
    """Both sides on one 10 ms grid, with the speaker names each index stands for."""
    end = max([t[1] for t in [*reference, *hypothesis]], default=0.0)
    size = int(np.ceil(end / _STEP)) + 1
    ref_names = sorted({t[2] for t in reference})
    hyp_names = sorted({t[2] for t in hypothesis})
    ref = _grid(reference, ref_names, size, _STEP)
    hyp = _grid(hypothesis, hyp_names, size, _STEP)
    return ref, hyp, ref_names, hyp_names


def _grid(turns: Sequence[Turn], names: list[str], size: int, step: float) -> np.ndarray:
    """Speaker index per 10 ms frame (-1: silence); earlier turns win overlaps."""
    grid = np.full(size, -1, dtype=int)
    for start, stop, name in reversed(sorted(turns)):
        grid[round(start / step) : round(stop / step)] = names.index(name)
    return grid


@dataclass(frozen=True)
class SpeakerQuestion:
    """'What did speaker N say about <topic>?': answered by the turn starting at ``start``."""

    speaker: int  # 1-based, in order of first appearance
    topic: str
    start: float


def attributed_correctly(question: SpeakerQuestion, hits: Sequence[tuple[float, float]]) -> bool:
    """Whether the best hit (start, end) covers the expected turn's start (±0.5 s)."""
    if not hits:
        return False
    start, end = hits[0]
    return start - 0.5 <= question.start <= end + 0.5


# The speaker-attributed questions over tests/fixtures/speech/dialogue.ogg (one per turn).
DIALOGUE_QUESTIONS: tuple[SpeakerQuestion, ...] = (
    SpeakerQuestion(1, "plans for the community garden", 0.5),
    SpeakerQuestion(2, "the budget for seeds and tools", 5.5),
    SpeakerQuestion(3, "building raised beds", 10.0),
    SpeakerQuestion(1, "what the children will plant", 14.5),
    SpeakerQuestion(2, "the water bill", 19.5),
    SpeakerQuestion(3, "where the compost goes", 24.5),
    SpeakerQuestion(1, "when the next meeting is", 29.0),
    SpeakerQuestion(2, "food for the opening party", 34.0),
    SpeakerQuestion(3, "the gate", 38.5),
)
