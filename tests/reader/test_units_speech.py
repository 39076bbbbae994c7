"""Units over real speech recognition of a narration that pauses mid-sentence (issue 36).

``stratosphere_en.ogg`` (espeak-ng, synthetic; ``tests/fixtures/make_speech.py``) says
"And the reason the stratosphere begins to warm up is because", pauses 1.6 s, then
gives the reason. tiny.en writes a full stop after "because"; the question must still
find the moment that holds the reason, not the unfinished half before it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

SPEECH = Path(__file__).resolve().parent.parent / "fixtures" / "speech"
NARRATION = SPEECH / "stratosphere_en.ogg"


def test_why_the_stratosphere_warms_finds_the_moment_that_says_why(
    tmp_path, transcriber, embed_model
):
    from llama_index_video.index import VideoIndex
    from llama_index_video.reader.video_reader import VideoReader

    sentences = json.loads(NARRATION.with_suffix(".json").read_text())["sentences"]
    reason = next(s for s in sentences if s["text"].startswith("ultraviolet"))
    source = tmp_path / NARRATION.name
    shutil.copy(NARRATION, source)
    index = VideoIndex(
        tmp_path / "index",
        embed_model=embed_model,
        reader=VideoReader(media_dir=tmp_path / "media", transcriber=transcriber),
    )
    try:
        assert index.ingest([source]).ok
        hits = index.search("Why does the stratosphere begin to warm up?")
    finally:
        index.close()

    assert hits, "the answer was not found at all"
    top = hits[0]
    assert top.start is not None and top.end is not None
    # The first moment holds the reason: it covers the sentence said after the pause
    # (tolerance 1 s for where speech recognition puts word boundaries).
    assert top.start <= reason["start"] + 1.0 and top.end >= reason["end"] - 1.0, top
