"""The documentation's code as a new user runs it: its Python blocks and its command lines.

The README, the guides (``docs/guides/``) and the other pages under ``docs/`` are read
as a user reads them. Every ```python block compiles, its imports resolve, and it
imports what it uses (a block may go on with an earlier block's variables of the same
page, as the prose says, never with its imports). The blocks that need no remote API
run as written, in a folder laid out as the reader has it (``talks/``, ``notes.md``),
over a copy of the example index; the blocks that answer with Claude talk to the fake
Anthropic API, the Gemini block to the fake Gemini API. Every ``llama-index-video``
command line, and every flag named, in the README, the site's home and the guides goes
through the real argument parser (the reports also name the benchmark scripts' flags).
"""

from __future__ import annotations

import argparse
import ast
import builtins
import functools
import importlib
import re
import shlex
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from llama_index_video.cli.main import build_parser
from llama_index_video.reader.video_reader import VideoReader
from llama_index_video.store.collection import release_chroma
from llama_index_video.transcription.base import Transcriber, Transcription
from tests.agents.two_step import claude_parts, play_claude
from tests.fakes.anthropic_server import text_reply
from tests.fakes.gemini_server import FakeGeminiServer
from tests_support import CHECKOUT, HANDBOOK, OZONE, ROOT

# The README first, then every page of the documentation site.
PAGES = {
    path.relative_to(ROOT).as_posix(): path.read_text()
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
}
# (page, its Python blocks in order)
BLOCKS = [
    (page, block)
    for page, text in PAGES.items()
    for block in re.findall(r"^```python\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)
]
COMMAND = "llama-index-video"
# The pages whose commands and flags are the package's own (the reports under docs/ also
# name the benchmark scripts' flags).
USER_PAGES = {
    page: text for page, text in PAGES.items() if not re.fullmatch(r"docs/[^/]+\.md", page)
} | {"docs/index.md": PAGES["docs/index.md"]}

# The reader's files, as the README names them, and the example each one is here.
LAYOUT = {
    "talks/ozone.mp4": OZONE,
    "talks/checkout_deep_dive.mp4": CHECKOUT,
    "notes.md": HANDBOOK,
}


def block_with(text: str) -> tuple[str, str]:
    """(page, block): the one Python block of the documentation containing ``text``."""
    (found,) = [(page, b) for page, b in BLOCKS if text in b]
    return found


def run_block(found: tuple[str, str], namespace: dict | None = None) -> dict:
    """Run a page's block as a script would (stdout captured by pytest); its globals after."""
    page, block = found
    scope = {"__name__": "__main__", **(namespace or {})}
    exec(compile(block, page, "exec"), scope)
    return scope


def defined_names(tree: ast.AST) -> tuple[set[str], set[str]]:
    """(names a block imports, names it binds otherwise)."""
    imported: set[str] = set()
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            imported |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
    return imported, bound


def used_names(tree: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


class ExampleScript:
    """The script transcriber, hearing the reader's files as the examples they are."""

    def __init__(self, script: Transcriber) -> None:
        self.name = script.name
        self._script = script

    def transcribe(self, audio: np.ndarray, *, source: Path | None = None) -> Transcription:
        examples = {Path(name).name: example for name, example in LAYOUT.items()}
        known = source is not None and source.name in examples
        return self._script.transcribe(audio, source=examples[source.name] if known else source)


@pytest.fixture
def reader_folder(tmp_path, monkeypatch) -> Iterator[Path]:
    """The working directory of the README's reader: their recordings and notes."""
    for name, example in LAYOUT.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(example, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    # Chroma caches one database per process by its path as given ("video_index/chroma"),
    # so the next test's folder of the same name would get this one's, opened by other
    # settings (a VideoIndex's against a bare PersistentClient's).
    release_chroma(Path("video_index") / "chroma")


def test_the_readme_and_the_guides_have_python_blocks():
    pages = {page for page, _ in BLOCKS}
    assert "README.md" in pages
    assert len([p for p in pages if p.startswith("docs/guides/")]) >= 3
    assert len(BLOCKS) >= 7


@pytest.mark.parametrize("number", range(len(BLOCKS)))
def test_a_block_compiles_and_its_imports_resolve(number):
    page, block = BLOCKS[number]
    tree = ast.parse(block, filename=f"{page} block {number + 1}")
    compile(tree, page, "exec")
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = importlib.import_module(node.module or "")
            missing = [a.name for a in node.names if not hasattr(module, a.name)]
            assert missing == [], f"{node.module} has no {missing}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                importlib.import_module(alias.name)


@pytest.mark.parametrize("number", range(len(BLOCKS)))
def test_a_block_imports_what_it_uses(number):
    page, block = BLOCKS[number]
    earlier: set[str] = set()
    for earlier_page, earlier_block in BLOCKS[:number]:
        if earlier_page == page:
            earlier |= defined_names(ast.parse(earlier_block))[1]
    tree = ast.parse(block)
    imported, bound = defined_names(tree)
    free = used_names(tree) - imported - bound - set(dir(builtins))
    assert free <= earlier, f"{page}: a block uses {free - earlier} without importing it"


def test_the_video_index_block_searches_and_answers_through_claude(
    example_index, reader_folder, fake_anthropic, monkeypatch, capsys
):
    found = block_with("index.ask(")
    question = next(
        call.args[0].value
        for call in ast.walk(ast.parse(found[1]))
        if isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "ask"
    )
    best = example_index.search(question)[0]
    shutil.copytree(example_index.path, reader_folder / "video_index")
    monkeypatch.setenv("ANTHROPIC_API_KEY", fake_anthropic.api_key)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.url)
    fake_anthropic.enqueue(
        text_reply("1. ozone and ultraviolet light\n2. heat in the stratosphere"),
        text_reply(f"Ozone absorbs ultraviolet light {best.label}."),
    )

    scope = run_block(found)

    printed = capsys.readouterr().out.splitlines()
    # The files were indexed already (same content): the search printed the latency slide.
    assert printed[0].startswith(f"[{CHECKOUT.name} ")
    answer = scope["answer"]
    assert answer.text == f"Ozone absorbs ultraviolet light {best.label}."
    assert [c.label for c in answer.citations] == [best.label]
    assert Path(answer.citations[0].source).name == OZONE.name
    assert any(line.startswith(best.label) and "#t=" in line for line in printed)
    request = fake_anthropic.messages_requests()[-1]
    assert any(p["type"] == "image" for p in request.body["messages"][0]["content"])


def test_the_agent_block_answers_through_claude_calling_the_tools(
    example_index, reader_folder, fake_anthropic, monkeypatch, capsys
):
    shutil.copytree(example_index.path, reader_folder / "video_index")
    monkeypatch.setenv("ANTHROPIC_API_KEY", fake_anthropic.api_key)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.url)
    fake_anthropic.respond = play_claude

    run_block(block_with("FunctionAgent("))

    answer = capsys.readouterr().out
    last = fake_anthropic.messages_requests()[-1].body["messages"]
    used = [part["name"] for part in claude_parts(last, "assistant", "tool_use")]
    assert used == ["search_moments", "read_transcript"]
    assert "[checkout_deep_dive.mp4 00:46-00:55]" in answer
    assert "[checkout_deep_dive.mp4 00:31-00:39]" in answer


def test_the_query_engine_block_answers_with_checked_citations(
    example_index, reader_folder, fake_anthropic, monkeypatch, capsys
):
    from llama_index.core import Settings

    shutil.copytree(example_index.path, reader_folder / "video_index")
    monkeypatch.setenv("ANTHROPIC_API_KEY", fake_anthropic.api_key)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.url)
    monkeypatch.setattr(Settings, "_llm", None)
    best = example_index.search("What does the latency slide show?")[0]
    fake_anthropic.enqueue(
        text_reply(f"340 ms {best.label}."), text_reply("Maria ", "owns it."), text_reply("Soon.")
    )

    scope = run_block(block_with("as_query_engine()"))

    printed = capsys.readouterr().out
    assert f"340 ms {best.label}. ['{best.label}']" in printed
    assert "Maria owns it." in printed
    assert scope["answer"].text == "Soon."
    assert len(fake_anthropic.messages_requests()) == 3


