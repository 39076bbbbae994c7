"""The speaker models turn off oneDNN's per-shape kernel cache before torch builds one:
CAM++ windows of many lengths filled it file after file (three files in one ingest
peaked 235 MB above the same run without it)."""

from __future__ import annotations

import os

import pytest

from llama_index_video.model_cache import ModelCache
from llama_index_video.speakers import campplus, segmentation

SETTING = "ONEDNN_PRIMITIVE_CACHE_CAPACITY"


@pytest.mark.parametrize("load", [campplus.load_encoder, segmentation.load_segmenter])
def test_loading_a_speaker_model_turns_the_shape_cache_off(monkeypatch, load):
    monkeypatch.delenv(SETTING, raising=False)
    monkeypatch.setattr(campplus, "_models", ModelCache())
    monkeypatch.setattr(segmentation, "_models", ModelCache())
    load()
    assert os.environ[SETTING] == "0"


def test_a_capacity_the_user_set_is_kept(monkeypatch):
    monkeypatch.setenv(SETTING, "64")
    campplus.no_shape_cache()
    assert os.environ[SETTING] == "64"
