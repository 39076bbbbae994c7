"""Answers without a language model: the best moments, quoted and cited.

This is what ``ask`` returns when no LLM is configured: honest about being a list of
moments rather than a generated answer, and just as citable.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from llama_index_video.answering.citations import Citation
from llama_index_video.answering.search import SearchHit

NOT_FOUND = "Not found in the index: no indexed moment is relevant enough to answer this."


@dataclass(frozen=True)
class Answer:
    """An answer with its citations (as data) and the hits it was built from."""

    question: str
    text: str
    citations: list[Citation] = field(default_factory=list)
    hits: list[SearchHit] = field(default_factory=list)
    found: bool = True
    model: str | None = None
    unverified: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "answer": self.text,
            "found": self.found,
            "model": self.model,
            "citations": [citation_dict(c) for c in self.citations],
            "unverified_citations": list(self.unverified),
            "hits": [h.to_dict() for h in self.hits],
        }


def citation_dict(citation: Citation) -> dict[str, Any]:
    return {
        "source": citation.source,
        "start": citation.start,
        "end": citation.end,
        "label": citation.label,
        "url": citation.url,
        "frame_path": citation.frame_path,
        "modality": citation.modality,
    }


def citation_for(hit: SearchHit) -> Citation:
    """The citation of a search hit."""
    return Citation(
        source=hit.source,
        file_name=PurePath(hit.source).name,
        start=hit.start,
        end=hit.end,
        label=hit.label,
        url=hit.url or hit.source,
        frame_path=hit.frame_path,
        modality=hit.modality,
    )


def extractive_answer(question: str, hits: list[SearchHit], *, max_moments: int = 3) -> Answer:
    """The best ``max_moments`` moments, each with its label, quote, frame and link."""
    if not hits:
        return Answer(question, NOT_FOUND, hits=[], found=False)
    chosen = hits[:max_moments]
    lines = ["The most relevant moments (no language model configured):"]
    for number, hit in enumerate(chosen, start=1):
        quote = " ".join(c.text for c in hit.context) if hit.context else (hit.text or "")
        lines.append(f'{number}. {hit.label} "{_shorten(quote, 400)}"')
        if hit.url:
            lines.append(f"   play: {hit.url}")
        if hit.frame_path:
            lines.append(f"   frame: {hit.frame_path}")
    return Answer(question, "\n".join(lines), [citation_for(h) for h in chosen], hits=hits)


def _shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"
