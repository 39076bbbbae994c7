"""What one embedding input is, where it comes from, and how inputs share requests.

Every input becomes exactly one ``types.Content`` (one vector): Gemini Embedding 2
aggregates all parts of a content into a single vector, and the SDK folds a list
of strings or parts passed as ``contents`` into ONE content. So inputs are always
sent as a list of ``types.Content``, one per input.

Inputs come from plain text (with the task prefix already applied), from media
files (paths, bytes, :class:`~llama_index_video.media.clips.Clip`), from the
:class:`~llama_index_video.reader.nodes.MediaText` that frame and clip nodes
return as their embedding text, or from LlamaIndex nodes carrying
``video_resource`` / ``audio_resource`` / ``image_resource`` (the first present
wins; only a node without media is embedded as text).

The model's documented limits are checked before anything is sent, so a clip too
long or a format it does not take fails as that one item, with a message saying
what to do, instead of a rejected request.
"""

from __future__ import annotations

import base64
import io
import mimetypes
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal

from llama_index.core.schema import BaseNode, ImageNode, MediaResource, MetadataMode, Node

from llama_index_video.errors import EmbeddingError, MediaError
from llama_index_video.media.clips import Clip
from llama_index_video.media.limits import MAX_SECONDS
from llama_index_video.media.probe import probe
from llama_index_video.reader.nodes import MediaText

if TYPE_CHECKING:
    from google.genai import types

Kind = Literal["text", "image", "video", "audio", "document"]

#: Slack on those limits: container timestamps add a few hundredths of a second.
DURATION_SLACK: Final = 0.5
MAX_IMAGES_PER_REQUEST: Final = 6
MAX_ITEMS_PER_REQUEST: Final = 100  # batchEmbedContents

_ACCEPTED: Final[dict[str, dict[str, str]]] = {
    "image": {".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png"},
    "video": {".mp4": "video/mp4", ".m4v": "video/mp4", ".mov": "video/mov"},
    "audio": {".mp3": "audio/mp3", ".wav": "audio/wav"},
    "document": {".pdf": "application/pdf"},
}
_ADVICE: Final[dict[str, str]] = {
    "image": "it is converted to PNG when Pillow can read it",
    "video": "cut it into MP4 clips with llama_index_video.media.clips.cut_clips",
    "audio": "cut it into MP3 clips with cut_clips(..., modality='audio')",
    "document": "convert it to PDF",
}
_MODALITY_KIND: Final[dict[str, Kind]] = {"frame": "image", "video": "video", "audio": "audio"}


@dataclass(frozen=True)
class EmbedInput:
    """One thing to embed as one vector: text, or one media file or blob."""

    kind: Kind
    label: str
    text: str | None = None
    path: Path | None = None
    data: bytes | None = None
    mimetype: str | None = None

    @property
    def size(self) -> int:
        """Bytes this input adds to a request when sent inline."""
        if self.text is not None:
            return len(self.text.encode())
        if self.data is not None:
            return len(self.data)
        return self.path.stat().st_size if self.path is not None else 0

    def needs_upload(self, max_inline_bytes: int) -> bool:
        """Media too large to send inline goes through the Files API."""
        return self.kind != "text" and self.size > max_inline_bytes

    def content(self, uploaded: types.File | None = None) -> types.Content:
        """The one ``types.Content`` for this input (``file_data`` once uploaded)."""
        from google.genai import types

        if self.text is not None:
            part = types.Part(text=self.text)
        elif uploaded is not None and uploaded.uri:
            part = types.Part.from_uri(file_uri=uploaded.uri, mime_type=self.mimetype)
        else:
            data = self.data if self.data is not None else _read(self.path)
            part = types.Part.from_bytes(data=data, mime_type=self.mimetype or "")
        return types.Content(parts=[part])


