"""The answering instruction, context items and the multimodal messages built from them."""

from __future__ import annotations

import logging

import pytest
from llama_index.core.base.llms.types import ImageBlock, MessageRole, TextBlock
from llama_index.core.schema import ImageNode, MetadataMode, TextNode

from llama_index_video.answering.prompts import (
    NOT_FOUND_ANSWER,
    SYSTEM_PROMPT,
    VIDEO_QA_TEMPLATE,
    ContextItem,
    build_messages,
)
from llama_index_video.results import Citation


def transcript_node(start: float, end: float, text: str) -> TextNode:
    return TextNode(
        text=text,
        metadata={
            "source": "/m/talk.mp4",
            "modality": "transcript",
            "start_s": start,
            "end_s": end,
        },
    )


def frame_node(time: float, path: str, text: str = "") -> ImageNode:
    return ImageNode(
        text=text,
        image_path=path,
        metadata={"source": "/m/talk.mp4", "modality": "frame", "start_s": time},
    )


def block_summary(blocks: list) -> list[str]:
    return [b.text if isinstance(b, TextBlock) else f"<image {b.path.name}>" for b in blocks]


def test_the_instruction_asks_for_labels_and_says_what_to_do_without_an_answer():
    assert "[talk.mp4 01:34-01:41]" in SYSTEM_PROMPT
    assert "[notes.md]" in SYSTEM_PROMPT
    assert "only" in SYSTEM_PROMPT
    assert "never invent" in SYSTEM_PROMPT
    assert f'"{NOT_FOUND_ANSWER}"' in SYSTEM_PROMPT


def test_context_items_come_from_nodes():
    spoken = ContextItem.from_node(transcript_node(94.9, 101.2, "  Cross-entropy.  "))
    assert spoken.text == "Cross-entropy."
    assert spoken.citation.label == "[talk.mp4 01:34-01:41]"

    shot = ContextItem.from_node(frame_node(96.0, "/idx/f96.jpg", "On screen: Loss"))
    assert shot.text == "On screen: Loss"  # the node's text, not the image
    assert shot.citation.frame_path == "/idx/f96.jpg"

    doc = ContextItem.from_node(TextNode(text="Setup notes.", metadata={"source": "/d/notes.md"}))
    assert (doc.citation.label, doc.text) == ("[notes.md]", "Setup notes.")


def test_messages_hold_labelled_text_with_each_frame_after_its_label(frames):
    items = [
        ContextItem.from_node(transcript_node(94.9, 101.2, "We use cross-entropy.")),
        ContextItem.from_node(frame_node(96.0, str(frames[0]), "On screen: Loss")),
        ContextItem.from_node(frame_node(130.0, str(frames[1]))),
        ContextItem.from_node(TextNode(text="Setup notes.", metadata={"source": "/d/notes.md"})),
    ]
    system, question = build_messages("  Which loss?  ", items)

    assert (system.role, system.content) == (MessageRole.SYSTEM, SYSTEM_PROMPT)
    assert question.role == MessageRole.USER
    assert block_summary(question.blocks) == [
        "Moments:",
        "[talk.mp4 01:34-01:41] transcript:\nWe use cross-entropy.",
        "[talk.mp4 01:36] video frame:\nOn screen: Loss",
        "<image frame_00.jpg>",
        "[talk.mp4 02:10] video frame:",
        "<image frame_01.jpg>",
        "[notes.md] document:\nSetup notes.",
        "Question: Which loss?",
    ]


@pytest.mark.parametrize("max_images", [0, 2, 5])
def test_the_number_of_frames_is_bounded_and_the_first_are_kept(frames, max_images):
    items = [
        ContextItem.from_node(frame_node(10.0 * i, str(f), f"slide {i}"))
        for i, f in enumerate(frames[:5])
    ]
    (_, question) = build_messages("q", items, max_images=max_images)

    images = [b for b in question.blocks if isinstance(b, ImageBlock)]
    assert [b.path for b in images] == frames[:max_images]
    texts = [b.text for b in question.blocks if isinstance(b, TextBlock)]
    assert all(any(f"slide {i}" in t for t in texts) for i in range(5))


