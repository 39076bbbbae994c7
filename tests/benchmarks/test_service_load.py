"""The load benchmark's client loop (benchmarks/service_load.py), against the real service."""

from __future__ import annotations

import argparse
import asyncio
import socket

import pytest

from benchmarks.service_load import _bounded, _load, _single
from llama_index_video.service.app import create_app
from tests.service.conftest import running


def test_the_load_loop_counts_every_request_and_stops_at_the_deadline(example_index):
    with running(create_app(example_index)) as url:
        result = asyncio.run(_load(url, clients=3, seconds=1.0, max_requests=1000))
        single = asyncio.run(_single(url, count=5, warmup=1))
    assert result.errors == 0 and result.error_kinds == {}
    assert result.requests == result.latency.count > 0
    assert 1.0 <= result.seconds < 1.0 + 30  # no request starts after the deadline
    assert result.throughput == pytest.approx(result.requests / result.seconds, rel=0.01)
    assert single.count == 5 and 0 < single.p50 <= single.max


def test_the_load_loop_is_bounded_by_max_requests(example_index):
    with running(create_app(example_index)) as url:
        result = asyncio.run(_load(url, clients=4, seconds=30.0, max_requests=6))
    assert result.requests == 6
    assert result.seconds < 30


def test_failures_are_counted_not_raised():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, not listening: connections are refused
        result = asyncio.run(_load(f"http://127.0.0.1:{port}", 2, 0.3, max_requests=10))
    assert result.errors == result.requests > 0
    assert set(result.error_kinds) == {"ConnectError"}
    assert result.latency is None


def test_options_are_bounded():
    parse = _bounded(1, 200)
    assert parse("50") == 50
    for text in ["0", "201"]:
        with pytest.raises(argparse.ArgumentTypeError):
            parse(text)
