"""Run-on speech: words with no sentence end are still cut into sentence-sized units.

Speech recognition over long stretches often writes no full stop for minutes; the
units must still be cut (at the speaker's pauses, else within the caps) so a
one-sentence fact is not diluted in hundreds of characters of other speech.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llama_index_video.reader.units import UnitOptions, build_units
from llama_index_video.transcription.base import Segment, Word

WORDS = ["practice", "is", "on", "thursdays", "the", "club", "meets", "in", "reykjavik", "20"]


@st.composite
def run_on_speech(draw: st.DrawFn) -> list[Segment]:
    """Segments of unpunctuated words with word times: short gaps, some pauses."""
    segments, clock = [], draw(st.floats(0, 100))
    for _ in range(draw(st.integers(0, 12))):
        words = []
        for text in draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=40)):
            start = clock + draw(st.sampled_from([0.0, 0.05, 0.1, 0.5, 1.2, 9.0]))
            end = start + draw(st.floats(0.05, 1.0))
            words.append(Word(start, end, text))
            clock = end
        segments.append(
            Segment(words[0].start, words[-1].end, " ".join(w.text for w in words), tuple(words))
        )
    return segments


options = st.builds(
    UnitOptions,
    target_chars=st.integers(20, 200),
    max_chars=st.just(240),
    overlap_words=st.integers(0, 8),
    max_seconds=st.floats(2.0, 30.0),
    pause=st.floats(0.2, 1.0),
)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run_on_speech(), options)
def test_run_on_words_are_all_kept_in_short_time_ordered_units(segments, unit_options):
    units = list(build_units(segments, unit_options))

    words = [w for s in segments for w in s.words]
    if not words:
        assert units == []
        return
    # Every word is in some unit whose span holds it (overlap words may repeat).
    for word in words:
        assert any(
            u.start <= word.start + 1e-3 and word.end <= u.end + 1e-3 and word.text in u.text
            for u in units
        ), word
    # Times increase; no unit is longer than the caps, unless it is one word.
    assert [u.start for u in units] == sorted(u.start for u in units)
    for unit in units:
        one_word = len(unit.text.split()) == 1
        assert one_word or unit.end - unit.start <= unit_options.max_seconds + 1e-3
        assert one_word or len(unit.text) <= unit_options.max_chars
        # The recorded sentence starts lie in the unit, in order, at word starts.
        offsets = [offset for offset, _ in unit.sentences]
        times = [at for _, at in unit.sentences]
        assert offsets[0] == 0 and times[0] == unit.start
        assert offsets == sorted(set(offsets)) and times == sorted(times)
        assert all(unit.start <= at <= unit.end for at in times)
        assert all(offset == 0 or unit.text[offset - 1] == " " for offset in offsets)


def _speech(sentences: list[str], *, pause: float, word: float = 0.3) -> Segment:
    """One segment of ``sentences`` with no punctuation, ``pause`` s between them."""
    words, clock = [], 0.0
    for sentence in sentences:
        for text in sentence.split():
            words.append(Word(clock, clock + word, text))
            clock += word + 0.02
        clock += pause
    return Segment(0.0, clock, " ".join(sentences), tuple(words))


FILLER = [
    "the weather in the north was mild for most of the autumn season this year",
    "many visitors walked along the harbour and watched the fishing boats come in",
    "the museum opened a new wing dedicated to the history of the old railway",
    "local bakeries reported that bread sales rose sharply during the festival week",
]
FACT = "the chess club practice is held on thursdays in the library basement"


def test_a_fact_in_run_on_speech_is_cut_at_the_pauses_around_it():
    segment = _speech([*FILLER[:2], FACT, *FILLER[2:]], pause=0.6)
    units = list(build_units([segment]))

    holding = [u for u in units if "chess club practice" in u.text]
    assert len(holding) == 1
    fact = holding[0]
    # Before, the run-on went into one 400-character piece; now the fact's unit is
    # about a window and begins at a sentence the speaker paused before.
    assert len(fact.text) <= UnitOptions().target_chars + len(FILLER[0]) + 1
    assert all(len(u.text) <= UnitOptions().max_chars for u in units)
    firsts, at_word = [], 0
    for sentence in [*FILLER[:2], FACT, *FILLER[2:]]:
        firsts.append(round(segment.words[at_word].start, 3))
        at_word += len(sentence.split())
    assert {at for u in units for _, at in u.sentences} <= set(firsts)
    offset, at = next((o, t) for o, t in fact.sentences if fact.text[o:].startswith("the chess"))
    assert at == firsts[2]
    assert offset > 0 or fact.start == at


def test_run_on_speech_with_no_pause_is_cut_within_the_caps_with_an_overlap():
    segment = _speech([" ".join(FILLER * 3)], pause=0.0)
    unit_options = UnitOptions(max_seconds=8.0)
    units = list(build_units([segment], unit_options))

    assert len(units) > 3
    assert all(u.end - u.start <= 8.0 and len(u.text) <= unit_options.max_chars for u in units)
    # Cut where no pause was: each unit begins with the last words of the one before.
    for before, after in itertools.pairwise(units):
        first, second = before.text.split(), after.text.split()
        assert any(first[-k:] == second[:k] for k in range(1, 7)), (before, after)


def _timed(text: str, *, word: float = 0.4, hidden_pause: int | None = None) -> Segment:
    """``text`` as one segment of words ``word`` s long; the word at index ``hidden_pause``
    lasts a second longer (speech recognition stretching a word over the pause after it)."""
    words, clock = [], 0.0
    for index, piece in enumerate(text.split()):
        length = word + (1.0 if index == hidden_pause else 0.0)
        words.append(Word(clock, clock + length, piece))
        clock += length + 0.02
    return Segment(0.0, clock, text, tuple(words))


RUN_TOGETHER = (
    "or before and after the decimal point for presentation types, G4G, the "
    "orchestra's principal violinist, Henry Klassen, has played with them for 30 years."
)


def test_a_long_sentence_records_where_its_clauses_begin():
    segment = _timed(RUN_TOGETHER, hidden_pause=RUN_TOGETHER.split().index("G4G,"))
    (unit,) = build_units([segment])

    clauses = {unit.text[offset:].split()[0]: at for offset, at in unit.sentences}
    assert set(clauses) == {"or", "G4G,", "the", "Henry", "has"}
    said = next(w for w in segment.words if w.text == "orchestra's")
    assert clauses["the"] == pytest.approx(said.start - 0.42, abs=1e-3)  # "the orchestra's"


def test_a_short_sentence_keeps_one_start_whatever_its_commas():
    text = "The orchestra's principal violinist, Henry Klassen, has played for years."
    (unit,) = build_units([_timed(text, word=0.3)])  # 3.6 s: one sentence, said at once

    assert unit.sentences == ((0, 0.0),)
    (unit,) = build_units([_timed(text, word=0.3)], UnitOptions(clause_seconds=2.0))
    assert [unit.text[o:].split()[0] for o, _ in unit.sentences] == ["The", "Henry", "has"]
