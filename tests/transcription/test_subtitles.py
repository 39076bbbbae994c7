"""Subtitles instead of ASR: sidecar SRT/VTT, embedded streams, clean-up, rolling captions."""

from __future__ import annotations

import itertools
import json
import logging
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from llama_index_video.errors import MediaError, UnsupportedMediaError
from llama_index_video.transcription import (
    Cue,
    Segment,
    SubtitleSource,
    find_subtitles,
    load_subtitles,
    merge_rolling_cues,
)
from llama_index_video.transcription.subtitles import clean_lines

from .conftest import SPEECH

SHARED = SPEECH.parent / "subtitles"  # made by the example-media generator, when present

SRT = """\
2
00:00:04,000 --> 00:00:06,500
{\\an8}<font color="#ffff00">Second</font> cue &amp; more

1
00:00:01,000 --> 00:00:03,000
<i>First</i> cue,
on two lines
"""

VTT = """\
WEBVTT
Kind: captions

NOTE a comment the parser must skip

intro
00:00:00.500 --> 00:00:02.000 line:0 align:start
<v Roger>Hello <b>there</b></v>

00:00:02.500 --> 00:00:04.250
<c.colorE5E5E5>Coloured</c> text&nbsp;here
"""

# Auto-generated captions as YouTube writes them: each line is typed word by word under
# the previous one, then shown alone for 10 ms, then pushed up by the next line.
# Its blank-looking lines hold a single space (written ␠ here).
YOUTUBE_VTT = """\
WEBVTT
Kind: captions
Language: en

00:00:00.000 --> 00:00:02.350 align:start position:0%
␠
welcome<00:00:00.480><c> to</c><00:00:00.640><c> the</c><00:00:00.960><c> channel</c>

00:00:02.350 --> 00:00:02.360 align:start position:0%
welcome to the channel
␠

00:00:02.360 --> 00:00:05.000 align:start position:0%
welcome to the channel
today<00:00:02.800><c> we</c><00:00:03.100><c> grow</c><00:00:03.500><c> tomatoes</c>

00:00:05.000 --> 00:00:05.010 align:start position:0%
today we grow tomatoes
␠

00:00:05.010 --> 00:00:07.500 align:start position:0%
today we grow tomatoes
in<00:00:05.400><c> a</c><00:00:05.700><c> greenhouse</c>

00:00:07.500 --> 00:00:07.510 align:start position:0%
in a greenhouse
␠

00:00:09.000 --> 00:00:10.000 align:start position:0%
[Music]
""".replace("␠", " ")


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _spans(segments: Iterator[Segment]) -> list[tuple[float, float, str]]:
    return [(s.start, s.end, s.text) for s in segments]


@pytest.fixture
def talk(tmp_path: Path) -> Path:
    """A real MP4 with an English mov_text stream, as ``talk.mp4`` in an empty folder."""
    return Path(shutil.copy(SPEECH / "subtitled.mp4", tmp_path / "talk.mp4"))


def test_srt_is_parsed_sorted_and_cleaned(tmp_path: Path) -> None:
    result = load_subtitles(_write(tmp_path / "talk.srt", SRT))
    assert _spans(result.segments) == [
        (1.0, 3.0, "First cue, on two lines"),
        (4.0, 6.5, "Second cue & more"),
    ]
    info = result.info
    assert (info.backend, info.model, info.language) == ("subtitles", "talk.srt", None)
    assert info.options["format"] == "srt"
    assert info.options["merge_rolling"] is True


def test_vtt_is_parsed_and_cleaned(tmp_path: Path) -> None:
    result = load_subtitles(_write(tmp_path / "talk.en-GB.vtt", VTT))
    assert _spans(result.segments) == [
        (0.5, 2.0, "Hello there"),
        (2.5, 4.25, "Coloured text here"),
    ]
    assert result.info.language == "en"


def test_youtube_rolling_captions_become_one_segment_per_line(tmp_path: Path) -> None:
    result = load_subtitles(_write(tmp_path / "clip.en.vtt", YOUTUBE_VTT))
    assert _spans(result.segments) == [
        (0.0, 2.36, "welcome to the channel"),
        (2.36, 5.01, "today we grow tomatoes"),
        (5.01, 7.51, "in a greenhouse"),
        (9.0, 10.0, "[Music]"),
    ]


def test_without_merging_every_cue_is_kept(tmp_path: Path) -> None:
    result = load_subtitles(_write(tmp_path / "clip.vtt", YOUTUBE_VTT), merge_rolling=False)
    texts = [s.text for s in result.segments]
    assert len(texts) == 7
    assert texts[2] == "welcome to the channel today we grow tomatoes"


