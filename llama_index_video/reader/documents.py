"""Text documents (``.md``, ``.txt``) into chunk nodes, in time linear in their size.

LlamaIndex's ``MarkdownNodeParser`` takes time growing with the square of the text it is
given (0.25/0.5/1 MB of Markdown: 0.5/1.6/5.4 s; a 20 MB handbook never finished). So
the text is first cut into pieces of at most :data:`PIECE_CHARS` characters, at
heading lines for Markdown (outside code fences: a ``# comment`` in a code block is not
a heading) and at blank lines otherwise, falling back to line breaks and, for a single
overlong line, to a hard cut; each piece is then parsed and split on its own. The
Markdown parser splits at every heading anyway, so pieces cut at headings give the same
chunks as parsing the whole text at once; only the cost changes: linear.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from llama_index.core.schema import BaseNode

from llama_index_video.errors import MediaError
from llama_index_video.reader import moments
from llama_index_video.reader.progress import Progress

PIECE_CHARS = 16_000
"""Longest text handed to LlamaIndex's parsers at once."""
_HEADING = re.compile(r"#{1,6}\s")
_FENCE = re.compile(r"(```|~~~)")


def read_text_document(
    source: moments.SourceFile,
    *,
    chunk_size: int,
    chunk_overlap: int,
    progress: Progress,
) -> list[BaseNode]:
    """The chunk nodes of a UTF-8 ``.md``/``.txt`` file; progress in characters (``text``).

    Raises:
        MediaError: the file is not UTF-8, cannot be read, or holds no text.
    """
    from llama_index.core import Document
    from llama_index.core.node_parser import MarkdownNodeParser, SentenceSplitter

    try:
        text = source.path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise MediaError(source.path, "is not UTF-8 text") from exc
    except OSError as exc:
        raise MediaError(source.path, f"cannot be read ({exc.strerror or exc})") from exc
    if not text.strip():
        raise MediaError(source.path, "no text to index")
    markdown = source.path.suffix.lower() == ".md"
    parser = MarkdownNodeParser() if markdown else None
    splitter = SentenceSplitter(chunk_size=chunk_size, chunk_overlap=chunk_overlap)
    chunks: list[BaseNode] = []
    done = 0
    for piece in text_pieces(text, markdown=markdown):
        parsed: list[BaseNode] = [Document(id_=source.doc_id, text=piece)]
        if parser is not None:
            parsed = parser(parsed)
        chunks.extend(splitter(parsed))
        done += len(piece)
        progress("text", done, len(text))
    return list(moments.text_chunk_nodes(source, chunks))


def text_pieces(text: str, *, markdown: bool, limit: int = PIECE_CHARS) -> Iterator[str]:
    """``text`` in consecutive pieces of at most ``limit`` characters, joined they are ``text``.

    A piece ends before a heading line (Markdown) or after a blank line (plain text)
    when one is near enough; otherwise at a line break; otherwise after ``limit``
    characters.
    """
    piece: list[str] = []
    size = 0
    in_fence = False
    for line in _bounded_lines(text, limit):
        boundary = (
            not in_fence and _HEADING.match(line) is not None
            if markdown
            else bool(piece) and not piece[-1].strip()
        )
        if piece and (size + len(line) > limit or (boundary and size > limit // 2)):
            yield "".join(piece)
            piece, size = [], 0
        piece.append(line)
        size += len(line)
        if markdown and _FENCE.match(line.lstrip()):
            in_fence = not in_fence
    if piece:
        yield "".join(piece)


def _bounded_lines(text: str, limit: int) -> Iterator[str]:
    """The lines of ``text`` with their line breaks, a line over ``limit`` cut in pieces."""
    for line in text.splitlines(keepends=True):
        for start in range(0, len(line), limit):
            yield line[start : start + limit]
