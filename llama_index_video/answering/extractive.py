"""Answers without a language model: the best moments, quoted and cited.

This is what ``ask`` returns when no LLM is configured: honest about being a list of
moments rather than a generated answer, and just as citable.
"""

from __future__ import annotations

from llama_index_video import results
from llama_index_video._moved import moved
from llama_index_video.answering.not_found import (
    NOTHING_RELEVANT,
    NOTHING_RELEVANT_ANSWERS,
    nothing_relevant,
)

NOT_FOUND = NOTHING_RELEVANT_ANSWERS["en"]
NOT_FOUND_REASON = "no indexed moment is relevant enough to answer it (the relevance gate)"


def extractive_answer(
    question: str, hits: list[results.SearchHit], *, max_moments: int = 3
) -> results.Answer:
    """The best ``max_moments`` moments, each with its label, quote, frame and link.

    A moment with a speaker label says who spoke, and quotes only that speaker. None
    found: "not found" in the question's language (:mod:`.not_found`).
    """
    if not hits:
        return results.Answer(
            question,
            nothing_relevant(question),
            hits=[],
            found=False,
            reason=NOT_FOUND_REASON,
            reason_code=NOTHING_RELEVANT,
        )
    chosen = hits[:max_moments]
    lines = ["The most relevant moments (no language model configured):"]
    for number, hit in enumerate(chosen, start=1):
        context = [c for c in hit.context if not hit.speaker or c.speaker == hit.speaker]
        quote = " ".join(c.text for c in context) if context else (hit.text or "")
        said = f"{hit.speaker} said: " if hit.speaker else ""
        lines.append(f'{number}. {hit.label} {said}"{_shorten(quote, 400)}"')
        if hit.url:
            lines.append(f"   play: {hit.url}")
        if hit.site_url:
            lines.append(f"   on the site: {hit.site_url}")
        if hit.frame_path:
            lines.append(f"   frame: {hit.frame_path}")
    citations = [hit.citation for hit in chosen]
    return results.Answer(question, "\n".join(lines), citations, hits=hits)


def _shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"


__getattr__ = moved(__name__, "llama_index_video.results", "Answer")