def test_the_llamaindex_recipe_answers_through_claude_with_the_frames(
    reader_folder, script_transcriber, fake_anthropic, monkeypatch, capsys
):
    monkeypatch.setattr(
        VideoReader, "transcriber", property(lambda _: ExampleScript(script_transcriber))
    )
    monkeypatch.setenv("ANTHROPIC_API_KEY", fake_anthropic.api_key)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.url)
    fake_anthropic.enqueue(
        text_reply("1. ozone and ultraviolet light\n2. heat in the stratosphere"),
        text_reply("Ozone absorbs ultraviolet light [ozone.mp4 00:35-00:45]."),
    )

    run_block(block_with("QueryFusionRetriever("))

    assert "Ozone absorbs ultraviolet light" in capsys.readouterr().out
    content = fake_anthropic.messages_requests()[-1].body["messages"][0]["content"]
    assert any(part["type"] == "image" for part in content)  # the frames on screen
    context = " ".join(part.get("text", "") for part in content)
    # the moment that answers, labelled to be cited
    assert "the temperature rises with altitude because ultraviolet radiation" in context
    assert re.search(r"\[ozone\.mp4 \d\d:\d\d-\d\d:\d\d\]", context)


def test_the_pipeline_block_reads_each_file_once(
    reader_folder, script_transcriber, monkeypatch, tmp_path_factory
):
    import chromadb
    from llama_index.vector_stores.chroma import ChromaVectorStore

    # What speech recognition would hear: the narration script of the example each file
    # is (this is not about ASR).
    monkeypatch.setattr(
        VideoReader, "transcriber", property(lambda _: ExampleScript(script_transcriber))
    )
    collection = chromadb.PersistentClient(
        str(tmp_path_factory.mktemp("chroma"))
    ).get_or_create_collection("moments", configuration={"hnsw": {"space": "cosine"}})
    store = ChromaVectorStore(chroma_collection=collection)
    block = block_with("IngestionPipeline(")

    first = run_block(block, {"store": store})["nodes"]

    sources = {Path(n.metadata["source"]).name for n in first}
    assert sources == {"ozone.mp4", "notes.md"}
    assert {"transcript", "frame", "text"} <= {n.metadata["modality"] for n in first}
    assert collection.count() == len(first)
    assert run_block(block, {"store": store})["nodes"] == []  # the next run reads nothing
    assert collection.count() == len(first)


