"""Loopback by default; beyond it a token on every request, and no start without one."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from llama_index_video.cli.main import EXIT_ERROR, main
from llama_index_video.service.app import create_app
from llama_index_video.service.guard import (
    COOKIE_NAME,
    TOKEN_ENV,
    InsecureBindError,
    check_bind,
    is_loopback,
)
from llama_index_video.service.server import serve
from tests.service.conftest import LOOPBACK

TOKEN = "s3cret-token-for-tests_0123"
PROTECTED = ["/", "/static/app.js", "/api/health", "/api/search?q=ozone", "/media/" + "0" * 64]


@pytest.fixture
def guarded(example_index):
    with TestClient(create_app(example_index, token=TOKEN), base_url="http://10.1.2.3:8000") as c:
        yield c


@pytest.mark.parametrize("path", PROTECTED)
def test_every_route_needs_the_token(guarded, path):
    response = guarded.get(path)
    assert response.status_code == 401
    assert "token" in response.json()["detail"]
    assert TOKEN not in response.text


@pytest.mark.parametrize("header", [f"Bearer {TOKEN}x", "Bearer", f"Basic {TOKEN}", TOKEN])
def test_a_wrong_or_malformed_authorization_is_401(guarded, header):
    assert guarded.get("/api/health", headers={"Authorization": header}).status_code == 401


def test_a_bearer_token_opens_the_api(guarded):
    headers = {"Authorization": f"Bearer {TOKEN}"}
    assert guarded.get("/api/health", headers=headers).status_code == 200
    response = guarded.post("/api/ask", json={"question": "ozone"}, headers=headers)
    assert response.status_code == 200


def test_opening_the_page_with_the_token_sets_a_strict_cookie(guarded):
    response = guarded.get(f"/?token={TOKEN}", follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/"
    cookie = response.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE_NAME}={TOKEN};")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    # The client now sends the cookie: the page, the API and media work without a header.
    assert guarded.get("/").status_code == 200
    hits = guarded.get("/api/search", params={"q": "ozone hole"}).json()
    assert guarded.get(hits[0]["media_url"], headers={"Range": "bytes=0-9"}).status_code == 206


def test_a_wrong_token_in_the_page_address_is_401(guarded):
    response = guarded.get("/?token=wrong-token-wrong-token", follow_redirects=False)
    assert response.status_code == 401
    assert "set-cookie" not in response.headers


def test_a_forged_cookie_is_401(guarded):
    guarded.cookies.set(COOKIE_NAME, "forged-token-forged-token")
    assert guarded.get("/api/health").status_code == 401


def test_without_a_token_only_loopback_host_names_are_answered(example_index):
    with TestClient(create_app(example_index), base_url=LOOPBACK) as client:
        for host in ["127.0.0.1:8000", "localhost:8000", "[::1]:8000", "localhost"]:
            assert client.get("/api/health", headers={"Host": host}).status_code == 200
        for host in ["evil.example:8000", "10.0.0.5", "127.0.0.1.evil.example"]:
            response = client.get("/api/health", headers={"Host": host})
            assert response.status_code == 400  # a DNS-rebinding page cannot read the API


def test_every_response_keeps_the_page_to_its_own_origin(client):
    for path in ["/", "/api/health", "/nowhere"]:
        headers = client.get(path).headers
        assert "default-src 'self'" in headers["content-security-policy"]
        assert headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "localhost", "::1", "[::1]"])
def test_loopback_needs_no_token(host):
    assert is_loopback(host)
    check_bind(host, None)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "example.org", ""])
def test_anything_else_refuses_to_start_without_a_token(host):
    assert not is_loopback(host)
    with pytest.raises(InsecureBindError, match="--token"):
        check_bind(host, None)
    check_bind(host, TOKEN)


@pytest.mark.parametrize(
    "token", ["short", "has spaces in it, 0123456789", "semi;colon=0123456789"]
)
def test_unusable_tokens_are_refused(token):
    with pytest.raises(InsecureBindError, match="at least 16"):
        check_bind("0.0.0.0", token)


def test_serve_refuses_before_opening_anything(tmp_path, monkeypatch):
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    with pytest.raises(InsecureBindError):
        serve(tmp_path / "no-index-here", host="0.0.0.0", port=1)
    assert not (tmp_path / "no-index-here").exists()


def test_the_cli_refuses_a_public_address_without_a_token(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    assert main(["serve", "--index", str(tmp_path), "--host", "0.0.0.0"]) == EXIT_ERROR
    error = capsys.readouterr().err
    assert error.startswith("error: refusing to listen on 0.0.0.0 without a token")
    monkeypatch.setenv(TOKEN_ENV, "short")
    assert main(["serve", "--index", str(tmp_path), "--host", "0.0.0.0"]) == EXIT_ERROR
    assert "at least 16" in capsys.readouterr().err


def test_the_cli_serve_needs_an_index(tmp_path, capsys):
    assert main(["serve", "--index", str(tmp_path / "missing")]) == EXIT_ERROR
    assert "no index here" in capsys.readouterr().err
