"""Cutting moments into files with PyAV: stream copy at keyframes, re-encoding elsewhere,
audio sources, subtitles as a track or burned in; and the ``clip`` command's one-line
refusals."""

from __future__ import annotations

import time
import wave
from itertools import pairwise
from pathlib import Path

import av
import numpy as np
import pytest
from PIL import Image, ImageDraw

from benchmarks.clip_starts import FPS, lateness, make_fixtures
from llama_index_video.cli.main import main
from llama_index_video.errors import MediaError
from llama_index_video.media.export import export_span, join_spans, keyframe_before
from llama_index_video.media.export_subtitles import MAX_LINES, Burner, Cue, subtitle_font
from tests_support import CHECKOUT, TEAM_SYNC, subtitle_track


def durations(path) -> dict[str, float]:
    with av.open(str(path)) as container:
        return {s.type: float(s.duration * s.time_base) for s in container.streams}


def test_a_ten_second_moment_at_a_keyframe_is_copied_within_a_second(tmp_path):
    report = export_span(CHECKOUT, 10.0, 20.0, tmp_path / "moment.mp4")
    assert report.method == "copy"
    assert keyframe_before(CHECKOUT, 10.0) == report.start == 10.0
    got = durations(report.path)
    assert abs(got["video"] - 10.0) <= 5.0 + 1e-6  # one GOP of this file (5 s)
    assert abs(got["video"] - report.duration) < 0.1 and abs(got["audio"] - 10.0) < 0.1


def test_a_cut_between_keyframes_is_reencoded_to_the_span(tmp_path):
    report = export_span(CHECKOUT, 12.3, 22.3, tmp_path / "moment.mp4")
    assert report.method == "reencode" and report.start == 12.3
    got = durations(report.path)
    assert abs(got["video"] - 10.0) < 0.1 and abs(got["audio"] - 10.0) < 0.1


def test_a_copy_starts_at_the_keyframe_before(tmp_path):
    report = export_span(CHECKOUT, 12.3, 22.3, tmp_path / "moment.mp4", mode="copy")
    assert report.method == "copy" and report.start == 10.0  # the keyframe before 12.3 s
    assert abs(durations(report.path)["video"] - 12.3) <= 0.15  # two frames at 15 fps


def decoded_seconds(path, kind: str) -> float:
    """Where the last frame of the first ``kind`` stream ends (WebM keeps no durations)."""
    with av.open(str(path)) as container:
        stream = container.streams.video[0] if kind == "video" else container.streams.audio[0]
        end = 0.0
        for frame in container.decode(stream):
            if kind == "video":
                end = float(frame.time) + 1 / float(stream.average_rate)
            else:
                end = float(frame.time) + frame.samples / frame.sample_rate
        return end


def test_webm_cannot_hold_h264_or_mp3_so_moments_become_vp9_and_opus(tmp_path):
    report = export_span(CHECKOUT, 10.0, 17.0, tmp_path / "moment.webm")
    assert report.method == "reencode" and (report.start, report.end) == (10.0, 17.0)
    with av.open(str(report.path)) as container:
        video, audio = container.streams.video[0], container.streams.audio[0]
        assert (video.codec_context.name, audio.codec_context.name) == ("vp9", "opus")
        assert audio.rate == 48000  # Opus takes no 44.1 kHz
    assert abs(decoded_seconds(report.path, "video") - 7.0) < 0.15
    assert abs(decoded_seconds(report.path, "audio") - 7.0) < 0.1
    spoken = export_span(TEAM_SYNC, 5.0, 15.0, tmp_path / "spoken.webm")
    assert spoken.method == "reencode" and abs(decoded_seconds(spoken.path, "audio") - 10) < 0.1
    with pytest.raises(MediaError, match="webm cannot hold its h264 video") as refused:
        export_span(CHECKOUT, 10.0, 17.0, tmp_path / "copied.webm", mode="copy")
    assert str(CHECKOUT.name) in str(refused.value) and "\n" not in str(refused.value)


