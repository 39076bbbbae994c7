"""The postprocessor on sentence-level nodes from the ground truth, in Chroma and in a docstore."""

from __future__ import annotations

import base64
import json

import pytest
from llama_index.core import StorageContext, VectorStoreIndex
from llama_index.core.postprocessor import SimilarityPostprocessor
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import ImageNode, NodeWithScore, TextNode

from llama_index_video import schema
from llama_index_video.postprocessing.timestamp_frame import MomentNode, TimestampFramePostprocessor
from llama_index_video.reader import moments
from llama_index_video.store.collection import open_chroma

WHY_WARM = "Why does the temperature rise with altitude in the stratosphere?"


@pytest.fixture(scope="module")
def ozone_nodes(ozone_source, ozone_units, ozone_frames):
    """Units and frames with no links and no on-screen text: found by time ranges."""
    return [n.model_copy(deep=True) for n in ozone_units] + [
        moments.frame_node(ozone_source, frame, spoken="", note=None) for frame in ozone_frames
    ]


@pytest.fixture(scope="module")
def chroma_index(tmp_path_factory, ozone_nodes, embed_model):
    store = open_chroma(tmp_path_factory.mktemp("chroma"))
    context = StorageContext.from_defaults(vector_store=store)
    return VectorStoreIndex(ozone_nodes, storage_context=context, embed_model=embed_model)


@pytest.fixture(scope="module")
def memory_index(ozone_nodes, embed_model):
    return VectorStoreIndex(ozone_nodes, embed_model=embed_model)


def _chroma_postprocessor(index, **options):
    return TimestampFramePostprocessor(vector_store=index.vector_store, **options)


def _hit(index, text, score=0.9):
    node = next(n for n in index.vector_store.get_nodes(None) if text in n.get_content())
    return NodeWithScore(node=node, score=score)


def test_chroma_alone_has_no_docstore_to_follow(chroma_index):
    # Why PrevNextNodePostprocessor finds nothing: no transcript node reaches the docstore.
    docs = chroma_index.docstore.docs.values()
    assert not [d for d in docs if d.metadata.get(schema.MODALITY) == "transcript"]


def test_the_next_unit_completes_a_split_answer(chroma_index):
    hits = chroma_index.as_retriever(similarity_top_k=1).retrieve(WHY_WARM)
    assert "because" in hits[0].node.get_content()
    moment = _chroma_postprocessor(chroma_index).postprocess_nodes(hits)[0].node
    assert isinstance(moment, MomentNode)
    assert "ultraviolet radiation is absorbed by the ozone layer" in moment.get_content()
    assert [round(c.start) for c in moment.context] == [30, 36, 42]
    assert moment.metadata[schema.START_S] == 36.0  # the hit's own span is kept


def test_the_frame_on_screen_during_the_hit_is_attached(chroma_index):
    hit = _hit(chroma_index, "Most of the ozone in our atmosphere")
    moment = _chroma_postprocessor(chroma_index).postprocess_nodes([hit])[0].node
    assert moment.frame_time == pytest.approx(12.0, abs=0.25)  # the chart with the axis label
    assert moment.image_path and moment.image_path.endswith(".jpg")


def test_nearest_frame_choice_prefers_time_distance(chroma_index):
    hit = _hit(chroma_index, "It absorbs one hundred percent")
    inside = _chroma_postprocessor(chroma_index).postprocess_nodes([hit])[0].node
    nearest = (
        _chroma_postprocessor(chroma_index, frame_choice="nearest")
        .postprocess_nodes([_hit(chroma_index, "It absorbs one hundred percent")])[0]
        .node
    )
    assert inside.frame_time == pytest.approx(22.53, abs=0.25)
    assert nearest.frame_time == pytest.approx(36.0, abs=0.25)  # 6.5 s away beats 7 s


def test_a_hit_already_in_view_merges_and_nothing_is_read_twice(chroma_index):
    hits = [
        _hit(chroma_index, "It absorbs one hundred percent", 0.8),  # context 23.5-39.4
        _hit(chroma_index, "In nineteen eighty five", 0.7),  # outside that: its own moment
        _hit(chroma_index, "rises with altitude because", 0.6),  # inside it: merged
    ]
    merged = _chroma_postprocessor(chroma_index).postprocess_nodes(hits)
    assert [h.score for h in merged] == [0.8, 0.7]
    first, second = (h.node for h in merged)
    assert first.hit_ids == [hits[0].node.node_id, hits[2].node.node_id]
    assert first.metadata[schema.START_S] == 29.5  # the best hit keeps its span
    assert not {c.node_id for c in first.context} & {c.node_id for c in second.context}
    separate = _chroma_postprocessor(chroma_index, merge=False).postprocess_nodes(hits)
    assert [h.score for h in separate] == [0.8, 0.7, 0.6]


