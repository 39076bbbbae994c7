"""Segmentation, titles and chapter formats, each on its own (no index)."""

from __future__ import annotations

import itertools

import numpy as np

from llama_index_video.chapters.formats import (
    text_lines,
    webvtt,
    youtube_lines,
    youtube_shortfall,
)
from llama_index_video.chapters.segment import (
    MIN_CHAPTER_SECONDS,
    TimedVector,
    chapter_starts,
    worth_chapters,
)
from llama_index_video.chapters.titles import (
    TITLES_PER_WORD,
    chapter_titles,
    phrase_scores,
    topic_rate,
)
from llama_index_video.results import Chapter


def _topics(*lengths: int, step: float = 10.0, seed: int = 0) -> list[TimedVector]:
    """Units ``step`` s apart; topic ``i`` lasts ``lengths[i]`` units around its own
    random direction (noise 0.3)."""
    rng = np.random.default_rng(seed)
    units = []
    for count in lengths:
        centre = rng.normal(size=32)
        for _ in range(count):
            at = len(units) * step
            units.append(TimedVector(at, at + step - 1, centre + 0.3 * rng.normal(size=32)))
    return units


def test_topic_changes_are_found_where_the_vectors_turn():
    units = _topics(30, 25, 35)
    assert chapter_starts(units) == [0, 30, 55]


def test_no_change_gives_one_chapter_and_short_input_none():
    assert chapter_starts(_topics(60)) == [0]
    assert chapter_starts(_topics(10)) == []  # 100 s: too short to chapter
    assert not worth_chapters([(0.0, 500.0)] * 3)


def test_no_chapter_is_shorter_than_the_minimum_whatever_the_vectors():
    for seed in range(5):
        units = _topics(5, 25, 4, 30, 6, step=10.0, seed=seed)
        starts = chapter_starts(units)
        times = [units[i].start for i in starts] + [units[-1].end]
        assert all(b - a >= MIN_CHAPTER_SECONDS for a, b in itertools.pairwise(times))


def test_a_cue_phrase_starts_a_chapter_where_the_words_barely_change():
    units = _topics(60)
    assert chapter_starts(units) == [0]
    cued = list(units)
    cued[30] = TimedVector(cued[30].start, cued[30].end, cued[30].vector, text="Let's move on.")
    assert chapter_starts(cued) == [0, 30]


def _said(*topics: tuple[str, int], step: float = 10.0) -> list[TimedVector]:
    """Units ``step`` s apart with one and the same vector: only their words change, each
    topic's ``count`` units saying its ``words`` (and some talk every topic shares)."""
    units = []
    for words, count in topics:
        for i in range(count):
            at = len(units) * step
            text = f"Yeah so the {words.split()[i % 3]} and the {words.split()[3 + i % 2]} again."
            units.append(TimedVector(at, at + step - 1, [1.0, 0.0, 0.0], text=text))
    return units


def test_the_words_find_a_topic_change_the_vectors_do_not_show():
    units = _said(
        ("budget euros price cost spreadsheet", 30), ("battery charger dock cells solar", 30)
    )
    assert chapter_starts(units) == [0, 30]


def test_ingest_hands_segmentation_the_units_words():
    from llama_index.core.schema import TextNode

    from llama_index_video import schema
    from llama_index_video.chapters.nodes import add_chapters

    said = _said(
        ("budget euros price cost spreadsheet", 30), ("battery charger dock cells solar", 30)
    )
    nodes = [
        TextNode(
            text=unit.text,
            embedding=list(unit.vector),
            metadata={
                schema.MODALITY: "transcript",
                schema.START_S: unit.start,
                schema.END_S: unit.end,
                schema.FILE_NAME: "meeting.wav",
                schema.CONTENT_HASH: "0" * 64,
            },
        )
        for unit in said
    ]
    chapters = add_chapters(nodes, embed_model=None, batch_size=8)  # type: ignore[arg-type]
    assert [c.metadata[schema.START_S] for c in chapters] == [0.0, 300.0]
    assert "budget" in chapters[0].metadata[schema.TITLE].lower()
    assert "battery" in chapters[1].metadata[schema.TITLE].lower()


def test_titles_name_what_sets_a_chapter_apart():
    titles = chapter_titles(
        [
            "Um the remote control budget. The budget is twelve euros, yeah, the budget.",
            "The remote control battery. A lithium battery, okay, or a battery dock.",
        ]
    )
    assert titles[0].lower().startswith("budget")
    assert titles[1].lower().startswith("battery")
    assert "yeah" not in titles[0].lower() and "okay" not in titles[1].lower()
    # Contractions read without their apostrophe ("I'll" is "ill") are talk words too.
    said = "I'll do it, it'll work, you'd say, I'll see, it'll go, you'd think, hadn't, hadn't"
    assert chapter_titles([f"{said}. The budget.", "The battery."])[0] == "Budget"
    assert chapter_titles(["yeah um okay"]) == [""]


