"""Retrieval evaluation: labelled questions over examples/media, ours against the naive recipe.

    python benchmarks/evaluate.py [--index DIR] [--sweep]

"Ours" is ``VideoIndex`` with its defaults (sentence-aware units, OCR, fusion, the
postprocessor's neighbours and frames, the calibrated threshold). "Naive" is the
decomposed recipe as published: raw Whisper segments embedded with the same model,
cosine top-k, the nearest frame of a fixed 5 s sampler, no threshold, no neighbours.
Both use the same ASR model and the same embedding model. ``--sweep`` prints how the
relevance threshold trades answerable recall against rejecting no-answer questions,
which is how the default threshold was calibrated.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.scoring import (  # noqa: E402
    Question,
    RankedHit,
    answer_in_context,
    first_hit_rank,
    rejection_rate,
    summarise,
)

EXAMPLES = ROOT / "examples" / "media"
KINDS = ("spoken", "number", "split", "onscreen", "document")
TOP_K = 5


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


def ours(index_dir: Path | None) -> tuple[object, float]:
    from llama_index_video.index import VideoIndex

    folder = index_dir or Path(tempfile.mkdtemp(prefix="eval-index-"))
    index = VideoIndex(folder)
    started = time.perf_counter()
    report = index.ingest([EXAMPLES])
    if not report.ok:
        raise SystemExit(f"ingest failed: {report.of('failed')}")
    return index, time.perf_counter() - started


def search_ours(index: object, question: Question) -> list[RankedHit]:
    hits = index.search(question.question, top_k=TOP_K)  # type: ignore[attr-defined]
    return [
        RankedHit(
            file=Path(h.source).name,
            start=h.start,
            end=h.end,
            text=" ".join([h.text or "", *(c.text for c in h.context)]),
        )
        for h in hits
    ]


class Naive:
    """Raw segments, cosine top-k, nearest 5 s frame, no threshold."""

    def __init__(self) -> None:
        from llama_index.core import VectorStoreIndex
        from llama_index.core.schema import TextNode

        from llama_index_video.embeddings.local import local_embedding
        from llama_index_video.media.audio import decode_audio
        from llama_index_video.reader.video_reader import VideoReader
        from llama_index_video.transcription.faster import FasterWhisperTranscriber

        transcriber = FasterWhisperTranscriber()
        nodes = []
        started = time.perf_counter()
        for path in sorted(EXAMPLES.iterdir()):
            if path.suffix in {".mp4", ".mp3"}:
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
    print(f"no-answer rejected: {rejection_rate(results):.2f} of {len(negatives)}")


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


def sweep(index: object, questions: Sequence[Question]) -> None:
    from llama_index_video.index import VideoIndex

    base: VideoIndex = index  # type: ignore[assignment]
    print("\n## threshold sweep (ours): answerable R@5 and answer@3 kept, no-answer rejected")
    for threshold in (0.0, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5):
        trial = VideoIndex(base.path, embed_model=base.embed_model, threshold=threshold)
        results = [(q, search_ours(trial, q)) for q in questions]
        summary = summarise(results)
        print(
            f"threshold {threshold:4.2f}: R@5 {summary.recall[5]:.2f}  "
            f"ans@3 {summary.answer_at_3:.2f}  rejected {rejection_rate(results):.2f}"
        )
        trial.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", type=Path, help="index folder to (re)use")
    parser.add_argument("--sweep", action="store_true", help="print the threshold sweep")
    parser.add_argument(
        "--questions", type=Path, default=Path(__file__).with_name("questions.json")
    )
    args = parser.parse_args()
    questions = load_questions(args.questions)
    index, ingest_seconds = ours(args.index)
    naive = Naive()
    results_ours = [(q, search_ours(index, q)) for q in questions]
    results_naive = [(q, naive.search(q)) for q in questions]
    print(
        f"questions: {len(questions)}; "
        f"ingest: ours {ingest_seconds:.1f} s, naive {naive.seconds:.1f} s"
    )
    report("ours (VideoIndex defaults)", results_ours)
    report("naive (raw segments, cosine top-k, no threshold)", results_naive)
    details(results_ours, results_naive)
    if args.sweep:
        sweep(index, questions)


if __name__ == "__main__":
    main()