def test_window_seconds_attaches_everything_nearby(chroma_index):
    hit = _hit(chroma_index, "rises with altitude because")
    moment = _chroma_postprocessor(chroma_index, window_seconds=14).postprocess_nodes([hit])[0].node
    assert [round(c.start) for c in moment.context] == [24, 30, 36, 42, 49]


def test_docstore_lookup_gives_the_same_context(memory_index, chroma_index):
    query = memory_index.as_retriever(similarity_top_k=3).retrieve(WHY_WARM)
    from_docstore = TimestampFramePostprocessor(docstore=memory_index.docstore).postprocess_nodes(
        query
    )
    from_chroma = _chroma_postprocessor(chroma_index).postprocess_nodes(
        chroma_index.as_retriever(similarity_top_k=3).retrieve(WHY_WARM)
    )
    assert [[c.node_id for c in h.node.context] for h in from_docstore] == [
        [c.node_id for c in h.node.context] for h in from_chroma
    ]


def test_untimed_nodes_pass_through(chroma_index):
    document = NodeWithScore(node=TextNode(text="Deploys happen on Tuesdays."), score=0.5)
    assert _chroma_postprocessor(chroma_index).postprocess_nodes([document]) == [document]


def _frame(index, seconds):
    return next(
        n
        for n in index.vector_store.get_nodes(None)
        if isinstance(n, ImageNode)
        and n.metadata[schema.FRAME_TIME] == pytest.approx(seconds, abs=0.3)
    )


@pytest.mark.parametrize("store", ["chroma_index", "linked_index"])
def test_a_lower_ranked_frame_shown_before_the_hit_does_not_replace_its_frame(store, request):
    index = request.getfixturevalue(store)
    hits = [
        _hit(index, "rises with altitude because", 0.8),  # spoken 36.0-39.4 over the 36 s slide
        NodeWithScore(node=_frame(index, 36.0), score=0.7),
        NodeWithScore(node=_frame(index, 22.53), score=0.6),  # in the context, not the hit
    ]
    moment = TimestampFramePostprocessor(vector_store=index.vector_store).postprocess_nodes(hits)
    assert len(moment) == 1
    assert moment[0].node.frame_time == pytest.approx(36.0, abs=0.25)


def test_a_frame_hit_gets_the_speech_around_it(chroma_index):
    frame = _frame(chroma_index, 64)
    moment = _chroma_postprocessor(chroma_index).postprocess_nodes(
        [NodeWithScore(node=frame, score=1)]
    )
    context = " ".join(c.text for c in moment[0].node.context)
    assert "Montreal Protocol" in context
    assert moment[0].node.image_path == frame.metadata[schema.IMAGE_PATH]


def test_composes_after_other_postprocessors_in_a_query_engine(chroma_index):
    from llama_index_video.answering.claude import ClaudeMultimodalLLM
    from tests.fakes.anthropic_server import FakeAnthropicServer, text_reply

    with FakeAnthropicServer() as server:
        server.enqueue(text_reply("Because UV is absorbed [ozone_explainer.mp4 00:42-00:44]."))
        llm = ClaudeMultimodalLLM(api_key=server.api_key, base_url=server.url, max_retries=0)
        engine = RetrieverQueryEngine.from_args(
            chroma_index.as_retriever(similarity_top_k=2),
            llm=llm,
            multimodal=True,
            node_postprocessors=[
                SimilarityPostprocessor(similarity_cutoff=0.1),
                _chroma_postprocessor(chroma_index),
            ],
        )
        response = engine.query(WHY_WARM)
        body = server.messages_requests()[0].body
    assert "UV is absorbed" in str(response)
    sent = json.dumps(body)
    assert "ultraviolet radiation is absorbed by the ozone layer" in sent
    assert "[ozone_explainer.mp4 00:42-00:44]" in sent
    images = [
        b
        for m in body["messages"]
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "image"
    ]
    assert images and base64.b64decode(images[0]["source"]["data"])[:2] == b"\xff\xd8"


def test_needs_somewhere_to_look():
    with pytest.raises(ValueError, match=r"pass vector_store=.* or docstore="):
        TimestampFramePostprocessor()


def _without_links(hit):
    node = hit.node.model_copy(deep=True)
    for key in (schema.FRAME_ID, schema.UNIT_ID, schema.OCR_IDS):
        node.metadata.pop(key, None)
    return NodeWithScore(node=node, score=hit.score)


