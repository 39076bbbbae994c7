"""A mixed folder into one Chroma index with native Gemini vectors, through the fake API."""

from __future__ import annotations

import json
import shutil
import time

import numpy as np
import pytest

from llama_index_video import schema
from llama_index_video.cli.main import main
from llama_index_video.embeddings.gemini import GeminiMultimodalEmbedding
from llama_index_video.embeddings.spec import EmbeddingSpec
from llama_index_video.errors import IndexCompatibilityError
from llama_index_video.index import VideoIndex
from llama_index_video.reader.options import ReaderOptions
from llama_index_video.store.folder import IndexFolder
from tests.fakes.gemini_server import FakeGeminiServer, Fault
from tests_support import HANDBOOK, OZONE, TEAM_SYNC

FAST = {"retry_initial_delay": 0.001, "retry_max_delay": 0.01, "timeout": 5.0}


@pytest.fixture
def gemini(monkeypatch):
    with FakeGeminiServer() as server:
        monkeypatch.setenv("GEMINI_API_KEY", server.api_key)
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.base_url)
        monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
        yield server


@pytest.fixture
def folder(tmp_path):
    media = tmp_path / "mixed"
    media.mkdir()
    for path in (OZONE, TEAM_SYNC, HANDBOOK):
        shutil.copy(path, media / path.name)
    return media


def _options(script_transcriber):
    """No clip settings: a Gemini index cuts clips because its embedding embeds them.
    The narration script for speech (these tests are about the vectors, not what is heard)."""
    return ReaderOptions(transcriber=script_transcriber, ocr="off")


def _rows(index):
    return index.vector_store._collection.get(include=["metadatas", "embeddings"])


def _media_types(parts):
    """The MIME type of every media part (inline or uploaded), either JSON spelling."""
    for part in parts:
        media = next(
            (part[k] for k in ("inline_data", "inlineData", "file_data", "fileData") if k in part),
            None,
        )
        if media is not None:
            yield media.get("mime_type") or media.get("mimeType")


def _parts(contents):
    return [part for content in contents for part in content["parts"]]


def test_mixed_folder_gets_native_vectors_in_one_collection(
    gemini, folder, tmp_path, script_transcriber
):
    path = tmp_path / "index"
    index = VideoIndex(
        path,
        embed_model=EmbeddingSpec(backend="gemini", dimension=256),
        reader_options=_options(script_transcriber),
    )
    report = index.ingest([folder])
    assert report.ok, report

    rows = _rows(index)
    modalities = {m[schema.MODALITY] for m in rows["metadatas"]}
    assert modalities == {"transcript", "frame", "text", "video", "audio"}
    vectors = np.asarray(rows["embeddings"])
    assert vectors.shape[1] == 256
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)

    contents = gemini.embedded_contents()
    assert len(contents) == len(rows["ids"])  # one content (one vector) per node
    assert all(len(c["parts"]) == 1 for c in contents)
    parts = _parts(contents)
    texts = [p["text"] for p in parts if "text" in p]
    assert texts and all(t.startswith("title: ") and " | text: " in t for t in texts)
    mimes = set(_media_types(parts))
    assert {"image/jpeg", "video/mp4", "audio/mp3"} <= mimes
    dims = {
        r["outputDimensionality"]
        for call in gemini.requests_to("embed")
        for r in call.json["requests"]
    }
    assert dims == {256}

    hits = index.search("ozone layer", top_k=3)
    query = gemini.embedded_contents()[-1]["parts"][0]["text"]
    assert query == "task: search result | query: ozone layer"
    assert hits  # the fake's vectors carry no meaning; the path must still work
    index.close()

    reopened = VideoIndex(path)  # the stored spec rebuilds the Gemini model
    assert isinstance(reopened.embed_model, GeminiMultimodalEmbedding)
    assert reopened.embed_model.output_dimensionality == 256
    reopened.close()
    with pytest.raises(IndexCompatibilityError):
        VideoIndex(path, embed_model=EmbeddingSpec(backend="gemini", dimension=512))


def test_a_failing_batch_is_kept_and_retried_by_the_next_ingest(
    gemini, folder, tmp_path, script_transcriber
):
    path = tmp_path / "index"
    embed = GeminiMultimodalEmbedding(max_retries=1, embed_batch_size=4, **FAST)
    index = VideoIndex(path, embed_model=embed, reader_options=_options(script_transcriber))
    gemini.fail("embed", 500, 500)  # the first request fails twice: out of retries
    report = index.ingest([folder / "team_sync.mp3"])
    outcome = report.files[0]
    assert outcome.outcome == "indexed" and outcome.pending > 0 and not report.ok
    assert "the next ingest retries them" in outcome.reason
    stored = len(_rows(index)["ids"])
    assert stored == outcome.node_count

    again = index.ingest([folder / "team_sync.mp3"])
    assert again.ok and again.files[0].pending == 0
    assert "embedded" in again.files[0].reason
    ids = _rows(index)["ids"]
    assert len(ids) == len(set(ids)) == stored + outcome.pending
    assert index.ingest([folder / "team_sync.mp3"]).files[0].reason == "unchanged"
    index.close()


