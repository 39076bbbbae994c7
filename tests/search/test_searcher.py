"""hit_from_node: a hit shows the label stored at ingest; nodes without one get it formatted."""

from __future__ import annotations

from llama_index.core.schema import NodeWithScore, TextNode

from llama_index_video import schema
from llama_index_video.search.searcher import hit_from_node


def test_the_hit_label_is_the_one_stored_at_ingest(talk_transcript):
    # A label as an older version (or another tool) stored it: shown as stored, not redone.
    talk_transcript.metadata[schema.LABEL] = "[Talk, part 1 01:34-01:41]"
    hit = hit_from_node(NodeWithScore(node=talk_transcript, score=0.7))
    assert hit.label == "[Talk, part 1 01:34-01:41]"
    assert hit.citation.label == hit.label


def test_the_stored_label_stays_when_the_file_moved(talk_transcript):
    talk_transcript.metadata[schema.CONTENT_HASH] = "ab" * 32
    hit = hit_from_node(
        NodeWithScore(node=talk_transcript, score=0.7), locate=lambda key, stored: "/new/talk.mp4"
    )
    assert hit.source == "/new/talk.mp4"
    assert hit.label == "[talk.mp4 01:34-01:41]"


def test_a_node_without_a_label_gets_one_formatted(talk_transcript):
    metadata = {k: v for k, v in talk_transcript.metadata.items() if k != schema.LABEL}
    hit = hit_from_node(NodeWithScore(node=TextNode(text="x", metadata=metadata), score=0.5))
    assert hit.label == schema.moment_label("talk.mp4", 94.9, 101.2) == "[talk.mp4 01:34-01:41]"


def test_a_foreign_node_with_no_metadata_is_labelled_by_its_id():
    node = TextNode(id_="doc-1", text="plain text")
    hit = hit_from_node(NodeWithScore(node=node, score=0.5))
    assert hit.label == "[doc-1]" and hit.start is None
