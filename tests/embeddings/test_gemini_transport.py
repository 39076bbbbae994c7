"""Retries, timeouts, the Files API, concurrency and the Batch API, against the fake server."""

from __future__ import annotations

import asyncio
import time
import warnings
from typing import Any

import pytest
from llama_index.core.schema import TextNode

from llama_index_video._gemini import transport
from llama_index_video.errors import RemoteAPIError
from llama_index_video.reader.nodes import FrameNode
from tests.embeddings.wire import call, kind_of
from tests.fakes.gemini_server import Fault

# -- retries and timeouts ------------------------------------------------------------------


def test_429_and_500_are_retried_then_succeed(gemini, make_embedding, mode):
    gemini.fail("embed", 429, 500)
    vector = call(mode, make_embedding(output_dimensionality=256), "get_query_embedding", "q")
    assert len(vector) == 256
    assert len(gemini.requests_to("embed")) == 3


def test_retries_are_bounded_and_end_in_a_remote_api_error(gemini, make_embedding, mode):
    gemini.fail("embed", *[503] * 10)
    model = make_embedding(max_retries=2)
    with pytest.raises(RemoteAPIError, match="HTTP 503") as failure:
        call(mode, model, "get_query_embedding", "q")
    assert failure.value.status == 503
    assert "Gemini API" in str(failure.value)
    assert len(gemini.requests_to("embed")) == 3  # the first try and two retries


def test_client_errors_are_not_retried(gemini, make_embedding, mode):
    gemini.fail("embed", 404)
    with pytest.raises(RemoteAPIError, match="check the model name"):
        call(mode, make_embedding(), "get_query_embedding", "q")
    assert len(gemini.requests_to("embed")) == 1


def test_a_slow_answer_times_out_and_is_retried(gemini, make_embedding, mode):
    gemini.fail("embed", Fault(delay=2.0))
    model = make_embedding(output_dimensionality=256, timeout=0.3)
    vector = call(mode, model, "get_query_embedding", "q")
    assert len(vector) == 256
    assert len(gemini.requests_to("embed")) == 2


def test_timeouts_are_bounded_too(gemini, make_embedding, mode):
    gemini.fail("embed", *[Fault(delay=2.0)] * 5)
    model = make_embedding(timeout=0.2, max_retries=1)
    with pytest.raises(RemoteAPIError, match="no answer within the request timeout"):
        call(mode, model, "get_query_embedding", "q")
    assert len(gemini.requests_to("embed")) == 2


def test_we_know_which_transport_errors_the_sdk_retries():
    """Pins our copy of a private SDK list: retrying what the SDK retried multiplies attempts."""
    from google.genai import _api_client
    from google.genai.version import __version__ as sdk

    names = ("_HTTPX_TRANSIENT_EXC", "_AIOHTTP_TRANSIENT_EXC")
    missing = [name for name in names if not hasattr(_api_client, name)]
    advice = (
        "check which transport errors HttpRetryOptions retries and update "
        "SDK_RETRIED_TRANSPORT in llama_index_video/_gemini/transport.py"
    )
    assert not missing, f"google-genai {sdk} has no {missing}: {advice}"
    theirs = {cls for name in names for cls in getattr(_api_client, name)}
    assert set(transport.sdk_retried_transport()) == theirs, f"google-genai {sdk}: {advice}"


def test_a_failed_upload_is_restarted(gemini, make_embedding, media, mode):
    gemini.fail("upload", Fault(), 503)  # the session starts, its chunk fails
    call(mode, make_embedding(max_inline_bytes=100), "get_video_embedding", media["video"])
    commands = [r.headers.get("x-goog-upload-command") for r in gemini.requests_to("upload")]
    assert commands == ["start", "upload, finalize", "start", "upload, finalize"]


# -- the Files API -------------------------------------------------------------------------


