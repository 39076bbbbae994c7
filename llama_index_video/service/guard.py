"""Who may talk to the service, and what every response carries.

The service binds to 127.0.0.1 unless told otherwise. On loopback without a token it
still checks the ``Host`` header, so a web page that rebinds its own domain to
127.0.0.1 (DNS rebinding) cannot read the index. Anywhere else a token is required,
checked on every request: ``Authorization: Bearer TOKEN`` for scripts, or a cookie for
the browser, set once by opening ``/?token=TOKEN`` (the page then redirects to ``/`` so
the token leaves the address bar and the history). The cookie is ``HttpOnly`` and
``SameSite=Strict``, so other sites can neither read nor send it.

It also turns away query strings that are too long or not UTF-8 before any route sees
them (the framework would otherwise decode them with replacement characters), and adds
headers that keep the page's scripts, media and images to its own origin.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import re
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import CookieError, SimpleCookie
from typing import Any
from urllib.parse import parse_qs, unquote_to_bytes

from llama_index_video.errors import VideoIndexError

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

TOKEN_ENV = "LLAMA_INDEX_VIDEO_TOKEN"
COOKIE_NAME = "liv_token"
MAX_QUERY_STRING_BYTES = 16 * 1024
MIN_TOKEN_LENGTH = 16
_TOKEN_CHARS = re.compile(r"[A-Za-z0-9._~-]+")  # unreserved in URLs, safe in cookies

SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (
        b"content-security-policy",
        b"default-src 'self'; img-src 'self'; media-src 'self'; script-src 'self'; "
        b"style-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; "
        b"form-action 'self'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
)


class InsecureBindError(VideoIndexError, ValueError):
    """Serving beyond loopback without a token, or with an unusable token."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or ``localhost``) only accepts local connections."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None) -> None:
    """Refuse to serve beyond this machine without a token, or with a weak one.

    Raises:
        InsecureBindError: ``host`` is not a loopback address and ``token`` is empty,
            or the token is unusable (see :func:`check_token`).
    """
    if token:
        check_token(token)
    elif not is_loopback(host):
        raise InsecureBindError(
            f"refusing to listen on {host} without a token: anyone who can reach it could "
            f"read the index. Pass --token TOKEN (or set {TOKEN_ENV}), or bind to 127.0.0.1"
        )


def check_token(token: str) -> None:
    """A token must be long and survive URLs and cookies unchanged.

    Raises:
        InsecureBindError: shorter than 16 characters, or not only ``A-Z a-z 0-9 . _ ~ -``.
    """
    if len(token) < MIN_TOKEN_LENGTH or not _TOKEN_CHARS.fullmatch(token):
        raise InsecureBindError(
            f"the token must be at least {MIN_TOKEN_LENGTH} characters of A-Z a-z 0-9 . _ ~ -; "
            "make one with: python -c 'import secrets; print(secrets.token_urlsafe())'"
        )


class GuardMiddleware:
    """ASGI middleware: host check, token check, query-string limits, security headers.

    Args:
        app: The application to protect.
        token: The shared secret; None (only allowed on loopback) checks the ``Host``
            header instead.

    Raises:
        InsecureBindError: the token is unusable (see :func:`check_token`).
    """

    def __init__(self, app: ASGIApp, *, token: str | None) -> None:
        if token:
            check_token(token)
        self.app = app
        self.token = token or None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        refusal = self._refusal(scope)
        if refusal is not None:
            status, detail, extra = refusal
            await _respond(send_with_headers, status, detail, extra)
            return
        await self.app(scope, receive, send_with_headers)

    def _refusal(self, scope: Scope) -> tuple[int, str, list[tuple[bytes, bytes]]] | None:
        """Why this request is turned away (status, message, headers), or None."""
        raw_query: bytes = scope.get("query_string", b"")
        if len(raw_query) > MAX_QUERY_STRING_BYTES:
            return 414, f"query string longer than {MAX_QUERY_STRING_BYTES} bytes", []
        try:
            query = unquote_to_bytes(raw_query.replace(b"+", b" ")).decode("utf-8")
        except UnicodeDecodeError:
            return 400, "query string is not valid UTF-8 (percent-encode UTF-8 text)", []
        headers = _headers(scope)
        if self.token is None:
            host = _host_name(headers.get("host", ""))
            if not is_loopback(host):
                return 400, f"host {host!r} not allowed: open the page at http://127.0.0.1", []
            return None
        offered = parse_qs(query).get("token", [None])[0] if scope["path"] == "/" else None
        if offered is not None:
            if not _same(offered, self.token):
                return 401, "wrong token", []
            cookie = f"{COOKIE_NAME}={self.token}; Path=/; HttpOnly; SameSite=Strict"
            return 303, "token accepted", [(b"location", b"/"), (b"set-cookie", cookie.encode())]
        if _same(_bearer(headers.get("authorization", "")), self.token):
            return None
        if _same(_cookie(headers.get("cookie", "")), self.token):
            return None
        return (
            401,
            "a token is required: send 'Authorization: Bearer TOKEN' or open /?token=TOKEN",
            [(b"www-authenticate", b"Bearer")],
        )


def _headers(scope: Scope) -> dict[str, str]:
    return {name.decode("latin-1"): value.decode("latin-1") for name, value in scope["headers"]}


def _host_name(host: str) -> str:
    """``127.0.0.1:8000`` -> ``127.0.0.1``; ``[::1]:8000`` -> ``::1``."""
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _bearer(value: str) -> str | None:
    scheme, _, credentials = value.partition(" ")
    return credentials.strip() if scheme.lower() == "bearer" else None


def _cookie(value: str) -> str | None:
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(value)
    except CookieError:
        return None
    morsel = jar.get(COOKIE_NAME)
    return None if morsel is None else morsel.value


def _same(offered: str | None, token: str) -> bool:
    return offered is not None and hmac.compare_digest(offered.encode(), token.encode())


async def _respond(
    send: Send, status: int, detail: str, headers: list[tuple[bytes, bytes]]
) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