def test_roll_up_and_word_by_word_captions_merge() -> None:
    roll_up = [
        Cue(0.0, 2.0, ("line one",)),
        Cue(2.0, 4.0, ("line one", "line two")),
        Cue(4.0, 6.0, ("line two", "line three")),
    ]
    assert _spans(merge_rolling_cues(roll_up)) == [
        (0.0, 2.0, "line one"),
        (2.0, 4.0, "line two"),
        (4.0, 6.0, "line three"),
    ]
    growing = [
        Cue(1.0, 1.5, ("hello",)),
        Cue(1.5, 2.0, ("hello everyone",)),
        Cue(2.0, 3.0, ("hello everyone and welcome",)),
        Cue(3.0, 4.0, ("to the show",)),
    ]
    assert _spans(merge_rolling_cues(growing)) == [
        (1.0, 3.0, "hello everyone and welcome"),
        (3.0, 4.0, "to the show"),
    ]


def test_ordinary_cues_are_left_alone() -> None:
    cues = [
        Cue(0.0, 1.0, ("Run!",)),
        Cue(3.0, 4.0, ("Run!",)),  # said again later: not a rolling repeat
        Cue(4.0, 5.0, ("Where", "to?")),
        Cue(5.0, 6.0, ()),  # an empty cue (only markup) is dropped
    ]
    assert _spans(merge_rolling_cues(cues)) == [
        (0.0, 1.0, "Run!"),
        (3.0, 4.0, "Run!"),
        (4.0, 5.0, "Where to?"),
    ]


@pytest.mark.parametrize(
    ("text", "ass_event", "lines"),
    [
        ("<i>a</i> <b>b</b> <u>c</u>", False, ("a b c",)),
        ('<font face="Arial" color="red">red</font>', False, ("red",)),
        ("one<00:00:01.000><c> two</c>", False, ("one two",)),
        ("{\\an8}{\\pos(10,20)}top", False, ("top",)),
        ("a < b and c > d", False, ("a < b and c > d",)),
        ("{a note}", False, ("{a note}",)),
        ("{a note}Hi\\Nthere\\hyou", True, ("Hi", "there you")),
        ("Tom &amp; Jerry&nbsp;&lt;3", False, ("Tom & Jerry <3",)),
        ("  \n\n", False, ()),
    ],
)
def test_clean_lines(text: str, ass_event: bool, lines: tuple[str, ...]) -> None:
    assert clean_lines(text, ass_event=ass_event) == lines


def test_malformed_files_name_the_file(tmp_path: Path) -> None:
    cases = {
        "garbage.srt": "this is not a subtitle file\n",
        "no-header.vtt": "00:00:01.000 --> 00:00:02.000\nhi\n",
        "bad-time.vtt": "WEBVTT\n\n00:00:01.000 --> 00:00:0X.000\nhi\n",
    }
    for name, text in cases.items():
        path = _write(tmp_path / name, text)
        with pytest.raises(MediaError) as caught:
            load_subtitles(path)
        assert caught.value.path == path
        assert str(path) in str(caught.value)
        assert "malformed" in str(caught.value)


