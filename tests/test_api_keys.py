"""API keys are read stripped and never reach output, logs, errors or the manifest.

The end-to-end tests go through the command line with keys pasted the careless
way (a trailing newline) against fake APIs that echo the request's headers, key
included, back in their error bodies. Other paddings (a space, CRLF) are tested
per class in tests/embeddings/test_gemini.py and tests/answering/.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from llama_index_video.api_keys import (
    ScrubbingFormatter,
    read_api_key,
    register,
    scrub,
    scrubbed_traceback,
)
from llama_index_video.cli.main import main
from tests.fakes.anthropic_server import FakeAnthropicServer, error_reply
from tests.fakes.gemini_server import FakeGeminiServer
from tests_support import HANDBOOK

GEMINI_KEY = "AIzaSy-leak-test-gemini-0123456789"
CLAUDE_KEY = "sk-ant-leak-test-claude-0123456789"


# -- reading and scrubbing ---------------------------------------------------------------


def test_a_key_is_stripped_and_both_forms_are_masked(monkeypatch):
    monkeypatch.setenv("LIV_TEST_KEY", "  key-from-a-file-0001\n")
    assert read_api_key(None, ["LIV_TEST_KEY"]) == "key-from-a-file-0001"
    assert scrub("sent 'key-from-a-file-0001' as 'key-from-a-file-0001\\n'") == (
        "sent '***' as '***\\n'"
    )
    assert scrub("b'  key-from-a-file-0001\\n'") == "b'  ***\\n'"


def test_the_first_non_blank_key_wins(monkeypatch):
    monkeypatch.setenv("LIV_FIRST", " \n")
    monkeypatch.setenv("LIV_SECOND", "second-key-0002 ")
    assert read_api_key(None, ["LIV_FIRST", "LIV_SECOND"]) == "second-key-0002"
    assert read_api_key("given-key-0003\t", ["LIV_SECOND"]) == "given-key-0003"
    assert read_api_key("  ", ["LIV_MISSING"]) is None


def test_short_strings_are_not_masked_everywhere():
    register("k")
    assert scrub("check the model name") == "check the model name"


def test_tracebacks_and_log_records_are_masked_with_their_causes():
    register("cause-key-0004")
    try:
        try:
            raise ValueError("the server said cause-key-0004")
        except ValueError as exc:
            raise RuntimeError("wrapped") from exc
    except RuntimeError as exc:
        text = scrubbed_traceback(exc)
        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "%s", ("cause-key-0004",), None)
        record.exc_info = (type(exc), exc, exc.__traceback__)
    assert "the server said ***" in text and "cause-key-0004" not in text
    logged = ScrubbingFormatter("%(message)s").format(record)
    assert "cause-key-0004" not in logged and "the server said ***" in logged


# -- through the command line ------------------------------------------------------------


@pytest.fixture
def gemini(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGeminiServer]:
    """A fake Gemini API echoing headers in its errors; the key is set with a newline."""
    with FakeGeminiServer(api_key=GEMINI_KEY, echo_headers=True) as server:
        monkeypatch.setenv("GEMINI_API_KEY", GEMINI_KEY + "\n")
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.base_url)
        monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
        yield server


@pytest.fixture
def claude(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropicServer]:
    """A fake Anthropic API echoing headers in its errors; the key is set with a newline."""
    with FakeAnthropicServer(api_key=CLAUDE_KEY, echo_headers=True) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", CLAUDE_KEY + "\n")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
        yield server


def run(capsys: pytest.CaptureFixture[str], *argv: str, debug: bool) -> tuple[int, str]:
    code = main([*(["--debug"] if debug else []), *argv])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def assert_masked(output: str, *keys: str) -> None:
    """No key in ``output``, and the echo that carried it did reach it, masked."""
    for key in keys:
        assert key not in output
        assert key[: len(key) // 2] not in output  # not even a truncated one
    assert "you sent" in output and "***" in output


def ingest(folder: Path, capsys: pytest.CaptureFixture[str], *, debug: bool) -> tuple[int, str]:
    return run(
        capsys,
        *("ingest", str(HANDBOOK), "--index", str(folder)),
        *("--embed", "gemini", "--dimension", "128", "--quiet"),
        debug=debug,
    )


@pytest.mark.parametrize("debug", [False, True], ids=["plain", "debug"])
def test_ingest_keeps_the_key_out_of_its_report_and_the_manifest(gemini, tmp_path, capsys, debug):
    gemini.fail("embed", *[403] * 50)
    code, output = ingest(tmp_path / "index", capsys, debug=debug)
    assert code != 0
    assert "not embedded yet" in output
    assert_masked(output, GEMINI_KEY)
    stored = sorted((tmp_path / "index").glob("manifest.sqlite*"))
    assert stored
    for path in stored:
        assert GEMINI_KEY.encode() not in path.read_bytes(), path.name


@pytest.mark.parametrize("debug", [False, True], ids=["plain", "debug"])
def test_search_failures_never_show_the_key(gemini, tmp_path, capsys, debug):
    assert ingest(tmp_path / "index", capsys, debug=False)[0] == 0
    gemini.fail("embed", 403)
    code, output = run(capsys, "search", "deploy", "--index", str(tmp_path / "index"), debug=debug)
    assert code != 0
    assert ("Traceback" in output) == debug
    assert_masked(output, GEMINI_KEY)


@pytest.mark.parametrize("debug", [False, True], ids=["plain", "debug"])
def test_ask_with_claude_never_shows_the_key(gemini, claude, tmp_path, capsys, debug):
    assert ingest(tmp_path / "index", capsys, debug=False)[0] == 0
    claude.enqueue(error_reply(400))
    argv = ("ask", "when do we deploy?", "--index", str(tmp_path / "index"), "--llm", "claude")
    code, output = run(capsys, *argv, "--top-k", "100", debug=debug)
    assert claude.messages_requests(), "Claude was never asked"
    assert code != 0
    assert ("Traceback" in output) == debug
    assert_masked(output, CLAUDE_KEY, GEMINI_KEY)


@pytest.mark.parametrize("debug", [False, True], ids=["plain", "debug"])
def test_ask_with_gemini_never_shows_the_key(gemini, tmp_path, capsys, debug):
    assert ingest(tmp_path / "index", capsys, debug=False)[0] == 0
    gemini.fail("generate", 403)
    argv = ("ask", "when do we deploy?", "--index", str(tmp_path / "index"), "--llm", "gemini")
    code, output = run(capsys, *argv, "--top-k", "100", debug=debug)
    assert gemini.requests_to("generate"), "Gemini was never asked"
    assert code != 0
    assert ("Traceback" in output) == debug
    assert_masked(output, GEMINI_KEY)
