"""Chapters of recordings in other languages: their own stop words, and words of scripts
written without spaces.

The recording is the constructed meeting of :mod:`tests.chapters.meeting_script` in
Chinese (its four topics at known times, a ``.zh.srt`` sidecar over 16 minutes of
quiet, so its units are Chinese); the embedding is the real (English) local model, so
the words said carry the segmentation.
"""

from __future__ import annotations

import numpy as np
import pytest

from llama_index_video.chapters.segment import TimedVector, chapter_starts
from llama_index_video.chapters.titles import chapter_titles, content_words
from llama_index_video.index import VideoIndex
from llama_index_video.reader.video_reader import VideoReader
from tests.chapters.meeting_script import TOPIC_SECONDS, TOPICS_ZH, length, write_srt

TOLERANCE = 30.0


@pytest.fixture(scope="module")
def chinese_chapters(tmp_path_factory, make_wav, embed_model):
    folder = tmp_path_factory.mktemp("meeting_zh")
    audio = make_wav(folder / "meeting.wav", np.zeros(int(length() * 16_000), np.float32))
    write_srt(folder / "meeting.zh.srt", TOPICS_ZH)
    index = VideoIndex(
        folder / "index",
        embed_model=embed_model,
        reader=VideoReader(media_dir=folder / "index" / "media", frames=None),
    )
    try:
        assert index.ingest([audio]).ok
        yield index.chapters(audio) or []
    finally:
        index.close()


def test_a_chinese_meeting_gets_its_four_chapters_at_their_changes(chinese_chapters):
    assert len(chinese_chapters) == len(TOPICS_ZH)
    for number, chapter in enumerate(chinese_chapters):
        assert abs(chapter.start - number * TOPIC_SECONDS) <= TOLERANCE


def test_each_chinese_chapter_is_titled_with_its_topic_word(chinese_chapters):
    for chapter, topic in zip(chinese_chapters, TOPICS_ZH, strict=True):
        assert topic in chapter.title.split(", "), (chapter.title, topic)
        assert " " not in chapter.title.replace(", ", ""), chapter.title


def test_japanese_and_korean_chapters_are_titled_with_their_words():
    japanese = chapter_titles(
        [
            "バッテリーの寿命について話しましょう。バッテリーは二年もちます。",
            "ケースの色は黄色がいいです。ケースはゴムで作ります。",
        ],
        languages=["ja", "ja"],
    )
    assert [t.split(", ")[0] for t in japanese] == ["バッテリー", "ケース"]
    korean = chapter_titles(
        [
            "배터리 수명에 대해 이야기합시다. 배터리 수명은 이년입니다.",
            "케이스 색깔은 노란색이 좋습니다. 케이스는 고무로 만듭니다.",
        ],
        languages=["ko", "ko"],
    )
    # Particles come off (수명에 -> 수명), verbs (이년입니다) are no title words.
    assert set(korean[0].split(", ")) == {"배터리", "수명"}
    assert "케이스" in korean[1].split(", ") and "만듭니다" not in korean[1]


def test_segmentation_leaves_out_the_units_language_stop_words():
    said = "Die Batterie und das Gehäuse sind nicht aus dem gleichen Material"
    assert content_words(said, "de") == ["batterie", "gehause", "gleichen", "material"]
    assert {"und", "das", "sind", "nicht", "dem"} & set(content_words(said))  # as English


def test_german_units_are_chaptered_by_their_content_words_not_their_function_words():
    """Two German topics (four minutes each) whose sentences change their function words
    every four minutes, not with the topic: read with English stop words those changes
    are topic changes too; with German ones only the real change (at 480 s) is."""
    battery, case = "Batterie Akku Ladung", "Gehäuse Farbe Gummi"
    function_words = ("und der die oder wenn weil aber", "mit dem zu das auch noch nicht")
    texts = []
    for i in range(48):
        said = function_words[i // 12 % 2]
        texts.append(f"{said} {battery if i < 24 else case} {said}")
    units = [
        TimedVector(20.0 * i, 20.0 * i + 8, (1.0,), text, "de") for i, text in enumerate(texts)
    ]
    assert [units[i].start for i in chapter_starts(units)] == [0.0, 480.0]
