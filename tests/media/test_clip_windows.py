"""Properties of the clip window planner for any duration, options and keyframe pattern.

The planner is pure (keyframes come from a lookup), so Hypothesis can drive it
through durations and keyframe layouts no fixture file has: it must always end,
within its bound, covering the whole recording with windows no longer than the limit.
"""

from __future__ import annotations

import bisect
import itertools

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from llama_index_video.media.clips import (
    ClipWindow,
    KeyframeLookup,
    max_window_count,
    plan_windows,
)

MS = 0.001
ROUNDING = 2 * MS  # window times are rounded to the ms: a start and an end may each move


@st.composite
def plans(draw: st.DrawFn) -> tuple[float, float, float, float, list[float], bool]:
    """(duration, max_seconds, overlap_seconds, max_shift, keyframes, copyable)."""
    duration = draw(st.floats(0.001, 50_000, allow_nan=False))
    max_seconds = draw(st.floats(max(0.1, duration / 500), max(200, duration / 500)))
    overlap = draw(st.floats(0, max_seconds * 0.9))
    max_shift = draw(st.floats(0, (max_seconds - overlap) / 2))
    keyframes = draw(
        st.one_of(
            st.just([0.0]),  # one keyframe for the whole file
            st.floats(0.01, 30)
            .map(lambda gap: max(gap, duration / 5000))  # a regular GOP
            .map(lambda gap: [i * gap for i in range(int(duration / gap) + 1)]),
            st.lists(st.floats(0, duration), max_size=40).map(lambda ks: sorted({0.0, *ks})),
            st.just([]),  # no keyframe found anywhere (the search gave up)
        )
    )
    return duration, max_seconds, overlap, max_shift, keyframes, draw(st.booleans())


def keyframe_lookup(keyframes: list[float]) -> KeyframeLookup:
    def before(seconds: float) -> float | None:
        at = bisect.bisect_right(keyframes, seconds)
        return keyframes[at - 1] if at else None

    return before


# No deadline: the machine running the suite may be busy; the bound is the window count.
RELAXED = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


@RELAXED
@given(plans())
def test_windows_cover_the_duration_in_bounded_strictly_increasing_steps(case):
    duration, max_seconds, overlap, max_shift, keyframes, copyable = case
    bound = max_window_count(
        duration, max_seconds=max_seconds, overlap_seconds=overlap, max_shift=max_shift
    )
    windows = list(
        itertools.islice(
            plan_windows(
                duration,
                max_seconds=max_seconds,
                overlap_seconds=overlap,
                max_shift=max_shift,
                keyframe_before=keyframe_lookup(keyframes) if copyable else None,
            ),
            bound + 1,  # one more than allowed, so an endless plan shows as too long
        )
    )

    assert 1 <= len(windows) <= bound
    assert windows[0].start == 0.0
    assert windows[-1].end >= duration - ROUNDING
    for window in windows:
        assert 0 <= window.start < window.end <= round(duration, 3) + MS
        assert window.end - window.start <= max_seconds + MS
    for before, after in itertools.pairwise(windows):
        assert before.start < after.start
        assert after.start <= before.end - overlap + ROUNDING  # overlapping, so no gap
    if not copyable:
        assert not any(w.copy for w in windows)
    if max_shift == 0 or not copyable:  # every window advances a full step
        assert len(windows) <= max_window_count(
            duration, max_seconds=max_seconds, overlap_seconds=overlap
        )


@RELAXED
@given(plans())
@example((41.0, 40.0, 0.0, 1.0, [i * 1.1875 for i in range(35)], False))  # half a ms off
def test_copied_windows_start_on_a_keyframe_close_before_the_requested_start(case):
    duration, max_seconds, overlap, max_shift, keyframes, _ = case
    for window in plan_windows(
        duration,
        max_seconds=max_seconds,
        overlap_seconds=overlap,
        max_shift=max_shift,
        keyframe_before=keyframe_lookup(keyframes),
    ):
        if window.copy:
            # rounded to the ms: at most half of one off (a keyframe at 39.1875 s is
            # 39.188 s, 0.5 ms and float error away)
            assert any(abs(window.start - k) <= MS / 2 + 1e-9 for k in keyframes)


def test_a_duration_between_two_milliseconds_is_one_window():
    # The shape of issue 10's MP3: probed 39.98839 s, the window ends at 39.988 s.
    assert list(plan_windows(39.98839, max_seconds=80, overlap_seconds=5)) == [
        ClipWindow(0.0, 39.988, copy=False)
    ]


@pytest.mark.parametrize(
    "options",
    [
        {"max_seconds": 5, "overlap_seconds": 5},
        {"max_seconds": 5, "overlap_seconds": 1, "max_shift": 4},
        {"max_seconds": 5, "overlap_seconds": 1, "max_shift": -1},
    ],
)
def test_windows_that_could_not_advance_are_refused(options):
    with pytest.raises(ValueError, match="must advance"):
        next(plan_windows(10, **options))
