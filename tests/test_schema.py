"""Properties of the citation labels: formatting and parsing them back agree for any time."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from llama_index_video.answering.citations import Citation, check_citations
from llama_index_video.schema import (
    format_timestamp,
    media_fragment_url,
    moment_label,
    parse_label,
    parse_time,
    parse_timestamp,
)

# Up to 99:59:59: the citation parser reads hours of one or two digits.
seconds = st.floats(0, 100 * 3600, exclude_max=True, allow_nan=False)
file_names = st.from_regex(r"[A-Za-z][A-Za-z0-9 _-]{0,20}\.(mp4|mkv|mp3|wav)", fullmatch=True)


@given(seconds)
def test_a_formatted_time_parses_back_to_its_whole_seconds(time):
    text = format_timestamp(time)
    assert parse_timestamp(text) == int(time)
    assert text.count(":") == (2 if time >= 3600 else 1)


@given(file_names, seconds, st.one_of(st.none(), st.floats(0, 3600)))
def test_a_label_parses_back_to_its_file_and_whole_seconds(file_name, start, length):
    end = None if length is None else min(start + length, 100 * 3600 - 1)
    label = moment_label(file_name, start, end)
    shown_end = None if end is None or int(end) == int(start) else float(int(end))
    assert parse_label(label[1:-1]) == (file_name, float(int(start)), shown_end)


@given(file_names)
def test_an_untimed_label_parses_to_its_file(file_name):
    assert parse_label(moment_label(file_name, None, None)[1:-1]) == (file_name, None, None)


@given(st.floats(-1e9, 0))
def test_negative_times_format_as_zero(time):
    assert format_timestamp(time) == "00:00"


@given(file_names, seconds, st.one_of(st.none(), st.floats(0, 3600)))
def test_a_label_cites_its_own_moment(file_name, start, length):
    end = None if length is None else min(start + length, 100 * 3600 - 1)
    label = moment_label(file_name, start, end)
    moment = Citation(
        source=f"/media/{file_name}",
        file_name=file_name,
        start=start,
        end=end,
        label=label,
        url=media_fragment_url(f"/media/{file_name}", start, end),
        frame_path=None,
        modality="transcript",
    )

    assert label.startswith(f"[{file_name} {format_timestamp(start)}") and label.endswith("]")
    checked = check_citations(f"As said {label}.", [moment])
    assert checked.citations == (moment,)
    assert checked.unverified == ()


@given(seconds)
def test_the_time_parser_reads_a_number_and_its_text_alike(time):
    assert parse_time(time) == time
    assert parse_time(format_timestamp(time)) == int(time)


@pytest.mark.parametrize(
    "value", ["nan", "inf", "-inf", "1e309", "nan:00", float("nan"), float("inf"), 10**400]
)
def test_the_time_parser_refuses_what_is_not_finite(value):
    with pytest.raises(ValueError, match="is not a time; give seconds") as refused:
        parse_time(value)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize("value", ["-00:20", "-0:01:05", "-20", "-0.5", -20, -0.5])
def test_the_time_parser_refuses_a_negative_time(value):
    with pytest.raises(ValueError, match="is not a time: a time is never negative") as refused:
        parse_time(value)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize(("value", "seconds"), [("-00:20", -20.0), ("-1:05", -65.0), (-2.5, -2.5)])
def test_a_caller_that_clamps_may_take_a_negative_time_with_its_sign(value, seconds):
    assert parse_time(value, negative=True) == seconds


@pytest.mark.parametrize(
    "value", [None, True, [1, 2], {"t": 3}, "soon", "", "1:2:3:4", "1:-20", "--5", "-", ":"]
)
def test_the_time_parser_refuses_what_is_not_a_time(value):
    with pytest.raises(ValueError, match="is not a time"):
        parse_time(value)
