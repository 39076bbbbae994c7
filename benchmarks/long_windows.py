"""Where the stored transcript loses to faster-whisper's defaults, 30 s at a time (issue 36).

    python benchmarks/long_windows.py --keep DIR [--real NAME ...] [--hour] [--window 30]
        [--ours LABEL] [--against LABEL]

Reads what :mod:`benchmarks.long_transcripts` kept (its ``--keep DIR``: what each recipe
heard on each **real** recording) and aligns each recipe's words to the reference, both
normalised by Whisper's ``EnglishTextNormalizer`` (a minimal word alignment,
:func:`align`). Each reference word is placed at its clip's time; each error is charged to
the reference word it falls on (a word written where none was said, to the word after
it). Per window of ``--window`` seconds: the errors of ``ours`` and of ``defaults``, and
for each window where ours makes more, why (:func:`causes`):

- ``stretch``: ours left out three or more words in a row that the defaults wrote (speech
  not written: a window dropped as a loop, the VAD, a language probe);
- ``edge``: an error on the first or last word of one of ours' units, or a word left out
  between two units (where ours cut the audio: a clip or window boundary, a pause cut);
- ``recurring``: a word said earlier in the recording and not a stop word, heard right
  by the defaults (whose prompt, the text before, carries it) and misheard by ours;
- ``inside``: anything else inside a unit (a word misheard).

The totals per cause are over every word ours gets wrong and the defaults right, in all
windows.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.long_real_speech import HOUR, RECORDINGS, Turn, joined, load_recording  # noqa: E402
from benchmarks.long_speech import DEFAULT_CACHE  # noqa: E402
from benchmarks.long_transcripts import DEFAULTS, Heard, spoken_words  # noqa: E402

STRETCH_WORDS = 3
"""Words left out in a row that make a stretch of speech not written."""


MATCH, SUBSTITUTED, LEFT_OUT, ADDED = "=", "substituted", "left out", "added"


def align(reference: Sequence[str], hypothesis: Sequence[str]) -> list[tuple[int, int, str]]:
    """A minimal alignment of ``hypothesis`` to ``reference``, in order: ``(i, j, kind)``
    for each reference word ``i`` matched (:data:`MATCH`) or :data:`SUBSTITUTED` with
    hypothesis word ``j``, or :data:`LEFT_OUT` (``j`` the hypothesis words written
    before it), and each hypothesis word ``j`` :data:`ADDED` where nothing was said
    (``i`` the reference word after it, ``len(reference)`` at the end). The pairs that
    are not a match number the edit distance."""
    n, m = len(reference), len(hypothesis)
    vocabulary = {word: k for k, word in enumerate(dict.fromkeys([*reference, *hypothesis]))}
    ref = np.array([vocabulary[w] for w in reference], dtype=np.int64)
    hyp = np.array([vocabulary[w] for w in hypothesis], dtype=np.int64)
    steps = np.zeros((n + 1, m + 1), dtype=np.uint8)  # 0 diagonal, 1 left out, 2 added
    steps[0, 1:] = 2
    steps[1:, 0] = 1
    columns = np.arange(m + 1)
    row = columns.astype(np.int64)
    for i in range(1, n + 1):
        diagonal = row[:-1] + (hyp != ref[i - 1])
        up = row + 1
        new = up.copy()
        new[1:] = np.minimum(up[1:], diagonal)
        added = np.minimum.accumulate(new - columns) + columns  # a run of words written
        steps[i, 1:] = np.where(added[1:] < new[1:], 2, np.where(new[1:] == diagonal, 0, 1))
        row = added
    pairs: list[tuple[int, int, str]] = []
    i, j = n, m
    while i > 0 or j > 0:
        step = steps[i, j]
        if step == 0:
            i, j = i - 1, j - 1
            pairs.append((i, j, MATCH if ref[i] == hyp[j] else SUBSTITUTED))
        elif step == 1:
            i -= 1
            pairs.append((i, j, LEFT_OUT))
        else:
            j -= 1
            pairs.append((i, j, ADDED))
    return pairs[::-1]


@dataclass(frozen=True)
class Words:
    """A recipe's words, each with the unit it was written in."""

    words: list[str]
    unit: list[int]

    @classmethod
    def of(cls, heard: Sequence[Heard]) -> Words:
        words: list[str] = []
        unit: list[int] = []
        for index, item in enumerate(heard):
            said = spoken_words(item.text)
            words += said
            unit += [index] * len(said)
        return cls(words, unit)


