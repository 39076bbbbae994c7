"""The pyannote backend without its weights (they need a hub token and the network).

What runs here: the token check and its error, that the token never shows, the
missing-package error, and the conversion of pyannote's output (3.x returns an
``Annotation``, 4.x an object holding one) to turns, fed objects of the same shape.
A real pipeline run needs ``pip install pyannote.audio`` and ``HF_TOKEN``.
"""

from __future__ import annotations

import sys
from types import SimpleNamespace

import pytest

from llama_index_video.errors import DiarizationError, MissingDependencyError
from llama_index_video.media.audio import AudioChunk
from llama_index_video.model_cache import ModelCache
from llama_index_video.speakers import pyannote_diarizer
from llama_index_video.speakers.pyannote_diarizer import PyannoteDiarizer, turns_from_annotation

SECRET = "hf_secret_token_value"


@pytest.fixture(autouse=True)
def no_token(monkeypatch):
    for name in pyannote_diarizer.TOKEN_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(pyannote_diarizer, "_pipelines", ModelCache())


def test_missing_token_says_how_to_get_one():
    with pytest.raises(DiarizationError, match="HF_TOKEN") as error:
        PyannoteDiarizer().diarize([])
    assert "accept its terms" in str(error.value)


def test_token_from_environment_reaches_the_loader_and_never_the_messages(monkeypatch):
    monkeypatch.setenv("HF_TOKEN", SECRET)
    monkeypatch.setitem(sys.modules, "pyannote.audio", None)
    diarizer = PyannoteDiarizer(token=None)
    with pytest.raises(MissingDependencyError, match=r"pip install pyannote\.audio") as error:
        diarizer.diarize([])
    assert SECRET not in str(error.value)
    assert SECRET not in repr(PyannoteDiarizer(token=SECRET))


class _Segment:
    def __init__(self, start, end):
        self.start, self.end = start, end


class _Annotation:
    """What ``pyannote.core.Annotation.itertracks(yield_label=True)`` yields."""

    def __init__(self, tracks):
        self._tracks = tracks

    def itertracks(self, yield_label=False):
        assert yield_label
        for number, (start, end, label) in enumerate(self._tracks):
            yield _Segment(start, end), number, label


TRACKS = [(4.0, 6.0, "SPEAKER_00"), (0.5, 3.0, "SPEAKER_01"), (6.5, 8.0, "SPEAKER_01")]


@pytest.mark.parametrize(
    "output",
    [_Annotation(TRACKS), SimpleNamespace(speaker_diarization=_Annotation(TRACKS))],
    ids=["pyannote-3", "pyannote-4"],
)
def test_pipeline_output_becomes_turns_named_by_first_appearance(output):
    turns = turns_from_annotation(output)
    assert [(t.start, t.speaker) for t in turns] == [
        (0.5, "SPEAKER_1"),
        (4.0, "SPEAKER_2"),
        (6.5, "SPEAKER_1"),
    ]


def test_a_loaded_pipeline_gets_the_waveform_and_options(monkeypatch):
    import numpy as np

    seen = {}

    def pipeline(audio, **options):
        seen.update(audio=audio, options=options)
        return _Annotation([(0.0, 1.0, "A")])

    monkeypatch.setitem(pyannote_diarizer._pipelines, "local-model", pipeline)
    chunks = [
        AudioChunk(0.0, np.zeros(16000, np.float32)),
        AudioChunk(1.0, np.ones(8000, np.float32)),
    ]
    turns = PyannoteDiarizer(model="local-model", token=SECRET, num_speakers=2).diarize(chunks)
    assert [t.speaker for t in turns] == ["SPEAKER_1"]
    assert tuple(seen["audio"]["waveform"].shape) == (1, 24000)
    assert seen["audio"]["sample_rate"] == 16000 and seen["options"] == {"num_speakers": 2}
