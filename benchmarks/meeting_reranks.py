"""Re-rankings tried for topic questions on meetings, chosen on the tuning ones (issue 36).

    python benchmarks/meeting_reranks.py [--keep DIR]

The meetings are indexed as in :mod:`benchmarks.meeting_search` (the same ``--keep``
folder reuses its indexes). For each annotators' question, the package's own fused
retrieval (dense + lexical, :meth:`~llama_index_video.search.policy.SearchPolicy.retriever`)
gives 25 candidate units and the chapters their match; each way of re-ranking those
candidates below is then scored by whether the first unit / one of the first three
overlaps an annotated answer stretch. Units are scored by their own span (no
sentence seek, no gate), so "as fused" can differ from ``search`` by a question or two.

The ways tried: the chapter's match added at several weights (what ``--by-chapter``
does, at 0.2); the chapter's match plus how many of the question's words the whole
chapter says (inverse chapter frequency weighted); the cosine of each candidate with
its chapter's vector (expanding the question towards the chapter's words); the cosine
of the question with the words of the unit and its neighbours within 30 s (widening
the unit); a penalty on units of under six words; a boost to the turns of a speaker
the question names.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.baseline import load_average  # noqa: E402
from benchmarks.meeting_scoring import first_found, found_at  # noqa: E402
from benchmarks.meeting_search import meeting_index  # noqa: E402
from benchmarks.meetings import SETS, load  # noqa: E402

CANDIDATES = 25
NEIGHBOURS_SECONDS = 30.0
SHORT_WORDS = 6


@dataclass
class Asked:
    question: str
    spans: list[tuple[float, float]]
    candidates: list[tuple[int, float]]  # (unit index, fused score), best first
    chapters: dict[str, float]  # chapter id -> its fused match
    query: np.ndarray
    named: set[str]


@dataclass
class Stored:
    """One meeting's stored units and chapters, in time order."""

    starts: np.ndarray
    ends: np.ndarray
    vectors: np.ndarray  # normalised, one row a unit
    texts: list[str]
    speakers: list[str | None]
    chapter_of: list[str | None]
    chapter_vectors: dict[str, np.ndarray]
    chapter_words: dict[str, set[str]]


def stored(index) -> Stored:
    from llama_index_video import schema
    from llama_index_video.store.collection import content_rows, nodes_with_vectors
    from llama_index_video.store.tokens import scored_words, words

    (entry,) = index.library()
    rows = content_rows(index.vector_store, entry.content_hash) or {}
    nodes = nodes_with_vectors(index.vector_store, list(rows))
    units = sorted(
        (n for n in nodes if n.metadata[schema.MODALITY] == "transcript"),
        key=lambda n: n.metadata[schema.START_S],
    )
    vectors = np.array([n.embedding for n in units], dtype=float)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    chapter_of = [n.metadata.get(schema.CHAPTER) for n in units]
    chapter_words: dict[str, set[str]] = {}
    for n, chapter in zip(units, chapter_of, strict=True):
        if chapter:
            chapter_words.setdefault(chapter, set()).update(scored_words(words(n.get_content())))
    return Stored(
        starts=np.array([n.metadata[schema.START_S] for n in units], dtype=float),
        ends=np.array([n.metadata[schema.END_S] for n in units], dtype=float),
        vectors=vectors,
        texts=[n.get_content() for n in units],
        speakers=[n.metadata.get(schema.SPEAKER) for n in units],
        chapter_of=chapter_of,
        chapter_vectors={
            n.node_id: np.array(n.embedding) / np.linalg.norm(n.embedding)
            for n in nodes
            if n.metadata[schema.MODALITY] == "chapter"
        },
        chapter_words=chapter_words,
    )


def asked(meeting, index, store: Stored, embed_model) -> list[Asked]:
    from llama_index.core.schema import QueryBundle

    from llama_index_video.search.speaker_named import named_speakers

    policy = index.search_policy()
    position = {round(s, 3): i for i, s in enumerate(store.starts)}
    roles = sorted({s for s in store.speakers if s})
    found = []
    for question, spans in meeting.asked:
        moments = policy.retriever(top_k=CANDIDATES).retrieve(QueryBundle(question))
        chapters = policy.retriever(top_k=10, modalities=["chapter"]).retrieve(
            QueryBundle(question)
        )
        query = np.array(embed_model.get_query_embedding(question), dtype=float)
        found.append(
            Asked(
                question,
                spans,
                [
                    (position[round(n.node.metadata["start_s"], 3)], n.score or 0.0)
                    for n in moments[:CANDIDATES]
                    if n.node.metadata.get("modality") == "transcript"
                ],
                {n.node.node_id: n.score or 0.0 for n in chapters},
                query / np.linalg.norm(query),
                set(named_speakers(question, lambda: roles)),
            )
        )
    return found