def test_the_reader_options_block_builds_the_index_reader(reader_folder):
    index = run_block(block_with("ReaderOptions("))["index"]
    try:
        reader = index.reader
        options = index.reader_options
        assert reader.transcriber is options.transcriber
        assert reader.frames == options.frames
        assert reader.ocr is not None
        assert reader.media_dir == index.path / "media"
        assert reader.clips is None  # a text embedding: no clips are cut
    finally:
        index.close()


def test_the_agent_block_gives_the_six_tools_over_the_index(example_index, reader_folder):
    shutil.copytree(example_index.path, reader_folder / "video_index")

    tools = run_block(block_with("VideoToolSpec(VideoIndex("))["tools"]

    by_name = {tool.metadata.name: tool for tool in tools}
    assert set(by_name) == {
        "search_moments",
        "ask",
        "list_recordings",
        "read_transcript",
        "describe_screen",
        "summarize_recording",
    }
    found = by_name["search_moments"].call(query="ultraviolet radiation").raw_output
    assert OZONE.name in str(found)


def test_the_gemini_block_embeds_speech_frames_and_clips_in_one_space(
    reader_folder, script_transcriber, monkeypatch
):
    monkeypatch.setattr(
        VideoReader, "transcriber", property(lambda _: ExampleScript(script_transcriber))
    )
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)
    with FakeGeminiServer() as gemini:
        monkeypatch.setenv("GEMINI_API_KEY", gemini.api_key)
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", gemini.base_url)

        index = run_block(block_with("GeminiMultimodalEmbedding("))["index"]

        sent = gemini.embedded_contents()
    nodes = index.docstore.docs.values()
    assert {"transcript", "frame", "video"} <= {n.metadata["modality"] for n in nodes}
    assert len(sent) == len(nodes)  # one content per node, never averaged
    media = [p.get("inline_data") or p.get("file_data") for c in sent for p in c["parts"]]
    assert {"image/jpeg", "video/mp4"} <= {m["mime_type"] for m in media if m}
    vectors = index.vector_store.data.embedding_dict
    assert len(vectors) == len(nodes)
    assert {len(vector) for vector in vectors.values()} == {1536}


# -- the command lines ----------------------------------------------------------------


@functools.cache
def subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def command_lines() -> list[str]:
    """Every ``llama-index-video ...`` line of the documentation's shell blocks."""
    shell = [
        block
        for text in USER_PAGES.values()
        for block in re.findall(r"^```bash\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)
    ]
    return [
        line.strip()
        for block in shell
        for line in block.splitlines()
        if line.strip().startswith(f"{COMMAND} ")
    ]


def inline_flags() -> list[tuple[str | None, str]]:
    """(subcommand or None, flag) for each flag named in the documentation's inline code."""
    prose = "\n".join(
        re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)
        for text in USER_PAGES.values()
    )
    named = []
    for span in re.findall(r"`([^`]+)`", prose):
        words = span.removeprefix(f"{COMMAND} ").split()
        if not words or not (words[0] in subcommands() or words[0].startswith("--")):
            continue  # another program's command (pip, ray, chroma) or no command at all
        command = words[0] if words[0] in subcommands() else None
        named += [(command, w) for w in words if re.fullmatch(r"--[a-z][a-z-]*", w)]
    return named


def test_the_documentation_shows_command_lines_and_flags():
    assert len(command_lines()) >= 15
    assert len(inline_flags()) >= 20


@pytest.mark.parametrize("line", command_lines())
def test_a_command_line_parses(line):
    try:
        args = build_parser().parse_args(shlex.split(line, comments=True)[1:])
    except SystemExit as exc:
        pytest.fail(f"{line!r} does not parse (exit {exc.code})")
    assert args.command in subcommands()


def test_every_flag_the_documentation_names_exists():
    parsers = subcommands()
    everywhere = {
        flag for p in [build_parser(), *parsers.values()] for flag in p._option_string_actions
    }
    unknown = [
        (command, flag)
        for command, flag in inline_flags()
        if flag not in (parsers[command]._option_string_actions if command else everywhere)
    ]
    assert unknown == []