def test_large_media_goes_through_the_files_api(gemini, make_embedding, media, mode):
    gemini.processing_polls = 3
    vector = call(mode, make_embedding(max_inline_bytes=100), "get_video_embedding", media["video"])

    assert len(vector) == 1536
    (upload_start, upload_data) = gemini.requests_to("upload")
    assert upload_start.headers["x-goog-upload-protocol"] == "resumable"
    assert upload_start.headers["x-goog-upload-header-content-type"] == "video/mp4"
    assert upload_data.body == media["video"].read_bytes()
    assert len(gemini.requests_to("file_get")) == 3  # polled until ACTIVE
    (content,) = gemini.embedded_contents()
    assert kind_of(content) == ("file", "video/mp4")
    (stored,) = gemini.files.values()
    assert content["parts"][0]["file_data"]["file_uri"].endswith(stored.name)
    assert stored.deleted
    assert [r.path for r in gemini.requests_to("file_delete")] == [f"/v1/{stored.name}"]


def test_files_with_non_ascii_names_upload(gemini, make_embedding, media, tmp_path, mode):
    video = tmp_path / "café – über 'q'.mp4"
    video.write_bytes(media["video"].read_bytes())
    call(mode, make_embedding(max_inline_bytes=100), "get_video_embedding", video)
    (stored,) = gemini.files.values()
    assert stored.data == video.read_bytes()
    assert stored.display_name == video.name


def test_a_bad_key_fails_once_not_once_per_input(gemini, make_embedding):
    model = make_embedding(api_key="wrong-key")
    outcomes = model.try_embed_nodes([TextNode(text=t) for t in "abc"])
    assert not any(o.ok for o in outcomes)
    assert len(gemini.requests_to("embed")) == 1


def test_a_file_stuck_processing_times_out_and_is_deleted(gemini, make_embedding, media, mode):
    gemini.file_final_state = "PROCESSING"
    model = make_embedding(max_inline_bytes=100, file_ready_timeout=0.2)
    with pytest.raises(RemoteAPIError, match=r"still PROCESSING.*file_ready_timeout"):
        call(mode, model, "get_video_embedding", media["video"])
    assert gemini.requests_to("embed") == []
    assert gemini.live_files() == []


def test_a_failed_file_is_an_error_and_is_deleted(gemini, make_embedding, media, mode):
    gemini.processing_polls, gemini.file_final_state = 1, "FAILED"
    model = make_embedding(max_inline_bytes=100)
    with pytest.raises(RemoteAPIError, match=r"could not process talk\.mp4"):
        call(mode, model, "get_video_embedding", media["video"])
    assert gemini.requests_to("embed") == []
    assert gemini.live_files() == []


def test_a_file_whose_state_cannot_be_read_is_deleted(gemini, make_embedding, media, mode):
    gemini.processing_polls = 1
    gemini.fail("file_get", *[500] * 3)
    model = make_embedding(max_inline_bytes=100, max_retries=1)
    with pytest.raises(RemoteAPIError, match="HTTP 500"):
        call(mode, model, "get_video_embedding", media["video"])
    assert gemini.live_files() == []


def test_uploads_are_deleted_even_when_embedding_fails(gemini, make_embedding, media, mode):
    gemini.fail("embed", *[500] * 5)
    model = make_embedding(max_inline_bytes=100, max_retries=1)
    with pytest.raises(RemoteAPIError, match="HTTP 500"):
        call(mode, model, "get_video_embedding", media["video"])
    assert len(gemini.files) == 1
    assert gemini.live_files() == []


def test_cancelling_mid_upload_leaves_no_broken_generator(gemini, make_embedding, media):
    gemini.file_final_state = "PROCESSING"
    model = make_embedding(max_inline_bytes=100, file_ready_timeout=30)

    async def cancel_soon() -> None:
        await asyncio.wait_for(model.aget_video_embedding(media["video"]), timeout=0.3)

    with pytest.raises(TimeoutError):
        asyncio.run(cancel_soon())
    # (An unclosed protocol would surface as "generator ignored GeneratorExit", which
    # pytest turns into a failing warning; the upload itself expires on the server.)