@pytest.mark.parametrize("found_by", ["links", "time_ranges"])
def test_the_text_on_the_moments_frame_reaches_its_context(linked_index, found_by):
    # "What does the y-axis say?": the label is shown, never said, while this is spoken.
    hit = _hit(linked_index, "Most of the ozone in our atmosphere")
    if found_by == "time_ranges":
        hit = _without_links(hit)
    moment = TimestampFramePostprocessor(vector_store=linked_index.vector_store)
    node = moment.postprocess_nodes([hit])[0].node
    on_screen = [c for c in node.context if c.modality == "ocr"]
    assert len(on_screen) == 1
    assert on_screen[0].start == pytest.approx(12.0, abs=0.3)
    assert on_screen[0].end == pytest.approx(21.0, abs=0.3)
    assert on_screen[0].text.splitlines() == [
        "Temperature in the atmosphere",
        "ALTITUDE (km)",
        "TEMPERATURE (°C)",
    ]
    assert f"{on_screen[0].label} On screen: Temperature in the atmosphere; ALTITUDE (km)" in (
        node.get_content()
    )
    assert node.frame_time == pytest.approx(12.0, abs=0.3)


def test_on_screen_text_is_handed_on_once(linked_index):
    hits = [  # two moments 6 s apart, both spoken over the UV absorption slide
        _hit(linked_index, "It absorbs one hundred percent", 0.8),
        _hit(linked_index, "ninety percent of ultraviolet B", 0.7),
    ]
    first, second = TimestampFramePostprocessor(
        vector_store=linked_index.vector_store, merge=False
    ).postprocess_nodes(hits)
    assert [c.text.splitlines()[0] for c in first.node.context if c.modality == "ocr"] == [
        "UV absorption"
    ]
    assert not [c for c in second.node.context if c.modality == "ocr"]


def test_an_ocr_hit_is_its_own_on_screen_text(linked_index):
    text = next(
        n
        for n in linked_index.vector_store.get_nodes(None)
        if n.metadata[schema.MODALITY] == "ocr" and "Signed by 197" in n.get_content()
    )
    node = _chroma_postprocessor(linked_index).postprocess_nodes([NodeWithScore(node=text)])[0].node
    assert [c.node_id for c in node.context if c.modality == "ocr"] == [text.node_id]
    assert node.get_content().count("Signed by 197 countries") == 1


def test_settings_and_store_survive_to_dict_and_from_dict(chroma_index, memory_index):
    for kept in (
        _chroma_postprocessor(chroma_index, neighbours=2, frame_choice="nearest"),
        TimestampFramePostprocessor(docstore=memory_index.docstore, window_seconds=5.0),
    ):
        again = TimestampFramePostprocessor.from_dict(kept.to_dict())
        assert again.to_dict() == kept.to_dict()
        assert again.vector_store is kept.vector_store and again.docstore is kept.docstore
    hit = _hit(chroma_index, "rises with altitude because")
    original = _chroma_postprocessor(chroma_index).postprocess_nodes([hit])[0].node
    rebuilt = TimestampFramePostprocessor.from_dict(_chroma_postprocessor(chroma_index).to_dict())
    assert rebuilt.postprocess_nodes([hit])[0].node.context == original.context


def test_json_says_to_exclude_the_store_and_pass_it_back(chroma_index):
    kept = _chroma_postprocessor(chroma_index, neighbours=2)
    with pytest.raises(TypeError, match=r'exclude=\{"vector_store", "docstore"\}'):
        kept.to_json()
    text = kept.to_json(exclude={"vector_store", "docstore"})
    with pytest.raises(ValueError, match="pass vector_store="):
        TimestampFramePostprocessor.from_json(text)
    again = TimestampFramePostprocessor.from_json(text, vector_store=chroma_index.vector_store)
    assert again.neighbours == 2 and again.vector_store is chroma_index.vector_store


@pytest.mark.parametrize("top_k", [6, 7, 8])
def test_the_answer_is_shown_with_the_slide_on_screen_while_it_is_spoken(
    example_index, timeline, top_k
):
    # The README's recipe retrieves 8: lower-ranked frames land inside a moment's context.
    example_index.check_store()  # its Chroma opened again if another index of it closed
    retriever = VectorStoreIndex.from_vector_store(
        example_index.vector_store, embed_model=example_index.embed_model
    ).as_retriever(similarity_top_k=top_k)
    hits = retriever.retrieve("Why does the stratosphere warm up?")
    results = example_index.postprocessor().postprocess_nodes(hits)
    spoken = next(
        h.node
        for h in results
        if h.node.metadata[schema.MODALITY] == "transcript"
        and h.node.metadata[schema.START_S] <= 40 <= h.node.metadata[schema.END_S]
    )
    start, end = spoken.metadata[schema.START_S], spoken.metadata[schema.END_S]
    slide = max(
        timeline["ozone_explainer.mp4"]["slides"],
        key=lambda s: min(end, s["end"]) - max(start, s["start"]),
    )
    assert slide["title"] == "Stratospheric warming"
    assert spoken.frame_time is not None
    assert slide["start"] - 0.3 <= spoken.frame_time < slide["end"], spoken.frame_time
