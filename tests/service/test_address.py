"""Where a running ``serve`` is: the file it keeps in the index folder, and deep links."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from urllib.parse import parse_qs, urlsplit

import pytest

from llama_index_video.service.address import (
    SERVICE_FILE,
    announced,
    index_settings,
    page_address,
    page_link,
    running_page,
    running_service,
)


def test_a_deep_link_is_the_one_the_page_writes_and_reads():
    link = page_link("http://127.0.0.1:8000/", "/talks/a b&c.mp4", 94.456, 101.2)
    parts = urlsplit(link)
    assert link.startswith("http://127.0.0.1:8000/#")
    assert parse_qs(parts.fragment) == {
        "source": ["/talks/a b&c.mp4"],
        "t": ["94.46"],
        "end": ["101.2"],
    }
    assert "end" not in page_link("http://h:1", "a.mp4", 5.0, 5.0)  # no span: no end
    assert page_link("http://h:1", "a.mp4", 30.0).endswith("#source=a.mp4&t=30")


@pytest.mark.parametrize(
    ("host", "url"),
    [
        ("0.0.0.0", "http://127.0.0.1:8000"),
        ("::", "http://127.0.0.1:8000"),
        ("192.168.1.5", "http://192.168.1.5:8000"),
        ("::1", "http://[::1]:8000"),
    ],
)
def test_the_page_address_of_a_bind(host, url):
    assert page_address(host, 8000) == url


def test_announced_while_running_and_removed_after(tmp_path):
    with announced(tmp_path, "http://127.0.0.1:8123"):
        assert running_page(tmp_path) == "http://127.0.0.1:8123"
    assert running_page(tmp_path) is None and not (tmp_path / SERVICE_FILE).exists()


def test_the_settings_a_service_opened_its_index_with_are_announced(tmp_path):
    settings = index_settings(relevance="auto", lexical=False, chroma_url=None, collection="c")
    with announced(tmp_path, "http://127.0.0.1:8123", settings=settings):
        service = running_service(tmp_path)
        assert service is not None and service.settings == settings
    gate = object()  # a gate given in Python: no settings to compare with, so none said
    assert index_settings(relevance=gate, lexical=True, chroma_url=None, collection=None) is None
    with announced(tmp_path, "http://127.0.0.1:8123"):
        service = running_service(tmp_path)
        assert service is not None and service.settings is None


def test_a_file_left_by_a_killed_service_is_ignored(tmp_path):
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    (tmp_path / SERVICE_FILE).write_text(
        json.dumps({"url": "http://127.0.0.1:1", "pid": int(gone.stdout)})
    )
    assert running_page(tmp_path) is None
    for damaged in (
        "not json",
        json.dumps({"url": "file:///etc/passwd", "pid": os.getpid()}),
        "{}",
    ):
        (tmp_path / SERVICE_FILE).write_text(damaged)
        assert running_page(tmp_path) is None


def test_a_file_that_cannot_be_written_is_no_error(tmp_path):
    (tmp_path / SERVICE_FILE).mkdir()  # writing it fails, as on a read-only share
    with announced(tmp_path, "http://127.0.0.1:8123"):
        assert running_page(tmp_path) is None
    assert (tmp_path / SERVICE_FILE).is_dir()