@pytest.mark.parametrize(
    ("mode", "suffix"),
    [("auto", "mp3"), ("reencode", "mp3"), ("reencode", "wav"), ("auto", "wma")],
)
def test_an_audio_source_exports_audio(tmp_path, mode, suffix):
    report = export_span(TEAM_SYNC, 5.0, 15.0, tmp_path / f"moment.{suffix}", mode=mode)
    assert report.method == "reencode"  # from the sample asked (copied packets ran late)
    got = durations(report.path)
    assert set(got) == {"audio"} and abs(got["audio"] - 10.0) < 0.1


def test_moments_of_recordings_with_other_sample_rates_join(tmp_path, make_wav):
    """A phone call's 8 kHz and a 16 kHz recording: each moment has its own resampler."""
    tone = make_wav(tmp_path / "tone.wav", 0.2 * np.sin(np.arange(16000 * 6) * 0.1))
    phone = tmp_path / "phone.wav"
    with av.open(str(tone)) as inp, av.open(str(phone), "w") as out:
        narrow = out.add_stream("pcm_s16le", rate=8000, layout="stereo")
        resampler = av.AudioResampler(format="s16", layout="stereo", rate=8000)
        for frame in [*inp.decode(audio=0), None]:
            for part in resampler.resample(frame):
                out.mux(narrow.encode(part))
        out.mux(narrow.encode())
    report = join_spans([(phone, 1.0, 4.0), (tone, 0.5, 2.5)], tmp_path / "answer.mp3")
    got = durations(report.path)
    assert set(got) == {"audio"} and got["audio"] == pytest.approx(5.0, abs=0.15)


def test_a_flac_moment_says_its_own_length_not_the_recordings(tmp_path, make_wav):
    """A copied FLAC stream kept the recording's STREAMINFO: players showed a 5 s clip of a
    12 s recording as 12 s long (found on a 17-minute FLAC-in-Matroska recording)."""
    tone = make_wav(tmp_path / "tone.wav", 0.2 * np.sin(np.arange(16000 * 12) * 0.1))
    lossless = tmp_path / "tone.flac"
    with av.open(str(tone)) as inp, av.open(str(lossless), "w") as out:
        stream = out.add_stream("flac", rate=16000, layout="mono")
        for frame in [*inp.decode(audio=0), None]:
            out.mux(stream.encode(frame))
    report = export_span(lossless, 3.0, 8.0, tmp_path / "moment.flac")
    assert report.method == "reencode"  # lossless all the same
    with av.open(str(report.path)) as container:
        assert float(container.duration / av.time_base) == pytest.approx(5.0, abs=0.1)
    assert decoded_seconds(report.path, "audio") == pytest.approx(5.0, abs=0.1)


def test_a_wav_moment_holds_pcm_whatever_the_recording_holds(tmp_path):
    """An MP3 recording's packets were copied into the .wav: Python's wave module and most
    players refused it (format 0x55; from a FLAC recording, 0xF1AC)."""
    report = export_span(TEAM_SYNC, 5.0, 15.0, tmp_path / "moment.wav")
    assert report.method == "reencode"
    with wave.open(str(report.path)) as pcm:
        assert pcm.getnframes() / pcm.getframerate() == pytest.approx(10.0, abs=0.05)


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["nowhere.mp4", "--from", "1", "--to", "2"], "unknown source"),
        (["team_sync.mp3", "--from", "30", "--to", "50"], "after the end of the recording"),
        (["team_sync.mp3", "--from", "0", "--to", "30", "--max-seconds", "20"], "over the limit"),
    ],
)
def test_clip_refuses_bad_input_in_one_line(example_index, tmp_path, capsys, argv, says):
    out = tmp_path / "out.mp4"
    code = main(["clip", *argv, "-o", str(out), "--index", str(example_index.path)])
    err = capsys.readouterr().err
    assert code == 2 and says in err and err.count("\n") == 1 and not out.exists()


