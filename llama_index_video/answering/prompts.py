"""What the answering model is told, and how retrieved moments become its input.

One instruction serves both ways of answering: :func:`build_messages` (our own
engine: labelled text with each frame as an image right after its label, a bounded
number of images) and :data:`VIDEO_QA_TEMPLATE`, the same instruction as a
``chat_content_qa_template`` for ``RetrieverQueryEngine.from_args(...,
multimodal=True)``, whose default prompt tells the model never to refer to its
context and so never to cite it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from llama_index.core.base.llms.types import (
    AudioBlock,
    ChatMessage,
    ContentBlock,
    ImageBlock,
    MessageRole,
    TextBlock,
    VideoBlock,
)
from llama_index.core.prompts import RichPromptTemplate
from llama_index.core.schema import BaseNode, ImageNode, MetadataMode, Node

from llama_index_video.answering.not_found import NOT_FOUND_ANSWER, not_found_answer
from llama_index_video.results import Citation

logger = logging.getLogger(__name__)


def system_prompt(not_found: str = NOT_FOUND_ANSWER) -> str:
    """The system prompt, telling the model to reply ``not_found`` (the sentence in the
    question's language, :func:`~.not_found.not_found_answer`) when the moments do not
    answer the question."""
    return f"""\
You answer questions about video and audio recordings and documents, using only the \
moments you are given.

Each moment begins with its label: [talk.mp4 01:34-01:41] for a stretch of a recording, \
[talk.mp4 01:36] for an instant, [notes.md] for a document. A video frame is the image \
right after its label.

Rules:
1. Use only what the moments say or show, not prior knowledge.
2. After each statement, cite the moment(s) it rests on by copying their labels exactly, \
each in its own square brackets, e.g. "The loss is cross-entropy [talk.mp4 01:34-01:41]."
3. Cite only labels that appear in the moments; never invent a label, a file or a time.
4. If the moments do not contain the answer, reply with exactly: "{not_found}" \
Then, in one sentence, you may say what the moments do cover.
5. Be concise; do not describe the moments themselves unless asked."""


SYSTEM_PROMPT: Final = system_prompt()

_KINDS: Final = {
    "transcript": "transcript",
    "frame": "video frame",
    "ocr": "on-screen text",
    "text": "document",
    "video": "video clip",
    "audio": "audio",
}

VIDEO_QA_TEMPLATE: Final = RichPromptTemplate(
    '{% chat role="system" %}\n'
    + SYSTEM_PROMPT
    + """
{% endchat %}
{% chat role="user" %}
Moments:
{% for message in context_messages %}
{% for block in message.blocks %}
{% if block.block_type == 'text' %}
{{ block.text }}
{% elif block.block_type == 'image' %}
{{ block.inline_url() | image }}
{% elif block.block_type == 'audio' %}
{{ block.inline_url() | audio }}
{% elif block.block_type == 'video' %}
{{ block.inline_url() | video }}
{% endif %}

{% endfor %}
{% endfor %}
Question: {{ query_str }}
{% endchat %}
"""
)
"""``chat_content_qa_template`` for ``RetrieverQueryEngine.from_args(..., multimodal=True)``."""


@dataclass(frozen=True)
class ContextItem:
    """One retrieved moment as the model sees it: where it is, and what it says.

    Attributes:
        citation: The moment's place (label, file, times, frame, link); also what
            the answer's labels are checked against.
        text: Transcript text, on-screen text, a document chunk or a frame's
            description; may be empty for a bare frame.
        clip: A retrieved video or audio clip file (clip nodes), for models that take
            media (Gemini); None otherwise.
        clip_mimetype: The clip's MIME type.
    """

    citation: Citation
    text: str
    clip: Path | None = None
    clip_mimetype: str | None = None

    @classmethod
    def from_node(cls, node: BaseNode, *, citation: Citation | None = None) -> ContextItem:
        """The context item of a retrieved node.

        Args:
            node: The node (a ``MomentNode`` for a post-processed hit).
            citation: The moment's citation when already known (a search hit's);
                else :meth:`Citation.from_node`.
        """
        text = node.text if isinstance(node, ImageNode) else node.get_content(MetadataMode.NONE)
        resource = (node.video_resource or node.audio_resource) if isinstance(node, Node) else None
        clip = Path(resource.path) if resource is not None and resource.path else None
        return cls(
            citation=citation or Citation.from_node(node),
            text=text.strip(),
            clip=clip,
            clip_mimetype=resource.mimetype if clip is not None and resource else None,
        )


def build_messages(
    question: str, items: Sequence[ContextItem], *, max_images: int = 8, max_clips: int = 1
) -> list[ChatMessage]:
    """The system message and the multimodal user message for one question.

    Each item becomes ``[label] kind:`` and its text; a frame's image follows its
    label while fewer than ``max_images`` are attached (items come most relevant
    first, so the best frames are kept); a retrieved clip follows its label as a
    ``VideoBlock``/``AudioBlock`` while fewer than ``max_clips`` are attached (Gemini
    watches it; models without video input leave it out with a warning). Media whose
    file is missing is left out with a warning; the item's text stays.

    Args:
        question: The user's question.
        items: The retrieved moments, most relevant first.
        max_images: Most frames to attach.
        max_clips: Most video or audio clips to attach.

    Returns:
        ``[system message, user message]``.

    Raises:
        ValueError: The question is empty, there are no items (answer
            :data:`NOT_FOUND_ANSWER` without asking a model), or ``max_images`` < 0.
    """
    if not question.strip():
        raise ValueError("the question is empty")
    if not items:
        raise ValueError("no retrieved moments: answer NOT_FOUND_ANSWER without a model")
    if max_images < 0:
        raise ValueError(f"max_images must be >= 0, got {max_images}")
    blocks: list[ContentBlock] = [TextBlock(text="Moments:")]
    images = clips = 0
    for item in items:
        moment = item.citation
        kind = _KINDS.get(moment.modality, moment.modality)
        blocks.append(TextBlock(text=f"{moment.label} {kind}:\n{item.text}".rstrip()))
        if item.clip is not None and clips < max_clips:
            data = _media(item.clip, "clip", moment.label)
            if data is not None:
                blocks.append(_clip_block(item.clip, data, item.clip_mimetype, moment.modality))
                clips += 1
        frame = Path(moment.frame_path) if moment.frame_path else None
        if frame is None or images >= max_images:
            continue
        image = _media(frame, "frame", moment.label)
        if image is not None:
            blocks.append(ImageBlock(image=image, path=frame))
            images += 1
    blocks.append(TextBlock(text=f"Question: {question.strip()}"))
    return [
        ChatMessage(role=MessageRole.SYSTEM, content=system_prompt(not_found_answer(question))),
        ChatMessage(role=MessageRole.USER, blocks=blocks),
    ]


def _media(path: Path, kind: str, label: str) -> bytes | None:
    """The bytes of a frame or clip, read as the message is built: the message never
    needs the file again (a writer's commit step may delete a replaced file's media
    while the model answers). None, with a warning, when it cannot be read."""
    try:
        return path.read_bytes()
    except OSError:
        logger.warning("%s %s of %s is missing; sent without it", kind, path, label)
        return None


def _clip_block(path: Path, data: bytes, mimetype: str | None, modality: str) -> ContentBlock:
    if modality == "audio":
        return AudioBlock(audio=data, path=path, format=path.suffix.lstrip(".") or "mp3")
    return VideoBlock(video=data, path=path, video_mimetype=mimetype or "video/mp4")
