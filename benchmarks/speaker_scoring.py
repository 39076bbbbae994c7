"""Scoring speaker labels: diarization error rate and speaker-attributed questions.

Pure functions, unit-tested in tests/benchmarks/test_speaker_scoring.py; run by
benchmarks/diarization.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

Turn = tuple[float, float, str]  # start, end, speaker


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
    step = 0.01
    end = max([t[1] for t in [*reference, *hypothesis]], default=0.0)
    size = int(np.ceil(end / step)) + 1
    ref_names = sorted({t[2] for t in reference})
    hyp_names = sorted({t[2] for t in hypothesis})
    ref = _grid(reference, ref_names, size, step)
    hyp = _grid(hypothesis, hyp_names, size, step)
    scored = np.ones(size, dtype=bool)
    for start, stop, _ in reference:
        for edge in (start, stop):
            scored[max(0, int((edge - collar) / step)) : int((edge + collar) / step) + 1] = False
    ref, hyp = ref[scored], hyp[scored]
    agreement = np.zeros((len(ref_names), len(hyp_names)))
    for r in range(len(ref_names)):
        for h in range(len(hyp_names)):
            agreement[r, h] = np.sum((ref == r) & (hyp == h))
    mapping = dict(zip(*linear_sum_assignment(-agreement), strict=True)) if hyp_names else {}
    mapped = np.array([mapping.get(r, -2) for r in range(len(ref_names))] + [-2])
    speech = float(np.sum(ref >= 0))
    if not speech:
        return DiarizationScore(0.0, 0.0, 0.0, 0.0)
    missed = np.sum((ref >= 0) & (hyp < 0))
    false_alarm = np.sum((ref < 0) & (hyp >= 0))
    confusion = np.sum((ref >= 0) & (hyp >= 0) & (mapped[ref] != hyp))
    return DiarizationScore(
        speech * step, missed / speech, false_alarm / speech, confusion / speech
    )


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