@pytest.mark.parametrize(
    ("option", "value"),
    [("--to", "nan"), ("--to", "inf"), ("--from", "1e309"), ("--max-seconds", "nan")],
)
def test_clip_refuses_a_time_that_is_not_finite(example_index, tmp_path, capsys, option, value):
    argv = {"--from": "0", "--to": "10", "--max-seconds": "600", option: value}
    out = tmp_path / "out.mp4"
    with pytest.raises(SystemExit) as stopped:
        main(["clip", "team_sync.mp3", *(x for pair in argv.items() for x in pair), "-o", str(out)])
    said = capsys.readouterr().err.strip().splitlines()[-1]
    assert stopped.value.code == 2 and not out.exists()
    assert said.endswith(
        f"argument {option}: '{value}' is not a time; give seconds (94.5) or mm:ss (01:34)"
    )


def test_clip_says_how_it_cut(example_index, tmp_path, capsys):
    out = tmp_path / "moment.mp4"
    argv = ["clip", "checkout_deep_dive.mp4", "--from", "00:12.3", "--to", "00:22.3"]
    assert main([*argv, "-o", str(out), "--index", str(example_index.path)]) == 0
    assert "re-encoded at the cut" in capsys.readouterr().out and out.stat().st_size > 0


SAID = [Cue(11.0, 14.0, "[checkout 00:10-00:20]\nthe first thing said"), Cue(15.5, 19.0, "then é")]


def test_a_copied_moment_carries_a_soft_subtitle_track(tmp_path):
    started = time.perf_counter()
    report = export_span(CHECKOUT, 10.0, 20.0, tmp_path / "moment.mp4", cues=SAID)
    took = time.perf_counter() - started
    assert report.method == "copy" and report.subtitles == "track" and took < 1.0
    with av.open(str(report.path)) as container:
        assert container.streams.subtitles[0].codec_context.name == "mov_text"
    got = subtitle_track(report.path)  # moved onto the file's own timeline
    assert [text for *_, text in got] == [cue.text for cue in SAID]
    assert [(round(a, 3), round(b, 3)) for a, b, _ in got] == [(1.0, 4.0), (5.5, 9.0)]


def test_matroska_gets_a_subrip_track_and_a_reencode_cuts_the_cues(tmp_path):
    report = export_span(CHECKOUT, 12.3, 22.3, tmp_path / "moment.mkv", cues=SAID)
    assert report.method == "reencode" and report.subtitles == "track"
    with av.open(str(report.path)) as container:
        assert container.streams.subtitles[0].codec_context.name == "srt"  # SubRip
    (first, second) = subtitle_track(report.path)
    assert first[2] == SAID[0].text and second[2] == "then é"
    # the first cue began before the cut: it starts with the file and keeps its end
    assert first[1] - first[0] == pytest.approx(14.0 - 12.3, abs=0.01)
    assert second[1] - second[0] == pytest.approx(3.5, abs=0.01)


def test_audio_and_formats_without_a_track_get_none(tmp_path):
    audio = export_span(TEAM_SYNC, 5.0, 15.0, tmp_path / "moment.mp3", cues=SAID)
    assert audio.subtitles is None and subtitle_track(audio.path) == []
    with pytest.raises(MediaError, match="no video to burn subtitles into"):
        export_span(TEAM_SYNC, 5.0, 15.0, tmp_path / "burned.mp3", cues=SAID, burn=True)


def gray_frame_at(path, at: float) -> np.ndarray:
    with av.open(str(path)) as container:
        for frame in container.decode(video=0):  # ends: at `at` or the end of the file
            if frame.time is not None and frame.time >= at:
                return frame.to_ndarray(format="gray").astype(np.int16)
    raise AssertionError(f"no frame at {at} s")


