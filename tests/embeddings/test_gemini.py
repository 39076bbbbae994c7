"""GeminiMultimodalEmbedding against the fake Gemini API: the model's traps, inputs, the key.

Every test drives the real google-genai client and asserts on what it put on the
wire. Sync and async paths run the same assertions (the ``mode`` fixture).
"""

from __future__ import annotations

import asyncio
import base64
import copy
import io
import logging
import os
import pickle
import traceback
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from google import genai
from llama_index.core import StorageContext, VectorStoreIndex
from llama_index.core.ingestion import IngestionPipeline
from llama_index.core.schema import ImageNode, MediaResource, Node, TextNode
from PIL import Image

from llama_index_video.embeddings.gemini import GeminiMultimodalEmbedding
from llama_index_video.embeddings.gemini_inputs import EmbedInput, pack
from llama_index_video.errors import EmbeddingError, MediaError, RemoteAPIError
from llama_index_video.media.clips import Clip
from llama_index_video.reader.clips import clip_nodes
from llama_index_video.reader.moments import SourceFile
from llama_index_video.reader.nodes import FrameNode
from tests.embeddings.wire import assert_unit, call, kind_of, parts_of
from tests.fakes.gemini_server import Fault, pseudo_embedding
from tests.media.synthetic import write_audio, write_video

SECRET = "AIzaSy-test-SECRET-0123456789abcdef"


# -- the traps ---------------------------------------------------------------------------


def test_one_content_per_input_not_one_aggregated_vector(gemini, make_embedding, mode):
    model = make_embedding(output_dimensionality=256)
    vectors = call(mode, model, "get_text_embedding_batch", ["red", "green", "blue"])

    (sent,) = gemini.requests_to("embed")
    requests = sent.json["requests"]
    assert len(requests) == 3  # three EmbedContentRequests, one vector each
    assert [len(r["content"]["parts"]) for r in requests] == [1, 1, 1]
    assert len(vectors) == 3
    assert len({tuple(v) for v in vectors}) == 3


def test_the_sdk_alone_would_aggregate_a_list_into_one_vector(gemini):
    """The trap itself: a plain list as ``contents`` becomes ONE content with many parts."""
    client = genai.Client(api_key=gemini.api_key, http_options={"base_url": gemini.base_url})
    response = client.models.embed_content(model="gemini-embedding-2", contents=["a", "b"])
    assert len(response.embeddings or []) == 1
    assert len(gemini.embedded_contents()[0]["parts"]) == 2


def test_task_goes_into_the_text_not_task_type(gemini, make_embedding, mode):
    model = make_embedding()
    call(mode, model, "get_query_embedding", "where is the ozone hole?")
    call(mode, model, "get_text_embedding", "The ozone layer thins over Antarctica.")

    query, document = gemini.embedded_contents()
    assert kind_of(query) == ("text", "task: search result | query: where is the ozone hole?")
    assert kind_of(document) == (
        "text",
        "title: none | text: The ozone layer thins over Antarctica.",
    )
    for sent in gemini.requests_to("embed"):
        assert "taskType" not in sent.body.decode()


def test_templates_are_settings_and_need_the_placeholder(gemini, make_embedding):
    model = make_embedding(query_template="task: question answering | query: {text}")
    model.get_query_embedding("why?")
    assert kind_of(gemini.embedded_contents()[0])[1] == "task: question answering | query: why?"
    with pytest.raises(ValueError, match="placeholder"):
        make_embedding(document_template="no placeholder")


def test_default_dimension_is_1536_and_vectors_are_unit_length(gemini, make_embedding, mode):
    model = make_embedding()
    vector = call(mode, model, "get_query_embedding", "hello")

    (sent,) = gemini.requests_to("embed")
    assert sent.json["requests"][0]["outputDimensionality"] == 1536
    raw = np.asarray(pseudo_embedding(parts_of(gemini.embedded_contents()[0]), 1536))
    assert np.linalg.norm(raw) > 2  # the fake answers vectors far from unit length
    assert_unit(vector, 1536)
    assert np.allclose(vector, raw / np.linalg.norm(raw))  # same direction, unit length


