"""The search latency benchmark's statistics and synthetic speech (benchmarks/latency_support)."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from benchmarks.latency_support import (
    OFF_TOPIC_QUERIES,
    TOPICS,
    SpeechGenerator,
    group_sentences,
    percentile,
    summarise,
)
from llama_index_video.reader.units import UnitOptions, build_units
from llama_index_video.transcription.base import Segment


@pytest.mark.parametrize("count", [1, 2, 7, 200])
@pytest.mark.parametrize("q", [0, 1, 50, 95, 99, 100])
def test_percentile_matches_numpy_linear_interpolation(count, q):
    values = sorted(random.Random(count).uniform(0, 100) for _ in range(count))
    assert percentile(values, q) == pytest.approx(float(np.percentile(values, q)))


def test_percentile_interpolates_between_ranks():
    assert percentile([10.0, 20.0], 50) == 15.0
    assert percentile([1.0, 2.0, 3.0, 4.0, 5.0], 95) == pytest.approx(4.8)


def test_percentile_refuses_nothing_and_out_of_range():
    with pytest.raises(ValueError, match="no values"):
        percentile([], 50)
    with pytest.raises(ValueError, match="0-100"):
        percentile([1.0], 101)


def test_summarise_reports_milliseconds_in_any_input_order():
    summary = summarise([0.004, 0.001, 0.003, 0.002, 0.100])
    assert summary.count == 5
    assert summary.mean == pytest.approx(22.0)
    assert summary.p50 == pytest.approx(3.0)
    assert summary.p95 == pytest.approx(80.8)
    assert summary.max == pytest.approx(100.0)
    assert summary.p50 <= summary.p95 <= summary.p99 <= summary.max


def test_summarise_refuses_no_latencies():
    with pytest.raises(ValueError):
        summarise([])


def test_speech_is_deterministic_timed_and_within_duration():
    generator = SpeechGenerator(seed=3)
    first = list(generator.recording(4, 900.0))
    assert first == list(SpeechGenerator(seed=3).recording(4, 900.0))
    assert first != list(SpeechGenerator(seed=4).recording(4, 900.0))
    assert len(first) > 100
    for sentence, following in itertools.pairwise(first):
        assert sentence.start < sentence.end <= following.start
    assert first[-1].end <= 900.0
    # about 16 characters a second while speaking
    speaking = sum(s.end - s.start for s in first)
    assert 13 < sum(len(s.text) for s in first) / speaking < 19


def test_pool_has_the_requested_distinct_sentences_per_topic():
    pool = SpeechGenerator(sentences_per_topic=50).pool()
    assert set(pool) == {"", *(t.name for t in TOPICS)}
    for name, sentences in pool.items():
        assert len(set(sentences)) == len(sentences)
        if name:
            assert len(sentences) == 50
            assert all(s[0].isupper() and s.endswith(".") for s in sentences)


def test_queries_are_distinct_with_a_share_off_topic():
    queries = SpeechGenerator().queries(100, off_topic_share=0.1)
    assert len(set(queries)) == 100
    assert sum(q in OFF_TOPIC_QUERIES for q in queries) == 10
    assert SpeechGenerator().queries(100, off_topic_share=0.1) == queries


def test_units_of_the_library_are_runs_of_whole_generated_sentences():
    sentences = list(SpeechGenerator(seed=1).recording(2, 1200.0))
    segments = [Segment(s.start, s.end, s.text) for s in sentences]
    units = list(build_units(segments, UnitOptions()))
    groups = group_sentences([u.text for u in units], [s.text for s in sentences])
    assert [i for group in groups for i in group] == list(range(len(sentences)))
    for unit, group in zip(units, groups, strict=True):
        assert unit.start == sentences[group[0]].start
        assert unit.text == " ".join(sentences[i].text for i in group)
    mean_chars = sum(len(u.text) for u in units) / len(units)
    assert 100 < mean_chars <= UnitOptions().target_chars  # windows close before the target


def test_group_sentences_refuses_units_that_cut_sentences():
    with pytest.raises(ValueError, match="whole sentences"):
        group_sentences(["One two."], ["One two three."])
    with pytest.raises(ValueError, match="in no unit"):
        group_sentences(["One."], ["One.", "Two."])
