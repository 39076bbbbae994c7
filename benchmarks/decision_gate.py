"""What the extractive summary lists as decisions and action items in recordings that are
no meeting, and what the gate costs meetings without speaker labels.

    python benchmarks/decision_gate.py [--baseline-ref REF]

Monologues: the example narrations (``examples/media/timeline.json``, the script as
said) and real readings (``benchmarks/long_real``, ``tests/fixtures/real_speech``), each
turned into transcript units as ingest makes them; every decision or action line listed
there is chatter. Meetings: the 32 real AMI meetings of ``benchmarks/decisions.py``
(QMSum transcripts, synthetic timing), with their speaker labels and without them (as
ingested without ``--speakers``): annotated decisions and action items found. Each
version (this checkout; with ``--baseline-ref`` also that commit's code) runs in a child
process of its own.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

from benchmarks.baseline import Version, load_average, measured_in, release, today  # noqa: E402


def monologues() -> dict[str, list[tuple[float, float, str]]]:
    """``(start, end, text)`` of what is said in each recording of one voice."""
    said: dict[str, list[tuple[float, float, str]]] = {}
    files = json.loads((ROOT / "examples/media/timeline.json").read_text())["files"]
    for name, entry in files.items():
        if entry.get("kind") != "text" and entry.get("narration"):
            said[name] = [(t["start"], t["end"], t["text"]) for t in entry["narration"]]
    for folder in (ROOT / "benchmarks/long_real", ROOT / "tests/fixtures/real_speech"):
        for path in sorted(folder.glob("*.json")):
            data = json.loads(path.read_text())
            turns = data.get("turns") or []
            if turns and len({t.get("speaker") for t in turns}) == 1:
                said[path.stem] = [(t["start"], t["end"], t["text"]) for t in turns]
    return said


def _package() -> tuple[Any, Any]:
    """The version's ``TranscriptLine`` and ``extractive_summary``, imported before
    ``benchmarks.decisions`` puts this checkout first on ``sys.path``."""
    from llama_index_video.store.library import TranscriptLine
    from llama_index_video.summaries.extractive import extractive_summary

    return TranscriptLine, extractive_summary


def measure() -> dict:
    """Lines listed on the monologues and annotations found on the meetings, with the
    code on ``sys.path``."""
    TranscriptLine, extractive_summary = _package()
    from benchmarks.decision_annotations import SERIES
    from benchmarks.decision_scoring import recall, units_of
    from benchmarks.decisions import KINDS, load
    from benchmarks.meeting_scoring import Turn

    listed = {}
    for name, said in monologues().items():
        turns = [Turn("reader", text, start, end) for start, end, text in said]
        units = [TranscriptLine(s, e, text, None) for s, e, text, _ in units_of(turns)]
        summary = extractive_summary(name, units, [])
        listed[name] = [line.text for line in (*summary.decisions, *summary.action_items)]
    found: dict[str, list[int]] = {}
    for labelled in (True, False):
        for kind in KINDS:
            found[f"{kind} {'labelled' if labelled else 'unlabelled'}"] = [0, 0, 0]
        for series in SERIES.values():
            for meeting in (load(f"{s}{letter}") for s in series for letter in "abcd"):
                units = [
                    TranscriptLine(s, e, text, who if labelled else None)
                    for s, e, text, who in units_of(meeting.turns)
                ]
                summary = extractive_summary(meeting.name, units, [])
                for kind in KINDS:
                    cited = [(line.start, line.end) for line in getattr(summary, kind)]
                    hits, total = recall(cited, meeting.items[kind], meeting.turns)[:2]
                    row = found[f"{kind} {'labelled' if labelled else 'unlabelled'}"]
                    row[0] += hits
                    row[1] += total
                    row[2] += len(cited)
    return {"monologues": listed, "meetings": found}


def _run(version: Version) -> dict:
    return measured_in(
        version,
        "import json; from benchmarks.decision_gate import measure; print(json.dumps(measure()))",
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline-ref", help="also summarize with the code of this git ref")
    args = parser.parse_args(argv)
    versions = [today(), *([release(args.baseline_ref)] if args.baseline_ref else [])]
    print(f"load average {load_average()}")
    results = {version.name: _run(version) for version in versions}
    for version in versions:
        got = results[version.name]
        chatter = sum(len(lines) for lines in got["monologues"].values())
        print(
            f"\n{version.name}: {chatter} decision/action lines in {len(got['monologues'])} "
            "monologues (every one chatter)"
        )
        for name, lines in got["monologues"].items():
            for text in lines:
                print(f"  {name}: {text[:100]}")
        for key, (hits, total, lines) in got["meetings"].items():
            print(f"  meetings, {key}: found {hits}/{total}, {lines} lines listed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
