"""An index whose vectors live in a real Chroma server (``chroma run``), not the folder."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from llama_index_video.errors import VectorStoreError
from llama_index_video.index import VideoIndex
from llama_index_video.reader.video_reader import VideoReader
from llama_index_video.store.collection import CHROMA_TOKEN_ENV, check_chroma_url
from real_servers import chroma_server, free_port
from tests_support import stored_rows


def _open(path, embed_model, **options):
    reader = VideoReader(media_dir=path / "media", ocr="off")  # subtitles: no speech model
    return VideoIndex(path, embed_model=embed_model, reader=reader, **options)


def test_server_index_holds_the_rows_a_folder_index_holds(
    tmp_path, subtitled_media, chroma_url, embed_model
):
    media = subtitled_media
    local = _open(tmp_path / "local", embed_model)
    served = _open(tmp_path / "served", embed_model, chroma_url=chroma_url)
    try:
        assert local.ingest([media]).ok
        assert served.ingest([media]).ok
        want = stored_rows(local.vector_store, tmp_path / "local")
        got = stored_rows(served.vector_store, tmp_path / "served")
        assert want and sorted(got) == sorted(want)
        for row_id, (document, metadata, vector) in want.items():
            assert got[row_id][:2] == (document, metadata)
            assert np.allclose(got[row_id][2], vector, atol=1e-5)
        query = "how much ultraviolet radiation does ozone absorb"
        hits = [json.dumps([h.to_dict() for h in index.search(query)]) for index in (local, served)]
        assert hits[0].replace(str(tmp_path / "local"), "<index>") == hits[1].replace(
            str(tmp_path / "served"), "<index>"
        )
        assert not (tmp_path / "served" / "chroma").exists()
    finally:
        local.close()
        served.close()
    again = VideoIndex(tmp_path / "served", embed_model=embed_model)  # the URL was recorded
    try:
        assert again.chroma_url == chroma_url
        assert sorted(stored_rows(again.vector_store, tmp_path)) == sorted(want)
        assert again.ingest([media]).of("skipped")
    finally:
        again.close()


@pytest.mark.parametrize(
    "url",
    ["ftp://host:8000", "http://", "http://user:secret@host:8000", "http://host:8000/path"],
)
def test_malformed_urls_are_refused_without_echoing_credentials(url):
    with pytest.raises(VectorStoreError) as caught:
        check_chroma_url(url)
    assert "secret" not in str(caught.value)


def test_unreachable_server_is_one_line_and_never_shows_the_token(
    tmp_path, monkeypatch, embed_model, caplog
):
    monkeypatch.setenv(CHROMA_TOKEN_ENV, "tok-never-shown")
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(VectorStoreError) as caught:
        VideoIndex(tmp_path / "index", embed_model=embed_model, chroma_url=url)
    message = str(caught.value)
    assert url in message and "\n" not in message
    assert "tok-never-shown" not in message + caplog.text


def test_a_server_gone_during_an_ingest_is_one_line_and_the_next_run_finishes(
    tmp_path, embed_model
):
    """The server stopped while an ingest wrote to it: httpx's ``ConnectError`` came out
    as it was (the command line: a traceback, exit 70)."""
    pumps, valves = tmp_path / "pumps.md", tmp_path / "valves.md"
    pumps.write_text("# Pumps\n\nThe circulation pump is serviced every spring.")
    valves.write_text("# Valves\n\nThe safety valve is tested every autumn.")
    port = free_port()
    with chroma_server(tmp_path / "data", port) as url:
        index = VideoIndex(tmp_path / "index", embed_model=embed_model, chroma_url=url)
        assert index.ingest([pumps]).ok
    try:
        with pytest.raises(VectorStoreError) as caught:
            index.ingest([valves])
        assert url in str(caught.value) and "\n" not in str(caught.value)
        with chroma_server(tmp_path / "data", port):
            report = index.ingest([pumps, valves])
            assert report.ok and [Path(f.path).name for f in report.of("indexed")] == ["valves.md"]
            check, _ = index.verify()
            assert check.ok
            found = {Path(hit.source).name for hit in index.search("safety valve", top_k=3)}
            assert "valves.md" in found
    finally:
        index.close()
