"""Named voices per unit: does a unit's own voice name it better than its label's?

The voice library names a label (``SPEAKER_2``) when the label's voice (the CAM++
centroid of its units, :func:`~llama_index_video.speakers.voices.voice_centroids`)
matches a named one; then every unit of the label carries the name. Where the diarizer
gave a person's units another voice's label, they get that voice's name or none
(``benchmarks/voice_library.py``: 16 of 30 units named held out). Here each unit of
``min_unit`` seconds or more also gets its **own** voice (the same embedding, of its
speech alone), matched against the library, and the rules combine both:

- ``label``: the label's voice names every unit (the package before);
- ``unit``: a long unit is named by its own voice alone (its best match at or above the
  unit threshold, else unknown); a short one by its label's;
- ``unit, else label``: a long unit whose own voice reaches the unit threshold takes that
  name; every other unit its label's;
- ``vote``: as ``unit, else label``, but a label is named by the name most of its long
  units' own voices give (more than half of them), when they agree, else by its voice.

**Material: real speech only**, the AMI excerpts of tests/fixtures/real_speech/ and
their reference turns (as ``.srt`` cues: units with known times, no speech recognition),
labelled by CAM++ in a real ingest; everything as in ``benchmarks/voice_library.py``
(people named on the label that said most of their units; every ordered pair of the
excerpts of a half; *named correctly*: units of people named in the first that carry
their name; *unknown*: units of the others that carry none).

**Held out.** The rule's settings (label threshold, unit threshold, the shortest unit
heard alone, its window) are chosen on one half of the meetings (``voice_matching.
MEETINGS``, no person in both) and scored on the other, both ways; only those figures
are results.

    python benchmarks/voice_units.py
"""

from __future__ import annotations

import sys
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import permutations, product
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.baseline import load_average  # noqa: E402
from benchmarks.voice_library import (  # noqa: E402
    Unit,
    ingested,
    label_voices,
    namings,
    tally,
)
from benchmarks.voice_matching import MEETINGS, Setting, best_of, shown, total  # noqa: E402
from llama_index_video.speakers.voices import (  # noqa: E402
    VOICE_MIN_UNIT,
    VOICE_THRESHOLD,
    VOICE_WINDOW,
    voice_centroids,
)

RULES = ("label", "unit", "unit, else label", "vote")
THRESHOLDS = tuple(round(float(t), 4) for t in np.arange(0.55, 0.9001, 0.025))
MIN_UNITS = (1.0, 1.5, 2.0, 3.0)
UNIT_WINDOWS = (1.0, 2.0)
Rates = tuple[int, int, int, int]


@dataclass(frozen=True)
class Heard:
    """One excerpt: its units, its labels' voices, and each unit's own voice by window."""

    units: list[Unit]
    labels: dict[str, np.ndarray]
    own: dict[float, dict[int, np.ndarray]]


def unit_voices(audio: Path, units: Sequence[Unit], window: float) -> dict[int, np.ndarray]:
    """Each unit's own voice (its speech alone), by its place in ``units``."""
    spans = {str(i): [(start, end)] for i, (_, _, start, end) in enumerate(units)}
    return {int(i): v for i, v in voice_centroids(audio, spans, window=window, min_unit=0).items()}


def cosines(vector: np.ndarray | None, library: Mapping[str, np.ndarray]) -> tuple[str, float]:
    """The best-matching name of ``library`` and its cosine (``("", -1)`` for none)."""
    if vector is None or not library:
        return "", -1.0
    names = list(library)
    scores = np.stack([library[n] for n in names]) @ vector
    best = int(np.argmax(scores))
    return names[best], float(scores[best])


def unit_names(
    heard: Heard, library: Mapping[str, np.ndarray], setting: Setting
) -> list[str | None]:
    """The name each unit of ``heard`` carries under ``setting`` (rule, window, shortest
    unit heard alone, label threshold, unit threshold); None: unknown."""
    rule, window, min_unit, label_threshold, unit_threshold = setting
    by_label = {label: cosines(v, library) for label, v in heard.labels.items()}
    label_name = {
        label: name if score >= label_threshold else None
        for label, (name, score) in by_label.items()
    }
    own: list[tuple[bool, str | None]] = []  # (long, own name at the unit threshold)
    for i, (_, _, start, end) in enumerate(heard.units):
        long = rule != "label" and end - start >= min_unit and i in heard.own[window]
        name, score = cosines(heard.own[window].get(i), library) if long else ("", -1.0)
        own.append((long, name if score >= unit_threshold else None))
    if rule == "vote":
        for label in label_name:
            votes = [
                n for (long, n), u in zip(own, heard.units, strict=True) if long and u[1] == label
            ]
            top = Counter(votes).most_common(1)
            if top and top[0][0] is not None and top[0][1] > len(votes) / 2:
                label_name[label] = top[0][0]
    names: list[str | None] = []
    for (long, name), (_, label, _, _) in zip(own, heard.units, strict=True):
        given = label_name.get(label) if label else None
        if long and (rule == "unit" or name is not None):
            given = name
        names.append(given)
    return names


