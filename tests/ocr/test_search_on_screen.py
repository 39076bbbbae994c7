"""End to end: facts shown but never said are found by search, through OCR and fusion."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from llama_index_video.cli.main import main
from llama_index_video.index import VideoIndex
from llama_index_video.reader.video_reader import VideoReader
from tests_support import CHECKOUT, OZONE

# question -> (file, title of the slide showing the answer, the answer)
ON_SCREEN_ONLY = {
    "How thick is one Dobson unit?": ("ozone_explainer.mp4", "1 DOBSON UNIT = 0.01 mm", "0.01 mm"),
    "what is the p99 latency": ("checkout_deep_dive.mp4", "Latency", "340 ms"),
    "label of the vertical axis": (
        "ozone_explainer.mp4",
        "Temperature in the atmosphere",
        "ALTITUDE (km)",
    ),
    "how many countries signed the Montreal Protocol": (
        "ozone_explainer.mp4",
        "Montreal Protocol (1987)",
        "197",
    ),
}


def squeeze(text: str) -> str:
    return "".join(unicodedata.normalize("NFKC", text).casefold().split())


@pytest.fixture(scope="module")
def index(tmp_path_factory, transcriber, embed_model):
    folder = tmp_path_factory.mktemp("on_screen_index")
    reader = VideoReader(media_dir=folder / "media", transcriber=transcriber)
    index = VideoIndex(folder, embed_model=embed_model, reader=reader)
    report = index.ingest([OZONE, CHECKOUT])
    assert report.ok, report
    yield index
    index.close()


def _slide(timeline, file_name, title):
    return next(s for s in timeline[file_name]["slides"] if s["title"] == title)


@pytest.mark.parametrize("question", ON_SCREEN_ONLY)
def test_on_screen_only_facts_are_found_in_the_top_three(index, timeline, question):
    file_name, title, answer = ON_SCREEN_ONLY[question]
    slide = _slide(timeline, file_name, title)
    hits = index.search(question, top_k=5)
    right = [
        rank
        for rank, hit in enumerate(hits, start=1)
        if Path(hit.source).name == file_name
        and hit.start < slide["end"]
        and hit.end > slide["start"]
        and squeeze(answer) in squeeze(" ".join([hit.text or "", *(c.text for c in hit.context)]))
    ]
    assert right and right[0] <= 3, [(h.modality, h.start, h.end, h.text) for h in hits]


def test_search_json_reports_ocr_hits_with_their_frame(index, timeline, capsys):
    flash = _slide(timeline, "ozone_explainer.mp4", "1 DOBSON UNIT = 0.01 mm")
    code = main(["search", "How thick is one Dobson unit?", "--index", str(index.path), "--json"])
    assert code == 0
    hits = json.loads(capsys.readouterr().out)
    hit = next(h for h in hits if h["modality"] == "ocr")
    assert hit["text"] == "1 DOBSON UNIT = 0.01 mm"
    assert hit["start"] == pytest.approx(flash["start"], abs=0.1)
    assert hit["end"] == pytest.approx(flash["end"], abs=0.2)
    assert hit["frame_time"] == pytest.approx(flash["start"], abs=0.1)
    assert Path(hit["frame_path"]).is_file()
    assert index.threshold is not None and index.threshold <= hit["score"] <= 1


def test_the_modality_filter_keeps_only_the_chosen_modalities(index):
    question = "In which year was the ozone hole discovered?"
    both = index.search(question, modalities=["transcript", "ocr"])
    assert {h.modality for h in both} == {"transcript", "ocr"}
    for modality in ("transcript", "ocr"):
        hits = index.search(question, modalities=[modality])
        assert hits and {h.modality for h in hits} == {modality}
    with pytest.raises(ValueError, match="unknown modality"):
        index.search(question, modalities=["slides"])


def test_a_question_the_index_cannot_answer_finds_nothing_it_is_sure_of(index):
    # The gate empties a search only when it is sure (issue 35: a wrong empty is worse
    # than a weak hit), so an off-topic question may keep a hit; its confidence says
    # how little it is worth, far under an answered question's.
    answered = index.search("In which year was the ozone hole discovered?")
    off_topic = index.search("Who won the football world cup in 1998?")
    assert answered and answered[0].confidence is not None
    assert all(hit.confidence is not None for hit in off_topic)
    assert all(hit.confidence < answered[0].confidence / 3 for hit in off_topic)
    assert all(hit.confidence < 0.2 for hit in off_topic)


def test_speech_over_a_chart_comes_with_the_text_shown_on_it(index, timeline, capsys):
    # The axis label is on screen while this is said, and never said itself.
    chart = _slide(timeline, "ozone_explainer.mp4", "Temperature in the atmosphere")
    question = "Where does most of the ozone sit?"
    args = ["search", question, "--index", str(index.path), "--json", "--modality", "transcript"]
    assert main(args) == 0
    hits = json.loads(capsys.readouterr().out)
    spoken = next(h for h in hits if h["start"] < chart["end"] and h["end"] > chart["start"])
    on_screen = [c for c in spoken["context"] if squeeze("ALTITUDE (km)") in squeeze(c["text"])]
    assert len(on_screen) == 1, spoken["context"]
    assert on_screen[0]["start"] == pytest.approx(chart["start"], abs=0.3)
    assert on_screen[0]["end"] == pytest.approx(chart["end"], abs=0.3)
    assert squeeze("ALTITUDE (km)") in squeeze(index.ask(question).text)
