"""Topic questions on real meetings through the package's own search (issue 36).

    python benchmarks/meeting_search.py [--set tuning|held-out|all] [--keep DIR]
                                        [--gate off] [--no-lexical]

The seven QMSum meetings of :mod:`benchmarks.meetings` (real transcripts, **synthetic
timing**: each turn timed as read at 2.6 words a second) are ingested as a user's
recording would be: a silent audio file of the meeting's length with the turns as a
sidecar ``.srt`` (so no speech recognition), speaker labels from the turns' speakers
(a diarizer that is always right), into a :class:`~llama_index_video.VideoIndex` with
its defaults: units built by the reader, the default local embedding, the lexical
index, chapters at ingest. Each annotator's question is then searched as ``search``
does (dense + lexical fusion, the relevance gate), plain and ``--by-chapter``; the
naive recipe ranks the turns by cosine alone (top k, no threshold, no gate).

A question is found at k when one of the first k hits overlaps a stretch annotators
marked as answering it; a question search returned nothing for is found at no k.
The near-topic questions the meetings cannot answer
(``benchmarks/meetings/unanswerable.json``, written by the project's team) are turned
away when search returns nothing. The meetings are one of the gate's fit sets
(``benchmarks/relevance_sets.py`` builds their indexes with :func:`meeting_index`), so
the gate's figures here are in-sample; ``benchmarks/relevance_fit.py`` scores them held
out. With ``--keep DIR`` the indexes are kept there and reused by the next run;
``--gate off`` and ``--no-lexical`` open them without the gate or the lexical channel.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import wave
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.baseline import load_average  # noqa: E402
from benchmarks.meeting_scoring import Turn, first_found, found_at  # noqa: E402
from benchmarks.meetings import MEETINGS, SETS, Meeting, load  # noqa: E402

UNANSWERABLE = MEETINGS / "unanswerable.json"
RANKS = (1, 3, 5)
SAMPLE_RATE = 8000
"""Of the silent stand-in audio: nothing listens to it, so the smallest usual rate."""


@dataclass(frozen=True)
class KnownSpeakers:
    """A diarizer that is always right: the meeting's turns, by speaker role."""

    turns: Sequence[Turn]
    name: str = "transcript"

    def diarize(self, chunks: Iterable[object], *, source: Path | None = None) -> list:
        from llama_index_video.speakers.base import SpeakerTurn

        return [SpeakerTurn(t.start, t.end, t.speaker) for t in self.turns if t.text.strip()]