# -- per-item failures, concurrency, usage --------------------------------------------------


def test_one_bad_input_fails_alone(gemini, make_embedding, tmp_path, mode):
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"not really a png")
    nodes = [
        TextNode(text="first"),
        FrameNode(text="frame", image_path=str(broken), image_mimetype="image/png"),
        TextNode(text="third"),
    ]
    outcomes = call(mode, make_embedding(output_dimensionality=256), "try_embed_nodes", nodes)

    assert [o.ok for o in outcomes] == [True, False, True]
    assert [o.node_id for o in outcomes] == [n.node_id for n in nodes]
    assert outcomes[1].error is not None and outcomes[1].error.status == 400
    assert "broken.png" in str(outcomes[1].error)
    assert nodes[0].embedding == outcomes[0].embedding and nodes[1].embedding is None
    # The rejected request of three, then each input on its own.
    assert [len(r.json["requests"]) for r in gemini.requests_to("embed")] == [3, 1, 1, 1]


def test_inputs_that_cannot_be_sent_fail_without_a_request(gemini, make_embedding, tmp_path):
    nodes = [FrameNode(text="gone", image_path=str(tmp_path / "gone.jpg")), TextNode(text="fine")]
    outcomes = make_embedding(output_dimensionality=256).try_embed_nodes(nodes)
    assert [o.ok for o in outcomes] == [False, True]
    assert "file not found" in str(outcomes[0].error)
    assert len(gemini.embedded_contents()) == 1


def test_async_concurrency_is_bounded(gemini, make_embedding):
    gemini.fail("embed", *[Fault(delay=0.15)] * 8)
    model = make_embedding(output_dimensionality=256, embed_batch_size=1, max_concurrency=3)
    vectors = asyncio.run(model.aget_text_embedding_batch([f"text {i}" for i in range(8)]))
    assert len(vectors) == 8
    assert len(gemini.requests_to("embed")) == 8
    assert 2 <= gemini.max_in_flight <= 3


def test_sync_requests_run_one_at_a_time(gemini, make_embedding):
    gemini.fail("embed", *[Fault(delay=0.05)] * 4)
    model = make_embedding(output_dimensionality=256, embed_batch_size=1)
    model.get_text_embedding_batch(["a", "b", "c", "d"])
    assert gemini.max_in_flight == 1


def test_images_share_requests_six_at_a_time_videos_go_alone(gemini, make_embedding, media):
    model = make_embedding(output_dimensionality=256)
    model.get_image_embedding_batch([str(media["jpeg"])] * 8)
    assert [len(r.json["requests"]) for r in gemini.requests_to("embed")] == [6, 2]


