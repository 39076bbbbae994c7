"""VideoToolSpec: its tools on the example index, and a real FunctionAgent using them.

The agent runs on llama-index-llms-openai talking to a local stand-in of the Chat
Completions API (tests/fakes/openai_server.py), and on the package's own Claude adapter
talking to a stand-in of the Messages API (tests/fakes/anthropic_server.py). Each
stand-in plays a model that reads each tool result before choosing its next call
(tests/agents/two_step.py), so the answer is only right when the tools are: it
searches, reads the transcript around the moment found, and cites it.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import av
import pytest
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.llms.openai import OpenAI

from llama_index_video.agents import VideoToolSpec
from llama_index_video.answering.claude import ClaudeMultimodalLLM
from llama_index_video.errors import MomentRequestError
from llama_index_video.schema import parse_label
from tests.agents.two_step import (
    check_two_step_answer,
    claude_parts,
    play_claude,
    play_openai,
    run_agent,
)
from tests.chapters.meeting_script import TOPIC_SECONDS
from tests.chapters.test_summaries import meeting_index  # noqa: F401  (the shared fixture)
from tests.fakes.openai_server import FakeOpenAIServer
from tests_support import CHECKOUT, TEAM_SYNC

MARKETING = "How do we sell it to customers?"  # the meeting's marketing chapter, from 720 s


@pytest.fixture(scope="module")
def tools(example_index) -> VideoToolSpec:
    return VideoToolSpec(example_index)


def call(spec: VideoToolSpec, name: str, **arguments) -> dict:
    tool = next(t for t in spec.to_tool_list() if t.metadata.name == name)
    output = tool(**arguments)
    text = str(output.content)
    assert len(text.encode()) <= spec.max_result_bytes
    return json.loads(text)


def test_the_tools_are_described_for_a_model(tools):
    listed = {t.metadata.name: t.metadata for t in tools.to_tool_list()}
    assert set(listed) == {
        "search_moments",
        "ask",
        "list_recordings",
        "read_transcript",
        "describe_screen",
        "summarize_recording",
    }
    schema = listed["read_transcript"].fn_schema_str
    assert "source" in schema and "mm:ss" in schema  # parameter descriptions reach the model
    assert "read around a moment" in listed["read_transcript"].description


def test_search_finds_the_decision_with_its_label_and_link(tools):
    found = call(tools, "search_moments", query="who will own the billing provider migration")
    best = found["moments"][0]
    assert best["label"] == "[team_sync.mp3 00:14-00:24]"
    assert best["url"] == f"{TEAM_SYNC}#t=14.0"
    assert "Maria" in best["text"]
    assert 0.5 < best["confidence"] <= 1.0  # the calibrated chance that it answers
    assert all(0.0 <= m["confidence"] <= best["confidence"] for m in found["moments"][1:])


def test_search_filters_by_source_and_modality(tools):
    only = call(tools, "search_moments", query="cache", source="checkout_deep_dive.mp4", top_k=3)
    assert only["moments"] and {m["source"] for m in only["moments"]} == {str(CHECKOUT)}
    screen = call(tools, "search_moments", query="ozone layer", modality="ocr", top_k=3)
    assert screen["moments"] and {m["modality"] for m in screen["moments"]} == {"ocr"}


def test_search_by_chapter_scores_moments_with_their_chapter(meeting_index):  # noqa: F811
    index, _ = meeting_index
    spec = VideoToolSpec(index)
    plain = call(spec, "search_moments", query=MARKETING, top_k=3)["moments"]
    blended = call(spec, "search_moments", query=MARKETING, top_k=3, by_chapter=True)["moments"]
    also = call(spec, "search_moments", query=MARKETING, top_k=3, by_chapter="true")["moments"]
    assert (
        [m["start"] for m in plain] != [m["start"] for m in blended] == [m["start"] for m in also]
    )
    assert all(m["start"] >= 3 * TOPIC_SECONDS for m in blended)
    expected = [hit.chapter for hit in index.search(MARKETING, top_k=3, by_chapter=True)]
    assert [m["chapter"] for m in blended] == expected and all(expected)
    described = next(t for t in spec.to_tool_list() if t.metadata.name == "search_moments")
    parameter = described.metadata.get_parameters_dict()["properties"]["by_chapter"]
    assert parameter["type"] == "boolean" and "chapter" in parameter["description"]


def test_read_transcript_reads_the_span_in_order(tools):
    read = call(tools, "read_transcript", source="ozone_explainer.mp4", start="00:20", end=40)
    assert [line["label"] for line in read["lines"]] == [
        "[ozone_explainer.mp4 00:23-00:33]",  # the unit of 12-19 s ends before 20 s
        "[ozone_explainer.mp4 00:36-00:44]",  # overlaps the end of the span
    ]
    assert "ninety percent" in read["lines"][0]["text"]
    assert read["label"] == "[ozone_explainer.mp4 00:20-00:40]"
    assert read["url"].endswith("ozone_explainer.mp4#t=20.0")


def test_describe_screen_gives_the_frame_and_its_text(tools):
    seen = call(tools, "describe_screen", source="ozone_explainer.mp4", time="00:03")
    assert seen["frame_path"].endswith(".jpg")
    assert seen["frame_time"] <= 3.0
    assert any("Ozone" in text for text in seen["on_screen"])
    assert "Welcome" in seen["said"]
    heard = call(tools, "describe_screen", source="team_sync.mp3", time=15)
    assert "frame_path" not in heard and "note" in heard


def test_list_recordings_names_every_source(tools):
    listed = call(tools, "list_recordings")["recordings"]
    names = {entry["source"].rsplit("/", 1)[-1] for entry in listed}
    assert {"team_sync.mp3", "ozone_explainer.mp4", "checkout_deep_dive.mp4"} <= names
    team = next(e for e in listed if e["source"].endswith("team_sync.mp3"))
    assert team["length"] == "00:40" and team["moments"]["transcript"] == 3


def test_ask_answers_with_citations(tools):
    answered = call(tools, "ask", question="When is version two point four released?")
    assert answered["found"]
    assert answered["citations"][0]["label"].startswith("[team_sync.mp3 00:0")


@pytest.mark.parametrize(
    ("name", "arguments", "says"),
    [
        ("read_transcript", {"source": "/etc/passwd", "start": 0, "end": 5}, "unknown source"),
        ("read_transcript", {"source": "team_sync.mp3", "start": 50, "end": 95}, "after the end"),
        ("read_transcript", {"source": "team_sync.mp3", "start": -9, "end": -2}, "from 0 s"),
        ("search_moments", {"query": "   "}, "query: give text"),
        ("search_moments", {"query": "cache", "speaker": "SPEAKER_2"}, "no speaker labels"),
        ("read_transcript", {"source": "team_sync.mp3", "start": 9, "end": 3}, "start < end"),
        ("read_transcript", {"source": "team_sync.mp3", "start": "soon", "end": 3}, "not a time"),
        ("describe_screen", {"source": "nowhere.mp4", "time": 3}, "unknown source"),
        ("search_moments", {"query": "x", "modality": "smell"}, "choose from"),
    ],
)
def test_bad_input_is_one_line_for_the_model(tools, name, arguments, says):
    error = call(tools, name, **arguments)["error"]
    assert says in error and "\n" not in error


INF = float("inf")


@pytest.mark.parametrize(
    ("name", "arguments", "says"),
    [
        ("search_moments", {"query": None}, "query: give text, not NoneType"),
        ("search_moments", {"query": 42}, "query: give text, not int 42"),
        ("search_moments", {"query": "  "}, "query: give text, not blank"),
        ("search_moments", {"query": "cache", "top_k": None}, "top_k: give a whole number"),
        ("search_moments", {"query": "cache", "top_k": INF}, "top_k: give a whole number"),
        ("search_moments", {"query": "cache", "top_k": "many"}, "top_k: give a whole number"),
        ("search_moments", {"query": "cache", "source": 7}, "source: give text"),
        ("search_moments", {"query": "cache", "modality": ["ocr"]}, "modality: give text"),
        ("search_moments", {"query": "cache", "speaker": 2}, "speaker: give text"),
        ("search_moments", {"query": "cache", "by_chapter": "perhaps"}, "by_chapter: give true"),
        ("search_moments", {"query": "cache", "by_chapter": 1}, "by_chapter: give true or"),
        ("search_moments", {"query": "cache", "source": "nowhere.mp4"}, "unknown source"),
        ("ask", {"question": None}, "question: give text"),
        ("ask", {"question": "cache?", "top_k": [5]}, "top_k: give a whole number"),
        ("read_transcript", {"source": "team_sync.mp3", "start": None, "end": 5}, "not a time"),
        ("read_transcript", {"source": "team_sync.mp3", "start": "nan", "end": 5}, "not a time"),
        ("read_transcript", {"source": "team_sync.mp3", "start": 0, "end": INF}, "not a time"),
        ("read_transcript", {"source": "team_sync.mp3", "start": 0, "end": "1e309"}, "not a time"),
        ("read_transcript", {"source": ["team_sync.mp3"], "start": 0, "end": 5}, "source: give"),
        ("describe_screen", {"source": "ozone_explainer.mp4", "time": "nan"}, "not a time"),
        ("describe_screen", {"source": "ozone_explainer.mp4", "time": [3]}, "not a time"),
        ("describe_screen", {"source": None, "time": 3}, "source: give text"),
    ],
)
def test_wrong_json_types_and_times_are_one_line_for_the_model(tools, name, arguments, says):
    error = call(tools, name, **arguments)["error"]
    assert says in error and "\n" not in error


def test_the_methods_raise_the_package_errors_and_only_agent_tools_report_them(tools):
    from llama_index_video.errors import MomentRequestError

    with pytest.raises(MomentRequestError, match="is not a time"):
        tools.read_transcript("team_sync.mp3", 0, "nan")
    error = call(tools, "read_transcript", source="team_sync.mp3", start=0, end="nan")["error"]
    assert error == "team_sync.mp3: 'nan' is not a time; give seconds (94.5) or mm:ss (01:34)"


def test_a_whole_number_sent_as_text_or_float_is_a_top_k(tools):
    assert len(call(tools, "search_moments", query="ozone layer", top_k="2")["moments"]) <= 2
    assert len(call(tools, "search_moments", query="ozone layer", top_k=1.0)["moments"]) == 1


@pytest.mark.parametrize(
    ("start", "end", "read"),
    [(25, 70, "00:25-00:40"), (-20, 10, "00:00-00:10"), (30, "01:10", "00:30-00:40")],
)
def test_a_span_past_either_end_is_read_up_to_that_end_and_says_so(tools, start, end, read):
    result = call(tools, "read_transcript", source="team_sync.mp3", start=start, end=end)
    assert result["label"] == f"[team_sync.mp3 {read}]"
    assert "runs past the recording (00:40 long)" in result["note"] and result["lines"]
    assert result["lines"][-1]["end"] <= 40.5


def test_a_span_over_the_limit_is_refused(example_index):
    short = VideoToolSpec(example_index, max_span_seconds=10)
    error = call(short, "read_transcript", source="team_sync.mp3", start=0, end=30)["error"]
    assert "over the limit of 10 s" in error


def test_results_stay_within_the_byte_budget(example_index):
    small = VideoToolSpec(example_index, max_result_bytes=700)
    found = call(small, "search_moments", query="ozone layer", top_k=10)
    assert found["truncated"] is True and found["moments"]
    assert all("context" not in m for m in found["moments"])
    whole = call(
        VideoToolSpec(example_index, max_result_bytes=100_000),
        "search_moments",
        query="ozone layer",
        top_k=10,
    )
    assert "truncated" not in whole and len(whole["moments"]) > len(found["moments"])


@pytest.mark.parametrize("streaming", [True, False])
def test_a_function_agent_answers_a_two_step_question(tools, streaming):
    with FakeOpenAIServer(play_openai) as server:
        llm = OpenAI(model="gpt-4o", api_key=server.api_key, api_base=server.url, max_retries=0)
        answer = run_agent(FunctionAgent(tools=tools.to_tool_list(), llm=llm, streaming=streaming))
    calls = [
        (tc["function"]["name"], json.loads(tc["function"]["arguments"]))
        for m in server.requests[-1]["messages"]
        if m["role"] == "assistant"
        for tc in m.get("tool_calls") or []
    ]
    offered = {t["function"]["name"] for t in server.requests[0]["tools"]}
    check_two_step_answer(answer, calls, offered)
    tool_results = [m["content"] for m in server.requests[-1]["messages"] if m["role"] == "tool"]
    assert all(len(text.encode()) <= 4096 for text in tool_results)


@pytest.mark.parametrize("streaming", [True, False])
def test_claude_drives_a_function_agent_through_the_same_question(tools, fake_anthropic, streaming):
    fake_anthropic.respond = play_claude
    claude = ClaudeMultimodalLLM(
        api_key=fake_anthropic.api_key, base_url=fake_anthropic.url, max_retries=0, timeout=30.0
    )
    agent = FunctionAgent(tools=tools.to_tool_list(), llm=claude, streaming=streaming)
    answer = run_agent(agent)

    requests = fake_anthropic.messages_requests()
    assert len(requests) == 3  # search, read, answer
    last = requests[-1].body["messages"]
    uses = claude_parts(last, "assistant", "tool_use")
    offered = {tool["name"] for tool in requests[0].body["tools"]}
    check_two_step_answer(answer, [(p["name"], p["input"]) for p in uses], offered)
    # each result answers the call it belongs to, in the turn after it
    results = claude_parts(last, "user", "tool_result")
    assert [p["id"] for p in uses] == [p["tool_use_id"] for p in results]
    schema = next(t for t in requests[0].body["tools"] if t["name"] == "read_transcript")
    assert "mm:ss" in json.dumps(schema["input_schema"])
    assert requests[0].body["tool_choice"]["type"] == "auto"


def test_a_failing_llm_does_not_echo_its_key(example_index, fake_anthropic):
    from tests.fakes.anthropic_server import error_reply

    fake_anthropic.echo_headers = True  # the error message quotes the request's headers
    fake_anthropic.enqueue(*[error_reply(400)] * 5)
    claude = ClaudeMultimodalLLM(
        api_key=fake_anthropic.api_key, base_url=fake_anthropic.url, timeout=5.0, max_retries=0
    )
    spec = VideoToolSpec(example_index, llm=claude)
    result = call(spec, "ask", question="When is version two point four released?")
    assert "error" in result and "fake 400" in result["error"]
    assert fake_anthropic.api_key not in json.dumps(result)


def test_export_clip_is_offered_only_with_an_export_folder(example_index, tools, tmp_path):
    assert "export_clip" not in {t.metadata.name for t in tools.to_tool_list()}
    with pytest.raises(MomentRequestError, match="give VideoToolSpec an export_dir"):
        tools.export_clip("team_sync.mp3", 5, 15)
    spec = VideoToolSpec(example_index, export_dir=tmp_path / "clips")
    assert "export_clip" in {t.metadata.name for t in spec.to_tool_list()}


def test_export_clip_cuts_the_moment_into_the_export_folder(example_index, tmp_path):
    spec = VideoToolSpec(example_index, export_dir=tmp_path / "clips", max_span_seconds=60)
    clip = call(spec, "export_clip", source="checkout_deep_dive.mp4", start="00:46", end=55)
    path = Path(clip["path"])
    assert path.parent == (tmp_path / "clips").resolve()
    assert path.name == "checkout_deep_dive_0046-0055.mp4"
    assert clip["label"].startswith("[checkout_deep_dive.mp4 00:4")
    assert 45.0 <= clip["start"] <= 46.0 and clip["end"] == pytest.approx(55.0, abs=0.1)
    with av.open(str(path)) as media:
        assert media.streams.video and media.duration / av.time_base == pytest.approx(
            55.0 - clip["start"], abs=0.3
        )
    # what the model sends that cannot be cut is one line back, and nothing is written
    for arguments, says in (
        ({"source": "/etc/passwd", "start": 0, "end": 3}, "unknown source"),
        ({"source": "team_sync.mp3", "start": 5, "end": 500}, ""),
        ({"source": "team_sync.mp3", "start": 10, "end": 5}, ""),
    ):
        error = call(spec, "export_clip", **arguments)["error"]
        assert says in error and "\n" not in error
    assert [p.name for p in (tmp_path / "clips").iterdir()] == [path.name]


def test_with_a_page_moments_link_to_its_deep_links(example_index):
    pages = ["http://127.0.0.1:8000", None]
    spec = VideoToolSpec(example_index, page_url=lambda: pages[0])
    found = call(spec, "search_moments", query="who owns the billing provider migration", top_k=2)
    for moment in found["moments"]:
        link = urlsplit(moment["url"])
        assert (link.scheme, link.netloc, link.path) == ("http", "127.0.0.1:8000", "/")
        assert parse_qs(link.fragment)["source"] == [moment["source"]]
        assert float(parse_qs(link.fragment)["t"][0]) == pytest.approx(moment["start"], abs=0.01)
    read = call(spec, "read_transcript", source="team_sync.mp3", start=10, end=20)
    assert (
        read["url"].startswith("http://127.0.0.1:8000/#source=") and "&t=10&end=20" in read["url"]
    )
    pages[0] = None  # the service stopped: file links again
    found = call(spec, "search_moments", query="who owns the billing provider migration", top_k=1)
    assert (
        found["moments"][0]["url"].startswith(str(TEAM_SYNC))
        and "#t=" in found["moments"][0]["url"]
    )


def cited_times(found: dict) -> list[tuple[float, float]]:
    """The start and end of every item ``summarize_recording`` cites, read off its label."""
    times = []
    for item in found["items"]:
        _, start, end = parse_label(item["label"].strip("[]")) or ("", None, None)
        assert start is not None, item
        times.append((start, end if end is not None else start))
    return times


def test_summarize_recording_summarizes_the_span_asked_and_says_it(meeting_index):  # noqa: F811
    index, audio = meeting_index
    spec = VideoToolSpec(index)
    whole = call(spec, "summarize_recording", source=audio.name)
    assert "span" not in whole and any(s > 2 * TOPIC_SECONDS for s, _ in cited_times(whole))
    # "summarize minutes 4 to 8": the battery topic, 240-480 s
    part = call(spec, "summarize_recording", source=audio.name, start="4:00", end=480)
    assert (part["span"], part["start"], part["end"]) == ("04:00-08:00", TOPIC_SECONDS, 480.0)
    times = cited_times(part)
    assert times and all(s < 2 * TOPIC_SECONDS and e > TOPIC_SECONDS for s, e in times)
    assert any("charging dock quotes" in item["text"] for item in part["items"])
    assert not any("budget at twelve euros" in item["text"] for item in part["items"])
    from_only = call(spec, "summarize_recording", source=audio.name, start="12:00")
    assert from_only["span"].startswith("12:00-") and from_only["end"] > 15 * 60
    assert all(e > 3 * TOPIC_SECONDS for _, e in cited_times(from_only))


@pytest.mark.parametrize(
    ("span", "says"),
    [
        ({"start": "8:00", "end": "4:00"}, "give start < end"),
        ({"start": 300, "end": 300}, "give start < end"),
        ({"start": "10:00", "end": "59:00"}, "after the end of the recording"),
        ({"start": "59:00"}, "after the end of the recording"),
        ({"start": -20}, "from 0 s"),
        ({"end": "soon"}, "not a time"),
    ],
)
def test_a_span_summarize_recording_cannot_read_is_one_line(meeting_index, span, says):  # noqa: F811
    index, audio = meeting_index
    error = call(VideoToolSpec(index), "summarize_recording", source=audio.name, **span)["error"]
    assert says in error and "\n" not in error
