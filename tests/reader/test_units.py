from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llama_index_video.reader.units import UnitOptions, build_units
from llama_index_video.transcription.base import Segment, Word


def test_a_sentence_split_across_segments_becomes_one_unit():
    segments = [
        Segment(35.2, 40.1, "In the stratosphere the temperature rises with altitude because"),
        Segment(41.8, 45.2, "ultraviolet radiation is absorbed by the ozone layer."),
    ]
    units = list(build_units(segments))
    assert len(units) == 1
    assert units[0].start == 35.2 and units[0].end == 45.2
    assert "because ultraviolet radiation is absorbed" in units[0].text


def test_near_duplicate_facts_in_separate_windows_do_not_overlap():
    segments = [
        Segment(
            23.5, 27.8, "The ozone layer absorbs about ninety percent of ultraviolet B radiation."
        ),
        Segment(29.5, 33.3, "It absorbs one hundred percent of ultraviolet C radiation."),
    ]
    units = list(build_units(segments, UnitOptions(target_chars=60)))
    assert [u.text for u in units] == [s.text for s in segments]


def test_word_times_give_sentence_starts_inside_a_segment():
    words = [
        Word(10.0, 10.4, " First"),
        Word(10.4, 10.9, " sentence."),
        Word(12.0, 12.5, " Second"),
        Word(12.5, 13.0, " one."),
    ]
    segment = Segment(10.0, 13.0, "First sentence. Second one.", words=tuple(words))
    units = list(build_units([segment], UnitOptions(target_chars=20)))
    assert [(u.start, u.text) for u in units] == [(10.0, "First sentence."), (12.0, "Second one.")]


def test_a_long_silence_always_ends_a_unit():
    segments = [Segment(0.0, 2.0, "no punctuation here"), Segment(30.0, 32.0, "and more words")]
    units = list(build_units(segments))
    assert [(u.start, u.end) for u in units] == [(0.0, 2.0), (30.0, 32.0)]


def test_an_overlong_sentence_is_cut_with_a_small_overlap():
    text = " ".join(f"w{i}" for i in range(200)) + "."
    units = list(
        build_units([Segment(0.0, 100.0, text)], UnitOptions(target_chars=100, max_chars=200))
    )
    assert len(units) > 1
    assert all(len(u.text) <= 200 + 40 for u in units)
    first_words, second_words = units[0].text.split(), units[1].text.split()
    assert 0 < len(set(first_words) & set(second_words)) <= UnitOptions().overlap_words


@pytest.mark.parametrize("bad", [{"target_chars": 5}, {"max_chars": 10}, {"overlap_words": -1}])
def test_invalid_options_are_refused(bad):
    with pytest.raises(ValueError):
        UnitOptions(**bad)


_segments = st.lists(
    st.tuples(
        st.floats(0.0, 5.0),
        st.floats(0.1, 8.0),
        st.lists(
            st.sampled_from(["ozone", "layer.", "warms", "because", "UV?", "it"]),
            min_size=1,
            max_size=30,
        ),
    ),
    max_size=25,
)


@settings(deadline=None)  # a property of the output, not of its speed (shared machines)
@given(_segments)
def test_units_keep_every_word_in_time_order(raw):
    segments, clock = [], 0.0
    for gap, length, words in raw:
        start = clock + gap
        segments.append(Segment(start, start + length, " ".join(words)))
        clock = start + length
    units = list(build_units(segments))
    assert [u.start for u in units] == sorted(u.start for u in units)
    assert all(u.start <= u.end for u in units)
    spoken = [w for s in segments for w in s.text.split()]
    if not spoken:
        assert units == []
        return
    covered = " ".join(u.text for u in units).split()
    assert set(spoken) == set(covered)
    assert len(covered) >= len(spoken)


def _heard(text: str, start: float = 0.0) -> Segment:
    """A segment as faster-whisper gives it: words split on Whisper's tokens, stripped."""
    pieces = text.replace(",000", " ,000").split()
    words = tuple(Word(start + i * 0.3, start + i * 0.3 + 0.3, p) for i, p in enumerate(pieces))
    return Segment(start, start + 0.3 * len(pieces), text, words=words)


def test_words_split_inside_a_number_read_like_the_segment():
    segments = [
        _heard("In winter the colony shrinks to about 20,000 bees."),
        _heard("A queen lays up to 2,000 eggs a day.", start=5.0),
    ]
    units = list(build_units(segments))
    assert " ".join(u.text for u in units) == " ".join(s.text for s in segments)
    assert not any(" ," in u.text or " ." in u.text for u in units)