Extra = Callable[[Stored, Asked, int], float]


def chapter_match(weight: float) -> Extra:
    def extra(store: Stored, a: Asked, i: int) -> float:
        floor = min(a.chapters.values(), default=0.0)
        chapter = store.chapter_of[i]
        return weight * a.chapters.get(chapter, floor) if chapter else 0.0

    return extra


def chapter_words(weight: float) -> Extra:
    """The chapter's match plus the inverse-chapter-frequency share of the question's
    words the chapter says."""
    from llama_index_video.store.tokens import scored_words, words

    def extra(store: Stored, a: Asked, i: int) -> float:
        chapter = store.chapter_of[i]
        if not chapter:
            return 0.0
        wanted = set(scored_words(words(a.question)))
        total = len(store.chapter_words)

        def idf(word: str) -> float:
            said = sum(word in w for w in store.chapter_words.values())
            return math.log(1 + total / said) if said else 0.0

        best = sum(idf(w) for w in wanted) or 1.0
        share = sum(idf(w) for w in wanted if w in store.chapter_words[chapter]) / best
        return chapter_match(0.2)(store, a, i) + weight * share

    return extra


def towards_chapter(weight: float) -> Extra:
    def extra(store: Stored, a: Asked, i: int) -> float:
        chapter = store.chapter_of[i]
        vector = store.chapter_vectors.get(chapter) if chapter else None
        return weight * float(store.vectors[i] @ vector) if vector is not None else 0.0

    return extra


def neighbours(weight: float) -> Extra:
    def extra(store: Stored, a: Asked, i: int) -> float:
        near = (store.ends >= store.starts[i] - NEIGHBOURS_SECONDS) & (
            store.starts <= store.ends[i] + NEIGHBOURS_SECONDS
        )
        counts = np.array([len(t.split()) for t in store.texts], dtype=float)[near]
        vector = (store.vectors[near] * counts[:, None]).sum(axis=0)
        return weight * float(vector @ a.query / np.linalg.norm(vector))

    return extra


def short_units(penalty: float) -> Extra:
    return lambda store, a, i: -penalty if len(store.texts[i].split()) < SHORT_WORDS else 0.0


def named_speaker(boost: float) -> Extra:
    return lambda store, a, i: boost if store.speakers[i] in a.named else 0.0


TRIED: dict[str, Extra] = {
    "as fused": lambda store, a, i: 0.0,
    **{f"chapter's match x {w}": chapter_match(w) for w in (0.2, 0.5, 1.0)},
    **{f"chapter's match + its words x {w}": chapter_words(w) for w in (0.1, 0.3)},
    **{f"towards the chapter x {w}": towards_chapter(w) for w in (0.2, 0.5)},
    **{f"neighbours within 30 s x {w}": neighbours(w) for w in (0.3, 0.6)},
    **{f"units under 6 words - {p}": short_units(p) for p in (0.05, 0.1)},
    **{f"named speaker's turns + {b}": named_speaker(b) for b in (0.1, 0.2)},
}


def ranks(store: Stored, found: list[Asked], extra: Extra) -> list[int | None]:
    out = []
    for a in found:
        scored = sorted(a.candidates, key=lambda c: -(c[1] + extra(store, a, c[0])))
        out.append(first_found(a.spans, [(store.starts[i], store.ends[i]) for i, _ in scored]))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="where benchmarks/meeting_search.py kept")
    args = parser.parse_args(argv)
    from llama_index_video.embeddings.local import local_embedding

    embed_model = local_embedding()
    print(f"load average before: {load_average()}")
    results: dict[str, dict[str, list[int | None]]] = {}
    with tempfile.TemporaryDirectory(prefix="meeting-reranks-") as scratch:
        base = args.keep or Path(scratch)
        for name, meetings in SETS.items():
            results[name] = {way: [] for way in TRIED}
            for m in meetings:
                meeting = load(m)
                index, _ = meeting_index(meeting, base / m, embed_model)
                try:
                    store = stored(index)
                    found = asked(meeting, index, store, embed_model)
                finally:
                    index.close()
                for way, extra in TRIED.items():
                    results[name][way] += ranks(store, found, extra)
    print(f"\n{'re-ranking of the fused candidates':38}  tuning: first / top 3   held out")
    for way in TRIED:
        cells = [
            f"{found_at(results[n][way], 1):2d} / {found_at(results[n][way], 3):2d} of "
            f"{len(results[n][way])}"
            for n in SETS
        ]
        print(f"{way:38}  {cells[0]:>18}   {cells[1]:>14}")
    print(f"load average after: {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
