"""The download-cost benchmark's arithmetic and its local server."""

from __future__ import annotations

import urllib.request

import pytest

from benchmarks.download_cost import download_cost, serving


def test_the_cost_is_the_difference_of_medians_against_the_disk_baseline():
    figures = download_cost([10.0, 12.0, 11.0], [11.0, 13.5, 11.5])
    assert figures == {"disk_s": 11.0, "link_s": 11.5, "added_s": 0.5, "added_pct": 0.5 / 11 * 100}
    with pytest.raises(ValueError):
        download_cost([1.0], [])


def test_the_server_serves_the_folder_on_loopback(tmp_path):
    (tmp_path / "clip.mp4").write_bytes(b"\0" * 1000)
    with serving(tmp_path) as base, urllib.request.urlopen(f"{base}/clip.mp4") as response:
        assert base.startswith("http://127.0.0.1:")
        assert response.headers["Content-Type"] == "video/mp4"
        assert response.read() == b"\0" * 1000