def test_titles_lean_to_the_words_people_name_meeting_topics_with():
    # "design" named many annotated topics in the table's meetings, the fruit none:
    # said twice against three or four times, it still makes the title's four phrases (in
    # English only), written after the chapter's own words.
    said = " yeah ".join(["design"] * 2 + ["apricot"] * 4 + ["banana", "cherry", "plum"] * 3)
    other = "The battery dock, the battery and the battery."
    assert topic_rate("design") > 10 * topic_rate("apricot")
    assert topic_rate("apricot") == topic_rate("zzzz-never-said")
    assert chapter_titles([said, other])[0] == "Apricot, banana, cherry, design"
    french = chapter_titles([said, other], languages=["fr", "fr"])[0].lower().split(", ")
    assert french == ["apricot", "banana", "cherry", "plum"]


def test_a_word_said_in_every_chapter_names_at_most_two_of_them():
    # Every chapter says "remote control" more than its own word; the phrase is in two
    # titles, and each title still holds the chapter's own word.
    own = ("budget", "battery", "rubber", "logo")
    texts = [
        f"The remote control and the {word}. The remote control, the remote control and "
        f"the remote control {word}."
        for word in own
    ]
    titles = [title.lower() for title in chapter_titles(texts)]
    assert sum("remote control" in title for title in titles) == TITLES_PER_WORD == 2
    assert all(word in title for word, title in zip(own, titles, strict=True)), titles
    scores = phrase_scores(texts)
    assert all(max(s, key=s.__getitem__) == "remote control" for s in scores)
    # A chapter that says nothing else still gets it: no title is left empty.
    assert chapter_titles([*texts, "The remote control, the remote control."])[-1] == (
        "Remote control"
    )


def test_titles_leave_out_talk_words_and_a_plural_beside_its_singular():
    titles = chapter_titles(
        [
            "People try to use colours. The colours, the colour, people use the colour wheel.",
            "People try to use the battery. The battery, people try the battery dock.",
        ]
    )
    words = titles[0].lower().replace(",", "").split()
    assert words[0] in ("colour", "colours")
    assert sum(word in ("colour", "colours") for word in words) == 1
    assert not {"people", "try", "use"} & set(words)


def test_titles_leave_out_function_words_the_stop_word_list_lacks():
    # Real LibriSpeech readings were titled "Though, days, influence, recited" and
    # "Best, thee, thou, dishes": NLTK's English list has neither "though" nor "thee".
    titles = chapter_titles(
        [
            "Though the crayfish is small, though it hides, the crayfish is sweet. "
            "Thou knowest the crayfish, thee and thy crayfish upon the shore.",
            "Though the orchard is old, though it is cold, the orchard gives apples. "
            "Thou seest the orchard, thee and thy apples upon the orchard.",
        ]
    )
    for title in titles:
        words = set(title.lower().replace(",", "").split())
        assert not {"though", "thou", "thee", "thy", "upon"} & words
    assert "crayfish" in titles[0].lower() and "orchard" in titles[1].lower()


def test_formats_for_youtube_webvtt_and_reading():
    chapters = [
        Chapter("m.mp4", 3.0, 250.5, "Budget", "[m.mp4 00:03-04:10]", "Budget", "a"),
        Chapter("m.mp4", 250.5, 3725.0, "Battery, dock", "[m.mp4 04:10-1:02:05]", "", "b"),
    ]
    assert youtube_lines(chapters) == "00:00 Budget\n04:10 Battery, dock"
    assert webvtt(chapters) == (
        "WEBVTT\n\n1\n00:00:03.000 --> 00:04:10.500\nBudget\n\n"
        "2\n00:04:10.500 --> 01:02:05.000\nBattery, dock\n"
    )
    assert text_lines(chapters).splitlines()[1] == "[m.mp4 04:10-1:02:05] Battery, dock"


def test_youtube_needs_three_chapters_of_ten_seconds():
    def chapter(start: float, end: float) -> Chapter:
        return Chapter("m.mp4", start, end, "Budget", "[m.mp4]", "Budget", f"{start}")

    assert "recording has 2" in youtube_shortfall([chapter(3, 250), chapter(250, 3725)])
    three = [chapter(3, 250), chapter(250, 500), chapter(500, 900)]
    assert youtube_shortfall(three) is None
    # the first line says 00:00, so a first chapter from 3 s to 12 s lasts 12 s there
    assert youtube_shortfall([chapter(3, 12), chapter(12, 500), chapter(500, 900)]) is None
    one_short = [chapter(0, 250), chapter(250, 258), chapter(258, 900)]
    assert "1 of these do" in youtube_shortfall(one_short)


