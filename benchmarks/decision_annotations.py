"""Decisions and action items annotated in AMI product meetings, for the summary benchmark.

    python benchmarks/decision_annotations.py QMSUM_CHECKOUT EVIDENCE_CHECKOUT

builds ``benchmarks/meetings/decisions/<meeting>.json.gz`` (see its ``SOURCE.json``),
once; ``benchmarks/decisions.py`` reads them. QMSum's annotators answered questions about
each meeting ("Summarize the whole meeting.", "What were the final decisions made by the
team?", "Summarize the wrap up of the meeting.") in sentences, and a later annotation
(QMSum_SummaryEvidence) links every answer sentence to the transcript turns it comes
from. An answer sentence is an annotated **decision** when its question asks what was
decided or agreed, or the sentence itself says something was decided or agreed on
(:data:`DECIDED`), and an annotated **action item** when it gives a role or the team
something to do after the meeting or a task (:data:`ACTION`: "Marketing would be
responsible for market research", "Interface developer was asked to work on ...");
sentences reporting an opinion ("User Interface pointed out that they should ...") are
neither. Each keeps the turns its evidence names; a sentence said under several
questions counts once.

The rules were written before any summary was scored against them and are not tuned;
they are plain, so their mistakes are the annotation's noise, equal for every system.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "benchmarks" / "meetings" / "decisions"
SERIES = {
    "tuning": ("ES2003", "ES2005", "IS1004", "TS3010"),
    "held-out": ("ES2004", "IS1007", "IS1009", "TS3006"),
}
"""Whole AMI series (the four meetings of one team), so no team is on both sides."""

_ASKS_DECIDED = re.compile(
    r"^(?:what|which)\b[^?]*\b(?:decid\w*|decisions?|agreed|conclusions?)\b", re.IGNORECASE
)
_ASKS_WHY = re.compile(r"\b(?:why|how|reason)\b", re.IGNORECASE)
DECIDED = re.compile(
    r"\b(?:decided|agreed (?:to|on|upon|that)|settled (?:on|for)"
    r"|made (?:a|the|some|their) (?:final )?decisions?|(?:reached|came to) (?:a|the) (?:final )?"
    r"decision|(?:was|were|is|are) (?:finally )?decided|(?:final )?decision (?:was|is) "
    r"(?:made|reached|to))\b",
    re.IGNORECASE,
)
"""A sentence that says something was decided."""
_REPORTED = re.compile(
    r"^(?:\w+,? )?(?:\w+ ){0,3}(?:pointed out|suggested|thought|believed|mentioned|implied|drew"
    r"|argued|said|explained|noted|wondered|hoped|recommended|proposed|found)\b",
    re.IGNORECASE,
)
_ROLE = (
    r"(?:project manager|marketing|industrial designer|industrial manager|interface "
    r"(?:designer|developer)|user interface|designers?|(?:the )?(?:other )?(?:team )?members"
    r"|everyone|everybody|each (?:member|of them|one)|all (?:the )?members|they|the team|the group)"
)
ACTION = re.compile(
    rf"{_ROLE}(?: and {_ROLE})?\s+(?:also\s+|then\s+)?(?:will|would|was going to|were going to"
    r"|(?:is|are) going to)\s+(?:also\s+|then\s+)?(?:be (?:responsible|in charge)|work on|present"
    r"|prepare|send|look (?:into|at|for)|bring|research|draw|check|find|come up|think about"
    r"|e-?mail|write|make|get|do|focus on|investigate|finish|build|design|report|specify|give"
    r"|evaluate)\b"
    rf"|{_ROLE}(?: and {_ROLE})?\s+(?:was|were) (?:asked|assigned|told|supposed|expected|"
    r"responsible|in charge)\b|\bassignments?\b",
    re.IGNORECASE,
)
"""A sentence that gives a role (or the team) something to do."""


def kind(question: str, sentence: str) -> str | None:
    """``"decisions"``, ``"action_items"`` or None for one answer sentence."""
    if _ASKS_DECIDED.search(question) and not _ASKS_WHY.search(question):
        return "decisions"
    if _REPORTED.search(sentence):
        return None
    if DECIDED.search(sentence):
        return "decisions"
    if ACTION.search(sentence):
        return "action_items"
    return None


def annotations(evidence: dict) -> dict[str, list[dict]]:
    """The decisions and action items of one meeting's QMSum_SummaryEvidence file: each
    the sentence, the question it answers, and the transcript turns it links to."""
    found: dict[str, list[dict]] = {"decisions": [], "action_items": []}
    seen: set[str] = set()
    queries = evidence["general_query_list"] + evidence["specific_query_list"]
    for query in queries:
        for sentence, linked in zip(query["tokenized_answer"], query["evidence"], strict=True):
            section = kind(query["query"], sentence)
            turns = sorted({int(e["turn_index"]) for e in linked})
            if section is None or not turns or sentence in seen:
                continue
            seen.add(sentence)
            found[section].append({"text": sentence, "asked": query["query"], "turns": turns})
    return found


def build(qmsum: Path, evidence: Path) -> list[Path]:
    """Write every meeting of :data:`SERIES`: its turns (speaker and words, as QMSum has
    them) and its annotations."""
    FOLDER.mkdir(parents=True, exist_ok=True)
    written = []
    for series in (s for group in SERIES.values() for s in group):
        for letter in "abcd":
            name = f"{series}{letter}"
            (meeting,) = list(qmsum.glob(f"data/ALL/*/{name}.json")) or [None]
            (linked,) = list(evidence.glob(f"*/{name}.json")) or [None]
            if meeting is None or linked is None:
                print(f"{name}: not in both checkouts, skipped", file=sys.stderr)
                continue
            turns = json.loads(meeting.read_text(encoding="utf-8"))["meeting_transcripts"]
            data = {
                "meeting": name,
                "turns": [[t["speaker"], t["content"]] for t in turns],
                **annotations(json.loads(linked.read_text(encoding="utf-8"))["qmsum"]),
            }
            out = FOLDER / f"{name}.json.gz"
            with gzip.open(out, "wt", encoding="utf-8") as handle:
                json.dump(data, handle, ensure_ascii=False)
            written.append(out)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("qmsum", type=Path, help="a checkout of github.com/Yale-LILY/QMSum")
    parser.add_argument(
        "evidence", type=Path, help="a checkout of github.com/etri/QMSum_SummaryEvidence"
    )
    args = parser.parse_args(argv)
    for path in build(args.qmsum, args.evidence):
        print(path.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
