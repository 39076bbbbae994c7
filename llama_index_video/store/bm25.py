"""One generation of the lexical index's BM25 matrices: built, saved, loaded, searched.

:class:`~llama_index_video.store.lexical.LexicalStore` keeps the words and decides when
to rebuild (the module docstring there says why the matrices are rebuilt whole);
this module is the matrices themselves, built by ``bm25s`` over the words
:func:`~llama_index_video.store.tokens.scored_words` keeps, and saved beside their
nodes' ids, modalities, speakers and languages (``nodes.json``), by which a search
filters before it ranks. A node's language is ``""`` when it has none (a frame, a
document) and unknown (``null``) when its row was recorded before languages were (the
matrices of such rows, and those saved without languages, keep such a node under any
language filter: :class:`~llama_index_video.search.lexical.LexicalRetriever` checks it
on its stored row). A node's match is its BM25
score over the best any node reaches for each query word, so it lies in (0, 1] and
means the same whatever the collection's size; a query word no node holds counts as
the rarest word would.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from llama_index_video.store.tokens import import_bm25s, scored_words

NODES_FILE = "nodes.json"
_UNKNOWN = -1  # the language code of a node whose language was not recorded


@dataclass(frozen=True)
class LexicalHit:
    """A node's lexical match: BM25 over the best BM25 any node reaches per query word."""

    node_id: str
    score: float  # in (0, 1]: 1 when it matches every word as well as any node does