def test_burned_subtitles_change_only_the_band_and_only_while_shown(tmp_path):
    cue = [Cue(12.0, 15.0, "CACHE DECISION")]
    plain = export_span(CHECKOUT, 10.0, 20.0, tmp_path / "plain.mp4", mode="reencode")
    burned = export_span(CHECKOUT, 10.0, 20.0, tmp_path / "burned.mp4", cues=cue, burn=True)
    assert burned.method == "reencode" and burned.subtitles == "burned"  # though keyframed
    assert subtitle_track(burned.path) == []

    shown = np.abs(gray_frame_at(burned.path, 3.0) - gray_frame_at(plain.path, 3.0))
    rows = np.flatnonzero((shown > 60).sum(axis=1))
    height = shown.shape[0]
    assert rows.size > 10 and rows.min() > height * 0.7  # a band at the bottom
    assert shown[: int(height * 0.6)].mean() < 0.5  # the rest as decoded, but for the codec
    hidden = np.abs(gray_frame_at(burned.path, 6.0) - gray_frame_at(plain.path, 6.0))
    assert hidden.max() < 40 and hidden.mean() < 1.5

    from llama_index_video.ocr.rapid import RapidOcrEngine

    frame = tmp_path / "frame.png"
    Image.fromarray(gray_frame_at(burned.path, 3.0).astype(np.uint8)).save(frame)
    read = " ".join(box.text for box in RapidOcrEngine().detect(frame))
    assert "CACHE DECISION" in read.upper()


def test_a_long_cue_is_burned_page_by_page_across_its_time():
    words = " ".join(f"word{i}" for i in range(80))
    pages = Burner([Cue(2.0, 12.0, words)], 640, 360).pages
    assert len(pages) > 1 and all(page.text.count("\n") < MAX_LINES for page in pages)
    assert pages[0].start == 2.0 and pages[-1].end == pytest.approx(12.0)
    assert all(a.end == pytest.approx(b.start) for a, b in pairwise(pages))
    assert " ".join(page.text.replace("\n", " ") for page in pages) == words


def test_burned_letters_beyond_ascii_are_drawn_not_boxed():
    font = subtitle_font(24)

    def ink(text: str) -> np.ndarray:
        image = Image.new("L", (60, 40))
        ImageDraw.Draw(image).text((4, 4), text, font=font, fill=255)
        return np.asarray(image)

    missing = ink("\uffff")  # a code point no font has: the box drawn for any missing letter
    assert all(not np.array_equal(ink(letter), missing) for letter in "éüßñł")


@pytest.fixture(scope="module")
def events(tmp_path_factory) -> dict[str, Path]:
    """A video and audio files whose sound and picture change at known times (5 s, 9 s)."""
    return make_fixtures(tmp_path_factory.mktemp("events"))


@pytest.mark.parametrize(("suffix", "start"), [("mp3", 5.0), ("mp3", 4.99), ("m4a", 5.0)])
def test_an_audio_moment_sounds_from_the_start_asked(events, tmp_path, suffix, start):
    """Copied packets started an MP3 moment at the packet after the start, and its first
    frames decoded silent without the ones before: the tone at 5 s came 60-84 ms late."""
    out = tmp_path / f"moment.{suffix}"
    report = export_span(events[suffix], start, start + 2.0, out)
    assert report.start == start
    late = lateness(events[suffix], out, start, report.start)["sound_late_ms"]
    assert late is not None and abs(late) <= 20.0


@pytest.mark.parametrize("start", [4.5, 7.99])
def test_a_video_moment_shows_and_sounds_its_events_where_it_says(events, tmp_path, start):
    """Copied from the keyframe at 4 s (the report says so), re-encoded from 7.99 s."""
    report = export_span(events["mp4"], start, start + 2.0, tmp_path / "moment.mp4")
    assert report.start == (4.0 if start == 4.5 else start)
    late = lateness(events["mp4"], report.path, start, report.start)
    assert abs(late["picture_late_ms"]) <= 1000 / FPS and abs(late["sound_late_ms"]) <= 20.0