def silent_wav(path: Path, seconds: float) -> Path:
    with wave.open(str(path), "wb") as handle:
        handle.setnchannels(1)
        handle.setsampwidth(2)
        handle.setframerate(SAMPLE_RATE)
        block = bytes(2 * SAMPLE_RATE * 60)
        for _ in range(int(seconds // 60) + 1):
            handle.writeframes(block)
    return path


def recording_name(meeting: str) -> str:
    """The file name of a meeting's stand-in recording (what its hits name)."""
    return f"{meeting}.wav"


def meeting_index(meeting: Meeting, folder: Path, embed_model, **options):
    """The meeting's index in ``folder`` (ingested unless it already holds it), opened
    with ``options`` (``VideoIndex``'s), and the recording's path."""
    from llama_index_video import ReaderOptions, VideoIndex
    from llama_index_video.media.export_subtitles import Cue, srt_text

    folder.mkdir(parents=True, exist_ok=True)
    audio = folder / recording_name(meeting.name)
    if not audio.exists():
        cues = [Cue(t.start, t.end, t.text) for t in meeting.turns if t.text.strip()]
        (folder / f"{meeting.name}.srt").write_text(srt_text(cues), encoding="utf-8")
        silent_wav(audio, meeting.length + 2)
    index = VideoIndex(
        folder / "index",
        embed_model=embed_model,
        reader_options=ReaderOptions(diarizer=KnownSpeakers(meeting.turns)),
        **options,
    )
    if not index.library():
        report = index.ingest([audio])
        if not report.ok:
            raise SystemExit(f"{meeting.name}: ingest failed: {report}")
    return index, audio


def naive(meeting: Meeting, vectors: np.ndarray, query: np.ndarray) -> list[tuple[float, float]]:
    """The naive recipe: the turns by cosine, best first."""
    spoken = [t for t in meeting.turns if t.text.strip()]
    order = np.argsort(-(vectors @ query), kind="stable")[: max(RANKS)]
    return [(spoken[i].start, spoken[i].end) for i in order]


def spans_of(hits) -> list[tuple[float, float]]:
    return [(h.start, h.end) for h in hits if h.start is not None and h.end is not None]


ARMS = ("naive", "plain", "by_chapter")
CONFIDENCES = ("answerable", "unanswerable")
BARS = (0.15, 0.2, 0.25, 0.3)
"""Confidence bars the report tries on the plain search's first hits (the shipped gate's
is fitted leave-one-set-out: :data:`llama_index_video.search.policy.DEFAULT_GATES`)."""


def score_meeting(
    meeting: Meeting, folder: Path, embed_model, unanswerable: list[str], **options
) -> dict:
    index, _ = meeting_index(meeting, folder, embed_model, **options)
    try:
        spoken = [t.text for t in meeting.turns if t.text.strip()]
        vectors = np.array(embed_model.get_text_embedding_batch(spoken), dtype=float)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        ranks: dict[str, list[int | None]] = {arm: [] for arm in ARMS}
        empty = dict.fromkeys(ARMS[1:], 0)
        confidences: dict[str, list[float]] = {kind: [] for kind in CONFIDENCES}
        for question, spans in meeting.asked:
            query = np.array(embed_model.get_query_embedding(question), dtype=float)
            ranks["naive"].append(first_found(spans, naive(meeting, vectors, query)))
            for arm in ARMS[1:]:
                hits = index.search(question, top_k=max(RANKS), by_chapter=arm == "by_chapter")
                empty[arm] += not hits
                ranks[arm].append(first_found(spans, spans_of(hits)))
                if arm == "plain":
                    confidences["answerable"] += [h.confidence or 0.0 for h in hits[:1]]
        turned_away = dict.fromkeys(ARMS[1:], 0)
        for question in unanswerable:
            for arm in ARMS[1:]:
                hits = index.search(question, by_chapter=arm == "by_chapter")
                turned_away[arm] += not hits
                if arm == "plain":
                    confidences["unanswerable"] += [h.confidence or 0.0 for h in hits[:1]]
        chapters = len(index.chapters(recording_name(meeting.name)) or [])
    finally:
        index.close()
    return {
        "meeting": meeting.name,
        "asked": len(meeting.asked),
        "ranks": ranks,
        "empty": empty,
        "unanswerable": len(unanswerable),
        "turned_away": turned_away,
        "chapters": chapters,
        "confidences": confidences,
    }


def report(rows: list[dict], name: str) -> None:
    print(f"\n{name}: answer stretch in the first 1 / 3 / 5 hits (and questions left empty)")
    print(
        f"{'meeting':13} {'asked':>5} {'chap':>4}  "
        + "  ".join(f"{arm:^18}" for arm in ARMS)
        + "  turned away: plain / by chapter"
    )

    def cells(ranks: Sequence[int | None]) -> str:
        return " / ".join(f"{found_at(ranks, k):2d}" for k in RANKS)

    def line(label: str, asked: int, chapters: str, ranks: dict, empty: dict, away: str) -> str:
        arms = [f"{cells(ranks['naive']):^18}"] + [
            f"{cells(ranks[arm]) + f' ({empty[arm]})':^18}" for arm in ARMS[1:]
        ]
        return f"{label:13} {asked:5d} {chapters:>4}  " + "  ".join(arms) + f"  {away}"

    for r in rows:
        away = r["turned_away"]
        print(
            line(
                r["meeting"],
                r["asked"],
                str(r["chapters"]),
                r["ranks"],
                r["empty"],
                f"{away['plain']}/{r['unanswerable']} / {away['by_chapter']}/{r['unanswerable']}",
            )
        )
    ranks = {arm: [x for r in rows for x in r["ranks"][arm]] for arm in ARMS}
    empty = {arm: sum(r["empty"][arm] for r in rows) for arm in ARMS[1:]}
    asked = sum(r["asked"] for r in rows)
    unanswerable = sum(r["unanswerable"] for r in rows)
    away = {arm: sum(r["turned_away"][arm] for r in rows) for arm in ARMS[1:]}
    print(
        line(
            "all",
            asked,
            "",
            ranks,
            empty,
            f"{away['plain']}/{unanswerable} / {away['by_chapter']}/{unanswerable}",
        )
    )
    first = {kind: [c for r in rows for c in r["confidences"][kind]] for kind in CONFIDENCES}
    for kind, found in first.items():
        if found:
            low, mid, high = np.percentile(found, [10, 50, 90])
            print(
                f"  {kind} questions, the first hit's confidence (plain): 10th / 50th / 90th "
                f"percentile {low:.2f} / {mid:.2f} / {high:.2f} ({len(found)} with a hit)"
            )

    def left_empty(kind: str, total: int, bar: float) -> str:
        return f"{total - len(first[kind]) + sum(c < bar for c in first[kind])}/{total}"

    print(
        "  with a higher confidence bar, answerable emptied / unanswerable turned away: "
        + ", ".join(
            f"{bar:.2f}: {left_empty('answerable', asked, bar)} / "
            f"{left_empty('unanswerable', unanswerable, bar)}"
            for bar in BARS
        )
    )
    print(
        "  R@1 / R@3: "
        + ", ".join(
            f"{arm} {found_at(ranks[arm], 1) / asked:.2f} / {found_at(ranks[arm], 3) / asked:.2f}"
            for arm in ARMS
        )
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=("tuning", "held-out", "all"), default="all")
    parser.add_argument("--keep", type=Path, help="keep the indexes here and reuse them")
    parser.add_argument(
        "--gate", choices=("on", "off"), default="on", help="off: no relevance gate"
    )
    parser.add_argument("--no-lexical", action="store_true", help="dense channels only")
    args = parser.parse_args(argv)
    from llama_index_video.embeddings.local import local_embedding

    embed_model = local_embedding()
    questions = json.loads(UNANSWERABLE.read_text(encoding="utf-8"))["questions"]
    options = {"lexical": not args.no_lexical}
    if args.gate == "off":
        options["relevance"] = None
    print(f"load average before: {load_average()}")
    with tempfile.TemporaryDirectory(prefix="meeting-search-") as scratch:
        base = args.keep or Path(scratch)
        for name in ("tuning", "held-out"):
            if args.set not in (name, "all"):
                continue
            rows = [
                score_meeting(load(m), base / m, embed_model, questions.get(m, []), **options)
                for m in SETS[name]
            ]
            report(rows, name)
    print(f"load average after: {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