def pair_rates(first: Heard, second: Heard, setting: Setting) -> Rates:
    """(named correctly, units of named people, unknown, units of others) of ``second``
    when ``first``'s people are named on their labels."""
    named = namings(first.units)
    library = {
        person: first.labels[label] for label, person in named.items() if label in first.labels
    }
    given = unit_names(second, library, setting)
    return tally([(u[0], n) for u, n in zip(second.units, given, strict=True)], set(library))


def separation(heard: Mapping[str, Heard], half: int) -> str:
    """Whatever the thresholds: over every ordered pair of ``half``, how many units of
    named people have them as the best match of their label's voice and of their own
    (2 s windows), the range of those right matches' cosines, and the best match's
    cosine of units of people nobody named (label's, or own for units of 1 s or more)."""
    right_label = right_own = mine = 0
    cosine: list[float] = []
    others: list[float] = []
    stems = [s for s in heard if MEETINGS[s][1] == half]
    for x, y in permutations(stems, 2):
        named = namings(heard[x].units)
        library = {
            p: heard[x].labels[label] for label, p in named.items() if label in heard[x].labels
        }
        for i, (person, label, start, end) in enumerate(heard[y].units):
            if person is None:
                continue
            by_label = cosines(heard[y].labels.get(label) if label else None, library)
            own = cosines(heard[y].own[2.0].get(i), library)
            if person in library:
                mine += 1
                right_label += by_label[0] == person
                right_own += own[0] == person
                cosine += [by_label[1]] if by_label[0] == person else []
            else:
                others.append(max(by_label[1], own[1] if end - start >= 1.0 else -1.0))
    spread = f"{min(cosine):.2f}-{max(cosine):.2f}" if cosine else "none"
    return (
        f"{mine} units of named people: the best match of their label's voice {right_label}, "
        f"of their own {right_own} (right label matches' cosines {spread}); units of "
        f"others, best match: median {np.median(others):.2f}, 95th percentile "
        f"{np.percentile(others, 95):.2f}, highest {max(others):.2f}"
    )


def settings() -> list[Setting]:
    label_only = [("label", VOICE_WINDOW, 0.0, t, 1.0) for t in THRESHOLDS]
    combined = list(product(RULES[1:], UNIT_WINDOWS, MIN_UNITS, THRESHOLDS, THRESHOLDS))
    return [*label_only, *combined]


def main() -> int:
    print(f"named voices per unit on real speech (AMI), CAM++; load {load_average()}")
    heard: dict[str, Heard] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for folder, units_of in ingested(Path(tmp)):
            for stem, units in units_of.items():
                audio = folder / f"{stem}.flac"
                heard[stem] = Heard(
                    units,
                    label_voices(audio, units, window=VOICE_WINDOW, min_unit=VOICE_MIN_UNIT),
                    {w: unit_voices(audio, units, w) for w in UNIT_WINDOWS},
                )
    print(f"load after the ingests and voices: {load_average()}")

    def rates(half: int, setting: Setting) -> Rates:
        stems = [s for s in heard if MEETINGS[s][1] == half]
        return total(pair_rates(heard[x], heard[y], setting) for x, y in permutations(stems, 2))

    every = settings()
    print("held out (each half scored with the setting chosen on the other):")
    print(
        "  setting: (rule, unit window, shortest unit heard alone, label threshold, unit threshold)"
    )
    for rule in RULES:
        chosen = [s for s in every if s[0] == rule]
        held = []
        for half in (0, 1):
            setting = best_of(chosen, [rates(1 - half, s) for s in chosen])
            held.append(rates(half, setting))
            print(f"  {rule}, half {half}, {setting}: {shown(held[-1])}")
        print(f"  {rule}, both halves: {shown(total(held))}")
    for half in (0, 1):
        print(f"half {half}: {separation(heard, half)}")
    package = ("label", VOICE_WINDOW, 0.0, VOICE_THRESHOLD, 1.0)
    print(f"the package's label rule {package}, half 0: {shown(rates(0, package))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
