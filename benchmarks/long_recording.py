"""Does the standout gate keep answering inside one long recording? (issue 10, defect 10)

    python benchmarks/long_recording.py --index DIR

Every recording the relevance benchmarks use is 40-80 s long (2-21 units), while the
standout gate (:mod:`llama_index_video.search.relevance`) compares a query's best
moment with up to 50 of its recording's. Here the audio of the example videos and
meeting and of both held-out narrations is joined, a second of silence apart, into one
recording of about five minutes (``PARTS``), with a sidecar subtitle file made from
the sentences' known times (no speech recognition: the words are the scripts'). The
questions of all three sets are asked of that one recording, each answerable one
with its ground-truth time moved by its part's offset (questions about slides or the
handbook are left out: the long recording has neither), with no gate and with the
shipped standout gate; a question is answered if search returns anything, and found
if a hit among the first three overlaps its ground truth.
"""

from __future__ import annotations

import argparse
import json
import sys
import wave
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.evaluate import EXAMPLES, HELDOUT_SETS, load_questions  # noqa: E402
from benchmarks.scoring import Question  # noqa: E402

SAMPLE_RATE = 16_000
GAP_SECONDS = 1.0
LEFT_OUT = ("onscreen", "document")
"""Question kinds the long recording cannot answer: slides and the handbook are not in it."""
NAME = "long_recording.wav"


@dataclass(frozen=True)
class Sentence:
    start: float
    end: float
    text: str


@dataclass(frozen=True)
class Part:
    """One source of the long recording and where its sentences are."""

    media: Path
    sentences: tuple[Sentence, ...]


def parts() -> list[Part]:
    """The example media with speech, then the held-out narrations, in that order."""
    timeline = json.loads((EXAMPLES / "timeline.json").read_text())["files"]
    found = [
        Part(EXAMPLES / name, tuple(Sentence(**line) for line in entry["narration"]))
        for name, entry in timeline.items()
        if entry.get("narration")
    ]
    for path in HELDOUT_SETS:
        media = ROOT / json.loads(path.read_text())["media"]
        script = json.loads(media.with_suffix(".json").read_text())["sentences"]
        found.append(Part(media, tuple(Sentence(**line) for line in script)))
    return found


def offsets(durations: Sequence[float], gap: float = GAP_SECONDS) -> list[float]:
    """Where each part starts in the joined recording."""
    starts, at = [], 0.0
    for duration in durations:
        starts.append(at)
        at += duration + gap
    return starts


def srt(sentences: Sequence[Sentence]) -> str:
    """A SubRip file of ``sentences``."""

    def stamp(seconds: float) -> str:
        millis = round(seconds * 1000)
        hours, rest = divmod(millis, 3_600_000)
        minutes, rest = divmod(rest, 60_000)
        return f"{hours:02d}:{minutes:02d}:{rest // 1000:02d},{rest % 1000:03d}"

    return "\n".join(
        f"{i}\n{stamp(s.start)} --> {stamp(s.end)}\n{s.text}\n"
        for i, s in enumerate(sentences, start=1)
    )


def moved(question: Question, starts: dict[str, float]) -> Question | None:
    """``question`` with its time in the long recording; None if it cannot be asked."""
    if question.kind in LEFT_OUT:
        return None
    if not question.answerable:
        return question
    if question.file not in starts or question.start is None or question.end is None:
        return None
    at = starts[question.file]
    return Question(
        id=question.id,
        kind=question.kind,
        question=question.question,
        file=NAME,
        start=question.start + at,
        end=question.end + at,
        answer=question.answer,
    )


def decode(path: Path) -> np.ndarray:
    from llama_index_video.media.audio import decode_audio

    return np.asarray(decode_audio(path), dtype=np.float32)  # 16 kHz mono


def build(folder: Path) -> dict[str, float]:
    """The long recording and its subtitles in ``folder``; where each part starts."""
    chosen = parts()
    audio = [decode(part.media) for part in chosen]
    starts = offsets([len(a) / SAMPLE_RATE for a in audio])
    silence = np.zeros(int(GAP_SECONDS * SAMPLE_RATE), dtype=np.float32)
    joined = np.concatenate([x for a in audio for x in (a, silence)])
    folder.mkdir(parents=True, exist_ok=True)
    with wave.open(str(folder / NAME), "wb") as handle:
        handle.setnchannels(1)
        handle.setsampwidth(2)
        handle.setframerate(SAMPLE_RATE)
        handle.writeframes((np.clip(joined, -1, 1) * 32767).astype("<i2").tobytes())
    sentences = [
        Sentence(s.start + at, s.end + at, s.text)
        for part, at in zip(chosen, starts, strict=True)
        for s in part.sentences
    ]
    (folder / NAME).with_suffix(".srt").write_text(srt(sentences))
    return {part.media.name: at for part, at in zip(chosen, starts, strict=True)}


def main() -> None:
    from llama_index_video.index import VideoIndex

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, required=True)
    args = parser.parse_args()
    starts = build(args.index / "media")
    duration = len(decode(args.index / "media" / NAME)) / SAMPLE_RATE
    bare = VideoIndex(args.index, relevance=None)
    report = bare.ingest([args.index / "media" / NAME])
    if not report.ok:
        raise SystemExit(f"ingest failed: {report.of('failed')}")
    gated = VideoIndex(args.index, embed_model=bare.embed_model, relevance="standout")
    sets = [ROOT / "benchmarks" / "questions.json", *HELDOUT_SETS]
    asked = [moved(q, starts) for path in sets for q in load_questions(path)]
    questions = [q for q in asked if q is not None]
    units = len(bare.recording_scores("anything at all"))
    print(f"{NAME}: {duration:.0f} s, {len(starts)} parts, {units} candidates per query")
    print("| gate | answered | found in top 3 | rejected |")
    print("|---|---|---|---|")
    for label, index in (("no gate", bare), ("standout", gated)):
        answerable = [q for q in questions if q.answerable]
        hits = {q.id: index.search(q.question) for q in questions}
        answered = sum(bool(hits[q.id]) for q in answerable)
        located = sum(
            any(
                h.start is not None and h.end is not None and h.start <= q.end and q.start <= h.end
                for h in hits[q.id][:3]
            )
            for q in answerable
            if q.start is not None and q.end is not None
        )
        rejected = sum(not hits[q.id] for q in questions if not q.answerable)
        unanswerable = len(questions) - len(answerable)
        print(
            f"| {label} | {answered}/{len(answerable)} | {located}/{len(answerable)} "
            f"| {rejected}/{unanswerable} |"
        )
    gated.close()
    bare.close()


if __name__ == "__main__":
    main()
