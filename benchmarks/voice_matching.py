"""Can a named voice be recognised in another recording? A threshold for CAM++ centroids,
calibrated on real speech (issue 37, named speakers across recordings).

**Material: real speech only.** The AMI meeting excerpts of tests/fixtures/real_speech/
(30 s each, one mixed channel; source and licence in each ``.json``), whose reference
turns (``.rttm``) name AMI's speaker ids. Five pairs of excerpts share speakers:
dev00/dev01, trn00/trn03, trn06/trn09, trn07/trn08, tst00/tst01 (each pair comes from
one meeting session, so the room and microphones are the same: an easier case than two
different meetings).

**Voices.** For each excerpt and reference speaker with at least ``--min-seconds`` of
speech nobody talks over, the CAM++ embeddings of 1 s windows every 0.5 s of that speech
(the default speaker backend's encoder and windows) are averaged into one unit-length
centroid, as a voice library would keep one per named voice. These are reference
turns, not the diarizer's clusters: this measures the voice model, not the clustering.

**Scores**, for each threshold, over every ordered pair of different excerpts (the
voices of the first taken as named, those of the second looked up among them):

- *named correctly*: of the voices present in both, the share whose best match is the
  same person at or above the threshold;
- *unknown*: of the voices absent from the first, the share whose best match is below
  the threshold (a voice never named must stay unknown).

    python benchmarks/voice_matching.py [--min-seconds 2]
"""

from __future__ import annotations

import argparse
import sys
from itertools import permutations
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

REAL = ROOT / "tests" / "fixtures" / "real_speech"
THRESHOLDS = (0.5, 0.55, 0.6, 0.65, 0.7, 0.725, 0.75, 0.775, 0.8, 0.875)
STEP = 0.01


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


def voices(path: Path, min_seconds: float) -> dict[str, np.ndarray]:
    """One unit-length CAM++ centroid per reference speaker with enough solo speech."""
    turns = read_rttm(path.with_suffix(".rttm"))
    samples = decode_audio(path)
    features = filterbank(samples)
    cutter = CampplusDiarizer()
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


def match_rates(
    library: dict[str, dict[str, np.ndarray]], threshold: float
) -> tuple[int, int, int, int]:
    """Over every ordered pair of recordings (the first's voices named, the second's
    looked up among them): (named correctly, voices in both, unknown, voices only in the
    second). Named correctly: the best match is the same person, at or above
    ``threshold``; unknown: the best match is below it."""
    named = right = absent = unknown = 0
    for named_voices, heard in permutations(library.values(), 2):
        if not named_voices:
            continue
        names = sorted(named_voices)
        matrix = np.stack([named_voices[n] for n in names])
        for who, vector in heard.items():
            scores = matrix @ vector
            best = int(np.argmax(scores))
            if who in named_voices:
                named += 1
                right += names[best] == who and scores[best] >= threshold
            else:
                absent += 1
                unknown += scores[best] < threshold
    return right, named, unknown, absent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min-seconds", type=float, default=2.0)
    args = parser.parse_args()
    files = sorted(REAL.glob("ami_*.flac"))
    library = {f.stem: voices(f, args.min_seconds) for f in files}
    print(f"voice matching on real speech (AMI excerpts), CAM++; load {load_average()}")
    same_pairs = []
    for (a, va), (b, vb) in permutations(library.items(), 2):
        for who in sorted(set(va) & set(vb)):
            if a < b:
                same_pairs.append((a, b, who, float(va[who] @ vb[who])))
    print(f"{len(same_pairs)} voices heard in two excerpts (cosine of their centroids):")
    for a, b, who, cosine in same_pairs:
        print(f"  {who:7} {a} / {b}: {cosine:.3f}")
    different = [
        float(va[x] @ vb[y])
        for (a, va), (b, vb) in permutations(library.items(), 2)
        if a < b
        for x in va
        for y in vb
        if x != y
    ]
    print(
        f"{len(different)} pairs of different people: cosine max {max(different):.3f}, "
        f"p99 {np.percentile(different, 99):.3f}, median {np.median(different):.3f}"
    )
    print("threshold  named correctly  unknown (never named)")
    for threshold in THRESHOLDS:
        right, named, unknown, absent = match_rates(library, threshold)
        print(
            f"  {threshold:5.3f}   {right}/{named} = {right / named:.2f}        "
            f"{unknown}/{absent} = {unknown / absent:.3f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
