"""Can a named voice be recognised in another recording? The voice library's decision
rule (issue 37, named speakers across recordings), fitted on one half of the real
meetings and reported on the other.

**Material: real speech only.** The AMI meeting excerpts of tests/fixtures/real_speech/
(30 s each, one mixed channel; source and licence in each ``.json``), whose reference
turns (``.rttm``) name AMI's participant ids. Each excerpt is the first 30 s of one AMI
meeting (matched turn by turn against github.com/BUTSpeechFIT/AMI-diarization-setup's
``only_words`` RTTMs, Apache-2.0: 0.86-1.00 of 0.1 s frames agree at offset 0; see
``ami_meeting`` in each ``.json``; the ES2004a excerpt is 750-810 s). So the excerpts
that share people come from **different meetings** (sessions), all recorded at one
site (Edinburgh): ES2003a/ES2003b (MEE009, MEE012), EN2001a/EN2001e (MÉO069),
EN2006a/EN2006b (FEE087), EN2002a/EN2002b (FEO070), and EN2005a/EN2009b (FEE083, two
different series).

**Held out.** The meetings are split in two halves by series (a person is never in
both): every parameter (window, threshold, margin) is chosen on one half's trials and
scored on the other's, both ways; only held-out figures are results.

**Voices.** For each excerpt and reference speaker with at least ``--min-seconds`` of
speech nobody talks over, the CAM++ embeddings of windows of that speech (``window``
seconds every half window; the diarizer's are 1 s) are averaged into one unit-length
centroid, as the voice library keeps one per named voice. Reference turns, not the
diarizer's clusters: this measures the voice model and the rule, not the clustering
(``benchmarks/voice_library.py`` measures both end to end).

**Trials**, over every ordered pair of different excerpts of one half (the voices of
the first named, those of the second looked up among them):

- *named correctly*: of the voices present in both, the share given the right name;
- *unknown*: of the voices absent from the first, the share given no name.

**Rules**: the best-matching voice's cosine reaches ``threshold`` (the rule before), and
also (``margin``) exceeds the second-best named voice's by at least ``margin``.

    python benchmarks/voice_matching.py [--min-seconds 2]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Mapping, Sequence
from itertools import permutations, product
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.baseline import load_average  # noqa: E402
from benchmarks.speaker_scoring import Turn, read_rttm  # noqa: E402
from llama_index_video.media.audio import SAMPLE_RATE, decode_audio  # noqa: E402
from llama_index_video.speakers.campplus import (  # noqa: E402
    FRAMES_PER_SECOND,
    filterbank,
    load_encoder,
    torch_threads,
)
from llama_index_video.speakers.campplus_diarizer import CampplusDiarizer  # noqa: E402
from llama_index_video.speakers.voices import (  # noqa: E402
    VOICE_MARGIN,
    VOICE_THRESHOLD,
    VOICE_WINDOW,
    best_voice,
)

REAL = ROOT / "tests" / "fixtures" / "real_speech"
STEP = 0.01
# excerpt -> (AMI meeting, half); the halves split the series that share people.
MEETINGS = {
    "ami_dev00": ("ES2003a", 0),
    "ami_dev01": ("ES2003b", 0),
    "ami_trn06": ("EN2005a", 0),
    "ami_trn09": ("EN2009b", 0),
    "ami_tst00": ("EN2002a", 0),
    "ami_tst01": ("EN2002b", 0),
    "ami_es2004a": ("ES2004a", 0),
    "ami_trn00": ("EN2001a", 1),
    "ami_trn03": ("EN2001e", 1),
    "ami_trn07": ("EN2006a", 1),
    "ami_trn08": ("EN2006b", 1),
    "ami_trn04": ("EN2003a", 1),
    "ami_trn05": ("EN2004a", 1),
}
THRESHOLDS = tuple(round(float(t), 4) for t in np.arange(0.6, 0.9001, 0.0125))
MARGINS = (0.0, 0.02, 0.04, 0.06, 0.08, 0.1)
WINDOWS = (1.0, 2.0, 3.0)
TARGETS = (0.9, 0.95)  # issue 37: named correctly, never-named unknown

Voices = dict[str, np.ndarray]
Rates = tuple[int, int, int, int]
Setting = tuple[float, ...]


def solo_stretches(turns: list[Turn], speaker: str) -> list[tuple[float, float]]:
    """Where ``speaker`` talks and nobody else does, as (start, end) stretches."""
    end = max(t[1] for t in turns)
    grid = np.arange(0.0, end, STEP)
    mine = np.zeros(len(grid), dtype=bool)
    others = np.zeros(len(grid), dtype=bool)
    for start, stop, who in turns:
        inside = (grid >= start) & (grid < stop)
        if who == speaker:
            mine |= inside
        else:
            others |= inside
    alone = np.concatenate([[False], mine & ~others, [False]])
    edges = np.flatnonzero(np.diff(alone.astype(int)))
    return [(grid[a], grid[b - 1] + STEP) for a, b in zip(edges[::2], edges[1::2], strict=True)]


def voices(path: Path, min_seconds: float, window: float) -> Voices:
    """One unit-length CAM++ centroid per reference speaker with enough solo speech, from
    embeddings of ``window`` seconds every half window."""
    turns = read_rttm(path.with_suffix(".rttm"))
    samples = decode_audio(path)
    features = filterbank(samples)
    cutter = CampplusDiarizer(window=window, hop=window / 2)
    encoder = load_encoder()
    found = {}
    for speaker in sorted({t[2] for t in turns}):
        stretches = solo_stretches(turns, speaker)
        if sum(b - a for a, b in stretches) < min_seconds:
            continue
        spans = []
        for start, end in stretches:
            for window in cutter.windows(start, min(end, len(samples) / SAMPLE_RATE)):
                a = round(window.start * FRAMES_PER_SECOND)
                b = min(round(window.end * FRAMES_PER_SECOND), len(features))
                if b - a >= 10:
                    spans.append((a, b))
        with torch_threads(1):
            vectors = encoder.embed(features, spans)
        centre = vectors.mean(axis=0)
        found[speaker] = centre / np.linalg.norm(centre)
    return found


def match_rates(library: Mapping[str, Voices], *, threshold: float, margin: float = 0.0) -> Rates:
    """Over every ordered pair of recordings of ``library`` (the first's voices named,
    the second's looked up among them by :func:`best_voice`): (named correctly, voices
    in both, unknown, voices only in the second)."""
    named = right = absent = unknown = 0
    for named_voices, heard in permutations(library.values(), 2):
        if not named_voices:
            continue
        for who, vector in heard.items():
            found = best_voice(vector, named_voices, threshold=threshold, margin=margin)
            if who in named_voices:
                named += 1
                right += found == who
            else:
                absent += 1
                unknown += found is None
    return right, named, unknown, absent


def best_of(settings: Sequence[Setting], rates: Sequence[Rates]) -> Setting:
    """The setting whose rates name the most voices (or units) correctly while keeping at
    least the target share of never-named ones unknown (or, if none does, with the best
    sum of both shares); ties go to the middle of the tied settings, in order."""

    def key(found: Rates) -> tuple[bool, float, float]:
        right, named, unknown, absent = found
        named_share, unknown_share = right / max(named, 1), unknown / max(absent, 1)
        if unknown_share >= TARGETS[1]:
            return True, named_share, unknown_share
        return False, named_share + unknown_share, unknown_share

    keys = [key(found) for found in rates]
    best = max(keys)
    tied = [s for s, k in zip(settings, keys, strict=True) if k == best]
    return tied[len(tied) // 2]


def halves(library: Mapping[str, Voices]) -> list[dict[str, Voices]]:
    """``library`` split into the two halves of :data:`MEETINGS`."""
    return [
        {stem: found for stem, found in library.items() if MEETINGS[stem][1] == half}
        for half in (0, 1)
    ]


def held_out(
    libraries: Mapping[float, Mapping[str, Voices]], settings: Sequence[Setting]
) -> list[tuple[Setting, Rates]]:
    """For each half: the (window, threshold, margin) of ``settings`` that :func:`best_of`
    picks on the other half, and its rates on this one (``libraries``: by window)."""

    def rates(half: int, setting: Setting) -> Rates:
        window, threshold, margin = setting
        return match_rates(halves(libraries[window])[half], threshold=threshold, margin=margin)

    return [
        (setting, rates(half, setting))
        for half in (0, 1)
        for setting in [best_of(settings, [rates(1 - half, s) for s in settings])]
    ]


def total(rates: Iterable[Rates]) -> Rates:
    right, named, unknown, absent = (sum(column) for column in zip(*rates, strict=True))
    return right, named, unknown, absent


def shown(rates: Rates) -> str:
    right, named, unknown, absent = rates
    return (
        f"named correctly {right}/{named} = {right / max(named, 1):.2f}, "
        f"unknown {unknown}/{absent} = {unknown / max(absent, 1):.3f}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min-seconds", type=float, default=2.0)
    args = parser.parse_args()
    libraries = {
        window: {stem: voices(REAL / f"{stem}.flac", args.min_seconds, window) for stem in MEETINGS}
        for window in WINDOWS
    }
    print(f"voice matching on real speech (AMI meetings), CAM++; load {load_average()}")
    for window, library in libraries.items():
        print(f"{window} s windows: the same person in two meetings (cosine of their centroids)")
        for (a, va), (b, vb) in permutations(library.items(), 2):
            for who in sorted(set(va) & set(vb)):
                if a < b:
                    meetings = f"{MEETINGS[a][0]} / {MEETINGS[b][0]}"
                    print(f"  {who:7} {meetings} ({a} / {b}): {float(va[who] @ vb[who]):.3f}")
        different = [
            float(va[x] @ vb[y])
            for (a, va), (b, vb) in permutations(library.items(), 2)
            if a < b
            for x, y in product(va, vb)
            if x != y
        ]
        print(
            f"  {len(different)} pairs of different people: median {np.median(different):.3f}, "
            f"99th percentile {np.percentile(different, 99):.3f}, highest {max(different):.3f}"
        )
    print("held out (each half scored with the threshold and margin fitted on the other):")
    for window, (rule, margins) in product(
        WINDOWS, (("threshold", (0.0,)), ("threshold and margin", MARGINS))
    ):
        found = held_out(libraries, list(product((window,), THRESHOLDS, margins)))
        for half, (setting, rates) in enumerate(found):
            print(f"  {window} s windows, {rule}, half {half} {setting}: {shown(rates)}")
        print(f"  {window} s windows, {rule}, both halves: {shown(total(r for _, r in found))}")
    package = match_rates(
        halves(libraries[VOICE_WINDOW])[0], threshold=VOICE_THRESHOLD, margin=VOICE_MARGIN
    )
    setting = (VOICE_WINDOW, VOICE_THRESHOLD, VOICE_MARGIN)
    print(f"the package's setting {setting} on half 0: {shown(package)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