@pytest.mark.parametrize("dimension", [128, 768, 3072])
def test_configured_dimension_is_sent_and_returned(gemini, make_embedding, dimension):
    vector = make_embedding(output_dimensionality=dimension).get_query_embedding("x")
    assert gemini.requests_to("embed")[0].json["requests"][0]["outputDimensionality"] == dimension
    assert_unit(vector, dimension)


@pytest.mark.parametrize("dimension", [64, 127, 3073])
def test_dimension_outside_the_model_range_is_refused(make_embedding, dimension):
    with pytest.raises(ValueError, match="output_dimensionality"):
        make_embedding(output_dimensionality=dimension)


def test_a_vector_of_the_wrong_length_is_an_error(gemini, make_embedding, mode):
    gemini.answer_dimension = 300
    with pytest.raises(EmbeddingError, match=r"returned 300 values.*output_dimensionality=256"):
        call(mode, make_embedding(output_dimensionality=256), "get_query_embedding", "x")


def test_sync_and_async_give_the_same_vectors(make_embedding, media):
    model = make_embedding(output_dimensionality=256)
    texts = ["one", "two"]
    assert model.get_text_embedding_batch(texts) == asyncio.run(
        model.aget_text_embedding_batch(texts)
    )
    assert model.get_video_embedding(media["video"]) == asyncio.run(
        model.aget_video_embedding(media["video"])
    )


# -- media inputs --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "key", "mime"),
    [
        ("get_image_embedding", "jpeg", "image/jpeg"),
        ("get_video_embedding", "video", "video/mp4"),
        ("get_audio_embedding", "mp3", "audio/mp3"),
        ("get_audio_embedding", "wav", "audio/wav"),
        ("get_pdf_embedding", "pdf", "application/pdf"),
    ],
)
def test_small_media_is_sent_inline(gemini, make_embedding, media, mode, method, key, mime):
    vector = call(mode, make_embedding(output_dimensionality=256), method, media[key])

    (content,) = gemini.embedded_contents()
    assert kind_of(content) == ("inline", mime)
    inline = parts_of(content)[0]["inline_data"]["data"]
    assert base64.urlsafe_b64decode(inline) == media[key].read_bytes()
    assert_unit(vector, 256)
    assert gemini.requests_to("upload") == []


def test_clips_bytes_and_streams_are_accepted(gemini, make_embedding, clips, media):
    model = make_embedding(output_dimensionality=256)
    video_clip = next(c for c in clips if c.modality == "video")
    audio_clip = next(c for c in clips if c.modality == "audio")
    model.get_video_embedding(video_clip)
    model.get_audio_embedding(audio_clip)
    model.get_video_embedding(media["video"].read_bytes())
    model.get_audio_embedding(media["wav"].read_bytes())
    model.get_image_embedding(io.BytesIO(media["jpeg"].read_bytes()))
    assert [kind_of(c)[1] for c in gemini.embedded_contents()] == [
        "video/mp4",
        "audio/mp3",
        "video/mp4",
        "audio/wav",
        "image/jpeg",
    ]


def test_other_image_formats_are_converted_to_png(gemini, make_embedding, tmp_path):
    bmp = tmp_path / "frame.bmp"
    Image.new("RGB", (8, 8), (200, 10, 10)).save(bmp)
    make_embedding(output_dimensionality=256).get_image_embedding(str(bmp))
    (content,) = gemini.embedded_contents()
    assert kind_of(content) == ("inline", "image/png")


def test_a_clip_of_the_other_modality_is_refused(gemini, make_embedding, clips):
    audio_clip = next(c for c in clips if c.modality == "audio")
    with pytest.raises(EmbeddingError, match="audio clip, not video"):
        make_embedding().get_video_embedding(audio_clip)
    assert gemini.requests == []


def test_formats_the_model_does_not_take_are_refused_before_sending(
    gemini, make_embedding, tmp_path
):
    mkv = write_video(tmp_path / "talk.mkv", seconds=1.0)
    with pytest.raises(EmbeddingError, match=r"MP4|video/mp4.*cut_clips"):
        make_embedding().get_video_embedding(mkv)
    assert gemini.requests == []


