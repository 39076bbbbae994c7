"""Invariants of every stage over every file of the media zoo.

Each stage (probe, audio decoding, frame sampling, clip cutting, the reader) runs on
each zoo file under a time limit proportional to the file's length (pytest-timeout,
generous: it catches a stage that never ends, it does not measure speed). Transcripts
come from :class:`SentenceTranscriber`, so nothing here depends on what speech
recognition hears.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from llama_index_video import schema
from llama_index_video.media.audio import SAMPLE_RATE, iter_audio_chunks
from llama_index_video.media.clips import cut_clips, max_window_count
from llama_index_video.media.frames import sample_frames
from llama_index_video.media.probe import probe
from llama_index_video.reader.video_reader import VideoReader
from tests.zoo.conftest import SentenceTranscriber
from tests.zoo.make_zoo import ZOO, ZooFile

HASH = "0123456789abcdef" * 4
EPS = 0.002  # times are kept to the millisecond
CLIP_SECONDS, CLIP_OVERLAP = 2.0, 0.5
PORTRAIT = {"rotated.mp4", "portrait_phone.mp4"}


def time_limit(item: ZooFile) -> pytest.MarkDecorator:
    """Seconds a stage may take on ``item``: far above normal, far below 'forever'."""
    return pytest.mark.timeout(30 + 20 * item.duration, func_only=True)


def each(items: tuple[ZooFile, ...] = ZOO) -> list[object]:
    return [pytest.param(item, id=item.name, marks=time_limit(item)) for item in items]


VIDEOS = tuple(item for item in ZOO if item.has_video)
AUDIO = tuple(item for item in ZOO if item.has_audio)


@pytest.fixture
def path(zoo: dict[str, Path], item: ZooFile) -> Path:
    return zoo[item.name]


@pytest.mark.parametrize("item", each())
def test_probe_reports_what_is_in_the_file(item, path):
    info = probe(path)

    assert info.duration == pytest.approx(item.duration, abs=0.1)
    assert (info.has_video, info.has_audio) == (item.has_video, item.has_audio)
    assert info.start_time >= 0


@pytest.mark.parametrize("item", each(AUDIO))
def test_audio_decodes_to_a_gap_free_timeline_within_the_duration(item, path):
    duration = probe(path).duration
    chunks = list(iter_audio_chunks(path, chunk_seconds=1.0, search_seconds=0.3))

    assert chunks and chunks[0].start == 0.0
    for before, after in itertools.pairwise(chunks):
        assert after.start == pytest.approx(before.end, abs=1 / SAMPLE_RATE)
    decoded = chunks[-1].end
    assert 0 < decoded <= duration + 1 / SAMPLE_RATE
    if not item.has_video:
        assert decoded == pytest.approx(duration, abs=0.1)


@pytest.mark.parametrize("item", each(VIDEOS))
def test_frames_lie_within_the_file_in_time_order(item, path, tmp_path):
    duration = probe(path).duration
    frames = list(sample_frames(path, out_dir=tmp_path, name_prefix="zoo", duration=duration))

    # The first picture may come a little after the audio starts (the stream's own delay).
    assert frames and frames[0].time < 0.1
    for frame in frames:
        assert 0 <= frame.time <= frame.end <= duration + EPS
        assert frame.path.is_file()
        assert (frame.height > frame.width) == (item.name in PORTRAIT)
    assert [f.time for f in frames] == sorted({f.time for f in frames})
    assert frames[-1].end == pytest.approx(duration, abs=EPS)


@pytest.mark.parametrize("item", each())
def test_clips_cover_the_file_with_increasing_bounded_windows(item, path, tmp_path):
    duration = probe(path).duration
    modality = "video" if item.has_video else "audio"
    clips = list(
        cut_clips(
            path,
            out_dir=tmp_path,
            content_hash=HASH,
            modality=modality,
            max_seconds=CLIP_SECONDS,
            overlap_seconds=CLIP_OVERLAP,
        )
    )

    shift = min(3.0, (CLIP_SECONDS - CLIP_OVERLAP) / 2)  # cut_clips' default max_copy_shift
    bound = max_window_count(
        duration, max_seconds=CLIP_SECONDS, overlap_seconds=CLIP_OVERLAP, max_shift=shift
    )
    assert 1 <= len(clips) <= bound
    assert clips[0].start == 0.0
    assert clips[-1].end == pytest.approx(duration, abs=EPS)
    for clip in clips:
        assert 0 < clip.duration <= CLIP_SECONDS + 1e-9
        assert clip.path.is_file() and clip.path.stat().st_size > 0
    for before, after in itertools.pairwise(clips):
        assert before.start < after.start < before.end
        assert before.end - after.start >= CLIP_OVERLAP - EPS


def read_twice(path: Path, media_dir: Path) -> tuple[list, list]:
    reader = VideoReader(
        media_dir=media_dir,
        transcriber=SentenceTranscriber(),
        use_subtitles=False,
        ocr="off",
        audio_chunk_seconds=30,
    )
    return reader.read(path).nodes, reader.read(path).nodes


@pytest.mark.parametrize("item", each())
def test_reader_nodes_are_stable_and_within_the_file(item, path, tmp_path):
    duration = probe(path).duration
    first, second = read_twice(path, tmp_path)

    assert [n.node_id for n in first] == [n.node_id for n in second]
    modalities = {n.metadata[schema.MODALITY] for n in first}
    assert ("transcript" in modalities) == item.has_audio
    assert ("frame" in modalities) == item.has_video
    for node in first:
        start, end = node.metadata[schema.START_S], node.metadata[schema.END_S]
        assert 0 <= start <= end <= duration + EPS, node.metadata[schema.LABEL]
        assert node.metadata[schema.LABEL] == schema.moment_label(path.name, start, end)


@pytest.mark.parametrize("item", each(AUDIO[:1]))
def test_reader_text_has_no_space_before_punctuation(item, path, tmp_path):
    nodes, _ = read_twice(path, tmp_path)
    texts = [n.get_content() for n in nodes if n.metadata[schema.MODALITY] == "transcript"]

    assert texts
    assert "20,000 bees." in texts[0]
    assert not [t for t in texts if " ," in t or " ." in t]
