"""The two ways of finding a hit's context, held to one contract: the same moments."""

from __future__ import annotations

import itertools

import pytest
from llama_index.core.storage.docstore import SimpleDocumentStore

from llama_index_video import schema
from llama_index_video.postprocessing.context import (
    ContextOptions,
    MomentContext,
    by_links,
    by_time_ranges,
    find_contexts,
)
from llama_index_video.postprocessing.timeline import DocstoreTimeline, VectorStoreTimeline

STRATEGIES = {"links": by_links, "time_ranges": by_time_ranges}


class CountingTimeline:
    """The real lookups, counted: which kind a strategy used, and how often."""

    def __init__(self, inner):
        self.inner = inner
        self.calls = {"overlapping": 0, "by_ids": 0}

    def overlapping(self, content_hash, start, end):
        self.calls["overlapping"] += 1
        return self.inner.overlapping(content_hash, start, end)

    def by_ids(self, node_ids):
        self.calls["by_ids"] += 1
        return self.inner.by_ids(node_ids)


def view(contexts: dict[str, MomentContext]):
    return {
        hit: (
            [u.node_id for u in c.units],
            c.frame.node_id if c.frame is not None else None,
            [t.node_id for t in c.screen],
        )
        for hit, c in contexts.items()
    }


def _stored(index):
    return sorted(index.vector_store.get_nodes(None), key=lambda n: n.metadata[schema.START_S])


OPTIONS = [
    ContextOptions(neighbours=n, frames=frames)
    for n, frames in itertools.product((0, 1, 2), (True, False))
]


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: f"n{o.neighbours}-frames{o.frames}")
def test_every_moment_gets_the_same_context_either_way(linked_index, options):
    stored = _stored(linked_index)
    timeline = VectorStoreTimeline(linked_index.vector_store)
    cases = [[node] for node in stored] + [stored]  # each node alone, then all at once
    for hits in cases:
        by_id = {name: strategy(timeline, hits, options) for name, strategy in STRATEGIES.items()}
        assert by_id["links"] is not None
        assert view(by_id["links"]) == view(by_id["time_ranges"]), [h.node_id for h in hits]


def test_the_contract_has_every_kind_of_moment(linked_index):
    contexts = by_links(
        VectorStoreTimeline(linked_index.vector_store), _stored(linked_index), ContextOptions()
    )
    kinds = {
        (hit.metadata[schema.MODALITY], bool(contexts[hit.node_id].screen))
        for hit in _stored(linked_index)
    }
    assert kinds >= {("transcript", True), ("frame", True), ("ocr", True)}


def test_links_take_one_lookup_per_hop_and_ranges_one_per_file(linked_index):
    hits = _stored(linked_index)[::3]
    fast = CountingTimeline(VectorStoreTimeline(linked_index.vector_store))
    slow = CountingTimeline(VectorStoreTimeline(linked_index.vector_store))
    by_links(fast, hits, ContextOptions(neighbours=2))
    by_time_ranges(slow, hits, ContextOptions(neighbours=2))
    # At most: the hits' units, two hops of neighbours (frames join the first), frames' text.
    assert fast.calls["overlapping"] == 0 and 1 <= fast.calls["by_ids"] <= 4
    assert slow.calls == {"overlapping": 1, "by_ids": 0}


def _docstore_timeline(nodes):
    docstore = SimpleDocumentStore()
    docstore.add_documents(nodes)
    return DocstoreTimeline(docstore)


def test_the_same_context_from_a_docstore(linked_index, linked_moments):
    hits = _stored(linked_index)
    for strategy in STRATEGIES.values():
        assert view(strategy(_docstore_timeline(linked_moments), hits, ContextOptions())) == view(
            strategy(VectorStoreTimeline(linked_index.vector_store), hits, ContextOptions())
        )


@pytest.mark.parametrize(
    "options", [ContextOptions(window_seconds=10), ContextOptions(frame_choice="nearest")]
)
def test_what_links_cannot_express_is_looked_up_by_time(linked_index, options):
    timeline = CountingTimeline(VectorStoreTimeline(linked_index.vector_store))
    hits = _stored(linked_index)[:3]
    assert by_links(timeline, hits, options) is None
    assert view(find_contexts(timeline, hits, options)) == view(
        by_time_ranges(timeline, hits, options)
    )


def test_frames_indexed_before_they_linked_their_text_are_looked_up_by_time(linked_index):
    # An index built by 0.1.0: units and frames linked, but frames carry no ocr_ids.
    old = []
    for node in _stored(linked_index):
        node = node.model_copy(deep=True)
        node.metadata.pop(schema.OCR_IDS, None)
        old.append(node)
    unit = next(n for n in old if n.metadata[schema.MODALITY] == "transcript")
    timeline = _docstore_timeline(old)
    assert by_links(timeline, [unit], ContextOptions()) is None
    contexts = find_contexts(timeline, [unit], ContextOptions())
    assert contexts[unit.node_id].screen, "the text on the frame is still found"


def test_a_hit_with_no_links_is_looked_up_by_time(linked_index):
    unit = next(n for n in _stored(linked_index) if n.metadata[schema.MODALITY] == "transcript")
    bare = unit.model_copy(deep=True)
    bare.metadata.pop(schema.FRAME_ID)
    timeline = VectorStoreTimeline(linked_index.vector_store)
    assert by_links(timeline, [bare], ContextOptions()) is None
    assert view(find_contexts(timeline, [bare], ContextOptions())) == view(
        by_links(timeline, [unit], ContextOptions())
    )


def test_hits_without_links_are_looked_up_by_time_and_the_others_by_links(linked_index):
    # An audio file's units link no frame: they alone are looked up by time.
    stored = _stored(linked_index)
    bare = next(n for n in stored if n.metadata[schema.MODALITY] == "transcript")
    bare = bare.model_copy(deep=True)
    bare.metadata.pop(schema.FRAME_ID)
    linked = [n for n in stored if n.node_id != bare.node_id][::4]
    timeline = CountingTimeline(VectorStoreTimeline(linked_index.vector_store))
    contexts = find_contexts(timeline, [bare, *linked], ContextOptions())
    assert timeline.calls["overlapping"] == 1  # the bare hit's file, once
    assert timeline.calls["by_ids"] >= 1  # the others through their links
    expected = {
        **by_links(VectorStoreTimeline(linked_index.vector_store), linked, ContextOptions()),
        **by_time_ranges(VectorStoreTimeline(linked_index.vector_store), [bare], ContextOptions()),
    }
    assert view(contexts) == view(expected)