def test_media_longer_than_the_model_takes_is_refused(gemini, make_embedding, tmp_path):
    long_video = write_video(
        tmp_path / "long.mp4", seconds=125, fps=1, gop=10, size=(16, 16), tone_hz=None
    )
    long_audio = write_audio(tmp_path / "long.wav", seconds=85)
    model = make_embedding()
    with pytest.raises(EmbeddingError, match=r"lasts 125\.0 s.*120 s of video.*cut_clips"):
        model.get_video_embedding(long_video)
    with pytest.raises(EmbeddingError, match=r"lasts 85\.0 s.*80 s of audio"):
        model.get_audio_embedding(long_audio)
    assert gemini.requests == []


def test_how_inputs_share_requests():
    text = EmbedInput(kind="text", label="t", text="x" * 10)
    image = EmbedInput(kind="image", label="i", data=b"\xff\xd8\xff" + b"0" * 97)
    video = EmbedInput(kind="video", label="v", data=b"0" * 100, mimetype="video/mp4")
    big = EmbedInput(kind="video", label="b", data=b"0" * 10_000, mimetype="video/mp4")

    def sizes(items: list[EmbedInput], **limits: Any) -> list[int]:
        settings = {"max_items": 100, "max_bytes": 1000, "per_request_limits": True, **limits}
        return [len(group) for group in pack(items, **settings)]

    assert sizes([image] * 7) == [6, 1]  # at most six images per request
    assert sizes([text, video, text, video]) == [3, 1]  # one video per request
    assert sizes([text] * 5, max_items=2) == [2, 2, 1]
    assert sizes([video] * 3, max_bytes=250, per_request_limits=False) == [2, 1]  # inline bytes
    assert sizes([big, big], per_request_limits=False) == [2]  # uploads take no inline room


def test_a_missing_file_is_a_media_error(make_embedding, tmp_path):
    with pytest.raises(MediaError, match="file not found"):
        make_embedding().get_video_embedding(tmp_path / "gone.mp4")


# -- nodes: VectorStoreIndex, IngestionPipeline ------------------------------------------


def _mixed_nodes(media: dict[str, Path], clips: list[Clip]) -> list:
    texts = [TextNode(text=t) for t in ("The ozone layer", "Checkout flow", "Team sync notes")]
    frame = FrameNode(
        text="Said: hello", image_path=str(media["jpeg"]), image_mimetype="image/jpeg"
    )
    source = SourceFile(media["video"], "c" * 64)
    return [*texts, frame, *clip_nodes(source, clips)]


def _chroma_store(folder: Path):
    import chromadb
    from chromadb.config import Settings
    from llama_index.vector_stores.chroma import ChromaVectorStore

    client = chromadb.PersistentClient(
        path=str(folder), settings=Settings(anonymized_telemetry=False)
    )
    collection = client.get_or_create_collection(
        "moments", configuration={"hnsw": {"space": "cosine"}}
    )
    return collection, ChromaVectorStore(chroma_collection=collection)


@pytest.mark.parametrize("max_inline_bytes", [10 * 2**20, 4000], ids=["inline", "files-api"])
def test_vector_store_index_embeds_each_node_natively(
    gemini, make_embedding, media, clips, tmp_path, mode, max_inline_bytes
):
    model = make_embedding(output_dimensionality=256, max_inline_bytes=max_inline_bytes)
    nodes = _mixed_nodes(media, clips)
    collection, store = _chroma_store(tmp_path / "chroma")

    index = VectorStoreIndex(
        nodes,
        embed_model=model,
        storage_context=StorageContext.from_defaults(vector_store=store),
        use_async=mode == "async",
    )

    sent = [kind_of(c) for c in gemini.embedded_contents()]  # async: in any order
    assert len(sent) == len(nodes)  # one content, so one vector, per node
    texts = sorted(text for kind, text in sent if kind == "text")
    assert texts == [
        f"title: none | text: {t}" for t in ("Checkout flow", "Team sync notes", "The ozone layer")
    ]
    assert sent.count(("inline", "image/jpeg")) == 1
    clip_way = "inline" if max_inline_bytes > 4000 else "file"
    assert sorted(k for k in sent if k[1] != "image/jpeg" and k[0] != "text") == sorted(
        (clip_way, c.mimetype) for c in clips
    )
    assert {c.mimetype for c in clips} == {"video/mp4", "audio/mp3"}
    assert gemini.live_files() == []  # every upload deleted after use

    stored = collection.get(include=["embeddings"])
    assert len(stored["ids"]) == len(nodes)
    for vector in stored["embeddings"]:
        assert_unit(list(vector), 256)

    hits = index.as_retriever(similarity_top_k=3).retrieve("a video about ozone")
    assert len(hits) == 3
    assert kind_of(gemini.embedded_contents()[-1])[1].startswith("task: search result | query:")