def test_usage_counts_items_requests_and_reported_tokens(gemini, make_embedding, media):
    model = make_embedding(output_dimensionality=256)
    model.get_text_embedding_batch(["12345678", "abcd"])
    model.get_image_embedding(str(media["jpeg"]))
    model.get_video_embedding(media["video"])

    usage = model.usage
    assert usage.requests == 3
    assert usage.embedded_items == 4
    assert usage.failed_items == 0
    text_tokens = sum(max(1, len(kind_of(c)[1]) // 4) for c in gemini.embedded_contents()[:2])
    assert usage.tokens_by_modality == {"TEXT": text_tokens, "IMAGE": 258, "VIDEO": 300}
    assert usage.prompt_tokens == text_tokens + 258 + 300
    model.reset_usage()
    assert model.usage.requests == 0


# -- the Batch API -------------------------------------------------------------------------


def _batch_requests(gemini: Any) -> list[dict[str, Any]]:
    (create,) = gemini.requests_to("batch_create")
    return create.json["batch"]["inputConfig"]["requests"]["requests"]


def test_batch_api_embeds_a_whole_batch_in_one_job(gemini, make_embedding, media, mode):
    nodes = [
        TextNode(text="first"),
        FrameNode(text="a frame", image_path=str(media["jpeg"])),
        TextNode(text="third"),
    ]
    model = make_embedding(output_dimensionality=256, use_batch_api=True)
    outcomes = call(mode, model, "try_embed_nodes", nodes)

    assert all(o.ok for o in outcomes)
    inlined = _batch_requests(gemini)
    assert len(inlined) == 3
    assert [r["request"]["outputDimensionality"] for r in inlined] == [256] * 3
    assert [kind_of(r["request"]["content"])[0] for r in inlined] == ["text", "inline", "text"]
    assert gemini.requests_to("embed") == []
    assert len(gemini.requests_to("batch_get")) >= 1
    assert model.usage.batch_jobs == 1
    assert model.usage.embedded_items == 3
    assert model.usage.prompt_tokens > 0


def test_the_batch_api_leaves_the_warning_filters_alone(gemini, make_embedding, mode):
    before = list(warnings.filters)
    model = make_embedding(use_batch_api=True)
    assert call(mode, model, "try_embed_nodes", [TextNode(text="a")])[0].ok
    assert warnings.filters == before  # (and the suite's "error" filter saw no warning)


def test_batch_api_keeps_per_item_errors_per_item(gemini, make_embedding, mode):
    gemini.batch_failing_items = frozenset({1})
    nodes = [TextNode(text=t) for t in ("a", "b", "c")]
    outcomes = call(mode, make_embedding(use_batch_api=True), "try_embed_nodes", nodes)
    assert [o.ok for o in outcomes] == [True, False, True]
    assert "request 1 was invalid" in str(outcomes[1].error)


def test_a_failed_batch_job_fails_its_items(gemini, make_embedding, mode):
    gemini.batch_final_state = "BATCH_STATE_FAILED"
    outcomes = call(
        mode, make_embedding(use_batch_api=True), "try_embed_nodes", [TextNode(text="a")]
    )
    assert not outcomes[0].ok
    assert "ended JOB_STATE_FAILED" in str(outcomes[0].error)


def test_a_batch_job_past_its_timeout_is_cancelled(gemini, make_embedding, mode):
    gemini.batch_running_polls = 10_000
    model = make_embedding(use_batch_api=True, batch_timeout=0.2)
    started = time.monotonic()
    outcomes = call(mode, model, "try_embed_nodes", [TextNode(text="a"), TextNode(text="b")])
    assert time.monotonic() - started < 5
    assert [o.ok for o in outcomes] == [False, False]
    assert "cancelled" in str(outcomes[0].error)
    assert len(gemini.requests_to("batch_cancel")) == 1


def test_batch_api_uploads_large_media_and_deletes_it_after_the_job(gemini, make_embedding, media):
    model = make_embedding(use_batch_api=True, max_inline_bytes=100)
    nodes = [FrameNode(text="frame", image_path=str(media["jpeg"])), TextNode(text="x")]
    assert all(o.ok for o in model.try_embed_nodes(nodes))
    first = _batch_requests(gemini)[0]["request"]["content"]
    assert kind_of(first) == ("file", "image/jpeg")
    assert gemini.live_files() == []


def test_queries_never_wait_for_a_batch_job(gemini, make_embedding):
    model = make_embedding(use_batch_api=True)
    model.get_query_embedding("now please")
    assert gemini.requests_to("batch_create") == []
    assert len(gemini.requests_to("embed")) == 1


def test_vector_store_batches_use_the_batch_api_when_enabled(gemini, make_embedding):
    model = make_embedding(use_batch_api=True, output_dimensionality=256)
    vectors = model.get_text_embedding_batch(["a", "b"])
    assert len(vectors) == 2
    assert len(_batch_requests(gemini)) == 2
