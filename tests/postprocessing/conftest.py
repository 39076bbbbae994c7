"""The ozone video's moments from its ground truth, as the reader would store them.

A unit per narrated sentence (as naive Whisper segments would be), the sampled frames,
and the slides' text as ``ocr`` nodes, linked as ``VideoReader`` links them. No speech
recognition and no OCR engine: what is said and shown is known exactly.
"""

from __future__ import annotations

import pytest
from llama_index.core import StorageContext, VectorStoreIndex

from llama_index_video.media.frames import sample_frames
from llama_index_video.ocr import ScreenText, screen_text_spans
from llama_index_video.reader import moments
from llama_index_video.reader.ids import content_hash
from llama_index_video.reader.units import TranscriptUnit
from llama_index_video.store.collection import open_chroma
from tests_support import OZONE


@pytest.fixture(scope="session")
def ozone_frames(tmp_path_factory):
    out = tmp_path_factory.mktemp("ozone_frames")
    return list(sample_frames(OZONE, out_dir=out, name_prefix="o", duration=80.0))


@pytest.fixture(scope="session")
def ozone_source():
    return moments.SourceFile(OZONE, content_hash(OZONE))


@pytest.fixture(scope="session")
def ozone_units(timeline, ozone_source):
    units = [
        TranscriptUnit(s["start"], s["end"], s["text"])
        for s in timeline["ozone_explainer.mp4"]["narration"]
    ]
    return moments.transcript_nodes(ozone_source, units, language="en", note=None)


@pytest.fixture(scope="session")
def linked_moments(timeline, ozone_source, ozone_units, ozone_frames):
    """Units, frames and on-screen text, linked: what ``VideoReader`` stores with OCR on."""
    slides = timeline["ozone_explainer.mp4"]["slides"]

    def shown_at(seconds):
        slide = next(s for s in slides if s["start"] - 0.05 <= seconds < s["end"])
        return ScreenText(lines=tuple(slide["visible_text"]))

    units = [n.model_copy(deep=True) for n in ozone_units]
    frames = [
        moments.frame_node(ozone_source, f, spoken="", screen_text="", note=None)
        for f in ozone_frames
    ]
    spans = screen_text_spans((f, shown_at(f.time)) for f in ozone_frames)
    texts = moments.ocr_nodes(ozone_source, spans, max_chars=1000, note=None)
    moments.link_moments(units, [*frames, *texts])
    return [*units, *frames, *texts]


@pytest.fixture(scope="session")
def linked_index(tmp_path_factory, linked_moments, embed_model):
    store = open_chroma(tmp_path_factory.mktemp("linked"))
    context = StorageContext.from_defaults(vector_store=store)
    return VectorStoreIndex(linked_moments, storage_context=context, embed_model=embed_model)
