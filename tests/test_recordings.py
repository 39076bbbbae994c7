"""The facade's door to one recording: naming it, its transcript between two times, the
screen at a time, cuts under one moment limit, and search kept to named recordings."""

from __future__ import annotations

import av
import pytest

from llama_index_video.errors import MomentRequestError
from llama_index_video.recordings import MAX_MOMENT_SECONDS, moment_file_name
from llama_index_video.store.recording_names import IndexedSource
from tests_support import CHECKOUT, OZONE, TEAM_SYNC, sound_only_copy


def test_a_recording_is_named_by_path_or_by_its_unique_file_name(example_index):
    by_name = example_index.recording("team_sync.mp3")
    assert by_name.path == str(TEAM_SYNC) and by_name.duration == pytest.approx(40, abs=0.5)
    assert example_index.recording(TEAM_SYNC) == by_name
    assert example_index.recording(by_name) is by_name
    with pytest.raises(MomentRequestError, match=r"nowhere\.mp4: unknown source"):
        example_index.recording("nowhere.mp4")


def test_a_file_name_two_recordings_share_is_refused(tmp_path, embed_model):
    from llama_index_video.index import VideoIndex

    for folder, text in (("a", "Budgets are due on Friday."), ("b", "The office moves in May.")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "notes.md").write_text(f"# Notes\n\n{text}\n")
    index = VideoIndex(tmp_path / "index", embed_model=embed_model)
    try:
        assert index.ingest([tmp_path / "a", tmp_path / "b"]).ok
        with pytest.raises(MomentRequestError, match="names 2 recordings") as refused:
            index.recording("notes.md")
        assert "\n" not in str(refused.value)
        assert index.recording(tmp_path / "b" / "notes.md").path == str(tmp_path / "b/notes.md")
    finally:
        index.close()


def test_the_transcript_between_two_times_is_the_units_overlapping_them(example_index):
    whole = example_index.transcript("ozone_explainer.mp4")
    span = example_index.transcript("ozone_explainer.mp4", start=20, end=40)
    assert [line.start for line in whole] == sorted(line.start for line in whole)
    assert span == [line for line in whole if line.end >= 20 and line.start <= 40]
    assert 0 < len(span) < len(whole)
    with pytest.raises(MomentRequestError, match="over the limit of 10 s"):
        example_index.transcript("ozone_explainer.mp4", start=0, end=30, max_seconds=10)
    with pytest.raises(MomentRequestError, match="not finite"):
        example_index.transcript("ozone_explainer.mp4", start=float("nan"), end=30)
    # One end alone is checked too: a start past the end printed an empty transcript.
    assert example_index.transcript("ozone_explainer.mp4", start=40) == [
        line for line in whole if line.end >= 40
    ]
    with pytest.raises(MomentRequestError, match="after the end"):
        example_index.transcript("ozone_explainer.mp4", start=600)
    with pytest.raises(MomentRequestError, match="after the end"):
        example_index.summarize("team_sync.mp3", start=600)


def test_the_screen_at_a_time_is_the_frame_then_and_its_text(example_index):
    screen = example_index.screen("ozone_explainer.mp4", 3)
    assert screen.recording.path == str(OZONE) and screen.at == 3
    assert screen.frame_path is not None and screen.frame_path.endswith(".jpg")
    assert screen.frame_time is not None and screen.frame_time <= 3
    assert any("Ozone" in text for text in screen.on_screen)
    heard = example_index.screen("team_sync.mp3", 15)
    assert heard.frame_path is None and heard.said
    with pytest.raises(MomentRequestError, match="after the end"):
        example_index.screen("team_sync.mp3", 95)


def test_a_cut_is_refused_over_the_moment_limit_and_outside_the_recording(example_index, tmp_path):
    out = tmp_path / "moment.mp4"
    with pytest.raises(MomentRequestError, match="over the limit of 5 s"):
        example_index.cut("checkout_deep_dive.mp4", 10, 20, out, max_seconds=5)
    with pytest.raises(MomentRequestError, match="not finite"):
        example_index.cut("checkout_deep_dive.mp4", 10, float("nan"), out)
    assert not out.exists()
    report = example_index.cut("checkout_deep_dive.mp4", 10, 14, out, mode="reencode")
    with av.open(str(out)) as clip:
        assert abs(float(clip.duration / av.time_base) - 4) < 0.2
    assert report.method == "reencode" and report.path == out


def test_joined_moments_share_one_limit(example_index, tmp_path):
    moments = [("checkout_deep_dive.mp4", 0, 4), (CHECKOUT, 10, 14)]
    with pytest.raises(MomentRequestError, match="last 8 s, over the limit of 6 s"):
        example_index.join(moments, tmp_path / "joined.mp4", max_seconds=6)
    assert MAX_MOMENT_SECONDS == 600  # the one limit every door uses by default
    report = example_index.join(moments, tmp_path / "joined.mp4")
    assert report.duration == pytest.approx(8, abs=0.2)


def test_search_keeps_to_the_named_recordings(example_index):
    everywhere = example_index.as_retriever(top_k=3).retrieve("billing provider")
    assert everywhere[0].node.metadata["source"] == str(TEAM_SYNC)
    only = example_index.as_retriever(top_k=3, sources=["checkout_deep_dive.mp4"])
    found = only.retrieve("billing provider")
    assert found and {n.node.metadata["source"] for n in found} == {str(CHECKOUT)}
    kept = example_index.search("billing provider", top_k=3, sources="team_sync.mp3")
    assert kept and {hit.source_path for hit in kept} == {str(TEAM_SYNC)}
    by_words = example_index.search('"ozone layer"', top_k=3, sources=[TEAM_SYNC, CHECKOUT])
    assert by_words == []  # the quoted phrase is only said in the ozone explainer
    with pytest.raises(MomentRequestError, match="unknown source"):
        example_index.search("ozone layer", sources=["nowhere.mp4"])


@pytest.mark.parametrize(
    ("recorded", "cut"),
    [
        ("team_sync.mp3", "team_sync_0005-0015.mp3"),
        ("call.wma", "call_0005-0015.m4a"),  # no .wma writer: sound-only M4A
        ("phone.amr", "phone_0005-0015.m4a"),
        ("talk.wmv", "talk_0005-0015.mp4"),
        ("interview.3gp", "interview_0005-0015.mp4"),
    ],
)
def test_a_moment_is_cut_into_a_file_a_cut_can_be_written_as(recorded, cut):
    recording = IndexedSource(
        source=f"/media/{recorded}", path=f"/media/{recorded}", content_hash="0" * 64, duration=60
    )

    assert moment_file_name(recording, 5, 15) == cut


@pytest.mark.parametrize("name", ["standup.webm", "standup.mkv", "standup.mp4"])
def test_sound_alone_in_a_video_container_is_cut_into_audio(tmp_path, name):
    path = sound_only_copy(TEAM_SYNC, tmp_path / name)
    recording = IndexedSource(source=str(path), path=str(path), content_hash="0" * 64, duration=40)

    assert moment_file_name(recording, 5, 15) == "standup_0005-0015.m4a"