def test_the_frames_and_clip_shown_are_read_into_the_message(frames, tmp_path):
    """The model is called after the read of the index ends, and a writer's commit step
    may delete a replaced file's frames and clips meanwhile: the message holds their
    bytes, not only their paths (it sent none of them once the files were gone)."""
    from llama_index.core.base.llms.types import VideoBlock

    clip = tmp_path / "clip.mp4"
    clip.write_bytes(b"\x00\x00\x00\x18ftypmp42 a clip's bytes")
    node = frame_node(10.0, str(frames[0]), "slide 0")
    items = [ContextItem(citation=Citation.from_node(node), text="slide 0", clip=clip)]
    items.append(ContextItem.from_node(frame_node(20.0, str(frames[1]), "slide 1")))
    shown = {path: path.read_bytes() for path in (frames[0], frames[1], clip)}
    (_, question) = build_messages("q", items)
    for path in shown:
        path.unlink()

    images = [b.resolve_image().read() for b in question.blocks if isinstance(b, ImageBlock)]
    assert images == [shown[frames[0]], shown[frames[1]]]
    [video] = [b for b in question.blocks if isinstance(b, VideoBlock)]
    assert video.resolve_video().read() == shown[clip] and video.path == clip


def test_a_missing_frame_file_is_left_out_with_a_warning(tmp_path, caplog):
    item = ContextItem.from_node(frame_node(5.0, str(tmp_path / "gone.jpg"), "Said: hello"))
    with caplog.at_level(logging.WARNING, logger="llama_index_video"):
        (_, question) = build_messages("q", [item])
    assert block_summary(question.blocks) == [
        "Moments:",
        "[talk.mp4 00:05] video frame:\nSaid: hello",
        "Question: q",
    ]
    assert "gone.jpg" in caplog.text


@pytest.mark.parametrize(
    ("question", "items", "max_images", "message"),
    [
        (" ", "one", 8, "question is empty"),
        ("q", "none", 8, "no retrieved moments"),
        ("q", "one", -1, "max_images"),
    ],
)
def test_bad_input_is_rejected(question, items, max_images, message):
    chosen = [] if items == "none" else [ContextItem(citation=_doc(), text="x")]
    with pytest.raises(ValueError, match=message):
        build_messages(question, chosen, max_images=max_images)


def _doc() -> Citation:
    return Citation.from_node(TextNode(text="x", metadata={"source": "/d/notes.md"}))


def test_the_query_engine_template_carries_the_instruction_labels_and_frames(frames):
    from llama_index.core.base.llms.types import ChatMessage

    nodes = [
        TextNode(text="We use cross-entropy.", metadata={"label": "[talk.mp4 01:34-01:41]"}),
        ImageNode(image_path=str(frames[0]), metadata={"label": "[talk.mp4 01:36]"}),
    ]
    context = [
        ChatMessage(blocks=n.get_content_blocks(metadata_mode=MetadataMode.LLM)) for n in nodes
    ]
    system, question = VIDEO_QA_TEMPLATE.format_messages(
        context_messages=context, query_str="Which loss?"
    )

    assert (system.role, system.content) == (MessageRole.SYSTEM, SYSTEM_PROMPT)
    texts = [b.text for b in question.blocks if isinstance(b, TextBlock)]
    joined = "\n".join(texts)
    assert "label: [talk.mp4 01:34-01:41]\n\nWe use cross-entropy." in joined
    assert joined.rstrip().endswith("Question: Which loss?")
    (image,) = [b for b in question.blocks if isinstance(b, ImageBlock)]
    assert str(image.url).startswith("data:image/jpeg;base64,")
