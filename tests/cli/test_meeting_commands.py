"""``chapters`` and ``summarize`` options (cli/meeting_commands.py)."""

from __future__ import annotations

import pytest

from llama_index_video.cli.parser import build_parser


def test_chapters_refuses_json_with_a_format_it_would_ignore(capsys):
    with pytest.raises(SystemExit) as stopped:
        build_parser().parse_args(["chapters", "a.mp4", "--json", "--format", "vtt"])
    assert stopped.value.code == 2
    said = capsys.readouterr().err.strip().splitlines()[-1]
    assert said.endswith("argument --format: not allowed with argument --json")