def test_as_a_transformation_it_reads_llamaindex_media_resources(
    gemini, make_embedding, media, mode
):
    jpeg = media["jpeg"].read_bytes()
    nodes = [
        Node(
            text_resource=MediaResource(text="a talk"),
            video_resource=MediaResource(path=media["video"], mimetype="video/mp4"),
        ),
        Node(audio_resource=MediaResource(path=media["mp3"], mimetype="audio/mpeg")),
        Node(image_resource=MediaResource(data=jpeg, mimetype="image/jpeg")),
        ImageNode(image=base64.b64encode(jpeg).decode(), text="an image"),
        TextNode(text="plain words"),
    ]
    model = make_embedding(output_dimensionality=256)
    pipeline = IngestionPipeline(transformations=[model])
    out = pipeline.run(nodes=nodes) if mode == "sync" else asyncio.run(pipeline.arun(nodes=nodes))

    sent = sorted(kind_of(c) for c in gemini.embedded_contents())  # async: in any order
    assert sent == [
        ("inline", "audio/mp3"),
        ("inline", "image/jpeg"),
        ("inline", "image/jpeg"),
        ("inline", "video/mp4"),
        ("text", "title: none | text: plain words"),
    ]
    for node in out:
        assert_unit(node.embedding, 256)


def test_a_failing_node_fails_the_transformation_with_a_count(gemini, make_embedding, tmp_path):
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"not a png")  # the API rejects it: 400
    nodes = [
        TextNode(text="fine"),
        FrameNode(text="x", image_path=str(broken)),
        TextNode(text="ok"),
    ]
    with pytest.raises(RemoteAPIError, match=r"1 of 3 inputs failed; first: .*broken\.png"):
        make_embedding(output_dimensionality=256)(nodes)


def test_embeddings_cache_is_refused(make_embedding):
    from llama_index.core.storage.kvstore import SimpleKVStore

    with pytest.raises(ValueError, match="embeddings_cache"):
        make_embedding(embeddings_cache=SimpleKVStore())


# -- the API key ---------------------------------------------------------------------------


def test_key_comes_from_argument_then_gemini_then_google_env(gemini, monkeypatch):
    def sent_key(**options: Any) -> str:
        model = GeminiMultimodalEmbedding(base_url=gemini.base_url, **options)
        gemini.api_key = model._api_key.get_secret_value()  # let the fake accept it
        model.get_query_embedding("q")
        return gemini.requests_to("embed")[-1].headers["x-goog-api-key"]

    with pytest.raises(EmbeddingError, match="GEMINI_API_KEY"):
        GeminiMultimodalEmbedding(base_url=gemini.base_url)
    monkeypatch.setenv("GOOGLE_API_KEY", "google-key")
    assert sent_key() == "google-key"
    monkeypatch.setenv("GEMINI_API_KEY", "gemini-key")
    assert sent_key() == "gemini-key"
    assert sent_key(api_key="argument-key") == "argument-key"


def test_the_key_never_leaks(gemini, make_embedding, caplog, mode):
    caplog.set_level(logging.DEBUG)
    model = make_embedding(api_key=SECRET)  # the fake expects another key: 400

    with pytest.raises(RemoteAPIError) as failure:
        call(mode, model, "get_query_embedding", "q")

    assert failure.value.status == 400
    assert "API key" in str(failure.value)
    (sent,) = gemini.requests_to("embed")
    assert sent.headers["x-goog-api-key"] == SECRET  # a header, never the URL
    assert SECRET not in sent.path + str(sent.query)
    places = {
        "error": "".join(traceback.format_exception(failure.value)),
        "logs": caplog.text,
        "repr": repr(model) + str(model),
        "model_dump": str(model.model_dump()),
        "to_json": model.to_json(),
        "to_dict": str(model.to_dict()),
        "payload": str(model.to_payload()),
    }
    for place, text in places.items():
        assert SECRET not in text, place


