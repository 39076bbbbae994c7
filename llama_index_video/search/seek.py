"""Where in a hit the answer is said: the start of its best-matching sentence.

A transcript unit holds a few sentences (or, where speech recognition wrote no full
stop, pieces cut at pauses: :mod:`llama_index_video.reader.units`), and records at
ingest where each begins (:data:`~llama_index_video.schema.SENTENCES`). A hit should
seek to the sentence that answers, not to the unit's first word, which can be ten
seconds earlier. The pick is lexical and costs no model call: the sentence holding the
most of the query's content words, each weighted by how few of the unit's sentences
hold it (the weighting of :func:`~llama_index_video.search.relevance.coverage`).
When no sentence shares a content word with the query (a paraphrase), the hit keeps
the unit's start. A long sentence's clauses are places to seek to as well, and the
seek goes to the clause where the match began: the earliest clause of the best one's
sentence that says a word of the query no later clause of the sentence says ("After his
death in the 1480s, | or at least by 1490, | printing in Venice had declined" asked as
"printing in Venice declined after his death": not 6 s into the sentence). A word said
again later does not pull the seek back ("The ends of the letters, | ... | instead of
ending in the clear stroke of Jenson's letters"), nor does the sentence's start alone:
a reading's sentence often runs over clauses of which the query quotes one, and its
start is then seconds early.
Where speech recognition wrote no punctuation, a long sentence is cut into pieces at
pauses (:mod:`llama_index_video.reader.units`), which mark no clause: the seek goes
back over such a cut only into a piece holding words of the query, so an unpunctuated
unit does not send its hits to its first words.
Where a hit then starts, with the label and link that go with it, is :func:`seek`'s to
say, for a search hit (:func:`~llama_index_video.search.searcher.hit_from_node`, which
seeks in the text its postprocessing left) and for a node ``VideoIndex.as_retriever()``
hands a LlamaIndex app (:func:`seek_node`), whose query engine shows the model the
node's label to cite.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

from llama_index_video import schema
from llama_index_video.reader.units import CLAUSE_END, SENTENCE_END
from llama_index_video.search.relevance import content_words

if TYPE_CHECKING:  # a cold ``search`` seeks hits without loading LlamaIndex
    from llama_index.core.schema import NodeWithScore


def sentence_start(query: str, text: str, sentences: Sequence[tuple[int, float]]) -> float | None:
    """The second the sentence of ``text`` that best matches ``query`` begins.

    Args:
        query: The search query.
        text: The unit's own text.
        sentences: ``(character offset in text, second)`` of each sentence, in order.

    Returns:
        That second; None when there is no choice to make (one sentence) or no sentence
        shares a content word with the query.
    """
    if len(sentences) < 2:
        return None
    wanted = content_words(query)
    if not wanted:
        return None
    bounds = [offset for offset, _ in sentences[1:]] + [len(text)]
    vocabularies = [
        set(content_words(text[offset:end]))
        for (offset, _), end in zip(sentences, bounds, strict=True)
    ]
    found_in = {w: sum(w in vocabulary for vocabulary in vocabularies) for w in wanted}
    weight = {
        w: math.log((len(vocabularies) + 1) / (found_in[w] + 0.5)) for w in wanted if found_in[w]
    }
    if not weight:
        return None
    scores = [sum(weight.get(w, 0.0) for w in vocabulary) for vocabulary in vocabularies]
    best = max(range(len(scores)), key=lambda i: (scores[i], -i))  # ties: the earlier one
    return sentences[_match_begins(best, text, sentences, vocabularies, set(weight))][1]


def _match_begins(
    best: int,
    text: str,
    sentences: Sequence[tuple[int, float]],
    vocabularies: Sequence[set[str]],
    wanted: set[str],
) -> int:
    """The earliest clause of the sentence holding clause ``best`` that says a word of
    ``wanted`` no later clause of the sentence says; ``best`` when none does. A cut with
    no punctuation before it (a piece cut at a pause) is crossed only into a piece that
    says words of ``wanted``."""
    end = best + 1
    while end < len(sentences) and not _ends_sentence(text[: sentences[end][0]]):
        end += 1
    said_later = set().union(*vocabularies[best:end])
    begins = best
    for clause in range(best - 1, -1, -1):
        before = text[: sentences[clause + 1][0]]
        says = vocabularies[clause] & wanted
        if _ends_sentence(before) or not (_ends_clause(before) or says):
            break
        if says - said_later:
            begins = clause
        said_later |= vocabularies[clause]
    return begins


def _ends_sentence(text: str) -> bool:
    return bool(SENTENCE_END.search(text.rstrip()))


def _ends_clause(text: str) -> bool:
    return bool(CLAUSE_END.search(text.rstrip()))


class Sought(NamedTuple):
    """Where a hit starts once sought, and the label and link that go with it."""

    start: float
    label: str
    url: str


def seek(
    query: str, text: str, metadata: Mapping[str, object], *, source: str | None = None
) -> Sought | None:
    """Where a hit on the unit of ``metadata`` starts for ``query``: the second its
    sentence that best matches begins in ``text`` (see :func:`sentence_start`), with the
    unit's label and link moved there.

    Args:
        query: The search query.
        text: The hit's text to seek in.
        metadata: The unit's stored metadata (its start, end, sentences, file).
        source: Where the link points: the file where it is now (default: the stored
            source).

    Returns:
        None when the hit keeps its unit's start.
    """
    start = metadata.get(schema.START_S)
    if not isinstance(start, int | float):
        return None
    said = sentence_start(query, text, schema.parse_sentences(metadata.get(schema.SENTENCES)))
    if said is None or said <= start:
        return None
    end = metadata.get(schema.END_S)
    return Sought(
        said,
        schema.moment_label(
            str(metadata[schema.FILE_NAME]), said, end if isinstance(end, int | float) else None
        ),
        schema.media_fragment_url(source or str(metadata[schema.SOURCE]), said),
    )


def seek_node(hit: NodeWithScore, query: str) -> NodeWithScore:
    """``hit`` with its start, time, label and link moved by :func:`seek` (a copy: stored
    nodes are left as they are); ``hit`` itself when its unit's start stays."""
    metadata = hit.node.metadata
    sought = seek(query, hit.node.get_content(), metadata)
    if sought is None:
        return hit
    moved = {
        **metadata,
        schema.START_S: sought.start,
        schema.TIME_LABEL: schema.format_timestamp(sought.start),
        schema.LABEL: sought.label,
        schema.MEDIA_URL: sought.url,
    }
    return hit.model_copy(update={"node": hit.node.model_copy(update={"metadata": moved})})