class LexicalSnapshot:
    """One generation's BM25 matrices, with each node's id, modality, speaker and language."""

    def __init__(
        self,
        bm25: Any,
        ids: list[str],
        meta: list[tuple[str, str]],
        generation: int,
        *,
        languages: Sequence[str | None],
    ) -> None:
        import numpy as np

        self._bm25 = bm25  # None: no node has words
        self.ids = ids
        self.generation = generation
        self._position = {node_id: i for i, node_id in enumerate(ids)}
        self._modalities = sorted({m for m, _ in meta})
        codes = {m: i for i, m in enumerate(self._modalities)}
        self._modality = np.array([codes[m] for m, _ in meta], dtype=np.int16)
        self._speakers = [s for _, s in meta]
        self._languages = sorted({lang for lang in languages if lang is not None})
        spoken = {lang: i for i, lang in enumerate(self._languages)}
        self._language = np.array(
            [_UNKNOWN if lang is None else spoken[lang] for lang in languages], dtype=np.int16
        )
        self.unlabelled = bool((self._language == _UNKNOWN).any())
        """Whether some node's language is unknown (recorded before languages were)."""
        self._np = np

    @classmethod
    def load(cls, folder: Path, generation: int) -> LexicalSnapshot:
        stored = json.loads((folder / NODES_FILE).read_text())
        bm25 = None
        if (folder / "params.index.json").exists():
            bm25 = import_bm25s().BM25.load(str(folder), show_progress=False)
        meta = [(str(m), str(s)) for m, s in stored["meta"]]
        languages = stored.get("languages") or [None] * len(meta)  # saved before languages
        return cls(bm25, stored["ids"], meta, generation, languages=languages)

    def search(
        self,
        query: Sequence[str],
        *,
        top_k: int,
        modalities: Sequence[str] | None = None,
        speakers: Sequence[str] | None = None,
        languages: Sequence[str] | None = None,
        only: set[str] | None = None,
    ) -> list[LexicalHit]:
        """The best ``top_k`` nodes for the query's words, best first.

        Args:
            query: The query's tokens (:func:`words`); stop words are left out here.
            top_k: How many hits at most.
            modalities: Only nodes of these modalities; None: all.
            speakers: Only nodes spoken by these; None: anyone.
            languages: Only nodes heard in these (and those whose language is unknown,
                see the module docstring); None: any.
            only: Only these node ids (those containing the query's phrases); None: all.
        """
        np = self._np
        if self._bm25 is None:
            return []
        vocab = self._bm25.vocab_dict
        asked = set(scored_words(query))
        ids = sorted(vocab[t] for t in asked if t in vocab)
        if not ids:
            return []
        unknown = len(asked) - len(ids)  # words no node holds: each counts as the rarest
        scores = self._bm25.get_scores(ids).astype(np.float64)
        scores /= self._best_possible(ids) + unknown * self._rarest
        keep = scores > 0
        if modalities is not None:
            wanted = [self._modalities.index(m) for m in modalities if m in self._modalities]
            keep &= np.isin(self._modality, wanted)
        if speakers is not None:
            chosen = set(speakers)
            keep &= np.array([s in chosen for s in self._speakers], dtype=bool)
        if languages is not None:
            wanted = [self._languages.index(x) for x in languages if x in self._languages]
            keep &= np.isin(self._language, [*wanted, _UNKNOWN])
        if only is not None:
            among = np.zeros(len(self.ids), dtype=bool)
            among[[self._position[i] for i in only if i in self._position]] = True
            keep &= among
        candidates = np.flatnonzero(keep)
        if len(candidates) > top_k:
            best = np.argpartition(-scores[candidates], top_k - 1)[:top_k]
            candidates = candidates[best]
        ordered = sorted(candidates.tolist(), key=lambda i: (-scores[i], self.ids[i]))
        return [LexicalHit(self.ids[i], min(1.0, float(scores[i]))) for i in ordered]

    def holding(self, tokens: Iterable[str]) -> set[str] | None:
        """Ids of the nodes holding every scored word of ``tokens`` (stop words aside);
        None when ``tokens`` has none (every node might hold them)."""
        scored = set(scored_words(tokens))
        if not scored:
            return None
        if self._bm25 is None:
            return set()
        vocab, matrices = self._bm25.vocab_dict, self._bm25.scores
        if not scored <= vocab.keys():
            return set()
        found: set[int] | None = None
        pointers, indices = matrices["indptr"], matrices["indices"]
        for token in sorted(scored, key=lambda t: pointers[vocab[t] + 1] - pointers[vocab[t]]):
            t = vocab[token]
            docs = set(indices[pointers[t] : pointers[t + 1]].tolist())
            found = docs if found is None else found & docs
            if not found:
                return set()
        return {self.ids[i] for i in found or ()}

    @cached_property
    def frequencies(self) -> dict[str, int]:
        """How many nodes hold each scored word (its document frequency)."""
        if self._bm25 is None:
            return {}
        pointers = self._bm25.scores["indptr"]
        vocab = self._bm25.vocab_dict.items()
        return {
            token: int(pointers[t + 1] - pointers[t]) for token, t in vocab if t + 1 < len(pointers)
        }

    @cached_property
    def _rarest(self) -> float:
        """The best score of any word in any node: about what a word found once gets."""
        data = self._bm25.scores["data"]
        return float(data.max(initial=0.0))

    def _best_possible(self, token_ids: Sequence[int]) -> float:
        """The sum over the query's words of the best score any node gets for that word."""
        matrices = self._bm25.scores
        data, pointers = matrices["data"], matrices["indptr"]
        best = [
            float(data[pointers[t] : pointers[t + 1]].max(initial=0.0))
            for t in token_ids
            if t + 1 < len(pointers)
        ]
        return max(sum(best), math.ulp(1.0))


class _Built:
    """Freshly built BM25 matrices, to be saved with their nodes."""

    def __init__(self, bm25: Any, meta: list[tuple[str, str]], languages: list[str | None]) -> None:
        self.bm25 = bm25
        self.meta = meta
        self.languages = languages

    def save(self, folder: Path, *, ids: list[str]) -> None:
        folder.mkdir(parents=True)
        if self.bm25 is not None:
            self.bm25.save(str(folder), show_progress=False)
        # Languages beside "meta", not in it: a version that knows none still reads it.
        stored = {"ids": ids, "meta": self.meta, "languages": self.languages}
        (folder / NODES_FILE).write_text(json.dumps(stored))


def build_matrices(rows: Sequence[tuple[str, str, str, str | None, str]]) -> _Built:
    """BM25 matrices over ``rows`` (node id, modality, speaker, language or None when
    unknown, words), in their order."""
    corpus = [scored_words(text.split()) for *_, text in rows]
    bm25 = None
    if any(corpus):  # bm25s needs at least one word in the collection
        bm25 = import_bm25s().BM25()
        bm25.index(corpus, show_progress=False)
    meta = [(modality, speaker) for _, modality, speaker, _, _ in rows]
    return _Built(bm25, meta, [language for _, _, _, language, _ in rows])