def test_a_key_echoed_by_the_server_is_redacted(gemini, make_embedding):
    model = make_embedding(api_key=SECRET, max_retries=0)
    gemini.fail("embed", Fault(status=403, message=f"key {SECRET} is suspended"))
    with pytest.raises(RemoteAPIError) as failure:
        model.get_query_embedding("q")
    assert SECRET not in str(failure.value)
    assert "key *** is suspended" in str(failure.value)


@pytest.mark.parametrize("padding", ["\n", " ", " \r\n"], ids=["newline", "space", "crlf"])
def test_a_pasted_key_is_stripped_and_masked_when_echoed(gemini, make_embedding, padding, mode):
    gemini.echo_headers = True
    gemini.fail("embed", 403)
    model = make_embedding(api_key=gemini.api_key + padding, max_retries=0)
    with pytest.raises(RemoteAPIError) as failure:
        call(mode, model, "get_query_embedding", "q")
    assert model._api_key.get_secret_value() == gemini.api_key
    assert "you sent {'x-goog-api-key': '***'" in str(failure.value)
    assert gemini.api_key not in str(failure.value)


def test_settings_round_trip_without_the_key(gemini, make_embedding, monkeypatch):
    model = make_embedding(output_dimensionality=768, use_batch_api=True)
    assert model.class_name() == "GeminiMultimodalEmbedding"
    data = model.to_dict()
    assert data["output_dimensionality"] == 768
    assert "api_key" not in data
    monkeypatch.setenv("GEMINI_API_KEY", gemini.api_key)
    again = GeminiMultimodalEmbedding.from_dict(data)
    assert again.output_dimensionality == 768
    assert again.use_batch_api


def test_copies_and_pickles_start_a_fresh_client_and_keep_key_and_counts(gemini, make_embedding):
    model = make_embedding(output_dimensionality=256)
    model.get_query_embedding("before")
    for copy_of in (copy.deepcopy(model), pickle.loads(pickle.dumps(model))):
        assert copy_of.usage.requests == 1
        assert copy_of.get_query_embedding("after") == model.get_query_embedding("after")
    assert {r.headers["x-goog-api-key"] for r in gemini.requests_to("embed")} == {gemini.api_key}


@pytest.mark.live
@pytest.mark.skipif(not os.environ.get("GEMINI_API_KEY"), reason="GEMINI_API_KEY is not set")
def test_live_text_image_and_video_share_one_space(media):
    model = GeminiMultimodalEmbedding(output_dimensionality=768)
    query = model.get_query_embedding("a short video")
    vectors = [
        model.get_text_embedding("A few seconds of coloured frames and a tone."),
        model.get_image_embedding(str(media["jpeg"])),
        model.get_video_embedding(media["video"]),
    ]
    for vector in [query, *vectors]:
        assert_unit(vector, 768)
    assert model.usage.embedded_items == 4


def test_the_timeout_has_the_llms_name_and_the_old_one_still_works_with_a_warning():
    from llama_index_video.answering.gemini_llm import GeminiMultimodalLLM

    model = GeminiMultimodalEmbedding(api_key="k", timeout=7.0, max_retries=1)
    llm = GeminiMultimodalLLM(api_key="k", timeout=7.0, max_retries=1)
    assert model.retry_policy() == llm.retry_policy()
    with pytest.warns(DeprecationWarning, match="timeout="):
        old = GeminiMultimodalEmbedding(api_key="k", request_timeout=3.0)
    assert old.timeout == 3.0 and "request_timeout" not in old.to_dict()
    with pytest.warns(DeprecationWarning, match=r"\.timeout"):
        assert old.request_timeout == 3.0
    for make in (GeminiMultimodalEmbedding, GeminiMultimodalLLM):
        with pytest.raises(ValueError, match="retry_max_delay"):
            make(api_key="k", retry_initial_delay=5.0, retry_max_delay=1.0)