def test_legacy_encodings_are_read(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    cue = "1\n00:00:01,000 --> 00:00:02,000\nCafé crème\n"
    utf16 = tmp_path / "utf16.srt"
    utf16.write_text(cue, encoding="utf-16")
    assert [s.text for s in load_subtitles(utf16).segments] == ["Café crème"]
    latin = tmp_path / "latin.srt"
    latin.write_bytes(cue.encode("cp1252"))
    with caplog.at_level(logging.WARNING):
        assert [s.text for s in load_subtitles(latin).segments] == ["Café crème"]
    assert "Windows-1252" in caplog.text


def test_not_a_subtitle_file(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedMediaError, match="not a subtitle file"):
        load_subtitles(_write(tmp_path / "notes.txt", "hello"))
    with pytest.raises(MediaError, match="not found"):
        load_subtitles(tmp_path / "missing.srt")


def _found(media: Path, **options: object) -> str | None:
    found = find_subtitles(media, **options)  # type: ignore[arg-type]
    return found.path.name if found is not None else None


def test_sidecar_precedence(talk: Path) -> None:
    folder = talk.parent
    _write(folder / "talk.de.srt", SRT)
    assert find_subtitles(talk) == SubtitleSource(folder / "talk.de.srt", "srt", None, "de")
    _write(folder / "talk.en.vtt", VTT)
    assert _found(talk) == "talk.de.srt"  # no preference: tags in alphabetical order
    assert find_subtitles(talk, languages=["en"]) == SubtitleSource(
        folder / "talk.en.vtt", "vtt", None, "en"
    )
    assert _found(talk, languages=["eng", "de"]) == "talk.en.vtt"
    _write(folder / "talk.srt", SRT)
    assert _found(talk) == "talk.srt"  # the untagged file is the video's own
    assert _found(talk, languages=["de"]) == "talk.de.srt"
    assert _found(talk, languages=["fr"]) == "talk.srt"


def test_sidecar_names_that_do_not_belong(talk: Path) -> None:
    folder = talk.parent
    _write(folder / "talk2.srt", SRT)
    _write(folder / "talk.final-cut.srt", SRT)
    _write(folder / "talk.txt", SRT)
    found = find_subtitles(talk)
    assert found is not None and found.embedded  # only the stream inside talk.mp4 is left
    _write(folder / "talk.mp4.srt", SRT)
    assert find_subtitles(talk) == SubtitleSource(folder / "talk.mp4.srt", "srt", None, None)


def test_embedded_stream_in_mp4(talk: Path) -> None:
    _write(talk.parent / "talk.de.srt", SRT)
    found = find_subtitles(talk, languages=["en"])
    assert found == SubtitleSource(talk, "mov_text", 1, "en")
    assert found.embedded
    assert find_subtitles(talk, sidecar=False) == found
    assert find_subtitles(talk, languages=["en"], embedded=False) is None
    expected = json.loads((SPEECH / "subtitled.json").read_text())["eng"]
    result = load_subtitles(found)
    assert isinstance(result.segments, Iterator)
    segments = list(result.segments)
    assert [(s.start, s.end) for s in segments] == [(c["start"], c["end"]) for c in expected]
    assert [s.text for s in segments] == [
        "Hello world",
        "A cue on two lines ends here",
        "Shown at the top",
    ]
    assert result.info.model == "talk.mp4 (stream 1)"
    assert result.info.language == "en"


def test_embedded_streams_in_mkv_by_language() -> None:
    mkv = SPEECH / "subtitled.mkv"
    first = find_subtitles(mkv)
    assert first is not None
    assert (first.stream_index, first.language) == (1, "de")
    english = find_subtitles(mkv, languages=["en"])
    assert english is not None
    assert (english.stream_index, english.language, english.format) == (2, "en", "srt")
    assert find_subtitles(mkv, languages=["fr"]) is None
    assert [s.text for s in load_subtitles(first).segments] == ["Hallo Welt", "Eine Zeile"]
    assert next(s.text for s in load_subtitles(english).segments) == "Hello world"


def test_media_without_subtitles() -> None:
    assert find_subtitles(SPEECH / "narration_en.ogg") is None


def test_bad_media_and_bad_streams(tmp_path: Path) -> None:
    fake = _write(tmp_path / "fake.mp4", "just text")
    with pytest.raises(UnsupportedMediaError) as caught:
        find_subtitles(fake)
    assert caught.value.path == fake
    with pytest.raises(MediaError, match="not found"):
        find_subtitles(tmp_path / "missing.mp4")
    audio_stream = SubtitleSource(SPEECH / "subtitled.mp4", "aac", 0, None)
    with pytest.raises(UnsupportedMediaError, match="stream 0 is not a text subtitle stream"):
        load_subtitles(audio_stream)


@pytest.mark.skipif(
    not (SHARED / "auto_generated.vtt").is_file(), reason="shared subtitle fixtures not generated"
)
def test_shared_auto_generated_vtt_has_no_repeated_lines() -> None:
    segments = list(load_subtitles(SHARED / "auto_generated.vtt").segments)
    texts = [s.text for s in segments]
    assert len(texts) == len(set(texts))
    assert texts[0] == "welcome to this short explainer"
    assert segments[0].start == 1.0
    assert all(a.start < b.start for a, b in itertools.pairwise(segments))
    assert all(s.start <= s.end for s in segments)


@pytest.mark.skipif(
    not (SHARED / "with_subtitle_stream.mkv").is_file(),
    reason="shared subtitle fixtures not generated",
)
def test_shared_mkv_with_subtitle_stream() -> None:
    found = find_subtitles(SHARED / "with_subtitle_stream.mkv")
    assert found is not None and found.embedded and found.language == "en"
    segments = list(load_subtitles(found).segments)
    assert segments and all(s.text for s in segments)
