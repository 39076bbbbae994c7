"""GET /api/clip: the page's "download this moment", and its refusals."""

from __future__ import annotations

import io

import av
import pytest

from tests_support import CHECKOUT, TEAM_SYNC


def test_a_moment_downloads_as_a_file_of_that_span(client):
    response = client.get("/api/clip", params={"source": str(CHECKOUT), "start": 10, "end": 20})
    assert response.status_code == 200
    assert 'filename="checkout_deep_dive_0010-0020.mp4"' in response.headers["content-disposition"]
    with av.open(io.BytesIO(response.content)) as clip:
        assert (
            abs(float(clip.streams.video[0].duration * clip.streams.video[0].time_base) - 10) < 0.1
        )


def test_a_moment_can_be_asked_in_mm_ss(client):
    params = {"source": "team_sync.mp3", "start": "00:05", "end": "0:15"}
    response = client.get("/api/clip", params=params)
    assert response.status_code == 200
    assert "team_sync_0005-0015.mp3" in response.headers["content-disposition"]


def test_an_audio_moment_downloads_as_audio(client):
    response = client.get("/api/clip", params={"source": "team_sync.mp3", "start": 5, "end": 15})
    assert response.status_code == 200 and response.headers["content-type"] == "audio/mpeg"
    assert str(TEAM_SYNC.name).removesuffix(".mp3") in response.headers["content-disposition"]


@pytest.mark.parametrize(
    ("params", "says"),
    [
        ({"source": "/etc/passwd", "start": 0, "end": 2}, "unknown source"),
        ({"source": "team_sync.mp3", "start": 30, "end": 50}, "after the end"),
        ({"source": "team_sync.mp3", "start": 5, "end": "nan"}, "end: 'nan' is not a time"),
        ({"source": "team_sync.mp3", "start": 5, "end": "inf"}, "end: 'inf' is not a time"),
        ({"source": "team_sync.mp3", "start": "1e309", "end": 9}, "start: '1e309' is not a time"),
        ({"source": "team_sync.mp3", "start": "-inf", "end": 9}, "start: '-inf' is not a time"),
    ],
)
def test_bad_moments_are_refused_in_one_line(client, params, says):
    response = client.get("/api/clip", params=params)
    assert response.status_code == 422 and says in response.json()["detail"]
