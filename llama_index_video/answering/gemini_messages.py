"""What goes to Gemini and what comes back: chat messages to contents, responses to answers.

:class:`MessageConverter` turns LlamaIndex ``ChatMessage`` blocks into Gemini turns:

- system and developer messages become the ``system_instruction``;
- text blocks become text parts;
- image blocks become inline JPEG parts, shrunk to ``max_image_edge``, at most
  ``max_images`` per request, first come first kept (see :mod:`.images`);
- video and audio blocks become media parts: inline while the request's media stays
  within ``max_inline_bytes``, otherwise a :class:`PendingUpload` that the caller
  sends through the Files API first; at most ``max_clips`` per request. A
  ``VideoBlock``'s ``fps`` becomes the part's sampling rate.

:class:`Reply` assembles the answer from a response or from the chunks of a stream:
its text (thought parts left out), why Gemini withheld it if it did, and token usage.
"""

from __future__ import annotations

import mimetypes
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeAlias

from llama_index.core.base.llms.types import (
    AudioBlock,
    ChatMessage,
    ContentBlock,
    ImageBlock,
    TextBlock,
    VideoBlock,
)

from llama_index_video.answering.chat_llm import split_turns
from llama_index_video.answering.images import BlockBudget
from llama_index_video.errors import AnswerError

if TYPE_CHECKING:
    from google.genai import types

#: Finish or block reasons of an answer withheld by Gemini's filters.
WITHHELD: Final = frozenset(
    {
        "SAFETY",
        "RECITATION",
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "SPII",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "IMAGE_RECITATION",
    }
)
# Common aliases (from file extensions and sniffing) of the media types Gemini's docs list.
_MIMETYPE_ALIASES: Final = {
    "video/quicktime": "video/mov",
    "video/x-msvideo": "video/avi",
    "video/x-ms-wmv": "video/wmv",
    "audio/mpeg": "audio/mp3",
    "audio/x-wav": "audio/wav",
    "audio/wave": "audio/wav",
    "audio/x-flac": "audio/flac",
    "audio/x-aiff": "audio/aiff",
}


@dataclass(frozen=True)
class PendingUpload:
    """A video or audio too large to send inline: it goes through the Files API first."""

    source: Path | bytes
    mimetype: str
    label: str
    video_metadata: types.VideoMetadata | None


Turn: TypeAlias = "tuple[str, list[types.Part | PendingUpload]]"


class MessageConverter:
    """Turns one request's chat messages into Gemini turns, within its limits.

    Args:
        max_images: Most image blocks sent; later ones are dropped.
        max_image_edge: Images are shrunk to at most this many pixels on the long edge.
        max_clips: Most video or audio blocks sent; later ones are dropped.
        max_inline_bytes: Video and audio bytes sent inline in total; beyond it, uploads.
    """

    def __init__(
        self, *, max_images: int, max_image_edge: int, max_clips: int, max_inline_bytes: int
    ) -> None:
        self.max_images = max_images
        self.max_image_edge = max_image_edge
        self.max_clips = max_clips
        self.inline_left = max_inline_bytes
        self.budget = BlockBudget("Gemini")

    def convert(self, messages: Sequence[ChatMessage]) -> tuple[str | None, list[Turn]]:
        """The system instruction (``None`` if there is none) and the alternating turns.

        What had to be left out is logged as warnings, once per kind.

        Raises:
            AnswerError: A message has a role Gemini has no turn for (tool, function),
                or nothing is left to send.
        """
        converted: tuple[str | None, list[Turn]] = split_turns(
            messages, service="Gemini", assistant="model", convert=self._part
        )
        self.budget.report()
        if not converted[1]:
            raise AnswerError("Gemini: the messages hold no text or media to send")
        return converted

    def _part(self, block: ContentBlock) -> types.Part | PendingUpload | None:
        from google.genai import types

        if isinstance(block, TextBlock):
            return types.Part(text=block.text) if block.text.strip() else None
        if isinstance(block, ImageBlock):
            if not self.budget.admit("images", limit=self.max_images, option="max_images"):
                return None
            data = self.budget.jpeg(block, max_edge=self.max_image_edge)
            return types.Part.from_bytes(data=data, mime_type="image/jpeg") if data else None
        if isinstance(block, VideoBlock | AudioBlock):
            if not self.budget.admit("clips", limit=self.max_clips, option="max_clips"):
                return None
            return self._media(block)
        self.budget.unsupported(block.block_type)
        return None

    def _media(self, block: VideoBlock | AudioBlock) -> types.Part | PendingUpload | None:
        from google.genai import types

        path = Path(block.path) if block.path is not None else None
        label = path.name if path is not None else f"{block.block_type} bytes"
        mimetype = _mimetype(block)
        try:
            if mimetype is None:
                raise ValueError("unknown format; give the block a mimetype or a file extension")
            held = block.video if isinstance(block, VideoBlock) else block.audio
            if path is not None and held is None:  # else the bytes the block holds
                source: Path | bytes = path
                size = path.stat().st_size
            else:
                source = _media_bytes(block)
                size = len(source)
        except (OSError, ValueError) as exc:
            self.budget.unreadable(f"{block.block_type} {label}", exc)
            return None
        fps = block.fps if isinstance(block, VideoBlock) else None
        metadata = types.VideoMetadata(fps=fps) if fps else None
        if size > self.inline_left:
            return PendingUpload(source, mimetype, label, metadata)
        self.inline_left -= size
        data = source.read_bytes() if isinstance(source, Path) else source
        blob = types.Blob(data=data, mime_type=mimetype)
        return types.Part(inline_data=blob, video_metadata=metadata)


