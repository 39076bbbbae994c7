"""Text documents are read in bounded pieces: linear time, same chunks, nothing lost."""

from __future__ import annotations

from llama_index.core.node_parser import MarkdownNodeParser, SentenceSplitter

from llama_index_video.reader.documents import PIECE_CHARS, text_pieces
from llama_index_video.reader.video_reader import VideoReader
from tests_support import HANDBOOK

FENCED = "## Setup\n\n```bash\n# not a heading\necho hi\n```\n"


def _big_markdown(sections: int) -> str:
    return "".join(
        f"## Gauge {n}\n\nGauge {n} reads the pressure in hall {n}; log it every hour.\n\n"
        + (FENCED if n % 50 == 0 else "")
        for n in range(sections)
    )


def test_pieces_are_bounded_and_join_back_to_the_text():
    text = _big_markdown(3000) + "x" * (3 * PIECE_CHARS) + "\n"  # and one overlong line
    pieces = list(text_pieces(text, markdown=True))
    assert "".join(pieces) == text
    assert max(len(p) for p in pieces) <= PIECE_CHARS
    assert sum(p.startswith("## ") for p in pieces) >= len(pieces) - 4  # cut at headings


def test_markdown_parser_never_sees_more_than_one_piece(tmp_path, monkeypatch):
    seen: list[int] = []
    parse = MarkdownNodeParser.get_nodes_from_node

    def spy(self, node):
        seen.append(len(node.get_content()))
        return parse(self, node)

    monkeypatch.setattr(MarkdownNodeParser, "get_nodes_from_node", spy)
    manual = tmp_path / "manual.md"
    manual.write_text(_big_markdown(4000))
    progress: list[tuple[str, float, float]] = []
    nodes = (
        VideoReader(media_dir=tmp_path / "media", ocr="off")
        .read(manual, progress=lambda *p: progress.append(p))
        .nodes
    )
    assert seen and max(seen) <= PIECE_CHARS
    text = " ".join(n.get_content() for n in nodes)
    assert all(f"Gauge {n} reads" in text for n in (0, 1999, 3999))  # nothing lost
    assert progress[-1] == ("text", len(manual.read_text()), len(manual.read_text()))


def test_a_small_document_gives_the_same_chunks_as_before(tmp_path):
    from llama_index.core import Document

    whole = SentenceSplitter(chunk_size=512, chunk_overlap=64)(
        MarkdownNodeParser()([Document(text=HANDBOOK.read_text())])
    )
    nodes = VideoReader(media_dir=tmp_path / "media", ocr="off").read(HANDBOOK).nodes
    assert [n.get_content() for n in nodes] == [c.get_content() for c in whole]
