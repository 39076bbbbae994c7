"""The options several subcommands share (cli/options.py) mean the same in each."""

from __future__ import annotations

import pytest

from llama_index_video.cli.parser import build_parser

SPAN_COMMANDS = {
    "clip": ["clip", "a.mp4", "-o", "out.mp4"],
    "transcript": ["transcript", "a.mp4"],
    "summarize": ["summarize", "a.mp4"],
}


@pytest.mark.parametrize("command", sorted(SPAN_COMMANDS))
def test_a_span_is_read_the_same_by_every_command(command):
    args = build_parser().parse_args([*SPAN_COMMANDS[command], "--from", "01:34", "--to", "100"])
    assert (args.source, args.start, args.end) == ("a.mp4", 94.0, 100.0)


@pytest.mark.parametrize("command", sorted(SPAN_COMMANDS))
def test_a_time_that_is_not_one_is_refused_with_its_reason(command, capsys):
    with pytest.raises(SystemExit) as stopped:
        build_parser().parse_args([*SPAN_COMMANDS[command], "--from", "nan", "--to", "5"])
    said = capsys.readouterr().err.strip().splitlines()[-1]
    assert stopped.value.code == 2
    assert said.endswith(
        "argument --from: 'nan' is not a time; give seconds (94.5) or mm:ss (01:34)"
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["remove", "a.mp4"],
        ["speakers", "name", "a.mp4", "2", "Ada"],
        ["speakers", "relabel"],
        ["ingest", "a.mp4"],
    ],
)
def test_writers_wait_the_same(argv):
    parser = build_parser()
    assert parser.parse_args([*argv, "--wait", "2.5"]).wait == 2.5
    assert parser.parse_args([*argv, "--no-wait"]).wait == 0.0
    with pytest.raises(SystemExit):
        parser.parse_args([*argv, "--wait", "-1"])


@pytest.mark.parametrize("command", sorted(SPAN_COMMANDS))
def test_help_says_how_to_write_a_time(command, capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args([command, "--help"])
    assert "seconds (94.5) or mm:ss (01:34)" in " ".join(capsys.readouterr().out.split())
