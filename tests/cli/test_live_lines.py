"""The line ``ingest --live`` prints for each chunk it stores."""

from __future__ import annotations

from llama_index_video.cli.watch_command import _print_chunk
from llama_index_video.live import LiveChunk


def test_a_chunk_line_says_unit_for_one_and_units_for_more(capsys):
    _print_chunk(LiveChunk(0.0, 4.2, 1))
    _print_chunk(LiveChunk(4.2, 8.0, 2))
    assert capsys.readouterr().out.splitlines() == [
        "live     0-4 s: 1 unit",
        "live     4-8 s: 2 units",
    ]