def test_words_carrying_their_own_leading_space_are_not_double_spaced():
    words = (Word(0.0, 0.4, " about"), Word(0.4, 0.8, " 20"), Word(0.8, 1.0, ",000"))
    units = list(build_units([Segment(0.0, 1.0, "about 20,000", words=words)]))
    assert [u.text for u in units] == ["about 20,000"]


@given(
    st.lists(
        st.lists(
            st.sampled_from(["20", ",000", " bees", " it", ".", " is", " 3", ".5", "?", " UV"]),
            min_size=1,
            max_size=15,
        ),
        min_size=1,
        max_size=12,
    )
)
def test_unit_text_reads_like_the_segments_text(raw):
    # Whisper-like tokens (leading space = new word), stripped as the backends store them.
    segments = []
    for index, tokens in enumerate(raw):
        words = tuple(
            Word(index * 10 + i * 0.2, index * 10 + i * 0.2 + 0.2, token.strip())
            for i, token in enumerate(tokens)
        )
        segments.append(Segment(index * 10, index * 10 + 5, "".join(tokens).strip(), words=words))
    units = list(build_units(segments, UnitOptions(target_chars=20, max_chars=40)))
    spoken = " ".join(s.text for s in segments)
    assert units
    assert all(u.text in spoken for u in units), (units, spoken)


def _said(start: float, text: str, *, word: float = 0.3) -> Segment:
    """A segment of ``text`` with one word every ``word`` seconds from ``start``."""
    words = [
        Word(start + i * word, start + (i + 1) * word - 0.02, text)
        for i, text in enumerate(text.split())
    ]
    return Segment(start, words[-1].end, text, tuple(words))


def test_a_full_stop_after_an_unfinished_clause_does_not_cut_the_sentence():
    # Speech recognition writes a full stop where the speaker paused after "because";
    # the reason, said after the pause, belongs to the same unit (issue 36).
    segments = [
        _said(12.0, "Above twelve kilometres the cooling stops and the air grows warmer."),
        _said(18.5, "And the reason the stratosphere begins to warm up is because."),
        _said(23.5, "Ultraviolet radiation from the sun is absorbed by the ozone layer."),
        _said(29.5, "Higher still, in the mesosphere, the temperature falls again."),
    ]
    units = list(build_units(segments))

    holding = [u for u in units if "because" in u.text]
    assert len(holding) == 1
    assert "Ultraviolet radiation" in holding[0].text
    assert holding[0].end == segments[2].end
    assert all(len(u.text) <= UnitOptions().max_chars for u in units)


@pytest.mark.parametrize("last", ["the", "of", "and", "because", "between"])
def test_a_run_on_sentence_is_not_cut_at_a_pause_after_an_unfinished_word(last):
    # No full stop at all: the sentence is too long for a window, so it is cut at a
    # pause, but not at the one after a word no clause ends on.
    head = f"so what we measured in the second week of the trial was {last}"
    tail = "the rate of growth in every tray that stood by the window all day"
    rest = "and after that we moved all of the trays into the shade for another two weeks"
    words, clock = [], 0.0
    for part, pause in ((head, 1.0), (tail, 0.6), (rest, 0.0)):
        for text in part.split():
            words.append(Word(clock, clock + 0.3, text))
            clock += 0.32
        clock += pause
    segment = Segment(0.0, clock, " ".join((head, tail, rest)), tuple(words))

    units = list(build_units([segment]))

    assert not any(u.text.endswith(f" {last}") for u in units)
    assert any(f"{last} the rate of growth" in u.text for u in units)


def test_a_question_ending_on_a_preposition_is_a_sentence_end():
    # "What is it for?" ends its sentence: a question mark is not an unfinished clause.
    segments = [
        _said(0.0, "We bought a new pump for the garden pond last spring. What is it for?"),
        _said(6.5, "It keeps the water moving so that the fish get enough oxygen all summer."),
    ]
    units = list(build_units(segments, UnitOptions(target_chars=60)))
    assert any(u.text.endswith("What is it for?") for u in units)


@pytest.mark.parametrize(
    "stranded",
    [
        "Let me explain where the stratosphere comes from.",
        "That is the sensor which the readings came from.",
        "Nobody knew which tray the seeds had come from.",
    ],
)
def test_a_clause_that_strands_its_preposition_ends_the_sentence(stranded):
    # "... where it comes from." is finished: the next sentence is a unit's start, not
    # the rest of this one (the two were joined and cut in the middle of the second).
    after = "Before we back up the read replica, let me explain where the vacuum job comes from."
    segments = [_said(0.0, stranded), _said(4.0, after), _said(9.5, "Nobody expected it.")]

    units = list(build_units(segments, UnitOptions(target_chars=60)))

    assert any(u.text.endswith(stranded) for u in units)
    assert any(u.text.startswith("Before we back") and u.text.endswith("from.") for u in units)
