"""What the extractive summary lists as decisions and action items in recordings that are
no meeting, and what the gate costs meetings without speaker labels.

    python benchmarks/decision_gate.py [--baseline-ref REF] [--qmsum DIR] [--rev16 DIR]

Monologues: the example narrations (``examples/media/timeline.json``, the script as
said) and real readings (``benchmarks/long_real``, ``tests/fixtures/real_speech``), each
turned into transcript units as ingest makes them; every decision or action line listed
there is chatter. Meetings: the 32 real AMI meetings of ``benchmarks/decisions.py``
(QMSum transcripts, synthetic timing), with their speaker labels and without them (as
ingested without ``--speakers``): annotated decisions and action items found. Each
version (this checkout; with ``--baseline-ref`` also that commit's code) runs in a child
process of its own.

Held out (the gate's bars were set on those 32 AMI meetings): with ``--qmsum`` (a checkout
of github.com/Yale-LILY/QMSum) every other meeting there: ICSI research meetings, Welsh
Parliament committee hearings (``education_*``), Canadian House of Commons committee
sittings (``covid_*``) and the other 105 AMI meetings; with ``--rev16`` (a checkout of
github.com/revdotcom/speech-datasets, transcripts CC BY-SA 4.0) the 16 Rev16 podcast
episodes, transcribed verbatim (every "yeah" a listener says) and lightly edited: two
are one voice (a short story read, a sermon), two a host between clips of other voices,
twelve hosts and guests talking. Each is read, with and without speaker labels, by
:func:`~llama_index_video.summaries.extractive.is_conversation`; printed per set: how
many it reads as a conversation, and the "yeah" rate per 1,000 words.
"""

from __future__ import annotations

import argparse
import csv
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


REV16_ONE_VOICE = ("20", "27")
"""Rev16 episodes of one voice: a short story read (its host says 4 % of the words), a sermon."""
REV16_CLIPS = ("11", "14")
"""Rev16 episodes of a host between clips of other voices: neither side of the gate."""


def held_out(qmsum: Path | None, rev16: Path | None) -> dict[str, list[tuple[str, list]]]:
    """``(name, turns)`` of each held-out recording, by set (see the module docstring)."""
    from benchmarks.decision_annotations import SERIES
    from benchmarks.meetings import load

    fitted = {
        f"{series}{letter}" for team in SERIES.values() for series in team for letter in "abcd"
    }
    sets: dict[str, list[tuple[str, list]]] = {}
    if qmsum is not None:
        for path in sorted((qmsum / "data" / "ALL").glob("*/*.json")):
            if path.stem in fitted:
                continue
            kind = (
                "QMSum ICSI meetings"
                if path.stem.startswith("B")
                else "QMSum Welsh Parliament committees"
                if path.stem.startswith("education")
                else "QMSum Canadian Parliament committees"
                if path.stem.startswith("covid")
                else "QMSum AMI meetings not fitted on"
            )
            sets.setdefault(kind, []).append((path.stem, load(path.stem, path.parent).turns))
    if rev16 is not None:
        for style in ("verbatim", "nonverbatim"):
            folder = rev16 / "rev16" / f"{style}_transcripts" / "nlp_references"
            for path in sorted(folder.glob("*.nlp"), key=lambda p: int(p.stem)):
                kind = (
                    "one voice"
                    if path.stem in REV16_ONE_VOICE
                    else "host and clips"
                    if path.stem in REV16_CLIPS
                    else "conversations"
                )
                sets.setdefault(f"Rev16 {kind}, {style}", []).append((path.stem, rev16_turns(path)))
    return sets


def rev16_turns(path: Path) -> list:
    """A Rev16 transcript (one token a row: token|speaker|ts|endTs|punctuation|...) as
    turns, a change of speaker starting one, timed as :func:`turn_times` reads them."""
    from benchmarks.meeting_scoring import turn_times

    said: list[tuple[str, list[str]]] = []
    with path.open(encoding="utf-8", newline="") as handle:
        for row in list(csv.reader(handle, delimiter="|", quoting=csv.QUOTE_NONE))[1:]:
            word = row[5] + row[0] + row[4]  # prepunctuation, token, punctuation
            if said and said[-1][0] == row[1]:
                said[-1][1].append(word)
            else:
                said.append((row[1], [word]))
    return turn_times([(speaker, " ".join(words)) for speaker, words in said])


def gated(qmsum: Path | None, rev16: Path | None) -> dict[str, list[tuple[str, bool, bool, float]]]:
    """Per held-out set, each recording read with and without speaker labels, and its
    listeners' "yeah" per 1,000 words, with the code on ``sys.path``."""
    TranscriptLine, _ = _package()
    from benchmarks.decision_scoring import units_of
    from llama_index_video.summaries.extractive import ASSENT, is_conversation

    found: dict[str, list[tuple[str, bool, bool, float]]] = {}
    for kind, recordings in held_out(qmsum, rev16).items():
        for name, turns in recordings:
            units = units_of(turns)
            labelled = [TranscriptLine(s, e, text, who) for s, e, text, who in units]
            plain = [TranscriptLine(s, e, text, None) for s, e, text, _ in units]
            said = sum(len(unit.text.split()) for unit in plain)
            assents = sum(len(ASSENT.findall(unit.text)) for unit in plain)
            found.setdefault(kind, []).append(
                (name, is_conversation(labelled), is_conversation(plain), 1000 * assents / said)
            )
    return found


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


def _run_held_out(version: Version, qmsum: Path | None, rev16: Path | None) -> dict:
    paths = ", ".join(repr(str(p)) if p else "None" for p in (qmsum, rev16))
    return measured_in(
        version,
        "import json; from pathlib import Path; from benchmarks.decision_gate import gated; "
        f"print(json.dumps(gated(*(p and Path(p) for p in ({paths},)))))",
    )


def _print_held_out(found: dict) -> None:
    print("  held out: read as a conversation, labelled / unlabelled; yeah per 1,000 words")
    for kind, rows in found.items():
        rates = sorted(rate for *_, rate in rows)
        median = rates[len(rates) // 2]
        print(
            f"    {kind}: {sum(r[1] for r in rows)}/{len(rows)} / {sum(r[2] for r in rows)}/"
            f"{len(rows)}; rate {rates[0]:.1f}-{rates[-1]:.1f} (median {median:.1f})"
        )
        for name, labelled, plain, rate in rows:
            if len(rows) <= 16 or not (labelled and plain):
                print(f"      {name}: labelled {labelled}, unlabelled {plain}, rate {rate:.1f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline-ref", help="also summarize with the code of this git ref")
    parser.add_argument("--qmsum", type=Path, help="a checkout of github.com/Yale-LILY/QMSum")
    parser.add_argument(
        "--rev16", type=Path, help="a checkout of github.com/revdotcom/speech-datasets"
    )
    args = parser.parse_args(argv)
    versions = [today(), *([release(args.baseline_ref)] if args.baseline_ref else [])]
    print(f"load average {load_average()}")
    results = {version.name: _run(version) for version in versions}
    held = args.qmsum or args.rev16
    outside = {v.name: _run_held_out(v, args.qmsum, args.rev16) for v in versions if held}
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
        if held:
            _print_held_out(outside[version.name])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
