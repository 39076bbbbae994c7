"""Decisions and action items of the extractive summary against annotators' (issue 36).

    python benchmarks/decisions.py [--set tuning|held-out|all] [--show]

The meetings are 32 real AMI product-design meetings (eight teams' series of four,
``benchmarks/meetings/decisions/``, see its ``SOURCE.json``): QMSum's transcripts, with
the decisions and action items its annotators wrote in their answers, each linked to the
turns it comes from (:mod:`benchmarks.decision_annotations` says which sentences count).
No audio: each turn is timed as read at 2.6 words a second (**synthetic timing**) and
the turns become transcript units as ingest makes them from subtitles
(:func:`benchmarks.decision_scoring.units_of`); the summary is
:func:`llama_index_video.summaries.extractive.extractive_summary` of those units, as
``summarize`` makes it (no chapters: they only shape the overview).

Per set it prints, for decisions and for action items: how many annotated ones a line of
that section finds (its cited stretch overlaps a turn the annotation links to), how many
lines were listed and how many of those overlap some annotation of that kind (a line
can be right where the annotators wrote nothing: they answered questions, they did not
list every decision); how many citations hold (point at a unit that exists and overlaps
the cited stretch) over every section; and the seconds a summary takes. The cue
phrases were chosen on the tuning teams only; the held-out teams are reported apart.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.baseline import load_average  # noqa: E402
from benchmarks.decision_annotations import FOLDER, SERIES  # noqa: E402
from benchmarks.decision_scoring import precision, recall, units_of  # noqa: E402
from benchmarks.meeting_scoring import Turn, clean, turn_times  # noqa: E402

KINDS = ("decisions", "action_items")


@dataclass(frozen=True)
class Annotated:
    name: str
    turns: list[Turn]
    items: dict[str, list[list[int]]]  # kind -> each annotation's linked turns
    texts: dict[str, list[str]]


def load(name: str) -> Annotated:
    with gzip.open(FOLDER / f"{name}.json.gz", "rt", encoding="utf-8") as handle:
        data = json.load(handle)
    turns = turn_times([(speaker, clean(text)) for speaker, text in data["turns"]])
    return Annotated(
        name,
        turns,
        {k: [item["turns"] for item in data[k]] for k in KINDS},
        {k: [item["text"] for item in data[k]] for k in KINDS},
    )


def score(meeting: Annotated, *, show: bool = False) -> dict:
    from llama_index_video.store.library import TranscriptLine
    from llama_index_video.summaries.extractive import extractive_summary
    from llama_index_video.summaries.summary import citation_holds

    units = [TranscriptLine(s, e, text, who) for s, e, text, who in units_of(meeting.turns)]
    began = time.perf_counter()
    summary = extractive_summary(f"{meeting.name}.wav", units, [])
    seconds = time.perf_counter() - began
    row: dict = {"meeting": meeting.name, "seconds": seconds, "minutes": units[-1].end / 60}
    for kind in KINDS:
        cited = [(line.start, line.end) for line in getattr(summary, kind)]
        row[kind] = (
            *recall(cited, meeting.items[kind], meeting.turns),
            *precision(cited, meeting.items[kind], meeting.turns),
        )
        if show:
            for text, linked in zip(meeting.texts[kind], meeting.items[kind], strict=True):
                hit = recall(cited, [linked], meeting.turns)[0]
                print(f"  {meeting.name} {kind[:8]} {'FOUND' if hit else 'missed'}: {text}")
            for line in getattr(summary, kind):
                print(f"  {meeting.name} {kind[:8]} listed {line.label}: {line.text[:110]}")
    lines = [line for section in summary.sections().values() for line in section]
    row["citations"] = (
        sum(citation_holds(line, f"{meeting.name}.wav", units) for line in lines),
        len(lines),
    )
    return row


def report(rows: list[dict], name: str) -> None:
    def total(key: str, i: int) -> int:
        return sum(r[key][i] for r in rows)

    minutes = sum(r["minutes"] for r in rows)
    print(f"\n{name}: {len(rows)} meetings, {minutes:.0f} minutes of transcript")
    for kind in KINDS:
        found, annotated = total(kind, 0), total(kind, 1)
        right, listed = total(kind, 2), total(kind, 3)
        print(
            f"  {kind.replace('_', ' '):13} recall {found}/{annotated} = "
            f"{found / max(annotated, 1):.2f}; lines listed {listed}, "
            f"{right} of them on an annotated one ({right / max(listed, 1):.2f})"
        )
    held, cited = total("citations", 0), total("citations", 1)
    slowest = max(rows, key=lambda r: r["seconds"] / max(r["minutes"], 1e-9))
    print(
        f"  citations holding {held}/{cited}; slowest summary {slowest['seconds']:.3f} s for "
        f"{slowest['minutes']:.0f} min ({slowest['meeting']})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=("tuning", "held-out", "all"), default="all")
    parser.add_argument("--show", action="store_true", help="print every annotation and line")
    args = parser.parse_args(argv)
    print(f"load average before: {load_average()}")
    for name, series in SERIES.items():
        if args.set not in (name, "all"):
            continue
        meetings = [f"{s}{letter}" for s in series for letter in "abcd"]
        rows = [score(load(m), show=args.show) for m in meetings]
        report(rows, name)
    print(f"load average after: {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