RETRY_IN_ANOTHER_PROCESS = """
import sys
from pathlib import Path
from llama_index_video.embeddings.gemini import GeminiMultimodalEmbedding
from llama_index_video.index import VideoIndex
embed = GeminiMultimodalEmbedding(max_retries=1, embed_batch_size=4, timeout=120.0)
VideoIndex(Path(sys.argv[1]), embed_model=embed).ingest([Path(sys.argv[2])])
"""


def test_a_retry_of_pending_moments_killed_half_way_loses_none_of_them(
    gemini, folder, tmp_path, spawn
):
    """The retry forgot a file's pending moments before embedding them: killed while
    the model answered (Ctrl-C, a crash, a full disk while storing), it left the file
    indexed without them and nothing pending, so every later ingest said "unchanged"
    and search never found them. They stay pending now until stored."""
    path, handbook = tmp_path / "index", folder / "handbook.md"
    embed = GeminiMultimodalEmbedding(max_retries=1, embed_batch_size=4, **FAST)
    index = VideoIndex(path, embed_model=embed)
    gemini.fail("embed", 500, 500)  # the first batch fails twice: out of retries
    first = index.ingest([handbook]).files[0]
    assert first.outcome == "indexed" and first.pending > 0
    stored = len(_rows(index)["ids"])
    index.close()
    IndexFolder(path).release()  # another process writes next

    gemini.fail("embed", Fault(delay=60.0))  # the model takes its time to answer
    asked = len(gemini.requests_to("embed"))
    code = RETRY_IN_ANOTHER_PROCESS.replace("sys.argv[1]", repr(str(path)))
    retry = spawn(code=code.replace("sys.argv[2]", repr(str(handbook))))
    deadline = time.monotonic() + 120
    while len(gemini.requests_to("embed")) == asked:  # ends: the deadline is fixed
        assert retry.poll() is None, retry.communicate()
        assert time.monotonic() < deadline, "the retry never asked the model"
        time.sleep(0.02)
    retry.kill()
    retry.communicate()

    index = VideoIndex(path, embed_model=embed)
    again = index.ingest([handbook]).files[0]
    assert again.pending == 0 and "embedded" in again.reason, again
    ids = _rows(index)["ids"]
    assert len(ids) == len(set(ids)) == stored + first.pending == again.node_count
    assert index.verify()[0].ok
    index.close()


def test_cli_ingest_with_gemini_then_search_reopens_with_it(gemini, folder, tmp_path, capsys):
    index = tmp_path / "cli-index"
    code = main(
        [
            "ingest",
            str(folder / "handbook.md"),
            "--index",
            str(index),
            "--embed",
            "gemini",
            "--dimension",
            "128",
            "--quiet",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0 and "1 indexed" in out and "gemini: " in out
    calls = len(gemini.requests_to("embed"))
    assert main(["search", "deploy days", "--index", str(index), "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert len(gemini.requests_to("embed")) == calls + 1
    assert all(h["modality"] == "text" for h in hits)
    assert gemini.api_key not in out


def test_gemini_answers_with_the_retrieved_clip_itself(
    gemini, folder, tmp_path, script_transcriber
):
    from llama_index_video.answering.answerer import AskOptions
    from llama_index_video.answering.gemini_llm import GeminiMultimodalLLM

    path = tmp_path / "index"
    index = VideoIndex(
        path,
        embed_model=EmbeddingSpec(backend="gemini", dimension=128),
        reader_options=_options(script_transcriber),
    )
    assert index.ingest([folder / "ozone_explainer.mp4"]).ok
    gemini.queue_generate("Ozone absorbs UV [ozone_explainer.mp4 00:00-01:20].")
    llm = GeminiMultimodalLLM(max_retries=0)
    # Every moment is retrieved (the fake's vectors carry no meaning), the clip among them.
    answer = index.ask("What happens in this video?", llm=llm, options=AskOptions(top_k=50))
    body = gemini.requests_to("generate")[0].json
    parts = [part for content in body["contents"] for part in content["parts"]]
    videos = [m for m in _media_types(parts) if m == "video/mp4"]
    assert len(videos) == 1
    assert answer.found and answer.model
    index.close()
