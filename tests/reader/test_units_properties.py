"""Properties of unit building for any segment list, with or without word timestamps.

Checked on what does not depend on how tokens are joined (that is the text's own
contract, tested in ``test_units.py``): units come in time order, lie within the
speech they were built from, and lose no character of it.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llama_index_video.reader.units import UnitOptions, build_units
from llama_index_video.transcription.base import Segment, Word

# Whisper-shaped tokens: leading spaces, numbers split at the thousands comma, bare
# punctuation, sentence ends.
TOKENS = [" ozone", " layer.", " 20", ",000", " bees", ",", " UV?", " it", "!", " 2", ".5", "s"]


@st.composite
def segment_lists(draw: st.DrawFn) -> list[Segment]:
    segments, clock = [], draw(st.floats(0, 100))
    for _ in range(draw(st.integers(0, 20))):
        start = clock + draw(st.floats(0, 12))  # gaps up to beyond max_gap
        length = draw(st.floats(0, 8))
        tokens = draw(st.lists(st.sampled_from(TOKENS), min_size=1, max_size=25))
        words: tuple[Word, ...] = ()
        if draw(st.booleans()):
            step = length / len(tokens)
            words = tuple(
                Word(start + i * step, start + (i + 1) * step, t) for i, t in enumerate(tokens)
            )
        segments.append(Segment(start, start + length, "".join(tokens), words))
        clock = start + length
    return segments


options = st.builds(
    UnitOptions,
    target_chars=st.integers(20, 300),
    max_chars=st.just(400),
    overlap_words=st.just(0),
    max_gap=st.floats(0.5, 10),
)


def _characters(text: str) -> str:
    return "".join(text.split())


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(segment_lists(), options)
def test_units_are_ordered_within_the_speech_and_lose_no_character(segments, unit_options):
    units = list(build_units(segments, unit_options))

    if not any(s.text.strip() for s in segments):
        assert units == []
        return
    first, last = segments[0].start, max(s.end for s in segments)
    assert [u.start for u in units] == sorted(u.start for u in units)
    for unit in units:
        assert first - 1e-3 <= unit.start <= unit.end <= last + 1e-3
        assert unit.text.strip() == unit.text and unit.text
    # Without overlap words, the units are the speech cut into pieces, nothing else.
    spoken = "".join(_characters(s.text) for s in segments)
    assert "".join(_characters(u.text) for u in units) == spoken


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(segment_lists(), st.integers(1, 10))
def test_overlap_only_repeats_words_and_units_stay_bounded(segments, overlap_words):
    unit_options = UnitOptions(target_chars=60, max_chars=120, overlap_words=overlap_words)
    units = list(build_units(segments, unit_options))

    spoken = "".join(_characters(s.text) for s in segments)
    assert len("".join(_characters(u.text) for u in units)) >= len(spoken)
    for unit in units:
        # A window closes at target_chars; one sentence piece (<= max_chars) and the
        # carried overlap (<= a third of the window) can come on top.
        assert len(unit.text) <= 2 * unit_options.max_chars + unit_options.target_chars
