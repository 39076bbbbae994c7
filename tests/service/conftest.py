"""Fixtures for the service tests: the app over the example index, in-process or on a port,
and headless Chromium for the page."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from fastapi.testclient import TestClient

from llama_index_video.service.app import create_app
from tests_support import running

LOOPBACK = "http://127.0.0.1"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture
def client(example_index) -> Iterator[TestClient]:
    """The service over the example index, called in-process (no token: loopback only)."""
    with TestClient(create_app(example_index), base_url=LOOPBACK) as test_client:
        yield test_client


@pytest.fixture(scope="session")
def service_url(example_index) -> Iterator[str]:
    """The service over the example index on a free loopback port."""
    with running(create_app(example_index)) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium through Playwright, one per test module (skips when either is missing)."""
    chromium = os.environ.get("LLAMA_INDEX_VIDEO_CHROMIUM") or shutil.which("chromium")
    if chromium is None:
        pytest.skip("no Chromium: apt-get install chromium, or set LLAMA_INDEX_VIDEO_CHROMIUM")
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@contextmanager
def opened(browser: Any, url: str, **options: Any) -> Iterator[Any]:
    """A fresh browser context on the page at ``url``; fails if the page's script throws."""
    context = browser.new_context(base_url=url, **options)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto("/")
    yield page
    context.close()
    assert errors == []


@pytest.fixture
def page(browser, service_url) -> Iterator[Any]:
    """The page over the example index, in a fresh browser context."""
    with opened(browser, service_url) as fresh:
        yield fresh