def text_input(text: str, template: str) -> EmbedInput:
    """A text input with the task template (``{text}`` placeholder) applied."""
    shown = text if len(text) <= 40 else text[:39] + "…"
    return EmbedInput(kind="text", label=f"text {shown!r}", text=template.format(text=text))


def media_input(
    kind: Kind, source: str | Path | bytes | io.IOBase | Clip, *, mimetype: str | None = None
) -> EmbedInput:
    """A media input from a path, bytes, a binary stream or a :class:`Clip`.

    Raises:
        MediaError: the file does not exist.
        EmbeddingError: the format or the duration is outside what the model takes.
    """
    if isinstance(source, Clip):
        if source.modality != kind:
            raise EmbeddingError(
                f"{source.path.name} is a {source.modality} clip, not {kind}: "
                f"use get_{source.modality}_embedding"
            )
        return media_input(kind, source.path, mimetype=source.mimetype)
    if isinstance(source, bytes | io.IOBase):
        data = source if isinstance(source, bytes) else source.read()
        return _blob_input(kind, data, mimetype, label=f"{kind} bytes")
    path = Path(source)
    if not path.is_file():
        raise MediaError(path, "file not found")
    mimetype = mimetype or _ACCEPTED[kind].get(path.suffix.lower())
    if kind == "image" and mimetype not in _ACCEPTED["image"].values():
        return _blob_input(kind, path.read_bytes(), None, label=path.name)
    _check_accepted(kind, mimetype, path.name)
    if kind in MAX_SECONDS:
        _check_duration(kind, path)
    return EmbedInput(kind=kind, label=path.name, path=path, mimetype=mimetype)


def input_for_text(text: str, template: str) -> EmbedInput:
    """The input behind an embedding text: the media a ``MediaText`` carries, else the text."""
    if isinstance(text, MediaText):
        kind = _MODALITY_KIND.get(text.modality)
        if kind is None:
            raise EmbeddingError(f"cannot embed {text.media_path.name}: modality {text.modality}")
        return media_input(kind, text.media_path, mimetype=_normalised(kind, text.mimetype))
    return text_input(text, template)


def input_for_node(node: BaseNode, template: str) -> EmbedInput:
    """The input for a node: its video, audio or image when it has one, else its text."""
    content = node.get_content(metadata_mode=MetadataMode.EMBED)
    if isinstance(content, MediaText):
        return input_for_text(content, template)
    if isinstance(node, Node):
        resources: tuple[tuple[Kind, MediaResource | None], ...] = (
            ("video", node.video_resource),
            ("audio", node.audio_resource),
            ("image", node.image_resource),
        )
        for kind, resource in resources:
            if resource is not None and (resource.path or resource.data or resource.url):
                return _resource_input(kind, resource, node.node_id)
    if isinstance(node, ImageNode) and (node.image or node.image_path or node.image_url):
        if node.image:
            return _blob_input("image", base64.b64decode(node.image), None, label=node.node_id)
        if node.image_path:
            return media_input("image", node.image_path, mimetype=node.image_mimetype)
        raise EmbeddingError(f"image node {node.node_id} has only a URL: download it first")
    return text_input(content, template)


def pack(
    inputs: Sequence[EmbedInput],
    *,
    max_items: int,
    max_bytes: int,
    per_request_limits: bool,
) -> list[list[int]]:
    """Group input positions into requests, in order.

    A request holds at most ``max_items`` inputs and ``max_bytes`` of inline data
    (uploaded media counts as nothing). With ``per_request_limits`` (one
    ``batchEmbedContents`` call), it also holds at most six images and one
    video, audio or PDF, the model's limits per request.
    """
    groups: list[list[int]] = []
    current: list[int] = []
    size = images = heavy = 0
    for index, item in enumerate(inputs):
        item_size = 0 if item.needs_upload(max_bytes) else item.size
        is_image, is_heavy = item.kind == "image", item.kind in ("video", "audio", "document")
        full = (
            len(current) >= max_items
            or size + item_size > max_bytes
            or (per_request_limits and is_image and images >= MAX_IMAGES_PER_REQUEST)
            or (per_request_limits and is_heavy and heavy >= 1)
        )
        if current and full:
            groups.append(current)
            current, size, images, heavy = [], 0, 0, 0
        current.append(index)
        size, images, heavy = size + item_size, images + is_image, heavy + is_heavy
    if current:
        groups.append(current)
    return groups


