from __future__ import annotations

import itertools

import pytest
from PIL import Image

from llama_index_video.media.frames import FrameSamplingOptions, sample_frames
from tests_support import OZONE


@pytest.fixture(scope="module")
def ozone_frames(tmp_path_factory):
    out = tmp_path_factory.mktemp("frames")
    return list(sample_frames(OZONE, out_dir=out, name_prefix="ozone", duration=80.0))


def test_every_slide_has_a_frame_including_the_short_one(ozone_frames, timeline):
    for slide in timeline["ozone_explainer.mp4"]["slides"]:
        shown = [f for f in ozone_frames if slide["start"] - 0.05 <= f.time < slide["end"]]
        assert shown, f"no frame for slide {slide['title']!r}"


def test_the_flash_slide_frame_spans_its_time_on_screen(ozone_frames):
    flash = [f for f in ozone_frames if 21.0 <= f.time < 22.53]
    assert len(flash) == 1
    assert flash[0].reason == "scene"
    assert flash[0].end == pytest.approx(22.53, abs=0.25)


def test_static_slides_are_not_stored_again_and_again(ozone_frames, timeline):
    # 6 slides over 80 s: a frame every 5 s would be 16; near-duplicates are skipped.
    assert len(ozone_frames) <= len(timeline["ozone_explainer.mp4"]["slides"]) + 2


def test_frames_are_ordered_contiguous_jpegs(ozone_frames):
    times = [f.time for f in ozone_frames]
    assert times == sorted(times) and times[0] == 0.0
    for previous, following in itertools.pairwise(ozone_frames):
        assert previous.end == pytest.approx(following.time)
    assert ozone_frames[-1].end == pytest.approx(80.0)
    with Image.open(ozone_frames[0].path) as image:
        assert image.format == "JPEG" and image.size == (640, 360)


def test_sampling_twice_writes_the_same_files(ozone_frames, tmp_path):
    again = list(sample_frames(OZONE, out_dir=tmp_path, name_prefix="ozone", duration=80.0))
    assert [f.path.name for f in again] == [f.path.name for f in ozone_frames]


def test_a_span_keeps_its_own_frames_and_the_last_ends_at_its_end(ozone_frames, tmp_path):
    """What ``ingest --live`` stores per chunk: the frames from 20 s to before 30 s, the
    first kept at once, the flash slide (21.0-22.53 s) found as in the whole file."""
    span = list(sample_frames(OZONE, out_dir=tmp_path, name_prefix="ozone", start=20.0, end=30.0))
    assert span[0].time == pytest.approx(20.0, abs=0.1)
    assert all(20.0 - 0.1 <= f.time < 30.0 for f in span) and span[-1].end == 30.0
    for previous, following in itertools.pairwise(span):
        assert previous.end == pytest.approx(following.time)
    whole = {round(f.time, 2) for f in ozone_frames if 20.5 <= f.time < 30.0}
    assert whole <= {round(f.time, 2) for f in span}


def test_fixed_interval_alone_misses_the_flash_slide(tmp_path):
    options = FrameSamplingOptions(interval=5.0, scene_detection=False)
    frames = list(sample_frames(OZONE, out_dir=tmp_path, name_prefix="o", options=options))
    assert not [f for f in frames if 21.0 <= f.time < 22.53]


def test_changing_content_keeps_a_frame_per_interval(tmp_path, make_video):
    colours = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 0), (0, 255, 255), (255, 0, 255)]
    video = make_video(tmp_path / "steps.mp4", [(5.0, c) for c in colours], tone=False)
    frames = list(sample_frames(video, out_dir=tmp_path / "f", name_prefix="s"))
    assert [round(f.time) for f in frames] == [0, 5, 10, 15, 20, 25]


def test_frames_are_scaled_to_max_side(tmp_path):
    options = FrameSamplingOptions(max_side=320)
    frames = list(sample_frames(OZONE, out_dir=tmp_path, name_prefix="o", options=options))
    assert {(f.width, f.height) for f in frames} == {(320, 180)}


@pytest.mark.parametrize(
    "bad",
    [
        {"interval": -1},
        {"analysis_fps": 0},
        {"duplicate_threshold": 0.5, "scene_threshold": 0.1},
        {"scene_threshold": 1.5},
        {"jpeg_quality": 0},
    ],
)
def test_invalid_options_are_refused(bad):
    with pytest.raises(ValueError):
        FrameSamplingOptions(**bad)