def wrong_words(reference: Sequence[str], hypothesis: Words) -> dict[int, list[str]]:
    """For each reference word with an error charged to it, each error's place:
    ``edge`` (on the first or last word of a unit, or left out between two units) or
    ``inside``; a word left out is marked ``left``."""
    units = hypothesis.unit
    last = len(units) - 1
    wrong: dict[int, list[str]] = {}
    for i, j, kind in align(reference, hypothesis.words):
        if kind == MATCH:
            continue
        if kind == LEFT_OUT:  # between hypothesis words j - 1 and j
            edge = j == 0 or j > last or units[j - 1] != units[j]
        else:
            edge = j == 0 or j == last or units[j - 1] != units[j] or units[j + 1] != units[j]
        place = "edge" if edge else "inside"
        wrong.setdefault(min(i, len(reference) - 1), []).append(
            f"left {place}" if kind == LEFT_OUT else place
        )
    return wrong


def causes(
    reference: Sequence[str], ours: Words, defaults: Words
) -> tuple[dict[int, list[str]], dict[int, list[str]], dict[int, str]]:
    """Each recipe's errors by reference word (:func:`wrong_words`), and for each word ours
    gets wrong and the defaults right, its cause: ``stretch``, ``edge``, ``recurring`` or
    ``inside`` (the module's docstring)."""
    from llama_index_video.search.relevance import STOPWORDS

    mine, theirs = wrong_words(reference, ours), wrong_words(reference, defaults)
    lost = sorted(i for i in mine if i not in theirs)
    left = {i for i in lost if any(place.startswith("left") for place in mine[i])}
    stretches = {i for run in _runs(sorted(left)) if len(run) >= STRETCH_WORDS for i in run}
    why: dict[int, str] = {}
    for i in lost:
        if i in stretches:
            why[i] = "stretch"
        elif any(place.endswith("edge") for place in mine[i]):
            why[i] = "edge"
        elif reference[i] not in STOPWORDS and reference[i] in reference[:i]:
            why[i] = "recurring"
        else:
            why[i] = "inside"
    return mine, theirs, why


def _runs(indices: Sequence[int]) -> list[list[int]]:
    """``indices`` (sorted) split into runs of consecutive numbers."""
    runs: list[list[int]] = []
    for index in indices:
        if runs and runs[-1][-1] + 1 == index:
            runs[-1].append(index)
        else:
            runs.append([index])
    return runs


def report(
    name: str,
    turns: Sequence[Turn],
    ours: Sequence[Heard],
    defaults: Sequence[Heard],
    *,
    window: float,
    labels: tuple[str, str] = ("ours", DEFAULTS),
) -> Counter[str]:
    """Print the windows where ``ours`` makes more errors than ``defaults``, and why."""
    reference: list[str] = []
    times: list[float] = []
    for turn in turns:
        said = spoken_words(turn.text)
        reference += said
        times += [turn.start] * len(said)
    mine, theirs, why = causes(reference, Words.of(ours), Words.of(defaults))
    print(f"\n## {name}: {len(reference)} words\n")
    mark, other = labels
    print(f"| window | {mark}: errors | {other}: errors | {mark} wrong, {other} right (cause) |")
    print("|---|---:|---:|---|")
    worse = 0
    for start in np.arange(0.0, times[-1] + window, window):
        inside = [i for i, t in enumerate(times) if start <= t < start + window]
        a = sum(len(mine.get(i, ())) for i in inside)
        b = sum(len(theirs.get(i, ())) for i in inside)
        if a > b:
            worse += 1
            lost = ", ".join(f"{reference[i]} ({why[i]})" for i in inside if i in why)
            print(f"| {int(start // 60):02d}:{int(start % 60):02d} | {a} | {b} | {lost} |")
    total = Counter(why.values())
    errors = (sum(map(len, mine.values())), sum(map(len, theirs.values())))
    print(
        f"\n{worse} windows of {window:g} s where {mark} makes more errors; errors "
        f"{errors[0]} {mark}, {errors[1]} {other}; words {mark} gets wrong and {other} "
        f"right: {sum(total.values())} ({', '.join(f'{k} {v}' for k, v in total.most_common())})"
    )
    return total


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    names = [source.name for source in RECORDINGS]
    parser.add_argument("--keep", type=Path, required=True, help="long_transcripts' --keep")
    parser.add_argument("--real", nargs="*", choices=names, default=names)
    parser.add_argument("--hour", action="store_true")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--window", type=float, default=30.0)
    parser.add_argument("--ours", default="ours", help="the recipe to explain (kept label)")
    parser.add_argument("--against", default=DEFAULTS)
    args = parser.parse_args(argv)
    recordings = [(name, *load_recording(name)) for name in args.real]
    if args.hour:
        recordings.append(("hour", *joined(HOUR, args.cache.parent / "long_real")))
    for name, audio, turns in recordings:
        kept = [args.keep / f"{audio.stem}-{label}.json" for label in (args.ours, args.against)]
        if not all(path.is_file() for path in kept):
            print(f"{name}: nothing kept in {args.keep} for {args.ours} and {args.against}")
            continue
        ours, defaults = (
            [Heard(**h) for h in json.loads(path.read_text())["heard"]] for path in kept
        )
        report(name, turns, ours, defaults, window=args.window, labels=(args.ours, args.against))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