def _resource_input(kind: Kind, resource: MediaResource, node_id: str) -> EmbedInput:
    if resource.path is not None:
        return media_input(kind, resource.path, mimetype=_normalised(kind, resource.mimetype))
    if resource.data is not None:
        data = base64.b64decode(resource.data)  # MediaResource keeps its data base64-encoded
        return _blob_input(kind, data, _normalised(kind, resource.mimetype), label=node_id)
    raise EmbeddingError(f"the {kind} of node {node_id} has only a URL: download it first")


def _blob_input(kind: Kind, data: bytes, mimetype: str | None, *, label: str) -> EmbedInput:
    if kind == "image":
        data, mimetype = _png_or_jpeg(data, label)
    mimetype = mimetype or _sniff(data)
    _check_accepted(kind, mimetype, label)
    return EmbedInput(kind=kind, label=label, data=data, mimetype=mimetype)


def _sniff(data: bytes) -> str | None:
    """The mimetype of media bytes from their first bytes (the formats the model takes)."""
    if data[4:8] == b"ftyp":
        return "video/mov" if data[8:10] == b"qt" else "video/mp4"
    if data.startswith((b"ID3", b"\xff\xfb", b"\xff\xf3", b"\xff\xf2")):
        return "audio/mp3"
    if data.startswith(b"RIFF") and data[8:12] == b"WAVE":
        return "audio/wav"
    if data.startswith(b"%PDF"):
        return "application/pdf"
    return None


def _png_or_jpeg(data: bytes, label: str) -> tuple[bytes, str]:
    """Images as PNG or JPEG (all the model takes); anything else is converted to PNG."""
    if data.startswith(b"\xff\xd8\xff"):
        return data, "image/jpeg"
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return data, "image/png"
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as image:
            buffer = io.BytesIO()
            image.save(buffer, format="PNG")
    except (UnidentifiedImageError, OSError) as exc:
        raise EmbeddingError(f"{label} is not an image Pillow can read") from exc
    return buffer.getvalue(), "image/png"


def _normalised(kind: Kind, mimetype: str | None) -> str | None:
    """Map common aliases (``audio/mpeg``, ``video/quicktime``) to the names Gemini uses."""
    if mimetype is None:
        return None
    extension = mimetypes.guess_extension(mimetype) or ""
    return _ACCEPTED[kind].get(extension, mimetype)


def _check_accepted(kind: Kind, mimetype: str | None, label: str) -> None:
    if mimetype not in _ACCEPTED[kind].values():
        accepted = ", ".join(sorted(set(_ACCEPTED[kind].values())))
        raise EmbeddingError(
            f"{label}: Gemini embeds {kind} as {accepted}, not {mimetype or 'this format'}; "
            f"{_ADVICE[kind]}"
        )


def _check_duration(kind: Kind, path: Path) -> None:
    duration = probe(path).duration
    if duration > MAX_SECONDS[kind] + DURATION_SLACK:
        raise EmbeddingError(
            f"{path.name} lasts {duration:.1f} s; Gemini embeds at most "
            f"{MAX_SECONDS[kind]:.0f} s of {kind}: {_ADVICE[kind]}"
        )


def _read(path: Path | None) -> bytes:
    if path is None:
        raise EmbeddingError("an input has neither text, data nor a path")
    try:
        return path.read_bytes()
    except OSError as exc:
        raise MediaError(path, f"cannot be read ({exc.strerror})") from exc
