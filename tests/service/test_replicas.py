"""Two ``serve`` processes over one index in a Chroma server answer alike: no replica state."""

from __future__ import annotations

import json
import urllib.parse
import urllib.request

import pytest

from llama_index_video.index import VideoIndex
from llama_index_video.reader.video_reader import VideoReader
from real_servers import serve_replicas

QUERIES = ["ultraviolet radiation", "where does ozone sit in the atmosphere", "production deploys"]


def _get(url: str) -> dict | list:
    with urllib.request.urlopen(url, timeout=60) as response:
        return json.loads(response.read())


def _post(url: str, body: dict) -> dict:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


def _answers(base: str, queries: list[str]) -> list:
    searches = [_get(f"{base}/api/search?q={urllib.parse.quote(q)}&top_k=3") for q in queries]
    asks = [_post(f"{base}/api/ask", {"question": q, "top_k": 3}) for q in queries]
    return [searches, asks]


@pytest.mark.timeout(900)
def test_two_replicas_answer_identically_and_see_new_content(
    tmp_path, subtitled_media, chroma_url, embed_model
):
    folder = tmp_path / "index"
    index = VideoIndex(
        folder,
        embed_model=embed_model,
        reader=VideoReader(media_dir=folder / "media", ocr="off"),
        chroma_url=chroma_url,
        collection="replicas",
    )
    try:
        assert index.ingest([subtitled_media / "ozone_explainer.mp4"]).ok
        with serve_replicas(folder, chroma_url, 2) as replicas:
            first = [_answers(url, QUERIES) for url in replicas]
            assert first[0] == first[1]
            assert first[0][0][0], "the ozone query found nothing"
            assert not first[0][0][2], "the handbook is not indexed yet"
            # Content another process adds reaches both replicas through the shared server.
            assert index.ingest([subtitled_media / "handbook.md"]).ok
            second = [_answers(url, QUERIES) for url in replicas]
            assert second[0] == second[1]
            assert any("handbook.md" in hit["source"] for hit in second[0][0][2])
    finally:
        index.close()