class Reply:
    """The answer assembled from one response, or from the chunks of a stream."""

    def __init__(self) -> None:
        self.text = ""
        self.finish_reason: str | None = None
        self.block_reason: str | None = None
        self.response_id: str | None = None
        self.model_version: str | None = None
        self._usage: types.GenerateContentResponseUsageMetadata | None = None

    @classmethod
    def of(cls, response: types.GenerateContentResponse) -> Reply:
        """The reply of a whole (not streamed) response."""
        reply = cls()
        reply.add(response)
        return reply

    def add(self, response: types.GenerateContentResponse) -> str:
        """Take in a response or stream chunk; return the answer text it adds."""
        self.response_id = response.response_id or self.response_id
        self.model_version = response.model_version or self.model_version
        self._usage = response.usage_metadata or self._usage  # a stream's last chunk has totals
        feedback = response.prompt_feedback
        if feedback is not None and feedback.block_reason is not None:
            self.block_reason = _name(feedback.block_reason)
        if not response.candidates:
            return ""
        candidate = response.candidates[0]
        if candidate.finish_reason is not None:
            self.finish_reason = _name(candidate.finish_reason)
        parts = candidate.content.parts if candidate.content and candidate.content.parts else []
        delta = "".join(p.text for p in parts if p.text and not p.thought)
        self.text += delta
        return delta

    def blocked(self) -> str | None:
        """Why Gemini withheld the answer (a block or finish reason), or ``None``."""
        if self.block_reason is not None:
            return self.block_reason
        return self.finish_reason if self.finish_reason in WITHHELD else None

    def usage(self) -> dict[str, int]:
        """Token counts, named as LlamaIndex's token counter reads them."""
        usage = self._usage
        if usage is None:
            return {"input_tokens": 0, "output_tokens": 0, "thinking_tokens": 0}
        thinking = usage.thoughts_token_count or 0
        return {
            "input_tokens": usage.prompt_token_count or 0,
            "output_tokens": (usage.candidates_token_count or 0) + thinking,
            "thinking_tokens": thinking,
        }


def _name(value: Any) -> str:
    """An SDK enum (or an unknown string the SDK passed through) as its API name."""
    return str(getattr(value, "value", value))


def _mimetype(block: VideoBlock | AudioBlock) -> str | None:
    if isinstance(block, VideoBlock):
        declared = block.video_mimetype
    else:
        declared = f"audio/{block.format}" if block.format else None
    if declared is None and block.path is not None:
        declared = mimetypes.guess_type(str(block.path))[0]
    return _MIMETYPE_ALIASES.get(declared, declared) if declared else None


def _media_bytes(block: VideoBlock | AudioBlock) -> bytes:
    stream = block.resolve_video() if isinstance(block, VideoBlock) else block.resolve_audio()
    data: bytes = stream.read()
    return data