# Two chapters each, in German and in Spanish: function words said far more often than
# the topic's words, as in speech ("und", "die", "nicht"; "que", "los", "está").
GERMAN = [
    "Und die Batterie, und die Batterie ist nicht die, und wir sind nicht, und die ist "
    "nicht, und die Batterie ist nicht da, und wir sind nicht dort, und die ist es nicht.",
    "Und das Gehäuse, und das Gehäuse ist nicht das, und wir sind nicht, und das ist "
    "nicht, und das Gehäuse ist nicht da, und wir sind nicht dort, und das ist es nicht.",
]
SPANISH = [
    "Que los precios, que los precios están, que los que está, que los precios está en "
    "los que, que los que están en los precios, que está en los que.",
    "Que las pilas, que las pilas están, que las que está, que las pilas está en las "
    "que, que las que están en las pilas, que está en las que.",
]


def test_titles_leave_out_the_stop_words_of_the_chapters_language():
    from llama_index_video.chapters.titles import stop_words
    from llama_index_video.store.tokens import words as tokens

    for texts, code, topics in (
        (GERMAN, "de", ("batterie", "gehäuse")),
        (SPANISH, "es", ("precios", "pilas")),
    ):
        as_english = chapter_titles(texts)  # what every chapter got before it had a language
        assert any(set(tokens(title)) & stop_words(code) for title in as_english)
        titles = chapter_titles(texts, languages=[code, code])
        for title, topic in zip(titles, topics, strict=True):
            words = title.lower().replace(",", "").split()
            assert words and words[0] == topic, titles
            assert not set(tokens(title)) & stop_words(code), titles
    # Accents go as the index reads words: Spanish "está" is listed as "esta".
    assert {"esta", "estan", "que"} <= stop_words("es")
    # stopwords-iso's lists hold what NLTK's lack ("pueden", "ainsi"); a language neither
    # covers (Welsh) has none, and one title per chapter still comes.
    assert {"pueden", "traves"} <= stop_words("es") and "ainsi" in stop_words("fr")
    assert stop_words("cy") == frozenset()
    assert len(chapter_titles(["金字塔 金字塔", "です"], languages=["ja", None])) == 2


def test_ingest_gives_each_chapter_the_language_its_units_were_heard_in():
    from llama_index.core.schema import TextNode

    from llama_index_video import schema
    from llama_index_video.chapters.nodes import chapter_nodes

    units = []
    for chapter, text in enumerate(GERMAN):
        for i in range(30):
            at = (chapter * 30 + i) * 10.0
            units.append(
                TextNode(
                    text=text,
                    embedding=[1.0, 0.0, 0.0] if chapter == 0 else [0.0, 1.0, 0.0],
                    metadata={
                        schema.MODALITY: "transcript",
                        schema.START_S: at,
                        schema.END_S: at + 9.0,
                        schema.FILE_NAME: "sitzung.wav",
                        schema.CONTENT_HASH: "0" * 64,
                        schema.LANGUAGE: "de",
                    },
                )
            )
    chapters = chapter_nodes(units)
    assert [c.metadata[schema.TITLE].lower().split(",")[0] for c in chapters] == [
        "batterie",
        "gehäuse",
    ]


def test_a_chapter_heard_in_two_languages_leaves_out_the_stop_words_of_both():
    # Seen on real FLEURS readings (German then French in one chapter): the title was
    # "Die, und, der, ihre", as French (said more) was the chapter's only language.
    from llama_index.core.schema import TextNode

    from llama_index_video import schema
    from llama_index_video.chapters.nodes import chapter_nodes
    from llama_index_video.chapters.titles import stop_words
    from llama_index_video.store.tokens import words as tokens

    french = "Le prix du billet de train, le prix et le billet, et le train de nuit. " * 2
    # German for 50 s: too short a run to be a chapter of its own language.
    said = [(GERMAN[0], "de")] * 5 + [(french, "fr")] * 7 + [(SPANISH[1], "es")] * 30
    units = [
        TextNode(
            text=text,
            embedding=[1.0, 0.0, 0.0] if i < 12 else [0.0, 1.0, 0.0],
            metadata={
                schema.MODALITY: "transcript",
                schema.START_S: i * 10.0,
                schema.END_S: i * 10.0 + 9.0,
                schema.FILE_NAME: "lecture.wav",
                schema.CONTENT_HASH: "0" * 64,
                schema.LANGUAGE: code,
            },
        )
        for i, (text, code) in enumerate(said)
    ]

    first, second = (c.metadata[schema.TITLE] for c in chapter_nodes(units))

    assert not set(tokens(first)) & (stop_words("de") | stop_words("fr")), first
    assert {"batterie", "prix"} <= set(tokens(first)), first
    assert tokens(second)[0] == "pilas", second
