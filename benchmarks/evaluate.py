"""Retrieval evaluation: labelled questions over examples/media, ours against the naive recipe.

    python benchmarks/evaluate.py [--index DIR] [--heldout-index DIR] [--sweep] [--no-naive]
    python benchmarks/evaluate.py --lexical {default,grid} [--index DIR]

"Ours" is ``VideoIndex`` with its defaults (sentence-aware units, OCR, fusion, the
postprocessor's neighbours and frames, the calibrated threshold and relevance gate);
"ours without the gate" is the same with ``relevance=None`` (0.1.0's behaviour).
"Naive" is the decomposed recipe as published: raw Whisper segments embedded with the
same model, cosine top-k, the nearest frame of a fixed 5 s sampler, no threshold, no
neighbours. Both use the same ASR model and the same embedding model.

``--sweep`` is the calibration, in one place, to re-run whenever the embedding model
changes: the cosine threshold sweep, then the relevance gate
(:mod:`llama_index_video.search.relevance`) fitted by 5-fold cross-validation over
``questions.json`` (each fold's gate chosen on the other four, scored on it), fitted
on all of it, and checked on held-out media the calibration never saw
(``questions_heldout.json``: a narration about tomatoes). It prints that
``RelevanceGate``, to pass as ``VideoIndex(relevance=...)``; the default gate is each
hit's confidence instead, fitted leave-one-set-out by ``benchmarks/relevance_fit.py``.

``--lexical`` runs only the search with the lexical channel off and on (its defaults,
or ``grid``: weights and least lexical matches, the calibration of
``llama_index_video.search.lexical``), on ``questions.json`` and both held-out sets,
each set's index shared by all, in one run.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from llama_index_video.index import VideoIndex
    from llama_index_video.results import SearchHit
    from llama_index_video.search.relevance import RelevanceGate

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.scoring import (  # noqa: E402
    Question,
    RankedHit,
    answer_in_context,
    answered_rate,
    balanced_accuracy,
    best_cut,
    first_hit_rank,
    folds,
    rejection_rate,
    summarise,
)

EXAMPLES = ROOT / "examples" / "media"
KINDS = ("spoken", "number", "split", "onscreen", "document", "paraphrase")
TOP_K = 5
FOLDS = 5
# Rejecting an answerable question costs the user the answer; answering an unanswerable
# one still goes to a model told to say "not found". So a missed answer counts double.
ANSWER_WEIGHT = 2.0
# Held-out media the calibration never sees: one set of questions per recording
# (tomatoes, then bicycle care); the sweep checks its gate on the first.
HELDOUT_SETS = tuple(
    Path(__file__).with_name(name)
    for name in ("questions_heldout.json", "questions_heldout_bicycle.json")
)
HELDOUT_QUESTIONS = HELDOUT_SETS[0]
GATE_WEIGHTS = tuple(round(0.05 * step, 2) for step in range(13))  # 0 (cosine alone) .. 0.6


def load_questions(path: Path) -> list[Question]:
    raw = json.loads(path.read_text())["questions"]
    return [
        Question(
            id=q["id"],
            kind=q["kind"],
            question=q["question"],
            file=q.get("file"),
            start=q.get("start"),
            end=q.get("end"),
            answer=tuple(q.get("answer", ())),
        )
        for q in raw
    ]


def ours(index_dir: Path | None, media: Path = EXAMPLES) -> tuple[VideoIndex, float]:
    """``VideoIndex`` over ``media`` (ingest is incremental: a reused folder is quick)."""
    from llama_index_video.index import VideoIndex

    folder = index_dir or Path(tempfile.mkdtemp(prefix="eval-index-"))
    index = VideoIndex(folder)
    started = time.perf_counter()
    report = index.ingest([media])
    if not report.ok:
        raise SystemExit(f"ingest failed: {report.of('failed')}")
    return index, time.perf_counter() - started


def search_ours(index: VideoIndex, question: Question) -> list[RankedHit]:
    return ranked(index.search(question.question, top_k=TOP_K))


def ranked(hits: Sequence[SearchHit]) -> list[RankedHit]:
    from llama_index_video.search.relevance import hit_text

    return [RankedHit(Path(h.source).name, h.start, h.end, hit_text(h)) for h in hits]


def ungated(index: VideoIndex) -> VideoIndex:
    """The same index folder without the relevance gate (0.1.0's behaviour)."""
    from llama_index_video.index import VideoIndex

    return VideoIndex(index.path, embed_model=index.embed_model, relevance=None)


class Naive:
    """Raw segments, cosine top-k, nearest 5 s frame, no threshold.

    Args:
        files: The media and text files to index (default: everything in examples/media);
            ``benchmarks/ingest_vs_naive.py`` times this as the naive ingest.
    """

    def __init__(self, files: Sequence[Path] | None = None) -> None:
        # First, as a script of one's own would: faster-whisper with libgomp's default
        # waiting, not the brief spinning llama_index_video.transcription.openmp sets.
        import faster_whisper  # noqa: F401
        from llama_index.core import VectorStoreIndex
        from llama_index.core.schema import TextNode

        from llama_index_video.embeddings.local import local_embedding
        from llama_index_video.media.audio import decode_audio
        from llama_index_video.reader.options import AUDIO_SUFFIXES, VIDEO_SUFFIXES
        from llama_index_video.reader.video_reader import VideoReader
        from llama_index_video.transcription.faster import FasterWhisperTranscriber

        # faster-whisper's own default: each window prompted with the previous text.
        transcriber = FasterWhisperTranscriber(condition_on_previous_text=True)
        nodes = []
        started = time.perf_counter()
        for path in files or sorted(EXAMPLES.iterdir()):
            if path.suffix.lower() in VIDEO_SUFFIXES | AUDIO_SUFFIXES:
                result = transcriber.transcribe(decode_audio(path), source=path)
                for segment in result.segments:
                    nodes.append(
                        TextNode(
                            text=segment.text.strip(),
                            metadata={
                                "file": path.name,
                                "start": segment.start,
                                "end": segment.end,
                            },
                        )
                    )
            elif path.suffix == ".md":
                reader = VideoReader(media_dir=Path(tempfile.mkdtemp()), frames=None)
                for node in reader.read(path).nodes:
                    nodes.append(TextNode(text=node.get_content(), metadata={"file": path.name}))
            elif files is not None:  # the examples folder also holds the timeline's JSON
                raise ValueError(f"{path}: the naive recipe reads audio, video and .md files")
        for node in nodes:
            node.excluded_embed_metadata_keys = ["file", "start", "end"]
        self.index = VectorStoreIndex(nodes, embed_model=local_embedding())
        self.seconds = time.perf_counter() - started

    def search(self, question: Question) -> list[RankedHit]:
        hits = self.index.as_retriever(similarity_top_k=TOP_K).retrieve(question.question)
        return [
            RankedHit(
                file=h.node.metadata["file"],
                start=h.node.metadata.get("start"),
                end=h.node.metadata.get("end"),
                text=h.node.get_content(),
            )
            for h in hits
        ]


def report(name: str, results: Sequence[tuple[Question, list[RankedHit]]]) -> None:
    print(f"\n## {name}")
    print(f"{'kind':10} {'n':>3} {'R@1':>6} {'R@3':>6} {'R@5':>6} {'MRR':>6} {'ans@3':>6}")
    for kind in (*KINDS, "all"):
        chosen = [r for r in results if kind == "all" or r[0].kind == kind]
        summary = summarise(chosen)
        if not summary.count:
            continue
        r = summary.recall
        print(
            f"{kind:10} {summary.count:3d} {r[1]:6.2f} {r[3]:6.2f} {r[5]:6.2f} "
            f"{summary.mrr:6.2f} {summary.answer_at_3:6.2f}"
        )
    negatives = [r for r in results if not r[0].answerable]
    positives = len(results) - len(negatives)
    print(
        f"answerable answered: {answered_rate(results):.2f} of {positives}; "
        f"no-answer rejected: {rejection_rate(results):.2f} of {len(negatives)}"
    )


def details(results_a, results_b) -> None:
    print("\n## per question (rank of first hit, answer in top-3 context): ours | naive")
    for (question, ours_hits), (_, naive_hits) in zip(results_a, results_b, strict=True):
        if not question.answerable:
            print(
                f"{question.id:18} none   ours returned {len(ours_hits)} | naive {len(naive_hits)}"
            )
            continue
        cells = [
            f"{first_hit_rank(question, hits)!s:>4} {answer_in_context(question, hits)!s:5}"
            for hits in (ours_hits, naive_hits)
        ]
        print(f"{question.id:18} {question.kind:9} {cells[0]} | {cells[1]}")


LEXICAL_DEFAULT = ((None, None), ("default", "default"))
LEXICAL_GRID = (
    (None, None),
    *((weight, least) for weight in (0.25, 0.5, 1.0) for least in (0.3, 0.4, 0.45, 0.5, 0.7)),
)


def lexical_comparison(
    sets: Sequence[tuple[str, VideoIndex, Sequence[Question]]],
    grid: Sequence[tuple[float | str | None, float | str | None]],
) -> None:
    """Each set's questions with the lexical channel off and on (same index, same run)."""
    from llama_index_video.index import VideoIndex

    print("\n## lexical channel: off, and on at (weight, least lexical match)")
    print(
        f"{'set':12} {'lexical':>11} {'R@1':>6} {'R@3':>6} {'R@5':>6} {'MRR':>6} "
        f"{'ans@3':>6} {'answered':>9} {'rejected':>9}"
    )
    for name, index, questions in sets:
        for weight, least in grid:
            options: dict = {"lexical": weight is not None}
            if isinstance(weight, float):
                options["weights"] = {"lexical": weight}
            if isinstance(least, float):
                options["lexical_threshold"] = least
            trial = VideoIndex(index.path, embed_model=index.embed_model, **options)
            results = [(q, search_ours(trial, q)) for q in questions]
            trial.close()
            summary = summarise(results)
            r = summary.recall
            shown = "off" if weight is None else f"{weight},{least}"
            print(
                f"{name:12} {shown:>11} {r[1]:6.2f} {r[3]:6.2f} {r[5]:6.2f} {summary.mrr:6.2f} "
                f"{summary.answer_at_3:6.2f} {answered_rate(results):9.2f} "
                f"{rejection_rate(results):9.2f}"
            )


def sweep(index: VideoIndex, questions: Sequence[Question]) -> None:
    from llama_index_video.index import VideoIndex

    print("\n## threshold sweep (no gate): answerable R@5 and answer@3 kept, no-answer rejected")
    for threshold in (0.0, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5):
        trial = VideoIndex(
            index.path, embed_model=index.embed_model, threshold=threshold, relevance=None
        )
        results = [(q, search_ours(trial, q)) for q in questions]
        summary = summarise(results)
        print(
            f"threshold {threshold:4.2f}: R@5 {summary.recall[5]:.2f}  "
            f"ans@3 {summary.answer_at_3:.2f}  rejected {rejection_rate(results):.2f}"
        )
        trial.close()


Collected = list[tuple[Question, list["SearchHit"]]]


def collect(index: VideoIndex, questions: Sequence[Question]) -> Collected:
    """Each question's hits without the gate: the gate is a function of these alone."""
    bare = ungated(index)
    try:
        return [(q, bare.search(q.question, top_k=TOP_K)) for q in questions]
    finally:
        bare.close()


def fit_gate(
    collected: Collected, weights: Sequence[float] = GATE_WEIGHTS
) -> tuple[RelevanceGate, float]:
    """The gate with the best weighted accuracy on ``collected`` (``ANSWER_WEIGHT``).

    For each weight the best cut is found; of the weights reaching the best accuracy
    the median is taken (the middle of the plateau, not its edge).
    """
    from llama_index_video.search.relevance import Relevance, RelevanceGate

    labels = [q.answerable for q, _ in collected]
    signals = [Relevance.of(q.question, hits) for q, hits in collected]
    answered = [bool(hits) for _, hits in collected]
    fits = []
    for weight in weights:
        # A question with no hits is rejected whatever the gate: score it below any cut.
        scores = [
            s.similarity + weight * s.coverage if found else -1.0
            for s, found in zip(signals, answered, strict=True)
        ]
        fits.append((weight, best_cut(labels, scores, answer_weight=ANSWER_WEIGHT)))
    top = max(cut.accuracy for _, cut in fits)
    tied = [(weight, cut) for weight, cut in fits if cut.accuracy == top]
    weight, cut = tied[len(tied) // 2]
    return RelevanceGate(weight=weight, cut=round(cut.value, 3)), top


def gated(
    collected: Collected, gate: RelevanceGate | None
) -> list[tuple[Question, list[RankedHit]]]:
    """What search returns with ``gate`` (None: no gate)."""
    return [
        (q, ranked(hits) if gate is None or gate.accepts(q.question, hits) else [])
        for q, hits in collected
    ]


def decisions(results: Sequence[tuple[Question, Sequence[RankedHit]]]) -> str:
    labels = [q.answerable for q, _ in results]
    accepted = [bool(hits) for _, hits in results]
    accuracy = balanced_accuracy(labels, accepted, answer_weight=ANSWER_WEIGHT)
    summary = summarise(results)
    return (
        f"answered {answered_rate(results):.2f}  rejected {rejection_rate(results):.2f}  "
        f"weighted {accuracy:.2f}  R@1 {summary.recall[1]:.2f}  ans@3 {summary.answer_at_3:.2f}"
    )


def calibrate(collected: Collected, heldout: Collected) -> None:
    """Cross-validate the gate, fit it on everything, check it on held-out media."""
    from llama_index_video.search.relevance import RelevanceGate

    print(f"\n## relevance gate: {FOLDS}-fold cross-validation over questions.json")
    by_question = dict((q.id, (q, hits)) for q, hits in collected)
    pooled: dict[str, list[tuple[Question, list[RankedHit]]]] = {"gate": [], "cosine": []}
    for number, fold in enumerate(folds([q for q, _ in collected], FOLDS), start=1):
        held = {q.id for q in fold}
        train = [by_question[i] for i in by_question if i not in held]
        test = [by_question[q.id] for q in fold]
        gate, accuracy = fit_gate(train)
        cosine, _ = fit_gate(train, weights=(0.0,))
        pooled["gate"] += gated(test, gate)
        pooled["cosine"] += gated(test, cosine)
        print(
            f"fold {number}: weight {gate.weight:.2f} cut {gate.cut:.3f} "
            f"(train weighted {accuracy:.2f}); "
            f"held-out fold: {decisions(gated(test, gate))}"
        )
    print(f"pooled held-out folds, gate:        {decisions(pooled['gate'])}")
    print(f"pooled held-out folds, cosine only: {decisions(pooled['cosine'])}")
    gate, accuracy = fit_gate(collected)
    print(f"\nfitted on all {len(collected)} questions: {gate} (weighted {accuracy:.2f})")
    for name, chosen in (("no gate (0.1.0)", None), ("fitted gate", gate)):
        print(f"  questions.json, {name:16}: {decisions(gated(collected, chosen))}")
        print(f"  held-out media, {name:16}: {decisions(gated(heldout, chosen))}")
    print(
        f"to pass as VideoIndex(relevance=...): {RelevanceGate.__name__}"
        f"(weight={gate.weight}, cut={gate.cut})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, help="index folder of examples/media to (re)use")
    parser.add_argument("--heldout-index", type=Path, help="index folder of the held-out media")
    parser.add_argument("--sweep", action="store_true", help="calibrate threshold and gate")
    parser.add_argument("--no-naive", action="store_true", help="skip the naive recipe")
    parser.add_argument(
        "--lexical",
        choices=("default", "grid"),
        help="only compare search with the lexical channel off and on (its defaults, or "
        "a grid of weights and least matches) on questions.json and the held-out sets",
    )
    parser.add_argument(
        "--questions", type=Path, default=Path(__file__).with_name("questions.json")
    )
    args = parser.parse_args()
    questions = load_questions(args.questions)
    index, ingest_seconds = ours(args.index)
    if args.lexical:
        sets = [("examples", index, questions)]
        for path in HELDOUT_SETS:
            spec = json.loads(path.read_text())
            heldout, _ = ours(None, ROOT / spec["media"])
            sets.append((path.stem.removeprefix("questions_"), heldout, load_questions(path)))
        lexical_comparison(sets, LEXICAL_GRID if args.lexical == "grid" else LEXICAL_DEFAULT)
        return
    results_ours = [(q, search_ours(index, q)) for q in questions]
    bare = ungated(index)
    results_bare = [(q, search_ours(bare, q)) for q in questions]
    bare.close()
    print(f"questions: {len(questions)}; ingest: ours {ingest_seconds:.1f} s")
    report(f"ours (VideoIndex defaults: gate {index.relevance})", results_ours)
    report("ours without the relevance gate (0.1.0 defaults)", results_bare)
    if not args.no_naive:
        naive = Naive()
        print(f"naive ingest: {naive.seconds:.1f} s")
        results_naive = [(q, naive.search(q)) for q in questions]
        report("naive (raw segments, cosine top-k, no threshold)", results_naive)
        details(results_ours, results_naive)
    if args.sweep:
        sweep(index, questions)
        spec = json.loads(HELDOUT_QUESTIONS.read_text())
        heldout_index, _ = ours(args.heldout_index, ROOT / spec["media"])
        heldout = collect(heldout_index, load_questions(HELDOUT_QUESTIONS))
        calibrate(collect(index, questions), heldout)


if __name__ == "__main__":
    main()
