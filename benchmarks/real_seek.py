"""Where a hit seeks to on real speech: each sentence of an hour asked as the query.

    python benchmarks/real_seek.py --index DIR [--baseline-ref REF] [--step N]

The hour of real speech (:data:`benchmarks.long_real_speech.HOUR`: LJ Speech and an
amateur reader, 63.9 min; each reference turn is one clip as its reader recorded it, cut
at the reader's pauses: a sentence, or often a clause of one) is ingested once by
today's code into ``--index`` (kept there: about ten minutes on a quiet 2-core machine,
over 20 at load 16-25; delete the folder to ingest again), then every ``step``-th turn's
reference text is searched (top 3) by today's code and, with ``--baseline-ref``, by that
commit's, over the same index folder (a search-side comparison). A turn is found when
one of its top 3 hits overlaps it (within 0.5 s, as ``long_speech.py`` scores a fact);
the seek error is that hit's start minus the turn's start (:func:`score`). Printed per
version: turns found, the error's median and 95th percentile of its absolute value, its
signed median, how many hits start over 2 s late and over 2 s early, and how the signed
errors spread (:data:`SPREAD_S`). Real speech, heard through faster-whisper tiny.en; the
load average is printed with each figure.
"""

from __future__ import annotations

import argparse
import bisect
import json
import statistics
import sys
from collections import Counter
from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.baseline import load_average, measured_in, release, run, today  # noqa: E402
from benchmarks.long_real_speech import HOUR, joined  # noqa: E402
from benchmarks.long_speech import percentile, seek_error  # noqa: E402
from benchmarks.scoring import Question, RankedHit  # noqa: E402

CACHE = Path.home() / ".cache" / "llama-index-video" / "long_real"
LATE_S = 2.0
SPREAD_S = (-5.0, -2.0, -0.5, 0.5, 2.0, 5.0)
"""Bounds of the bins the signed seek errors are counted in (seconds)."""
FILE = "hour"
INGEST_TIMEOUT_S = 4 * 3600.0
"""An hour's ingest on a loaded 2-core machine (600 s, the default, killed it at load 16)."""

SEARCH = """
import json, sys
from pathlib import Path
from benchmarks.long_real_speech import HOUR, joined
from llama_index_video import VideoIndex
_, turns = joined(HOUR, Path({cache!r}))
index = VideoIndex({index!r})
found = []
for turn in turns[::{step}]:
    hits = index.search(turn.text, top_k=3)
    found.append([[h.start, h.end] for h in hits if h.start is not None and h.end is not None])
print(json.dumps(found))
"""


def score(turns: Sequence[tuple[float, float]], hits: Sequence[Sequence[Sequence[float]]]) -> dict:
    """Seek errors (:func:`benchmarks.long_speech.seek_error`: the first of the top 3 hits
    overlapping the turn) of each turn ``(start, end)``, from its hits ``[[start, end],
    ...]`` in rank order: how many were found, the absolute error's median and 95th
    percentile, the signed median, how many start over :data:`LATE_S` late and early, and
    how many signed errors fall in each bin between :data:`SPREAD_S`' bounds (``spread``:
    one more count than bounds, the first below the lowest)."""
    errors = [
        seek_error(
            Question(str(number), "fact", "", file=FILE, start=start, end=end),
            [RankedHit(FILE, hit[0], hit[1], "") for hit in found],
        )
        for number, ((start, end), found) in enumerate(zip(turns, hits, strict=True))
    ]
    seen = [e for e in errors if e is not None]
    absolute = [abs(e) for e in seen]
    binned = Counter(bisect.bisect_left(SPREAD_S, e) for e in seen)
    return {
        "turns": len(turns),
        "found": len(seen),
        "median_s": statistics.median(absolute) if seen else None,
        "p95_s": percentile(absolute, 0.95) if seen else None,
        "signed_median_s": statistics.median(seen) if seen else None,
        "late": sum(e > LATE_S for e in seen),
        "early": sum(e < -LATE_S for e in seen),
        "spread": [binned[b] for b in range(len(SPREAD_S) + 1)],
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--index", type=Path, required=True, help="kept index folder")
    parser.add_argument("--baseline-ref", help="also search as this git ref had it")
    parser.add_argument("--step", type=int, default=1, help="ask every step-th turn")
    args = parser.parse_args(argv)
    audio, turns = joined(HOUR, CACHE)
    if not (args.index / "manifest.sqlite").is_file():
        command = today().cli("ingest", str(audio), "--index", str(args.index))
        ingest = run(command, today().env(), timeout=INGEST_TIMEOUT_S)
        if ingest.returncode != 0:
            raise SystemExit(f"ingest failed (exit {ingest.returncode}):\n{ingest.stderr[-3000:]}")
        took = f"{ingest.wall_s:.0f} s wall, {ingest.cpu_s:.0f} CPU s"
        print(f"ingest: {took}, load {load_average()}")
    asked = [(t.start, t.end) for t in turns[:: args.step]]
    versions = [today()] + ([release(args.baseline_ref)] if args.baseline_ref else [])
    bins = ["below", *(f"{low:+g} to {high:+g}" for low, high in pairwise(SPREAD_S)), "above"]
    print(
        "| version | turns found | seek median / p95 | signed median | over 2 s late | "
        f"over 2 s early | signed errors ({', '.join(bins)} s) | load |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for version in versions:
        code = SEARCH.format(cache=str(CACHE), index=str(args.index.resolve()), step=args.step)
        figures = score(asked, measured_in(version, code, timeout=3600))
        print(
            f"| {version.name} | {figures['found']}/{figures['turns']} | "
            f"{figures['median_s']:.2f} / {figures['p95_s']:.2f} s | "
            f"{figures['signed_median_s']:+.2f} s | {figures['late']} | {figures['early']} | "
            f"{' / '.join(map(str, figures['spread']))} | {load_average()} |"
        )
        print(json.dumps({"version": version.name, **figures}), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
