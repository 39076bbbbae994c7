"""The offline speaker backend on real voices, through the reader, index, answer and CLI.

The fixture is three espeak-ng voices taking nine known turns
(tests/fixtures/make_speech.py); its ``.srt`` sidecar gives the words, so only the
speaker labels come from a model here. Resemblyzer runs for real, once per file.
"""

from __future__ import annotations

import json
import shutil

import pytest

from benchmarks.speaker_scoring import (
    DIALOGUE_QUESTIONS,
    attributed_correctly,
    diarization_error_rate,
)
from llama_index_video import schema
from llama_index_video.cli.main import main
from llama_index_video.errors import MissingDependencyError
from llama_index_video.index import VideoIndex
from llama_index_video.media.audio import iter_audio_chunks
from llama_index_video.model_cache import ModelCache
from llama_index_video.reader.video_reader import VideoReader
from llama_index_video.speakers import resemblyzer_diarizer
from llama_index_video.speakers.resemblyzer_diarizer import ResemblyzerDiarizer
from tests_support import ROOT

SPEECH = ROOT / "tests" / "fixtures" / "speech"
TRUTH = json.loads((SPEECH / "dialogue.json").read_text())["turns"]
# Speakers are numbered in order of first appearance: Ana, Ben, Carl.
LABEL = {"Ana": "SPEAKER_1", "Ben": "SPEAKER_2", "Carl": "SPEAKER_3"}


class RecordingDiarizer(ResemblyzerDiarizer):
    """The real backend, keeping the turns it found for the DER check."""

    def __init__(self):
        super().__init__()
        self.turns = []

    def diarize(self, chunks, *, source=None):
        self.turns = super().diarize(chunks, source=source)
        return self.turns


@pytest.fixture(scope="module")
def diarizer():
    return RecordingDiarizer()


@pytest.fixture(scope="module")
def dialogue_index(tmp_path_factory, embed_model, diarizer):
    folder = tmp_path_factory.mktemp("speakers")
    for suffix in (".ogg", ".srt"):
        shutil.copy(SPEECH / f"dialogue{suffix}", folder / f"dialogue{suffix}")
    path = folder / "index"
    reader = VideoReader(media_dir=path / "media", diarizer=diarizer, frames=None, ocr="off")
    index = VideoIndex(path, embed_model=embed_model, reader=reader)
    report = index.ingest([folder / "dialogue.ogg"])
    assert report.ok, report
    yield index
    index.close()


def test_the_three_voices_are_told_apart(dialogue_index, diarizer):
    reference = [(t["start"], t["end"], t["speaker"]) for t in TRUTH]
    found = [(t.start, t.end, t.speaker) for t in diarizer.turns]
    assert {t.speaker for t in diarizer.turns} == set(LABEL.values())
    assert diarization_error_rate(reference, found).error_rate < 0.05


def test_every_unit_names_who_said_it(dialogue_index):
    rows = dialogue_index.vector_store._collection.get(include=["metadatas", "documents"])
    units = [m for m in rows["metadatas"] if m[schema.MODALITY] == "transcript"]
    assert len(units) >= len(TRUTH)
    for unit in units:
        spoken = [t for t in TRUTH if t["start"] - 0.3 <= unit[schema.START_S] <= t["end"]]
        assert len(spoken) == 1 and unit[schema.END_S] <= spoken[0]["end"] + 0.3, unit
        assert unit[schema.SPEAKER] == LABEL[spoken[0]["speaker"]]


@pytest.mark.parametrize("question", DIALOGUE_QUESTIONS, ids=lambda q: q.topic)
def test_what_each_speaker_said_is_found_with_the_speaker_filter(dialogue_index, question):
    speaker = f"SPEAKER_{question.speaker}"
    hits = dialogue_index.search(question.topic, top_k=3, speakers=[speaker])
    assert hits and {h.speaker for h in hits} == {speaker}
    assert attributed_correctly(question, [(h.start, h.end) for h in hits])


def test_another_speakers_filter_never_returns_the_turn(dialogue_index):
    hits = dialogue_index.search("the budget for seeds and tools", speakers=["SPEAKER_1"])
    assert all(h.speaker == "SPEAKER_1" for h in hits)
    assert not any(h.start <= 5.5 <= h.end for h in hits)


def test_the_extractive_answer_says_who_spoke(dialogue_index):
    answer = dialogue_index.ask("How much is the budget for seeds and tools?")
    assert answer.citations[0].speaker == "SPEAKER_2"
    assert 'SPEAKER_2 said: "The budget for seeds and tools' in answer.text
    assert answer.to_dict()["citations"][0]["speaker"] == "SPEAKER_2"


def test_cli_search_by_speaker(dialogue_index, capsys):
    code = main(["search", "raised beds", "--index", str(dialogue_index.path), "--json",
                 "--speaker", "3"])  # fmt: skip
    hits = json.loads(capsys.readouterr().out)
    assert code == 0 and hits
    assert {h["speaker"] for h in hits} == {"SPEAKER_3"}
    with pytest.raises(SystemExit):  # argparse's usage error
        main(["search", "x", "--index", str(dialogue_index.path), "--speaker", " , "])


def test_one_voice_is_one_speaker():
    turns = ResemblyzerDiarizer().diarize(iter_audio_chunks(SPEECH / "narration_en.ogg"))
    assert turns and {t.speaker for t in turns} == {"SPEAKER_1"}


def test_missing_extra_names_it(monkeypatch):
    monkeypatch.setattr(resemblyzer_diarizer, "_encoders", ModelCache())
    monkeypatch.setitem(__import__("sys").modules, "resemblyzer", None)
    with pytest.raises(MissingDependencyError, match=r"llama-index-video\[speakers\]"):
        ResemblyzerDiarizer(device="cpu").diarize([])
